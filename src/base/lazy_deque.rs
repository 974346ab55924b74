//! A FIFO queue that keeps its memory through a burst (the Chromium `LazilyDeallocatedDeque`
//! lesson): it never shrinks while in use, and when it is empty it gives memory back at most once
//! per interval, down to the largest size it held since the last shrink.
//!
//! PoW jobs arrive in bursts (a bundle), are drained, then nothing comes: a deque that shrank
//! whenever it was half empty would reallocate on every cycle.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A source of time, injectable for tests.
pub(crate) trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The default minimum time between two shrinks.
pub(crate) const SHRINK_INTERVAL: Duration = Duration::from_secs(5);
/// Capacity below which shrinking is not worth a reallocation.
const MIN_WORTH_SHRINKING: usize = 16;

/// A FIFO queue with lazy deallocation. See the module docs.
#[derive(Debug)]
pub(crate) struct LazyDeque<T, C: Clock = SystemClock> {
    items: VecDeque<T>,
    clock: C,
    interval: Duration,
    last_shrink: Instant,
    max_since_shrink: usize,
    shrinks: u64,
}

impl<T> Default for LazyDeque<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> LazyDeque<T> {
    /// An empty queue on the system clock with the default interval.
    pub(crate) fn new() -> Self {
        Self::with_clock(SystemClock, SHRINK_INTERVAL)
    }
}

impl<T, C: Clock> LazyDeque<T, C> {
    /// An empty queue on `clock`, shrinking at most once per `interval`.
    pub(crate) fn with_clock(clock: C, interval: Duration) -> Self {
        let now = clock.now();
        LazyDeque {
            items: VecDeque::new(),
            clock,
            interval,
            last_shrink: now,
            max_since_shrink: 0,
            shrinks: 0,
        }
    }

    /// Append at the back.
    pub(crate) fn push_back(&mut self, v: T) {
        self.items.push_back(v);
        self.max_since_shrink = self.max_since_shrink.max(self.items.len());
    }

    /// Take from the front; an empty queue may give memory back.
    #[cfg(test)]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let v = self.items.pop_front();
        self.maybe_shrink();
        v
    }

    /// Remove the element at `i` (FIFO order); an empty queue may give memory back.
    pub(crate) fn remove(&mut self, i: usize) -> Option<T> {
        let v = self.items.remove(i);
        self.maybe_shrink();
        v
    }

    /// Remove every element for which `keep` is false, keeping order.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
        self.maybe_shrink();
    }

    /// Elements, front first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Allocated capacity.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.items.capacity()
    }

    /// How many times memory was given back.
    #[cfg(test)]
    pub(crate) fn shrinks(&self) -> u64 {
        self.shrinks
    }

    /// Give memory back if the queue is empty, the interval has passed since the last shrink,
    /// and the capacity is well above the largest size held since then. Called by the removing
    /// operations; cheap when there is nothing to do.
    pub(crate) fn maybe_shrink(&mut self) {
        if !self.items.is_empty() {
            return;
        }
        let now = self.clock.now();
        if now.duration_since(self.last_shrink) < self.interval {
            return;
        }
        let target = self.max_since_shrink;
        let cap = self.items.capacity();
        if cap >= MIN_WORTH_SHRINKING && cap > 2 * target.max(1) {
            self.items.shrink_to(target);
            self.shrinks += 1;
        }
        self.last_shrink = now;
        self.max_since_shrink = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::sync::Arc;

    #[derive(Clone)]
    struct ManualClock(Arc<Mutex<Instant>>);
    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            *self.0.lock()
        }
    }
    impl ManualClock {
        fn advance(&self, d: Duration) {
            *self.0.lock() += d;
        }
    }

    fn burst(q: &mut LazyDeque<u32, ManualClock>, n: u32) {
        for i in 0..n {
            q.push_back(i);
        }
        while q.pop_front().is_some() {}
    }

    #[test]
    fn keeps_capacity_through_bursts_within_the_interval() {
        let clock = ManualClock(Arc::new(Mutex::new(Instant::now())));
        let mut q = LazyDeque::with_clock(clock.clone(), Duration::from_secs(5));
        burst(&mut q, 1000);
        let cap = q.capacity();
        assert!(cap >= 1000);
        // Many empty/full swings inside one interval: no reallocation, no shrink.
        for _ in 0..50 {
            clock.advance(Duration::from_millis(50));
            burst(&mut q, 1000);
            assert_eq!(q.capacity(), cap);
        }
        assert_eq!(q.shrinks(), 0);
    }

    #[test]
    fn shrinks_once_per_interval_to_the_largest_recent_size() {
        let clock = ManualClock(Arc::new(Mutex::new(Instant::now())));
        let mut q = LazyDeque::with_clock(clock.clone(), Duration::from_secs(5));
        burst(&mut q, 1000);
        clock.advance(Duration::from_secs(6));
        // The first shrink after the burst: nothing larger was seen than 1000, so it keeps it.
        burst(&mut q, 10);
        assert_eq!(q.shrinks(), 0, "1000 was the largest size in this interval");
        // A quiet interval with small use only: shrink to that size.
        clock.advance(Duration::from_secs(6));
        burst(&mut q, 10);
        assert_eq!(q.shrinks(), 1);
        assert!(q.capacity() < 100, "capacity {}", q.capacity());
        // Not again within the interval, even when empty.
        burst(&mut q, 3);
        assert_eq!(q.shrinks(), 1);
    }

    #[test]
    fn never_shrinks_while_not_empty() {
        let clock = ManualClock(Arc::new(Mutex::new(Instant::now())));
        let mut q = LazyDeque::with_clock(clock.clone(), Duration::from_secs(1));
        for i in 0..500 {
            q.push_back(i);
        }
        clock.advance(Duration::from_secs(10));
        for _ in 0..499 {
            q.pop_front();
        }
        assert!(q.capacity() >= 500);
        assert_eq!(q.shrinks(), 0);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), vec![499]);
    }
}
