//! The public entry point: an [`Engine`] owns the devices (the CPU pool, GPUs) for its life and
//! runs PoW searches on them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::mpsc;

use serde::Serialize;

mod builder;
mod options;
mod small;

pub use builder::EngineBuilder;
pub use options::{PowOptions, MAINNET_MWM};

use crate::control::{SearchControl, StopReason};
use crate::cpu::CpuDevice;
use crate::device::{Backend, DeviceInfo};
use crate::error::Error;
use crate::host_threads::HostThreads;
use crate::registry::{DeviceReport, Registry, Selection, WaitSpec};
use crate::search::{CounterRange, SearchJob};
use crate::transaction::Transaction;

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

/// A `curlpow bench` measurement.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct BenchResult {
    /// The backend.
    pub backend: Backend,
    /// The device's name.
    pub device: String,
    /// The device's id.
    pub device_id: String,
    /// The kernel (CPU kernel name, or the GPU kernel's lane width).
    pub kernel: Option<String>,
    /// CPU worker threads (CPU only).
    pub threads: Option<usize>,
    /// Nonces tried.
    pub nonces: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// Nonces tried per second.
    pub nonces_per_second: f64,
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
}

/// The PoW engine. Cheap to clone (an `Arc`); share one per process: its thread pool is built
/// once, its devices discovered once, and every search, from any number of caller threads,
/// takes a lease on a free device.
///
/// ```
/// use curlpow::{Engine, Transaction};
/// let engine = Engine::builder().threads(2).build().unwrap();
/// let tx: Transaction = "9".repeat(2673).parse().unwrap();
/// let done = engine.pow(&tx, 5).unwrap();
/// assert!(done.transaction.weight() >= 5);
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
struct DeviceRun {
    /// The verified result, if this device's hit was the search's first.
    found: Option<Transaction>,
    nonces: u64,
    fault: Option<Error>,
}

impl Engine {
    /// An engine with the default settings.
    pub fn new() -> Result<Engine, Error> {
        Self::builder().build()
    }

    /// A builder.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// Find a nonce so that the transaction's hash ends in `mwm` zero trits.
    pub fn pow(&self, tx: &Transaction, mwm: usize) -> Result<PowResult, Error> {
        self.pow_with(tx, &PowOptions::mwm(mwm))
    }

    /// [`pow`](Self::pow) with a timeout, cancel token, device selection or latency mode.
    ///
    /// A device that fails (driver error, or a nonce the host check rejects) is marked
    /// unhealthy and the search is retried on another allowed device; the error reaches the
    /// caller only when no allowed device is left.
    pub fn pow_with(&self, tx: &Transaction, opts: &PowOptions) -> Result<PowResult, Error> {
        let job = Arc::new(SearchJob::new(tx, opts.mwm)?);
        let started = Instant::now();
        let deadline = opts.deadline_from(started);
        let reg = &self.inner.registry;
        let mut allowed = reg.allowed(&opts.selection);
        if allowed.is_empty() {
            return Err(Error::NoDevice(format!(
                "no device matches the selection {:?}",
                opts.selection
            )));
        }
        let mut nonces = 0u64;
        let mut last_fault: Option<Error> = None;
        loop {
            let lease = reg
                .acquire(WaitSpec {
                    allowed: allowed.clone(),
                    all: opts.latency,
                    deadline,
                    cancel: opts.cancel.as_ref(),
                    cpu_fallback: opts.cpu_fallback.unwrap_or(reg.policy.cpu_fallback),
                })
                .map_err(|e| match (e, last_fault.take()) {
                    (Error::NoDevice(_), Some(fault)) => fault,
                    (Error::Cancelled { .. }, _) => Error::Cancelled { nonces },
                    (Error::Timeout { elapsed, .. }, _) => Error::Timeout { elapsed, nonces },
                    (e, _) => e,
                })?;
            let ctl = Arc::new(
                SearchControl::new(opts.cancel.clone(), deadline)
                    .with_max_threads(opts.cpu_threads),
            );
            let runs = self.run_lease(&job, &lease.indices, &ctl);
            let indices = lease.indices.clone();
            drop(lease);
            let mut winner = None;
            for (&i, run) in indices.iter().zip(runs) {
                nonces += run.nonces;
                if let Some(t) = run.found {
                    winner.get_or_insert((i, t));
                }
                if let Some(e) = run.fault {
                    allowed.retain(|&d| d != i);
                    last_fault = Some(e);
                }
            }
            if let Some((i, transaction)) = winner {
                return Ok(PowResult {
                    transaction,
                    report: PowReport {
                        nonces,
                        elapsed: started.elapsed(),
                        device: reg.slots[i].info.id.clone(),
                    },
                });
            }
            if let Some(reason) = ctl.stop_reason() {
                if reason != StopReason::Found {
                    return Err(stop_error(reason, nonces, started.elapsed()));
                }
            }
            match &last_fault {
                Some(_) if !allowed.is_empty() => continue,
                Some(_) => return Err(last_fault.take().expect("checked")),
                None => {
                    return Err(Error::NoDevice(
                        "the device stopped without a nonce and without a reason".into(),
                    ))
                }
            }
        }
    }

    /// Run one search on every leased device at once, disjoint counter ranges: the first device
    /// on this thread, the others on their own device threads.
    fn run_lease(
        &self,
        job: &Arc<SearchJob>,
        indices: &[usize],
        ctl: &Arc<SearchControl>,
    ) -> Vec<DeviceRun> {
        let n = indices.len();
        if n == 1 {
            return vec![self.run_one(indices[0], job, CounterRange::ALL, ctl)];
        }
        let (rtx, rrx) = mpsc::channel();
        for (k, &i) in indices.iter().enumerate().skip(1) {
            let (engine, job, ctl, rtx) = (self.clone(), job.clone(), ctl.clone(), rtx.clone());
            self.inner.device_threads[i].submit(move || {
                let run = engine.run_one(i, &job, CounterRange::ALL.part(k, n), &ctl);
                let _ = rtx.send((k, run));
            });
        }
        drop(rtx);
        let mut runs: Vec<Option<DeviceRun>> = (0..n).map(|_| None).collect();
        runs[0] = Some(self.run_one(indices[0], job, CounterRange::ALL.part(0, n), ctl));
        for (k, run) in rrx {
            runs[k] = Some(run);
        }
        runs.into_iter()
            .map(|r| r.expect("every device thread reports"))
            .collect()
    }

    /// One device, one search, host check included.
    fn run_one(
        &self,
        i: usize,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> DeviceRun {
        let reg = &self.inner.registry;
        let slot = &reg.slots[i];
        let _in_flight = reg.enter(i);
        let t0 = Instant::now();
        let r = slot.device.search(job, range, ctl);
        let busy = t0.elapsed();
        match r {
            Ok(out) => match out.hit.map(|h| job.verify(h)) {
                Some(Some(tx)) => {
                    // Only a verified hit stops the others, and only the first one counts: two
                    // devices of a latency-mode search may both hit before either sees the flag.
                    let first = ctl.set_found();
                    reg.record(i, busy, first);
                    reg.healthy(i);
                    DeviceRun {
                        found: first.then_some(tx),
                        nonces: out.nonces,
                        fault: None,
                    }
                }
                Some(None) => {
                    reg.fault(i, busy);
                    DeviceRun {
                        found: None,
                        nonces: out.nonces,
                        fault: Some(Error::InvalidNonce {
                            device: slot.info.id.clone(),
                        }),
                    }
                }
                None => {
                    reg.record(i, busy, false);
                    DeviceRun {
                        found: None,
                        nonces: out.nonces,
                        fault: None,
                    }
                }
            },
            Err(e) => {
                reg.fault(i, busy);
                DeviceRun {
                    found: None,
                    nonces: 0,
                    fault: Some(e),
                }
            }
        }
    }

    /// PoW on many independent transactions, spread over the free devices; results in input
    /// order. Each transaction is a search of its own with `opts` (a `timeout` counts from the
    /// start of the whole batch).
    pub fn pow_many(
        &self,
        txs: &[Transaction],
        opts: &PowOptions,
    ) -> Vec<Result<PowResult, Error>> {
        let mut opts = opts.clone();
        opts.deadline = opts.deadline_from(Instant::now());
        opts.timeout = None;
        // Small searches: one transaction per CPU worker (see small.rs); the rest below.
        let mut results = self.pow_many_small(txs, &opts);
        let pending: Vec<usize> = (0..txs.len()).filter(|&k| results[k].is_none()).collect();
        if pending.len() <= 1 {
            for k in pending {
                results[k] = Some(self.pow_with(&txs[k], &opts));
            }
            return results
                .into_iter()
                .map(|r| r.expect("every job reports"))
                .collect();
        }
        let (rtx, rrx) = mpsc::channel();
        for k in pending {
            let (engine, tx, opts, rtx) = (self.clone(), txs[k].clone(), opts.clone(), rtx.clone());
            self.inner.runners.submit(move || {
                let _ = rtx.send((k, engine.pow_with(&tx, &opts)));
            });
        }
        drop(rtx);
        for (k, r) in rrx {
            results[k] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.expect("every job reports"))
            .collect()
    }

    /// Measure a device: nonces per second on a fixed pseudo-random transaction with an
    /// unreachable target, for `duration`.
    pub fn bench(&self, device_id: &str, duration: Duration) -> Result<BenchResult, Error> {
        let reg = &self.inner.registry;
        let i = reg
            .slots
            .iter()
            .position(|s| s.info.id == device_id)
            .ok_or_else(|| Error::NoDevice(format!("no device with id {device_id:?}")))?;
        let job = SearchJob::new(&bench_transaction(), 243)?;
        let lease = reg.acquire(WaitSpec {
            allowed: vec![i],
            all: false,
            deadline: None,
            cancel: None,
            cpu_fallback: false,
        })?;
        let t0 = Instant::now();
        let ctl = SearchControl::new(None, Some(t0 + duration));
        let run = self.run_one(i, &job, CounterRange::ALL, &ctl);
        let seconds = t0.elapsed().as_secs_f64();
        drop(lease);
        if let Some(e) = run.fault {
            return Err(e);
        }
        let info = &reg.slots[i].info;
        let detail_str = |k: &str| {
            info.details
                .get(k)
                .and_then(|v| v.as_str())
                .map(String::from)
        };
        Ok(BenchResult {
            backend: info.backend,
            device: info.name.clone(),
            device_id: info.id.clone(),
            kernel: detail_str("kernel").or_else(|| {
                info.details
                    .get("lanes")
                    .and_then(|v| v.as_u64())
                    .map(|l| format!("{l}-lane"))
            }),
            threads: info
                .details
                .get("threads")
                .and_then(|v| v.as_u64())
                .map(|t| t as usize),
            nonces: run.nonces,
            seconds,
            nonces_per_second: run.nonces as f64 / seconds.max(1e-9),
        })
    }

    /// Every device of the engine.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.inner
            .registry
            .slots
            .iter()
            .map(|s| s.info.clone())
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

    /// The CPU device (pool size, kernel).
    pub fn cpu(&self) -> &CpuDevice {
        &self.inner.cpu
    }
}

fn stop_error(reason: StopReason, nonces: u64, elapsed: Duration) -> Error {
    match reason {
        StopReason::Cancelled => Error::Cancelled { nonces },
        _ => Error::Timeout { elapsed, nonces },
    }
}

/// The fixed pseudo-random transaction `curlpow bench` searches.
pub fn bench_transaction() -> Transaction {
    let mut s = 0x243F_6A88_85A3_08D3u64;
    let trits: Vec<i8> = (0..crate::TRANSACTION_TRITS)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 3) as i8 - 1
        })
        .collect();
    Transaction::from_trits(&trits).expect("trits")
}
