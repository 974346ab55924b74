//! OpenCL backend (feature `opencl`): the bit-sliced search of `kernels/curl_pow.cl` on every
//! OpenCL GPU, accelerator and (on request) CPU device.
//!
//! # Devices
//! [`discover`] lists every platform's devices without ever hanging or panicking: it probes the
//! ICD loader with the raw `clGetPlatformIDs` first (ocl's own `Platform::list()` panics, and
//! `Platform::first()` waits 10 s, when no driver is installed), then only makes
//! `Result`-returning calls. Device ids are `"opencl:P:D"`: platform index `P` in the loader's
//! list, device index `D` in that platform's list of all devices. GPUs come first, then
//! accelerators, then CPU devices (PoCL and the like, only with
//! [`DiscoverOptions::include_software`]).
//!
//! # Kernel
//! Each work-item owns whole nonces: its own bit-sliced state of `lane_bits × vec` lanes (32-bit
//! `uint` or 64-bit `ulong` words, optionally as OpenCL vectors: `ulong8` carries 512 lanes),
//! updated in place (permuted storage) with the 4-operation S-box, three rounds fused per pass
//! over the state as a wavefront with register windows (`-f5`: five; `-f1`: one round per pass).
//! The state lives in private memory or, with the `:local` variant, in `__local` memory. See
//! [`KernelConfig`]; the default is 64-lane `ulong` words on GPUs and `ulong8` on CPU devices
//! (PoCL does not vectorise across work-items; the vector word is what makes it SIMD), overridden
//! with `CURLPOW_OPENCL_KERNEL` (e.g. `u32`, `u64-f5`, `u64x8`, `u32:local`). Figures:
//! `docs/benchmarks.md`; a lent GPU is checked with `scripts/gpu-check.sh`.
//!
//! The program is compiled the first time a device is used ([`OpenClDevice::prepare`] does it
//! eagerly) and kept with its context, queue, kernel and buffers for the device's life; a mutex
//! lets one search at a time use it. A search uploads the mid-state once, then launches kernels
//! sized to run a few milliseconds each, checking the stop conditions between launches. Every
//! work-item of every launch takes its own counter out of the search's [`CounterRange`]:
//! `counter = range.start + launch offset + global id`.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ocl::core::ffi;
use parking_lot::Mutex;

use crate::control::SearchControl;
use crate::curl::STATE_LEN;
use crate::device::{
    Backend, Device, DeviceInfo, DeviceKind, DiscoverOptions, Discovery, SearchOutcome,
};
use crate::error::Error;
use crate::search::{CounterRange, Hit, SearchJob, MAX_LANES};

/// The kernel source, compiled at run time for each device.
pub const KERNEL_SOURCE: &str = include_str!("../../kernels/curl_pow.cl");

/// Environment variable that overrides the kernel variant of every OpenCL device
/// (see [`KernelConfig::parse`]).
pub const KERNEL_ENV: &str = "CURLPOW_OPENCL_KERNEL";

/// Serialises driver probing and context creation within the process: PoCL 3.1 crashed
/// (SIGSEGV in `clGetDeviceInfo(CL_DEVICE_NAME)`) when several threads discovered at once.
static PROBE_LOCK: Mutex<()> = Mutex::new(());

/// How long one launch should run; the global size adapts to it.
const TARGET_LAUNCH: Duration = Duration::from_millis(5);

/// Most work-items in one launch.
const MAX_GLOBAL: usize = 1 << 22;

const BACKEND: &str = "opencl";

/// A kernel variant: the word type of the bit-sliced state and where the state lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    /// 32 (`uint`) or 64 (`ulong`) lanes per word.
    pub lane_bits: u32,
    /// Words per trit half: 1, 2, 4, 8 or 16 (an OpenCL vector type when above 1).
    pub vec: u32,
    /// Keep the state in `__local` memory (`[slot][half][work-item]`) instead of private memory.
    pub local_state: bool,
    /// Rounds fused per pass over the state: 3 (the default: 27 wavefront passes), 5 (15 passes
    /// of 5 and 2 of 3; more registers) or 1.
    pub fuse: u32,
}

impl KernelConfig {
    /// 32 lanes in `uint`, private state.
    pub const U32: KernelConfig = KernelConfig {
        lane_bits: 32,
        vec: 1,
        local_state: false,
        fuse: 3,
    };
    /// 64 lanes in `ulong`, private state.
    pub const U64: KernelConfig = KernelConfig {
        lane_bits: 64,
        vec: 1,
        local_state: false,
        fuse: 3,
    };
    /// 512 lanes in `ulong8`, private state (the CPU-device default: one AVX-512 register).
    pub const U64X8: KernelConfig = KernelConfig {
        lane_bits: 64,
        vec: 8,
        local_state: false,
        fuse: 3,
    };

    /// Nonces per transform of one work-item.
    pub fn lanes(&self) -> usize {
        (self.lane_bits * self.vec) as usize
    }

    /// Bytes of one word (`W` in the kernel).
    pub fn word_bytes(&self) -> usize {
        self.lanes() / 8
    }

    /// Bytes of one work-item's state (729 trits, two halves, plus the side slots of fused passes).
    pub fn state_bytes(&self) -> usize {
        let slots = if self.fuse == 1 {
            STATE_LEN
        } else {
            STATE_LEN + 5
        };
        2 * slots * self.word_bytes()
    }

    /// Whether the combination is one the kernel supports.
    pub fn is_valid(&self) -> bool {
        matches!(self.lane_bits, 32 | 64)
            && matches!(self.vec, 1 | 2 | 4 | 8 | 16)
            && self.lanes() <= MAX_LANES
            && matches!(self.fuse, 1 | 3 | 5)
    }

    /// The default for a kind of device.
    pub fn default_for(kind: DeviceKind) -> KernelConfig {
        match kind {
            DeviceKind::Cpu => KernelConfig::U64X8,
            _ => KernelConfig::U64,
        }
    }

    /// Parse `u32`, `u64`, `u64x8`, `u32x16`, …, optionally followed by `-f1` or `-f5` (rounds
    /// fused per pass; 3 without) and by `:local` or `:private`.
    pub fn parse(s: &str) -> Option<KernelConfig> {
        let s = s.trim().to_ascii_lowercase();
        let (word, space) = match s.split_once(':') {
            Some((w, sp)) => (w.to_string(), sp.to_string()),
            None => (s, "private".to_string()),
        };
        let local_state = match space.as_str() {
            "local" => true,
            "private" => false,
            _ => return None,
        };
        let (word, fuse) = match word.split_once("-f") {
            Some((w, f)) => (w.to_string(), f.parse::<u32>().ok()?),
            None => (word, 3),
        };
        let (bits, vec) = match word.split_once('x') {
            Some((b, v)) => (b, v.parse::<u32>().ok()?),
            None => (word.as_str(), 1),
        };
        let lane_bits = match bits {
            "u32" => 32,
            "u64" => 64,
            _ => return None,
        };
        let c = KernelConfig {
            lane_bits,
            vec,
            local_state,
            fuse,
        };
        c.is_valid().then_some(c)
    }

    /// The name [`parse`](Self::parse) reads back, e.g. `"u64x8"`, `"u64-f1"` or `"u32:local"`.
    pub fn name(&self) -> String {
        let mut s = format!("u{}", self.lane_bits);
        if self.vec > 1 {
            s.push_str(&format!("x{}", self.vec));
        }
        if self.fuse != 3 {
            s.push_str(&format!("-f{}", self.fuse));
        }
        if self.local_state {
            s.push_str(":local");
        }
        s
    }

    fn build_options(&self, local_size: usize) -> String {
        format!(
            "-DLANE_BITS={} -DVEC={} -DSTATE_LOCAL={} -DLOCAL_SIZE={} -DFUSE={}",
            self.lane_bits,
            self.vec,
            u32::from(self.local_state),
            local_size,
            self.fuse
        )
    }
}

impl std::fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Discovery's result with the concrete device type (for [`OpenClDevice::transform`] and the
/// tests); [`discover`] returns the same devices as trait objects.
#[derive(Default)]
pub struct OpenClDiscovery {
    /// Usable devices, GPUs first.
    pub devices: Vec<Arc<OpenClDevice>>,
    /// Problems met while probing.
    pub warnings: Vec<String>,
}

/// Every OpenCL device of every platform (the engine's entry point). Never panics or hangs: with
/// no OpenCL driver it returns no devices and a warning within milliseconds.
pub fn discover(opts: &DiscoverOptions) -> Discovery {
    let found = discover_opencl(opts, None);
    Discovery {
        devices: found
            .devices
            .into_iter()
            .map(|d| d as Arc<dyn Device>)
            .collect(),
        warnings: found.warnings,
    }
}

/// Like [`discover`], with the concrete type, and every device using `kernel` when given
/// (otherwise `CURLPOW_OPENCL_KERNEL`, otherwise [`KernelConfig::default_for`] its kind).
pub fn discover_opencl(opts: &DiscoverOptions, kernel: Option<KernelConfig>) -> OpenClDiscovery {
    let _probing = PROBE_LOCK.lock();
    let mut out = OpenClDiscovery::default();
    let env_kernel = match std::env::var(KERNEL_ENV) {
        Ok(v) if !v.trim().is_empty() => match KernelConfig::parse(&v) {
            Some(k) => Some(k),
            None => {
                out.warnings.push(format!(
                    "{KERNEL_ENV}={v:?} is not a kernel (expected e.g. u32, u64, u64x8, u32:local); using the default"
                ));
                None
            }
        },
        _ => None,
    };
    let platforms = match platform_ids() {
        Ok(p) => p,
        Err(msg) => {
            out.warnings.push(msg);
            return out;
        }
    };
    let mut found: Vec<(u8, OpenClDevice)> = Vec::new();
    for (pi, &platform) in platforms.iter().enumerate() {
        let devices = match device_ids(platform) {
            Ok(d) if d.is_empty() => {
                out.warnings
                    .push(format!("OpenCL platform {pi}: no devices"));
                continue;
            }
            Ok(d) => d,
            Err(msg) => {
                out.warnings.push(format!("OpenCL platform {pi}: {msg}"));
                continue;
            }
        };
        let pinfo = PlatformInfo::read(platform);
        for (di, &device) in devices.iter().enumerate() {
            let id = format!("opencl:{pi}:{di}");
            let raw = match RawDevice::read(device) {
                Ok(r) => r,
                Err(msg) => {
                    out.warnings.push(format!("{id}: {msg}"));
                    continue;
                }
            };
            let rank = match raw.kind {
                DeviceKind::Gpu => 0,
                DeviceKind::Accelerator => 1,
                _ => 2,
            };
            if rank == 2 && !opts.include_software {
                continue;
            }
            if !raw.available || !raw.compiler_available {
                out.warnings.push(format!(
                    "{id} ({}): not available or has no compiler; skipped",
                    raw.name
                ));
                continue;
            }
            let mut cfg = kernel
                .or(env_kernel)
                .unwrap_or_else(|| KernelConfig::default_for(raw.kind));
            let local_size = match launch_local_size(&cfg, &raw) {
                Some(l) => l,
                None => {
                    out.warnings.push(format!(
                        "{id}: kernel {cfg} does not fit ({} B of local memory, {} B per work-item); using private state",
                        raw.local_mem, cfg.state_bytes()
                    ));
                    cfg.local_state = false;
                    launch_local_size(&cfg, &raw).unwrap_or(1)
                }
            };
            let dev = OpenClDevice::new(id, platform, device, &pinfo, raw, cfg, local_size);
            found.push((rank, dev));
        }
    }
    // Stable: GPUs, accelerators, then CPU devices, each in platform/device order.
    found.sort_by_key(|(rank, _)| *rank);
    out.devices = found.into_iter().map(|(_, d)| Arc::new(d)).collect();
    out
}

/// The work-group size for `cfg` on this device, `None` if a local-memory state does not fit.
fn launch_local_size(cfg: &KernelConfig, raw: &RawDevice) -> Option<usize> {
    let max = raw.max_work_group.max(1);
    if cfg.local_state {
        let fit = (raw.local_mem as usize) / cfg.state_bytes();
        let n = fit.min(max).min(64);
        if n == 0 {
            return None;
        }
        // Largest power of two not above n.
        Some(1 << (usize::BITS - 1 - n.leading_zeros()))
    } else if raw.kind == DeviceKind::Cpu {
        Some(1)
    } else {
        Some(64.min(max))
    }
}

/// One OpenCL device: its description, and (once used) its compiled program, queue and buffers.
pub struct OpenClDevice {
    info: DeviceInfo,
    platform: ocl::core::PlatformId,
    device: ocl::core::DeviceId,
    kernel: KernelConfig,
    local_size: usize,
    compute_units: usize,
    session: Mutex<Option<Session>>,
    nonces: AtomicU64,
}

impl std::fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenClDevice")
            .field("id", &self.info.id)
            .field("name", &self.info.name)
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

/// What stays alive for the device's life once it is first used.
struct Session {
    _context: ocl::Context,
    program: ocl::Program,
    queue: ocl::Queue,
    search: ocl::Kernel,
    mid: ocl::Buffer<i8>,
    res: ocl::Buffer<u32>,
    /// Work-items in the next launch (adapted to [`TARGET_LAUNCH`]).
    global: usize,
}

impl OpenClDevice {
    fn new(
        id: String,
        platform: ffi::cl_platform_id,
        device: ffi::cl_device_id,
        pinfo: &PlatformInfo,
        raw: RawDevice,
        kernel: KernelConfig,
        local_size: usize,
    ) -> Self {
        let compute_units = raw.compute_units.max(1) as usize;
        let mut d = serde_json::Map::new();
        d.insert("platform".into(), pinfo.name.clone().into());
        d.insert("platform_version".into(), pinfo.version.clone().into());
        d.insert("platform_vendor".into(), pinfo.vendor.clone().into());
        d.insert("vendor".into(), raw.vendor.clone().into());
        d.insert("vendor_id".into(), raw.vendor_id.into());
        d.insert("device_version".into(), raw.version.clone().into());
        d.insert("driver_version".into(), raw.driver.clone().into());
        d.insert("compute_units".into(), raw.compute_units.into());
        d.insert("global_mem_bytes".into(), raw.global_mem.into());
        d.insert("local_mem_bytes".into(), raw.local_mem.into());
        d.insert("max_work_group_size".into(), raw.max_work_group.into());
        if let Some(pci) = &raw.pci {
            d.insert("pci_bus_id".into(), pci.clone().into());
        }
        d.insert("kernel".into(), kernel.name().into());
        d.insert("lanes".into(), kernel.lanes().into());
        d.insert("local_size".into(), local_size.into());
        d.insert(
            "initial_global_size".into(),
            (local_size * compute_units).into(),
        );
        d.insert(
            "target_launch_ms".into(),
            (TARGET_LAUNCH.as_millis() as u64).into(),
        );
        let info = DeviceInfo {
            id,
            backend: Backend::Opencl,
            name: raw.name,
            kind: raw.kind,
            details: d,
        };
        // SAFETY: both handles came from clGetPlatformIDs / clGetDeviceIDs of the loaded ICD;
        // platform ids and root-device ids are not reference counted and are never released, so
        // they stay valid for the life of the process (and may be used from any thread).
        let (platform, device) = unsafe {
            (
                ocl::core::PlatformId::from_raw(platform),
                ocl::core::DeviceId::from_raw(device),
            )
        };
        OpenClDevice {
            info,
            platform,
            device,
            kernel,
            local_size,
            compute_units,
            session: Mutex::new(None),
            nonces: AtomicU64::new(0),
        }
    }

    /// The kernel variant this device runs.
    pub fn kernel(&self) -> KernelConfig {
        self.kernel
    }

    /// Nonces per transform of one work-item.
    pub fn lanes(&self) -> usize {
        self.kernel.lanes()
    }

    fn err(&self, message: impl std::fmt::Display) -> Error {
        Error::Backend {
            backend: BACKEND,
            device: self.info.id.clone(),
            message: message.to_string(),
        }
    }

    /// Compile the program and set up the queue and buffers now (otherwise done by the first
    /// search or transform). Idempotent.
    pub fn prepare(&self) -> Result<(), Error> {
        let mut guard = self.session.lock();
        self.session(&mut guard).map(|_| ())
    }

    fn session<'a>(&self, slot: &'a mut Option<Session>) -> Result<&'a mut Session, Error> {
        if slot.is_none() {
            *slot = Some(self.open()?);
        }
        slot.as_mut()
            .ok_or_else(|| self.err("session missing after open"))
    }

    fn open(&self) -> Result<Session, Error> {
        let platform = ocl::Platform::new(self.platform);
        let device = ocl::Device::from(self.device);
        let context = {
            let _probing = PROBE_LOCK.lock();
            ocl::Context::builder()
                .platform(platform)
                .devices(device)
                .build()
                .map_err(|e| self.err(format!("context: {e}")))?
        };
        let program = ocl::Program::builder()
            .src(KERNEL_SOURCE)
            .cmplr_opt(self.kernel.build_options(self.local_size))
            .devices(device)
            .build(&context)
            .map_err(|e| self.err(format!("kernel build ({}): {e}", self.kernel)))?;
        let queue =
            ocl::Queue::new(&context, device, None).map_err(|e| self.err(format!("queue: {e}")))?;
        let mid = ocl::Buffer::<i8>::builder()
            .queue(queue.clone())
            .len(STATE_LEN)
            .build()
            .map_err(|e| self.err(format!("buffer: {e}")))?;
        let res = ocl::Buffer::<u32>::builder()
            .queue(queue.clone())
            .len(4)
            .fill_val(0u32)
            .build()
            .map_err(|e| self.err(format!("buffer: {e}")))?;
        let search = ocl::Kernel::builder()
            .program(&program)
            .name("curl_search")
            .queue(queue.clone())
            .arg(&mid)
            .arg(0u64)
            .arg(1u32)
            .arg(0u64)
            .arg(0u32)
            .arg(&res)
            .build()
            .map_err(|e| self.err(format!("kernel curl_search: {e}")))?;
        let mut s = Session {
            _context: context,
            program,
            queue,
            search,
            mid,
            res,
            global: self.local_size * self.compute_units,
        };
        // One empty launch (limit 0) so that the driver's first-launch JIT happens here.
        s.launch(self.local_size, self.local_size, 0, 0)
            .map_err(|e| self.err(format!("warm-up launch: {e}")))?;
        s.queue
            .finish()
            .map_err(|e| self.err(format!("warm-up launch: {e}")))?;
        Ok(s)
    }

    /// Apply the 81-round Curl-P transform to each state on the device, through the same
    /// bit-sliced code as the search (the test entry point).
    pub fn transform(&self, states: &[[i8; STATE_LEN]]) -> Result<Vec<[i8; STATE_LEN]>, Error> {
        for (k, s) in states.iter().enumerate() {
            if let Some((i, &v)) = s.iter().enumerate().find(|(_, &v)| !(-1..=1).contains(&v)) {
                return Err(Error::NotATrit {
                    index: k * STATE_LEN + i,
                    value: v,
                });
            }
        }
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let n = u32::try_from(states.len()).map_err(|_| self.err("too many states"))?;
        let mut guard = self.session.lock();
        let s = self.session(&mut guard)?;
        let flat: Vec<i8> = states.iter().flat_map(|s| s.iter().copied()).collect();
        let input = ocl::Buffer::<i8>::builder()
            .queue(s.queue.clone())
            .len(flat.len())
            .copy_host_slice(&flat)
            .build()
            .map_err(|e| self.err(format!("buffer: {e}")))?;
        let output = ocl::Buffer::<i8>::builder()
            .queue(s.queue.clone())
            .len(flat.len())
            .build()
            .map_err(|e| self.err(format!("buffer: {e}")))?;
        let kernel = ocl::Kernel::builder()
            .program(&s.program)
            .name("curl_transform")
            .queue(s.queue.clone())
            .arg(&input)
            .arg(&output)
            .arg(n)
            .build()
            .map_err(|e| self.err(format!("kernel curl_transform: {e}")))?;
        let items = states.len().div_ceil(self.lanes());
        let global = items.div_ceil(self.local_size) * self.local_size;
        // SAFETY: every argument is set (two buffers of n × 729 chars and n); work-items past
        // `n_states` lanes read and write nothing, so the rounded-up global size stays in bounds.
        unsafe {
            kernel
                .cmd()
                .global_work_size(global)
                .local_work_size(self.local_size)
                .enq()
        }
        .map_err(|e| self.err(format!("transform launch: {e}")))?;
        let mut back = vec![0i8; flat.len()];
        output
            .read(&mut back)
            .enq()
            .map_err(|e| self.err(format!("read: {e}")))?;
        let mut out = Vec::with_capacity(states.len());
        for chunk in back.chunks_exact(STATE_LEN) {
            let mut st = [0i8; STATE_LEN];
            st.copy_from_slice(chunk);
            out.push(st);
        }
        Ok(out)
    }
}

impl Session {
    /// Enqueue one search launch: `items` work-items (a multiple of the local size) over counters
    /// `base .. base + limit`.
    fn launch(&mut self, items: usize, local: usize, base: u64, limit: u64) -> ocl::Result<()> {
        self.search.set_arg(1, base)?;
        self.search.set_arg(3, limit)?;
        // SAFETY: the arguments match the kernel's signature (buffer of 729 chars, ulong, uint,
        // ulong, uint, buffer of 4 uints, set at build and above); work-items whose counter
        // index is at or past `limit` return at once, so no counter outside the range is tried
        // and nothing outside the buffers is touched.
        unsafe {
            self.search
                .cmd()
                .global_work_size(items)
                .local_work_size(local)
                .enq()
        }
    }
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let mut guard = self.session.lock();
        let s = self.session(&mut guard)?;
        let local = self.local_size;
        let lanes = self.lanes() as u64;
        let mwm = u32::try_from(job.mwm()).map_err(|_| Error::InvalidMwm(job.mwm()))?;
        s.search.set_arg(4, mwm).map_err(|e| self.err(e))?;
        s.search.set_arg(2, 1u32).map_err(|e| self.err(e))?;
        s.mid
            .write(&job.state()[..])
            .enq()
            .map_err(|e| self.err(format!("mid-state upload: {e}")))?;
        s.res
            .write(&[0u32; 4][..])
            .enq()
            .map_err(|e| self.err(format!("result reset: {e}")))?;
        let mut done: u64 = 0;
        let mut nonces: u64 = 0;
        let mut res = [0u32; 4];
        let outcome = loop {
            if ctl.should_stop() || done >= range.len {
                break SearchOutcome { hit: None, nonces };
            }
            let counters = (s.global as u64).min(range.len - done);
            let items = (counters as usize).div_ceil(local) * local;
            let t0 = Instant::now();
            s.launch(items, local, range.start + done, counters)
                .map_err(|e| self.err(format!("launch: {e}")))?;
            s.res
                .read(&mut res[..])
                .enq()
                .map_err(|e| self.err(format!("result read: {e}")))?;
            let took = t0.elapsed();
            done += counters;
            nonces += counters * lanes;
            self.nonces.fetch_add(counters * lanes, Ordering::Relaxed);
            if res[0] != 0 {
                let counter = u64::from(res[1]) | (u64::from(res[2]) << 32);
                let lane = res[3] as usize;
                if lane >= self.lanes()
                    || counter < range.start
                    || counter - range.start >= range.len
                {
                    return Err(self.err(format!(
                        "kernel reported counter {counter} lane {lane}, outside its launch"
                    )));
                }
                break SearchOutcome {
                    hit: Some(Hit { counter, lane }),
                    nonces,
                };
            }
            // Adapt the launch to run about TARGET_LAUNCH (only from full launches).
            if counters == s.global as u64 {
                if took < TARGET_LAUNCH / 2 && s.global * 2 <= MAX_GLOBAL {
                    s.global *= 2;
                } else if took > TARGET_LAUNCH * 2 && s.global / 2 >= local {
                    s.global /= 2;
                }
            }
        };
        Ok(outcome)
    }

    fn nonces_tried(&self) -> u64 {
        self.nonces.load(Ordering::Relaxed)
    }
}

// ---------------------------------------------------------------------------------------------
// Raw probing: only calls that return a status, never ocl's panicking or retrying helpers.

fn platform_ids() -> Result<Vec<ffi::cl_platform_id>, String> {
    let mut n: ffi::cl_uint = 0;
    // SAFETY: the count query of clGetPlatformIDs: num_entries 0 with a null list is allowed and
    // `n` is a valid out-pointer for the duration of the call.
    let rc = unsafe { ffi::clGetPlatformIDs(0, ptr::null_mut(), &mut n) };
    if rc == ffi::CL_PLATFORM_NOT_FOUND_KHR {
        return Err("no OpenCL platform: no ICD driver is installed".into());
    }
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetPlatformIDs failed ({})", status_name(rc)));
    }
    if n == 0 {
        return Err("no OpenCL platform".into());
    }
    let mut ids: Vec<ffi::cl_platform_id> = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for exactly `n` entries.
    let rc = unsafe { ffi::clGetPlatformIDs(n, ids.as_mut_ptr(), ptr::null_mut()) };
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetPlatformIDs failed ({})", status_name(rc)));
    }
    Ok(ids)
}

fn device_ids(platform: ffi::cl_platform_id) -> Result<Vec<ffi::cl_device_id>, String> {
    let mut n: ffi::cl_uint = 0;
    // SAFETY: count query on a platform id returned by clGetPlatformIDs; `n` is a valid out
    // pointer.
    let rc = unsafe {
        ffi::clGetDeviceIDs(
            platform,
            ffi::CL_DEVICE_TYPE_ALL,
            0,
            ptr::null_mut(),
            &mut n,
        )
    };
    if rc == ffi::CL_DEVICE_NOT_FOUND || (rc == ffi::CL_SUCCESS && n == 0) {
        return Ok(Vec::new());
    }
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetDeviceIDs failed ({})", status_name(rc)));
    }
    let mut ids: Vec<ffi::cl_device_id> = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for exactly `n` entries.
    let rc = unsafe {
        ffi::clGetDeviceIDs(
            platform,
            ffi::CL_DEVICE_TYPE_ALL,
            n,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetDeviceIDs failed ({})", status_name(rc)));
    }
    Ok(ids)
}

fn platform_bytes(p: ffi::cl_platform_id, param: ffi::cl_platform_info) -> Option<Vec<u8>> {
    let mut size: ffi::size_t = 0;
    // SAFETY: size query (null value, size 0) on a valid platform id.
    let rc = unsafe { ffi::clGetPlatformInfo(p, param, 0, ptr::null_mut(), &mut size) };
    if rc != ffi::CL_SUCCESS {
        return None;
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds exactly `size` bytes, the size the driver just asked for.
    let rc = unsafe {
        ffi::clGetPlatformInfo(
            p,
            param,
            size,
            buf.as_mut_ptr() as *mut c_void,
            ptr::null_mut(),
        )
    };
    (rc == ffi::CL_SUCCESS).then_some(buf)
}

fn device_bytes(d: ffi::cl_device_id, param: ffi::cl_device_info) -> Result<Vec<u8>, i32> {
    let mut size: ffi::size_t = 0;
    // SAFETY: size query (null value, size 0) on a valid device id.
    let rc = unsafe { ffi::clGetDeviceInfo(d, param, 0, ptr::null_mut(), &mut size) };
    if rc != ffi::CL_SUCCESS {
        return Err(rc);
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds exactly `size` bytes, the size the driver just asked for.
    let rc = unsafe {
        ffi::clGetDeviceInfo(
            d,
            param,
            size,
            buf.as_mut_ptr() as *mut c_void,
            ptr::null_mut(),
        )
    };
    if rc != ffi::CL_SUCCESS {
        return Err(rc);
    }
    Ok(buf)
}

fn c_string(mut b: Vec<u8>) -> String {
    if let Some(z) = b.iter().position(|&c| c == 0) {
        b.truncate(z);
    }
    String::from_utf8_lossy(&b).trim().to_string()
}

fn le_uint(b: &[u8]) -> Option<u64> {
    match b.len() {
        4 => Some(u64::from(u32::from_ne_bytes(b.try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(b.try_into().ok()?)),
        _ => None,
    }
}

struct PlatformInfo {
    name: String,
    version: String,
    vendor: String,
}

impl PlatformInfo {
    fn read(p: ffi::cl_platform_id) -> Self {
        let s = |param| platform_bytes(p, param).map(c_string).unwrap_or_default();
        PlatformInfo {
            name: s(ffi::CL_PLATFORM_NAME),
            version: s(ffi::CL_PLATFORM_VERSION),
            vendor: s(ffi::CL_PLATFORM_VENDOR),
        }
    }
}

/// cl_khr_pci_bus_info: `CL_DEVICE_PCI_BUS_INFO_KHR`, four `cl_uint` (domain, bus, device,
/// function).
const CL_DEVICE_PCI_BUS_INFO_KHR: ffi::cl_device_info = 0x410F;
/// cl_nv_device_attribute_query: bus and slot ids (slot = device << 3 | function) and domain.
const CL_DEVICE_PCI_BUS_ID_NV: ffi::cl_device_info = 0x4008;
const CL_DEVICE_PCI_SLOT_ID_NV: ffi::cl_device_info = 0x4009;
const CL_DEVICE_PCI_DOMAIN_ID_NV: ffi::cl_device_info = 0x400A;

struct RawDevice {
    name: String,
    kind: DeviceKind,
    vendor: String,
    vendor_id: u64,
    version: String,
    driver: String,
    compute_units: u64,
    global_mem: u64,
    local_mem: u64,
    max_work_group: usize,
    available: bool,
    compiler_available: bool,
    pci: Option<String>,
}

impl RawDevice {
    fn read(d: ffi::cl_device_id) -> Result<Self, String> {
        let num = |param, what: &str| -> Result<u64, String> {
            device_bytes(d, param)
                .map_err(|rc| format!("{what}: {}", status_name(rc)))
                .and_then(|b| le_uint(&b).ok_or_else(|| format!("{what}: bad size {}", b.len())))
        };
        let text = |param| device_bytes(d, param).map(c_string).unwrap_or_default();
        let ty = num(ffi::CL_DEVICE_TYPE, "device type")?;
        let kind = if ty & ffi::CL_DEVICE_TYPE_GPU != 0 {
            DeviceKind::Gpu
        } else if ty & ffi::CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceKind::Accelerator
        } else if ty & ffi::CL_DEVICE_TYPE_CPU != 0 {
            DeviceKind::Cpu
        } else {
            DeviceKind::Other
        };
        let extensions = text(ffi::CL_DEVICE_EXTENSIONS);
        let has = |ext: &str| extensions.split_whitespace().any(|e| e == ext);
        let pci = if has("cl_khr_pci_bus_info") {
            device_bytes(d, CL_DEVICE_PCI_BUS_INFO_KHR)
                .ok()
                .filter(|b| b.len() == 16)
                .map(|b| {
                    let w = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                    format!("{:04x}:{:02x}:{:02x}.{:x}", w(0), w(4), w(8), w(12))
                })
        } else {
            None
        };
        let pci = pci.or_else(|| {
            if !has("cl_nv_device_attribute_query") {
                return None;
            }
            let bus = num(CL_DEVICE_PCI_BUS_ID_NV, "bus").ok()?;
            let slot = num(CL_DEVICE_PCI_SLOT_ID_NV, "slot").ok()?;
            let domain = num(CL_DEVICE_PCI_DOMAIN_ID_NV, "domain").unwrap_or(0);
            Some(format!(
                "{domain:04x}:{bus:02x}:{:02x}.{:x}",
                slot >> 3,
                slot & 7
            ))
        });
        Ok(RawDevice {
            name: text(ffi::CL_DEVICE_NAME),
            kind,
            vendor: text(ffi::CL_DEVICE_VENDOR),
            vendor_id: num(ffi::CL_DEVICE_VENDOR_ID, "vendor id").unwrap_or(0),
            version: text(ffi::CL_DEVICE_VERSION),
            driver: text(ffi::CL_DRIVER_VERSION),
            compute_units: num(ffi::CL_DEVICE_MAX_COMPUTE_UNITS, "compute units").unwrap_or(1),
            global_mem: num(ffi::CL_DEVICE_GLOBAL_MEM_SIZE, "global memory").unwrap_or(0),
            local_mem: num(ffi::CL_DEVICE_LOCAL_MEM_SIZE, "local memory").unwrap_or(0),
            max_work_group: num(ffi::CL_DEVICE_MAX_WORK_GROUP_SIZE, "work-group size").unwrap_or(1)
                as usize,
            available: num(ffi::CL_DEVICE_AVAILABLE, "available").unwrap_or(0) != 0,
            compiler_available: num(ffi::CL_DEVICE_COMPILER_AVAILABLE, "compiler").unwrap_or(0)
                != 0,
            pci,
        })
    }
}

fn status_name(rc: i32) -> String {
    let name = match rc {
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -30 => "CL_INVALID_VALUE",
        -32 => "CL_INVALID_PLATFORM",
        -33 => "CL_INVALID_DEVICE",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        _ => "",
    };
    if name.is_empty() {
        format!("OpenCL status {rc}")
    } else {
        format!("{name} ({rc})")
    }
}
