//! Fault injection for tests (Cargo feature `fault-injection`; never in a default build).
//!
//! A [`FaultDevice`] is a device that claims to be a fast GPU and, on a chosen share of its
//! searches, fails the way real drivers do: a launch error, a nonce the host check must reject,
//! or a search that never finds anything. Its other searches are real: one CPU thread running
//! the fastest CPU kernel, so results stay valid. The `curlpow` binary of such a build adds one
//! device per entry of `CURLPOW_INJECT_FAULT`, which is how CLI-level tests reach the fault
//! paths of the engine without a broken driver:
//!
//! ```text
//! CURLPOW_INJECT_FAULT=wrong-nonce            # fault:0 returns a bad nonce on every search
//! CURLPOW_INJECT_FAULT=launch-error:0.5,hang  # fault:0 fails every other launch; fault:1 hangs
//! ```
//!
//! Each entry is `KIND[:RATE]`: `KIND` is `launch-error`, `wrong-nonce`, `hang` or `none` (a
//! working device), `RATE` the share of searches that fault, 0 to 1 (default 1). The faults are
//! spread evenly and deterministically, starting with the first: at rate 0.25, searches 1, 5, 9,
//! … fault (so a device that gets any search shows its fault).
//!
//! ```
//! use curlpow::fault::{FaultDevice, FaultSpec};
//! use curlpow::{Backend, Engine, Transaction};
//!
//! let spec: FaultSpec = "wrong-nonce".parse().unwrap();
//! let engine = Engine::builder()
//!     .threads(1)
//!     .backends(&[Backend::Cpu])
//!     .add_device(FaultDevice::new(0, spec))
//!     .build()
//!     .unwrap();
//! let tx: Transaction = "9".repeat(2673).parse().unwrap();
//! // fault:0 is tried first and lies; the host check catches it and the CPU finds the nonce.
//! let done = engine.pow(&tx, 4).unwrap();
//! assert_eq!(done.report.device, "cpu");
//! ```

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::backend::cpu::{CpuKernel, KernelHooks};
use crate::base::env::INJECT_FAULT;
use crate::base::error::Error;
use crate::search::control::{Counters, SearchControl, Worker};
use crate::search::device::{Backend, Device, DeviceInfo, DeviceKind, SearchOutcome};
use crate::search::nonce::{CounterRange, Hit, MAX_LANES};
use crate::search::search_job::SearchJob;

/// What a faulty search does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// Never faults: a working (one-thread) device.
    None,
    /// The search fails at once with a driver error ([`Error::Backend`]).
    LaunchError,
    /// The search returns a nonce whose hash misses the target (the host check must reject it).
    WrongNonce,
    /// The search finds nothing and returns only when the search is stopped (a nonce found
    /// elsewhere, the deadline, a cancel): a device stuck in its kernel.
    Hang,
}

impl FaultKind {
    /// The name used in `CURLPOW_INJECT_FAULT`.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::None => "none",
            FaultKind::LaunchError => "launch-error",
            FaultKind::WrongNonce => "wrong-nonce",
            FaultKind::Hang => "hang",
        }
    }
}

/// One fault-injecting device: what it does and on which share of its searches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultSpec {
    /// What a faulty search does.
    pub kind: FaultKind,
    /// The share of searches that fault, 0 to 1.
    pub rate: f64,
}

impl FromStr for FaultSpec {
    type Err = Error;

    /// `KIND[:RATE]`, e.g. `wrong-nonce`, `launch-error:0.5`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = |why: String| Error::Config(format!("{INJECT_FAULT} entry {s:?}: {why}"));
        let (kind, rate) = match s.trim().split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s.trim(), None),
        };
        let kind = [
            FaultKind::None,
            FaultKind::LaunchError,
            FaultKind::WrongNonce,
            FaultKind::Hang,
        ]
        .into_iter()
        .find(|k| k.name() == kind)
        .ok_or_else(|| bad("unknown kind (known: launch-error, wrong-nonce, hang, none)".into()))?;
        let rate = match rate {
            None => 1.0,
            Some(r) => match r.trim().parse::<f64>() {
                Ok(v) if (0.0..=1.0).contains(&v) => v,
                _ => return Err(bad(format!("rate {r:?} is not a number from 0 to 1"))),
            },
        };
        Ok(FaultSpec { kind, rate })
    }
}

/// The devices `CURLPOW_INJECT_FAULT` asks for (comma-separated specs); none when it is unset
/// or empty.
pub fn specs_from_env() -> Result<Vec<FaultSpec>, Error> {
    match crate::base::env::get(INJECT_FAULT).map_err(Error::Config)? {
        Some(v) => v.split(',').map(str::parse).collect(),
        None => Ok(Vec::new()),
    }
}

/// A test device that fails on purpose (see the [module docs](self)).
pub struct FaultDevice {
    info: DeviceInfo,
    spec: FaultSpec,
    kernel: CpuKernel,
    searches: AtomicU64,
    counters: Counters,
}

impl FaultDevice {
    /// Device `fault:{index}`: a custom "GPU" that declares itself fast (1e9 nonces/s), so the
    /// registry tries it before the CPU.
    pub fn new(index: usize, spec: FaultSpec) -> Arc<FaultDevice> {
        let kernel = CpuKernel::detect();
        Arc::new(FaultDevice {
            info: DeviceInfo::new(
                format!("fault:{index}"),
                Backend::Custom,
                format!(
                    "fault injection: {} at rate {}",
                    spec.kind.name(),
                    spec.rate
                ),
                DeviceKind::Gpu,
            )
            .with_lanes(kernel.lanes())
            .with_kernel(kernel.name())
            .with_declared_speed(1e9)
            .with_detail("fault", spec.kind.name())
            .with_detail("fault_rate", spec.rate),
            spec,
            kernel,
            searches: AtomicU64::new(0),
            counters: Counters::new(1),
        })
    }

    /// Whether search number `n` (0-based) faults: evenly spread, `rate` of them, the first one
    /// included.
    fn faults(&self, n: u64) -> bool {
        let r = self.spec.rate;
        ((n + 1) as f64 * r).ceil() > (n as f64 * r).ceil()
    }

    /// A nonce the host check rejects: the first of lane 0's counters whose hash misses the
    /// target (at MWM 0 every nonce is valid, so a lane number out of range instead).
    fn wrong_hit(job: &SearchJob) -> Hit {
        if job.mwm() > 0 {
            for counter in 0..64 {
                let hit = Hit { counter, lane: 0 };
                if job.verify(hit).is_none() {
                    return hit;
                }
            }
        }
        Hit {
            counter: 0,
            lane: MAX_LANES,
        }
    }
}

impl Device for FaultDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let n = self.searches.fetch_add(1, Ordering::Relaxed);
        let kind = if self.faults(n) {
            self.spec.kind
        } else {
            FaultKind::None
        };
        match kind {
            FaultKind::LaunchError => Err(Error::Backend {
                backend: Backend::Custom,
                device: self.info.id.clone(),
                message: format!("kernel launch failed (injected by {INJECT_FAULT})"),
            }),
            FaultKind::WrongNonce => Ok(SearchOutcome {
                hit: Some(Self::wrong_hit(job)),
                nonces: 0,
            }),
            FaultKind::Hang => {
                while !ctl.should_stop() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(SearchOutcome {
                    hit: None,
                    nonces: 0,
                })
            }
            _ => {
                let mut w = Worker::new(ctl, &self.counters, 0);
                let hit = self.kernel.search_range(job, range, &mut w)?;
                Ok(SearchOutcome {
                    hit,
                    nonces: w.tried,
                })
            }
        }
    }

    fn nonces_tried(&self) -> u64 {
        self.counters.sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_reject() {
        let s: FaultSpec = "launch-error:0.5".parse().unwrap();
        assert_eq!(s.kind, FaultKind::LaunchError);
        assert_eq!(s.rate, 0.5);
        assert_eq!("hang".parse::<FaultSpec>().unwrap().rate, 1.0);
        for bad in ["", "boom", "hang:2", "hang:-1", "hang:nan", "wrong-nonce:x"] {
            let e = bad.parse::<FaultSpec>().unwrap_err().to_string();
            assert!(e.contains(INJECT_FAULT), "{bad:?}: {e}");
        }
    }

    #[test]
    fn faults_are_spread_evenly() {
        let d = FaultDevice::new(0, "wrong-nonce:0.25".parse().unwrap());
        let hits: Vec<u64> = (0..12).filter(|&n| d.faults(n)).collect();
        assert_eq!(hits, vec![0, 4, 8]);
        let all = FaultDevice::new(0, "hang".parse().unwrap());
        assert!((0..10).all(|n| all.faults(n)));
        let none = FaultDevice::new(0, "hang:0".parse().unwrap());
        assert!((0..10).all(|n| !none.faults(n)));
    }

    #[test]
    fn a_wrong_nonce_fails_the_host_check() {
        let tx: crate::ternary::transaction::Transaction = "9".repeat(2673).parse().unwrap();
        for mwm in [0, 1, 5, 243] {
            let job = SearchJob::new(&tx, mwm).unwrap();
            assert!(
                job.verify(FaultDevice::wrong_hit(&job)).is_none(),
                "mwm {mwm}"
            );
        }
    }
}
