//! The 512-lane AVX-512F kernel: one `__m512i` per trit half, the S-box as two `vpternlogq`,
//! the state updated in place with five rounds fused per pass (see
//! [`wavefront`](super::wavefront) for the layout). 93 KB of state, more than the L1 data cache
//! of any core with AVX-512 (32–48 KB), so every pass streams the whole state through L2.
//!
//! A search runs 15 five-round passes and a six-round tail per counter, and the first of the
//! passes mostly by cones (`wavefront`, "What a search runs"): 14 full sweeps per 512 nonces.
//! `docs/cpu-kernel.md` has the measurements. On the Intel Xeon (Emerald Rapids) development
//! host the loop has two floors of about the same height, both above the two `vpternlogq` per
//! trit-round: the stores into a state that streams through L2, and the work in the core
//! (spills, address-table loads). So fewer, longer passes win. Four rounds per pass (20 × 4 +
//! 1, the previous schedule) keep the window in 20 `zmm` without spills, but move 25% more
//! state per round.

use std::arch::x86_64::*;

use super::wavefront::{passes, Plan};

/// Nonces per transform.
pub const LANES: usize = 512;
const WORDS: usize = LANES / 64;

/// The whole transform (the test hooks): 16 passes of five fused rounds, then a single round.
static PLAN: Plan<17> = Plan::new(passes(5, 1), std::mem::size_of::<Trit>());
/// A search's transform: the same first 15 passes, then the six-round partial tail.
static SEARCH: Plan<16> = Plan::new(passes(5, 6), std::mem::size_of::<Trit>());

/// One trit of all 512 lanes, bit-sliced (encoding in [`crate::search::bitslice::encode`]).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Trit {
    lo: __m512i,
    hi: __m512i,
}

/// `vpternlogq` immediate of `f(a, b, c)` (operand order of `_mm512_ternarylogic_epi64`: bit
/// `4a + 2b + c` of the immediate is `f(a, b, c)`).
#[cfg(test)]
fn ternlog(f: impl Fn(bool, bool, bool) -> bool) -> i32 {
    (0..8)
        .filter(|i| f(i & 4 != 0, i & 2 != 0, i & 1 != 0))
        .map(|i| 1 << i)
        .sum()
}

/// `low' = a.hi ^ (!b.lo & a.lo)` with operands (a.hi, b.lo, a.lo).
const LO: i32 = 0xD2;
/// `high' = a.lo ^ (b.hi & low')` with operands (a.lo, b.hi, low').
const HI: i32 = 0x78;
/// `acc & !(lo ^ hi)`: lanes that are still all zero.
const ZERO_AND: i32 = 0x90;

#[cfg(test)]
#[test]
fn ternlog_immediates() {
    assert_eq!(LO, ternlog(|ah, bl, al| ah ^ (!bl & al)));
    assert_eq!(HI, ternlog(|al, bh, lo| al ^ (bh & lo)));
    assert_eq!(ZERO_AND, ternlog(|acc, lo, hi| acc & !(lo ^ hi)));
}

/// The 4-operation S-box, as two ternary-logic instructions.
#[target_feature(enable = "avx512f")]
#[inline]
fn sbox(a: Trit, b: Trit) -> Trit {
    let lo = _mm512_ternarylogic_epi64::<LO>(a.hi, b.lo, a.lo);
    let hi = _mm512_ternarylogic_epi64::<HI>(a.lo, b.hi, lo);
    Trit { lo, hi }
}

/// Every lane holds trit `t`.
#[target_feature(enable = "avx512f")]
#[inline]
fn splat(t: i8) -> Trit {
    let (l, h) = crate::search::bitslice::encode(t);
    Trit {
        lo: _mm512_set1_epi64(-i64::from(l)),
        hi: _mm512_set1_epi64(-i64::from(h)),
    }
}

#[target_feature(enable = "avx512f")]
#[inline]
fn vector(w: [u64; WORDS]) -> __m512i {
    let w = w.map(|x| x as i64);
    _mm512_set_epi64(w[7], w[6], w[5], w[4], w[3], w[2], w[1], w[0])
}

/// A trit from lane bit masks (lane `l` = bit `l mod 64` of word `l / 64`).
#[target_feature(enable = "avx512f")]
fn from_words(lo: [u64; WORDS], hi: [u64; WORDS]) -> Trit {
    Trit {
        lo: vector(lo),
        hi: vector(hi),
    }
}

/// The lane bit masks of a vector.
#[target_feature(enable = "avx512f")]
fn to_words(v: __m512i) -> [u64; WORDS] {
    let a = _mm512_extracti64x4_epi64::<0>(v);
    let b = _mm512_extracti64x4_epi64::<1>(v);
    [
        _mm256_extract_epi64::<0>(a),
        _mm256_extract_epi64::<1>(a),
        _mm256_extract_epi64::<2>(a),
        _mm256_extract_epi64::<3>(a),
        _mm256_extract_epi64::<0>(b),
        _mm256_extract_epi64::<1>(b),
        _mm256_extract_epi64::<2>(b),
        _mm256_extract_epi64::<3>(b),
    ]
    .map(|x| x as u64)
}

#[target_feature(enable = "avx512f")]
#[inline]
fn ones() -> __m512i {
    _mm512_set1_epi64(-1)
}

#[target_feature(enable = "avx512f")]
#[inline]
fn zero_and(acc: __m512i, t: Trit) -> __m512i {
    _mm512_ternarylogic_epi64::<ZERO_AND>(acc, t.lo, t.hi)
}

/// The lowest set bit of `acc`, as a lane number.
#[target_feature(enable = "avx512f")]
#[inline]
fn first_lane(acc: __m512i) -> Option<usize> {
    let words = _mm512_test_epi64_mask(acc, acc);
    if words == 0 {
        return None;
    }
    let w = words.trailing_zeros();
    // Move word `w` to position 0 and read it.
    let word = _mm512_maskz_compress_epi64(1 << w, acc);
    let bits = _mm_cvtsi128_si64(_mm512_castsi512_si128(word)) as u64;
    Some(w as usize * 64 + bits.trailing_zeros() as usize)
}

super::wavefront::wavefront_kernel!("avx512f");
