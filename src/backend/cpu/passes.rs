//! The full sweeps of the in-place wavefront ([`wavefront`](super::wavefront) has the math): a
//! pass of 5, 4, 3 or 1 fused rounds over the whole state, and the 81-round transform made of
//! them, generic over the instruction set.
//!
//! The hot passes address the state through raw pointers and a plan's `off` tables: every
//! `off` entry is a slot below `SLOTS` in units of 8 bytes (checked when the plan is built), and
//! every index into a table is below `ADDR_LEN` by the loop bounds. The callers
//! ([`transform`], the search's `Work`) hand them arrays of at least `SLOTS` trits.

use super::simd::{Simd, Trit};
use super::wavefront::{side_len, ADDR_LEN, SLOTS};
use crate::ternary::curl::STATE_LEN;

/// The trit at table entry `i` of `off` from `base`.
///
/// # Safety
/// `base` points to at least `SLOTS` trits and `i < ADDR_LEN`.
#[inline(always)]
unsafe fn load<V: Copy>(base: *const Trit<V>, off: &[u16; ADDR_LEN], i: usize) -> Trit<V> {
    // SAFETY: the caller's contract; the offset is a whole slot below SLOTS, so the read is in
    // bounds and aligned.
    unsafe { *base.byte_add(usize::from(*off.get_unchecked(i)) * 8) }
}

/// Write `v` at table entry `i` of `off` from `base`.
///
/// # Safety
/// As [`load`].
#[inline(always)]
unsafe fn store<V: Copy>(base: *mut Trit<V>, off: &[u16; ADDR_LEN], i: usize, v: Trit<V>) {
    // SAFETY: as in `load`.
    unsafe { *base.byte_add(usize::from(*off.get_unchecked(i)) * 8) = v }
}

/// Copy `L_0[729..729 + n]` aside before an in-place pass overwrites slots `L_0[0..n]`.
///
/// # Safety
/// `y` points to at least `SLOTS` trits; `n ≤ SIDE`.
#[inline(always)]
pub(crate) unsafe fn save_side<V: Copy>(y: *mut Trit<V>, off: &[u16; ADDR_LEN], n: usize) {
    for k in 0..n {
        // SAFETY: k + 10 < ADDR_LEN and STATE_LEN + k < SLOTS.
        unsafe { *y.add(STATE_LEN + k) = load(y, off, k + 10) };
    }
}

/// One wavefront step of [`pass5`] at ring position `U = i mod 9`. Each level keeps its recent
/// values in a 9-entry ring indexed by constants (the loop is unrolled by 18, two ring periods:
/// the compiler holds the live values in registers and spills only at the back edge). `STORE`:
/// the step is past the warm-up and writes its output.
///
/// # Safety
/// [`pass5`]'s contract, `i + 16 < ADDR_LEN`, and `i ≥ 5` when `STORE`.
#[inline(always)]
unsafe fn step5<S: Simd, const STORE: bool, const U: usize>(
    s: S,
    i: usize,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
    r: &mut [[Trit<S::V>; 9]; 4],
) {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 16)) };
    r[0][U] = s.sbox(a, b); // L1[t]
    r[1][U] = s.sbox(r[0][U], r[0][(U + 1) % 9]); // L2[t] = S(L1[t], L1[t-8])
    r[2][U] = s.sbox(r[1][(U + 5) % 9], r[1][U]); // L3[t-4] = S(L2[t-4], L2[t])
    r[3][U] = s.sbox(r[2][U], r[2][(U + 7) % 9]); // L4[t-4] = S(L3[t-4], L3[t-6])
    let out = s.sbox(r[3][(U + 8) % 9], r[3][U]); // L5[t-5] = S(L4[t-5], L4[t-4])
    if STORE {
        // SAFETY: the caller's contract.
        unsafe { store(dst, off, i - 5, out) };
    }
}

/// Five rounds in one sweep. Offsets 16, -8, 4, -2, 1; step `t` computes `L1[t]`, `L2[t]`,
/// `L3[t-4]`, `L4[t-4]`, `L5[t-5]` (see the `wavefront` docs) for `t = -10..=733`, and stores
/// `L5` from `t = 5` on. Reads `src`, writes `dst` (the same array for an in-place pass).
///
/// # Safety
/// `src` and `dst` point to at least `SLOTS` trits; an in-place pass has saved its side slots,
/// a pass from another array has that array's side slots filled.
#[inline(always)]
unsafe fn pass5<S: Simd>(
    s: S,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
) {
    let mut r = [[s.splat(0); 9]; 4];
    // SAFETY: for every step, step index i = t - Z_MIN runs 0..744, so i + 16 < 760 =
    // ADDR_LEN, and steps store from i = 15. 744 = 15 warm-up steps + 40 × 18 + 9.
    unsafe {
        step5::<S, false, 0>(s, 0, src, dst, off, &mut r);
        step5::<S, false, 1>(s, 1, src, dst, off, &mut r);
        step5::<S, false, 2>(s, 2, src, dst, off, &mut r);
        step5::<S, false, 3>(s, 3, src, dst, off, &mut r);
        step5::<S, false, 4>(s, 4, src, dst, off, &mut r);
        step5::<S, false, 5>(s, 5, src, dst, off, &mut r);
        step5::<S, false, 6>(s, 6, src, dst, off, &mut r);
        step5::<S, false, 7>(s, 7, src, dst, off, &mut r);
        step5::<S, false, 8>(s, 8, src, dst, off, &mut r);
        step5::<S, false, 0>(s, 9, src, dst, off, &mut r);
        step5::<S, false, 1>(s, 10, src, dst, off, &mut r);
        step5::<S, false, 2>(s, 11, src, dst, off, &mut r);
        step5::<S, false, 3>(s, 12, src, dst, off, &mut r);
        step5::<S, false, 4>(s, 13, src, dst, off, &mut r);
        step5::<S, false, 5>(s, 14, src, dst, off, &mut r);
        let mut i = 15;
        while i < 744 {
            step5::<S, true, 6>(s, i, src, dst, off, &mut r);
            step5::<S, true, 7>(s, i + 1, src, dst, off, &mut r);
            step5::<S, true, 8>(s, i + 2, src, dst, off, &mut r);
            step5::<S, true, 0>(s, i + 3, src, dst, off, &mut r);
            step5::<S, true, 1>(s, i + 4, src, dst, off, &mut r);
            step5::<S, true, 2>(s, i + 5, src, dst, off, &mut r);
            step5::<S, true, 3>(s, i + 6, src, dst, off, &mut r);
            step5::<S, true, 4>(s, i + 7, src, dst, off, &mut r);
            step5::<S, true, 5>(s, i + 8, src, dst, off, &mut r);
            if i + 9 == 744 {
                break;
            }
            step5::<S, true, 6>(s, i + 9, src, dst, off, &mut r);
            step5::<S, true, 7>(s, i + 10, src, dst, off, &mut r);
            step5::<S, true, 8>(s, i + 11, src, dst, off, &mut r);
            step5::<S, true, 0>(s, i + 12, src, dst, off, &mut r);
            step5::<S, true, 1>(s, i + 13, src, dst, off, &mut r);
            step5::<S, true, 2>(s, i + 14, src, dst, off, &mut r);
            step5::<S, true, 3>(s, i + 15, src, dst, off, &mut r);
            step5::<S, true, 4>(s, i + 16, src, dst, off, &mut r);
            step5::<S, true, 5>(s, i + 17, src, dst, off, &mut r);
            i += 18;
        }
    }
}

/// One wavefront step of [`pass4`] at ring position `U = i mod 5`.
///
/// # Safety
/// [`pass4`]'s contract, `i + 8 < ADDR_LEN`, and `i ≥ 2` when `STORE`.
#[inline(always)]
unsafe fn step4<S: Simd, const STORE: bool, const U: usize>(
    s: S,
    i: usize,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
    r: &mut [[Trit<S::V>; 5]; 3],
) {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 8)) };
    r[0][U] = s.sbox(a, b); // L1[t]
    r[1][U] = s.sbox(r[0][U], r[0][(U + 1) % 5]); // L2[t] = S(L1[t], L1[t-4])
    r[2][U] = s.sbox(r[1][(U + 3) % 5], r[1][U]); // L3[t-2] = S(L2[t-2], L2[t])
    let out = s.sbox(r[2][U], r[2][(U + 4) % 5]); // L4[t-2] = S(L3[t-2], L3[t-3])
    if STORE {
        // SAFETY: the caller's contract.
        unsafe { store(dst, off, i - 2, out) };
    }
}

/// Four rounds in one sweep. Offsets 8, -4, 2, -1; step `t` computes `L1[t]`, `L2[t]`,
/// `L3[t-2]`, `L4[t-2]` for `t = -5..=730` and stores from `t = 2` on. The result is the new
/// state mirrored (`L4[z] = state[-z]`), which the plan accounts for.
///
/// # Safety
/// As [`pass5`].
#[inline(always)]
unsafe fn pass4<S: Simd>(
    s: S,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
) {
    let mut r = [[s.splat(0); 5]; 3];
    // SAFETY: for every step, i = t - Z_MIN runs 5..741, so i + 8 < ADDR_LEN; stores from
    // i = 12. 736 steps = 7 warm-up + 145 × 5 + 4.
    unsafe {
        step4::<S, false, 0>(s, 5, src, dst, off, &mut r);
        step4::<S, false, 1>(s, 6, src, dst, off, &mut r);
        step4::<S, false, 2>(s, 7, src, dst, off, &mut r);
        step4::<S, false, 3>(s, 8, src, dst, off, &mut r);
        step4::<S, false, 4>(s, 9, src, dst, off, &mut r);
        step4::<S, false, 0>(s, 10, src, dst, off, &mut r);
        step4::<S, false, 1>(s, 11, src, dst, off, &mut r);
        let mut i = 12;
        while i < 737 {
            step4::<S, true, 2>(s, i, src, dst, off, &mut r);
            step4::<S, true, 3>(s, i + 1, src, dst, off, &mut r);
            step4::<S, true, 4>(s, i + 2, src, dst, off, &mut r);
            step4::<S, true, 0>(s, i + 3, src, dst, off, &mut r);
            step4::<S, true, 1>(s, i + 4, src, dst, off, &mut r);
            i += 5;
        }
        step4::<S, true, 2>(s, 737, src, dst, off, &mut r);
        step4::<S, true, 3>(s, 738, src, dst, off, &mut r);
        step4::<S, true, 4>(s, 739, src, dst, off, &mut r);
        step4::<S, true, 0>(s, 740, src, dst, off, &mut r);
    }
}

/// One wavefront step of [`pass3`] at ring position `U = (i + 1) mod 3`.
///
/// # Safety
/// [`pass3`]'s contract, `i + 4 < ADDR_LEN`, and `i ≥ 1` when `STORE`.
#[inline(always)]
unsafe fn step3<S: Simd, const STORE: bool, const U: usize>(
    s: S,
    i: usize,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
    r: &mut [[Trit<S::V>; 3]; 2],
) {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 4)) };
    r[0][U] = s.sbox(a, b); // L1[t]
    r[1][U] = s.sbox(r[0][U], r[0][(U + 1) % 3]); // L2[t] = S(L1[t], L1[t-2])
    let out = s.sbox(r[1][(U + 2) % 3], r[1][U]); // L3[t-1] = S(L2[t-1], L2[t])
    if STORE {
        // SAFETY: the caller's contract.
        unsafe { store(dst, off, i - 1, out) };
    }
}

/// Three rounds in one sweep. Offsets 4, -2, 1; step `t` computes `L1[t]`, `L2[t]`, `L3[t-1]`
/// for `t = -2..=729` and stores from `t = 1` on.
///
/// # Safety
/// As [`pass5`].
#[inline(always)]
unsafe fn pass3<S: Simd>(
    s: S,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
) {
    let mut r = [[s.splat(0); 3]; 2];
    // SAFETY: for every step, i = t - Z_MIN runs 8..740, so i + 4 < ADDR_LEN; stores from
    // i = 11. 732 steps = 3 warm-up + 243 × 3.
    unsafe {
        step3::<S, false, 0>(s, 8, src, dst, off, &mut r);
        step3::<S, false, 1>(s, 9, src, dst, off, &mut r);
        step3::<S, false, 2>(s, 10, src, dst, off, &mut r);
        let mut i = 11;
        while i < 740 {
            step3::<S, true, 0>(s, i, src, dst, off, &mut r);
            step3::<S, true, 1>(s, i + 1, src, dst, off, &mut r);
            step3::<S, true, 2>(s, i + 2, src, dst, off, &mut r);
            i += 3;
        }
    }
}

/// One round in one sweep: `L1[t] = S(L0[t], L0[t+1])`.
///
/// # Safety
/// As [`pass5`].
#[inline(always)]
unsafe fn pass1<S: Simd>(
    s: S,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
) {
    for i in 10..739usize {
        // SAFETY: i + 1 < ADDR_LEN; the caller's contract for the arrays.
        unsafe {
            let v = s.sbox(load(src, off, i), load(src, off, i + 1));
            store(dst, off, i, v);
        }
    }
}

/// Run one full pass of `fused` rounds from `src` into `dst`, saving the side slots first when
/// it is in place.
///
/// # Safety
/// `src` and `dst` point to at least `SLOTS` trits; `src` is `dst` or an array with its side
/// slots filled for this pass (or the template, for pass 0).
#[inline(always)]
pub(crate) unsafe fn full_pass<S: Simd>(
    s: S,
    fused: u8,
    src: *const Trit<S::V>,
    dst: *mut Trit<S::V>,
    off: &[u16; ADDR_LEN],
) {
    if std::ptr::eq(src, dst) {
        // SAFETY: the caller's contract.
        unsafe { save_side(dst, off, side_len(fused as usize)) };
    }
    // Each pass is a function of its own, compiled for the instruction set.
    match fused {
        5 => s.vectorize(
            #[inline(always)]
            // SAFETY: the caller's contract.
            || unsafe { pass5(s, src, dst, off) },
        ),
        4 => s.vectorize(
            #[inline(always)]
            // SAFETY: the caller's contract.
            || unsafe { pass4(s, src, dst, off) },
        ),
        3 => s.vectorize(
            #[inline(always)]
            // SAFETY: the caller's contract.
            || unsafe { pass3(s, src, dst, off) },
        ),
        _ => s.vectorize(
            #[inline(always)]
            // SAFETY: the caller's contract.
            || unsafe { pass1(s, src, dst, off) },
        ),
    }
}

/// The 81-round transform of `tpl` (natural order) into `y` (stored as `S::PLAN.pos` says).
pub(crate) fn transform<S: Simd>(s: S, tpl: &[Trit<S::V>], y: &mut [Trit<S::V>]) {
    s.vectorize(
        #[inline(always)]
        || {
            assert!(tpl.len() >= SLOTS && y.len() >= SLOTS);
            let plan = S::PLAN;
            let yp = y.as_mut_ptr();
            for (p, off) in plan.off.iter().enumerate() {
                let src = if p == 0 {
                    tpl.as_ptr()
                } else {
                    yp.cast_const()
                };
                // SAFETY: both arrays hold SLOTS trits (asserted above); pass 0 reads the template,
                // which needs no side slots (its table maps z mod 729), the others run in place.
                unsafe { full_pass(s, plan.fused[p], src, yp, off) };
            }
        },
    )
}
