//! wgpu backend (feature `wgpu`): Vulkan, Metal, DX12.
//!
//! One [`WgpuDevice`] per adapter. Each holds a long-lived context (device, queue, both
//! pipelines, every buffer) built once when it is opened and reused by every search behind a
//! mutex, so one search at a time runs per GPU and nothing is allocated in the search loop (the
//! GPU twin of the CPU's persistent pool, after wgpu's `repeated_compute` example).
//!
//! The kernel (`kernels/curl_pow.wgsl`) gives each invocation whole nonces: its own bit-sliced
//! state of 729 trits, transformed in place in a storage-buffer scratch region. It is compiled
//! for 64-bit lanes (`u64`, where the adapter offers [`wgpu::Features::SHADER_INT64`]) or 32-bit
//! lanes (`u32`; forced by [`DiscoverOptions::force_32bit_lanes`] or `CURLPOW_WGPU_LANES=32`).
//! Invocation `g` of a dispatch with `N` invocations tries counters
//! `range.start + base + j * N + g` for `j` in `0..TRANSFORMS`, so every invocation, loop and
//! dispatch has its own counters (see [`crate::search`] for the nonce layout).
//!
//! Dispatches are sized from their measured duration to run a few milliseconds; the host reads
//! the result back with `map_async`, checks the stop conditions between dispatches and returns
//! the hit for the caller to verify on the CPU.
//!
//! Environment: `CURLPOW_WGPU_LANES=32` forces 32-bit lanes (`64` or unset: the default);
//! `CURLPOW_WGPU_CHECKED=1` compiles the kernel with naga's runtime bounds checks and loop
//! counters (for debugging; slower).
//!
//! Software adapters (lavapipe/llvmpipe, device type `Cpu`) are listed only with
//! [`DiscoverOptions::include_software`]; there a shader invocation may run at most 65,535 loop
//! iterations (more silently computes garbage), so the transforms per invocation are kept at
//! one there (see [`Tuning`]).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::control::{Counters, SearchControl};
use crate::curl::{ROUNDS, STATE_LEN};
use crate::device::{
    Backend, Device, DeviceInfo, DeviceKind, DiscoverOptions, Discovery, SearchOutcome,
};
use crate::error::Error;
use crate::search::{lane_trits, trit_bits, CounterRange, Hit, SearchJob, LANE_TRITS};

/// The kernel source; the host prepends the lane-width prelude.
const KERNEL: &str = include_str!("../../kernels/curl_pow.wgsl");

/// Loop iterations of one transform in the kernel, the larger shape (81 single rounds of 92;
/// fused: 27 passes of 198), plus copy, counter and test; used to stay under llvmpipe's cap of
/// 65,535 per invocation.
pub const LOOP_ITERATIONS_PER_TRANSFORM: u32 = 81 * 92 + 81 + 42 + 243 + 1;
/// llvmpipe's cap on loop iterations per shader invocation.
pub const SOFTWARE_LOOP_CAP: u32 = 65_535;

/// The scratch buffer never grows past this (1 GiB: 92 K invocations of 64-bit lanes), whatever
/// the adapter's limits say.
pub const MAX_SCRATCH_BYTES: u64 = 1 << 30;

/// Bytes of the `Params` uniform.
const PARAMS_SIZE: u64 = 32;
/// Bytes of the `Found` result.
const RESULT_SIZE: u64 = 16;

/// Shape of the kernel and its dispatches. The defaults depend on the adapter (software or
/// GPU); every field can be overridden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Invocations per workgroup (`WORKGROUP_SIZE`).
    pub workgroup_size: u32,
    /// Transforms per invocation per dispatch (`TRANSFORMS`). On software adapters it is
    /// clamped so that it stays under llvmpipe's loop cap.
    pub transforms_per_invocation: u32,
    /// The most invocations one dispatch may have (sizes the scratch buffer).
    pub max_invocations: u32,
    /// Rounds per pass over the state (`FUSE`): 1, 3 or 5 (fused wavefronts; others mean 3).
    pub fuse: u32,
    /// Target wall time of one dispatch (the adaptive sizing aims at it; it bounds the time to
    /// notice a cancel).
    pub target_dispatch: Duration,
}

impl Tuning {
    /// Defaults for a software adapter (llvmpipe): one transform per invocation, a few thousand
    /// invocations, small workgroups (llvmpipe runs one workgroup per thread: 8 invocations
    /// fill one 256-bit SIMD vector and let several workgroups share the cores; measured 0.25 M
    /// nonces/s at 8 against 0.14 M/s at 64 on 2 vCPUs).
    pub fn software() -> Self {
        Tuning {
            workgroup_size: 8,
            transforms_per_invocation: 1,
            max_invocations: 4096,
            fuse: 3,
            target_dispatch: Duration::from_millis(25),
        }
    }

    /// Defaults for a GPU: enough invocations to fill a large GPU, several transforms each, five
    /// fused rounds (a fifth of the memory traffic of single rounds; GPUs have the registers
    /// for the windows). Not yet measured on a real GPU.
    pub fn gpu() -> Self {
        Tuning {
            workgroup_size: 64,
            transforms_per_invocation: 8,
            max_invocations: 1 << 18,
            fuse: 5,
            target_dispatch: Duration::from_millis(8),
        }
    }

    fn for_adapter(software: bool) -> Self {
        if software {
            Self::software()
        } else {
            Self::gpu()
        }
    }
}

/// Find the wgpu adapters (Vulkan, Metal, DX12) and open one device on each, with the default
/// [`Tuning`] for its kind.
///
/// Ids are `"wgpu:N"`, `N` the adapter's index in wgpu's enumeration (stable whether software
/// adapters are included or not); devices come best first (discrete, integrated, virtual GPUs,
/// then others, then software). No adapter gives zero devices, never a panic.
pub fn discover(opts: &DiscoverOptions) -> Discovery {
    let found = discover_wgpu(opts, None);
    Discovery {
        devices: found
            .devices
            .into_iter()
            .map(|d| d as Arc<dyn Device>)
            .collect(),
        warnings: found.warnings,
    }
}

/// What [`discover_wgpu`] found: the concrete devices (for [`WgpuDevice::transform`] and the
/// tuning accessors) and the problems met on the way.
#[derive(Debug, Default)]
pub struct WgpuDiscovery {
    /// Opened devices, best first.
    pub devices: Vec<Arc<WgpuDevice>>,
    /// Adapters that could not be opened, ignored settings.
    pub warnings: Vec<String>,
}

/// [`discover`] returning concrete [`WgpuDevice`]s, with an explicit [`Tuning`] for every
/// device (`None`: the per-kind defaults).
pub fn discover_wgpu(opts: &DiscoverOptions, tuning: Option<Tuning>) -> WgpuDiscovery {
    let mut found = WgpuDiscovery::default();
    let force32 = match lanes_env() {
        Ok(f) => opts.force_32bit_lanes || f,
        Err(e) => {
            found.warnings.push(e);
            opts.force_32bit_lanes
        }
    };
    let backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = pollster::block_on(instance.enumerate_adapters(backends));
    if adapters.is_empty() {
        found
            .warnings
            .push("wgpu: no Vulkan, Metal or DX12 adapter found".into());
    }
    let mut opened: Vec<(u8, Arc<WgpuDevice>)> = Vec::new();
    for (index, adapter) in adapters.into_iter().enumerate() {
        let ai = adapter.get_info();
        let software = ai.device_type == wgpu::DeviceType::Cpu;
        if software && !opts.include_software {
            found.warnings.push(format!(
                "wgpu:{index} ({}) skipped: software adapter (include software devices to use it)",
                ai.name
            ));
            continue;
        }
        let t = tuning.unwrap_or_else(|| Tuning::for_adapter(software));
        match WgpuDevice::open(adapter, index, force32, t) {
            Ok(d) => opened.push((rank(ai.device_type), Arc::new(d))),
            Err(e) => found
                .warnings
                .push(format!("wgpu:{index} ({}): {e}", ai.name)),
        }
    }
    // Stable sort: equal kinds keep wgpu's enumeration order.
    opened.sort_by_key(|(r, _)| *r);
    found.devices = opened.into_iter().map(|(_, d)| d).collect();
    found
}

/// `CURLPOW_WGPU_LANES`: `32` forces 32-bit lanes; `64` or unset keeps the default.
fn lanes_env() -> Result<bool, String> {
    match std::env::var("CURLPOW_WGPU_LANES") {
        Err(_) => Ok(false),
        Ok(v) => match v.trim() {
            "32" => Ok(true),
            "64" | "" => Ok(false),
            other => Err(format!(
                "CURLPOW_WGPU_LANES={other:?} ignored (expected 32 or 64)"
            )),
        },
    }
}

/// Sort key, best first (the high-performance preference).
fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Scratch slots per invocation: the state and the side copies of the fused passes (21 at
/// most, for 5 fused rounds).
pub const SLOTS: usize = STATE_LEN + 21;

/// The multiplier of the kernel's in-place transform with `fuse` rounds per pass (1, 3 or 5):
/// logical trit `i` ends in slot `(final_multiplier(fuse) * i) % 729`. One round multiplies
/// it by 364, a fused pass of three by 91 (= -1/8 mod 729), one of five by 205 (= -1/32); five
/// fused rounds run 15 passes of 5 and 2 of 3.
pub const fn final_multiplier(fuse: u32) -> usize {
    let mut m = 1;
    let mut r = 0;
    while r < ROUNDS {
        let (step, rounds) = match fuse {
            5 if r < 75 => (205, 5),
            3 | 5 => (91, 3),
            _ => (364, 1),
        };
        m = m * step % STATE_LEN;
        r += rounds;
    }
    m
}

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

/// Everything built once per device and reused by every search.
struct Context {
    device: wgpu::Device,
    queue: wgpu::Queue,
    search: wgpu::ComputePipeline,
    transform: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    params: wgpu::Buffer,
    mid_state: wgpu::Buffer,
    scratch: wgpu::Buffer,
    result: wgpu::Buffer,
    /// MAP_READ copy of `result`.
    staging: wgpu::Buffer,
    /// Errors reported by wgpu outside an error scope (validation, out of memory, device lost).
    errors: Arc<Mutex<Vec<String>>>,
    /// Workgroups per dispatch, adapted to the target dispatch time; kept between searches.
    workgroups: u32,
    /// Wall time of the first dispatch (where the driver compiles the pipeline).
    first_dispatch: Option<Duration>,
}

impl WgpuDevice {
    fn open(
        adapter: wgpu::Adapter,
        index: usize,
        force32: bool,
        tuning: Tuning,
    ) -> Result<Self, Error> {
        let id = format!("wgpu:{index}");
        let err = |message: String| Error::Backend {
            backend: "wgpu",
            device: id.clone(),
            message,
        };
        let started = Instant::now();
        let ai = adapter.get_info();
        let software = ai.device_type == wgpu::DeviceType::Cpu;
        let lanes64 = !force32 && adapter.features().contains(wgpu::Features::SHADER_INT64);
        let lanes = if lanes64 { 64 } else { 32 };
        let word = if lanes64 { 8u64 } else { 4 };
        let limits = adapter.limits();

        let mut tuning = tuning;
        tuning.workgroup_size = tuning
            .workgroup_size
            .clamp(1, limits.max_compute_workgroup_size_x)
            .min(limits.max_compute_invocations_per_workgroup);
        tuning.transforms_per_invocation = tuning.transforms_per_invocation.max(1);
        if !matches!(tuning.fuse, 1 | 3 | 5) {
            tuning.fuse = 3;
        }
        if software {
            // Stay well under llvmpipe's loop cap (7 transforms, ~55,000 iterations).
            tuning.transforms_per_invocation = tuning
                .transforms_per_invocation
                .clamp(1, SOFTWARE_LOOP_CAP / LOOP_ITERATIONS_PER_TRANSFORM - 1);
        }
        let slot_bytes = SLOTS as u64 * 2 * word;
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(MAX_SCRATCH_BYTES);
        let wg = tuning.workgroup_size;
        let max_groups = (max_binding / slot_bytes / u64::from(wg))
            .min(u64::from(tuning.max_invocations.max(wg) / wg))
            .min(u64::from(limits.max_compute_workgroups_per_dimension))
            .max(1) as u32;
        tuning.max_invocations = max_groups * wg;
        // The kernel's counter offsets j * stride + g are u32.
        tuning.transforms_per_invocation = tuning
            .transforms_per_invocation
            .min(u32::MAX / tuning.max_invocations);

        let required_features = if lanes64 {
            wgpu::Features::SHADER_INT64
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("curlpow"),
            required_features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| err(format!("request_device: {e}")))?;

        let errors = Arc::new(Mutex::new(Vec::new()));
        {
            let errors = errors.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                errors.lock().push(e.to_string());
            }));
        }
        {
            let errors = errors.clone();
            device.set_device_lost_callback(move |reason, msg| {
                errors
                    .lock()
                    .push(format!("device lost ({reason:?}): {msg}"));
            });
        }

        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let source = format!("{}\n{KERNEL}", prelude(lanes64));
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some("curl_pow.wgsl"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        };
        let module = if std::env::var_os("CURLPOW_WGPU_CHECKED").is_some() {
            device.create_shader_module(desc)
        } else {
            // SAFETY: the kernel indexes `mid_state` below 729 and `scratch` at
            // `slot * stride + g` with slot < 729 and g < stride, and the host never dispatches
            // with a stride above `tuning.max_invocations`, for which `scratch` is sized
            // (729 * stride slots); `result` and `params` are fixed-size structs. Every loop
            // has a constant or uniform bound (81, 91, 42, 81, TRANSFORMS, mwm <= 243), so
            // none runs unbounded. Without the checks naga inserts no index clamping and no
            // loop counters, which llvmpipe would otherwise execute on every trit.
            unsafe {
                device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        };
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("curlpow"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, false),
                storage(3, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("curlpow"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let constants = [
            ("WORKGROUP_SIZE", f64::from(tuning.workgroup_size)),
            ("TRANSFORMS", f64::from(tuning.transforms_per_invocation)),
            ("FUSE", f64::from(tuning.fuse)),
        ];
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        let search = pipeline("search");
        let transform = pipeline("transform_states");

        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        let params = buffer("params", PARAMS_SIZE, U::UNIFORM | U::COPY_DST);
        let mid_state = buffer(
            "mid_state",
            STATE_LEN as u64 * 2 * word,
            U::STORAGE | U::COPY_DST,
        );
        let scratch = buffer(
            "scratch",
            slot_bytes * u64::from(tuning.max_invocations),
            U::STORAGE | U::COPY_DST | U::COPY_SRC,
        );
        let result = buffer(
            "result",
            RESULT_SIZE,
            U::STORAGE | U::COPY_DST | U::COPY_SRC,
        );
        let staging = buffer("staging", RESULT_SIZE, U::MAP_READ | U::COPY_DST);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("curlpow"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: mid_state.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: scratch.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: result.as_entire_binding(),
                },
            ],
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(err(format!("kernel or pipeline creation failed: {e}")));
        }
        if let Some(e) = errors.lock().pop() {
            return Err(err(e));
        }
        let open_time = started.elapsed();

        let backend_api = match ai.backend {
            wgpu::Backend::Vulkan => "vulkan",
            wgpu::Backend::Metal => "metal",
            wgpu::Backend::Dx12 => "dx12",
            _ => "other",
        };
        let kind = match ai.device_type {
            wgpu::DeviceType::DiscreteGpu
            | wgpu::DeviceType::IntegratedGpu
            | wgpu::DeviceType::VirtualGpu => DeviceKind::Gpu,
            wgpu::DeviceType::Cpu => DeviceKind::Cpu,
            wgpu::DeviceType::Other => DeviceKind::Other,
        };
        let mut details = serde_json::Map::new();
        details.insert("driver".into(), ai.driver.clone().into());
        details.insert("driver_info".into(), ai.driver_info.clone().into());
        details.insert(
            "device_type".into(),
            format!("{:?}", ai.device_type).to_ascii_lowercase().into(),
        );
        details.insert("backend_api".into(), backend_api.into());
        details.insert("vendor".into(), format!("0x{:04x}", ai.vendor).into());
        details.insert("device".into(), format!("0x{:04x}", ai.device).into());
        details.insert("software".into(), software.into());
        details.insert("lanes".into(), lanes.into());
        details.insert("lanes_64bit".into(), lanes64.into());
        details.insert("workgroup_size".into(), tuning.workgroup_size.into());
        details.insert("fused_rounds".into(), tuning.fuse.into());
        details.insert(
            "transforms_per_invocation".into(),
            tuning.transforms_per_invocation.into(),
        );
        details.insert(
            "max_dispatch_invocations".into(),
            tuning.max_invocations.into(),
        );
        details.insert(
            "target_dispatch_ms".into(),
            (tuning.target_dispatch.as_secs_f64() * 1e3).into(),
        );
        details.insert("open_ms".into(), (open_time.as_secs_f64() * 1e3).into());
        let info = DeviceInfo {
            id,
            backend: Backend::Wgpu,
            name: ai.name.clone(),
            kind,
            details,
        };
        Ok(WgpuDevice {
            info,
            lanes,
            tuning,
            counters: Counters::new(1),
            ctx: Mutex::new(Context {
                device,
                queue,
                search,
                transform,
                bind_group,
                params,
                mid_state,
                scratch,
                result,
                staging,
                errors,
                workgroups: 1,
                first_dispatch: None,
            }),
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
        self.info.kind == DeviceKind::Cpu
    }

    /// Wall time of the first dispatch (where drivers compile the pipeline), once one ran.
    pub fn first_dispatch_time(&self) -> Option<Duration> {
        self.ctx.lock().first_dispatch
    }

    /// Invocations of the current dispatch size (adapted to the target dispatch time).
    pub fn dispatch_invocations(&self) -> u32 {
        self.ctx.lock().workgroups * self.tuning.workgroup_size
    }

    fn backend_err(&self, message: impl Into<String>) -> Error {
        Error::Backend {
            backend: "wgpu",
            device: self.info.id.clone(),
            message: message.into(),
        }
    }

    /// The Curl-P-81 transform of each state, computed by the kernel's own transform code (the
    /// `transform_states` entry point): a test hook for the GPU path.
    pub fn transform(&self, states: &[[i8; STATE_LEN]]) -> Result<Vec<[i8; STATE_LEN]>, Error> {
        for s in states {
            if let Some((index, &value)) =
                s.iter().enumerate().find(|(_, &t)| !(-1..=1).contains(&t))
            {
                return Err(Error::NotATrit { index, value });
            }
        }
        let mut out = Vec::with_capacity(states.len());
        let ctx = self.ctx.lock();
        let lanes = self.lanes;
        let word = lanes / 8;
        let per_chunk = self.tuning.max_invocations as usize * lanes;
        let final_m = final_multiplier(self.tuning.fuse);
        for chunk in states.chunks(per_chunk) {
            let n = chunk.len().div_ceil(lanes);
            // Bit-slice: state k of the chunk is lane k % lanes of invocation k / lanes.
            let mut words = vec![0u64; STATE_LEN * 2 * n];
            for (k, s) in chunk.iter().enumerate() {
                let (g, lane) = (k / lanes, k % lanes);
                for (i, &t) in s.iter().enumerate() {
                    let (lo, hi) = trit_bits(t);
                    let at = (i * n + g) * 2;
                    words[at] |= u64::from(lo) << lane;
                    words[at + 1] |= u64::from(hi) << lane;
                }
            }
            // Unused lanes of the last invocation hold zero trits (never (0, 0)).
            for k in chunk.len()..n * lanes {
                let (g, lane) = (k / lanes, k % lanes);
                for i in 0..STATE_LEN {
                    let at = (i * n + g) * 2;
                    words[at] |= 1 << lane;
                    words[at + 1] |= 1 << lane;
                }
            }
            let bytes = to_bytes(&words, word);
            ctx.queue.write_buffer(&ctx.scratch, 0, &bytes);
            ctx.queue
                .write_buffer(&ctx.params, 0, &params_bytes(0, n as u32, 0, 0));
            let readback = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("transform readback"),
                size: bytes.len() as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                pass.set_pipeline(&ctx.transform);
                pass.set_bind_group(0, &ctx.bind_group, &[]);
                pass.dispatch_workgroups((n as u32).div_ceil(self.tuning.workgroup_size), 1, 1);
            }
            enc.copy_buffer_to_buffer(&ctx.scratch, 0, &readback, 0, bytes.len() as u64);
            let data = self.submit_and_read(&ctx, enc, &readback)?;
            let got = from_bytes(&data, word);
            for (k, _) in chunk.iter().enumerate() {
                let (g, lane) = (k / lanes, k % lanes);
                let mut s = [0i8; STATE_LEN];
                for (i, t) in s.iter_mut().enumerate() {
                    let slot = final_m * i % STATE_LEN;
                    let at = (slot * n + g) * 2;
                    let lo = (got[at] >> lane) & 1 == 1;
                    let hi = (got[at + 1] >> lane) & 1 == 1;
                    *t = match (lo, hi) {
                        (true, false) => -1,
                        (true, true) => 0,
                        (false, true) => 1,
                        (false, false) => {
                            return Err(self.backend_err(format!(
                                "transform returned an invalid trit encoding at state {k}, trit {i}"
                            )))
                        }
                    };
                }
                out.push(s);
            }
        }
        Ok(out)
    }

    /// Submit `enc`, wait for it, and return the contents of the MAP_READ buffer `buf`.
    fn submit_and_read(
        &self,
        ctx: &Context,
        enc: wgpu::CommandEncoder,
        buf: &wgpu::Buffer,
    ) -> Result<Vec<u8>, Error> {
        let index = ctx.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, .., move |r| {
            // The receiver outlives the poll below; a failed send only means it is gone.
            let _ = tx.send(r);
        });
        ctx.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(Duration::from_secs(600)),
            })
            .map_err(|e| self.backend_err(format!("waiting for the dispatch: {e}")))?;
        if let Some(e) = ctx.errors.lock().pop() {
            return Err(self.backend_err(e));
        }
        match rx.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.backend_err(format!("map_async: {e}"))),
            Err(_) => return Err(self.backend_err("map_async did not complete after the poll")),
        }
        let data = buf
            .get_mapped_range(..)
            .map_err(|e| self.backend_err(format!("mapping the readback buffer: {e}")))?
            .to_vec();
        buf.unmap();
        Ok(data)
    }

    /// The bit-sliced mid-state: every trit broadcast to all lanes, lane trits 162..168 set to
    /// each lane's number, counter trits zero (the kernel writes them).
    fn mid_state_bytes(&self, job: &SearchJob) -> Vec<u8> {
        let mask = if self.lanes == 64 {
            !0u64
        } else {
            u64::from(u32::MAX)
        };
        let mut words = vec![0u64; STATE_LEN * 2];
        for (i, &t) in job.state().iter().enumerate() {
            let (lo, hi) = trit_bits(t);
            words[2 * i] = if lo { mask } else { 0 };
            words[2 * i + 1] = if hi { mask } else { 0 };
        }
        for i in LANE_TRITS {
            words[2 * i] = 0;
            words[2 * i + 1] = 0;
        }
        for lane in 0..self.lanes {
            for (j, &t) in lane_trits(lane).iter().enumerate() {
                let (lo, hi) = trit_bits(t);
                let i = LANE_TRITS.start + j;
                words[2 * i] |= u64::from(lo) << lane;
                words[2 * i + 1] |= u64::from(hi) << lane;
            }
        }
        to_bytes(&words, self.lanes / 8)
    }
}

/// The next dispatch size: scale `groups` by target / measured time, at most doubling or
/// halving per step (one slow dispatch, e.g. a preempted one, must not collapse the size).
fn next_workgroups(groups: u32, took: Duration, target: Duration, max_groups: u32) -> u32 {
    let ratio = (target.as_secs_f64() / took.as_secs_f64().max(1e-6)).clamp(0.5, 2.0);
    ((f64::from(groups) * ratio).round() as u32).clamp(1, max_groups.max(1))
}

/// The lane-width prelude of the kernel.
fn prelude(lanes64: bool) -> &'static str {
    if lanes64 {
        "alias W = u64;\n\
         fn lowest_lane(m: W) -> u32 {\n\
             let lo = u32(m & W(0xffffffffu));\n\
             if lo != 0u { return countTrailingZeros(lo); }\n\
             return 32u + countTrailingZeros(u32(m >> 32u));\n\
         }\n"
    } else {
        "alias W = u32;\n\
         fn lowest_lane(m: W) -> u32 { return countTrailingZeros(m); }\n"
    }
}

/// The `Params` uniform.
fn params_bytes(base: u64, stride: u32, remaining: u32, mwm: u32) -> [u8; PARAMS_SIZE as usize] {
    let v: [u32; 8] = [
        base as u32,
        (base >> 32) as u32,
        stride,
        remaining,
        mwm,
        0,
        0,
        0,
    ];
    let mut out = [0u8; PARAMS_SIZE as usize];
    out.copy_from_slice(bytemuck::cast_slice(&v));
    out
}

/// Words as little-endian bytes of `word` (4 or 8) bytes each.
fn to_bytes(words: &[u64], word: usize) -> Vec<u8> {
    if word == 8 {
        bytemuck::cast_slice(words).to_vec()
    } else {
        let v: Vec<u32> = words.iter().map(|&w| w as u32).collect();
        bytemuck::cast_slice(&v).to_vec()
    }
}

/// The inverse of [`to_bytes`].
fn from_bytes(bytes: &[u8], word: usize) -> Vec<u64> {
    bytes
        .chunks_exact(word)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..word].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
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
        let wg = self.tuning.workgroup_size;
        let per_inv = u64::from(self.tuning.transforms_per_invocation);
        let max_groups = self.tuning.max_invocations / wg;
        let lanes = self.lanes as u64;
        ctx.queue
            .write_buffer(&ctx.mid_state, 0, &self.mid_state_bytes(job));
        ctx.queue
            .write_buffer(&ctx.result, 0, &[0u8; RESULT_SIZE as usize]);
        let mut done = 0u64; // counters of `range` handed out so far
        let mut nonces = 0u64;
        let mut hit = None;
        while done < range.len && !ctl.should_stop() {
            let groups = ctx.workgroups.clamp(1, max_groups);
            let stride = groups * wg;
            let left = range.len - done;
            let counters = (u64::from(stride) * per_inv).min(left);
            ctx.queue.write_buffer(
                &ctx.params,
                0,
                &params_bytes(
                    range.start.wrapping_add(done),
                    stride,
                    left.min(u64::from(u32::MAX)) as u32,
                    job.mwm() as u32,
                ),
            );
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                pass.set_pipeline(&ctx.search);
                pass.set_bind_group(0, &ctx.bind_group, &[]);
                pass.dispatch_workgroups(groups, 1, 1);
            }
            enc.copy_buffer_to_buffer(&ctx.result, 0, &ctx.staging, 0, RESULT_SIZE);
            let t0 = Instant::now();
            let data = self.submit_and_read(&ctx, enc, &ctx.staging)?;
            let took = t0.elapsed();
            if ctx.first_dispatch.is_none() {
                ctx.first_dispatch = Some(took);
            } else {
                ctx.workgroups =
                    next_workgroups(groups, took, self.tuning.target_dispatch, max_groups);
            }
            done += counters;
            nonces += counters * lanes;
            self.counters.add(0, counters * lanes);
            let r: [u32; 4] = bytemuck::pod_read_unaligned(&data[..RESULT_SIZE as usize]);
            if r[0] != 0 {
                hit = Some(Hit {
                    counter: u64::from(r[2]) | (u64::from(r[3]) << 32),
                    lane: r[1] as usize,
                });
                break;
            }
        }
        Ok(SearchOutcome { hit, nonces })
    }

    fn nonces_tried(&self) -> u64 {
        self.counters.sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curl::HASH_LEN;

    #[test]
    fn final_multiplier_is_the_walk() {
        // One round multiplies the slot multiplier by 364, a fused pass of three by
        // alpha_0 = -1/8 = 91; every hash trit must end in a slot of its own.
        let mut m = 1usize;
        for _ in 0..ROUNDS {
            m = m * 364 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(1));
        assert_eq!(91 * 8 % STATE_LEN, STATE_LEN - 1, "91 = -1/8 mod 729");
        let mut m = 1usize;
        for _ in 0..ROUNDS / 3 {
            m = m * 91 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(3));
        assert_eq!(205 * 32 % STATE_LEN, STATE_LEN - 1, "205 = -1/32 mod 729");
        let mut m = 1usize;
        for _ in 0..15 {
            m = m * 205 % STATE_LEN;
        }
        for _ in 0..2 {
            m = m * 91 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(5));
        for fuse in [1, 3, 5] {
            let fm = final_multiplier(fuse);
            let mut slots: Vec<usize> = (0..HASH_LEN).map(|i| fm * i % STATE_LEN).collect();
            slots.sort_unstable();
            slots.dedup();
            assert_eq!(slots.len(), HASH_LEN);
        }
    }

    #[test]
    fn dispatch_size_follows_the_target() {
        let ms = Duration::from_millis;
        assert_eq!(next_workgroups(10, ms(2), ms(8), 100), 20);
        assert_eq!(next_workgroups(10, ms(16), ms(8), 100), 5);
        assert_eq!(next_workgroups(10, ms(10), ms(8), 100), 8);
        assert_eq!(next_workgroups(80, ms(1), ms(8), 100), 100);
        assert_eq!(next_workgroups(1, ms(100), ms(8), 100), 1);
    }

    #[test]
    fn params_layout() {
        let b = params_bytes(0x1_0000_0002, 64, 7, 9);
        let v: &[u32] = bytemuck::cast_slice(&b);
        assert_eq!(&v[..5], &[2, 1, 64, 7, 9]);
    }

    #[test]
    fn word_bytes_round_trip() {
        let w = [1u64, 0xffff_ffff, 0x8000_0001];
        assert_eq!(from_bytes(&to_bytes(&w, 4), 4), w);
        let w = [u64::MAX, 3];
        assert_eq!(from_bytes(&to_bytes(&w, 8), 8), w);
    }

    #[test]
    fn loop_budget_fits_software_cap() {
        let t = Tuning::software().transforms_per_invocation;
        assert!(t * LOOP_ITERATIONS_PER_TRANSFORM + t < SOFTWARE_LOOP_CAP);
    }
}
