//! wgpu backend (feature `wgpu`): Vulkan, Metal, DX12.
//!
//! Files: `discover.rs` (adapters and their typed facts), `tuning.rs` (the kernel's shape and
//! the clamps that keep it inside an adapter's limits), `context.rs` (the long-lived device
//! context and the backend's `Launcher`), `buffers.rs` (the bytes the
//! host and the kernel exchange), `source.rs` (each shader module's WGSL, composed from the
//! pieces under `kernels/`), `workgroup.rs` (the workgroup-memory kernel's generated prelude);
//! the search loop itself is the GPU driver shared with OpenCL (`src/backend/gpu/driver.rs`).
//! Either kernel runs both PoWs: its module has a `search` (transaction) and a `block_search`
//! entry point on its one transform.
//!
//! One [`WgpuDevice`] per adapter. Each holds a long-lived context (device, queue, both
//! pipelines, every buffer) built once when it is opened and reused by every search behind a
//! mutex, so one search at a time runs per GPU and nothing is allocated in the search loop.
//!
//! The kernel (`kernels/curl_pow.wgsl`) gives each invocation whole nonces: its own bit-sliced
//! state of 729 trits, transformed in place in a storage-buffer scratch region. It is compiled
//! for 64-bit lanes (`u64`, where the adapter offers [`wgpu::Features::SHADER_INT64`]) or 32-bit
//! lanes (`u32`; forced by [`EngineBuilder::force_32bit_lanes`](crate::EngineBuilder) or
//! `CURLPOW_WGPU_LANES=32`). Invocation `g` of a dispatch with `N` invocations tries counters
//! `base + j * N + g` for `j` in `0..TRANSFORMS`, so every invocation, loop and dispatch has its
//! own counters (see [the nonce layout](crate::device#the-nonce-layout)).
//!
//! Environment: `CURLPOW_WGPU_LANES=32` forces 32-bit lanes (`64` or unset: the default);
//! `CURLPOW_WGPU_TUNING` overrides the [`Tuning`] (e.g. `fuse=3,workgroup=128`, see
//! `CURLPOW_WGPU_TUNING`); `CURLPOW_GPU_LAUNCH_ITEMS` / `CURLPOW_GPU_LAUNCH_ITERS` force the
//! invocations and transforms per invocation of every dispatch (otherwise adapted, see
//! `src/backend/gpu/sizer.rs`); `CURLPOW_WGPU_CHECKED=1` compiles the kernel with naga's runtime
//! bounds checks and loop counters (for debugging; slower).
//!
//! Software adapters (lavapipe/llvmpipe, device type `Cpu`) are listed only with
//! [`DiscoverOptions::include_software`](crate::search::discovery::DiscoverOptions); there a shader
//! invocation may run at most 65,535 loop iterations (more silently computes garbage), so the
//! transforms per invocation are kept small there (see [`Tuning`]).

mod buffers;
mod context;
mod discover;
mod source;
mod tuning;
mod workgroup;

#[cfg(all(test, feature = "opencl", feature = "wgpu"))]
pub(crate) use discover::nvidia_h200_for_tests;
pub use discover::{discover, discover_wgpu, WgpuDiscovery};
pub(crate) use discover::{discover_for_engine, discover_with};
pub use tuning::{Tuning, LOOP_ITERATIONS_PER_TRANSFORM, SOFTWARE_LOOP_CAP};

use std::time::Instant;

use parking_lot::Mutex;

use crate::backend::gpu::{driver, Geometry, GpuJob, Sizer};
use crate::base::error::Error;
use crate::search::control::{Counters, SearchControl};
use crate::search::device::{Device, DeviceInfo, SearchOutcome};
use crate::search::launch_stats::{LaunchStats, SearchTiming};
use crate::search::nonce::CounterRange;
use crate::search::search_job::SearchJob;
use crate::ternary::curl::STATE_LEN;
use context::{Context, OpenSpec};

/// A wgpu adapter opened for the search.
pub struct WgpuDevice {
    info: DeviceInfo,
    lanes: usize,
    tuning: Tuning,
    counters: Counters,
    ctx: Mutex<Context>,
    /// Launch shape and build facts, refreshed after every search (read without waiting for a
    /// search to end).
    stats: Mutex<LaunchStats>,
}

impl std::fmt::Debug for WgpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuDevice")
            .field("id", &self.info.id)
            .field("name", &self.info.name)
            .field("lanes", &self.lanes)
            .field("tuning", &self.tuning)
            .finish_non_exhaustive()
    }
}

impl WgpuDevice {
    fn open(
        adapter: wgpu::Adapter,
        index: usize,
        force32: bool,
        tuning: Tuning,
        warnings: &mut Vec<String>,
    ) -> Result<Self, Error> {
        let started = Instant::now();
        let ai = adapter.get_info();
        let software = discover::is_software(&ai);
        let int64 = adapter.features().contains(wgpu::Features::SHADER_INT64);
        let word = if !force32 && int64 && tuning.coop == 0 {
            8
        } else {
            4
        };
        let tuning = tuning.clamped(&adapter.limits(), software, word);
        // The workgroup kernel has 32-bit lanes.
        let lanes64 = !force32 && int64 && tuning.coop == 0;
        let lanes = if lanes64 { 64 } else { 32 };
        let geometry = Geometry {
            group: tuning.workgroup_size as usize,
            items_per_state: if tuning.coop > 0 {
                tuning.coop as usize
            } else {
                1
            },
            lanes: lanes as u64,
            wave_items: tuning::wave_invocations(&ai, software, &tuning) as usize,
            max_items: tuning.max_invocations as usize,
            max_per_item: u64::from(tuning.transforms_per_invocation),
            target: tuning.target_dispatch,
            forced_items: None,
            forced_per_item: None,
        }
        .with_env(warnings);
        let info = discover::device_info(index, &ai, lanes, &tuning, started);
        let ctx = Context::open(OpenSpec {
            adapter: &adapter,
            info: &info,
            lanes64,
            tuning,
            geometry,
        })?;
        let info = info.with_detail("open_ms", started.elapsed().as_secs_f64() * 1e3);
        let stats = Self::stats_of(&ctx, &tuning, None);
        Ok(WgpuDevice {
            info,
            lanes,
            tuning,
            counters: Counters::new(1),
            ctx: Mutex::new(ctx),
            stats: Mutex::new(stats),
        })
    }

    fn stats_of(ctx: &Context, tuning: &Tuning, last: Option<SearchTiming>) -> LaunchStats {
        let mut st = ctx.sizer.stats();
        st.build_ms = Some(ctx.build_ms);
        st.first_launch_ms = Some(ctx.first_launch_ms);
        let (bytes, traffic) = discover::bytes_per_nonce(tuning);
        st.bytes_per_nonce = Some(bytes.round());
        st.traffic = Some(traffic.into());
        st.last_search = last;
        st
    }

    /// Force the invocations and transforms per invocation of this device's dispatches, as
    /// `CURLPOW_GPU_LAUNCH_ITEMS` / `CURLPOW_GPU_LAUNCH_ITERS` do (`None` leaves that part
    /// adaptive); the transforms stay within the tuning's maximum (a test hook).
    pub fn force_launch(&self, invocations: Option<usize>, transforms: Option<u64>) {
        let mut ctx = self.ctx.lock();
        let mut g = *ctx.sizer.geometry();
        g.forced_items = invocations;
        g.forced_per_item = transforms;
        ctx.sizer = Sizer::new(g);
        *self.stats.lock() = Self::stats_of(&ctx, &self.tuning, None);
    }

    /// Transforms per invocation of the next full dispatch (its length).
    pub fn dispatch_transforms(&self) -> u64 {
        self.ctx.lock().sizer.per_item()
    }

    /// Nonces per counter (per invocation transform): 64 or 32.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// The tuning in effect (after clamping to the adapter's limits).
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }

    /// Whether this is a software (CPU) adapter such as llvmpipe.
    pub fn is_software(&self) -> bool {
        self.info.software
    }

    /// Invocations of the next full dispatch (adapted to the target dispatch time).
    pub fn dispatch_invocations(&self) -> u32 {
        self.ctx.lock().sizer.items() as u32
    }

    /// The Curl-P-81 transform of each state, computed by the kernel's own transform code (the
    /// `transform_states` entry point): a test hook for the GPU path.
    pub fn transform(&self, states: &[[i8; STATE_LEN]]) -> Result<Vec<[i8; STATE_LEN]>, Error> {
        let flat: Vec<i8> = states.iter().flat_map(|s| s.iter().copied()).collect();
        crate::ternary::trinary::check_trits(&flat)?;
        self.ctx.lock().transform(
            states,
            self.tuning.max_invocations as usize,
            if self.tuning.coop > 0 {
                1
            } else {
                buffers::final_multiplier(self.tuning.fuse)
            },
        )
    }
}

impl WgpuDevice {
    /// A search of either job on the context; a transaction search refreshes the launch stats.
    fn run(
        &self,
        job: GpuJob<'_>,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let mut ctx = self.ctx.lock();
        let (out, timing) = driver::search(&mut *ctx, &self.info, job, range, ctl, &self.counters)?;
        if !job.is_block() {
            *self.stats.lock() = Self::stats_of(&ctx, &self.tuning, Some(timing));
        }
        Ok(out)
    }
}

impl Device for WgpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
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
        // Both kernels' modules carry the block entry point on their own transform.
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
        Some(self.stats.lock().clone())
    }
}
