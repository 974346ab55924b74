//! Whole batches on the CPU pool, for work too small to split: many small searches run one per
//! worker, start to finish ([`CpuDevice::search_each`]), and chunks of batch hashing
//! ([`CpuDevice::run_tasks`]). A search whose expected work is below one kernel transform (MWM
//! 4 or less with AVX-512) first tries its first counter's lanes one by one on the host's
//! single-state transform, stopping at the first hit.
//!
//! Workers take the next item from one shared index: one atomic increment per transaction (or
//! per chunk of messages), never per nonce. Each search still counts its nonces on the worker's
//! own counter slot once per transform, and every hit is checked on the host
//! ([`SearchJob::verify`]) by the worker that found it before it is reported.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::CpuDevice;
use crate::search::control::{SearchControl, Worker};
use crate::search::nonce::{lane_trits, nonce_trits, CounterRange, Hit};
use crate::search::search_job::{Mwm, SearchJob, NONCE_LIMB};
use crate::ternary::curl::planes::LIMB;
use crate::ternary::curl::PlanesKernel;
use crate::ternary::transaction::Transaction;

/// What one search of a batch did.
#[derive(Debug)]
pub(crate) struct JobRun {
    /// The kernel's answer.
    pub hit: Option<Hit>,
    /// The transaction with the hit's nonce, if the host check accepted it.
    pub verified: Option<Transaction>,
    /// Nonces tried.
    pub nonces: u64,
}

/// Below this many expected transforms of the kernel (3^MWM nonces ÷ lanes) a single search
/// runs whole on the calling thread: waking the pool and running every worker's first transform
/// costs more than splitting saves. With 512 lanes this keeps MWM <= 7 (4.3 expected
/// transforms) on one worker; the split and unsplit timings it is set from are in
/// `docs/benchmarks.md` ("Per-call latency").
pub(crate) const SPLIT_MIN_TRANSFORMS: f64 = 8.0;

impl CpuDevice {
    /// Whether a search at `mwm` is too small to split across the pool.
    pub(crate) fn is_small(&self, mwm: Mwm) -> bool {
        mwm.expected_work() < SPLIT_MIN_TRANSFORMS * self.kernel.lanes() as f64
    }

    /// Workers a search may use under `ctl`'s cap.
    fn workers(&self, ctl: &SearchControl) -> usize {
        ctl.max_threads()
            .map_or(self.threads, |n| n.min(self.threads))
    }

    /// Run one search on the calling thread, whole (the device's lock held).
    pub(crate) fn search_here(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> (Option<Hit>, u64) {
        // Slot 0 is free: no pool worker searches while the caller holds the device's lock.
        let mut w = Worker::new(ctl, &self.counters, 0);
        let hit = self.search_one(job, range, &mut w);
        (hit, w.tried)
    }

    /// One worker's whole search of `range`. When the expected work (3^MWM nonces) costs less
    /// on the single-state transform than one transform of the kernel, the first counter's
    /// lanes are tried one at a time first ([`Self::scan_lanes`]); the kernel takes over from
    /// the next counter if none hits.
    fn search_one(&self, job: &SearchJob, range: CounterRange, w: &mut Worker<'_>) -> Option<Hit> {
        let single = PlanesKernel::detect().transform_ns() as f64;
        if range.len > 0
            && job.min_weight().expected_work() * single < self.kernel.transform_ns() as f64
        {
            if let Some(hit) = self.scan_lanes(job, range.start, w) {
                return Some(hit);
            }
            if !w.keep_going() {
                return None;
            }
            let rest = CounterRange {
                start: range.start + 1,
                len: range.len - 1,
            };
            return self.kernel.search(&job.kernel_job(), rest, w);
        }
        self.kernel.search(&job.kernel_job(), range, w)
    }

    /// Lanes `0..lanes` of counter `n`, one at a time on the host's single-state transform,
    /// lowest first: exactly the nonces, and the hit, of the kernel's transform of counter `n`
    /// (the kernel reports its lowest hitting lane too). Counted in batches of 64.
    fn scan_lanes(&self, job: &SearchJob, n: u64, w: &mut Worker<'_>) -> Option<Hit> {
        let pk = PlanesKernel::detect();
        let mut nonce = nonce_trits(0, n);
        let mut base = *job.planes();
        base.set_limbs(NONCE_LIMB, &nonce);
        let mut tried = 0;
        for lane in 0..self.kernel.lanes() {
            if tried == 64 {
                if !w.batch_done(tried) {
                    return None;
                }
                tried = 0;
            }
            // The lane trits (block trits 162..168) are the start of the nonce's first limb.
            nonce[..6].copy_from_slice(&lane_trits(lane));
            let mut p = base;
            p.set_limbs(NONCE_LIMB, &nonce[..LIMB]);
            pk.run(&mut p);
            tried += 1;
            if p.rate_trailing_zeros() >= job.mwm() {
                w.batch_done(tried);
                return Some(Hit { counter: n, lane });
            }
        }
        w.batch_done(tried);
        None
    }

    /// Run every job to its first hit, each on one worker (or the calling thread for a single
    /// job or a single worker), until `ctl` says stop. Entry `i` is job `i`'s run, `None` if it
    /// never started.
    pub(crate) fn search_each(
        &self,
        jobs: &[SearchJob],
        ctl: &SearchControl,
    ) -> Vec<Option<JobRun>> {
        let _guard = self.busy.lock();
        let workers = self.workers(ctl).min(jobs.len());
        let next = AtomicUsize::new(0);
        let run = |slot: usize| {
            let mut done = Vec::new();
            while !ctl.should_stop() {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let mut w = Worker::new(ctl, &self.counters, slot);
                let hit = self.search_one(job, CounterRange::ALL, &mut w);
                let verified = hit.and_then(|h| job.verify(h));
                done.push((
                    i,
                    JobRun {
                        hit,
                        verified,
                        nonces: w.tried,
                    },
                ));
            }
            done
        };
        let per_worker = if workers <= 1 {
            vec![run(0)]
        } else {
            self.pool.broadcast(|ctx| {
                if ctx.index() < workers {
                    run(ctx.index())
                } else {
                    Vec::new()
                }
            })
        };
        let mut out: Vec<Option<JobRun>> = (0..jobs.len()).map(|_| None).collect();
        for (i, r) in per_worker.into_iter().flatten() {
            out[i] = Some(r);
        }
        out
    }

    /// Run `task(i)` for every `i` in `0..n` on the pool's workers (each takes the next index),
    /// or on the calling thread when there is one task or one worker. Holds the device's lock,
    /// so it waits for a running search and never runs inside one.
    pub(crate) fn run_tasks(&self, n: usize, task: impl Fn(usize) + Sync) {
        let _guard = self.busy.lock();
        if n <= 1 || self.threads <= 1 {
            (0..n).for_each(task);
            return;
        }
        let next = AtomicUsize::new(0);
        self.pool.broadcast(|_| loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            task(i);
        });
    }
}
