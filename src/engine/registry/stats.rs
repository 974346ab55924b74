//! Per-device statistics: written once per search by the lease holder (the only search on that
//! device at that time), summed on read.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::search::device::DeviceInfo;

/// Per-device statistics for the running process.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct DeviceStats {
    /// Searches run (finished, with or without a hit).
    pub searches: u64,
    /// Nonces tried.
    pub nonces: u64,
    /// Searches whose nonce the host check accepted and that delivered the result (a search
    /// that several devices ran at once in latency mode counts once, for the device that won).
    pub hits: u64,
    /// Faults: driver errors and nonces the host check rejected.
    pub errors: u64,
    /// Seconds spent searching (kernel compiles and other one-time setup excluded).
    pub busy_seconds: f64,
    /// The speed the registry ranks the device by, in nonces per second: measured as it works,
    /// seeded by the backend's estimate.
    pub nonces_per_second: f64,
    /// The most searches ever seen running on this device at once (1 when leases work).
    pub max_concurrent: u64,
    /// Searches running on this device now (0 idle, 1 busy).
    pub searching: u64,
    /// False while the device is marked unhealthy after a fault (until it is probed again).
    pub healthy: bool,
    /// The last fault, in words, if there was one.
    pub last_fault: Option<String>,
}

/// A device with its statistics, as `curlpow devices --json` prints it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DeviceReport {
    /// The device.
    #[serde(flatten)]
    pub info: DeviceInfo,
    /// Its statistics in this process.
    pub stats: DeviceStats,
}

/// The counters behind [`DeviceStats`].
#[derive(Default)]
pub(crate) struct SlotStats {
    pub(crate) searches: AtomicU64,
    pub(crate) hits: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
    /// Nonces of the searches recorded here (the device's own counter also counts direct use).
    pub(crate) nonces: AtomicU64,
    /// The shortest search that ended in a hit: the device's floor (one launch on a GPU).
    pub(crate) min_hit_ns: AtomicU64,
    pub(crate) in_flight: AtomicUsize,
    pub(crate) max_concurrent: AtomicUsize,
}

impl SlotStats {
    pub(crate) fn new() -> Self {
        SlotStats {
            min_hit_ns: AtomicU64::new(u64::MAX),
            ..Default::default()
        }
    }

    pub(crate) fn record(&self, busy: Duration, nonces: u64, hit: bool) {
        let ns = u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX);
        self.searches.fetch_add(1, Ordering::Relaxed);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.nonces.fetch_add(nonces, Ordering::Relaxed);
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.min_hit_ns.fetch_min(ns, Ordering::Relaxed);
        }
    }
}

/// Decrements a device's in-flight count on drop.
pub(crate) struct InFlightGuard<'a>(pub(crate) &'a AtomicUsize);

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
