//! How long a search is expected to take on a device: the estimate the registry dispatches by.
//!
//! A device's time for a search of `W` expected nonces (3^MWM) is modelled as
//! `max(floor, W / rate)`: `rate` is its throughput, measured as it works (nonces over busy
//! time, with the backend's declared speed as a prior worth [`PRIOR_SECONDS`] of work), and
//! `floor` the shortest search it ever finished (one kernel launch on a GPU: a software Vulkan
//! driver never finishes a search in under its dispatch time, however small the MWM), with a
//! per-kind default until one is seen.

use std::sync::atomic::Ordering;

use super::stats::SlotStats;
use crate::search::device::{Backend, DeviceInfo, DeviceKind};

/// The declared speed counts as this much measured work.
const PRIOR_SECONDS: f64 = 0.05;

/// The speed assumed before a device has been measured, in nonces per second.
pub(crate) fn declared_speed(info: &DeviceInfo) -> f64 {
    if let Some(v) = info
        .declared_nonces_per_second
        .filter(|v| v.is_finite() && *v > 0.0)
    {
        return v;
    }
    match (info.backend, info.kind, info.software) {
        (Backend::Cpu, _, _) => 1e7,
        (_, _, true) => 1e6,
        (_, DeviceKind::Gpu, _) => 1e9,
        (_, DeviceKind::Accelerator, _) => 1e8,
        // A CPU driver of a GPU API not marked as software, or something unknown.
        _ => 1e6,
    }
}

/// The shortest search assumed before one has been seen, in seconds.
fn declared_floor(info: &DeviceInfo) -> f64 {
    match info.backend {
        // One transform of a pool's worth of lanes, plus waking the pool.
        Backend::Cpu => 50e-6,
        // One launch and its read-back.
        _ => 5e-3,
    }
}

/// A device's speed model.
pub(crate) struct Speed {
    declared: f64,
    floor: f64,
}

impl Speed {
    pub(crate) fn new(info: &DeviceInfo) -> Self {
        Speed {
            declared: declared_speed(info),
            floor: declared_floor(info),
        }
    }

    /// Throughput in nonces per second.
    pub(crate) fn rate(&self, stats: &SlotStats) -> f64 {
        let busy = stats.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9;
        let nonces = stats.nonces.load(Ordering::Relaxed) as f64;
        (nonces + self.declared * PRIOR_SECONDS) / (busy + PRIOR_SECONDS)
    }

    /// The shortest time a search takes, in seconds.
    pub(crate) fn floor(&self, stats: &SlotStats) -> f64 {
        match stats.min_hit_ns.load(Ordering::Relaxed) {
            u64::MAX => self.floor,
            ns => ns as f64 * 1e-9,
        }
    }

    /// Expected seconds for a search of `work` expected nonces.
    pub(crate) fn time(&self, stats: &SlotStats, work: f64) -> f64 {
        self.floor(stats).max(work / self.rate(stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_speed_replaces_the_declared_one() {
        let info =
            DeviceInfo::new("x", Backend::Wgpu, "x", DeviceKind::Gpu).with_declared_speed(1e9);
        let s = Speed::new(&info);
        let stats = SlotStats::new();
        assert!((s.rate(&stats) - 1e9).abs() < 1.0);
        // Five seconds at 1 M nonces/s outweigh the prior.
        stats.record(std::time::Duration::from_secs(5), 5_000_000, true);
        assert!(s.rate(&stats) < 2.1e7, "{}", s.rate(&stats));
        assert!((s.floor(&stats) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn small_searches_cost_the_floor() {
        let info = DeviceInfo::new("lavapipe", Backend::Wgpu, "llvmpipe", DeviceKind::Cpu)
            .with_software(true);
        let s = Speed::new(&info);
        let stats = SlotStats::new();
        stats.record(std::time::Duration::from_millis(300), 262_144, true);
        let mwm5 = crate::search::search_job::Mwm::new(5).unwrap();
        assert!((s.time(&stats, mwm5.expected_work()) - 0.3).abs() < 1e-9);
    }
}
