//! The engine tunes itself: a GPU device whose variant is its untuned default (no entry in the
//! tuner's cache, `$XDG_CACHE_HOME/curlpow/tune.json`) is tuned on its first search, on the
//! engine's one tuning thread (never the CPU search pool, never a thread per search), while
//! the search that triggered it runs on the device's default variant and later ones go to the
//! other devices (the CPU pool takes them after the usual wait, `EngineBuilder::wait_limit`).
//! When the tuner is done the device switches to the chosen variant, already built, and the
//! choice is cached for later processes. [`Engine::tune_device`] tunes one device now
//! (`curlpow tune`); [`Engine::start_tuning`] starts every device's tuning at once
//! (`curlpow serve`). `EngineBuilder::tune(false)` or `CURLPOW_TUNE=0` turn both the tuning
//! and the cache off. The tuner itself is `tuner.rs` beside this file.

#[cfg(any(feature = "opencl", feature = "wgpu"))]
pub(crate) mod tuner;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::Engine;
use crate::base::error::Error;
use crate::engine::host_threads::HostThreads;
use crate::search::device::{Device, DeviceInfo, NonceOutcome, SearchControl, SearchOutcome};
use crate::search::nonce::CounterRange;
use crate::search::search_job::SearchJob;

/// How long the engine's own tuning of one device may take, by default (builds aside).
pub const DEFAULT_TUNE_BUDGET: Duration = Duration::from_secs(10);

/// A variant of one backend, as `curlpow tune --list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct TuneVariant {
    /// The proof of work it searches: `transaction` or `block`.
    pub pow: &'static str,
    /// `opencl` or `wgpu`.
    pub backend: &'static str,
    /// The variant's name (`u32:coop`, `u64x8`, `workgroup32`, `storage-f5`, …).
    pub variant: String,
    /// OpenCL: the `-D…` compiler options on a typical discrete GPU (48 KB of local memory,
    /// groups of up to 1024); wgpu: the `CURLPOW_WGPU_TUNING` pairs that select it.
    pub build_options: String,
    /// OpenCL: the options added on NVIDIA's OpenCL (`-cl-nv-maxrregcount=128` for the
    /// four-round cooperative kernels; for ptxas, `--maxrregcount 128`), empty when none; wgpu:
    /// empty.
    pub nvidia_options: String,
    /// The kinds of device it is the untuned default for (`gpu:nvidia`, `gpu`, `cpu`, …).
    pub default_for: Vec<&'static str>,
    /// Its kernel file under `kernels/` (`curl_pow.cl`, `curl_pow.wgsl`, …).
    pub kernel: &'static str,
    /// The kernel's entry point (`curl_search`, `block_search`, `search`, …): with
    /// `build_options`, what to compile to rebuild the variant by hand.
    pub entry: &'static str,
}

/// One timed trial of one variant at one launch size.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct TuneTrial {
    /// The proof of work timed: `transaction` or `block`.
    pub pow: &'static str,
    /// The device's id.
    pub device_id: String,
    /// The device's name.
    pub device: String,
    /// The variant.
    pub variant: String,
    /// `probe` (every variant, a short share), `refine` (the fastest, again) or `block` (a
    /// block-search variant).
    pub phase: &'static str,
    /// The launch size it ran with (work-items per launch); `None`: the adaptive sizing.
    pub launch_items: Option<usize>,
    /// Its measured rate (0 when it failed).
    pub nonces_per_second: f64,
    /// Whether its nonce passed the host check.
    pub verified: bool,
    /// Whether this trial was chosen (one per device and proof of work at most).
    pub chosen: bool,
    /// Why it has no rate, when it has none.
    pub error: Option<String>,
}

/// What tuning one device did.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct TuneReport {
    /// The device's id.
    pub device_id: String,
    /// Every trial, in the order they ran.
    pub trials: Vec<TuneTrial>,
    /// The chosen variant, if one verified.
    pub variant: Option<String>,
    /// Its rate.
    pub nonces_per_second: f64,
    /// The chosen block-search variant, if one verified.
    pub block_variant: Option<String>,
    /// Its rate (block nonces per second).
    pub block_nonces_per_second: f64,
    /// Where the choices were recorded (the cache file), when it was.
    pub cache: Option<std::path::PathBuf>,
    /// Why the choice was not recorded, when it was not.
    pub cache_error: Option<String>,
    /// Wall time of the tuning, builds included.
    pub seconds: f64,
}

/// Every kernel variant of every compiled GPU backend, for both proofs of work (`curlpow tune
/// --list`): the transaction variants, then the block variants.
pub fn tune_variants() -> Vec<TuneVariant> {
    #[cfg(any(feature = "opencl", feature = "wgpu"))]
    {
        crate::engine::tune::tuner::variants()
    }
    #[cfg(not(any(feature = "opencl", feature = "wgpu")))]
    {
        Vec::new()
    }
}

/// A GPU device that switches, once, from its default variant to the tuner's choice, and its
/// block searches, once, to the tuner's block choice. Searches read which one is current once
/// per search (one atomic load), never inside a search.
pub(crate) struct Tunable {
    default: Arc<dyn Device>,
    tuned: OnceLock<(Arc<dyn Device>, DeviceInfo)>,
    tuned_block: OnceLock<Arc<dyn Device>>,
}

impl Tunable {
    pub(crate) fn new(default: Arc<dyn Device>) -> Self {
        Tunable {
            default,
            tuned: OnceLock::new(),
            tuned_block: OnceLock::new(),
        }
    }

    fn current(&self) -> &Arc<dyn Device> {
        self.tuned.get().map_or(&self.default, |t| &t.0)
    }

    /// The device block searches run on: the block choice, else the current one.
    fn current_block(&self) -> &Arc<dyn Device> {
        self.tuned_block.get().unwrap_or_else(|| self.current())
    }

    /// Switch to `device` (described by `info`); a second switch is ignored.
    #[cfg_attr(not(any(feature = "opencl", feature = "wgpu")), allow(dead_code))]
    fn switch(&self, device: Arc<dyn Device>, info: DeviceInfo) {
        let _ = self.tuned.set((device, info));
    }

    /// Switch block searches to `device`; a second switch is ignored.
    #[cfg_attr(not(any(feature = "opencl", feature = "wgpu")), allow(dead_code))]
    fn switch_block(&self, device: Arc<dyn Device>) {
        let _ = self.tuned_block.set(device);
    }
}

impl Device for Tunable {
    fn info(&self) -> &DeviceInfo {
        self.tuned.get().map_or(self.default.info(), |t| &t.1)
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.current().search(job, range, ctl)
    }

    fn search_nonce(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        self.current().search_nonce(job, range, ctl)
    }

    fn nonces_tried(&self) -> u64 {
        let block = self
            .tuned_block
            .get()
            .filter(|b| {
                !Arc::ptr_eq(b, &self.default)
                    && self.tuned.get().is_none_or(|t| !Arc::ptr_eq(b, &t.0))
            })
            .map_or(0, |b| b.nonces_tried());
        self.default.nonces_tried() + self.tuned.get().map_or(0, |t| t.0.nonces_tried()) + block
    }

    fn prepare(&self) -> Result<(), Error> {
        self.current().prepare()
    }

    fn launch_stats(&self) -> Option<crate::search::launch_stats::LaunchStats> {
        self.current().launch_stats()
    }

    fn supports_block_pow(&self) -> bool {
        self.current_block().supports_block_pow()
    }

    fn search_block(
        &self,
        job: &crate::search::block::BlockJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.current_block().search_block(job, range, ctl)
    }
}

/// The engine's tuning state: its one thread, and per device slot whether a first search is
/// still to start its tuning and the device to switch.
pub(crate) struct AutoTune {
    thread: HostThreads,
    budget: Duration,
    pending: Vec<AtomicBool>,
    #[cfg_attr(not(any(feature = "opencl", feature = "wgpu")), allow(dead_code))]
    tunable: Vec<Option<Arc<Tunable>>>,
    /// Tunings queued or running.
    active: AtomicUsize,
    reports: Mutex<Vec<TuneReport>>,
}

/// The devices, some wrapped, and the tuning state.
type Wrapped = (Vec<Arc<dyn Device>>, Option<AutoTune>);

/// Wrap every device the engine tunes on its first search (`wants(info)`) in a [`Tunable`],
/// and the tuning state when there is one.
pub(crate) fn wrap(
    devices: Vec<Arc<dyn Device>>,
    wants: impl Fn(&DeviceInfo) -> bool,
    budget: Duration,
) -> Result<Wrapped, Error> {
    let mut tunable = Vec::with_capacity(devices.len());
    let devices: Vec<Arc<dyn Device>> = devices
        .into_iter()
        .map(|d| {
            if wants(d.info()) {
                let t = Arc::new(Tunable::new(d));
                tunable.push(Some(t.clone()));
                t as Arc<dyn Device>
            } else {
                tunable.push(None);
                d
            }
        })
        .collect();
    if tunable.iter().all(Option::is_none) {
        return Ok((devices, None));
    }
    let thread = HostThreads::new(1, "curlpow-tune")
        .map_err(|e| Error::Pool(format!("host threads: {e}")))?;
    Ok((
        devices,
        Some(AutoTune {
            thread,
            budget,
            pending: tunable
                .iter()
                .map(|t| AtomicBool::new(t.is_some()))
                .collect(),
            tunable,
            active: AtomicUsize::new(0),
            reports: Mutex::new(Vec::new()),
        }),
    ))
}

/// Lower the calling thread's scheduling priority (Linux: nice 10 for this thread only), so
/// that a tuning's host work (kernel builds, the driver's own threads it starts) yields to the
/// CPU pool's searches.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority take no pointers; on Linux PRIO_PROCESS with a thread
        // id changes that thread's nice value only. A failure leaves the priority as it was.
        unsafe {
            let tid = libc::gettid();
            let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
        }
    }
}

impl Engine {
    /// Tune one GPU device now (`curlpow tune`): hold it (no search runs on it meanwhile),
    /// time its variants × launch sizes for about `budget` (a variant's build may run past
    /// it), keep the fastest whose nonces verify, record it in the tuner's cache and, where
    /// this engine tunes the device itself, switch the device to it.
    pub fn tune_device(&self, device_id: &str, budget: Duration) -> Result<TuneReport, Error> {
        let i = self.slot_index(device_id)?;
        if let Some(at) = &self.inner.auto_tune {
            at.pending[i].store(false, Ordering::Relaxed);
        }
        self.tune_slot(i, budget, &|| true)
    }

    /// Start the tuning of every device still waiting for its first search to start it, in
    /// the background (`curlpow serve`: the CPU serves meanwhile); the number started.
    pub fn start_tuning(&self) -> usize {
        (0..self.inner.registry.slots.len())
            .filter(|&i| self.first_search(i))
            .count()
    }

    /// Wait until no tuning is queued or running, at most `timeout`; whether none is.
    pub fn wait_tuning(&self, timeout: Duration) -> bool {
        let Some(at) = &self.inner.auto_tune else {
            return true;
        };
        let until = Instant::now() + timeout;
        loop {
            if at.active.load(Ordering::Acquire) == 0 {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The reports of the tunings this engine ran by itself, in the order they ended.
    pub fn tune_reports(&self) -> Vec<TuneReport> {
        self.inner
            .auto_tune
            .as_ref()
            .map_or_else(Vec::new, |at| at.reports.lock().clone())
    }

    /// A search starts on slot `i`: the first one queues the device's tuning. Whether it did.
    pub(super) fn first_search(&self, i: usize) -> bool {
        let Some(at) = &self.inner.auto_tune else {
            return false;
        };
        // A load first: after the first search the flag is only ever read.
        if !at.pending[i].load(Ordering::Relaxed) || !at.pending[i].swap(false, Ordering::AcqRel) {
            return false;
        }
        at.active.fetch_add(1, Ordering::AcqRel);
        let engine = self.clone();
        at.thread.submit(move || {
            lower_priority();
            let at = engine.inner.auto_tune.as_ref().expect("tuning state");
            let budget = at.budget;
            // Every handle but this one dropped: the engine is going away, stop.
            let keep_going = || Arc::strong_count(&engine.inner) > 1;
            if let Ok(report) = engine.tune_slot(i, budget, &keep_going) {
                at.reports.lock().push(report);
            }
            at.active.fetch_sub(1, Ordering::AcqRel);
        });
        true
    }

    /// Hold slot `i` and tune it; switch it where it is [`Tunable`].
    fn tune_slot(
        &self,
        i: usize,
        budget: Duration,
        keep_going: &dyn Fn() -> bool,
    ) -> Result<TuneReport, Error> {
        let reg = &self.inner.registry;
        let slot = &reg.slots[i];
        let info = slot.device.info().clone();
        if !matches!(
            info.backend,
            crate::search::device::Backend::Opencl | crate::search::device::Backend::Wgpu
        ) {
            return Err(Error::NoDevice(format!(
                "{}: only OpenCL and wgpu devices have variants to tune",
                info.id
            )));
        }
        #[cfg(any(feature = "opencl", feature = "wgpu"))]
        {
            let _lease = super::bench::hold(reg, i)?;
            let tuned = crate::engine::tune::tuner::tune(&info, budget, keep_going);
            if let Some(Some(t)) = self.inner.auto_tune.as_ref().map(|at| &at.tunable[i]) {
                if let Some(dev) = tuned.device {
                    let info = crate::engine::tune::tuner::tuned_info(&*dev, &tuned.report);
                    t.switch(dev, info);
                }
                if let Some(dev) = tuned.block_device {
                    t.switch_block(dev);
                }
            }
            Ok(tuned.report)
        }
        #[cfg(not(any(feature = "opencl", feature = "wgpu")))]
        {
            let _ = (budget, keep_going);
            Err(Error::NoDevice(format!(
                "{}: no GPU backend is compiled in to tune it",
                info.id
            )))
        }
    }
}
