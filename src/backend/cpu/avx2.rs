//! The 256-lane AVX2 kernel: one `__m256i` per trit half, the 4-operation S-box as
//! and-not/xor/and/xor, the state updated in place with three rounds fused per pass (27 × 3 =
//! 81; AVX2 has 16 vector registers, too few for the five-round windows). See
//! [`wavefront`](super::wavefront) for the layout; a search runs 25 of those passes (the
//! first mostly by cones) and a six-round partial tail per counter. This file holds only the
//! vector primitives: the search loop is [`kernel`](super::kernel), generic over [`Simd`].

use std::arch::x86_64::*;

use super::simd::{Simd, Trit};
use super::wavefront::{passes, Passes, Plan};

/// The whole transform (the test hooks): 27 passes of three fused rounds.
static PLAN: Plan<27> = Plan::new([3; 27], std::mem::size_of::<Trit<__m256i>>());
/// A search's transform: the same first 25 passes, then the six-round partial tail.
static SEARCH: Plan<26> = Plan::new(passes(3, 6), std::mem::size_of::<Trit<__m256i>>());

const _: () = assert!(PLAN.full_passes(0, 27) && SEARCH.full_passes(0, 25));
const _: () = assert!(PLAN.shares_passes(&SEARCH, 25));
// `Words` and `V` hold `WORDS` words each.
const _: () = assert!(std::mem::size_of::<<Avx2 as Simd>::Words>() == 8 * <Avx2 as Simd>::WORDS);
const _: () = assert!(std::mem::size_of::<__m256i>() == 8 * <Avx2 as Simd>::WORDS);

/// AVX2 on this CPU: made only by [`Avx2::new`], which checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, if this CPU has AVX2.
    pub(crate) fn new() -> Option<Avx2> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

/// `f` compiled with AVX2 enabled (out of line: the caller's code is not).
#[target_feature(enable = "avx2")]
#[inline(never)]
fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

// SAFETY (every `unsafe` block below): an `Avx2` value exists only where `Avx2::new` found
// AVX2, so its intrinsics are available; they have no other precondition.
impl Simd for Avx2 {
    type V = __m256i;
    type Words = [u64; 4];
    const LANES: usize = 256;
    const PLAN: Passes = PLAN.passes();
    const SEARCH: Passes = SEARCH.passes();

    #[inline(always)]
    fn vectorize<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: as above.
        unsafe { with_avx2(f) }
    }

    #[inline(always)]
    fn sbox(self, a: Trit<__m256i>, b: Trit<__m256i>) -> Trit<__m256i> {
        // SAFETY: as above.
        unsafe {
            let lo = _mm256_xor_si256(a.hi, _mm256_andnot_si256(b.lo, a.lo));
            let hi = _mm256_xor_si256(a.lo, _mm256_and_si256(b.hi, lo));
            Trit { lo, hi }
        }
    }

    #[inline(always)]
    fn splat(self, t: i8) -> Trit<__m256i> {
        let (l, h) = crate::search::bitslice::encode(t);
        // SAFETY: as above.
        unsafe {
            Trit {
                lo: _mm256_set1_epi64x(-i64::from(l)),
                hi: _mm256_set1_epi64x(-i64::from(h)),
            }
        }
    }

    #[inline(always)]
    fn trit_from_words(self, lo: &[u64], hi: &[u64]) -> Trit<__m256i> {
        let v = |w: &[u64]| {
            let w: [u64; 4] = w.try_into().expect("4 words");
            let w = w.map(|x| x as i64);
            // SAFETY: as above.
            unsafe { _mm256_set_epi64x(w[3], w[2], w[1], w[0]) }
        };
        Trit {
            lo: v(lo),
            hi: v(hi),
        }
    }

    #[inline(always)]
    fn to_words(self, v: __m256i) -> [u64; 4] {
        // SAFETY: as above.
        unsafe {
            [
                _mm256_extract_epi64::<0>(v),
                _mm256_extract_epi64::<1>(v),
                _mm256_extract_epi64::<2>(v),
                _mm256_extract_epi64::<3>(v),
            ]
        }
        .map(|x| x as u64)
    }

    #[inline(always)]
    fn ones(self) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_set1_epi64x(-1) }
    }

    #[inline(always)]
    fn zero_and(self, acc: __m256i, t: Trit<__m256i>) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_andnot_si256(_mm256_xor_si256(t.lo, t.hi), acc) }
    }

    #[inline(always)]
    fn first_lane(self, acc: __m256i) -> Option<usize> {
        // SAFETY: as above.
        if unsafe { _mm256_testz_si256(acc, acc) } != 0 {
            return None;
        }
        self.to_words(acc)
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }
}
