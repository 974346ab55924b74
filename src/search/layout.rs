//! The nonce layouts the CPU kernels fill, and what a kernel is given: the state to transform,
//! the zeros to find, and where the lane and counter trits go.
//!
//! - [`Layout::Transaction`]: the legacy PoW ([`crate::search::search_job`]): the lane as 6 balanced trits
//!   at block trits 162..168, the counter as 42 balanced trits at 168..210.
//! - [`Layout::Block`]: the Chrysalis/Stardust PoW ([`crate::search::block`]): the nonce `n << 16 |
//!   lane` in `b1t6`, the lane's two bytes at 192..204, the counter's six at 204..240.
//!
//! The kernels write the lane trits once per search and, per counter, only the low counter
//! trits that changed ([`LayoutCounter::increment`]), so the layout costs nothing in the loop.

use std::ops::Range;

use crate::search::bitslice::Planes;
use crate::ternary::curl::STATE_LEN;
use crate::ternary::trinary::Trit;

/// Where a search puts its lane and counter trits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// The legacy transaction PoW.
    Transaction,
    /// The Chrysalis/Stardust block PoW.
    Block,
}

/// The most counter trits of any layout.
const MAX_COUNTER: usize = 42;

impl Layout {
    /// State trits of the lane number.
    pub(crate) fn lane_trits(self) -> Range<usize> {
        match self {
            Layout::Transaction => crate::search::nonce::LANE_TRITS,
            Layout::Block => crate::search::block::LANE_TRITS,
        }
    }

    /// State trits of the counter.
    pub(crate) fn counter_trits(self) -> Range<usize> {
        match self {
            Layout::Transaction => crate::search::nonce::COUNTER_TRITS,
            Layout::Block => crate::search::block::COUNTER_TRITS,
        }
    }

    /// Write lane `lane`'s trits (`lane_trits().len()` of them).
    fn write_lane(self, lane: usize, out: &mut [Trit]) {
        match self {
            Layout::Transaction => out.copy_from_slice(&crate::search::nonce::lane_trits(lane)),
            Layout::Block => out.copy_from_slice(&crate::search::block::lane_trits(lane)),
        }
    }

    /// Write counter `n`'s trits (`counter_trits().len()` of them).
    fn write_counter(self, n: u64, out: &mut [Trit]) {
        match self {
            Layout::Transaction => out.copy_from_slice(&crate::search::nonce::counter_trits(n)),
            Layout::Block => out.copy_from_slice(&crate::search::block::counter_trits(n)),
        }
    }

    /// The lane-number trits for `words` 64-bit words of lanes: `[j] = (low words, high words)`
    /// of lane trit `j` (lane `l` = bit `l mod 64` of word `l / 64`).
    pub(crate) fn lane_words(self, words: usize) -> Vec<(Vec<u64>, Vec<u64>)> {
        let lanes = self.lane_trits();
        let mut p = Planes::zeros(lanes.len(), words, 64);
        let mut t = vec![0; lanes.len()];
        for k in 0..words * 64 {
            self.write_lane(k, &mut t);
            for (j, &tj) in t.iter().enumerate() {
                p.set(j, k, tj);
            }
        }
        (0..lanes.len())
            .map(|j| {
                let (lo, hi) = p.words_of(j);
                (lo.to_vec(), hi.to_vec())
            })
            .collect()
    }
}

/// The counter trits of a running search, advanced one counter at a time.
#[derive(Debug, Clone)]
pub(crate) struct LayoutCounter {
    layout: Layout,
    n: u64,
    len: usize,
    trits: [Trit; MAX_COUNTER],
}

impl LayoutCounter {
    /// Start at counter `n`.
    pub(crate) fn new(layout: Layout, n: u64) -> Self {
        let len = layout.counter_trits().len();
        let mut trits = [0; MAX_COUNTER];
        layout.write_counter(n, &mut trits[..len]);
        LayoutCounter {
            layout,
            n,
            len,
            trits,
        }
    }

    /// The counter value.
    #[inline]
    pub(crate) fn value(&self) -> u64 {
        self.n
    }

    /// The state trit of the counter's first trit.
    #[inline]
    pub(crate) fn start(&self) -> usize {
        self.layout.counter_trits().start
    }

    /// The counter trits.
    #[inline]
    pub(crate) fn trits(&self) -> &[Trit] {
        &self.trits[..self.len]
    }

    /// Add one; returns how many low trits may have changed (at least 1): every trit past
    /// them is as it was.
    #[inline]
    pub(crate) fn increment(&mut self) -> usize {
        self.n = self.n.wrapping_add(1);
        match self.layout {
            Layout::Transaction => {
                // Balanced-ternary +1 in place.
                for (i, t) in self.trits[..self.len].iter_mut().enumerate() {
                    if *t == 1 {
                        *t = -1;
                    } else {
                        *t += 1;
                        return i + 1;
                    }
                }
                self.layout
                    .write_counter(self.n, &mut self.trits[..self.len]);
                self.len
            }
            Layout::Block => {
                let mut next = [0; MAX_COUNTER];
                self.layout.write_counter(self.n, &mut next[..self.len]);
                let changed = (0..self.len)
                    .rev()
                    .find(|&i| next[i] != self.trits[i])
                    .map_or(1, |i| i + 1);
                self.trits = next;
                changed
            }
        }
    }
}

/// What a kernel searches: the state before the transform with the lane and counter trits
/// zero, the trailing zeros a hit needs, and the layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelJob<'a> {
    state: &'a [Trit; STATE_LEN],
    mwm: usize,
    layout: Layout,
}

impl<'a> KernelJob<'a> {
    pub(crate) fn new(state: &'a [Trit; STATE_LEN], mwm: usize, layout: Layout) -> Self {
        KernelJob { state, mwm, layout }
    }

    /// The state to transform.
    #[inline]
    pub(crate) fn state(&self) -> &'a [Trit; STATE_LEN] {
        self.state
    }

    /// Trailing zero trits a hit needs.
    #[inline]
    pub(crate) fn mwm(&self) -> usize {
        self.mwm
    }

    /// Where the lane and counter trits go.
    #[inline]
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }
}

/// What a kernel searches for a block PoW job.
pub(crate) fn block_kernel_job(job: &crate::search::block::BlockJob) -> KernelJob<'_> {
    KernelJob::new(job.state(), job.zeros(), Layout::Block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_advance_as_their_encoding() {
        for layout in [Layout::Transaction, Layout::Block] {
            for start in [
                0u64,
                1,
                120,
                125,
                250,
                253,
                65530,
                (1 << 24) - 3,
                u32::MAX as u64,
            ] {
                let mut c = LayoutCounter::new(layout, start);
                for _ in 0..300 {
                    let before = c.trits().to_vec();
                    let changed = c.increment();
                    let fresh = LayoutCounter::new(layout, c.value());
                    assert_eq!(c.trits(), fresh.trits(), "{layout:?} at {}", c.value());
                    assert!(changed >= 1);
                    assert_eq!(before[changed..], c.trits()[changed..]);
                }
            }
        }
    }

    #[test]
    fn lane_words_hold_each_lanes_trits() {
        for layout in [Layout::Transaction, Layout::Block] {
            let w = layout.lane_words(8);
            assert_eq!(w.len(), layout.lane_trits().len());
            let mut t = vec![0; w.len()];
            for lane in [0usize, 1, 63, 64, 255, 256, 300, 511] {
                layout.write_lane(lane, &mut t);
                for (j, &tj) in t.iter().enumerate() {
                    let (l, h) = crate::search::bitslice::encode(tj);
                    assert_eq!((w[j].0[lane / 64] >> (lane % 64)) & 1 == 1, l);
                    assert_eq!((w[j].1[lane / 64] >> (lane % 64)) & 1 == 1, h);
                }
            }
        }
    }
}
