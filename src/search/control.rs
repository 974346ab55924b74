//! Stopping a search (cancel, deadline, found) and counting its work, without anything shared
//! being written in the hot loop.
//!
//! Workers read one relaxed flag per batch (one transform) and compare the clock with the
//! deadline; they count nonces in a local variable and publish it once per batch to a
//! cache-padded counter that only they write ([`Counters`]); readers sum the slots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_utils::CachePadded;

/// A handle that cancels a search from another thread. Cheap to clone; all clones share the flag.
///
/// ```
/// let token = curlpow::CancelToken::new();
/// let t2 = token.clone();
/// t2.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A new, not cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel every search that holds this token. Idempotent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a search stopped without a hit of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// Another worker (or device) found a nonce.
    Found,
    /// The cancel token fired.
    Cancelled,
    /// The deadline passed.
    Deadline,
}

/// The stop conditions of one search, shared by all its workers and devices.
#[derive(Debug)]
pub struct SearchControl {
    cancel: Option<CancelToken>,
    deadline: Option<Instant>,
    found: AtomicBool,
    started: Instant,
    max_threads: Option<usize>,
}

impl SearchControl {
    /// Stop conditions for a search starting now.
    pub fn new(cancel: Option<CancelToken>, deadline: Option<Instant>) -> Self {
        SearchControl {
            cancel,
            deadline,
            found: AtomicBool::new(false),
            started: Instant::now(),
            max_threads: None,
        }
    }

    /// Cap the CPU threads this search may use (`None`: the whole pool).
    pub fn with_max_threads(mut self, n: Option<usize>) -> Self {
        self.max_threads = n.filter(|&n| n > 0);
        self
    }

    /// The most CPU threads this search may use, if capped.
    pub fn max_threads(&self) -> Option<usize> {
        self.max_threads
    }

    /// When the search started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Mark the search as solved, so every other worker stops at its next check. Returns true for
    /// the first caller only.
    pub(crate) fn set_found(&self) -> bool {
        !self.found.swap(true, Ordering::AcqRel)
    }

    /// Why the search should stop now, if it should: one relaxed load or two and a clock read.
    #[inline]
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        if self.found.load(Ordering::Relaxed) {
            return Some(StopReason::Found);
        }
        if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Some(StopReason::Cancelled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(StopReason::Deadline);
        }
        None
    }

    /// Whether the search should stop.
    #[inline]
    pub fn should_stop(&self) -> bool {
        self.stop_reason().is_some()
    }
}

/// Per-worker nonce counters, each on its own cache line, written only by its worker and summed
/// on read (the HAProxy lesson).
#[derive(Debug)]
pub struct Counters {
    slots: Box<[CachePadded<AtomicU64>]>,
}

impl Counters {
    /// `n` zeroed slots.
    pub fn new(n: usize) -> Self {
        Counters {
            slots: (0..n.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Add to slot `i` (the caller's own slot; uncontended).
    #[inline]
    pub fn add(&self, i: usize, n: u64) {
        self.slots[i % self.slots.len()].fetch_add(n, Ordering::Relaxed);
    }

    /// The sum over all slots.
    pub fn sum(&self) -> u64 {
        self.slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

/// A worker's view of a search: checks the stop conditions and publishes its count once per
/// batch.
pub struct Worker<'a> {
    ctl: &'a SearchControl,
    counters: &'a Counters,
    slot: usize,
    /// A flag the device's workers share: set when one of them hits, so its siblings stop
    /// before the engine has verified the hit (only the engine stops the other devices).
    sibling_hit: Option<&'a AtomicBool>,
    /// Nonces this worker tried in this search.
    pub tried: u64,
}

impl<'a> Worker<'a> {
    /// A worker writing to `counters` slot `slot`.
    pub fn new(ctl: &'a SearchControl, counters: &'a Counters, slot: usize) -> Self {
        Worker {
            ctl,
            counters,
            slot,
            sibling_hit: None,
            tried: 0,
        }
    }

    /// Also stop when `flag` is set (see [`Worker::claim_hit`]).
    pub fn with_siblings(mut self, flag: &'a AtomicBool) -> Self {
        self.sibling_hit = Some(flag);
        self
    }

    /// Tell this worker's siblings that it hit; true for the first worker to claim.
    pub fn claim_hit(&self) -> bool {
        self.sibling_hit
            .is_none_or(|f| !f.swap(true, Ordering::AcqRel))
    }

    #[inline]
    fn stopped(&self) -> bool {
        self.sibling_hit.is_some_and(|f| f.load(Ordering::Relaxed)) || self.ctl.should_stop()
    }
    /// Record a finished batch of `nonces` and say whether to go on.
    #[inline]
    pub fn batch_done(&mut self, nonces: u64) -> bool {
        self.tried += nonces;
        self.counters.add(self.slot, nonces);
        !self.stopped()
    }

    /// Whether to start (or go on with) a batch.
    #[inline]
    pub fn keep_going(&self) -> bool {
        !self.stopped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadline_and_cancel() {
        let c = SearchControl::new(None, Some(Instant::now() - Duration::from_millis(1)));
        assert_eq!(c.stop_reason(), Some(StopReason::Deadline));
        let t = CancelToken::new();
        let c = SearchControl::new(Some(t.clone()), None);
        assert_eq!(c.stop_reason(), None);
        t.cancel();
        assert_eq!(c.stop_reason(), Some(StopReason::Cancelled));
        assert!(c.set_found());
        assert!(!c.set_found());
        assert_eq!(c.stop_reason(), Some(StopReason::Found));
    }

    #[test]
    fn counters_sum() {
        let c = Counters::new(4);
        c.add(0, 5);
        c.add(3, 7);
        assert_eq!(c.sum(), 12);
    }
}
