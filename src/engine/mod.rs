//! The engine layer: an [`Engine`] owns the devices (the CPU pool, GPUs, remote workers) for
//! its life and runs PoW searches on them.
//!
//! It may import the layers below it (`base`, `ternary`, `search`, `backend`), never `service`.
//! Children: `registry/` (every device discovered once, a lease per search, the selection and
//! speed estimates), `attach.rs` (IRI's `attachToTangle` on an engine), `hash_batch.rs` (hashing
//! many messages at once on the CPU kernels), `host_threads.rs` (the persistent threads that
//! wait on devices).
//!
//! Files: `options.rs` ([`PowOptions`]), `builder.rs` ([`EngineBuilder`]: discovery, once),
//! `bench.rs` ([`Engine::bench`]), this file (the search: lease a device, run it, verify the
//! hit on the host, retry elsewhere on a fault).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod attach;
mod bench;
mod block;
mod builder;
mod estimate;
pub(crate) mod hash_batch;
pub(crate) mod host_threads;
mod options;
mod pow_job;
pub(crate) mod registry;
mod request;
mod small;
mod tune;

pub use bench::{bench_transaction, BenchResult, LatencyReport, Spread};
pub use block::BlockPowResult;
pub use builder::{BuiltFor, EngineBuilder};
pub use options::PowOptions;
pub use tune::{tune_variants, TuneReport, TuneTrial, TuneVariant, DEFAULT_TUNE_BUDGET};
pub(crate) use tune::{wrap as wrap_tunable, AutoTune};

use crate::backend::cpu::CpuDevice;
use crate::base::error::{Error, InternalError};
use crate::engine::host_threads::HostThreads;
use crate::engine::registry::{DeviceReport, Registry, Selection, WaitSpec};
use crate::search::control::{SearchControl, StopReason};
use crate::search::device::DeviceInfo;
use crate::search::nonce::CounterRange;
use crate::search::search_job::{Mwm, SearchJob};
use crate::ternary::transaction::Transaction;
use pow_job::PowJob;
pub(crate) use request::Request;

/// What a PoW call did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowReport {
    /// Nonces tried (all devices and workers of this call).
    pub nonces: u64,
    /// Wall time of the call.
    pub elapsed: Duration,
    /// The id of the device that found the nonce.
    pub device: String,
}

impl PowReport {
    /// Nonces tried per second.
    pub fn nonces_per_second(&self) -> f64 {
        self.nonces as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A transaction with a valid nonce, and the report of the search.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowResult {
    /// The input transaction with its nonce set; its hash ends in at least MWM zero trits
    /// (checked on the host from the host's own mid-state).
    pub transaction: Transaction,
    /// How the search went.
    pub report: PowReport,
}

struct Inner {
    cpu: Arc<CpuDevice>,
    registry: Registry,
    /// Threads that run whole searches for `pow_many` (they may wait for a lease).
    runners: HostThreads,
    /// One thread per device for latency mode's extra devices (they never wait for a lease:
    /// the device is already leased when a job reaches them).
    device_threads: Vec<HostThreads>,
    warnings: Vec<String>,
    /// The tuning of GPU devices on their first search (`tune.rs`); `None` when none is tuned.
    auto_tune: Option<AutoTune>,
}

/// The PoW engine. Cheap to clone (an `Arc`); share one per process: its thread pool is built
/// once, its devices discovered once, and every search, from any number of caller threads,
/// takes a lease on a free device.
///
/// ```
/// use curlpow::{Backend, Engine, Transaction};
/// let engine = Engine::builder().threads(2).backends(&[Backend::Cpu]).build()?;
/// let tx: Transaction = "9".repeat(2673).parse()?;
/// let done = engine.pow(&tx, 5)?;
/// assert!(done.transaction.weight() >= 5);
/// # Ok::<(), curlpow::Error>(())
/// ```
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("cpu", &self.inner.cpu)
            .field(
                "devices",
                &self
                    .inner
                    .registry
                    .slots
                    .iter()
                    .map(|s| &s.info.id)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What one device did in one search.
struct DeviceRun<T> {
    /// The verified result, if this device's hit was the search's first.
    found: Option<T>,
    nonces: u64,
    fault: Option<Error>,
}

impl Engine {
    /// An engine with the default settings: every compiled backend, hardware devices only.
    pub fn new() -> Result<Engine, Error> {
        Self::builder().build()
    }

    /// A builder.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// Find a nonce so that the transaction's hash ends in `mwm` zero trits (0..=243; above is
    /// [`Error::InvalidMwm`]).
    pub fn pow(&self, tx: &Transaction, mwm: usize) -> Result<PowResult, Error> {
        self.pow_with(tx, &PowOptions::mwm(mwm))
    }

    /// [`pow`](Self::pow) with a timeout, cancel token, device selection or latency mode.
    ///
    /// A device that fails (driver error, or a nonce the host check rejects) is marked
    /// unhealthy and the search is retried on another allowed device; the error reaches the
    /// caller only when no allowed device is left.
    pub fn pow_with(&self, tx: &Transaction, opts: &PowOptions) -> Result<PowResult, Error> {
        let mwm = opts.checked_mwm()?;
        self.pow_request(tx, mwm, &Request::new(opts, Instant::now()))
    }

    /// One transaction's search of a request whose MWM is checked.
    fn pow_request(&self, tx: &Transaction, mwm: Mwm, req: &Request) -> Result<PowResult, Error> {
        self.run_request(req, || SearchJob::prepare(tx, mwm))
            .map(|(_, transaction, report)| PowResult {
                transaction,
                report,
            })
    }

    /// The one entry from a request to a search: the pre-checks (cancelled, past the
    /// deadline), then the job, built only when the search will run (a mid-state costs 32
    /// transforms), then lease, run, verify, retry. Gives the job back with its result.
    pub(crate) fn run_request<J: PowJob>(
        &self,
        req: &Request,
        job: impl FnOnce() -> J,
    ) -> Result<(Arc<J>, J::Output, PowReport), Error> {
        let started = Instant::now();
        req.check_live(started)?;
        let job = Arc::new(job());
        let (output, report) = self.search(&job, req, started)?;
        Ok((job, output, report))
    }

    /// Lease, run, verify, retry: the search of a prepared job.
    fn search<J: PowJob>(
        &self,
        job: &Arc<J>,
        req: &Request,
        started: Instant,
    ) -> Result<(J::Output, PowReport), Error> {
        let (opts, deadline) = (&req.opts, req.deadline);
        let reg = &self.inner.registry;
        let mut allowed = reg.allowed(&opts.selection);
        if allowed.is_empty() {
            return Err(Error::NoDevice(format!(
                "no device matches the selection {:?}",
                opts.selection
            )));
        }
        allowed.retain(|&i| J::runs_on(&*reg.slots[i].device));
        if allowed.is_empty() {
            return Err(Error::NoDevice(format!(
                "no device the selection {:?} allows runs this search",
                opts.selection
            )));
        }
        let mut nonces = 0u64;
        let mut first_fault: Option<Error> = None;
        loop {
            let lease = reg
                .acquire(WaitSpec {
                    allowed: allowed.clone(),
                    work: job.min_weight().expected_work(),
                    all: opts.latency,
                    deadline,
                    cancel: opts.cancel.as_ref(),
                    cpu_fallback: opts.cpu_fallback.unwrap_or(reg.policy.cpu_fallback),
                })
                .map_err(|e| match (e, first_fault.take()) {
                    (Error::NoDevice(_), Some(fault)) => fault,
                    (Error::Cancelled { .. }, _) => Error::Cancelled { nonces },
                    (Error::Timeout { .. }, _) => Error::Timeout {
                        elapsed: started.elapsed(),
                        nonces,
                    },
                    (e, _) => e,
                })?;
            for &i in &lease.indices {
                self.first_search(i);
            }
            let ctl = Arc::new(
                SearchControl::new(opts.cancel.clone(), deadline)
                    .with_max_threads(opts.cpu_threads),
            );
            let runs = self.run_lease(job, &lease.indices, &ctl);
            let indices = lease.indices.clone();
            drop(lease);
            let mut winner = None;
            for (&i, run) in indices.iter().zip(runs) {
                nonces += run.nonces;
                if let Some(t) = run.found {
                    winner = Some((i, t));
                }
                if let Some(e) = run.fault {
                    allowed.retain(|&d| d != i);
                    first_fault.get_or_insert(e);
                }
            }
            if let Some((i, output)) = winner {
                let report = PowReport {
                    nonces,
                    elapsed: started.elapsed(),
                    device: reg.slots[i].info.id.clone(),
                };
                return Ok((output, report));
            }
            if let Some(reason) = ctl.stop_reason() {
                if reason != StopReason::Found {
                    return Err(stop_error(reason, nonces, started.elapsed()));
                }
            }
            match &first_fault {
                Some(_) if !allowed.is_empty() => continue,
                Some(_) => return Err(first_fault.take().expect("checked")),
                None => {
                    return Err(InternalError::SearchEndedEmpty {
                        device: reg.slots[indices[0]].info.id.clone(),
                    }
                    .into())
                }
            }
        }
    }

    /// Run one search on every leased device at once, disjoint counter ranges: the first device
    /// on this thread, the others on their own device threads.
    fn run_lease<J: PowJob>(
        &self,
        job: &Arc<J>,
        indices: &[usize],
        ctl: &Arc<SearchControl>,
    ) -> Vec<DeviceRun<J::Output>> {
        let n = indices.len();
        let all = job.counters();
        if n == 1 {
            return vec![self.run_one(indices[0], &**job, all, ctl)];
        }
        let (rtx, rrx) = mpsc::channel();
        for (k, &i) in indices.iter().enumerate().skip(1) {
            let (engine, job, ctl, rtx) = (self.clone(), job.clone(), ctl.clone(), rtx.clone());
            self.inner.device_threads[i].submit(move || {
                let run = engine.run_one(i, &*job, all.part(k, n), &ctl);
                let _ = rtx.send((k, run));
            });
        }
        drop(rtx);
        let mut runs: Vec<Option<DeviceRun<J::Output>>> = (0..n).map(|_| None).collect();
        runs[0] = Some(self.run_one(indices[0], &**job, all.part(0, n), ctl));
        for (k, run) in rrx {
            runs[k] = Some(run);
        }
        runs.into_iter()
            .zip(indices)
            .map(|(r, &i)| {
                r.unwrap_or_else(|| DeviceRun {
                    found: None,
                    nonces: 0,
                    fault: Some(
                        InternalError::DeviceThreadLost {
                            device: self.inner.registry.slots[i].info.id.clone(),
                        }
                        .into(),
                    ),
                })
            })
            .collect()
    }

    /// One device, one search, host check included. The device's one-time setup (a kernel
    /// compile) happens before the clock starts, so it never counts as search time.
    fn run_one<J: PowJob>(
        &self,
        i: usize,
        job: &J,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> DeviceRun<J::Output> {
        let reg = &self.inner.registry;
        let slot = &reg.slots[i];
        let fault = |e: Error, busy: Duration, nonces: u64| {
            reg.fault(i, busy, nonces, &e);
            DeviceRun {
                found: None,
                nonces,
                fault: Some(e),
            }
        };
        if let Err(e) = slot.device.prepare() {
            return fault(e, Duration::ZERO, 0);
        }
        let _in_flight = reg.enter(i);
        let t0 = Instant::now();
        let r = job.run(&*slot.device, range, ctl);
        let busy = t0.elapsed();
        match r {
            Err(e) => fault(e, busy, 0),
            Ok(out) => match out.found.map(|f| job.verify(&f)) {
                Some(Some(tx)) => {
                    // Only a verified hit stops the others, and only the first one counts: two
                    // devices of a latency-mode search may both hit before either sees the flag.
                    let first = ctl.set_found();
                    reg.record(i, busy, out.nonces, first);
                    reg.healthy(i);
                    DeviceRun {
                        found: first.then_some(tx),
                        nonces: out.nonces,
                        fault: None,
                    }
                }
                Some(None) => fault(
                    Error::InvalidNonce {
                        device: slot.info.id.clone(),
                    },
                    busy,
                    out.nonces,
                ),
                None => {
                    reg.record(i, busy, out.nonces, false);
                    DeviceRun {
                        found: None,
                        nonces: out.nonces,
                        fault: None,
                    }
                }
            },
        }
    }

    /// PoW on many independent transactions, spread over the free devices; results in input
    /// order. Each transaction is a search of its own with `opts`; a `timeout` counts from the
    /// start of the whole batch, and once it has passed (or the cancel token fired) the
    /// transactions not yet started end at once with the same error.
    pub fn pow_many(
        &self,
        txs: &[Transaction],
        opts: &PowOptions,
    ) -> Vec<Result<PowResult, Error>> {
        let req = Request::new(opts, Instant::now());
        let mwm = match opts.checked_mwm() {
            Ok(m) => m,
            Err(e) => return vec![Err(e); txs.len()],
        };
        // Small searches: one transaction per CPU worker (see small.rs); the rest below.
        let mut results = self.pow_many_small(txs, mwm, &req);
        let pending: Vec<usize> = (0..txs.len()).filter(|&k| results[k].is_none()).collect();
        if pending.len() <= 1 {
            for k in pending {
                results[k] = Some(self.pow_request(&txs[k], mwm, &req));
            }
            return results
                .into_iter()
                .map(|r| r.expect("every job reports"))
                .collect();
        }
        let (rtx, rrx) = mpsc::channel();
        for k in pending {
            let (engine, tx, req, rtx) = (self.clone(), txs[k].clone(), req.clone(), rtx.clone());
            self.inner.runners.submit(move || {
                let _ = rtx.send((k, engine.pow_request(&tx, mwm, &req)));
            });
        }
        drop(rtx);
        for (k, r) in rrx {
            results[k] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(InternalError::RunnerLost.into())))
            .collect()
    }

    /// Every device of the engine.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.inner
            .registry
            .slots
            .iter()
            .map(|s| s.device.info().clone())
            .collect()
    }

    /// The devices a selection allows.
    pub fn select(&self, sel: &Selection) -> Vec<DeviceInfo> {
        self.devices()
            .into_iter()
            .filter(|d| sel.allows(d))
            .collect()
    }

    /// An error naming what is wrong if a selection allows no device or names unknown ids.
    pub fn check_selection(&self, sel: &Selection) -> Result<(), Error> {
        let ids: Vec<String> = self.devices().into_iter().map(|d| d.id).collect();
        for d in sel.devices.iter().chain(&sel.exclude) {
            if !ids.contains(d) {
                return Err(Error::NoDevice(format!(
                    "no device with id {d:?} (devices: {})",
                    ids.join(", ")
                )));
            }
        }
        if self.select(sel).is_empty() {
            return Err(Error::NoDevice(format!(
                "the selection allows none of the devices ({})",
                ids.join(", ")
            )));
        }
        Ok(())
    }

    /// Every device with its statistics for this process.
    pub fn device_report(&self) -> Vec<DeviceReport> {
        self.inner.registry.reports()
    }

    /// Problems met while discovering devices (drivers that did not answer, duplicates).
    pub fn discovery_warnings(&self) -> &[String] {
        &self.inner.warnings
    }

    /// Nonces tried by this engine so far, all devices (summed on read).
    pub fn nonces_tried(&self) -> u64 {
        self.inner
            .registry
            .slots
            .iter()
            .map(|s| s.device.nonces_tried())
            .sum()
    }

    /// Searches waiting for a free device right now (a test hook: `curlpow::internal`).
    pub(crate) fn queued_searches(&self) -> usize {
        self.inner.registry.waiting()
    }

    /// The CPU device (pool size, kernel; the tests read it through `curlpow::internal`).
    pub(crate) fn cpu(&self) -> &CpuDevice {
        &self.inner.cpu
    }
}

fn stop_error(reason: StopReason, nonces: u64, elapsed: Duration) -> Error {
    match reason {
        StopReason::Cancelled => Error::Cancelled { nonces },
        _ => Error::Timeout { elapsed, nonces },
    }
}
