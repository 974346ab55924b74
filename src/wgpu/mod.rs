//! wgpu backend (feature `wgpu`): Vulkan, Metal, DX12.
//!
//! Files: `discover.rs` (adapters and their typed facts), `tuning.rs` (the kernel's shape and
//! the clamps that keep it inside an adapter's limits), `context.rs` (the long-lived device
//! context and the backend's `Launcher`), `layout.rs` (the bytes the
//! host and the kernel exchange); the search loop itself is the GPU driver shared with OpenCL
//! (`src/gpu/driver.rs`).
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
//! own counters (see [`crate::search`] for the nonce layout).
//!
//! Environment: `CURLPOW_WGPU_LANES=32` forces 32-bit lanes (`64` or unset: the default);
//! `CURLPOW_WGPU_CHECKED=1` compiles the kernel with naga's runtime bounds checks and loop
//! counters (for debugging; slower).
//!
//! Software adapters (lavapipe/llvmpipe, device type `Cpu`) are listed only with
//! [`DiscoverOptions::include_software`](crate::device::DiscoverOptions); there a shader
//! invocation may run at most 65,535 loop iterations (more silently computes garbage), so the
//! transforms per invocation are kept small there (see [`Tuning`]).

mod context;
mod discover;
mod layout;
mod tuning;

#[cfg(all(test, feature = "opencl", feature = "wgpu"))]
pub(crate) use discover::nvidia_h200_for_tests;
pub use discover::{discover, discover_wgpu, WgpuDiscovery};
pub use tuning::{Tuning, LOOP_ITERATIONS_PER_TRANSFORM, MAX_SCRATCH_BYTES, SOFTWARE_LOOP_CAP};

use std::time::Instant;

use parking_lot::Mutex;

use crate::control::{Counters, SearchControl};
use crate::curl::STATE_LEN;
use crate::device::{Device, DeviceInfo, SearchOutcome};
use crate::error::Error;
use crate::gpu::{driver, Geometry};
use crate::search::{CounterRange, SearchJob};
use context::{Context, OpenSpec};

/// A wgpu adapter opened for the search.
pub struct WgpuDevice {
    info: DeviceInfo,
    lanes: usize,
    tuning: Tuning,
    counters: Counters,
    ctx: Mutex<Context>,
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
    ) -> Result<Self, Error> {
        let started = Instant::now();
        let ai = adapter.get_info();
        let software = discover::is_software(&ai);
        let lanes64 = !force32 && adapter.features().contains(wgpu::Features::SHADER_INT64);
        let lanes = if lanes64 { 64 } else { 32 };
        let tuning = tuning.clamped(&adapter.limits(), software, lanes as u64 / 8);
        let geometry = Geometry {
            group: tuning.workgroup_size as usize,
            per_item: u64::from(tuning.transforms_per_invocation),
            lanes: lanes as u64,
            initial_items: tuning.workgroup_size as usize,
            max_items: tuning.max_invocations as usize,
            target: tuning.target_dispatch,
        };
        let info = discover::device_info(index, &ai, lanes, &tuning, started);
        let ctx = Context::open(OpenSpec {
            adapter: &adapter,
            info: &info,
            lanes64,
            tuning,
            geometry,
        })?;
        let info = info.with_detail("open_ms", started.elapsed().as_secs_f64() * 1e3);
        Ok(WgpuDevice {
            info,
            lanes,
            tuning,
            counters: Counters::new(1),
            ctx: Mutex::new(ctx),
        })
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
        crate::trinary::check_trits(&flat)?;
        self.ctx.lock().transform(
            states,
            self.tuning.max_invocations as usize,
            layout::final_multiplier(self.tuning.fuse),
        )
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
        let mut ctx = self.ctx.lock();
        let mut sizer = ctx.sizer.clone();
        let r = driver::search(
            &mut *ctx,
            &mut sizer,
            &self.info,
            job,
            range,
            ctl,
            &self.counters,
        );
        ctx.sizer = sizer;
        r
    }

    fn nonces_tried(&self) -> u64 {
        self.counters.sum()
    }
}
