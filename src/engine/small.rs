//! [`Engine::pow_many`]'s path for small searches: each transaction runs start to finish on one
//! CPU worker ([`CpuDevice::search_each`](crate::backend::cpu::CpuDevice)) instead of being split across
//! the pool, and the batch's mid-states are computed bit-sliced in one go.
//!
//! When: not latency mode, the CPU allowed by the selection, and the expected work per
//! transaction (3^MWM nonces) at most [`SMALL_WORK`] (CPU only) or [`TINY_WORK`] (when other
//! devices are allowed too, and CPU fallback is on: a GPU launch and read-back costs more than
//! a search this small on one CPU core, so tiny searches stay on the CPU). Anything this path does not finish (a host
//! check that fails, a CPU marked unhealthy) goes through the normal per-transaction path.
//!
//! The registry sees what it would see otherwise: one search, its nonces and its hit per
//! transaction, and the device's busy time as wall time (each job's share of its chunk's).

use std::sync::Arc;
use std::time::Instant;

use super::{stop_error, Engine, PowReport, PowResult, Request};
use crate::base::error::Error;
use crate::engine::registry::WaitSpec;
use crate::search::control::SearchControl;
use crate::search::search_job::{Mwm, SearchJob};
use crate::ternary::transaction::Transaction;

/// The most expected nonces per transaction for one-per-worker searches when only the CPU is
/// allowed: 3^10 (about 5 ms on one core). Above it a split across the pool costs under 2%.
pub(crate) const SMALL_WORK: f64 = 59_049.0;

/// The same when other devices are allowed too: 3^6 (under two transforms of the 512-lane
/// kernel, about 0.1 ms on one core).
pub(crate) const TINY_WORK: f64 = 729.0;

/// Jobs per CPU lease, per worker: the lease is given back between chunks, so other callers
/// waiting for the CPU get their turn.
const JOBS_PER_WORKER: usize = 16;

type Outcome = Option<Result<PowResult, Error>>;

impl Engine {
    /// The small-search path of `pow_many` (one request for the batch): an entry per
    /// transaction, `None` where the normal path must run it.
    pub(super) fn pow_many_small(
        &self,
        txs: &[Transaction],
        mwm: Mwm,
        req: &Request,
    ) -> Vec<Outcome> {
        let (opts, deadline) = (&req.opts, req.deadline);
        let mut out: Vec<Outcome> = (0..txs.len()).map(|_| None).collect();
        let reg = &self.inner.registry;
        let cpu = &self.inner.cpu;
        let me = Arc::as_ptr(cpu) as *const ();
        let allowed = reg.allowed(&opts.selection);
        let Some(&ci) = allowed
            .iter()
            .find(|&&i| Arc::as_ptr(&reg.slots[i].device) as *const () == me)
        else {
            return out;
        };
        let others = allowed.len() > 1;
        if others && !opts.cpu_fallback.unwrap_or(reg.policy.cpu_fallback) {
            // The CPU may not take searches that other devices could run.
            return out;
        }
        let limit = if others { TINY_WORK } else { SMALL_WORK };
        if opts.latency || txs.len() < 2 {
            return out;
        }
        if mwm.expected_work() > limit {
            return out;
        }
        let started = Instant::now();
        let refs: Vec<&Transaction> = txs.iter().collect();
        let mids = crate::engine::hash_batch::midstates(cpu, &refs);
        let jobs: Vec<SearchJob> = txs
            .iter()
            .zip(&mids)
            .map(|(t, m)| SearchJob::with_midstate(t, mwm, m))
            .collect();
        let workers = opts
            .cpu_threads
            .map_or(cpu.threads(), |n| n.min(cpu.threads()));
        let chunk = JOBS_PER_WORKER * workers.max(1);
        let device = reg.slots[ci].info.id.clone();
        for first in (0..jobs.len()).step_by(chunk) {
            let range = first..(first + chunk).min(jobs.len());
            let lease = reg.acquire(WaitSpec {
                allowed: vec![ci],
                work: mwm.expected_work() * range.len() as f64,
                all: false,
                deadline,
                cancel: opts.cancel.as_ref(),
                cpu_fallback: true,
            });
            let lease = match lease {
                Ok(l) => l,
                Err(e @ (Error::Timeout { .. } | Error::Cancelled { .. })) => {
                    let e = match e {
                        Error::Timeout { .. } => Error::Timeout {
                            elapsed: started.elapsed(),
                            nonces: 0,
                        },
                        e => e,
                    };
                    for slot in &mut out[first..] {
                        *slot = Some(Err(clone_stop(&e)));
                    }
                    return out;
                }
                // The CPU cannot be had (unhealthy, or waiting too long): the normal path
                // decides with every allowed device.
                Err(_) => return out,
            };
            let _in_flight = reg.enter(ci);
            let ctl = SearchControl::new(opts.cancel.clone(), deadline)
                .with_max_threads(opts.cpu_threads);
            let t0 = Instant::now();
            let runs = cpu.search_each(&jobs[range.clone()], &ctl);
            let ran = runs.iter().filter(|r| r.is_some()).count().max(1);
            let share = t0.elapsed() / ran as u32;
            let mut any_ok = false;
            for (k, run) in range.clone().zip(runs) {
                out[k] = match run {
                    None => ctl
                        .stop_reason()
                        .map(|r| Err(stop_error(r, 0, started.elapsed()))),
                    Some(run) => match (run.hit, run.verified) {
                        (Some(_), Some(transaction)) => {
                            reg.record(ci, share, run.nonces, true);
                            any_ok = true;
                            Some(Ok(PowResult {
                                transaction,
                                report: PowReport {
                                    nonces: run.nonces,
                                    elapsed: started.elapsed(),
                                    device: device.clone(),
                                },
                            }))
                        }
                        (Some(_), None) => {
                            // A hit the host check rejected: a CPU fault. The normal path
                            // retries it on whatever device is left.
                            reg.fault(
                                ci,
                                share,
                                run.nonces,
                                &Error::InvalidNonce {
                                    device: device.clone(),
                                },
                            );
                            None
                        }
                        (None, _) => {
                            reg.record(ci, share, run.nonces, false);
                            ctl.stop_reason()
                                .map(|r| Err(stop_error(r, run.nonces, started.elapsed())))
                        }
                    },
                };
            }
            if any_ok {
                reg.healthy(ci);
            }
            drop(lease);
            if ctl.stop_reason().is_some() {
                // Deadline or cancel: every job after this chunk stops the same way.
                let reason = ctl.stop_reason().expect("checked");
                for slot in &mut out[range.end..] {
                    *slot = Some(Err(stop_error(reason, 0, started.elapsed())));
                }
                return out;
            }
        }
        out
    }
}

/// A copy of a stop error (the error type is not `Clone`).
fn clone_stop(e: &Error) -> Error {
    match e {
        Error::Timeout { elapsed, nonces } => Error::Timeout {
            elapsed: *elapsed,
            nonces: *nonces,
        },
        _ => Error::Cancelled { nonces: 0 },
    }
}
