//! [`Engine::bench`]: a device's search rate on a fixed transaction with an unreachable target.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::Engine;
use crate::control::SearchControl;
use crate::device::Backend;
use crate::error::Error;
use crate::registry::WaitSpec;
use crate::search::{CounterRange, SearchJob};
use crate::transaction::Transaction;

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
}

impl Engine {
    /// Measure a device: nonces per second on a fixed pseudo-random transaction with an
    /// unreachable target, for `duration`. Compiling the device's kernel happens before the
    /// clock starts.
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
            work: 0.0,
            all: false,
            deadline: None,
            cancel: None,
            cpu_fallback: false,
        })?;
        let slot = &reg.slots[i];
        slot.device.prepare()?;
        let t0 = Instant::now();
        let ctl = SearchControl::new(None, t0.checked_add(duration));
        let run = self.run_one(i, &job, CounterRange::ALL, &ctl);
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
        })
    }
}

/// The fixed pseudo-random transaction `curlpow bench` searches.
pub fn bench_transaction() -> Transaction {
    let trits: Vec<i8> = crate::xorshift::trits(0x243F_6A88_85A3_08D3)
        .take(crate::TRANSACTION_TRITS)
        .collect();
    Transaction::from_trits(&trits).expect("trits")
}
