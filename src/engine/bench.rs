//! [`Engine::bench`]: a device's search rate on a fixed transaction with an unreachable target;
//! [`Engine::bench_latency`]: whole PoWs on one device, their latency split into mid-state,
//! launches, read-back and host check; [`Engine::prepare_device`]: compile a device's kernel
//! now.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::pow_job::PowJob;
use super::Engine;
use crate::base::error::{Error, InternalError};
use crate::engine::registry::{Lease, Registry, WaitSpec};
use crate::search::control::SearchControl;
use crate::search::device::Backend;
use crate::search::launch_stats::LaunchStats;
use crate::search::nonce::CounterRange;
use crate::search::search_job::{Mwm, SearchJob};
use crate::ternary::transaction::Transaction;

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
    /// The kernel variant.
    pub kernel: String,
    /// CPU worker threads (CPU only).
    pub threads: Option<usize>,
    /// Nonces tried.
    pub nonces: u64,
    /// Seconds measured (the device's one-time setup, such as a kernel compile, excluded).
    pub seconds: f64,
    /// Nonces tried per second.
    pub nonces_per_second: f64,
    /// Milliseconds this call spent preparing the device (compiling its kernel) before the
    /// clock started; 0 when it was already prepared.
    pub prepare_ms: f64,
    /// A GPU's launch shape after the run (the size and length it adapted to), its build times
    /// and compiler facts; `None` for devices without launches.
    pub launch: Option<LaunchStats>,
}

/// Mean, median, 90th percentile, min and max of a series, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Spread {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            median: rank(0.5),
            p90: rank(0.9),
            min: v[0],
            max: v[v.len() - 1],
        })
    }
}

/// Whole PoWs on one device ([`Engine::bench_latency`]): each one's latency split into its
/// parts, summarised over the runs. All in milliseconds.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct LatencyReport {
    /// The device's id.
    pub device_id: String,
    /// The device's name.
    pub device: String,
    /// The kernel variant.
    pub kernel: String,
    /// The MWM of every PoW.
    pub mwm: usize,
    /// PoWs run (each on a different pseudo-random transaction).
    pub pows: usize,
    /// Mean nonces tried per PoW (3^MWM expected).
    pub mean_nonces: f64,
    /// The whole PoW: mid-state, device search, host check.
    pub total: Spread,
    /// The host's mid-state (the absorb of the first 32 blocks).
    pub mid_state: Spread,
    /// The device search, start to return.
    pub search: Spread,
    /// Start of the search until the hit's result was on the host.
    pub to_hit: Option<Spread>,
    /// Device time in launches up to and including the hit's (OpenCL profiling; `None` where
    /// the API does not say).
    pub launches: Option<Spread>,
    /// `to_hit - launches`: reading the result back and the host's turnarounds up to the hit
    /// (where the device times are known).
    pub read_back: Option<Spread>,
    /// After the hit was seen until the launch still in flight had ended.
    pub drain: Option<Spread>,
    /// The host check of the nonce (the full hash) and the engine's bookkeeping.
    pub verify: Spread,
}

impl Engine {
    /// Prepare a device now (compile its kernel, open its session; idempotent) and return how
    /// long that took; a device already prepared returns at once.
    pub fn prepare_device(&self, device_id: &str) -> Result<Duration, Error> {
        let reg = &self.inner.registry;
        let slot = reg
            .slots
            .iter()
            .find(|s| s.info.id == device_id)
            .ok_or_else(|| Error::NoDevice(format!("no device with id {device_id:?}")))?;
        let t = Instant::now();
        slot.device.prepare()?;
        Ok(t.elapsed())
    }

    /// Measure a device: nonces per second on a fixed pseudo-random transaction with an
    /// unreachable target, for `duration`. Compiling the device's kernel happens before the
    /// clock starts.
    pub fn bench(&self, device_id: &str, duration: Duration) -> Result<BenchResult, Error> {
        let i = self.slot_index(device_id)?;
        let job = SearchJob::new(&bench_transaction(), 243)?;
        self.bench_job(i, &job, CounterRange::ALL, duration)
    }

    /// Measure device `i` on `job` over `range` for `duration`: hold it, prepare it (not
    /// measured), search until the deadline, report the rate.
    pub(super) fn bench_job<J: PowJob>(
        &self,
        i: usize,
        job: &J,
        range: CounterRange,
        duration: Duration,
    ) -> Result<BenchResult, Error> {
        let reg = &self.inner.registry;
        let lease = hold(reg, i)?;
        let slot = &reg.slots[i];
        let p = Instant::now();
        slot.device.prepare()?;
        let prepare_ms = p.elapsed().as_secs_f64() * 1e3;
        let t0 = Instant::now();
        let ctl = SearchControl::new(None, t0.checked_add(duration));
        let run = self.run_one(i, job, range, &ctl);
        let seconds = t0.elapsed().as_secs_f64();
        drop(lease);
        if let Some(e) = run.fault {
            return Err(e);
        }
        let info = &slot.info;
        Ok(BenchResult {
            backend: info.backend,
            device: info.name.clone(),
            device_id: info.id.clone(),
            kernel: info.kernel.clone(),
            threads: (info.backend == Backend::Cpu).then(|| self.cpu().threads()),
            nonces: run.nonces,
            seconds,
            nonces_per_second: run.nonces as f64 / seconds.max(1e-9),
            prepare_ms,
            launch: slot.device.launch_stats(),
        })
    }

    /// Run `pows` whole PoWs at `mwm` on one device (pseudo-random transactions, the device
    /// prepared and warmed up by one PoW first), holding it for the whole run, and split each
    /// one's latency into mid-state, launches, read-back, drain and host check.
    pub fn bench_latency(
        &self,
        device_id: &str,
        mwm: usize,
        pows: usize,
    ) -> Result<LatencyReport, Error> {
        let mwm = Mwm::try_from(mwm)?;
        let reg = &self.inner.registry;
        let i = self.slot_index(device_id)?;
        let lease = hold(reg, i)?;
        let slot = &reg.slots[i];
        slot.device.prepare()?;
        let (mut total, mut mid, mut search, mut verify) = (vec![], vec![], vec![], vec![]);
        let (mut to_hit, mut launches, mut read_back, mut drain) = (vec![], vec![], vec![], vec![]);
        let mut nonces = 0u64;
        // Run 0 warms the device up (launch sizing, caches) and is not counted.
        for k in 0..=pows {
            let tx = latency_transaction(k as u64);
            let t0 = Instant::now();
            let job = SearchJob::prepare(&tx, mwm);
            let t1 = Instant::now();
            let ctl = SearchControl::new(None, None);
            let s0 = Instant::now();
            let run = self.run_one(i, &job, CounterRange::ALL, &ctl);
            let t2 = Instant::now();
            if let Some(e) = run.fault {
                return Err(e);
            }
            if run.found.is_none() {
                return Err(InternalError::SearchEndedEmpty {
                    device: slot.info.id.clone(),
                }
                .into());
            }
            if k == 0 {
                continue;
            }
            let timing = slot.device.launch_stats().and_then(|l| l.last_search);
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let search_ms = timing.map_or(ms(t2 - s0), |t| t.wall_ms);
            total.push(ms(t2 - t0));
            mid.push(ms(t1 - t0));
            search.push(search_ms);
            verify.push((ms(t2 - s0) - search_ms).max(0.0));
            nonces += run.nonces;
            if let Some(t) = timing {
                if let Some(h) = t.to_hit_ms {
                    to_hit.push(h);
                    if let Some(k) = t.kernel_to_hit_ms {
                        launches.push(k);
                        read_back.push((h - k).max(0.0));
                    }
                }
                drain.push(t.drain_ms);
            }
        }
        drop(lease);
        let info = &slot.info;
        let spread = |v: &[f64]| Spread::of(v).unwrap_or_default();
        Ok(LatencyReport {
            device_id: info.id.clone(),
            device: info.name.clone(),
            kernel: info.kernel.clone(),
            mwm: mwm.zeros(),
            pows,
            mean_nonces: nonces as f64 / pows.max(1) as f64,
            total: spread(&total),
            mid_state: spread(&mid),
            search: spread(&search),
            to_hit: Spread::of(&to_hit),
            launches: Spread::of(&launches),
            read_back: Spread::of(&read_back),
            drain: Spread::of(&drain),
            verify: spread(&verify),
        })
    }

    pub(super) fn slot_index(&self, device_id: &str) -> Result<usize, Error> {
        self.inner
            .registry
            .slots
            .iter()
            .position(|s| s.info.id == device_id)
            .ok_or_else(|| Error::NoDevice(format!("no device with id {device_id:?}")))
    }
}

/// The fixed pseudo-random transaction `curlpow bench` searches.
pub fn bench_transaction() -> Transaction {
    let trits: Vec<i8> = crate::ternary::xorshift::trits(0x243F_6A88_85A3_08D3)
        .take(crate::ternary::transaction::TRANSACTION_TRITS)
        .collect();
    Transaction::from_trits(&trits).expect("trits")
}

/// The `k`-th pseudo-random transaction of [`Engine::bench_latency`].
fn latency_transaction(k: u64) -> Transaction {
    let trits: Vec<i8> =
        crate::ternary::xorshift::trits(0x1319_8A2E_0370_7344 ^ k.wrapping_mul(0x9E37))
            .take(crate::ternary::transaction::TRANSACTION_TRITS)
            .collect();
    Transaction::from_trits(&trits).expect("trits")
}

/// Wait for device `i` alone and hold it: a measurement runs with nothing else on it.
pub(super) fn hold(reg: &Registry, i: usize) -> Result<Lease<'_>, Error> {
    reg.acquire(WaitSpec {
        allowed: vec![i],
        work: 0.0,
        all: false,
        deadline: None,
        cancel: None,
        cpu_fallback: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads() {
        let s = Spread::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((s.min, s.median, s.max, s.mean), (1.0, 3.0, 5.0, 3.0));
        assert_eq!(s.p90, 5.0);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn latency_bench_on_the_cpu() {
        let e = Engine::builder().backends(&[Backend::Cpu]).build().unwrap();
        let r = e.bench_latency("cpu", 5, 3).unwrap();
        assert_eq!(r.pows, 3);
        assert!(r.total.max >= r.total.min && r.total.min > 0.0);
        assert!(r.launches.is_none(), "the CPU pool has no launches");
        assert!(e.bench_latency("nope", 5, 1).is_err());
    }
}
