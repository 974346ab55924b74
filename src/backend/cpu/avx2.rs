//! The 256-lane AVX2 kernel: one `__m256i` per trit half, the 4-operation S-box as
//! and-not/xor/and/xor, the state updated in place with three rounds fused per pass (27 × 3 =
//! 81; AVX2 has 16 vector registers, too few for the five-round windows). See
//! [`wavefront`](super::wavefront) for the layout; a search runs 25 of those passes (the
//! first mostly by cones) and a six-round partial tail per counter.

use std::arch::x86_64::*;

use super::wavefront::{passes, Plan};

/// Nonces per transform.
pub const LANES: usize = 256;
const WORDS: usize = LANES / 64;

/// The whole transform (the test hooks): 27 passes of three fused rounds.
static PLAN: Plan<27> = Plan::new([3; 27], std::mem::size_of::<Trit>());
/// A search's transform: the same first 25 passes, then the six-round partial tail.
static SEARCH: Plan<26> = Plan::new(passes(3, 6), std::mem::size_of::<Trit>());

/// One trit of all 256 lanes, bit-sliced (encoding in [`crate::search::bitslice::encode`]).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Trit {
    lo: __m256i,
    hi: __m256i,
}

/// The 4-operation S-box: `low' = a.hi ^ (!b.lo & a.lo)`, `high' = a.lo ^ (b.hi & low')`.
#[target_feature(enable = "avx2")]
#[inline]
fn sbox(a: Trit, b: Trit) -> Trit {
    let lo = _mm256_xor_si256(a.hi, _mm256_andnot_si256(b.lo, a.lo));
    let hi = _mm256_xor_si256(a.lo, _mm256_and_si256(b.hi, lo));
    Trit { lo, hi }
}

/// Every lane holds trit `t`.
#[target_feature(enable = "avx2")]
#[inline]
fn splat(t: i8) -> Trit {
    let (l, h) = crate::search::bitslice::encode(t);
    Trit {
        lo: _mm256_set1_epi64x(-i64::from(l)),
        hi: _mm256_set1_epi64x(-i64::from(h)),
    }
}

#[target_feature(enable = "avx2")]
#[inline]
fn vector(w: [u64; WORDS]) -> __m256i {
    let w = w.map(|x| x as i64);
    _mm256_set_epi64x(w[3], w[2], w[1], w[0])
}

/// A trit from lane bit masks (lane `l` = bit `l mod 64` of word `l / 64`).
#[target_feature(enable = "avx2")]
fn from_words(lo: [u64; WORDS], hi: [u64; WORDS]) -> Trit {
    Trit {
        lo: vector(lo),
        hi: vector(hi),
    }
}

/// The lane bit masks of a vector.
#[target_feature(enable = "avx2")]
fn to_words(v: __m256i) -> [u64; WORDS] {
    [
        _mm256_extract_epi64::<0>(v),
        _mm256_extract_epi64::<1>(v),
        _mm256_extract_epi64::<2>(v),
        _mm256_extract_epi64::<3>(v),
    ]
    .map(|x| x as u64)
}

#[target_feature(enable = "avx2")]
#[inline]
fn ones() -> __m256i {
    _mm256_set1_epi64x(-1)
}

/// `acc & !(lo ^ hi)`: lanes that are still all zero.
#[target_feature(enable = "avx2")]
#[inline]
fn zero_and(acc: __m256i, t: Trit) -> __m256i {
    _mm256_andnot_si256(_mm256_xor_si256(t.lo, t.hi), acc)
}

/// The lowest set bit of `acc`, as a lane number.
#[target_feature(enable = "avx2")]
#[inline]
fn first_lane(acc: __m256i) -> Option<usize> {
    if _mm256_testz_si256(acc, acc) != 0 {
        return None;
    }
    to_words(acc)
        .iter()
        .enumerate()
        .find(|(_, w)| **w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

super::wavefront::wavefront_kernel!("avx2");
