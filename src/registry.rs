//! The device registry: every device discovered once, a lease per search (one search per device
//! at a time), fair waiting, CPU fallback, health, and per-device statistics.
//!
//! ```text
//!   pow() ──► acquire(selection) ──► waiters: LazyDeque (FIFO) ──► dispatch: best free device
//!                                        ▲                           │ (GPU first; CPU after
//!                                        │ release / fault            │  the wait limit)
//!                                        └──────────── Lease ◄────────┘
//! ```
//! All lease state lives under one `parking_lot` mutex taken only at acquire and release, never
//! inside a search. Statistics are written once per search by the lease holder (the only writer
//! of that device at that time) and summed on read with the device's own per-worker counters.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde::Serialize;

use crate::control::CancelToken;
use crate::device::{Backend, Device, DeviceInfo, DeviceKind};
use crate::error::Error;
use crate::lazy_deque::LazyDeque;

/// Which devices a search may use. Empty lists mean "no restriction".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only these backends.
    pub backends: Vec<Backend>,
    /// Only these device ids.
    pub devices: Vec<String>,
    /// Never these device ids.
    pub exclude: Vec<String>,
}

impl Selection {
    /// Whether a device passes the selection.
    pub fn allows(&self, info: &DeviceInfo) -> bool {
        (self.backends.is_empty() || self.backends.contains(&info.backend))
            && (self.devices.is_empty() || self.devices.iter().any(|d| d == &info.id))
            && !self.exclude.iter().any(|d| d == &info.id)
    }
}

/// Per-device statistics for the running process.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceStats {
    /// Searches run (finished, with or without a hit).
    pub searches: u64,
    /// Nonces tried.
    pub nonces: u64,
    /// Searches that returned a nonce the host check accepted.
    pub hits: u64,
    /// Faults: driver errors and nonces the host check rejected.
    pub errors: u64,
    /// Seconds spent searching.
    pub busy_seconds: f64,
    /// The most searches ever seen running on this device at once (1 when leases work).
    pub max_concurrent: u64,
    /// False while the device is marked unhealthy after a fault (until it is probed again).
    pub healthy: bool,
}

/// A device with its statistics, as `curlpow devices --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    /// The device.
    #[serde(flatten)]
    pub info: DeviceInfo,
    /// Its statistics in this process.
    pub stats: DeviceStats,
}

#[derive(Default)]
struct SlotStats {
    searches: AtomicU64,
    hits: AtomicU64,
    errors: AtomicU64,
    busy_ns: AtomicU64,
    in_flight: AtomicUsize,
    max_concurrent: AtomicUsize,
}

pub(crate) struct Slot {
    pub(crate) device: Arc<dyn Device>,
    pub(crate) info: DeviceInfo,
    declared_speed: f64,
    stats: SlotStats,
}

impl Slot {
    fn is_cpu_pool(&self) -> bool {
        self.info.backend == Backend::Cpu
    }

    /// Nonces per second: measured once the device has worked a little, else declared.
    fn speed(&self) -> f64 {
        let busy = self.stats.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9;
        if busy > 0.05 {
            self.device.nonces_tried() as f64 / busy
        } else {
            self.declared_speed
        }
    }
}

/// A free device this many times slower than the fastest allowed one waits out the wait limit.
const SLOWER_FACTOR: f64 = 4.0;

struct Waiter {
    ticket: u64,
    allowed: Vec<usize>,
    /// Before this instant only devices within [`SLOWER_FACTOR`] of the fastest allowed one
    /// are taken (so the CPU pool waits for a busy GPU); `wait_limit` after arrival.
    slow_ok_after: Instant,
    all: bool,
}

struct State {
    busy: Vec<bool>,
    unhealthy_until: Vec<Option<Instant>>,
    waiters: LazyDeque<Waiter>,
    granted: Vec<(u64, Vec<usize>)>,
    next_ticket: u64,
}

/// How leases are handed out.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// How long a search waits for a busy fast device (a GPU) before it takes a much slower
    /// free one (the CPU pool) instead.
    pub wait_limit: Duration,
    /// Whether the CPU may serve a search that selected GPUs and waited past the limit.
    pub cpu_fallback: bool,
    /// The longest a search waits for any device; `None`: until its deadline or cancel.
    pub max_wait: Option<Duration>,
    /// How long a device that faulted sits out before it is tried again.
    pub reprobe_after: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            wait_limit: Duration::from_millis(50),
            cpu_fallback: true,
            max_wait: None,
            reprobe_after: Duration::from_secs(30),
        }
    }
}

pub(crate) struct Registry {
    pub(crate) slots: Vec<Slot>,
    state: Mutex<State>,
    cond: Condvar,
    pub(crate) policy: Policy,
}

/// A device held by one search; released on drop.
pub(crate) struct Lease<'a> {
    reg: &'a Registry,
    pub(crate) indices: Vec<usize>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut st = self.reg.state.lock();
        for &i in &self.indices {
            st.busy[i] = false;
        }
        self.reg.dispatch(&mut st);
    }
}

/// What a search waits with.
pub(crate) struct WaitSpec<'a> {
    pub allowed: Vec<usize>,
    pub all: bool,
    pub deadline: Option<Instant>,
    pub cancel: Option<&'a CancelToken>,
    pub cpu_fallback: bool,
}

impl Registry {
    pub(crate) fn new(devices: Vec<Arc<dyn Device>>, policy: Policy) -> Self {
        let slots: Vec<Slot> = devices
            .into_iter()
            .map(|device| {
                let info = device.info().clone();
                let declared_speed = declared_speed(&info);
                Slot {
                    device,
                    info,
                    declared_speed,
                    stats: SlotStats::default(),
                }
            })
            .collect();
        let n = slots.len();
        Registry {
            slots,
            state: Mutex::new(State {
                busy: vec![false; n],
                unhealthy_until: vec![None; n],
                waiters: LazyDeque::new(),
                granted: Vec::new(),
                next_ticket: 0,
            }),
            cond: Condvar::new(),
            policy,
        }
    }

    /// Indices of the devices a selection allows.
    pub(crate) fn allowed(&self, sel: &Selection) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| sel.allows(&self.slots[i].info))
            .collect()
    }

    /// Wait for a device (or, with `all`, every free allowed device, at least one).
    pub(crate) fn acquire(&self, spec: WaitSpec<'_>) -> Result<Lease<'_>, Error> {
        if spec.allowed.is_empty() {
            return Err(Error::NoDevice("the selection allows no device".into()));
        }
        let started = Instant::now();
        let has_gpu = spec.allowed.iter().any(|&i| !self.slots[i].is_cpu_pool());
        let mut allowed = spec.allowed.clone();
        if has_gpu && !spec.cpu_fallback {
            // The CPU serves only when it was the only thing selected.
            allowed.retain(|&i| !self.slots[i].is_cpu_pool());
        }
        let slow_ok_after = started + self.policy.wait_limit;
        let mut st = self.state.lock();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiters.push_back(Waiter {
            ticket,
            allowed: allowed.clone(),
            slow_ok_after,
            all: spec.all,
        });
        loop {
            self.dispatch(&mut st);
            if let Some(pos) = st.granted.iter().position(|g| g.0 == ticket) {
                let (_, indices) = st.granted.swap_remove(pos);
                return Ok(Lease { reg: self, indices });
            }
            let now = Instant::now();
            let stop = if spec.cancel.is_some_and(|c| c.is_cancelled()) {
                Some(Error::Cancelled { nonces: 0 })
            } else if spec.deadline.is_some_and(|d| now >= d) {
                Some(Error::Timeout {
                    elapsed: now - started,
                    nonces: 0,
                })
            } else if self
                .policy
                .max_wait
                .is_some_and(|m| now.duration_since(started) >= m)
            {
                Some(Error::NoDevice(format!(
                    "every selected device stayed busy for {:?}",
                    now.duration_since(started)
                )))
            } else if allowed
                .iter()
                .all(|&i| st.unhealthy_until[i].is_some_and(|u| now < u))
            {
                Some(Error::NoDevice(
                    "every selected device is marked unhealthy after a fault".into(),
                ))
            } else {
                None
            };
            if let Some(e) = stop {
                st.waiters.retain(|w| w.ticket != ticket);
                self.dispatch(&mut st);
                return Err(e);
            }
            // Wake for a release (notify), the CPU-fallback instant, the deadline, or to poll
            // the cancel token.
            let mut wake = now + Duration::from_millis(10);
            if now < slow_ok_after {
                wake = wake.min(slow_ok_after);
            }
            if let Some(d) = spec.deadline {
                wake = wake.min(d);
            }
            self.cond.wait_until(&mut st, wake);
        }
    }

    /// Hand free devices to waiters in FIFO order; wakes the waiters if anything was granted.
    fn dispatch(&self, st: &mut State) {
        let now = Instant::now();
        let mut granted_any = false;
        let mut i = 0;
        while i < st.waiters.len() {
            let w = st.waiters.iter().nth(i).expect("index in range");
            let healthy = |d: usize| st.unhealthy_until[d].is_none_or(|until| now >= until);
            // The fastest device this waiter could ever get; a free device much slower than it
            // (the CPU pool beside a GPU, a software driver beside the CPU pool) serves only
            // after the wait limit: waiting briefly for the fast one finishes sooner.
            let best = w
                .allowed
                .iter()
                .filter(|&&d| healthy(d))
                .map(|&d| self.slots[d].speed())
                .fold(0.0f64, f64::max);
            let patient = w.all || now >= w.slow_ok_after;
            let mut free: Vec<usize> = w
                .allowed
                .iter()
                .copied()
                .filter(|&d| !st.busy[d] && healthy(d))
                .filter(|&d| patient || self.slots[d].speed() * SLOWER_FACTOR >= best)
                .collect();
            if free.is_empty() {
                i += 1;
                continue;
            }
            free.sort_by(|&a, &b| self.slots[b].speed().total_cmp(&self.slots[a].speed()));
            if !w.all {
                free.truncate(1);
            }
            let ticket = w.ticket;
            for &d in &free {
                st.busy[d] = true;
            }
            st.waiters.remove(i);
            st.granted.push((ticket, free));
            granted_any = true;
        }
        if granted_any {
            self.cond.notify_all();
        }
    }

    /// Record a finished search on a device.
    pub(crate) fn record(&self, i: usize, busy: Duration, hit: bool) {
        let s = &self.slots[i].stats;
        s.searches.fetch_add(1, Ordering::Relaxed);
        s.busy_ns
            .fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
        if hit {
            s.hits.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Record a fault: the device sits out until it is probed again.
    pub(crate) fn fault(&self, i: usize, busy: Duration) {
        let s = &self.slots[i].stats;
        s.errors.fetch_add(1, Ordering::Relaxed);
        s.busy_ns
            .fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
        let mut st = self.state.lock();
        st.unhealthy_until[i] = Some(Instant::now() + self.policy.reprobe_after);
    }

    /// A device answered well: healthy again (the re-probe succeeded).
    pub(crate) fn healthy(&self, i: usize) {
        let mut st = self.state.lock();
        st.unhealthy_until[i] = None;
    }

    /// Count a search entering and leaving a device (checks that leases never overlap).
    pub(crate) fn enter(&self, i: usize) -> InFlight<'_> {
        let s = &self.slots[i].stats;
        let now = s.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
        s.max_concurrent.fetch_max(now, Ordering::AcqRel);
        InFlight(&s.in_flight)
    }

    pub(crate) fn reports(&self) -> Vec<DeviceReport> {
        let st = self.state.lock();
        let now = Instant::now();
        self.slots
            .iter()
            .enumerate()
            .map(|(i, s)| DeviceReport {
                info: s.info.clone(),
                stats: DeviceStats {
                    searches: s.stats.searches.load(Ordering::Relaxed),
                    nonces: s.device.nonces_tried(),
                    hits: s.stats.hits.load(Ordering::Relaxed),
                    errors: s.stats.errors.load(Ordering::Relaxed),
                    busy_seconds: s.stats.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9,
                    max_concurrent: s.stats.max_concurrent.load(Ordering::Relaxed) as u64,
                    healthy: st.unhealthy_until[i].is_none_or(|u| now >= u),
                },
            })
            .collect()
    }
}

/// Decrements a device's in-flight count on drop.
pub(crate) struct InFlight<'a>(&'a AtomicUsize);
impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The speed assumed before a device has been measured, in nonces per second.
fn declared_speed(info: &DeviceInfo) -> f64 {
    if let Some(v) = info
        .details
        .get("declared_nonces_per_second")
        .and_then(|v| v.as_f64())
    {
        return v;
    }
    match (info.backend, info.kind) {
        (Backend::Cpu, _) => 1e7,
        (_, DeviceKind::Gpu) => 1e9,
        (_, DeviceKind::Accelerator) => 1e8,
        // Software drivers of GPU APIs on the CPU: slower than the CPU pool.
        _ => 1e6,
    }
}

/// Same physical GPU seen by OpenCL and wgpu: keep one. Two GPUs match when their PCI vendor ids
/// are equal and their names are equal ignoring case and spaces; the k-th OpenCL match pairs with
/// the k-th wgpu match (drivers enumerate in bus order). Of a pair the faster declared backend
/// stays, OpenCL on a tie; the other is dropped and named in the kept device's details.
pub(crate) fn dedupe(devices: Vec<Arc<dyn Device>>) -> (Vec<Arc<dyn Device>>, Vec<String>) {
    let key = |info: &DeviceInfo| -> Option<(u64, String)> {
        if info.kind != DeviceKind::Gpu {
            return None;
        }
        let vendor = info
            .details
            .get("vendor_id")
            .or_else(|| info.details.get("vendor"))
            .and_then(|v| v.as_u64())?;
        let name: String = info
            .name
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        Some((vendor, name))
    };
    let mut drop = vec![false; devices.len()];
    let mut notes = Vec::new();
    let ocl: Vec<usize> = (0..devices.len())
        .filter(|&i| devices[i].info().backend == Backend::Opencl)
        .collect();
    let wg: Vec<usize> = (0..devices.len())
        .filter(|&i| devices[i].info().backend == Backend::Wgpu)
        .collect();
    let mut used = vec![false; devices.len()];
    for &o in &ocl {
        let Some(ko) = key(devices[o].info()) else {
            continue;
        };
        if let Some(&w) = wg
            .iter()
            .find(|&&w| !used[w] && key(devices[w].info()).as_ref() == Some(&ko))
        {
            used[w] = true;
            let (so, sw) = (
                declared_speed(devices[o].info()),
                declared_speed(devices[w].info()),
            );
            let (keep, gone) = if sw > so { (w, o) } else { (o, w) };
            drop[gone] = true;
            notes.push(format!(
                "{} and {} are the same GPU; using {}",
                devices[o].info().id,
                devices[w].info().id,
                devices[keep].info().id
            ));
        }
    }
    let kept = devices
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(dev, _)| dev)
        .collect();
    (kept, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::SearchControl;
    use crate::device::SearchOutcome;
    use crate::search::{CounterRange, SearchJob};

    struct Named(DeviceInfo);
    impl Device for Named {
        fn info(&self) -> &DeviceInfo {
            &self.0
        }
        fn search(
            &self,
            _: &SearchJob,
            _: CounterRange,
            _: &SearchControl,
        ) -> Result<SearchOutcome, Error> {
            Ok(SearchOutcome {
                hit: None,
                nonces: 0,
            })
        }
        fn nonces_tried(&self) -> u64 {
            0
        }
    }

    fn dev(
        id: &str,
        backend: Backend,
        name: &str,
        kind: DeviceKind,
        vendor: u64,
    ) -> Arc<dyn Device> {
        let mut details = serde_json::Map::new();
        let key = if backend == Backend::Opencl {
            "vendor_id"
        } else {
            "vendor"
        };
        details.insert(key.into(), vendor.into());
        Arc::new(Named(DeviceInfo {
            id: id.into(),
            backend,
            name: name.into(),
            kind,
            details,
        }))
    }

    fn ids(devs: &[Arc<dyn Device>]) -> Vec<String> {
        devs.iter().map(|d| d.info().id.clone()).collect()
    }

    #[test]
    fn the_same_gpu_through_two_backends_counts_once() {
        let gpu = DeviceKind::Gpu;
        let devices = vec![
            dev("opencl:0:0", Backend::Opencl, "NVIDIA H200", gpu, 0x10de),
            dev("opencl:0:1", Backend::Opencl, "NVIDIA H200", gpu, 0x10de),
            dev("wgpu:0", Backend::Wgpu, "NVIDIA  h200", gpu, 0x10de),
            dev("wgpu:1", Backend::Wgpu, "NVIDIA H200", gpu, 0x10de),
            // Another vendor's GPU of the same name is a different card.
            dev("wgpu:2", Backend::Wgpu, "NVIDIA H200", gpu, 0x1002),
            // Software devices are never merged.
            dev(
                "opencl:1:0",
                Backend::Opencl,
                "llvmpipe",
                DeviceKind::Cpu,
                0x10005,
            ),
            dev(
                "wgpu:3",
                Backend::Wgpu,
                "llvmpipe",
                DeviceKind::Cpu,
                0x10005,
            ),
        ];
        let (kept, notes) = dedupe(devices);
        assert_eq!(
            ids(&kept),
            ["opencl:0:0", "opencl:0:1", "wgpu:2", "opencl:1:0", "wgpu:3"]
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("opencl:0:0") && notes[0].contains("wgpu:0"));
    }

    #[test]
    fn the_faster_declared_backend_stays() {
        let mut fast = DeviceInfo {
            id: "wgpu:0".into(),
            backend: Backend::Wgpu,
            name: "GPU X".into(),
            kind: DeviceKind::Gpu,
            details: Default::default(),
        };
        fast.details.insert("vendor".into(), 7u64.into());
        fast.details
            .insert("declared_nonces_per_second".into(), 5e9.into());
        let devices: Vec<Arc<dyn Device>> = vec![
            dev("opencl:0:0", Backend::Opencl, "GPU X", DeviceKind::Gpu, 7),
            Arc::new(Named(fast)),
        ];
        let (kept, _) = dedupe(devices);
        assert_eq!(ids(&kept), ["wgpu:0"]);
    }
}
