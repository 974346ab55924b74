//! The portable 64-lane kernel: one `u64` per trit half, double-buffered, the 4-operation S-box.
//! It runs on every CPU and is the reference the SIMD kernels are tested against.

use crate::control::Worker;
use crate::curl::{HASH_LEN, INDEX, ROUNDS, STATE_LEN};
use crate::search::{trit_bits, CounterRange, Hit, SearchJob, COUNTER_TRITS, LANE_TRITS};

/// Nonces per transform.
pub const LANES: usize = 64;

/// A bit-sliced 64-lane state: `lo[i]`, `hi[i]` hold trit `i` of every lane.
#[derive(Clone)]
pub struct State {
    /// Low halves.
    pub lo: [u64; STATE_LEN],
    /// High halves.
    pub hi: [u64; STATE_LEN],
}

#[inline(always)]
fn splat(b: bool) -> u64 {
    if b {
        !0
    } else {
        0
    }
}

impl State {
    /// Every lane holds `trits`.
    pub fn broadcast(trits: &[i8; STATE_LEN]) -> Self {
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
    pub fn set_all(&mut self, i: usize, t: i8) {
        let (l, h) = trit_bits(t);
        self.lo[i] = splat(l);
        self.hi[i] = splat(h);
    }

    /// Write each lane's number into the lane trits (lane `l` of this state is lane `l` of the
    /// nonce layout).
    pub fn set_lane_numbers(&mut self) {
        for lane in 0..LANES {
            let lt = crate::search::lane_trits(lane);
            for (j, &t) in lt.iter().enumerate() {
                let (l, h) = trit_bits(t);
                let i = LANE_TRITS.start + j;
                let bit = 1u64 << lane;
                self.lo[i] = (self.lo[i] & !bit) | if l { bit } else { 0 };
                self.hi[i] = (self.hi[i] & !bit) | if h { bit } else { 0 };
            }
        }
    }

    /// Lanes whose last `mwm` hash trits are all zero (bit k = lane k).
    #[inline]
    pub fn zero_mask(&self, mwm: usize) -> u64 {
        let mut m = !0u64;
        for i in HASH_LEN - mwm..HASH_LEN {
            m &= !(self.lo[i] ^ self.hi[i]);
        }
        m
    }
}

/// The 81-round transform of a 64-lane state, using `scratch` as the second buffer.
pub fn transform(s: &mut State, scratch: &mut State) {
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
pub fn search(job: &SearchJob, range: CounterRange, w: &mut Worker<'_>) -> Option<Hit> {
    let mut template = State::broadcast(job.state());
    template.set_lane_numbers();
    let mut counter = crate::search::Counter::new(range.start);
    for (j, &t) in counter.trits().iter().enumerate() {
        template.set_all(COUNTER_TRITS.start + j, t);
    }
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
        for j in 0..changed {
            template.set_all(COUNTER_TRITS.start + j, counter.trits()[j]);
        }
    }
    None
}

/// Test hook: the nonce trits (block trits 162..243) of every lane of the pre-transform states
/// [`search`] builds for the first `transforms` counters of `range`.
pub(crate) fn placed_nonces(
    job: &SearchJob,
    range: CounterRange,
    transforms: usize,
) -> Vec<[i8; 81]> {
    let mut template = State::broadcast(job.state());
    template.set_lane_numbers();
    let mut counter = crate::search::Counter::new(range.start);
    for (j, &t) in counter.trits().iter().enumerate() {
        template.set_all(COUNTER_TRITS.start + j, t);
    }
    let mut out = Vec::new();
    for n in 0..(transforms as u64).min(range.len) {
        if n > 0 {
            let changed = counter.increment();
            for j in 0..changed {
                template.set_all(COUNTER_TRITS.start + j, counter.trits()[j]);
            }
        }
        for k in 0..LANES {
            let mut nonce = [0i8; 81];
            for (j, t) in nonce.iter_mut().enumerate() {
                let i = crate::search::NONCE_OFFSET + j;
                *t = crate::search::bits_trit(
                    (template.lo[i] >> k) & 1 == 1,
                    (template.hi[i] >> k) & 1 == 1,
                );
            }
            out.push(nonce);
        }
    }
    out
}

/// Bench hook: `n` bare transforms (template copy, transform; no counter, zero test or stop
/// check). Returns a value derived from the result so nothing is optimised away.
pub(crate) fn bare_transforms(job: &SearchJob, n: usize) -> u64 {
    let mut template = State::broadcast(job.state());
    template.set_lane_numbers();
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
/// valid trits), one per lane, and write the first `out_len` trits of each final state to
/// `out`, message after message (see the SIMD kernels' `absorb_lanes`).
pub(crate) fn absorb_lanes(msgs: &[&[i8]], out_len: usize, out: &mut [i8]) {
    use super::transpose::{rows_to_words, words_to_rows, WINDOW};
    let n = msgs.len();
    let len = msgs.first().map_or(0, |m| m.len());
    assert!(n <= LANES && out_len <= STATE_LEN && out.len() == n * out_len);
    assert!(len >= HASH_LEN && len.is_multiple_of(HASH_LEN));
    assert!(msgs.iter().all(|m| m.len() == len));
    let mut s = State::broadcast(&[0; STATE_LEN]);
    let mut scratch = s.clone();
    let mut lo = vec![[0u64; 1]; len.min(WINDOW)];
    let mut hi = vec![[0u64; 1]; len.min(WINDOW)];
    for win in (0..len).step_by(WINDOW) {
        let wl = (len - win).min(WINDOW);
        rows_to_words::<1>(msgs, win, &mut lo[..wl], &mut hi[..wl]);
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
    words_to_rows::<1>(&lo, &hi, n, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bits_trit;

    #[test]
    fn four_op_sbox_matches_the_table() {
        const T: [i8; 11] = [1, 0, -1, 2, 1, -1, 0, 2, -1, 1, 0];
        for a in -1i8..=1 {
            for b in -1i8..=1 {
                let (al, ah) = trit_bits(a);
                let (bl, bh) = trit_bits(b);
                let lo = ah ^ (!bl & al);
                let hi = al ^ (bh & lo);
                assert_eq!(
                    bits_trit(lo, hi),
                    T[(a + 4 * b + 5) as usize],
                    "a={a} b={b}"
                );
            }
        }
    }

    #[test]
    fn transform_matches_scalar_per_lane() {
        // 64 different pseudo-random states, one per lane.
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut lanes = vec![[0i8; STATE_LEN]; LANES];
        for st in lanes.iter_mut() {
            for t in st.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *t = (seed % 3) as i8 - 1;
            }
        }
        let mut s = State::broadcast(&[0; STATE_LEN]);
        for (k, st) in lanes.iter().enumerate() {
            for (i, &t) in st.iter().enumerate() {
                let (l, h) = trit_bits(t);
                s.lo[i] = (s.lo[i] & !(1 << k)) | (u64::from(l) << k);
                s.hi[i] = (s.hi[i] & !(1 << k)) | (u64::from(h) << k);
            }
        }
        let mut scratch = s.clone();
        transform(&mut s, &mut scratch);
        for (k, st) in lanes.iter_mut().enumerate() {
            crate::curl::transform(st);
            for (i, &want) in st.iter().enumerate() {
                let got = bits_trit((s.lo[i] >> k) & 1 == 1, (s.hi[i] >> k) & 1 == 1);
                assert_eq!(got, want, "lane {k} trit {i}");
            }
        }
    }
}
