//! [`EngineBuilder`]: the pool size, CPU kernel, backends and lease policy of an [`Engine`],
//! fixed when it is built.

use std::sync::Arc;
use std::time::Duration;

use super::{Engine, Inner};
use crate::backend::cpu::{self, CpuDevice, CpuKernel, PoolConfig};
use crate::base::env;
use crate::base::error::Error;
use crate::engine::host_threads::HostThreads;
use crate::engine::registry::{self, Policy, Registry, Selection};
use crate::search::device::{Backend, Device};
use crate::search::discovery::DiscoverOptions;

/// Builds an [`Engine`].
#[derive(Clone)]
pub struct EngineBuilder {
    threads: Option<usize>,
    kernel: Option<CpuKernel>,
    pin: bool,
    backends: Option<Vec<Backend>>,
    discover: DiscoverOptions,
    wgpu_32bit: bool,
    extra: Vec<Arc<dyn Device>>,
    policy: Policy,
    reuse_discovery: bool,
    /// This host's devices in the device list (default); see [`EngineBuilder::local_devices`].
    local: bool,
    /// `tune(false)`: no tuning, the tuner's cache not read.
    no_tune: bool,
    tune_software: bool,
    tune_budget: Option<Duration>,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            threads: None,
            kernel: None,
            pin: false,
            backends: None,
            discover: DiscoverOptions::default(),
            wgpu_32bit: false,
            extra: Vec::new(),
            policy: Policy::default(),
            reuse_discovery: false,
            local: true,
            no_tune: false,
            tune_software: false,
            tune_budget: None,
        }
    }
}

/// An engine built for a selection ([`EngineBuilder::build_for`]), and what the build chose.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BuiltFor {
    /// The engine.
    pub engine: Engine,
    /// True when the selection's backend had no hardware device and the engine was built
    /// again with software drivers (PoCL, lavapipe) to use that backend's software one.
    pub software_fallback: bool,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("threads", &self.threads)
            .field("kernel", &self.kernel)
            .field("backends", &self.backends)
            .finish_non_exhaustive()
    }
}

impl EngineBuilder {
    /// CPU pool size (default: `CURLPOW_THREADS`, else the available parallelism): 1 to
    /// [`max_threads`](crate::max_threads); [`build`](Self::build) refuses more.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Force a CPU kernel (default: `CURLPOW_CPU_KERNEL`, else the fastest this CPU runs).
    pub fn cpu_kernel(mut self, k: CpuKernel) -> Self {
        self.kernel = Some(k);
        self
    }

    /// Pin pool threads to cores (default off; gains nothing on most VMs).
    pub fn pin_threads(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Discover only these backends (default: every compiled one). The CPU pool is always built;
    /// leaving [`Backend::Cpu`] out only keeps it out of the device list.
    pub fn backends(mut self, b: &[Backend]) -> Self {
        self.backends = Some(b.to_vec());
        self
    }

    /// Also use software drivers of GPU APIs (PoCL, lavapipe). Off by default.
    pub fn include_software(mut self, on: bool) -> Self {
        self.discover.include_software = on;
        self
    }

    /// wgpu: force the 32-bit-lane kernel even where the adapter offers 64-bit integers (also
    /// `CURLPOW_WGPU_LANES=32`).
    pub fn force_32bit_lanes(mut self, on: bool) -> Self {
        self.wgpu_32bit = on;
        self
    }

    /// Reuse the GPU devices an earlier build in this process discovered with the same backend
    /// and options (default off: every build discovers). Discovery loads drivers and opens
    /// every device, tens to hundreds of milliseconds; with this on it runs once per process and
    /// backend, and an engine built again after the last one was dropped (the C library's
    /// init after destroy) starts in milliseconds. The devices stay open between engines; the
    /// settings read from the environment at discovery (`CURLPOW_GPU_LAUNCH_ITEMS`, …) stay as
    /// they were then.
    pub fn reuse_discovery(mut self, on: bool) -> Self {
        self.reuse_discovery = on;
        self
    }

    /// Whether GPU devices tune themselves (default on): a GPU device with no entry in the
    /// tuner's cache (`$XDG_CACHE_HOME/curlpow/tune.json`) is tuned on its first search, on the
    /// engine's one tuning thread, while that search runs on its default variant; later
    /// processes start from the cached choice. Off (or `CURLPOW_TUNE=0`): no tuning, and the
    /// cache is not read (every device starts from its default variant).
    pub fn tune(mut self, on: bool) -> Self {
        self.no_tune = !on;
        self
    }

    /// Also tune software drivers of GPU APIs (PoCL, lavapipe) on their first search (default
    /// off: they run on the cores the CPU pool searches on; `curlpow tune --software` tunes
    /// them explicitly).
    pub fn tune_software(mut self, on: bool) -> Self {
        self.tune_software = on;
        self
    }

    /// How long the engine's own tuning of one device may take (default
    /// [`DEFAULT_TUNE_BUDGET`](crate::tune::DEFAULT_TUNE_BUDGET), 10 s; a variant's build may run
    /// past it).
    pub fn tune_budget(mut self, d: Duration) -> Self {
        self.tune_budget = Some(d);
        self
    }

    /// Add a device of your own (tests inject failing devices this way).
    pub fn add_device(mut self, d: Arc<dyn Device>) -> Self {
        self.extra.push(d);
        self
    }

    /// How long a search waits for a busy GPU before the CPU takes it (default 50 ms).
    pub fn wait_limit(mut self, d: Duration) -> Self {
        self.policy.wait_limit = d;
        self
    }

    /// Whether the CPU may take searches that wanted a GPU (default true).
    pub fn cpu_fallback(mut self, on: bool) -> Self {
        self.policy.cpu_fallback = on;
        self
    }

    /// The longest a search waits for a device before [`Error::NoDevice`] (default: no limit
    /// but the search's deadline).
    pub fn max_wait(mut self, d: Duration) -> Self {
        self.policy.max_wait = Some(d);
        self
    }

    /// How long a faulty device sits out before it is tried again (default 30 s).
    pub fn reprobe_after(mut self, d: Duration) -> Self {
        self.policy.reprobe_after = d;
        self
    }

    /// Keep this host's own devices in the device list (default `true`). With `false` the
    /// engine runs only the devices added with [`add_device`](Self::add_device) (remote
    /// workers): no backend is discovered, and the CPU pool, which every engine has, is left
    /// out of the device list and sized one thread unless [`threads`](Self::threads) or
    /// `CURLPOW_THREADS` says otherwise, since it runs nothing. `curlpow serve --broker`
    /// without `--local` builds this way.
    ///
    /// ```
    /// use curlpow::Engine;
    /// let engine = Engine::builder().local_devices(false).build()?;
    /// assert!(engine.devices().is_empty()); // add remote devices with add_device
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn local_devices(mut self, on: bool) -> Self {
        self.local = on;
        self
    }

    /// Build the engine that searches with `sel` will use, discovering only what `sel` can
    /// use (unless [`backends`](Self::backends) was set):
    ///
    /// - the backends `sel` names, else the backends of the device ids it names (`cpu` alone
    ///   loads no GPU driver; an id of no discovered backend, like an added device's, adds
    ///   none), else every compiled backend; the CPU always;
    /// - software drivers (PoCL, lavapipe) too when `sel` names a device by id, since naming
    ///   a software device, or a GPU backend's device on a host without GPUs, must find it;
    /// - when `sel` names backends and none of its devices is found without software drivers,
    ///   the engine is built again with them, and kept if that finds what `sel` allows
    ///   ([`BuiltFor::software_fallback`]: `--backend opencl` on a host whose only OpenCL
    ///   driver is PoCL).
    ///
    /// Whether `sel` allows any device of the engine is not checked here:
    /// [`Engine::check_selection`] says (the CLI prints the discovery warnings first).
    ///
    /// ```
    /// use curlpow::{Engine, Selection};
    /// let sel = Selection { devices: vec!["cpu".into()], ..Selection::default() };
    /// let built = Engine::builder().threads(2).build_for(&sel)?; // loads no GPU driver
    /// assert!(built.engine.check_selection(&sel).is_ok());
    /// assert_eq!(built.engine.devices().len(), 1);
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn build_for(mut self, sel: &Selection) -> Result<BuiltFor, Error> {
        let software = self.discover.include_software || !sel.devices.is_empty();
        self.discover.include_software = software;
        if self.backends.is_none() {
            self.backends = backends_for(sel);
        }
        let engine = self.clone().build()?;
        if !software && !sel.backends.is_empty() && engine.check_selection(sel).is_err() {
            let again = self.include_software(true).build()?;
            if again.check_selection(sel).is_ok() {
                return Ok(BuiltFor {
                    engine: again,
                    software_fallback: true,
                });
            }
        }
        Ok(BuiltFor {
            engine,
            software_fallback: false,
        })
    }

    /// Build the engine: the pool is created and devices are discovered here, once.
    pub fn build(mut self) -> Result<Engine, Error> {
        if !self.local {
            self.backends = Some(Vec::new());
        }
        let threads = match self.threads {
            Some(0) => return Err(Error::Config("threads must be at least 1".into())),
            Some(n) => cpu::check_threads("threads ", n)?,
            // A pool that runs nothing needs no more than a thread.
            None if !self.local && !env::is_set(env::THREADS) => 1,
            None => cpu::default_threads()?,
        };
        let kernel = match self.kernel {
            Some(k) => k,
            None => CpuKernel::from_env()?.unwrap_or_else(CpuKernel::detect),
        };
        let cpu = Arc::new(CpuDevice::new(
            PoolConfig {
                threads,
                pin: self.pin,
            },
            kernel,
        )?);
        let wants = |b: Backend| self.backends.as_ref().is_none_or(|l| l.contains(&b));
        let discover = self.discover;
        let mut devices: Vec<Arc<dyn Device>> = Vec::new();
        if wants(Backend::Cpu) {
            devices.push(cpu.clone());
        }
        let mut warnings = Vec::new();
        let reuse = self.reuse_discovery;
        #[cfg(any(feature = "opencl", feature = "wgpu"))]
        let tuning = !self.no_tune && crate::backend::gpu::tune_cache::enabled();
        #[cfg(not(any(feature = "opencl", feature = "wgpu")))]
        let tuning = false;
        let _ = (&discover, self.wgpu_32bit, reuse, tuning);
        #[cfg(feature = "opencl")]
        if wants(Backend::Opencl) {
            let key = (Backend::Opencl, discover.include_software, false, tuning);
            let d = discovered(reuse, key, || {
                crate::backend::opencl::discover_for_engine(&discover, tuning)
            });
            devices.extend(d.devices);
            warnings.extend(d.warnings);
        }
        #[cfg(feature = "wgpu")]
        if wants(Backend::Wgpu) {
            let key = (
                Backend::Wgpu,
                discover.include_software,
                self.wgpu_32bit,
                tuning,
            );
            let d = discovered(reuse, key, || {
                crate::backend::wgpu::discover_for_engine(&discover, self.wgpu_32bit, tuning)
            });
            devices.extend(d.devices);
            warnings.extend(d.warnings);
        }
        devices.extend(self.extra);
        let (devices, notes) = registry::dedupe(devices);
        warnings.extend(notes);
        // GPU devices on their default variant tune on their first search.
        #[cfg(any(feature = "opencl", feature = "wgpu"))]
        let wants_tuning = |i: &crate::search::device::DeviceInfo| {
            crate::engine::tune::tuner::wants_tuning(i, self.tune_software)
        };
        #[cfg(not(any(feature = "opencl", feature = "wgpu")))]
        let wants_tuning = |_: &crate::search::device::DeviceInfo| false;
        let (devices, auto_tune) = super::wrap_tunable(
            devices,
            |i| tuning && wants_tuning(i),
            self.tune_budget.unwrap_or(super::DEFAULT_TUNE_BUDGET),
        )?;
        let io = |e: std::io::Error| Error::Pool(format!("host threads: {e}"));
        let runners = HostThreads::new(devices.len().max(2), "curlpow-job").map_err(io)?;
        let device_threads = (0..devices.len())
            .map(|i| HostThreads::new(1, &format!("curlpow-dev{i}")))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(io)?;
        Ok(Engine {
            inner: Arc::new(Inner {
                cpu,
                registry: Registry::new(devices, self.policy),
                runners,
                device_threads,
                warnings,
                auto_tune,
            }),
        })
    }
}

/// The backends to discover for searches with `sel`: its backends, else those of the device
/// ids it names (an id whose prefix names no backend, like an added test device's `fault:0`,
/// adds none), with the CPU; `None` (every compiled backend) when it names neither.
fn backends_for(sel: &Selection) -> Option<Vec<Backend>> {
    let mut discover = sel.backends.clone();
    if discover.is_empty() {
        for id in &sel.devices {
            let prefix = id.split(':').next().unwrap_or_default();
            if let Some(be) = Backend::from_name(prefix) {
                if !discover.contains(&be) {
                    discover.push(be);
                }
            }
        }
        if sel.devices.is_empty() {
            return None;
        }
    }
    if !discover.contains(&Backend::Cpu) {
        discover.push(Backend::Cpu);
    }
    Some(discover)
}

/// What one backend's discovery is keyed by when it is reused: the backend, whether software
/// drivers are included, 32-bit wgpu lanes, whether the tuner's cache is read.
#[cfg(any(feature = "opencl", feature = "wgpu"))]
type DiscoveryKey = (Backend, bool, bool, bool);

/// The discoveries kept for [`EngineBuilder::reuse_discovery`], one per key.
#[cfg(any(feature = "opencl", feature = "wgpu"))]
type KeptDiscoveries = Vec<(DiscoveryKey, Vec<Arc<dyn Device>>, Vec<String>)>;

#[cfg(any(feature = "opencl", feature = "wgpu"))]
static KEPT: parking_lot::Mutex<KeptDiscoveries> = parking_lot::const_mutex(Vec::new());

/// `discover()`, or with `reuse` the devices and warnings a first call with the same key found
/// (that first call runs under the lock, so two builds at once discover once).
#[cfg(any(feature = "opencl", feature = "wgpu"))]
fn discovered(
    reuse: bool,
    key: DiscoveryKey,
    discover: impl FnOnce() -> crate::search::discovery::Discovery,
) -> crate::search::discovery::Discovery {
    if !reuse {
        return discover();
    }
    let mut kept = KEPT.lock();
    if let Some((_, devices, warnings)) = kept.iter().find(|(k, _, _)| *k == key) {
        return crate::search::discovery::Discovery {
            devices: devices.clone(),
            warnings: warnings.clone(),
        };
    }
    let d = discover();
    kept.push((key, d.devices.clone(), d.warnings.clone()));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(backends: &[Backend], devices: &[&str]) -> Selection {
        Selection {
            backends: backends.to_vec(),
            devices: devices.iter().map(|d| d.to_string()).collect(),
            exclude: Vec::new(),
        }
    }

    #[test]
    fn a_selection_discovers_only_the_backends_it_can_use() {
        use Backend::*;
        assert_eq!(backends_for(&sel(&[], &[])), None);
        assert_eq!(backends_for(&sel(&[], &["cpu"])), Some(vec![Cpu]));
        assert_eq!(
            backends_for(&sel(&[], &["wgpu:0", "opencl:0:1", "wgpu:1"])),
            Some(vec![Wgpu, Opencl, Cpu])
        );
        // An added device's id loads no driver.
        assert_eq!(backends_for(&sel(&[], &["fault:0"])), Some(vec![Cpu]));
        // Named backends win over the device ids.
        assert_eq!(
            backends_for(&sel(&[Opencl], &["wgpu:0"])),
            Some(vec![Opencl, Cpu])
        );
        assert_eq!(backends_for(&sel(&[Cpu, Wgpu], &[])), Some(vec![Cpu, Wgpu]));
    }

    #[test]
    fn a_cpu_selection_builds_a_cpu_only_engine() {
        let s = sel(&[], &["cpu"]);
        let built = EngineBuilder::default().threads(1).build_for(&s).unwrap();
        assert!(!built.software_fallback);
        assert_eq!(built.engine.devices().len(), 1);
        assert!(built.engine.check_selection(&s).is_ok());
        // A CPU selection needs no software driver: nothing to fall back to.
        let s = sel(&[Backend::Cpu], &[]);
        let built = EngineBuilder::default().threads(1).build_for(&s).unwrap();
        assert!(!built.software_fallback);
    }

    #[test]
    fn an_engine_without_local_devices_lists_only_added_ones() {
        let e = EngineBuilder::default()
            .local_devices(false)
            .build()
            .unwrap();
        assert!(e.devices().is_empty());
        if !crate::base::env::is_set(crate::base::env::THREADS) {
            assert_eq!(e.cpu().threads(), 1);
        }
        let e = EngineBuilder::default()
            .local_devices(false)
            .threads(2)
            .build_for(&sel(&[Backend::Cpu], &[]))
            .unwrap()
            .engine;
        assert!(e.devices().is_empty());
        assert_eq!(e.cpu().threads(), 2);
    }
}
