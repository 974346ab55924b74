//! The portable 64-lane kernel: one `u64` per trit half, double-buffered, the 4-operation S-box.
//! It runs on every CPU and is the reference the SIMD kernels are tested against.

use super::messages::Messages;
use crate::search::bitslice::{self, BadTrit, Planes};
use crate::search::control::Worker;
use crate::search::layout::{KernelJob, Layout, LayoutCounter};
use crate::search::nonce::{CounterRange, Hit, NONCE_OFFSET};
use crate::ternary::curl::{HASH_LEN, INDEX, ROUNDS, STATE_LEN};

/// Nonces per transform.
pub(crate) const LANES: usize = 64;

/// A bit-sliced 64-lane state: `lo[i]`, `hi[i]` hold trit `i` of every lane.
#[derive(Clone)]
pub(crate) struct State {
    /// Low halves.
    pub lo: [u64; STATE_LEN],
    /// High halves.
    pub hi: [u64; STATE_LEN],
}

impl State {
    /// Every lane holds `trits`.
    pub(crate) fn broadcast(trits: &[i8; STATE_LEN]) -> Self {
        let mut s = State {
            lo: [0; STATE_LEN],
            hi: [0; STATE_LEN],
        };
        for (i, &t) in trits.iter().enumerate() {
            s.set_all(i, t);
        }
        s
    }

    /// Set trit `i` of every lane to `t`.
    #[inline]
    pub(crate) fn set_all(&mut self, i: usize, t: i8) {
        (self.lo[i], self.hi[i]) = bitslice::splat(t, 64);
    }

    /// Write each lane's number into the lane trits (lane `l` of this state is lane `l` of the
    /// nonce layout).
    pub(crate) fn set_lane_numbers(&mut self, layout: Layout) {
        let start = layout.lane_trits().start;
        for (j, (lo, hi)) in layout.lane_words(1).into_iter().enumerate() {
            self.lo[start + j] = lo[0];
            self.hi[start + j] = hi[0];
        }
    }

    /// The search's template: the job's state, the lane numbers, counter `n`.
    fn template(job: &KernelJob<'_>, n: u64) -> (State, LayoutCounter) {
        let mut template = State::broadcast(job.state());
        template.set_lane_numbers(job.layout());
        let counter = LayoutCounter::new(job.layout(), n);
        template.set_counter(&counter, counter.trits().len());
        (template, counter)
    }

    /// Rewrite the low `changed` counter trits.
    #[inline]
    fn set_counter(&mut self, counter: &LayoutCounter, changed: usize) {
        // The counter trits' positions come from the layout the counter was made for.
        let start = counter.start();
        for (j, &t) in counter.trits()[..changed].iter().enumerate() {
            self.set_all(start + j, t);
        }
    }

    /// The first `len` trits of every lane.
    fn planes(&self, start: usize, len: usize) -> Planes {
        let mut p = Planes::zeros(len, 1, 64);
        p.lo.copy_from_slice(&self.lo[start..start + len]);
        p.hi.copy_from_slice(&self.hi[start..start + len]);
        p
    }

    /// Lanes whose last `mwm` hash trits are all zero (bit k = lane k).
    #[inline]
    pub(crate) fn zero_mask(&self, mwm: usize) -> u64 {
        let mut m = !0u64;
        for i in HASH_LEN - mwm..HASH_LEN {
            m &= !(self.lo[i] ^ self.hi[i]);
        }
        m
    }
}

/// The 81-round transform of a 64-lane state, using `scratch` as the second buffer.
pub(crate) fn transform(s: &mut State, scratch: &mut State) {
    for _ in 0..ROUNDS {
        std::mem::swap(s, scratch);
        let (olo, ohi) = (&scratch.lo, &scratch.hi);
        for i in 0..STATE_LEN {
            let (a, b) = (INDEX[i], INDEX[i + 1]);
            let (alo, ahi, blo, bhi) = (olo[a], ohi[a], olo[b], ohi[b]);
            let lo = ahi ^ (!blo & alo);
            s.lo[i] = lo;
            s.hi[i] = alo ^ (bhi & lo);
        }
    }
}

/// Search `range` on one worker: one transform per counter, stop checked once per transform.
pub(crate) fn search(job: &KernelJob<'_>, range: CounterRange, w: &mut Worker<'_>) -> Option<Hit> {
    let (mut template, mut counter) = State::template(job, range.start);
    let mut s = template.clone();
    let mut scratch = template.clone();
    let mwm = job.mwm();
    for _ in 0..range.len {
        if !w.keep_going() {
            return None;
        }
        s.lo = template.lo;
        s.hi = template.hi;
        transform(&mut s, &mut scratch);
        let mask = s.zero_mask(mwm);
        w.batch_done(LANES as u64);
        if mask != 0 {
            return Some(Hit {
                counter: counter.value(),
                lane: mask.trailing_zeros() as usize,
            });
        }
        let changed = counter.increment();
        template.set_counter(&counter, changed);
    }
    None
}

/// Test hook: the nonce trits (block trits 162..243) of every lane of the pre-transform states
/// [`search`] builds for the first `transforms` counters of `range`.
pub(crate) fn placed_nonces(
    job: &KernelJob<'_>,
    range: CounterRange,
    transforms: usize,
) -> Result<Vec<[i8; 81]>, BadTrit> {
    let (mut template, mut counter) = State::template(job, range.start);
    let mut out = Vec::new();
    for n in 0..(transforms as u64).min(range.len) {
        if n > 0 {
            let changed = counter.increment();
            template.set_counter(&counter, changed);
        }
        out.extend(template.planes(NONCE_OFFSET, 81).to_states::<81>(LANES)?);
    }
    Ok(out)
}

/// Test hook: the transform of up to 64 states per pass, lane `k` = `states[k]`.
pub(crate) fn transform_states(states: &mut [[i8; STATE_LEN]]) -> Result<(), BadTrit> {
    for chunk in states.chunks_mut(LANES) {
        let p = Planes::from_states(chunk, 1, 64);
        let mut s = State::broadcast(&[0; STATE_LEN]);
        s.lo.copy_from_slice(&p.lo);
        s.hi.copy_from_slice(&p.hi);
        let mut scratch = s.clone();
        transform(&mut s, &mut scratch);
        let n = chunk.len();
        chunk.copy_from_slice(&s.planes(0, STATE_LEN).to_states::<STATE_LEN>(n)?);
    }
    Ok(())
}

/// Bench hook: `n` bare transforms (template copy, transform; no counter, zero test or stop
/// check). Returns a value derived from the result so nothing is optimised away.
pub(crate) fn bare_transforms(job: &KernelJob<'_>, n: usize) -> u64 {
    let (template, _) = State::template(job, 0);
    let mut s = template.clone();
    let mut scratch = template.clone();
    let mut acc = 0u64;
    for _ in 0..n {
        s.lo = template.lo;
        s.hi = template.hi;
        transform(&mut s, &mut scratch);
        acc = acc.wrapping_add(s.lo[HASH_LEN - 1]);
    }
    acc
}

/// Batch hook: absorb up to 64 messages of equal length (at least one whole 243-trit block,
/// valid digits), one per lane, and write the first `out_len` trits of each final state to
/// `out`, message after message (see the SIMD kernels' `absorb_lanes`).
pub(crate) fn absorb_lanes(msgs: Messages<'_>, out_len: usize, out: &mut [i8]) {
    use super::transpose::words_to_rows;
    let n = msgs.len();
    let len = if n == 0 { 0 } else { msgs.trits(0) };
    assert!(n <= LANES && out_len <= STATE_LEN && out.len() == n * out_len);
    assert!(len >= HASH_LEN && len.is_multiple_of(HASH_LEN));
    assert!((0..n).all(|i| msgs.trits(i) == len));
    let mut s = State::broadcast(&[0; STATE_LEN]);
    let mut scratch = s.clone();
    let window = msgs.window();
    let mut lo = vec![[0u64; 1]; len.min(window)];
    let mut hi = vec![[0u64; 1]; len.min(window)];
    for win in (0..len).step_by(window) {
        let wl = (len - win).min(window);
        msgs.load(win, &mut lo[..wl], &mut hi[..wl]);
        for start in (0..wl).step_by(HASH_LEN) {
            for x in 0..HASH_LEN {
                s.lo[x] = lo[start + x][0];
                s.hi[x] = hi[start + x][0];
            }
            transform(&mut s, &mut scratch);
        }
    }
    let lo: Vec<[u64; 1]> = s.lo[..out_len].iter().map(|&w| [w]).collect();
    let hi: Vec<[u64; 1]> = s.hi[..out_len].iter().map(|&w| [w]).collect();
    words_to_rows(&lo, &hi, n, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bitslice::{decode, encode};

    #[test]
    fn four_op_sbox_matches_the_table() {
        const T: [i8; 11] = [1, 0, -1, 2, 1, -1, 0, 2, -1, 1, 0];
        for a in -1i8..=1 {
            for b in -1i8..=1 {
                let (al, ah) = encode(a);
                let (bl, bh) = encode(b);
                let lo = ah ^ (!bl & al);
                let hi = al ^ (bh & lo);
                assert_eq!(
                    decode(lo, hi),
                    Some(T[(a + 4 * b + 5) as usize]),
                    "a={a} b={b}"
                );
            }
        }
    }

    #[test]
    fn transform_matches_scalar_per_lane() {
        // 64 different pseudo-random states, one per lane.
        let mut trits = crate::ternary::xorshift::trits(0x1234_5678_9abc_def0);
        let mut lanes = vec![[0i8; STATE_LEN]; LANES];
        for st in lanes.iter_mut() {
            st.fill_with(|| trits.next().expect("endless"));
        }
        let mut got = lanes.clone();
        transform_states(&mut got).unwrap();
        for (k, st) in lanes.iter_mut().enumerate() {
            crate::ternary::curl::transform(st);
            assert_eq!(got[k], *st, "lane {k}");
        }
    }
}
