//! The long-lived OpenCL context of one device: context, program, profiling queue, kernel, the
//! found flag and [`IN_FLIGHT`] result slots, built once (when the device is prepared or first
//! used) and reused by every search; and its `Launcher` (`src/backend/gpu/launcher.rs`), the backend's
//! whole share of the search loop.
//!
//! A launch is three commands on the in-order queue: fill the slot's result buffer with zeros,
//! run `curl_search`, read the result into the slot's host words without blocking. The host
//! waits only on the read's event, while the next launch is already queued behind it.

use std::time::Instant;

use ocl::enums::{KernelWorkGroupInfo, KernelWorkGroupInfoResult as Kwg, ProfilingInfo};

use crate::backend::gpu::discover::device_error;
use crate::backend::gpu::{
    Geometry, GpuJob, Launch, LaunchResult, Launcher, ResultWords, Sizer, IN_FLIGHT, RESULT_WORDS,
};
use crate::base::error::Error;
use crate::search::device::DeviceInfo;
use crate::ternary::curl::STATE_LEN;

use super::build_log;
use super::kernel_config::KernelConfig;
use super::occupancy::{self, Facts};
use super::{KERNEL_SOURCE, PROBE_LOCK};

/// One result slot: its device buffer and the host words a non-blocking read fills.
struct LaunchSlot {
    res: ocl::Buffer<u32>,
    /// Written by the driver between the read's enqueue and its event's completion; boxed so
    /// its address never moves.
    host: Box<ResultWords>,
    kernel_done: Option<ocl::Event>,
    read_done: Option<ocl::Event>,
}

/// How the program was built, for [`LaunchStats`](crate::device::LaunchStats).
#[derive(Debug, Clone, Default)]
pub(super) struct BuildFacts {
    pub build_ms: f64,
    pub first_launch_ms: f64,
    pub compiler: serde_json::Map<String, serde_json::Value>,
}

/// What stays alive for the device's life once it is first used.
pub(super) struct Session {
    _context: ocl::Context,
    pub(super) program: ocl::Program,
    pub(super) queue: ocl::Queue,
    search: ocl::Kernel,
    mid: ocl::Buffer<i8>,
    flag: ocl::Buffer<u32>,
    slots: Vec<LaunchSlot>,
    local: usize,
    /// The launch sizes, adapted as the device works; kept between searches.
    pub(super) sizer: Sizer,
    /// The block PoW kernel (`block_search`, in the same program: the same transform, layout
    /// and launch shape as `curl_search`), and its own adaptive launch sizes.
    block: ocl::Kernel,
    pub(super) block_sizer: Sizer,
    /// Whether the launches since the last `begin` run the block kernel.
    block_active: bool,
    pub(super) build: BuildFacts,
    err: DeviceInfo,
}

/// The device facts [`Session::open`] needs beyond its handles.
pub(super) struct OpenSpec<'a> {
    pub info: &'a DeviceInfo,
    pub platform: ocl::core::PlatformId,
    pub device: ocl::core::DeviceId,
    pub kernel: KernelConfig,
    pub geometry: Geometry,
    pub facts: Facts,
}

const NVIDIA: u32 = 0x10de;

/// NVIDIA's compute capability (cl_nv_device_attribute_query).
const CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: u32 = 0x4000;
const CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: u32 = 0x4001;

impl Session {
    pub(super) fn open(spec: OpenSpec<'_>) -> Result<Session, Error> {
        let OpenSpec {
            info,
            platform,
            device,
            kernel,
            mut geometry,
            mut facts,
        } = spec;
        let err = |m: String| device_error(info, m);
        let platform = ocl::Platform::new(platform);
        let device = ocl::Device::from(device);
        let context = {
            let _probing = PROBE_LOCK.lock();
            ocl::Context::builder()
                .platform(platform)
                .devices(device)
                .build()
                .map_err(|e| err(format!("context: {e}")))?
        };
        let nvidia = info.pci_vendor_id == Some(NVIDIA);
        let mut options = kernel.build_options(geometry.group);
        let mut compiler = serde_json::Map::new();
        if nvidia {
            options.push_str(" -cl-nv-verbose");
            // The register cap: the environment's, else the variant's own.
            let cap = match crate::base::env::setting(
                crate::base::env::OPENCL_MAXRREGCOUNT,
                "a register count",
                |v| v.parse::<u32>().ok().filter(|&n| n > 0),
            ) {
                Ok(n) => n,
                Err(w) => {
                    compiler.insert("warning".into(), w.into());
                    None
                }
            };
            if let Some(n) = cap.or(kernel.nvidia_max_registers()) {
                options.push_str(&format!(" -cl-nv-maxrregcount={n}"));
            }
            facts.nv_cc = nv_compute_capability(&device);
        }
        compiler.insert("build_options".into(), options.clone().into());
        let t = Instant::now();
        let program = ocl::Program::builder()
            .src(KERNEL_SOURCE)
            .cmplr_opt(options)
            .devices(device)
            .build(&context)
            .map_err(|e| err(format!("kernel build ({kernel}): {e}")))?;
        let build_ms = t.elapsed().as_secs_f64() * 1e3;
        let log = match program.build_info(device, ocl::enums::ProgramBuildInfo::BuildLog) {
            Ok(ocl::enums::ProgramBuildInfoResult::BuildLog(l)) => l,
            _ => String::new(),
        };
        let resources = build_log::parse(&log)
            .remove("curl_search")
            .unwrap_or_default();
        compiler.extend(resources.details());
        compiler.insert("build_log".into(), build_log::trimmed(&log).into());
        let queue = ocl::Queue::new(
            &context,
            device,
            Some(ocl::flags::CommandQueueProperties::PROFILING_ENABLE),
        )
        .map_err(|e| err(format!("queue: {e}")))?;
        let buffer = |len: usize| {
            ocl::Buffer::<u32>::builder()
                .queue(queue.clone())
                .len(len)
                .fill_val(0u32)
                .build()
                .map_err(|e| err(format!("buffer: {e}")))
        };
        let mid = ocl::Buffer::<i8>::builder()
            .queue(queue.clone())
            .len(STATE_LEN)
            .build()
            .map_err(|e| err(format!("buffer: {e}")))?;
        let flag = buffer(1)?;
        let mut slots = Vec::with_capacity(IN_FLIGHT);
        for _ in 0..IN_FLIGHT {
            slots.push(LaunchSlot {
                res: buffer(RESULT_WORDS)?,
                host: Box::new([0; RESULT_WORDS]),
                kernel_done: None,
                read_done: None,
            });
        }
        // Both searches of the one program, with the same arguments.
        let build_kernel = |name: &str| {
            ocl::Kernel::builder()
                .program(&program)
                .name(name)
                .queue(queue.clone())
                .arg(&mid)
                .arg(0u64)
                .arg(1u32)
                .arg(0u64)
                .arg(0u32)
                .arg(&slots[0].res)
                .arg(&flag)
                .build()
                .map_err(|e| err(format!("kernel {name}: {e}")))
        };
        let search = build_kernel("curl_search")?;
        let block = build_kernel("block_search")?;
        // What the API tells about the compiled kernel.
        let wg = |what| search.wg_info(device, what).ok();
        if let Some(Kwg::PrivateMemSize(n)) = wg(KernelWorkGroupInfo::PrivateMemSize) {
            compiler.insert("private_mem_bytes".into(), n.into());
        }
        if let Some(Kwg::LocalMemSize(n)) = wg(KernelWorkGroupInfo::LocalMemSize) {
            compiler.insert("local_mem_bytes".into(), n.into());
            facts.kernel_local_mem = n;
        }
        // The largest group both entry points can be launched with.
        let max_group = [&search, &block]
            .iter()
            .filter_map(
                |k| match k.wg_info(device, KernelWorkGroupInfo::WorkGroupSize) {
                    Ok(Kwg::WorkGroupSize(n)) => Some(n),
                    _ => None,
                },
            )
            .min();
        if let Some(n) = max_group {
            compiler.insert("max_work_group_size".into(), n.into());
            geometry.group = checked_group(kernel, geometry.group, n).map_err(err)?;
            facts.group = geometry.group;
        }
        if let Some(Kwg::PreferredWorkGroupSizeMultiple(n)) =
            wg(KernelWorkGroupInfo::PreferredWorkGroupSizeMultiple)
        {
            compiler.insert("preferred_work_group_multiple".into(), n.into());
        }
        facts.registers = resources.registers;
        let wave = occupancy::estimate(&facts);
        compiler.insert("groups_per_unit".into(), wave.groups_per_unit.into());
        compiler.insert("occupancy_limit".into(), wave.limit.into());
        geometry.wave_items = wave.items.max(geometry.group);
        let mut s = Session {
            _context: context,
            program,
            queue,
            search,
            mid,
            flag,
            slots,
            local: geometry.group,
            sizer: Sizer::new(geometry),
            block,
            block_sizer: Sizer::new(geometry),
            block_active: false,
            build: BuildFacts {
                build_ms,
                first_launch_ms: 0.0,
                compiler,
            },
            err: info.clone(),
        };
        // One empty launch (limit 0) through the search path, so that the driver's first-launch
        // JIT happens here, not in the first search.
        let t = Instant::now();
        let empty = Launch {
            base: 0,
            items: s.local,
            per_item: 1,
            limit: 0,
        };
        s.submit(0, &empty)
            .and_then(|_| s.wait(0))
            .map_err(|e| err(format!("warm-up launch: {e}")))?;
        s.build.first_launch_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(s)
    }

    fn err(&self, what: &str, e: impl std::fmt::Display) -> Error {
        device_error(&self.err, format!("{what}: {e}"))
    }

    /// Wait for everything queued and forget the slots' events.
    fn idle(&mut self) -> Result<(), Error> {
        self.queue.finish().map_err(|e| self.err("queue", e))?;
        for slot in &mut self.slots {
            slot.kernel_done = None;
            slot.read_done = None;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Reads in flight write into the slots' host words: let them finish first.
        let _ = self.queue.finish();
    }
}

fn nv_compute_capability(device: &ocl::Device) -> Option<(u32, u32)> {
    let q = |param: u32| -> Option<u32> {
        let raw = ocl::core::get_device_info_raw(device, param).ok()?;
        Some(u32::from_ne_bytes(raw.get(..4)?.try_into().ok()?))
    };
    Some((
        q(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV)?,
        q(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV)?,
    ))
}

fn elapsed_ns(e: &ocl::Event, from: ProfilingInfo, to: ProfilingInfo) -> Option<u64> {
    let a = e.profiling_info(from).ok()?.time().ok()?;
    let b = e.profiling_info(to).ok()?.time().ok()?;
    b.checked_sub(a)
}

/// The work-group size to launch `kernel` with: `group` when the compiled kernels allow it
/// (`CL_KERNEL_WORK_GROUP_SIZE`, `kernel_max`); otherwise a smaller power of two for the
/// one-state-per-work-item kernel, and an error for the cooperative kernel, whose group is
/// compiled in.
fn checked_group(kernel: KernelConfig, group: usize, kernel_max: usize) -> Result<usize, String> {
    if group <= kernel_max {
        return Ok(group);
    }
    if kernel.coop > 0 || kernel_max == 0 {
        return Err(format!(
            "kernel {kernel} needs work-groups of {group} work-items; the compiled kernels \
             allow at most {kernel_max}"
        ));
    }
    Ok(1 << (usize::BITS - 1 - kernel_max.leading_zeros()))
}

impl Launcher for Session {
    fn begin(&mut self, job: GpuJob<'_>) -> Result<(), Error> {
        self.idle()?;
        self.block_active = false;
        let zeros = job.zeros();
        let zeros = u32::try_from(zeros).map_err(|_| Error::InvalidMwm(zeros))?;
        let kernel = if job.is_block() {
            &self.block
        } else {
            &self.search
        };
        let set = kernel.set_arg(4, zeros);
        set.map_err(|e| self.err("kernel argument", e))?;
        self.mid
            .write(&job.state()[..])
            .enq()
            .map_err(|e| self.err("mid-state upload", e))?;
        self.flag
            .cmd()
            .fill(0u32, None)
            .enq()
            .map_err(|e| self.err("flag reset", e))?;
        self.block_active = job.is_block();
        Ok(())
    }

    fn sizer(&mut self, job: GpuJob<'_>) -> &mut Sizer {
        if job.is_block() {
            &mut self.block_sizer
        } else {
            &mut self.sizer
        }
    }

    fn submit(&mut self, slot: usize, l: &Launch) -> Result<(), Error> {
        let iters = u32::try_from(l.per_item).map_err(|_| self.err("launch", "too long"))?;
        let s = &mut self.slots[slot];
        let kernel = if self.block_active {
            &self.block
        } else {
            &self.search
        };
        let r = (|| -> ocl::Result<()> {
            s.res.cmd().fill(0u32, None).enq()?;
            kernel.set_arg(1, l.base)?;
            kernel.set_arg(2, iters)?;
            kernel.set_arg(3, l.limit)?;
            kernel.set_arg(5, &s.res)?;
            let mut kernel_done = ocl::Event::empty();
            // SAFETY: the arguments match the kernel's signature (buffer of 729 chars, ulong,
            // uint, ulong, uint, two buffers of uints: 8 result words and the flag, all set at
            // build or above; `block_search` has the same signature); work-items whose counters
            // are at or past `limit` return at once, so no counter outside the launch is tried
            // and nothing outside the buffers is touched.
            unsafe {
                kernel
                    .cmd()
                    .global_work_size(l.items)
                    .local_work_size(self.local)
                    .enew(&mut kernel_done)
                    .enq()?;
            }
            let mut read_done = ocl::Event::empty();
            // SAFETY: a non-blocking read into the slot's boxed host words, which outlive the
            // command: nothing reads or drops them before `wait` has waited on `read_done`, a
            // later `submit` on this slot comes only after that wait, and dropping the session
            // finishes the queue first.
            unsafe {
                s.res
                    .read(&mut s.host[..])
                    .block(false)
                    .enew(&mut read_done)
                    .enq()?;
            }
            s.kernel_done = Some(kernel_done);
            s.read_done = Some(read_done);
            self.queue.flush()
        })();
        r.map_err(|e| self.err("launch", e))
    }

    fn wait(&mut self, slot: usize) -> Result<LaunchResult, Error> {
        let s = &mut self.slots[slot];
        let (Some(read), kernel) = (s.read_done.take(), s.kernel_done.take()) else {
            return Err(device_error(&self.err, "waited on a slot with no launch"));
        };
        if let Err(e) = read.wait_for() {
            return Err(device_error(&self.err, format!("result read: {e}")));
        }
        let words = *s.host;
        let kernel_ns = kernel
            .as_ref()
            .and_then(|k| elapsed_ns(k, ProfilingInfo::Start, ProfilingInfo::End));
        let read_ns = elapsed_ns(&read, ProfilingInfo::Start, ProfilingInfo::End);
        Ok(LaunchResult {
            words,
            kernel_ns,
            read_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_larger_than_the_compiled_kernels_allow_is_refused_or_shrunk() {
        assert_eq!(checked_group(KernelConfig::U32_COOP, 128, 1024), Ok(128));
        assert_eq!(checked_group(KernelConfig::U32_COOP, 128, 128), Ok(128));
        let e = checked_group(KernelConfig::U32_COOP, 128, 96).unwrap_err();
        assert!(e.contains("128") && e.contains("96"), "{e}");
        assert!(checked_group(KernelConfig::U64, 64, 0).is_err());
        // The one-state-per-work-item kernel takes the largest power of two that fits.
        assert_eq!(checked_group(KernelConfig::U64, 64, 48), Ok(32));
        assert_eq!(checked_group(KernelConfig::U64, 64, 1), Ok(1));
    }
}
