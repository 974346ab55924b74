//! Moving trits between messages (one row of trits each) and bit-sliced lane words (bit `k` of
//! trit position `x`'s word = lane `k`'s trit `x`), for hashing many messages at once on the
//! search kernels.
//!
//! Both directions work on 64 × 64 bit blocks: 64 messages' bits of 64 trit positions are
//! packed into one `u64` per message, and one bit-matrix transpose turns them into one `u64`
//! per trit position (and back). That is ~20 operations per message per 64 trits, against two
//! per trit per message for bit-by-bit packing.

use crate::trinary::Trit;

/// The bit-sliced halves of up to 64 trits: bit `j` = trit `j` (encoding in
/// [`crate::search::trit_bits`]).
#[inline]
fn pack(trits: &[Trit]) -> (u64, u64) {
    let (mut lo, mut hi) = (0u64, 0u64);
    for (j, &t) in trits.iter().enumerate() {
        lo |= u64::from(t != 1) << j;
        hi |= u64::from(t != -1) << j;
    }
    (lo, hi)
}

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

/// Lane words of trits `start..start + lo.len()` of every message: `lo[x][w]` bit `k` is the
/// low half of trit `start + x` of message `64·w + k`. Lanes without a message hold zero trits.
pub(crate) fn rows_to_words<const W: usize>(
    msgs: &[&[Trit]],
    start: usize,
    lo: &mut [[u64; W]],
    hi: &mut [[u64; W]],
) {
    debug_assert!(msgs.len() <= 64 * W && lo.len() == hi.len());
    let n = lo.len();
    let mut rl = [0u64; 64];
    let mut rh = [0u64; 64];
    for seg in (0..n).step_by(64) {
        let c = (n - seg).min(64);
        for w in 0..W {
            for k in 0..64 {
                (rl[k], rh[k]) = match msgs.get(64 * w + k) {
                    Some(m) => pack(&m[start + seg..start + seg + c]),
                    None => (!0, !0),
                };
            }
            transpose64(&mut rl);
            transpose64(&mut rh);
            for x in 0..c {
                lo[seg + x][w] = rl[x];
                hi[seg + x][w] = rh[x];
            }
        }
    }
}

/// The inverse of [`rows_to_words`] for `n` messages: trit `x` of message `m` goes to
/// `out[m·len + x]`, `len = lo.len()`.
pub(crate) fn words_to_rows<const W: usize>(
    lo: &[[u64; W]],
    hi: &[[u64; W]],
    n: usize,
    out: &mut [Trit],
) {
    let len = lo.len();
    debug_assert!(n <= 64 * W && hi.len() == len && out.len() == n * len);
    let mut rl = [0u64; 64];
    let mut rh = [0u64; 64];
    for seg in (0..len).step_by(64) {
        let c = (len - seg).min(64);
        for w in 0..W.min(n.div_ceil(64)) {
            rl.fill(0);
            rh.fill(0);
            for x in 0..c {
                rl[x] = lo[seg + x][w];
                rh[x] = hi[seg + x][w];
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
            let mut lo = vec![[0u64; 4]; 243];
            let mut hi = vec![[0u64; 4]; 243];
            rows_to_words::<4>(&msgs, 243, &mut lo, &mut hi);
            for x in 0..243 {
                for lane in 0..256 {
                    let (l, h) = match rows.get(lane) {
                        Some(r) => crate::search::trit_bits(r[243 + x]),
                        None => (true, true),
                    };
                    assert_eq!((lo[x][lane / 64] >> (lane % 64)) & 1 == 1, l);
                    assert_eq!((hi[x][lane / 64] >> (lane % 64)) & 1 == 1, h);
                }
            }
            let mut out = vec![9i8; n * 243];
            words_to_rows::<4>(&lo, &hi, n, &mut out);
            for (m, r) in rows.iter().enumerate() {
                assert_eq!(&out[m * 243..(m + 1) * 243], &r[243..], "n {n} message {m}");
            }
        }
    }
}
