//! The CPU backend: one persistent pool, one search at a time across all its workers, each worker
//! on its own disjoint counter range.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub(crate) mod batch;
#[cfg(target_arch = "x86_64")]
mod hooks;
#[cfg(target_arch = "x86_64")]
mod kernel;
pub(crate) mod messages;
#[cfg(target_arch = "x86_64")]
mod passes;
mod platform;
mod pool;
mod portable;
#[cfg(target_arch = "x86_64")]
mod simd;
#[cfg(target_arch = "x86_64")]
mod sweep;
pub(crate) mod transpose;
mod tryte_words;
#[cfg(target_arch = "x86_64")]
mod wavefront;

pub use platform::{CpuKernel, KernelHooks};
pub(crate) use pool::check_threads;
pub use pool::{default_threads, max_threads, PoolConfig};

use std::sync::atomic::AtomicBool;

use parking_lot::Mutex;

use crate::base::error::Error;
use crate::search::control::{Counters, SearchControl, Worker};
use crate::search::device::{Backend, Device, DeviceInfo, DeviceKind, SearchOutcome};
use crate::search::layout::KernelJob;
use crate::search::nonce::CounterRange;
use crate::search::search_job::SearchJob;

/// The CPU as one device: the engine's thread pool running one search at a time.
pub struct CpuDevice {
    pool: rayon::ThreadPool,
    threads: usize,
    kernel: CpuKernel,
    counters: Counters,
    info: DeviceInfo,
    /// One search at a time on the whole pool; a second caller waits here, not in the pool.
    busy: Mutex<()>,
}

impl std::fmt::Debug for CpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuDevice")
            .field("threads", &self.threads)
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

impl CpuDevice {
    /// Build the pool and pick the kernel.
    pub fn new(pool: PoolConfig, kernel: CpuKernel) -> Result<Self, Error> {
        kernel.check()?;
        let threads = pool.threads.max(1);
        let p = pool::build(PoolConfig { threads, ..pool })?;
        let info = DeviceInfo::new("cpu", Backend::Cpu, cpu_name(), DeviceKind::Cpu)
            .with_lanes(kernel.lanes())
            .with_kernel(kernel.name())
            .with_declared_speed(threads as f64 * kernel.estimated_rate_per_thread())
            .with_detail("threads", threads)
            .with_detail("pinned", pool.pin);
        Ok(CpuDevice {
            pool: p,
            threads,
            kernel,
            counters: Counters::new(threads),
            info,
            busy: Mutex::new(()),
        })
    }

    /// The kernel in use.
    pub fn kernel(&self) -> CpuKernel {
        self.kernel
    }

    /// Worker threads in the pool (constant for the device's life).
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

impl CpuDevice {
    /// One search split across the pool's workers (the device's lock held by the caller), each
    /// on its own part of `range`; the worker that claims its hit first wins.
    fn search_split(
        &self,
        job: &KernelJob<'_>,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> SearchOutcome {
        let threads = ctl
            .max_threads()
            .map_or(self.threads, |n| n.min(self.threads));
        let kernel = self.kernel;
        let sibling_hit = AtomicBool::new(false);
        let results = self.pool.broadcast(|ctx| {
            let i = ctx.index();
            if i >= threads {
                return (None, false, 0);
            }
            let mut w = Worker::new(ctl, &self.counters, i).with_siblings(&sibling_hit);
            let hit = kernel.search(job, range.part(i, threads), &mut w);
            let first = hit.is_some() && w.claim_hit();
            (hit, first, w.tried)
        });
        let nonces = results.iter().map(|r| r.2).sum();
        // The worker that claimed the search first wins; any other simultaneous hit is dropped.
        let hit = results
            .iter()
            .find(|r| r.1)
            .or_else(|| results.iter().find(|r| r.0.is_some()))
            .and_then(|r| r.0);
        SearchOutcome { hit, nonces }
    }
}

impl Device for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let _guard = self.busy.lock();
        if self.is_small(job.min_weight()) {
            // Too little work to split: the calling thread runs it whole (no pool wake-up).
            let (hit, nonces) = self.search_here(job, range, ctl);
            return Ok(SearchOutcome { hit, nonces });
        }
        Ok(self.search_split(&job.kernel_job(), range, ctl))
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
        let _guard = self.busy.lock();
        let kjob = crate::search::layout::block_kernel_job(job);
        if self.is_small(crate::search::search_job::Mwm::saturating(job.zeros())) {
            // Slot 0 is free: no pool worker searches while this thread holds the lock.
            let mut w = Worker::new(ctl, &self.counters, 0);
            let hit = self.kernel.search(&kjob, range, &mut w);
            return Ok(SearchOutcome {
                hit,
                nonces: w.tried,
            });
        }
        Ok(self.search_split(&kjob, range, ctl))
    }

    fn nonces_tried(&self) -> u64 {
        self.counters.sum()
    }
}

/// The CPU model name, from `/proc/cpuinfo` where there is one.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
