//! The device registry: every device discovered once, a lease per search (one search per device
//! at a time), FIFO waiting, dispatch by expected finishing time, health, and per-device
//! statistics. The design notes are in `README.md` beside this file.
//!
//! ```text
//!   pow() ──► acquire(selection) ──► waiters: LazyDeque (FIFO) ──► dispatch: the free device
//!                                        ▲                           │ that finishes soonest,
//!                                        │ release / fault            │ counting the queue
//!                                        └──────────── Lease ◄────────┘
//! ```
//! All lease state lives under one `parking_lot` mutex taken only at acquire, release and
//! fault, never inside a search.

mod dedupe;
mod selection;
mod speed;
mod stats;
#[cfg(test)]
mod tests;

pub(crate) use dedupe::dedupe;
pub use selection::Selection;
pub use stats::{DeviceReport, DeviceStats};

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::base::error::Error;
use crate::base::lazy_deque::LazyDeque;
use crate::search::control::CancelToken;
use crate::search::device::{Backend, Device, DeviceInfo};
use speed::Speed;
use stats::{InFlightGuard, SlotStats};

pub(crate) struct DeviceSlot {
    pub(crate) device: Arc<dyn Device>,
    pub(crate) info: DeviceInfo,
    speed: Speed,
    stats: SlotStats,
}

impl DeviceSlot {
    fn is_cpu_pool(&self) -> bool {
        self.info.backend == Backend::Cpu
    }

    /// Whether its searches run on the host's CPU cores: the pool, or a software driver.
    fn on_host_cores(&self) -> bool {
        self.is_cpu_pool() || self.info.software
    }

    fn rate(&self) -> f64 {
        self.speed.rate(&self.stats)
    }

    fn time(&self, work: f64) -> f64 {
        self.speed.time(&self.stats, work)
    }

    fn floor(&self) -> f64 {
        self.speed.floor(&self.stats)
    }
}

struct Waiter {
    ticket: u64,
    allowed: Vec<usize>,
    /// Expected nonces of the search (3^MWM).
    work: f64,
    arrived: Instant,
    all: bool,
}

struct State {
    busy: Vec<bool>,
    /// Expected nonces of the search running on each busy device.
    running_work: Vec<f64>,
    /// When each busy device's current search was granted.
    running_since: Vec<Option<Instant>>,
    unhealthy_until: Vec<Option<Instant>>,
    /// Each device's last fault, and when it happened.
    last_fault: Vec<Option<(Instant, Error)>>,
    waiters: LazyDeque<Waiter>,
    granted: Vec<(u64, Vec<usize>)>,
    next_ticket: u64,
}

/// How leases are handed out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// The least a search waits for a busy faster device, when a slower one is free but is
    /// expected to finish later, before it takes the slower one anyway. It only matters when
    /// the estimate is wrong: the search gives up waiting after `max(wait_limit, 3 × the
    /// expected wait)`.
    pub wait_limit: Duration,
    /// Whether the CPU may serve a search that also selected GPUs.
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
    pub(crate) slots: Vec<DeviceSlot>,
    state: Mutex<State>,
    cond: Condvar,
    pub(crate) policy: Policy,
}

/// Devices held by one search; released on drop.
pub(crate) struct Lease<'a> {
    reg: &'a Registry,
    pub(crate) indices: Vec<usize>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut st = self.reg.state.lock();
        for &i in &self.indices {
            st.busy[i] = false;
            st.running_work[i] = 0.0;
            st.running_since[i] = None;
        }
        self.reg.dispatch(&mut st);
    }
}

/// What a search waits with.
pub(crate) struct WaitSpec<'a> {
    pub allowed: Vec<usize>,
    /// Expected nonces of the search (3^MWM), for the dispatch estimate.
    pub work: f64,
    pub all: bool,
    pub deadline: Option<Instant>,
    pub cancel: Option<&'a CancelToken>,
    pub cpu_fallback: bool,
}

impl Registry {
    pub(crate) fn new(devices: Vec<Arc<dyn Device>>, policy: Policy) -> Self {
        let slots: Vec<DeviceSlot> = devices
            .into_iter()
            .map(|device| {
                let info = device.info().clone();
                DeviceSlot {
                    speed: Speed::new(&info),
                    device,
                    info,
                    stats: SlotStats::new(),
                }
            })
            .collect();
        let n = slots.len();
        Registry {
            slots,
            state: Mutex::new(State {
                busy: vec![false; n],
                running_work: vec![0.0; n],
                running_since: vec![None; n],
                unhealthy_until: vec![None; n],
                last_fault: (0..n).map(|_| None).collect(),
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
        let mut st = self.state.lock();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiters.push_back(Waiter {
            ticket,
            allowed: allowed.clone(),
            work: spec.work,
            arrived: started,
            all: spec.all,
        });
        // Grants happen in `dispatch`, which every release runs; a waiter woken by one only
        // looks for its grant. It runs `dispatch` itself on arrival and on its timer, for what
        // time changes (patience running out, a device's re-probe coming due): with 32 waiters,
        // each re-running it on every wake-up cost O(waiters²) per release under the lock.
        let mut run_dispatch = true;
        loop {
            if run_dispatch {
                self.dispatch(&mut st);
            }
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
                Some(first_fault(&st, &allowed))
            } else {
                None
            };
            if let Some(e) = stop {
                st.waiters.retain(|w| w.ticket != ticket);
                self.dispatch(&mut st);
                return Err(e);
            }
            // Wake for a release (notify), the deadline, or to re-estimate and poll the cancel
            // token.
            let mut wake = now + Duration::from_millis(10);
            if let Some(d) = spec.deadline {
                wake = wake.min(d);
            }
            run_dispatch = self.cond.wait_until(&mut st, wake).timed_out();
        }
    }

    /// Hand free devices to waiters in FIFO order; wakes the waiters if anything was granted.
    ///
    /// A waiter takes the fastest free device it may use unless a faster device it may also use
    /// is busy and is expected to finish this search sooner, queue included: waiting for a GPU
    /// beats a CPU that is 100× slower, and a software driver that needs a whole dispatch for
    /// any search is only taken when the queue for the others is longer than that.
    fn dispatch(&self, st: &mut State) {
        let now = Instant::now();
        let mut granted_any = false;
        // Expected nonces queued ahead of the waiter being looked at.
        let mut queued_ahead = 0.0f64;
        // Searches queued ahead of it: each holds a device for at least that device's floor.
        let mut searches_ahead = 0usize;
        // The selections (and expected work) that found no free device in this pass: a later
        // waiter with the same finds none either (granting only makes devices busy), so it is
        // passed over without the per-device estimates. With 32 callers queued for the CPU
        // pool, and software drivers in every selection, this keeps a release's dispatch from
        // costing the estimates of every device for every waiter.
        let mut nothing_free: Vec<(Vec<usize>, u64)> = Vec::new();
        let mut i = 0;
        while i < st.waiters.len() {
            let w = st.waiters.iter().nth(i).expect("index in range");
            if nothing_free
                .iter()
                .any(|(a, work)| *work == w.work.to_bits() && *a == w.allowed)
            {
                queued_ahead += w.work;
                searches_ahead += 1;
                i += 1;
                continue;
            }
            let healthy = |d: usize| st.unhealthy_until[d].is_none_or(|until| now >= until);
            // The CPU pool and software drivers (PoCL, lavapipe) all run on the host's cores: a
            // second one busy beside the first only takes cycles from it. Of those the waiter
            // may use, only the one expected to finish this search first serves; the others are
            // its fallbacks.
            let host_cores = w
                .allowed
                .iter()
                .copied()
                .filter(|&d| self.slots[d].on_host_cores() && healthy(d))
                .min_by(|&a, &b| {
                    let (sa, sb) = (&self.slots[a], &self.slots[b]);
                    sa.time(w.work).total_cmp(&sb.time(w.work))
                });
            let mut free: Vec<usize> = w
                .allowed
                .iter()
                .copied()
                .filter(|&d| !st.busy[d] && healthy(d))
                .filter(|&d| !self.slots[d].on_host_cores() || Some(d) == host_cores)
                .collect();
            if free.is_empty() {
                nothing_free.push((w.allowed.clone(), w.work.to_bits()));
                queued_ahead += w.work;
                searches_ahead += 1;
                i += 1;
                continue;
            }
            free.sort_by(|&a, &b| self.slots[b].rate().total_cmp(&self.slots[a].rate()));
            let take = match free.first() {
                None => false,
                Some(_) if w.all => true,
                Some(&best_free) => {
                    let on_free = self.slots[best_free].time(w.work);
                    let wait = self.expected_wait(
                        st,
                        now,
                        w,
                        best_free,
                        (queued_ahead, searches_ahead),
                        &healthy,
                    );
                    // An infinite wait (nothing faster to wait for) takes the free device.
                    let patience = self.policy.wait_limit.as_secs_f64().max(3.0 * wait);
                    on_free <= wait || now.duration_since(w.arrived).as_secs_f64() >= patience
                }
            };
            if !take {
                queued_ahead += w.work;
                searches_ahead += 1;
                i += 1;
                continue;
            }
            if !w.all {
                free.truncate(1);
            }
            let ticket = w.ticket;
            let work = w.work;
            for &d in &free {
                st.busy[d] = true;
                st.running_work[d] = work;
                st.running_since[d] = Some(now);
            }
            st.waiters.remove(i);
            st.granted.push((ticket, free));
            granted_any = true;
        }
        if granted_any {
            self.cond.notify_all();
        }
    }

    /// Expected seconds until `w` would be done if it waited for the busy devices faster than
    /// `best_free`: the work running on them and queued ahead (`ahead`: expected nonces and
    /// searches), then its own, shared by their combined rate; never less than the time until
    /// the first of them is expected to be free (its current search's expected time minus what
    /// has run), plus the searches ahead at one floor each spread over them, plus its time for
    /// `w`. Infinite when there are none.
    fn expected_wait(
        &self,
        st: &State,
        now: Instant,
        w: &Waiter,
        best_free: usize,
        ahead: (f64, usize),
        healthy: &dyn Fn(usize) -> bool,
    ) -> f64 {
        let floor_rate = self.slots[best_free].rate();
        let faster: Vec<usize> = w
            .allowed
            .iter()
            .copied()
            .filter(|&d| healthy(d) && st.busy[d] && self.slots[d].rate() > floor_rate)
            .collect();
        if faster.is_empty() {
            // Nothing faster to wait for.
            return f64::INFINITY;
        }
        let rate: f64 = faster.iter().map(|&d| self.slots[d].rate()).sum();
        let running: f64 = faster.iter().map(|&d| st.running_work[d]).sum();
        let soonest = faster
            .iter()
            .map(|&d| {
                let ran = st.running_since[d].map_or(0.0, |t| now.duration_since(t).as_secs_f64());
                (self.slots[d].time(st.running_work[d]) - ran).max(0.0) + self.slots[d].time(w.work)
            })
            .fold(f64::INFINITY, f64::min);
        let (queued_ahead, searches_ahead) = ahead;
        let floor = faster
            .iter()
            .map(|&d| self.slots[d].floor())
            .fold(f64::INFINITY, f64::min);
        let queue = searches_ahead as f64 * floor / faster.len() as f64;
        ((running + queued_ahead + w.work) / rate).max(soonest + queue)
    }

    /// Record a finished search on a device: `hit` for the search's winning hit only.
    pub(crate) fn record(&self, i: usize, busy: Duration, nonces: u64, hit: bool) {
        self.slots[i].stats.record(busy, nonces, hit);
    }

    /// Record a fault: the device sits out until it is probed again.
    pub(crate) fn fault(&self, i: usize, busy: Duration, nonces: u64, error: &Error) {
        let s = &self.slots[i].stats;
        s.errors.fetch_add(1, Ordering::Relaxed);
        s.record(busy, nonces, false);
        let mut st = self.state.lock();
        let now = Instant::now();
        st.unhealthy_until[i] = Some(now + self.policy.reprobe_after);
        st.last_fault[i] = Some((now, error.clone()));
    }

    /// A device answered well: healthy again (the re-probe succeeded).
    pub(crate) fn healthy(&self, i: usize) {
        let mut st = self.state.lock();
        if st.unhealthy_until[i].take().is_some() {
            self.dispatch(&mut st);
        }
    }

    /// Count a search entering and leaving a device (checks that leases never overlap).
    pub(crate) fn enter(&self, i: usize) -> InFlightGuard<'_> {
        let s = &self.slots[i].stats;
        let now = s.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
        s.max_concurrent.fetch_max(now, Ordering::AcqRel);
        InFlightGuard(&s.in_flight)
    }

    /// Searches waiting for a device now.
    pub(crate) fn waiting(&self) -> usize {
        self.state.lock().waiters.len()
    }

    /// The combined speed of the devices a selection allows, in nonces per second.
    pub(crate) fn rate_of(&self, allowed: &[usize]) -> f64 {
        allowed.iter().map(|&i| self.slots[i].rate()).sum()
    }

    pub(crate) fn reports(&self) -> Vec<DeviceReport> {
        // A GPU's launch shape and build facts, shown under `details.launch` (read before the
        // state lock: devices keep them in a snapshot of their own).
        let launch: Vec<_> = self.slots.iter().map(|s| s.device.launch_stats()).collect();
        let st = self.state.lock();
        let now = Instant::now();
        self.slots
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut stats = DeviceStats::default();
                stats.searches = s.stats.searches.load(Ordering::Relaxed);
                stats.nonces = s.device.nonces_tried();
                stats.hits = s.stats.hits.load(Ordering::Relaxed);
                stats.errors = s.stats.errors.load(Ordering::Relaxed);
                stats.busy_seconds = s.stats.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9;
                stats.nonces_per_second = s.rate();
                stats.max_concurrent = s.stats.max_concurrent.load(Ordering::Relaxed) as u64;
                stats.searching = s.stats.in_flight.load(Ordering::Relaxed) as u64;
                stats.healthy = st.unhealthy_until[i].is_none_or(|u| now >= u);
                stats.last_fault = st.last_fault[i].as_ref().map(|(_, e)| e.to_string());
                // The device's own description: a tuned GPU says which variant it switched to.
                let mut info = s.device.info().clone();
                if let Some(v) = launch[i]
                    .as_ref()
                    .and_then(|l| serde_json::to_value(l).ok())
                {
                    info.details.insert("launch".into(), v);
                }
                DeviceReport { info, stats }
            })
            .collect()
    }
}

/// Why no allowed device is healthy: the earliest of their faults, itself (so the same cause is
/// reported whichever search meets it first).
fn first_fault(st: &State, allowed: &[usize]) -> Error {
    allowed
        .iter()
        .filter_map(|&i| st.last_fault[i].as_ref())
        .min_by_key(|(at, _)| *at)
        .map(|(_, e)| e.clone())
        .unwrap_or_else(|| {
            Error::NoDevice("every selected device is marked unhealthy after a fault".into())
        })
}
