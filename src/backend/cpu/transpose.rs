//! Moving trits between messages (one row of trits each) and bit-sliced lane words (bit `k` of
//! trit position `x`'s word = lane `k`'s trit `x`), for hashing many messages at once on the
//! search kernels.
//!
//! Both directions work on 64 × 64 bit blocks: 64 messages' bits of 64 trit positions are
//! packed into one `u64` per message, and one bit-matrix transpose turns them into one `u64`
//! per trit position (and back): a transpose is ~1,900 instructions (callgrind), about 30 per
//! message per 64 trits and half, against a few per trit for bit-by-bit packing.

use crate::ternary::curl::planes::pack;
use crate::ternary::trinary::Trit;

/// Write up to 64 trits from their halves (`trit = high - low`).
#[inline]
fn unpack(lo: u64, hi: u64, out: &mut [Trit]) {
    for (j, t) in out.iter_mut().enumerate() {
        *t = ((hi >> j) & 1) as i8 - ((lo >> j) & 1) as i8;
    }
}

/// Transpose a 64 × 64 bit matrix in place: afterwards bit `j` of `m[i]` is what bit `i` of
/// `m[j]` was. Six rounds of block swaps (32, 16, ..., 1).
pub(crate) fn transpose64(m: &mut [u64; 64]) {
    let mut j = 32;
    let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            for i in k..k + j {
                let t = ((m[i] >> j) ^ m[i + j]) & mask;
                m[i] ^= t << j;
                m[i + j] ^= t;
            }
            k += 2 * j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// [`pack`] of 64 trits with AVX2: two compares and a byte mask per 32 trits and value.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn pack64_avx2(c: &[Trit; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let (a, b) = c.split_at(32);
    // SAFETY: `a` and `b` are 32 readable bytes each; unaligned loads need nothing else.
    let (a, b) = unsafe {
        (
            _mm256_loadu_si256(a.as_ptr().cast()),
            _mm256_loadu_si256(b.as_ptr().cast()),
        )
    };
    let mask = |v: __m256i, t: i8| _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(t)));
    let bits = |t: i8| u64::from(mask(a, t) as u32) | u64::from(mask(b, t) as u32) << 32;
    (!bits(1), !bits(-1))
}

/// Trits per window of [`rows_to_words`]: a transaction's 33 blocks. The words of one window
/// of 512 messages take 1 MB, whatever the messages' length.
pub(crate) const WINDOW: usize = 33 * crate::ternary::curl::HASH_LEN;

/// Lane words of trits `start..start + lo.len()` of every message: `lo[x][w]` bit `k` is the
/// low half of trit `start + x` of message `64·w + k` (at most 64 per word). Each
/// message's window is read once, front to back (one input stream at a time, which the
/// hardware prefetches), into 64-message row blocks that are then transposed. Lanes without a
/// message hold zero trits. Each entry of `lo` and `hi` holds the words of one trit (`[u64; W]`).
pub(crate) fn rows_to_words<A: AsMut<[u64]>>(
    msgs: &[&[Trit]],
    start: usize,
    lo: &mut [A],
    hi: &mut [A],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 was just detected on this CPU.
        return unsafe { rows_to_words_avx2(msgs, start, lo, hi) };
    }
    rows_to_words_with(msgs, start, lo, hi, |c| pack(c));
}

/// [`rows_to_words`] packing with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn rows_to_words_avx2<A: AsMut<[u64]>>(msgs: &[&[Trit]], start: usize, lo: &mut [A], hi: &mut [A]) {
    rows_to_words_with(msgs, start, lo, hi, |c| pack64_avx2(c));
}

#[inline(always)]
fn rows_to_words_with<A: AsMut<[u64]>>(
    msgs: &[&[Trit]],
    start: usize,
    lo: &mut [A],
    hi: &mut [A],
    pack64: impl Fn(&[Trit; 64]) -> (u64, u64),
) {
    let len = lo.len();
    let Some(first) = lo.first_mut() else {
        return;
    };
    let words = first.as_mut().len();
    debug_assert!(msgs.len() <= 64 * words && hi.len() == len);
    debug_assert!(msgs.iter().all(|m| m.len() >= start + len));
    let segs = len.div_ceil(64);
    let mut rl = vec![[!0u64; 64]; segs];
    let mut rh = vec![[!0u64; 64]; segs];
    for w in 0..words {
        let group = msgs.get(64 * w..).unwrap_or(&[]);
        for k in 0..64 {
            match group.get(k) {
                Some(m) => {
                    let mut chunks = m[start..start + len].chunks_exact(64);
                    for (s, chunk) in chunks.by_ref().enumerate() {
                        (rl[s][k], rh[s][k]) = pack64(chunk.try_into().expect("64 trits"));
                    }
                    if !chunks.remainder().is_empty() {
                        (rl[segs - 1][k], rh[segs - 1][k]) = pack(chunks.remainder());
                    }
                }
                None => {
                    for s in 0..segs {
                        (rl[s][k], rh[s][k]) = (!0, !0);
                    }
                }
            }
        }
        for s in 0..segs {
            transpose64(&mut rl[s]);
            transpose64(&mut rh[s]);
            let c = (len - 64 * s).min(64);
            for x in 0..c {
                lo[64 * s + x].as_mut()[w] = rl[s][x];
                hi[64 * s + x].as_mut()[w] = rh[s][x];
            }
        }
    }
}

/// The inverse of [`rows_to_words`] for `n` messages: trit `x` of message `m` goes to
/// `out[m·len + x]`, `len = lo.len()`.
pub(crate) fn words_to_rows<A: AsRef<[u64]>>(lo: &[A], hi: &[A], n: usize, out: &mut [Trit]) {
    let len = lo.len();
    let words = lo.first().map_or(0, |w| w.as_ref().len());
    debug_assert!(n <= 64 * words && hi.len() == len && out.len() == n * len);
    let mut rl = [0u64; 64];
    let mut rh = [0u64; 64];
    for seg in (0..len).step_by(64) {
        let c = (len - seg).min(64);
        for w in 0..words.min(n.div_ceil(64)) {
            rl.fill(0);
            rh.fill(0);
            for x in 0..c {
                rl[x] = lo[seg + x].as_ref()[w];
                rh[x] = hi[seg + x].as_ref()[w];
            }
            transpose64(&mut rl);
            transpose64(&mut rh);
            for k in 0..64.min(n - 64 * w) {
                let m = 64 * w + k;
                unpack(rl[k], rh[k], &mut out[m * len + seg..m * len + seg + c]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_matches_the_encoding() {
        let mut seed = 0x5555_1234_9876_0001;
        for len in [0usize, 1, 7, 8, 9, 51, 63, 64] {
            let trits: Vec<Trit> = (0..len)
                .map(|_| (xorshift(&mut seed) % 3) as i8 - 1)
                .collect();
            let (lo, hi) = pack(&trits);
            for (j, &t) in trits.iter().enumerate() {
                let (l, h) = crate::search::bitslice::encode(t);
                assert_eq!((lo >> j) & 1 == 1, l, "len {len} trit {j}");
                assert_eq!((hi >> j) & 1 == 1, h, "len {len} trit {j}");
            }
            if len < 64 {
                assert_eq!((lo >> len, hi >> len), (0, 0));
            }
        }
    }

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn transpose_is_a_transpose() {
        let mut seed = 0x1234_5678_9ABC_DEF1;
        let a: [u64; 64] = std::array::from_fn(|_| xorshift(&mut seed));
        let mut t = a;
        transpose64(&mut t);
        for (i, ti) in t.iter().enumerate() {
            for (j, aj) in a.iter().enumerate() {
                assert_eq!((ti >> j) & 1, (aj >> i) & 1, "{i} {j}");
            }
        }
        transpose64(&mut t);
        assert_eq!(t, a);
    }

    #[test]
    fn words_match_bit_by_bit_packing_and_round_trip() {
        let mut seed = 0x0F0F_1234_5555_AAAB;
        for n in [1usize, 2, 63, 64, 65, 130, 256] {
            let len = 243 * 2;
            let rows: Vec<Vec<Trit>> = (0..n)
                .map(|_| {
                    (0..len)
                        .map(|_| (xorshift(&mut seed) % 3) as i8 - 1)
                        .collect()
                })
                .collect();
            let msgs: Vec<&[Trit]> = rows.iter().map(|r| &r[..]).collect();
            let mut lo = vec![[0u64; 4]; len - 100];
            let mut hi = vec![[0u64; 4]; len - 100];
            rows_to_words(&msgs, 100, &mut lo, &mut hi);
            for x in 0..len - 100 {
                for lane in 0..256 {
                    let (l, h) = match rows.get(lane) {
                        Some(r) => crate::search::bitslice::encode(r[100 + x]),
                        None => (true, true),
                    };
                    assert_eq!((lo[x][lane / 64] >> (lane % 64)) & 1 == 1, l);
                    assert_eq!((hi[x][lane / 64] >> (lane % 64)) & 1 == 1, h);
                }
            }
            let w = len - 100;
            let mut out = vec![9i8; n * w];
            words_to_rows(&lo, &hi, n, &mut out);
            for (m, r) in rows.iter().enumerate() {
                assert_eq!(&out[m * w..(m + 1) * w], &r[100..], "n {n} message {m}");
            }
        }
    }
}
