//! Bit-sliced trits: how every backend (the CPU kernels, OpenCL, wgpu) and the host code that
//! feeds them pack trits into bit planes, written once.
//!
//! A trit of one lane is two bits, `(low, high)`: `-1 → (1, 0)`, `0 → (1, 1)`, `+1 → (0, 1)`;
//! `(0, 0)` never occurs. A word of `B` bits carries `B` lanes (bit `k` is lane `k`), and a state
//! of many lanes is, for every trit position, a run of words: lane `l` is bit `l mod B` of word
//! `l / B` ([`Planes`]). With this encoding the Curl S-box is four logic operations and a lane
//! holds a zero trit exactly where `!(low ^ high)` has its bit set.

#[cfg(any(test, feature = "wgpu"))]
use crate::search::nonce::LANE_TRITS;
use crate::ternary::trinary::Trit;

/// The bit-sliced encoding of one trit: `(low, high)`.
#[inline]
pub(crate) fn encode(t: Trit) -> (bool, bool) {
    (t != 1, t != -1)
}

/// Decode a `(low, high)` pair; `(0, 0)` is not a trit.
#[inline]
pub(crate) fn decode(low: bool, high: bool) -> Option<Trit> {
    match (low, high) {
        (true, false) => Some(-1),
        (true, true) => Some(0),
        (false, true) => Some(1),
        (false, false) => None,
    }
}

/// Every lane of a word of `bits` bits (1..=64) holding trit `t`: `(low word, high word)`.
#[inline]
pub(crate) fn splat(t: Trit, bits: u32) -> (u64, u64) {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (l, h) = encode(t);
    (if l { mask } else { 0 }, if h { mask } else { 0 })
}

/// A `(0, 0)` pair: not a trit (a device that computed garbage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadTrit {
    /// The lane.
    pub lane: usize,
    /// The trit position.
    pub trit: usize,
}

impl std::fmt::Display for BadTrit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "lane {} trit {} is (0, 0), not a trit",
            self.lane, self.trit
        )
    }
}

/// Many lanes of `len` trits each, bit-sliced: for trit `i`, `words` words of `bits` lanes per
/// half (`lo[i * words + w]`, `hi[i * words + w]`), lane `l` at bit `l % bits` of word
/// `l / bits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planes {
    /// Trits per lane.
    pub len: usize,
    /// Words per trit half.
    pub words: usize,
    /// Lanes per word (1..=64).
    pub bits: u32,
    /// Low halves, trit-major.
    pub lo: Vec<u64>,
    /// High halves, trit-major.
    pub hi: Vec<u64>,
}

impl Planes {
    /// `words × bits` lanes, every trit zero.
    pub(crate) fn zeros(len: usize, words: usize, bits: u32) -> Self {
        let (l, h) = splat(0, bits);
        Planes {
            len,
            words,
            bits,
            lo: vec![l; len * words],
            hi: vec![h; len * words],
        }
    }

    /// Lanes that all hold `trits`.
    #[cfg(feature = "wgpu")]
    pub(crate) fn broadcast(trits: &[Trit], words: usize, bits: u32) -> Self {
        let mut p = Planes::zeros(trits.len(), words, bits);
        for (i, &t) in trits.iter().enumerate() {
            p.fill(i, t);
        }
        p
    }

    /// Lane `k` = `states[k]`; lanes past `states.len()` hold zero trits. There must be room:
    /// `states.len() <= words * bits`.
    pub(crate) fn from_states<const N: usize>(
        states: &[[Trit; N]],
        words: usize,
        bits: u32,
    ) -> Self {
        assert!(
            states.len() <= words * bits as usize,
            "more states than lanes"
        );
        let mut p = Planes::zeros(N, words, bits);
        for (k, st) in states.iter().enumerate() {
            for (i, &t) in st.iter().enumerate() {
                p.set(i, k, t);
            }
        }
        p
    }

    /// The first `n` lanes as states; an error names the first lane and trit that is `(0, 0)`.
    pub(crate) fn to_states<const N: usize>(&self, n: usize) -> Result<Vec<[Trit; N]>, BadTrit> {
        assert_eq!(self.len, N, "planes of another length");
        (0..n)
            .map(|lane| {
                let mut st = [0; N];
                for (trit, t) in st.iter_mut().enumerate() {
                    *t = self.get(trit, lane).ok_or(BadTrit { lane, trit })?;
                }
                Ok(st)
            })
            .collect()
    }

    /// Every lane's trit `i` := `t`.
    #[cfg(feature = "wgpu")]
    pub(crate) fn fill(&mut self, i: usize, t: Trit) {
        let (l, h) = splat(t, self.bits);
        let at = i * self.words;
        self.lo[at..at + self.words].fill(l);
        self.hi[at..at + self.words].fill(h);
    }

    /// Lane `k`'s trit `i` := `t`.
    pub(crate) fn set(&mut self, i: usize, k: usize, t: Trit) {
        let (w, bit) = self.at(i, k);
        let (l, h) = encode(t);
        self.lo[w] = (self.lo[w] & !(1 << bit)) | (u64::from(l) << bit);
        self.hi[w] = (self.hi[w] & !(1 << bit)) | (u64::from(h) << bit);
    }

    /// Lane `k`'s trit `i`, `None` for `(0, 0)`.
    pub(crate) fn get(&self, i: usize, k: usize) -> Option<Trit> {
        let (w, bit) = self.at(i, k);
        decode((self.lo[w] >> bit) & 1 == 1, (self.hi[w] >> bit) & 1 == 1)
    }

    /// Write every lane's number into the lane trits of a Curl block: lane `l` gets the
    /// balanced ternary of `l - 364` in trits 162..168 ([the nonce layout](crate::device#the-nonce-layout)).
    #[cfg(any(test, feature = "wgpu"))]
    pub(crate) fn set_lane_numbers(&mut self) {
        for k in 0..self.words * self.bits as usize {
            for (j, &t) in crate::search::nonce::lane_trits(k).iter().enumerate() {
                self.set(LANE_TRITS.start + j, k, t);
            }
        }
    }

    /// Trit `i`'s words, `(low, high)`.
    pub(crate) fn words_of(&self, i: usize) -> (&[u64], &[u64]) {
        let at = i * self.words;
        (&self.lo[at..at + self.words], &self.hi[at..at + self.words])
    }

    fn at(&self, i: usize, k: usize) -> (usize, u32) {
        let bits = self.bits as usize;
        (i * self.words + k / bits, (k % bits) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane-number trits 162..168 for `words` 64-bit words of lanes: `[j] = (low words, high
    /// words)` of lane trit `j`.
    fn lane_number_words<const W: usize>() -> [([u64; W], [u64; W]); 6] {
        let mut p = Planes::zeros(LANE_TRITS.end, W, 64);
        p.set_lane_numbers();
        std::array::from_fn(|j| {
            let (lo, hi) = p.words_of(LANE_TRITS.start + j);
            (
                lo.try_into().expect("W words"),
                hi.try_into().expect("W words"),
            )
        })
    }

    #[test]
    fn encoding_round_trips_and_rejects_zero_zero() {
        for t in -1..=1 {
            let (l, h) = encode(t);
            assert_eq!(decode(l, h), Some(t));
        }
        assert_eq!(decode(false, false), None);
    }

    #[test]
    fn states_round_trip_through_planes() {
        let states: Vec<[Trit; 10]> = (0..70)
            .map(|k| std::array::from_fn(|i| ((k * 7 + i * 3) % 3) as Trit - 1))
            .collect();
        for bits in [32, 64] {
            let p = Planes::from_states(&states, 3, bits);
            assert_eq!(p.to_states::<10>(70).unwrap(), states);
            // Unused lanes are zero trits, never (0, 0).
            assert_eq!(p.get(4, 80), Some(0));
        }
    }

    #[test]
    fn lane_numbers_match_the_nonce_layout() {
        let w = lane_number_words::<2>();
        for lane in [0usize, 1, 63, 64, 127] {
            let t = crate::search::nonce::lane_trits(lane);
            for (j, &tj) in t.iter().enumerate() {
                let (l, h) = encode(tj);
                assert_eq!((w[j].0[lane / 64] >> (lane % 64)) & 1 == 1, l);
                assert_eq!((w[j].1[lane / 64] >> (lane % 64)) & 1 == 1, h);
            }
        }
    }

    #[test]
    fn bad_planes_name_the_lane_and_trit() {
        let mut p = Planes::zeros(5, 1, 64);
        p.lo[3] &= !(1 << 2);
        p.hi[3] &= !(1 << 2);
        assert_eq!(p.to_states::<5>(4), Err(BadTrit { lane: 2, trit: 3 }));
    }
}
