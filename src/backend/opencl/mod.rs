//! OpenCL backend (feature `opencl`): the bit-sliced search of `kernels/curl_pow.cl` on every
//! OpenCL GPU, accelerator and (on request) CPU device.
//!
//! Files: `discover.rs` (listing devices, their typed facts), `probe.rs` (raw FFI queries that
//! never hang or panic), `kernel_config.rs` (the kernel variants), `session.rs` (the long-lived
//! context and the backend's `Launcher`); the search loop itself is the
//! GPU driver shared with wgpu (`src/backend/gpu/driver.rs`).
//!
//! # Devices
//! `discover` lists every platform's devices: it probes the ICD loader with the raw
//! `clGetPlatformIDs` first, then only makes `Result`-returning calls. Device ids are
//! `"opencl:P:D"`: platform index `P` in the loader's list, device index `D` in that platform's
//! list of all devices. GPUs come first, then accelerators, then CPU devices (PoCL and the
//! like: software drivers, only with [`DiscoverOptions::include_software`]).
//!
//! # Kernel
//! Each work-item owns whole nonces: its own bit-sliced state of `lane_bits × vec` lanes (32-bit
//! `uint` or 64-bit `ulong` words, optionally as OpenCL vectors: `ulong8` carries 512 lanes),
//! updated in place (permuted storage) with the 4-operation S-box, three rounds fused per pass
//! over the state as a wavefront with register windows (`-f5`: five; `-f1`: one round per pass).
//! The state lives in private memory or, with the `:local` variant, in `__local` memory. See
//! [`KernelConfig`]; the default is the cooperative kernel on GPUs (`u32-f4:coop` on NVIDIA,
//! `u32:coop64` on others), `ulong8` words on CPU devices (PoCL does not vectorise across
//! work-items; the vector word is what makes it SIMD) and 64-lane `ulong` words on other
//! devices, overridden with `CURLPOW_OPENCL_KERNEL` (e.g. `u32`, `u64-f5`, `u64x8`, `u32:local`).
//!
//! `-p` (e.g. `u64-p`, `u64-f5-p4`) loads each trit 2 (or 3, 4) wavefront steps ahead.
//! `u32:coop` (`:coopN`: N work-items per state, 32 without; `u32-f4:coop`: four fused rounds
//! per pass) is the cooperative kernel: a work-group keeps its 32-lane states in `__local`
//! memory and its work-items share each state's passes (see the kernel and
//! `docs/gpu-kernels.md`).
//!
//! The program is compiled when the device is prepared (before its first search's clock starts)
//! and kept with its context, queue, kernel and buffers for the device's life; a mutex lets one
//! search at a time use it. The build log is kept; on NVIDIA platforms the kernel is built with
//! `-cl-nv-verbose` (registers and spills then appear in the log and in `details.launch`) and,
//! with `CURLPOW_OPENCL_MAXRREGCOUNT=N`, `-cl-nv-maxrregcount=N`. Every work-item of every
//! launch takes its own counters out of the search's [`CounterRange`]: `counter = base + state
//! × iters + i` (a state is a work-item, or a cooperating group of them); two launches are kept
//! in flight (`src/backend/gpu/driver.rs`).

mod build_log;
mod discover;
mod kernel_config;
mod occupancy;
mod probe;
mod session;

#[cfg(all(test, feature = "opencl", feature = "wgpu"))]
pub(crate) use discover::nvidia_h200_for_tests;
pub use discover::{discover, discover_opencl, OpenClDiscovery};
pub(crate) use discover::{discover_for_engine, discover_with};
pub use kernel_config::KernelConfig;

use std::time::Duration;

use ocl::core::ffi;
use parking_lot::Mutex;

use crate::backend::gpu::discover::device_error;
use crate::backend::gpu::{driver, Geometry, GpuJob, Sizer};
use crate::base::error::Error;
use crate::search::control::{Counters, SearchControl};
use crate::search::device::{Device, DeviceInfo, SearchOutcome};
#[cfg(doc)]
use crate::search::discovery::DiscoverOptions;
use crate::search::launch_stats::LaunchStats;
use crate::search::nonce::CounterRange;
use crate::search::search_job::SearchJob;
use crate::ternary::curl::STATE_LEN;
use occupancy::Facts;
use session::{OpenSpec, Session};

/// The kernel source, compiled at run time for each device: the transaction search
/// (`curl_search`), the block search (`block_search`, the same transform and set-up on the block
/// nonce layout) and the transform test entry point (`curl_transform`).
pub(crate) const KERNEL_SOURCE: &str = include_str!("../../../kernels/curl_pow.cl");

/// Serialises driver probing and context creation within the process: PoCL 3.1 crashed
/// (SIGSEGV in `clGetDeviceInfo(CL_DEVICE_NAME)`) when several threads discovered at once.
static PROBE_LOCK: Mutex<()> = Mutex::new(());

/// How long one launch of a GPU should run: its length (transforms per state) is set to reach
/// it. A hit is seen about one launch after it happens, so this is latency: at 2 G nonces/s an
/// MWM 14 search takes ~2.4 ms of work.
const TARGET_LAUNCH: Duration = Duration::from_millis(2);
/// The same for CPU devices (PoCL), whose launches cost more to start.
const TARGET_LAUNCH_CPU: Duration = Duration::from_millis(10);

/// Most work-items in one launch.
const MAX_GLOBAL: usize = 1 << 22;

/// Most transforms per state in one launch.
const MAX_ITERS: u64 = 256;

/// One OpenCL device: its description, and (once prepared) its compiled program, queue and
/// buffers.
pub struct OpenClDevice {
    info: DeviceInfo,
    platform: ocl::core::PlatformId,
    device: ocl::core::DeviceId,
    kernel: KernelConfig,
    geometry: Mutex<Geometry>,
    facts: Facts,
    session: Mutex<Option<Session>>,
    /// Launch shape and build facts, refreshed after prepare and after every search (read
    /// without waiting for a search to end).
    stats: Mutex<Option<LaunchStats>>,
    counters: Counters,
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

impl OpenClDevice {
    fn new(
        info: DeviceInfo,
        platform: ffi::cl_platform_id,
        device: ffi::cl_device_id,
        kernel: KernelConfig,
        geometry: Geometry,
        facts: Facts,
    ) -> Self {
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
            geometry: Mutex::new(geometry),
            facts,
            session: Mutex::new(None),
            stats: Mutex::new(None),
            counters: Counters::new(1),
        }
    }

    /// Force the launch size (work-items) and length (transforms per state) of this device's
    /// launches, as `CURLPOW_GPU_LAUNCH_ITEMS` / `CURLPOW_GPU_LAUNCH_ITERS` do (`None` leaves
    /// that part adaptive). Takes effect for the next search (a test hook).
    pub fn force_launch(&self, items: Option<usize>, per_item: Option<u64>) {
        {
            let mut g = self.geometry.lock();
            g.forced_items = items;
            g.forced_per_item = per_item;
        }
        if let Some(s) = self.session.lock().as_mut() {
            let mut geometry = *s.sizer.geometry();
            geometry.forced_items = items;
            geometry.forced_per_item = per_item;
            s.sizer = Sizer::new(geometry);
        }
    }

    fn refresh_stats(&self, s: &Session, last: Option<crate::search::launch_stats::SearchTiming>) {
        let mut st = s.sizer.stats();
        st.build_ms = Some(s.build.build_ms);
        st.first_launch_ms = Some(s.build.first_launch_ms);
        let (bytes, traffic) = self.kernel.bytes_per_nonce();
        st.bytes_per_nonce = Some(bytes.round());
        st.traffic = Some(traffic.into());
        st.compiler = s.build.compiler.clone();
        let mut slot = self.stats.lock();
        st.last_search = last.or_else(|| slot.as_ref().and_then(|o| o.last_search));
        *slot = Some(st);
    }

    /// The kernel variant this device runs.
    pub fn kernel(&self) -> KernelConfig {
        self.kernel
    }

    /// Nonces per transform of one work-item.
    pub fn lanes(&self) -> usize {
        self.kernel.lanes()
    }

    /// Work-items of the next full launch (adapted as it works).
    pub fn launch_items(&self) -> usize {
        self.session
            .lock()
            .as_ref()
            .map_or(self.geometry.lock().wave_items, |s| s.sizer.items())
    }

    fn session<'a>(&self, slot: &'a mut Option<Session>) -> Result<&'a mut Session, Error> {
        if slot.is_none() {
            let s = Session::open(OpenSpec {
                info: &self.info,
                platform: self.platform,
                device: self.device,
                kernel: self.kernel,
                geometry: *self.geometry.lock(),
                facts: self.facts,
            })?;
            self.refresh_stats(&s, None);
            *slot = Some(s);
        }
        slot.as_mut()
            .ok_or_else(|| device_error(&self.info, "session missing after open"))
    }

    /// Apply the 81-round Curl-P transform to each state on the device, through the same
    /// bit-sliced code as the search (the test entry point).
    pub fn transform(&self, states: &[[i8; STATE_LEN]]) -> Result<Vec<[i8; STATE_LEN]>, Error> {
        let flat: Vec<i8> = states.iter().flat_map(|s| s.iter().copied()).collect();
        crate::ternary::trinary::check_trits(&flat)?;
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let err = |what: &str, e: &dyn std::fmt::Display| {
            device_error(&self.info, format!("{what}: {e}"))
        };
        let n =
            u32::try_from(states.len()).map_err(|_| device_error(&self.info, "too many states"))?;
        let mut guard = self.session.lock();
        let s = self.session(&mut guard)?;
        let input = ocl::Buffer::<i8>::builder()
            .queue(s.queue.clone())
            .len(flat.len())
            .copy_host_slice(&flat)
            .build()
            .map_err(|e| err("buffer", &e))?;
        let output = ocl::Buffer::<i8>::builder()
            .queue(s.queue.clone())
            .len(flat.len())
            .build()
            .map_err(|e| err("buffer", &e))?;
        let kernel = ocl::Kernel::builder()
            .program(&s.program)
            .name("curl_transform")
            .queue(s.queue.clone())
            .arg(&input)
            .arg(&output)
            .arg(n)
            .build()
            .map_err(|e| err("kernel curl_transform", &e))?;
        let local = s.sizer.geometry().group;
        // One state of `lanes` lanes per work-item, or per `coop` cooperating work-items.
        let per_state = s.sizer.geometry().items_per_state;
        let items = states.len().div_ceil(self.lanes()) * per_state;
        let global = items.div_ceil(local) * local;
        // SAFETY: every argument is set (two buffers of n × 729 chars and n); work-items past
        // `n_states` lanes read and write nothing, so the rounded-up global size stays in bounds.
        unsafe {
            kernel
                .cmd()
                .global_work_size(global)
                .local_work_size(local)
                .enq()
        }
        .map_err(|e| err("transform launch", &e))?;
        let mut back = vec![0i8; flat.len()];
        output.read(&mut back).enq().map_err(|e| err("read", &e))?;
        Ok(back
            .chunks_exact(STATE_LEN)
            .map(|c| c.try_into().expect("729 trits"))
            .collect())
    }
}

impl OpenClDevice {
    /// A search of either job on the session (opened at the first); a transaction search
    /// refreshes the launch stats.
    fn run(
        &self,
        job: GpuJob<'_>,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let mut guard = self.session.lock();
        let s = self.session(&mut guard)?;
        let (out, timing) = driver::search(s, &self.info, job, range, ctl, &self.counters)?;
        if !job.is_block() {
            self.refresh_stats(s, Some(timing));
        }
        Ok(out)
    }
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn prepare(&self) -> Result<(), Error> {
        let mut guard = self.session.lock();
        self.session(&mut guard).map(|_| ())
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.run(GpuJob::Transaction(job), range, ctl)
    }

    fn supports_block_pow(&self) -> bool {
        true
    }

    fn search_block(
        &self,
        job: &crate::search::block::BlockJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.run(GpuJob::Block(job), range, ctl)
    }

    fn nonces_tried(&self) -> u64 {
        self.counters.sum()
    }

    fn launch_stats(&self) -> Option<LaunchStats> {
        self.stats.lock().clone().or_else(|| {
            // Not prepared yet: the sizing it will start from.
            let st = Sizer::new(*self.geometry.lock()).stats();
            Some(st)
        })
    }
}
