//! The planes transform ([`planes`](super::planes)) with AVX-512F: a plane is two `zmm` of 16
//! limbs (27 limbs and 5 scratch lanes), a rotation is two `vpermt2d` (whole limbs), two
//! variable shifts and one `vpternlogd` (or, then mask) per vector, the S-box two `vpternlogd`.
//!
//! The scratch lanes `27..32` hold copies of limbs `0..5`, so the second tap of lane `l`, limb
//! `l + a + 1`, is always lane `idx + 1` of the 32-lane pair without a wrap test: the copies stay
//! copies because lane `27 + k` computes exactly what lane `k` computes.

use std::arch::x86_64::*;

use super::planes::{StatePlanes, LANES, LIMB, MASK, ROTATION, THIRDS};
use crate::ternary::curl::ROUNDS;

/// `vpternlogd` immediates (bit `4a + 2b + c` is `f(a, b, c)`; checked in the tests).
/// `low' = a.hi ^ (!b.lo & a.lo)` with operands (a.hi, b.lo, a.lo).
const LO: i32 = 0xD2;
/// `high' = a.lo ^ (b.hi & low')` with operands (a.lo, b.hi, low').
const HI: i32 = 0x78;
/// `(a | b) & c`.
const OR_AND: i32 = 0xA8;
/// `m ? a : b` with operands (m, a, b).
const SELECT: i32 = 0xCA;

/// 64-byte aligned lane tables.
#[repr(C, align(64))]
struct Aligned<T>(T);

/// The limb lane `l` stands for: `l`, or `l - 27` for the scratch copies.
const fn limb_of_lane(l: usize) -> usize {
    if l < LIMB {
        l
    } else {
        l - LIMB
    }
}

/// One round's constants: the source lane of each lane for both taps, `(limb + a) mod 27` and
/// one more, and the two shift counts (loaded, so they cost no shuffle port).
#[derive(Clone, Copy)]
struct Round {
    taps: [u32; LANES],
    next: [u32; LANES],
    shr: u32,
    shl: u32,
}

static ROUNDS_TABLE: Aligned<[Round; ROUNDS]> = Aligned({
    let mut t = [Round {
        taps: [0; LANES],
        next: [0; LANES],
        shr: 0,
        shl: 0,
    }; ROUNDS];
    let mut r = 0;
    while r < ROUNDS {
        let (a, b) = (ROTATION[r].0 as usize, ROTATION[r].1 as u32);
        let mut l = 0;
        while l < LANES {
            let x = (limb_of_lane(l) + a) % LIMB;
            t[r].taps[l] = x as u32;
            t[r].next[l] = x as u32 + 1;
            l += 1;
        }
        t[r].shr = b;
        t[r].shl = LIMB as u32 - b;
        r += 1;
    }
    t
});

/// Lane tables for the entry and the final reorder: `[0]` sets the scratch copies (lane `l`
/// takes limb `limb_of_lane(l)`), `[1]` and `[2]` read limbs `+9` and `+18`.
static MOVES: Aligned<[[u32; LANES]; 3]> = Aligned({
    let mut t = [[0u32; LANES]; 3];
    let mut l = 0;
    while l < LANES {
        let x = limb_of_lane(l);
        t[0][l] = x as u32;
        t[1][l] = ((x + 9) % LIMB) as u32;
        t[2][l] = ((x + 18) % LIMB) as u32;
        l += 1;
    }
    t
});

#[target_feature(enable = "avx512f")]
#[inline]
fn load(v: &[u32; 16]) -> __m512i {
    // SAFETY: `v` is 64 readable bytes; an unaligned load needs nothing else.
    unsafe { _mm512_loadu_si512(v.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f")]
#[inline]
fn store(v: &mut [u32; 16], x: __m512i) {
    // SAFETY: `v` is 64 writable bytes; an unaligned store needs nothing else.
    unsafe { _mm512_storeu_si512(v.as_mut_ptr().cast(), x) }
}

/// The two 16-lane halves of a 32-lane table.
#[inline]
fn halves(t: &[u32; LANES]) -> (&[u32; 16], &[u32; 16]) {
    let (a, b) = t.split_at(16);
    (
        a.try_into().expect("16 lanes"),
        b.try_into().expect("16 lanes"),
    )
}

#[inline]
fn halves_mut(t: &mut [u32; LANES]) -> (&mut [u32; 16], &mut [u32; 16]) {
    let (a, b) = t.split_at_mut(16);
    (
        a.try_into().expect("16 lanes"),
        b.try_into().expect("16 lanes"),
    )
}

/// A plane as two vectors with the scratch copies set.
#[target_feature(enable = "avx512f")]
#[inline]
fn load_plane(p: &[u32; LANES]) -> (__m512i, __m512i) {
    let (a, b) = halves(p);
    let (a, b) = (load(a), load(b));
    let (_, fix) = halves(&MOVES.0[0]);
    (a, _mm512_permutex2var_epi32(a, load(fix), b))
}

/// One output vector of a rotation: lanes `taps` and `taps + 1` of the pair, funnel-shifted.
#[target_feature(enable = "avx512f")]
#[inline]
fn rotate(
    v: (__m512i, __m512i),
    taps: __m512i,
    next: __m512i,
    shr: __m512i,
    shl: __m512i,
) -> __m512i {
    let x = _mm512_srlv_epi32(_mm512_permutex2var_epi32(v.0, taps, v.1), shr);
    let y = _mm512_sllv_epi32(_mm512_permutex2var_epi32(v.0, next, v.1), shl);
    _mm512_ternarylogic_epi32::<OR_AND>(x, y, _mm512_set1_epi32(MASK as i32))
}

/// The final reorder of one vector: bit `j` of limb `i` comes from limb `i + 9·(j mod 3)`.
#[target_feature(enable = "avx512f")]
#[inline]
fn reorder(v: (__m512i, __m512i), half: usize) -> __m512i {
    let own = if half == 0 { v.0 } else { v.1 };
    let (a9, b9) = halves(&MOVES.0[1]);
    let (a18, b18) = halves(&MOVES.0[2]);
    let i9 = load(if half == 0 { a9 } else { b9 });
    let i18 = load(if half == 0 { a18 } else { b18 });
    let s9 = _mm512_permutex2var_epi32(v.0, i9, v.1);
    let s18 = _mm512_permutex2var_epi32(v.0, i18, v.1);
    let t = _mm512_ternarylogic_epi32::<SELECT>(_mm512_set1_epi32(THIRDS[0] as i32), own, s9);
    _mm512_ternarylogic_epi32::<SELECT>(_mm512_set1_epi32(THIRDS[2] as i32), s18, t)
}

/// The Curl-P-81 permutation of `p` in place.
#[target_feature(enable = "avx512f")]
pub(super) fn transform(p: &mut StatePlanes) {
    let mut lo = load_plane(&p.lo);
    let mut hi = load_plane(&p.hi);
    for round in &ROUNDS_TABLE.0 {
        let (t0, t1) = halves(&round.taps);
        let (t0, t1) = (load(t0), load(t1));
        let (n0, n1) = halves(&round.next);
        let (n0, n1) = (load(n0), load(n1));
        let shr = _mm512_set1_epi32(round.shr as i32);
        let shl = _mm512_set1_epi32(round.shl as i32);
        let rl0 = rotate(lo, t0, n0, shr, shl);
        let rl1 = rotate(lo, t1, n1, shr, shl);
        let rh0 = rotate(hi, t0, n0, shr, shl);
        let rh1 = rotate(hi, t1, n1, shr, shl);
        let l0 = _mm512_ternarylogic_epi32::<LO>(hi.0, rl0, lo.0);
        let l1 = _mm512_ternarylogic_epi32::<LO>(hi.1, rl1, lo.1);
        let h0 = _mm512_ternarylogic_epi32::<HI>(lo.0, rh0, l0);
        let h1 = _mm512_ternarylogic_epi32::<HI>(lo.1, rh1, l1);
        lo = (l0, l1);
        hi = (h0, h1);
    }
    let (a, b) = halves_mut(&mut p.lo);
    store(a, reorder(lo, 0));
    store(b, reorder(lo, 1));
    let (a, b) = halves_mut(&mut p.hi);
    store(a, reorder(hi, 0));
    store(b, reorder(hi, 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ternlog(f: impl Fn(bool, bool, bool) -> bool) -> i32 {
        (0..8)
            .filter(|i| f(i & 4 != 0, i & 2 != 0, i & 1 != 0))
            .map(|i| 1 << i)
            .sum()
    }

    #[test]
    fn immediates() {
        assert_eq!(LO, ternlog(|ah, bl, al| ah ^ (!bl & al)));
        assert_eq!(HI, ternlog(|al, bh, lo| al ^ (bh & lo)));
        assert_eq!(OR_AND, ternlog(|a, b, c| (a | b) & c));
        assert_eq!(SELECT, ternlog(|m, a, b| if m { a } else { b }));
    }
}
