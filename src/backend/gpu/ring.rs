//! The launches of one search in flight ([`Ring`]): at most [`IN_FLIGHT`], oldest first, each
//! on its own result slot, in a fixed array (nothing allocated per search).

use std::time::Instant;

use super::launcher::{Launch, IN_FLIGHT};

/// A launch in flight.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingLaunch {
    /// The result slot it runs on.
    pub slot: usize,
    pub launch: Launch,
    /// Whether it is a full launch of the sizer's current size (only those are measured).
    pub full: bool,
    pub submitted: Instant,
}

/// The launches in flight, oldest first, in a fixed ring (nothing allocated per search).
pub(super) struct Ring {
    items: [Option<PendingLaunch>; IN_FLIGHT],
    head: usize,
    len: usize,
}

impl Ring {
    pub(super) fn new() -> Self {
        Ring {
            items: [None; IN_FLIGHT],
            head: 0,
            len: 0,
        }
    }

    /// The slot the next launch goes to.
    pub(super) fn next_slot(&self) -> usize {
        (self.head + self.len) % IN_FLIGHT
    }

    /// Add the newest launch (on [`next_slot`](Self::next_slot); the ring is not full).
    pub(super) fn push(&mut self, f: PendingLaunch) {
        debug_assert!(self.len < IN_FLIGHT);
        self.items[f.slot] = Some(f);
        self.len += 1;
    }

    /// Take the oldest launch.
    pub(super) fn pop(&mut self) -> Option<PendingLaunch> {
        if self.len == 0 {
            return None;
        }
        let f = self.items[self.head].take();
        self.head = (self.head + 1) % IN_FLIGHT;
        self.len -= 1;
        f
    }

    /// Launches in flight.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_flight(slot: usize, base: u64) -> PendingLaunch {
        PendingLaunch {
            slot,
            launch: Launch {
                base,
                items: 64,
                per_item: 1,
                limit: 64,
            },
            full: true,
            submitted: Instant::now(),
        }
    }

    #[test]
    fn launches_leave_in_the_order_they_came_and_slots_rotate() {
        let mut r = Ring::new();
        assert!(r.pop().is_none());
        let (mut slots, mut pushed, mut popped) = (Vec::new(), Vec::new(), Vec::new());
        for base in 0..7u64 {
            if r.len() == IN_FLIGHT {
                popped.push(r.pop().expect("a launch in flight").launch.base);
            }
            let slot = r.next_slot();
            slots.push(slot);
            pushed.push(base);
            r.push(in_flight(slot, base));
        }
        while let Some(f) = r.pop() {
            popped.push(f.launch.base);
        }
        assert_eq!(popped, pushed, "oldest first");
        // The slot a launch gets is the one freed longest ago: every slot in turn.
        for (k, s) in slots.iter().enumerate() {
            assert_eq!(*s, k % IN_FLIGHT, "{slots:?}");
        }
    }
}
