//! Decoding tryte characters straight into bit-sliced lane words (bit `k` of trit position `x`'s
//! word = message `k`'s trit `x`), for hashing many lines of trytes at once on the search
//! kernels: no trit vector per message.
//!
//! One look-up per tryte ([`TRYTE_BITS`], 256 entries) gives the bit-sliced halves of its three
//! trits; 21 trytes (63 trits) fill one `u64` row per message and half, and one 64 × 64 bit
//! transpose ([`transpose64`]) turns 64 messages' rows into one word per trit position. A
//! 243-trit block is four rows: 21, 21, 21 and 18 trytes.

use super::transpose::transpose64;
use crate::ternary::curl::HASH_LEN;
use crate::ternary::trinary::TRYTE_ALPHABET;

/// Trytes in one block (243 trits).
pub(crate) const BLOCK_TRYTES: usize = HASH_LEN / 3;

/// Per byte: the bit-sliced halves (`(low, high)`, [`crate::search::bitslice::encode`]) of the
/// three trits of a tryte character, the low halves in bits 0..3 and the high halves in bits
/// 32..35 (trit `j` at bit `j`). Zero for every byte that is not a tryte character (callers
/// check their input first).
pub(crate) const TRYTE_BITS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 27 {
        // Tryte value v = i for i <= 13, i - 27 above (the alphabet is indexed mod 27).
        let mut rest = if i <= 13 { i as i32 } else { i as i32 - 27 };
        let mut e = 0u64;
        let mut k = 0;
        while k < 3 {
            let r = rest.rem_euclid(3);
            let trit = if r == 2 { -1 } else { r };
            if trit != 1 {
                e |= 1 << k;
            }
            if trit != -1 {
                e |= 1 << (32 + k);
            }
            rest = (rest - trit) / 3;
            k += 1;
        }
        t[TRYTE_ALPHABET[i] as usize] = e;
        i += 1;
    }
    t
};

/// The rows of `N` (at most 21) trytes: bit `j` of each half = trit `j`.
#[inline(always)]
fn row<const N: usize>(trytes: &[u8; N]) -> (u64, u64) {
    const M21: u64 = (1 << 21) - 1;
    let mut lo = 0;
    let mut hi = 0;
    // Seven trytes at a time: their low halves fill bits 0..21 and their high halves bits
    // 32..53 of one word, so one shift and one or per tryte.
    let mut g = 0;
    while g * 7 < N {
        let mut acc = 0u64;
        let mut i = 0;
        while i < 7 && g * 7 + i < N {
            acc |= TRYTE_BITS[trytes[g * 7 + i] as usize] << (3 * i);
            i += 1;
        }
        lo |= (acc & M21) << (21 * g);
        hi |= ((acc >> 32) & M21) << (21 * g);
        g += 1;
    }
    (lo, hi)
}

/// The four rows of a block: trytes 0..21, 21..42, 42..63 and 63..81.
const SEGMENTS: [(usize, usize); 4] = [(0, 21), (21, 21), (42, 21), (63, 18)];

/// Lane words of block `block` (trits `243·block .. 243·block + 243`) of every message:
/// `lo[x][w]` bit `k` is the low half of the block's trit `x` of message `64·w + k`. Lanes
/// without a message hold zero trits. Every message is tryte characters only (others decode as
/// the invalid pair `(0, 0)`), at least `81·(block + 1)` of them.
pub(crate) fn block_words<A: AsMut<[u64]>>(
    msgs: &[&[u8]],
    block: usize,
    lo: &mut [A],
    hi: &mut [A],
) {
    debug_assert!(lo.len() == HASH_LEN && hi.len() == HASH_LEN);
    let words = lo[0].as_mut().len();
    debug_assert!(msgs.len() <= 64 * words);
    let start = block * BLOCK_TRYTES;
    let mut rl = [[!0u64; 64]; 4];
    let mut rh = [[!0u64; 64]; 4];
    for w in 0..words.min(msgs.len().div_ceil(64)) {
        let group = &msgs[64 * w..msgs.len().min(64 * w + 64)];
        for (k, m) in group.iter().enumerate() {
            let b: &[u8; BLOCK_TRYTES] = m[start..start + BLOCK_TRYTES]
                .try_into()
                .expect("81 trytes");
            (rl[0][k], rh[0][k]) = row::<21>(b[0..21].try_into().expect("21"));
            (rl[1][k], rh[1][k]) = row::<21>(b[21..42].try_into().expect("21"));
            (rl[2][k], rh[2][k]) = row::<21>(b[42..63].try_into().expect("21"));
            (rl[3][k], rh[3][k]) = row::<18>(b[63..81].try_into().expect("18"));
        }
        for ((rl, rh), &(off, n)) in rl.iter_mut().zip(rh.iter_mut()).zip(&SEGMENTS) {
            rl[group.len()..].fill(!0);
            rh[group.len()..].fill(!0);
            transpose64(rl);
            transpose64(rh);
            for x in 0..3 * n {
                lo[3 * off + x].as_mut()[w] = rl[x];
                hi[3 * off + x].as_mut()[w] = rh[x];
            }
        }
    }
    for w in msgs.len().div_ceil(64)..words {
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
            l.as_mut()[w] = !0;
            h.as_mut()[w] = !0;
        }
    }
}

/// The trits of one block of tryte characters (the single-state path's input).
pub(crate) fn block_trits(trytes: &[u8], out: &mut [i8; HASH_LEN]) {
    debug_assert_eq!(trytes.len(), BLOCK_TRYTES);
    for (o, &b) in out.chunks_exact_mut(3).zip(trytes) {
        let e = TRYTE_BITS[b as usize];
        for (j, t) in o.iter_mut().enumerate() {
            // (low, high): (1, 0) = -1, (1, 1) = 0, (0, 1) = 1.
            *t = ((e >> (32 + j)) & 1) as i8 - ((e >> j) & 1) as i8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bitslice::encode;

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn the_table_matches_the_parser() {
        for b in 0..=255u8 {
            let e = TRYTE_BITS[b as usize];
            match crate::ternary::trinary::tryte_value(b) {
                None => assert_eq!(e, 0, "byte {b}"),
                Some(v) => {
                    let trits = crate::ternary::trinary::tryte_value_to_trits(v);
                    for (j, &t) in trits.iter().enumerate() {
                        let (l, h) = encode(t);
                        assert_eq!((e >> j) & 1 == 1, l, "{} trit {j}", b as char);
                        assert_eq!((e >> (32 + j)) & 1 == 1, h, "{} trit {j}", b as char);
                    }
                    assert_eq!(e & !0x7_0000_0007, 0);
                }
            }
        }
    }

    #[test]
    fn block_words_match_the_parsed_trits() {
        let mut seed = 0x7777_1234_abcd_0001;
        for n in [1usize, 5, 63, 64, 65, 200, 256] {
            let lines: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    (0..3 * BLOCK_TRYTES)
                        .map(|_| TRYTE_ALPHABET[(xorshift(&mut seed) % 27) as usize])
                        .collect()
                })
                .collect();
            let msgs: Vec<&[u8]> = lines.iter().map(|l| &l[..]).collect();
            for block in 0..3 {
                let mut lo = vec![[0u64; 4]; HASH_LEN];
                let mut hi = vec![[0u64; 4]; HASH_LEN];
                block_words(&msgs, block, &mut lo, &mut hi);
                for lane in 0..256 {
                    let trits = lines.get(lane).map(|l| {
                        crate::ternary::trinary::trytes_to_trits(std::str::from_utf8(l).unwrap())
                            .unwrap()
                    });
                    let mut one = [0i8; HASH_LEN];
                    if let Some(l) = lines.get(lane) {
                        block_trits(&l[81 * block..81 * block + 81], &mut one);
                    }
                    for x in 0..HASH_LEN {
                        let (l, h) = match &trits {
                            Some(t) => {
                                assert_eq!(one[x], t[243 * block + x]);
                                encode(t[243 * block + x])
                            }
                            None => (true, true),
                        };
                        let w = lane / 64;
                        let bit = lane % 64;
                        assert_eq!((lo[x][w] >> bit) & 1 == 1, l, "n {n} lane {lane} x {x}");
                        assert_eq!((hi[x][w] >> bit) & 1 == 1, h, "n {n} lane {lane} x {x}");
                    }
                }
            }
        }
    }
}
