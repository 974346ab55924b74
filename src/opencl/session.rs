//! The long-lived OpenCL context of one device: context, program, queue, kernels and buffers,
//! built once (when the device is prepared or first used) and reused by every search; and its
//! `Launcher` (`src/gpu/driver.rs`), the backend's whole share of the search loop.

use crate::curl::STATE_LEN;
use crate::device::DeviceInfo;
use crate::error::Error;
use crate::gpu::discover::device_error;
use crate::gpu::driver::ResultWords;
use crate::gpu::{Geometry, Launcher, Sizer};
use crate::search::SearchJob;

use super::kernel_config::KernelConfig;
use super::{KERNEL_SOURCE, PROBE_LOCK};

/// What stays alive for the device's life once it is first used.
pub(super) struct Session {
    _context: ocl::Context,
    pub(super) program: ocl::Program,
    pub(super) queue: ocl::Queue,
    search: ocl::Kernel,
    mid: ocl::Buffer<i8>,
    res: ocl::Buffer<u32>,
    local: usize,
    /// The launch sizes, adapted as the device works; kept between searches.
    pub(super) sizer: Sizer,
    err: DeviceInfo,
}

impl Session {
    pub(super) fn open(
        info: &DeviceInfo,
        platform: ocl::core::PlatformId,
        device: ocl::core::DeviceId,
        kernel: KernelConfig,
        geometry: Geometry,
    ) -> Result<Session, Error> {
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
        let program = ocl::Program::builder()
            .src(KERNEL_SOURCE)
            .cmplr_opt(kernel.build_options(geometry.group))
            .devices(device)
            .build(&context)
            .map_err(|e| err(format!("kernel build ({kernel}): {e}")))?;
        let queue =
            ocl::Queue::new(&context, device, None).map_err(|e| err(format!("queue: {e}")))?;
        let mid = ocl::Buffer::<i8>::builder()
            .queue(queue.clone())
            .len(STATE_LEN)
            .build()
            .map_err(|e| err(format!("buffer: {e}")))?;
        let res = ocl::Buffer::<u32>::builder()
            .queue(queue.clone())
            .len(4)
            .fill_val(0u32)
            .build()
            .map_err(|e| err(format!("buffer: {e}")))?;
        let iters = u32::try_from(geometry.per_item).map_err(|_| err("per-item count".into()))?;
        let search = ocl::Kernel::builder()
            .program(&program)
            .name("curl_search")
            .queue(queue.clone())
            .arg(&mid)
            .arg(0u64)
            .arg(iters)
            .arg(0u64)
            .arg(0u32)
            .arg(&res)
            .build()
            .map_err(|e| err(format!("kernel curl_search: {e}")))?;
        let mut s = Session {
            _context: context,
            program,
            queue,
            search,
            mid,
            res,
            local: geometry.group,
            sizer: Sizer::new(geometry),
            err: info.clone(),
        };
        // One empty launch (limit 0) so that the driver's first-launch JIT happens here, not in
        // the first search.
        s.enqueue(0, s.local, 0)
            .and_then(|_| s.queue.finish())
            .map_err(|e| err(format!("warm-up launch: {e}")))?;
        Ok(s)
    }

    /// Enqueue one search launch: `items` work-items (a multiple of the local size) over counters
    /// `base .. base + limit`.
    fn enqueue(&mut self, base: u64, items: usize, limit: u64) -> ocl::Result<()> {
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
                .local_work_size(self.local)
                .enq()
        }
    }

    fn err(&self, what: &str, e: impl std::fmt::Display) -> Error {
        device_error(&self.err, format!("{what}: {e}"))
    }
}

impl Launcher for Session {
    fn begin(&mut self, job: &SearchJob) -> Result<(), Error> {
        let mwm = u32::try_from(job.mwm()).map_err(|_| Error::InvalidMwm(job.mwm()))?;
        self.search
            .set_arg(4, mwm)
            .map_err(|e| self.err("kernel argument", e))?;
        self.mid
            .write(&job.state()[..])
            .enq()
            .map_err(|e| self.err("mid-state upload", e))?;
        self.res
            .write(&[0u32; 4][..])
            .enq()
            .map_err(|e| self.err("result reset", e))
    }

    fn launch(&mut self, base: u64, items: usize, limit: u64) -> Result<ResultWords, Error> {
        self.enqueue(base, items, limit)
            .map_err(|e| self.err("launch", e))?;
        let mut words = [0u32; 4];
        self.res
            .read(&mut words[..])
            .enq()
            .map_err(|e| self.err("result read", e))?;
        Ok(words)
    }
}
