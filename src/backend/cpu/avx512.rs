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
//! state per round. This file holds only the vector primitives: the search loop is
//! [`kernel`](super::kernel), generic over [`Simd`].

use std::arch::x86_64::*;

use super::simd::{Simd, Trit};
use super::wavefront::{passes, Passes, Plan};

/// The whole transform (the test hooks): 16 passes of five fused rounds, then a single round.
static PLAN: Plan<17> = Plan::new(passes(5, 1), std::mem::size_of::<Trit<__m512i>>());
/// A search's transform: the same first 15 passes, then the six-round partial tail.
static SEARCH: Plan<16> = Plan::new(passes(5, 6), std::mem::size_of::<Trit<__m512i>>());

const _: () = assert!(PLAN.full_passes(0, 17) && SEARCH.full_passes(0, 15));
const _: () = assert!(PLAN.shares_passes(&SEARCH, 15));
// `Words` and `V` hold `WORDS` words each.
const _: () =
    assert!(std::mem::size_of::<<Avx512 as Simd>::Words>() == 8 * <Avx512 as Simd>::WORDS);
const _: () = assert!(std::mem::size_of::<__m512i>() == 8 * <Avx512 as Simd>::WORDS);

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

/// AVX-512F on this CPU: made only by [`Avx512::new`], which checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The token, if this CPU has AVX-512F.
    pub(crate) fn new() -> Option<Avx512> {
        std::is_x86_feature_detected!("avx512f").then_some(Avx512(()))
    }
}

/// `f` compiled with AVX-512F enabled (out of line: the caller's code is not).
#[target_feature(enable = "avx512f")]
#[inline(never)]
fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

// SAFETY (every `unsafe` block below): an `Avx512` value exists only where `Avx512::new` found
// AVX-512F, so its intrinsics are available; they have no other precondition.
impl Simd for Avx512 {
    type V = __m512i;
    type Words = [u64; 8];
    const LANES: usize = 512;
    const PLAN: Passes = PLAN.passes();
    const SEARCH: Passes = SEARCH.passes();

    #[inline(always)]
    fn vectorize<R>(self, f: impl FnOnce() -> R) -> R {
        // SAFETY: as above.
        unsafe { with_avx512(f) }
    }

    /// The 4-operation S-box, as two ternary-logic instructions.
    #[inline(always)]
    fn sbox(self, a: Trit<__m512i>, b: Trit<__m512i>) -> Trit<__m512i> {
        // SAFETY: as above.
        unsafe {
            let lo = _mm512_ternarylogic_epi64::<LO>(a.hi, b.lo, a.lo);
            let hi = _mm512_ternarylogic_epi64::<HI>(a.lo, b.hi, lo);
            Trit { lo, hi }
        }
    }

    #[inline(always)]
    fn splat(self, t: i8) -> Trit<__m512i> {
        let (l, h) = crate::search::bitslice::encode(t);
        // SAFETY: as above.
        unsafe {
            Trit {
                lo: _mm512_set1_epi64(-i64::from(l)),
                hi: _mm512_set1_epi64(-i64::from(h)),
            }
        }
    }

    #[inline(always)]
    fn trit_from_words(self, lo: &[u64], hi: &[u64]) -> Trit<__m512i> {
        let v = |w: &[u64]| {
            let w: [u64; 8] = w.try_into().expect("8 words");
            let w = w.map(|x| x as i64);
            // SAFETY: as above.
            unsafe { _mm512_set_epi64(w[7], w[6], w[5], w[4], w[3], w[2], w[1], w[0]) }
        };
        Trit {
            lo: v(lo),
            hi: v(hi),
        }
    }

    #[inline(always)]
    fn to_words(self, v: __m512i) -> [u64; 8] {
        // SAFETY: as above.
        unsafe {
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
        }
        .map(|x| x as u64)
    }

    #[inline(always)]
    fn ones(self) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_set1_epi64(-1) }
    }

    #[inline(always)]
    fn zero_and(self, acc: __m512i, t: Trit<__m512i>) -> __m512i {
        // SAFETY: as above.
        unsafe { _mm512_ternarylogic_epi64::<ZERO_AND>(acc, t.lo, t.hi) }
    }

    #[inline(always)]
    fn first_lane(self, acc: __m512i) -> Option<usize> {
        // SAFETY: as above.
        unsafe {
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
    }
}
