//! The long-lived wgpu context of one adapter — device, queue, both pipelines, every buffer —
//! built once when the adapter is opened and reused by every search (the GPU twin of the CPU's
//! persistent pool, after wgpu's `repeated_compute` example), and its
//! `Launcher` (`src/backend/gpu/launcher.rs`), the backend's whole share of the search loop.
//!
//! Dispatches are pipelined: each of the [`IN_FLIGHT`] slots has its own parameters, result
//! and MAP_READ staging buffer (and bind group); a slot's submission clears its result,
//! dispatches, copies the result to staging and starts `map_async` at once, and `wait` polls
//! only until that submission is done, while the next slot's dispatch is already queued (the
//! shared scratch buffer orders the dispatches on the device).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::buffers::{self, params_bytes, FLAG_SIZE, PARAMS_SIZE, RESULT_SIZE};
use super::source;
use super::tuning::Tuning;
use super::workgroup;
use crate::backend::gpu::discover::device_error;
use crate::backend::gpu::{
    Geometry, GpuJob, Launch, LaunchResult, Launcher, ResultWords, Sizer, IN_FLIGHT,
};
use crate::base::error::Error;
use crate::search::device::DeviceInfo;
use crate::ternary::curl::STATE_LEN;

/// One dispatch slot.
struct LaunchSlot {
    params: wgpu::Buffer,
    result: wgpu::Buffer,
    /// MAP_READ copy of `result`.
    staging: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The submission in flight and the channel its `map_async` answers on.
    pending: Option<(
        wgpu::SubmissionIndex,
        mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    )>,
}

/// Everything built once per device and reused by every search.
pub(super) struct Context {
    device: wgpu::Device,
    queue: wgpu::Queue,
    search: wgpu::ComputePipeline,
    transform: wgpu::ComputePipeline,
    mid_state: wgpu::Buffer,
    scratch: wgpu::Buffer,
    /// The search's found flag, shared by every slot.
    flag: wgpu::Buffer,
    slots: Vec<LaunchSlot>,
    /// Errors reported by wgpu outside an error scope (validation, out of memory, device lost).
    errors: Arc<Mutex<Vec<String>>>,
    lanes: u32,
    /// Invocations per state: 1, or the workgroup kernel's cooperating invocations.
    per_state: u32,
    /// States per workgroup.
    states_per_group: u32,
    mwm: u32,
    /// The launch sizes, adapted as the device works; kept between searches.
    pub(super) sizer: Sizer,
    /// What the block PoW pipeline is built from at the first block search, the pipeline, and
    /// whether the dispatches since the last `begin` run it.
    module: wgpu::ShaderModule,
    pipeline_layout: wgpu::PipelineLayout,
    constants: Vec<(&'static str, f64)>,
    block: Option<wgpu::ComputePipeline>,
    block_active: bool,
    /// Milliseconds to build the shader module and both pipelines, and of the first dispatch.
    pub(super) build_ms: f64,
    pub(super) first_launch_ms: f64,
    /// The info errors are reported under.
    info: DeviceInfo,
}

/// The adapter-dependent facts [`Context::open`] needs.
pub(super) struct OpenSpec<'a> {
    pub adapter: &'a wgpu::Adapter,
    pub info: &'a DeviceInfo,
    pub lanes64: bool,
    pub tuning: Tuning,
    pub geometry: Geometry,
}

impl Context {
    pub(super) fn open(spec: OpenSpec<'_>) -> Result<Context, Error> {
        let OpenSpec {
            adapter,
            info,
            lanes64,
            tuning,
            geometry,
        } = spec;
        let err = |m: String| device_error(info, m);
        let word = if lanes64 { 8u64 } else { 4 };
        let required_features = if lanes64 {
            wgpu::Features::SHADER_INT64
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("curlpow"),
            required_features,
            required_limits: adapter.limits(),
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

        let build_started = Instant::now();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Both kernels' modules carry both search entry points (`search`, `block_search`) on
        // their one transform (src/backend/wgpu/source.rs).
        let (source, label) = if tuning.coop > 0 {
            (
                source::workgroup_module(tuning.coop),
                "curl_pow_workgroup.wgsl",
            )
        } else {
            (source::storage_module(lanes64), "curl_pow.wgsl")
        };
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        };
        let module = if crate::base::env::is_set(crate::base::env::WGPU_CHECKED) {
            device.create_shader_module(desc)
        } else {
            // SAFETY: the storage-buffer kernel indexes `mid_state` below 729 and `scratch` at
            // `slot * stride + g` with slot < SLOTS and g < stride (both counter writers write
            // trits below 240 through `set_trit`), and the host never dispatches with a stride
            // above `tuning.max_invocations`, for which `scratch` is sized (SLOTS * stride
            // slots). The workgroup kernel indexes its workgroup arrays below COOP_S * WORDS
            // (every read at most element P C + 6, padded, of its own state; the counter
            // writers write trits below 240 of their own state through `set_trit`) and
            // `scratch` (the transform test only) at `z * stride + g` with z < 729 and
            // g < stride states, for which it is sized. `result` and `params` are
            // fixed-size structs. Every loop has a constant or uniform bound (81, 91, 42, 27,
            // CHUNK, TRANSFORMS, mwm <= 243), so none runs unbounded. Without the checks naga
            // inserts no index clamping and no loop counters, which llvmpipe would otherwise
            // execute on every trit.
            unsafe {
                device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        };
        let buffer_entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        use wgpu::BufferBindingType as B;
        let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("curlpow"),
            entries: &[
                buffer_entry(0, B::Uniform),
                buffer_entry(1, B::Storage { read_only: true }),
                buffer_entry(2, B::Storage { read_only: false }),
                buffer_entry(3, B::Storage { read_only: false }),
                buffer_entry(4, B::Storage { read_only: false }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("curlpow"),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let mut constants = vec![
            ("WORKGROUP_SIZE", f64::from(tuning.workgroup_size)),
            ("TRANSFORMS", f64::from(tuning.transforms_per_invocation)),
        ];
        if tuning.coop == 0 {
            constants.push(("FUSE", f64::from(tuning.fuse)));
        }
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
        let build_ms = build_started.elapsed().as_secs_f64() * 1e3;

        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        let mid_state = buffer(
            "mid_state",
            STATE_LEN as u64 * 2 * word,
            U::STORAGE | U::COPY_DST,
        );
        let scratch = buffer(
            "scratch",
            tuning.scratch_bytes_per_invocation(word) * u64::from(tuning.max_invocations),
            U::STORAGE | U::COPY_DST | U::COPY_SRC,
        );
        let flag = buffer("flag", FLAG_SIZE, U::STORAGE | U::COPY_DST);
        fn entry(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            }
        }
        let slots = (0..IN_FLIGHT)
            .map(|_| {
                let params = buffer("params", PARAMS_SIZE, U::UNIFORM | U::COPY_DST);
                let result = buffer(
                    "result",
                    RESULT_SIZE,
                    U::STORAGE | U::COPY_DST | U::COPY_SRC,
                );
                let staging = buffer("staging", RESULT_SIZE, U::MAP_READ | U::COPY_DST);
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("curlpow"),
                    layout: &bind_layout,
                    entries: &[
                        entry(0, &params),
                        entry(1, &mid_state),
                        entry(2, &scratch),
                        entry(3, &result),
                        entry(4, &flag),
                    ],
                });
                LaunchSlot {
                    params,
                    result,
                    staging,
                    bind_group,
                    pending: None,
                }
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(err(format!("kernel or pipeline creation failed: {e}")));
        }
        if let Some(e) = errors.lock().pop() {
            return Err(err(e));
        }
        let mut ctx = Context {
            device,
            queue,
            search,
            transform,
            mid_state,
            scratch,
            flag,
            slots,
            errors,
            lanes: if lanes64 { 64 } else { 32 },
            per_state: tuning.coop.max(1),
            states_per_group: if tuning.coop > 0 {
                workgroup::states_per_group(tuning.coop)
            } else {
                tuning.workgroup_size.max(1)
            },
            mwm: 0,
            sizer: Sizer::new(geometry),
            module,
            pipeline_layout,
            constants,
            block: None,
            block_active: false,
            build_ms,
            first_launch_ms: 0.0,
            info: info.clone(),
        };
        let t = Instant::now();
        ctx.warm_up()?;
        ctx.first_launch_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(ctx)
    }

    /// One empty dispatch (no counters), so that drivers that compile pipelines lazily do it
    /// here, not in the first search.
    fn warm_up(&mut self) -> Result<(), Error> {
        let g = self.sizer.geometry().group;
        let empty = Launch {
            base: 0,
            items: g,
            per_item: 1,
            limit: 0,
        };
        self.submit(0, &empty)?;
        self.wait(0).map(|_| ())
    }

    /// Wait for every submission, and unmap what a failed search left mapped or pending.
    fn idle(&mut self) -> Result<(), Error> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(Duration::from_secs(600)),
            })
            .map_err(|e| self.err(format!("waiting for the device: {e}")))?;
        for slot in &mut self.slots {
            if let Some((_, rx)) = slot.pending.take() {
                if matches!(rx.try_recv(), Ok(Ok(()))) {
                    slot.staging.unmap();
                }
            }
        }
        Ok(())
    }

    fn err(&self, message: impl std::fmt::Display) -> Error {
        device_error(&self.info, message)
    }

    /// Wait for submission `index` and for the mapping of its read-back buffer, which `rx`
    /// reports; an error the device raised meanwhile comes first.
    fn wait_mapped(
        &self,
        index: wgpu::SubmissionIndex,
        rx: &mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<(), Error> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(Duration::from_secs(600)),
            })
            .map_err(|e| self.err(format!("waiting for the dispatch: {e}")))?;
        if let Some(e) = self.errors.lock().pop() {
            return Err(self.err(e));
        }
        match rx.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.err(format!("map_async: {e}"))),
            Err(_) => return Err(self.err("map_async did not complete after the poll")),
        }
        Ok(())
    }

    /// Submit `enc`, wait for it, and return the contents of the MAP_READ buffer `buf`.
    fn submit_and_read(
        &self,
        enc: wgpu::CommandEncoder,
        buf: &wgpu::Buffer,
    ) -> Result<Vec<u8>, Error> {
        let index = self.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, .., move |r| {
            // The receiver outlives the poll below; a failed send only means it is gone.
            let _ = tx.send(r);
        });
        self.wait_mapped(index, &rx)?;
        let data = buf
            .get_mapped_range(..)
            .map_err(|e| self.err(format!("mapping the readback buffer: {e}")))?
            .to_vec();
        buf.unmap();
        Ok(data)
    }

    /// The kernel's own transform of each state (the `transform_states` entry point), `per`
    /// states per dispatch at most: a test hook for the GPU path.
    pub(super) fn transform(
        &self,
        states: &[[i8; STATE_LEN]],
        max_invocations: usize,
        final_m: usize,
    ) -> Result<Vec<[i8; STATE_LEN]>, Error> {
        let lanes = self.lanes as usize;
        let word = lanes / 8;
        let per_group = self.states_per_group;
        let max_states = (max_invocations / self.per_state as usize).max(1);
        let mut out = Vec::with_capacity(states.len());
        for chunk in states.chunks(max_states * lanes) {
            let n = chunk.len().div_ceil(lanes);
            // State k of the chunk is lane k % lanes of invocation k / lanes: with `n` words per
            // trit, that is bit k % lanes of word k / lanes.
            let planes = crate::search::bitslice::Planes::from_states(chunk, n, self.lanes);
            let bytes = buffers::to_bytes(&buffers::interleave(&planes), word);
            let slot = &self.slots[0];
            self.queue.write_buffer(&self.scratch, 0, &bytes);
            self.queue
                .write_buffer(&slot.params, 0, &params_bytes(0, n as u32, 0, 0, 0));
            let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("transform readback"),
                size: bytes.len() as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                pass.set_pipeline(&self.transform);
                pass.set_bind_group(0, &slot.bind_group, &[]);
                pass.dispatch_workgroups((n as u32).div_ceil(per_group), 1, 1);
            }
            enc.copy_buffer_to_buffer(&self.scratch, 0, &readback, 0, bytes.len() as u64);
            let data = self.submit_and_read(enc, &readback)?;
            let got =
                buffers::deinterleave(&buffers::from_bytes(&data, word), STATE_LEN, n, self.lanes);
            // Logical trit i sits in slot final_m * i mod 729: undo the permutation.
            let mut natural = crate::search::bitslice::Planes::zeros(STATE_LEN, n, self.lanes);
            for i in 0..STATE_LEN {
                let slot = final_m * i % STATE_LEN;
                let (lo, hi) = got.words_of(slot);
                natural.lo[i * n..(i + 1) * n].copy_from_slice(lo);
                natural.hi[i * n..(i + 1) * n].copy_from_slice(hi);
            }
            out.extend(natural.to_states::<STATE_LEN>(chunk.len()).map_err(|b| {
                self.err(format!("transform returned an invalid trit encoding: {b}"))
            })?);
        }
        Ok(out)
    }
}

impl Context {
    /// Build the block PoW pipeline if it is not built yet.
    fn block_pipeline(&mut self) -> Result<(), Error> {
        if self.block.is_some() {
            return Ok(());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("block_search"),
                layout: Some(&self.pipeline_layout),
                module: &self.module,
                entry_point: Some("block_search"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &self.constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(self.err(format!("block pipeline creation failed: {e}")));
        }
        self.block = Some(pipeline);
        Ok(())
    }
}

impl Launcher for Context {
    fn begin(&mut self, job: GpuJob<'_>) -> Result<(), Error> {
        self.idle()?;
        self.block_active = false;
        let mid = match job {
            GpuJob::Transaction(j) => buffers::mid_state_bytes(j, self.lanes),
            GpuJob::Block(j) => {
                self.block_pipeline()?;
                buffers::block_mid_state_bytes(j, self.lanes)
            }
        };
        let zeros = job.zeros();
        self.mwm = u32::try_from(zeros).map_err(|_| Error::InvalidMwm(zeros))?;
        self.queue.write_buffer(&self.mid_state, 0, &mid);
        self.queue
            .write_buffer(&self.flag, 0, &[0u8; FLAG_SIZE as usize]);
        self.block_active = job.is_block();
        Ok(())
    }

    fn sizer(&mut self, _: GpuJob<'_>) -> &mut Sizer {
        // The block entry point has the search's launch shape: it shares the sizes.
        &mut self.sizer
    }

    fn submit(&mut self, slot: usize, l: &Launch) -> Result<(), Error> {
        // Counter offsets are per state: `items` work-items hold items / per_state states.
        let stride = u32::try_from(l.items / self.per_state as usize)
            .map_err(|_| self.err("launch too large"))?;
        let remaining = u32::try_from(l.limit).map_err(|_| self.err("launch too long"))?;
        let transforms = u32::try_from(l.per_item).map_err(|_| self.err("launch too long"))?;
        // The kernels compute counter offsets j * stride + g (j < transforms, g below the
        // dispatch's states, a workgroup's states past the stride included) in 32 bits.
        let states = u64::from(stride.div_ceil(self.states_per_group).max(1))
            * u64::from(self.states_per_group);
        if u64::from(transforms) * states > u64::from(u32::MAX) {
            return Err(self.err(format!(
                "launch of {transforms} transforms on {states} states passes 2^32 counter offsets"
            )));
        }
        let s = &mut self.slots[slot];
        // Written before this submission runs: the queue applies buffer writes at the next
        // submit, in order.
        self.queue.write_buffer(
            &s.params,
            0,
            &params_bytes(l.base, stride, remaining, self.mwm, transforms),
        );
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        enc.clear_buffer(&s.result, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            match (&self.block, self.block_active) {
                (Some(block), true) => pass.set_pipeline(block),
                _ => pass.set_pipeline(&self.search),
            }
            pass.set_bind_group(0, &s.bind_group, &[]);
            pass.dispatch_workgroups(stride.div_ceil(self.states_per_group).max(1), 1, 1);
        }
        enc.copy_buffer_to_buffer(&s.result, 0, &s.staging, 0, RESULT_SIZE);
        let index = self.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        s.staging.map_async(wgpu::MapMode::Read, .., move |r| {
            // The receiver lives in the slot until `wait` reads it; a failed send only means
            // the context is gone.
            let _ = tx.send(r);
        });
        s.pending = Some((index, rx));
        Ok(())
    }

    fn wait(&mut self, slot: usize) -> Result<LaunchResult, Error> {
        let Some((index, rx)) = self.slots[slot].pending.take() else {
            return Err(self.err("waited on a slot with no dispatch"));
        };
        self.wait_mapped(index, &rx)?;
        let staging = &self.slots[slot].staging;
        let words: ResultWords = {
            let data = staging
                .get_mapped_range(..)
                .map_err(|e| self.err(format!("mapping the result: {e}")))?;
            bytemuck::pod_read_unaligned(&data[..RESULT_SIZE as usize])
        };
        staging.unmap();
        Ok(LaunchResult {
            words,
            ..LaunchResult::default()
        })
    }
}
