//! The memory plan shared by the SIMD kernels: in-place, permuted storage and several rounds
//! fused per pass as a wavefront. Only index arithmetic lives here; each kernel file holds its
//! own vector code. `docs/cpu-kernel.md` has the cost model and the measurements behind it.
//!
//! # The math
//! One round is `new[i] = S(old[m·i], old[m·i + m])` with `m = 364` (indices mod 729, and
//! `1/m = -2`). Look at round `r`'s state through a coordinate `z` with a per-round scale:
//! `L_r[z] = state_r[α_r·z]`. Choosing `α_{r+1} = -2·α_r` gives
//!
//! ```text
//! L_{r+1}[z] = S(L_r[z], L_r[z + δ_r]),   δ_r = m / α_r,   δ_{r+1} = -δ_r / 2
//! ```
//!
//! a stencil of two taps. For `F` fused rounds start with `δ_0 = 2^(F-1)`, i.e. `α_0 = -1/2^F`;
//! the offsets are then `32, -16, 8, -4, 2, -1` (F = 6), `16, -8, 4, -2, 1` (F = 5),
//! `8, -4, 2, -1` (F = 4), `4, -2, 1` (F = 3) or `1` (F = 1). For odd `F` the last level is back
//! in natural order, `L_F[z] = state_F[z]`; for even `F` it is mirrored, `L_F[z] = state_F[-z]`,
//! which the storage map absorbs.
//!
//! A pass walks `z` upwards as a wavefront: at step `t` it reads `L_0[t]` and `L_0[t + δ_0]`
//! from memory, computes one value of every level from small windows of the level below, and
//! writes `L_F[t - lag]`. That value goes into the slot `L_0[t - lag]` came from, which no later
//! step reads: the state is updated in place, and each trit is loaded and stored once per `F`
//! rounds. The values `L_0[z]` for `z ≥ 729` (the wrap-around) are copied aside into extra
//! slots `729..` before an in-place pass starts.
//!
//! Storage: logical trit `x` lives in physical slot `c·x mod 729`, where `c` is the product of
//! the passes' `α_0` so far. So pass `p` reads `L_0[z]` at `c_p·z mod 729`; that is what
//! [`Plan::addr`] tabulates ([`Plan::off`] is the same table in the kernel's address units).
//!
//! # What a search runs
//! A search does not run the whole plan per counter (`docs/cpu-kernel.md` measures why):
//!
//! - **Pass 0 once per search, then cones.** Pass 0 reads the template (natural order) into a
//!   buffer of its own that nothing overwrites. From one counter to the next only a few
//!   counter trits change (1.5 on average), and a change of `L_0[z]` reaches only the outputs
//!   `L_F[z - Σδ⁺ ..= z + Σ|δ⁻|]` ([`cone`]): 32 of 729 for `F = 5`. Those are recomputed level
//!   by level ([`level_ranges`]); pass 1 then reads that buffer and writes the work state.
//! - **A partial last pass.** The search reads only the last `mwm` trits of the hash, state
//!   trits `243 - mwm..243`, which are one run of `mwm` consecutive `z` in the last pass's
//!   coordinate. The search plan ends in a six-round pass computed level by level over just
//!   the `z` those outputs need (`mwm + 63` inputs), not a full sweep.
//!
//! The plain [`Plan`] transform (all 729 trits; the test hooks) runs every pass in full.

use crate::ternary::curl::{HASH_LEN, STATE_LEN};

/// Extra slots after the 729 for the wrap-around copies (`F = 5` needs 21).
pub(crate) const SIDE: usize = 21;
/// Slots of a kernel's state array: the state and the side copies.
pub(crate) const SLOTS: usize = STATE_LEN + SIDE;
/// Lowest `z` any pass touches (the `F = 5` prologue starts at `-10`).
pub(crate) const Z_MIN: isize = -10;
/// Entries of one pass's address table, for `z` in `Z_MIN..Z_MIN + ADDR_LEN`.
pub(crate) const ADDR_LEN: usize = 760;
/// Outputs per level-by-level sweep: a tail of more is split into sweeps of this many, so that
/// the levels stay in L1 (a cone has 32 outputs for `F = 5`).
pub(crate) const SWEEP_OUT: usize = 32;
/// The widest level a sweep stores: `SWEEP_OUT` outputs plus `Σ_{r ≥ 1} |δ_r| ≤ 31`.
pub(crate) const LEVEL_MAX: usize = SWEEP_OUT + 31;
/// The most fused rounds a plan's passes may have (six only as a search plan's tail).
pub(crate) const MAX_FUSED: usize = 6;

const N: i64 = STATE_LEN as i64;

/// `1/a mod 729`.
pub(crate) const fn inverse(a: i64) -> i64 {
    let a = a.rem_euclid(N);
    let mut x = 1;
    while x < N {
        if (a * x) % N == 1 {
            return x;
        }
        x += 1;
    }
    panic!("not invertible mod 729")
}

/// `α_0` of an `F`-round pass: `-1 / 2^F`.
pub(crate) const fn alpha0(fused: usize) -> i64 {
    inverse(-(1i64 << fused))
}

/// `δ_r`, the second tap of level `r` of an `F`-round pass: `(-1)^r · 2^(F-1-r)`.
pub(crate) const fn delta(fused: usize, r: usize) -> isize {
    let d = 1isize << (fused - 1 - r);
    if r.is_multiple_of(2) {
        d
    } else {
        -d
    }
}

/// How far behind the wavefront an `F`-round pass stores: `Σ_{r ≥ 1, δ_r > 0} δ_r`.
pub(crate) const fn lag(fused: usize) -> usize {
    let mut s = 0;
    let mut r = 1;
    while r < fused {
        let d = delta(fused, r);
        if d > 0 {
            s += d as usize;
        }
        r += 1;
    }
    s
}

/// Side slots an in-place pass of `fused` rounds reads (`L_0[729..729 + n]`): `lag + δ_0`.
pub(crate) const fn side_len(fused: usize) -> usize {
    lag(fused) + (1 << (fused - 1))
}

/// The outputs `L_F[lo..=hi]` of an `F`-round pass that depend on `L_0[z]`.
pub(crate) const fn cone(fused: usize, z: isize) -> (isize, isize) {
    let (mut lo, mut hi) = (z, z);
    let mut r = 0;
    while r < fused {
        let d = delta(fused, r);
        // L_{r+1}[w] reads L_r[w] and L_r[w + d].
        if d > 0 {
            lo -= d;
        } else {
            hi -= d;
        }
        r += 1;
    }
    (lo, hi)
}

/// `ranges[r]`: the `z` (inclusive) of level `r` that a level-by-level sweep needs for the
/// outputs `L_F[lo..=hi]` (entries above `F` unused).
pub(crate) const fn level_ranges(
    fused: usize,
    lo: isize,
    hi: isize,
) -> [(isize, isize); MAX_FUSED + 1] {
    let mut out = [(0, 0); MAX_FUSED + 1];
    out[fused] = (lo, hi);
    let mut r = fused;
    while r > 0 {
        r -= 1;
        let (l, h) = out[r + 1];
        let d = delta(fused, r);
        out[r] = if d > 0 { (l, h + d) } else { (l + d, h) };
    }
    out
}

/// The `z` range of an `F`-round last pass whose outputs are the state trits
/// `HASH_LEN - n..HASH_LEN`: `L_F[z] = state[z]` for odd `F`, `state[-z]` for even `F`.
pub(crate) const fn tail_range(fused: usize, n: usize) -> (isize, isize) {
    let (first, last) = ((HASH_LEN - n) as isize, HASH_LEN as isize - 1);
    if fused % 2 == 1 {
        (first, last)
    } else {
        (N as isize - last, N as isize - first)
    }
}

/// The index plan of one transform: `P` passes (the fused-round counts sum to 81).
pub(crate) struct Plan<const P: usize> {
    /// Rounds fused in each pass (1, 3, 4 or 5; the last pass may have 6 when it only runs as a
    /// search's partial tail).
    pub fused: [u8; P],
    /// `addr[p][z - Z_MIN]`: the slot holding `L_0[z]` in pass `p`. In-place passes (`p > 0`)
    /// map `z ≥ 729` to the side slots `729 + (z - 729)`; the first pass reads the template,
    /// which it never overwrites, so it maps every `z` mod 729.
    pub addr: [[u16; ADDR_LEN]; P],
    /// `addr` in the kernel's address unit: slot × (bytes per trit / 8), so that a slot's
    /// address is `base + off · 8` (one scaled-index addressing mode, no shift).
    pub off: [[u16; ADDR_LEN]; P],
    /// `1 / c_0`: template trit `x` is `L_0[x / c_0]` of pass 0.
    pub inv0: u16,
    /// `pos[x]`: the slot of logical trit `x` after the whole transform.
    pub pos: [u16; STATE_LEN],
}

impl<const P: usize> Plan<P> {
    /// Build the plan for the given pass sequence and trit size in bytes (evaluated at compile
    /// time).
    pub(crate) const fn new(fused: [u8; P], trit_bytes: usize) -> Self {
        assert!(trit_bytes.is_multiple_of(8) && trit_bytes / 8 * SLOTS <= u16::MAX as usize);
        let unit = (trit_bytes / 8) as u16;
        let mut addr = [[0u16; ADDR_LEN]; P];
        let mut off = [[0u16; ADDR_LEN]; P];
        let mut c: i64 = 1;
        let mut inv0 = 0;
        let mut total = 0;
        let mut p = 0;
        while p < P {
            let f = fused[p] as usize;
            assert!(f == 1 || f == 3 || f == 4 || f == 5 || (f == 6 && p == P - 1));
            total += f;
            // This pass reads L_0[z] = state[α_0·z] from slot c·α_0·z ...
            c = (c * alpha0(f)) % N;
            if p == 0 {
                inv0 = inverse(c) as u16;
            }
            let mut k = 0;
            while k < ADDR_LEN {
                let z = k as i64 + Z_MIN as i64;
                addr[p][k] = if p > 0 && z >= N {
                    z as u16
                } else {
                    (c * z).rem_euclid(N) as u16
                };
                assert!((addr[p][k] as usize) < SLOTS);
                off[p][k] = addr[p][k] * unit;
                k += 1;
            }
            // ... and writes L_F[z] = state'[α_F·z] there, α_F = (-1)^(F+1): for even F the
            // new state is stored mirrored.
            if f.is_multiple_of(2) {
                c = (N - c) % N;
            }
            p += 1;
        }
        assert!(total == crate::ternary::curl::ROUNDS);
        let mut pos = [0u16; STATE_LEN];
        let mut x = 0;
        while x < STATE_LEN {
            pos[x] = ((c * x as i64) % N) as u16;
            x += 1;
        }
        Plan {
            fused,
            addr,
            off,
            inv0,
            pos,
        }
    }

    /// Whether every pass of `from..to` can run as a full sweep (1, 3, 4 or 5 rounds).
    pub(crate) const fn full_passes(&self, from: usize, to: usize) -> bool {
        let mut p = from;
        while p < to {
            if self.fused[p] as usize > 5 || self.fused[p] == 2 {
                return false;
            }
            p += 1;
        }
        true
    }

    /// Whether `other` runs the same first `n` passes (same tables).
    pub(crate) const fn shares_passes<const Q: usize>(&self, other: &Plan<Q>, n: usize) -> bool {
        let mut p = 0;
        while p < n {
            if self.fused[p] != other.fused[p] {
                return false;
            }
            p += 1;
        }
        true
    }
}

/// A pass sequence: `P - 1` passes of `fused` rounds, then one of `last`.
pub(crate) const fn passes<const P: usize>(fused: u8, last: u8) -> [u8; P] {
    let mut out = [fused; P];
    out[P - 1] = last;
    out
}

/// The slot of `L_0[z]` of a pass, reading `z` mod 729 (for a pass that reads a state nothing
/// has overwritten yet: the template, or the work state before a tail writes to it).
#[inline]
pub(crate) fn slot_mod(addr: &[u16; ADDR_LEN], z: isize) -> usize {
    usize::from(addr[(z.rem_euclid(N as isize) - Z_MIN) as usize])
}

/// The kernel body shared by the SIMD kernels: passes, transform, template, search and the test
/// hooks. The invoking file defines the vector primitives it uses: `Trit` (a `Copy` pair
/// `lo`, `hi`), `LANES`, `WORDS` (= LANES / 64), `PLAN` (the whole transform), `SEARCH` (the
/// search's plan: its passes up to the last are `PLAN`'s, its last pass is the partial tail),
/// and the `#[target_feature]` functions `sbox`, `splat`, `from_words`, `to_words`, `ones`,
/// `zero_and`, `first_lane`. `$feat` is the target-feature string of those functions.
macro_rules! wavefront_kernel {
    ($feat:tt) => {
        use $crate::backend::cpu::wavefront::{
            cone, delta, level_ranges, side_len, slot_mod, tail_range, ADDR_LEN, LEVEL_MAX,
            MAX_FUSED, SLOTS, SWEEP_OUT,
        };
        use $crate::search::bitslice::Planes;
        use $crate::search::control::Worker;
        use $crate::search::layout::{KernelJob, Layout, LayoutCounter};
        use $crate::search::nonce::{CounterRange, Hit, NONCE_OFFSET};
        use $crate::ternary::curl::{HASH_LEN, STATE_LEN};

        const _: () = {
            let (p, q) = (PLAN.fused.len(), SEARCH.fused.len());
            assert!(PLAN.full_passes(0, p) && SEARCH.full_passes(0, q - 1));
            assert!(q >= 3 && PLAN.shares_passes(&SEARCH, q - 1));
            assert!(std::mem::size_of::<Trit>() % 8 == 0);
        };

        /// More changed template trits than this and pass 0 is rerun in full instead of by
        /// cones (a cone is ~1/20 of a pass; 12 or more changed trits happen once in 3^11
        /// counters).
        const CONE_LIMIT: usize = 12;

        // The hot passes address the state through raw pointers and the plan's `off` tables:
        // every `off` entry is a slot below `SLOTS` in units of 8 bytes (checked when the plan
        // is built), and every index into a table is below `ADDR_LEN` by the loop bounds. The
        // callers (`transform`, `Work`) hand them arrays of at least `SLOTS` trits.

        /// The trit at table entry `i` of `off` from `base`.
        ///
        /// # Safety
        /// `base` points to at least `SLOTS` trits and `i < ADDR_LEN`.
        #[inline(always)]
        unsafe fn load(base: *const Trit, off: &[u16; ADDR_LEN], i: usize) -> Trit {
            // SAFETY: the caller's contract; the offset is a whole slot below SLOTS, so the
            // read is in bounds and aligned.
            unsafe { *base.byte_add(usize::from(*off.get_unchecked(i)) * 8) }
        }

        /// Write `v` at table entry `i` of `off` from `base`.
        ///
        /// # Safety
        /// As [`load`].
        #[inline(always)]
        unsafe fn store(base: *mut Trit, off: &[u16; ADDR_LEN], i: usize, v: Trit) {
            // SAFETY: as in `load`.
            unsafe { *base.byte_add(usize::from(*off.get_unchecked(i)) * 8) = v }
        }

        /// Copy `L_0[729..729 + n]` aside before an in-place pass overwrites slots `L_0[0..n]`.
        ///
        /// # Safety
        /// `y` points to at least `SLOTS` trits; `n ≤ SIDE`.
        #[inline(always)]
        unsafe fn save_side(y: *mut Trit, off: &[u16; ADDR_LEN], n: usize) {
            for k in 0..n {
                // SAFETY: k + 10 < ADDR_LEN and STATE_LEN + k < SLOTS.
                unsafe { *y.add(STATE_LEN + k) = load(y, off, k + 10) };
            }
        }

        /// One wavefront step of [`pass5`] at ring position `U = i mod 9`. Each level keeps
        /// its recent values in a 9-entry ring indexed by constants (the loop is unrolled by
        /// 18, two ring periods: LLVM holds the live values in registers and spills only at
        /// the back edge). `STORE`: the step is past the warm-up and writes its output.
        ///
        /// # Safety
        /// [`pass5`]'s contract, `i + 16 < ADDR_LEN`, and `i ≥ 5` when `STORE`.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn step5<const STORE: bool, const U: usize>(
            i: usize,
            src: *const Trit,
            dst: *mut Trit,
            off: &[u16; ADDR_LEN],
            r: &mut [[Trit; 9]; 4],
        ) {
            // SAFETY: the caller's contract.
            let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 16)) };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 9]); // L2[t] = S(L1[t], L1[t-8])
            r[2][U] = sbox(r[1][(U + 5) % 9], r[1][U]); // L3[t-4] = S(L2[t-4], L2[t])
            r[3][U] = sbox(r[2][U], r[2][(U + 7) % 9]); // L4[t-4] = S(L3[t-4], L3[t-6])
            let out = sbox(r[3][(U + 8) % 9], r[3][U]); // L5[t-5] = S(L4[t-5], L4[t-4])
            if STORE {
                // SAFETY: the caller's contract.
                unsafe { store(dst, off, i - 5, out) };
            }
        }

        /// Five rounds in one sweep. Offsets 16, -8, 4, -2, 1; step `t` computes `L1[t]`,
        /// `L2[t]`, `L3[t-4]`, `L4[t-4]`, `L5[t-5]` (see the module docs) for `t = -10..=733`,
        /// and stores `L5` from `t = 5` on. Reads `src`, writes `dst` (the same array for an
        /// in-place pass).
        ///
        /// # Safety
        /// `src` and `dst` point to at least `SLOTS` trits; an in-place pass has saved its side
        /// slots, a pass from another array has that array's side slots filled.
        #[target_feature(enable = $feat)]
        unsafe fn pass5(src: *const Trit, dst: *mut Trit, off: &[u16; ADDR_LEN]) {
            let mut r = [[splat(0); 9]; 4];
            // SAFETY: for every step, step index i = t - Z_MIN runs 0..744, so i + 16 < 760 =
            // ADDR_LEN, and steps store from i = 15. 744 = 15 warm-up steps + 40 × 18 + 9.
            unsafe {
                step5::<false, 0>(0, src, dst, off, &mut r);
                step5::<false, 1>(1, src, dst, off, &mut r);
                step5::<false, 2>(2, src, dst, off, &mut r);
                step5::<false, 3>(3, src, dst, off, &mut r);
                step5::<false, 4>(4, src, dst, off, &mut r);
                step5::<false, 5>(5, src, dst, off, &mut r);
                step5::<false, 6>(6, src, dst, off, &mut r);
                step5::<false, 7>(7, src, dst, off, &mut r);
                step5::<false, 8>(8, src, dst, off, &mut r);
                step5::<false, 0>(9, src, dst, off, &mut r);
                step5::<false, 1>(10, src, dst, off, &mut r);
                step5::<false, 2>(11, src, dst, off, &mut r);
                step5::<false, 3>(12, src, dst, off, &mut r);
                step5::<false, 4>(13, src, dst, off, &mut r);
                step5::<false, 5>(14, src, dst, off, &mut r);
                let mut i = 15;
                while i < 744 {
                    step5::<true, 6>(i, src, dst, off, &mut r);
                    step5::<true, 7>(i + 1, src, dst, off, &mut r);
                    step5::<true, 8>(i + 2, src, dst, off, &mut r);
                    step5::<true, 0>(i + 3, src, dst, off, &mut r);
                    step5::<true, 1>(i + 4, src, dst, off, &mut r);
                    step5::<true, 2>(i + 5, src, dst, off, &mut r);
                    step5::<true, 3>(i + 6, src, dst, off, &mut r);
                    step5::<true, 4>(i + 7, src, dst, off, &mut r);
                    step5::<true, 5>(i + 8, src, dst, off, &mut r);
                    if i + 9 == 744 {
                        break;
                    }
                    step5::<true, 6>(i + 9, src, dst, off, &mut r);
                    step5::<true, 7>(i + 10, src, dst, off, &mut r);
                    step5::<true, 8>(i + 11, src, dst, off, &mut r);
                    step5::<true, 0>(i + 12, src, dst, off, &mut r);
                    step5::<true, 1>(i + 13, src, dst, off, &mut r);
                    step5::<true, 2>(i + 14, src, dst, off, &mut r);
                    step5::<true, 3>(i + 15, src, dst, off, &mut r);
                    step5::<true, 4>(i + 16, src, dst, off, &mut r);
                    step5::<true, 5>(i + 17, src, dst, off, &mut r);
                    i += 18;
                }
            }
        }

        /// One wavefront step of [`pass4`] at ring position `U = i mod 5`.
        ///
        /// # Safety
        /// [`pass4`]'s contract, `i + 8 < ADDR_LEN`, and `i ≥ 2` when `STORE`.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn step4<const STORE: bool, const U: usize>(
            i: usize,
            src: *const Trit,
            dst: *mut Trit,
            off: &[u16; ADDR_LEN],
            r: &mut [[Trit; 5]; 3],
        ) {
            // SAFETY: the caller's contract.
            let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 8)) };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 5]); // L2[t] = S(L1[t], L1[t-4])
            r[2][U] = sbox(r[1][(U + 3) % 5], r[1][U]); // L3[t-2] = S(L2[t-2], L2[t])
            let out = sbox(r[2][U], r[2][(U + 4) % 5]); // L4[t-2] = S(L3[t-2], L3[t-3])
            if STORE {
                // SAFETY: the caller's contract.
                unsafe { store(dst, off, i - 2, out) };
            }
        }

        /// Four rounds in one sweep. Offsets 8, -4, 2, -1; step `t` computes `L1[t]`, `L2[t]`,
        /// `L3[t-2]`, `L4[t-2]` for `t = -5..=730` and stores from `t = 2` on. The result is
        /// the new state mirrored (`L4[z] = state[-z]`), which the plan accounts for.
        ///
        /// # Safety
        /// As [`pass5`].
        #[target_feature(enable = $feat)]
        unsafe fn pass4(src: *const Trit, dst: *mut Trit, off: &[u16; ADDR_LEN]) {
            let mut r = [[splat(0); 5]; 3];
            // SAFETY: for every step, i = t - Z_MIN runs 5..741, so i + 8 < ADDR_LEN; stores from
            // i = 12. 736 steps = 7 warm-up + 145 × 5 + 4.
            unsafe {
                step4::<false, 0>(5, src, dst, off, &mut r);
                step4::<false, 1>(6, src, dst, off, &mut r);
                step4::<false, 2>(7, src, dst, off, &mut r);
                step4::<false, 3>(8, src, dst, off, &mut r);
                step4::<false, 4>(9, src, dst, off, &mut r);
                step4::<false, 0>(10, src, dst, off, &mut r);
                step4::<false, 1>(11, src, dst, off, &mut r);
                let mut i = 12;
                while i < 737 {
                    step4::<true, 2>(i, src, dst, off, &mut r);
                    step4::<true, 3>(i + 1, src, dst, off, &mut r);
                    step4::<true, 4>(i + 2, src, dst, off, &mut r);
                    step4::<true, 0>(i + 3, src, dst, off, &mut r);
                    step4::<true, 1>(i + 4, src, dst, off, &mut r);
                    i += 5;
                }
                step4::<true, 2>(737, src, dst, off, &mut r);
                step4::<true, 3>(738, src, dst, off, &mut r);
                step4::<true, 4>(739, src, dst, off, &mut r);
                step4::<true, 0>(740, src, dst, off, &mut r);
            }
        }

        /// One wavefront step of [`pass3`] at ring position `U = (i + 1) mod 3`.
        ///
        /// # Safety
        /// [`pass3`]'s contract, `i + 4 < ADDR_LEN`, and `i ≥ 1` when `STORE`.
        #[target_feature(enable = $feat)]
        #[inline]
        unsafe fn step3<const STORE: bool, const U: usize>(
            i: usize,
            src: *const Trit,
            dst: *mut Trit,
            off: &[u16; ADDR_LEN],
            r: &mut [[Trit; 3]; 2],
        ) {
            // SAFETY: the caller's contract.
            let (a, b) = unsafe { (load(src, off, i), load(src, off, i + 4)) };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 3]); // L2[t] = S(L1[t], L1[t-2])
            let out = sbox(r[1][(U + 2) % 3], r[1][U]); // L3[t-1] = S(L2[t-1], L2[t])
            if STORE {
                // SAFETY: the caller's contract.
                unsafe { store(dst, off, i - 1, out) };
            }
        }

        /// Three rounds in one sweep. Offsets 4, -2, 1; step `t` computes `L1[t]`, `L2[t]`,
        /// `L3[t-1]` for `t = -2..=729` and stores from `t = 1` on.
        ///
        /// # Safety
        /// As [`pass5`].
        #[target_feature(enable = $feat)]
        unsafe fn pass3(src: *const Trit, dst: *mut Trit, off: &[u16; ADDR_LEN]) {
            let mut r = [[splat(0); 3]; 2];
            // SAFETY: for every step, i = t - Z_MIN runs 8..740, so i + 4 < ADDR_LEN; stores from
            // i = 11. 732 steps = 3 warm-up + 243 × 3.
            unsafe {
                step3::<false, 0>(8, src, dst, off, &mut r);
                step3::<false, 1>(9, src, dst, off, &mut r);
                step3::<false, 2>(10, src, dst, off, &mut r);
                let mut i = 11;
                while i < 740 {
                    step3::<true, 0>(i, src, dst, off, &mut r);
                    step3::<true, 1>(i + 1, src, dst, off, &mut r);
                    step3::<true, 2>(i + 2, src, dst, off, &mut r);
                    i += 3;
                }
            }
        }

        /// One round in one sweep: `L1[t] = S(L0[t], L0[t+1])`.
        ///
        /// # Safety
        /// As [`pass5`].
        #[target_feature(enable = $feat)]
        unsafe fn pass1(src: *const Trit, dst: *mut Trit, off: &[u16; ADDR_LEN]) {
            for i in 10..739usize {
                // SAFETY: i + 1 < ADDR_LEN; the caller's contract for the arrays.
                unsafe {
                    let v = sbox(load(src, off, i), load(src, off, i + 1));
                    store(dst, off, i, v);
                }
            }
        }

        /// Run one full pass of `fused` rounds from `src` into `dst`, saving the side slots
        /// first when it is in place.
        ///
        /// # Safety
        /// `src` and `dst` point to at least `SLOTS` trits; `src` is `dst` or an array with its
        /// side slots filled for this pass (or the template, for pass 0).
        #[target_feature(enable = $feat)]
        unsafe fn full_pass(fused: u8, src: *const Trit, dst: *mut Trit, off: &[u16; ADDR_LEN]) {
            // SAFETY: the caller's contract.
            unsafe {
                if std::ptr::eq(src, dst) {
                    save_side(dst, off, side_len(fused as usize));
                }
                match fused {
                    5 => pass5(src, dst, off),
                    4 => pass4(src, dst, off),
                    3 => pass3(src, dst, off),
                    _ => pass1(src, dst, off),
                }
            }
        }

        /// The 81-round transform of `tpl` (natural order) into `y` (stored as `PLAN.pos` says).
        #[target_feature(enable = $feat)]
        fn transform(tpl: &[Trit], y: &mut [Trit]) {
            assert!(tpl.len() >= SLOTS && y.len() >= SLOTS);
            let yp = y.as_mut_ptr();
            for (p, off) in PLAN.off.iter().enumerate() {
                let src = if p == 0 {
                    tpl.as_ptr()
                } else {
                    yp.cast_const()
                };
                // SAFETY: both arrays hold SLOTS trits (asserted above); pass 0 reads the
                // template, which needs no side slots (its table maps z mod 729), the others
                // run in place.
                unsafe { full_pass(PLAN.fused[p], src, yp, off) };
            }
        }

        /// Run a [`Sweep`]: its outputs `L_F[lo..=hi]`, computed level by level (not as a
        /// wavefront), `L_{r+1}[z] = S(L_r[z], L_r[z + δ_r])`, reading `L_0` from `src` and
        /// keeping the levels in `levels` (`2 · LEVEL_MAX` trits).
        #[target_feature(enable = $feat)]
        fn run_sweep<'a>(sw: &Sweep, src: &[Trit], levels: &'a mut [Trit]) -> &'a [Trit] {
            let len = |r: usize| (sw.ranges[r].1 - sw.ranges[r].0 + 1) as usize;
            // Where L_{r+1}[z] finds L_r[z] and L_r[z + δ_r] in level r's array.
            let taps = |r: usize| {
                let a = (sw.ranges[r + 1].0 - sw.ranges[r].0) as usize;
                (a, (a as isize + delta(sw.fused, r)) as usize)
            };
            let (mut cur, mut next) = levels.split_at_mut(LEVEL_MAX);
            let (a, b) = taps(0);
            let n = len(1);
            let (ins_a, ins_b, out) = (&sw.inputs[a..a + n], &sw.inputs[b..b + n], &mut cur[..n]);
            for k in 0..n {
                out[k] = sbox(src[usize::from(ins_a[k])], src[usize::from(ins_b[k])]);
            }
            for r in 1..sw.fused {
                let (a, b) = taps(r);
                let n = len(r + 1);
                let (la, lb, out) = (&cur[a..a + n], &cur[b..b + n], &mut next[..n]);
                for k in 0..n {
                    out[k] = sbox(la[k], lb[k]);
                }
                std::mem::swap(&mut cur, &mut next);
            }
            &cur[..len(sw.fused)]
        }

        /// The outputs `L_F[lo..=hi]` of pass `p` of `SEARCH` by whole levels: the cones and
        /// the tail. Built once per search; [`run_sweep`] runs it.
        struct Sweep {
            fused: usize,
            /// [`level_ranges`] of the outputs.
            ranges: [(isize, isize); MAX_FUSED + 1],
            /// The slot of `L_0[z]` for each `z` of `ranges[0]`, read mod 729 (nothing the
            /// sweep reads has been overwritten).
            inputs: Vec<u16>,
            /// The slot of `L_F[z]` for each output `z`: where pass `p` would store it.
            outputs: Vec<u16>,
        }

        impl Sweep {
            fn new(p: usize, lo: isize, hi: isize) -> Sweep {
                let fused = SEARCH.fused[p] as usize;
                let ranges = level_ranges(fused, lo, hi);
                assert!(hi >= lo && ranges[1].1 - ranges[1].0 < LEVEL_MAX as isize);
                let addr = &SEARCH.addr[p];
                let slots = |(l, h): (isize, isize)| (l..=h).map(|z| slot_mod(addr, z) as u16);
                Sweep {
                    fused,
                    ranges,
                    inputs: slots(ranges[0]).collect(),
                    outputs: slots((lo, hi)).collect(),
                }
            }

            /// Pass 0's outputs that template trit `x` reaches.
            fn cone(x: usize) -> Sweep {
                let z = ((x * usize::from(SEARCH.inv0)) % STATE_LEN) as isize;
                let (lo, hi) = cone(SEARCH.fused[0] as usize, z);
                Sweep::new(0, lo, hi)
            }

            /// The last pass for the state trits `HASH_LEN - n..HASH_LEN` (`n ≤ 243`), as
            /// sweeps of up to `SWEEP_OUT` consecutive outputs `z` (together `z = lo..=hi` of
            /// [`tail_range`]).
            fn tail(n: usize) -> Vec<Sweep> {
                let p = SEARCH.fused.len() - 1;
                let (lo, hi) = tail_range(SEARCH.fused[p] as usize, n);
                (lo..=hi)
                    .step_by(SWEEP_OUT)
                    .map(|l| Sweep::new(p, l, hi.min(l + SWEEP_OUT as isize - 1)))
                    .collect()
            }
        }

        /// What one worker's search transforms work on: pass 0's output for the current
        /// template (kept current by cones), the work state, the sweeps' levels, the cones of
        /// the counter trits, the tail for this search's MWM and its output.
        struct Work {
            first: Vec<Trit>,
            y: Vec<Trit>,
            levels: Vec<Trit>,
            cones: Vec<Sweep>,
            tail: Vec<Sweep>,
            /// The last `mwm` state trits after [`Work::transform`], in the order `z` of the
            /// last pass (`hash[k]` = `L_F[lo + k]`).
            hash: Vec<Trit>,
        }

        impl Work {
            /// For searches at `mwm` (the last `mwm` hash trits must be zero) whose counter
            /// trits lie where `layout` puts them.
            #[target_feature(enable = $feat)]
            fn new(mwm: usize, layout: Layout) -> Work {
                let n = mwm.min(HASH_LEN);
                Work {
                    first: vec![splat(0); SLOTS],
                    y: vec![splat(0); SLOTS],
                    levels: vec![splat(0); 2 * LEVEL_MAX],
                    cones: layout.counter_trits().map(Sweep::cone).collect(),
                    tail: Sweep::tail(n),
                    hash: vec![splat(0); n],
                }
            }

            /// Fill pass 1's side slots of `first` (it reads `first`, writes `y`).
            #[target_feature(enable = $feat)]
            fn side_for_pass1(&mut self) {
                // SAFETY: `first` holds SLOTS trits.
                unsafe {
                    save_side(
                        self.first.as_mut_ptr(),
                        &SEARCH.off[1],
                        side_len(SEARCH.fused[1] as usize),
                    )
                };
            }

            /// Pass 0 in full: the template into `first`.
            #[target_feature(enable = $feat)]
            fn first_pass(&mut self, tpl: &[Trit]) {
                assert!(tpl.len() >= SLOTS);
                // SAFETY: both arrays hold SLOTS trits; the template needs no side slots.
                unsafe {
                    full_pass(
                        SEARCH.fused[0],
                        tpl.as_ptr(),
                        self.first.as_mut_ptr(),
                        &SEARCH.off[0],
                    )
                };
                self.side_for_pass1();
            }

            /// Recompute the outputs of pass 0 in `sw` (a cone of changed template trits).
            #[target_feature(enable = $feat)]
            fn apply(first: &mut [Trit], levels: &mut [Trit], sw: &Sweep, tpl: &[Trit]) {
                let out = run_sweep(sw, tpl, levels);
                for (&s, &v) in sw.outputs.iter().zip(out) {
                    first[usize::from(s)] = v;
                }
            }

            /// After [`Template::advance`] changed the low `changed` counter trits: update
            /// pass 0's output by their cones (or in full after a long carry).
            #[target_feature(enable = $feat)]
            fn advanced(&mut self, tpl: &[Trit], changed: usize) {
                if changed > CONE_LIMIT {
                    self.first_pass(tpl);
                    return;
                }
                for sw in &self.cones[..changed] {
                    Self::apply(&mut self.first, &mut self.levels, sw, tpl);
                }
                self.side_for_pass1();
            }

            /// Passes 1.. of the search plan from `first`, then its tail into `hash`: the
            /// state trits `HASH_LEN - mwm..HASH_LEN` of the transform.
            #[target_feature(enable = $feat)]
            fn transform(&mut self) {
                let q = SEARCH.fused.len();
                let yp = self.y.as_mut_ptr();
                for p in 1..q - 1 {
                    let src = if p == 1 {
                        self.first.as_ptr()
                    } else {
                        yp.cast_const()
                    };
                    // SAFETY: both arrays hold SLOTS trits; pass 1 reads `first`, whose side
                    // slots `side_for_pass1` filled; the rest run in place.
                    unsafe { full_pass(SEARCH.fused[p], src, yp, &SEARCH.off[p]) };
                }
                // The tail only reads `y`: its outputs go to `hash`.
                let mut k = 0;
                for sw in &self.tail {
                    let out = run_sweep(sw, &self.y, &mut self.levels);
                    self.hash[k..k + out.len()].copy_from_slice(out);
                    k += out.len();
                }
            }
        }

        /// The lowest lane whose trits in `hash` (the last `mwm` of the hash, from
        /// [`Work::transform`]) are all zero.
        #[target_feature(enable = $feat)]
        fn zero_lane(hash: &[Trit]) -> Option<usize> {
            let mut acc = ones();
            for &t in hash {
                acc = zero_and(acc, t);
            }
            first_lane(acc)
        }

        /// The pre-transform state of a search, in natural order: the mid-state, each lane's
        /// number, and the counter (the same for every lane).
        struct Template {
            slots: Vec<Trit>,
            counter: LayoutCounter,
        }

        impl Template {
            #[target_feature(enable = $feat)]
            fn new(job: &KernelJob<'_>, start: u64) -> Template {
                let mut slots = vec![splat(0); SLOTS];
                for (x, &t) in job.state().iter().enumerate() {
                    slots[x] = splat(t);
                }
                let layout = job.layout();
                let lanes = layout.lane_trits().start;
                for (j, (lo, hi)) in layout.lane_words::<WORDS>().into_iter().enumerate() {
                    slots[lanes + j] = from_words(lo, hi);
                }
                let counter = LayoutCounter::new(layout, start);
                let at = counter.start();
                for (j, &t) in counter.trits().iter().enumerate() {
                    slots[at + j] = splat(t);
                }
                Template { slots, counter }
            }

            /// Next counter: rewrite only the counter trits that changed; returns how many
            /// (the low ones).
            #[target_feature(enable = $feat)]
            fn advance(&mut self) -> usize {
                let changed = self.counter.increment();
                let at = self.counter.start();
                for j in 0..changed {
                    self.slots[at + j] = splat(self.counter.trits()[j]);
                }
                changed
            }
        }

        /// Search `range` on one worker: one transform per counter, the stop condition read
        /// once per transform; returns the lowest lane that hit.
        #[target_feature(enable = $feat)]
        pub(crate) fn search(
            job: &KernelJob<'_>,
            range: CounterRange,
            w: &mut Worker<'_>,
        ) -> Option<Hit> {
            let mut tpl = Template::new(job, range.start);
            let mwm = job.mwm();
            let mut work = Work::new(mwm, job.layout());
            work.first_pass(&tpl.slots);
            for _ in 0..range.len {
                if !w.keep_going() {
                    return None;
                }
                work.transform();
                let lane = zero_lane(&work.hash);
                w.batch_done(LANES as u64);
                if let Some(lane) = lane {
                    return Some(Hit {
                        counter: tpl.counter.value(),
                        lane,
                    });
                }
                let changed = tpl.advance();
                work.advanced(&tpl.slots, changed);
            }
            None
        }

        /// Test hook: the kernel's transform of up to `LANES` states, lane `k` = `states[k]`.
        #[target_feature(enable = $feat)]
        pub(crate) fn transform_states(
            states: &mut [[i8; STATE_LEN]],
        ) -> Result<(), $crate::search::bitslice::BadTrit> {
            let words = |w: &[u64]| -> [u64; WORDS] { w.try_into().expect("WORDS words") };
            for chunk in states.chunks_mut(LANES) {
                let planes = Planes::from_states(chunk, WORDS, 64);
                let mut tpl = vec![splat(0); SLOTS];
                for (x, slot) in tpl.iter_mut().enumerate().take(STATE_LEN) {
                    let (lo, hi) = planes.words_of(x);
                    *slot = from_words(words(lo), words(hi));
                }
                let mut y = vec![splat(0); SLOTS];
                transform(&tpl, &mut y);
                let mut out = Planes::zeros(STATE_LEN, WORDS, 64);
                for x in 0..STATE_LEN {
                    let t = y[PLAN.pos[x] as usize];
                    out.lo[x * WORDS..(x + 1) * WORDS].copy_from_slice(&to_words(t.lo));
                    out.hi[x * WORDS..(x + 1) * WORDS].copy_from_slice(&to_words(t.hi));
                }
                let n = chunk.len();
                chunk.copy_from_slice(&out.to_states::<STATE_LEN>(n)?);
            }
            Ok(())
        }

        /// Test hook: the nonces (block trits 162..243) placed in each lane of the kernel's
        /// pre-transform states for the first `transforms` counters of `range`, exactly as
        /// [`search`] builds them.
        #[target_feature(enable = $feat)]
        pub(crate) fn placed_nonces(
            job: &KernelJob<'_>,
            range: CounterRange,
            transforms: usize,
        ) -> Result<Vec<[i8; 81]>, $crate::search::bitslice::BadTrit> {
            let mut tpl = Template::new(job, range.start);
            let mut out = Vec::new();
            for n in 0..(transforms as u64).min(range.len) {
                if n > 0 {
                    tpl.advance();
                }
                let mut nonces = Planes::zeros(HASH_LEN - NONCE_OFFSET, WORDS, 64);
                for (j, x) in (NONCE_OFFSET..HASH_LEN).enumerate() {
                    let t = tpl.slots[x];
                    nonces.lo[j * WORDS..(j + 1) * WORDS].copy_from_slice(&to_words(t.lo));
                    nonces.hi[j * WORDS..(j + 1) * WORDS].copy_from_slice(&to_words(t.hi));
                }
                out.extend(nonces.to_states::<81>(LANES)?);
            }
            Ok(out)
        }

        /// Bench hook: `n` bare search transforms at the job's MWM, each with the cone update
        /// of one changed counter trit (the search averages 1.5), but no counter, zero test or
        /// stop check. Returns a value derived from the result so nothing is optimised away.
        #[target_feature(enable = $feat)]
        pub(crate) fn bare_transforms(job: &KernelJob<'_>, n: usize) -> u64 {
            let tpl = Template::new(job, 0);
            let mut work = Work::new(job.mwm().max(1), job.layout());
            work.first_pass(&tpl.slots);
            let mut acc = 0u64;
            for _ in 0..n {
                work.advanced(&tpl.slots, 1);
                work.transform();
                let t = work.hash[0];
                acc = acc.wrapping_add(to_words(t.lo)[0]);
            }
            acc
        }

        /// Batch hook: absorb up to `LANES` messages of equal length (at least one whole
        /// 243-trit block, valid trits), one per lane, with this kernel's transform, and write
        /// the first `out_len` trits (natural order: 243 for a hash, 729 for a mid-state) of
        /// each final state to `out`, message after message. Between blocks the state is read
        /// back in natural order (the transform stores it permuted, `PLAN.pos`) and the next
        /// block written over the rate.
        #[target_feature(enable = $feat)]
        pub(crate) fn absorb_lanes(msgs: &[&[i8]], out_len: usize, out: &mut [i8]) {
            use $crate::backend::cpu::transpose::{rows_to_words, words_to_rows, WINDOW};
            let n = msgs.len();
            let len = msgs.first().map_or(0, |m| m.len());
            assert!(n <= LANES && out_len <= STATE_LEN && out.len() == n * out_len);
            assert!(len >= HASH_LEN && len.is_multiple_of(HASH_LEN));
            assert!(msgs.iter().all(|m| m.len() == len));
            let mut tpl = vec![splat(0); SLOTS];
            let mut y = vec![splat(0); SLOTS];
            // The messages' trits as lane words, a window of 33 blocks at a time (1 MB).
            let mut lo = vec![[0u64; WORDS]; len.min(WINDOW)];
            let mut hi = vec![[0u64; WORDS]; len.min(WINDOW)];
            for win in (0..len).step_by(WINDOW) {
                let wl = (len - win).min(WINDOW);
                rows_to_words::<WORDS>(msgs, win, &mut lo[..wl], &mut hi[..wl]);
                for start in (0..wl).step_by(HASH_LEN) {
                    for x in 0..HASH_LEN {
                        tpl[x] = from_words(lo[start + x], hi[start + x]);
                    }
                    if win + start > 0 {
                        for x in HASH_LEN..STATE_LEN {
                            tpl[x] = y[PLAN.pos[x] as usize];
                        }
                    }
                    transform(&tpl, &mut y);
                }
            }
            let mut lo = vec![[0u64; WORDS]; out_len];
            let mut hi = vec![[0u64; WORDS]; out_len];
            for x in 0..out_len {
                let t = y[PLAN.pos[x] as usize];
                lo[x] = to_words(t.lo);
                hi[x] = to_words(t.hi);
            }
            words_to_rows::<WORDS>(&lo, &hi, n, out);
        }

        #[cfg(test)]
        mod wavefront_tests {
            use super::*;

            /// Pseudo-random trits (the crate's xorshift stream).
            fn random_trits(seed: u64, n: usize) -> Vec<i8> {
                $crate::ternary::xorshift::trits(seed).take(n).collect()
            }

            /// A template of `LANES` random states (lane `k` = `states[k]`), natural order.
            #[target_feature(enable = $feat)]
            fn pack(states: &[[i8; STATE_LEN]]) -> Vec<Trit> {
                let planes = Planes::from_states(states, WORDS, 64);
                let words = |w: &[u64]| -> [u64; WORDS] { w.try_into().expect("WORDS words") };
                let mut tpl = vec![splat(0); SLOTS];
                for (x, slot) in tpl.iter_mut().enumerate().take(STATE_LEN) {
                    let (lo, hi) = planes.words_of(x);
                    *slot = from_words(words(lo), words(hi));
                }
                tpl
            }

            /// Lane `k` of a bit-sliced trit.
            #[target_feature(enable = $feat)]
            fn lane(t: Trit, k: usize) -> i8 {
                let (lo, hi) = (to_words(t.lo), to_words(t.hi));
                let bit = |w: &[u64; WORDS]| (w[k / 64] >> (k % 64)) & 1 == 1;
                // A (0, 0) pair is no trit: 2 makes the comparison with the reference fail.
                $crate::search::bitslice::decode(bit(&lo), bit(&hi)).unwrap_or(2)
            }

            #[target_feature(enable = $feat)]
            fn same(a: Trit, b: Trit) -> bool {
                to_words(a.lo) == to_words(b.lo) && to_words(a.hi) == to_words(b.hi)
            }

            fn random_states(seed: u64) -> Vec<[i8; STATE_LEN]> {
                (0..LANES as u64)
                    .map(|k| {
                        let t = random_trits(seed * 7919 + k, STATE_LEN);
                        std::array::from_fn(|i| t[i])
                    })
                    .collect()
            }

            fn supported() -> bool {
                let ok = std::is_x86_feature_detected!($feat);
                if !ok {
                    eprintln!("SKIPPED: this CPU lacks {}", $feat);
                }
                ok
            }

            /// The search transform (cones for pass 0 aside) leaves exactly the scalar
            /// reference's hash tail, for every tail length the search uses.
            #[test]
            fn search_transform_matches_scalar_on_the_hash_tail() {
                if !supported() {
                    return;
                }
                let states = random_states(3);
                let mut want = states.clone();
                for s in want.iter_mut() {
                    $crate::ternary::curl::transform(s);
                }
                // SAFETY: `supported()` confirmed the target feature.
                unsafe {
                    let tpl = pack(&states);
                    for n in [1usize, 2, 9, 14, 27, 81, 200, 242, 243] {
                        let mut work = Work::new(n, Layout::Transaction);
                        work.first_pass(&tpl);
                        work.transform();
                        let f = SEARCH.fused[SEARCH.fused.len() - 1] as usize;
                        let (lo, _) = tail_range(f, n);
                        assert_eq!(work.hash.len(), n);
                        for (i, &t) in work.hash.iter().enumerate() {
                            // L_F[z] is state trit z (odd F) or -z (even F).
                            let z = lo + i as isize;
                            let x = if f % 2 == 1 {
                                z
                            } else {
                                STATE_LEN as isize - z
                            } as usize;
                            assert!((HASH_LEN - n..HASH_LEN).contains(&x));
                            for (k, w) in want.iter().enumerate() {
                                assert_eq!(lane(t, k), w[x], "n {n}: lane {k} trit {x}");
                            }
                        }
                    }
                }
            }

            /// Cone updates after changing template trits give exactly pass 0 rerun in full,
            /// for every trit position (the wrap-around ones included) and for the counter
            /// trits the search changes.
            #[test]
            fn cones_equal_a_full_first_pass() {
                if !supported() {
                    return;
                }
                let states = random_states(5);
                let flips = random_trits(99, 2 * STATE_LEN);
                // SAFETY: `supported()` confirmed the target feature.
                unsafe {
                    let mut tpl = pack(&states);
                    let mut work = Work::new(14, Layout::Transaction);
                    let mut fresh = Work::new(14, Layout::Transaction);
                    work.first_pass(&tpl);
                    for x in 0..STATE_LEN {
                        // A new value in some lanes: mix in another trit pattern.
                        let v = splat(flips[x]);
                        tpl[x] = sbox(tpl[x], v);
                        Work::apply(&mut work.first, &mut work.levels, &Sweep::cone(x), &tpl);
                        work.side_for_pass1();
                        let counter = Layout::Transaction.counter_trits();
                        if x % 61 == 0 || counter.contains(&x) || x > 720 {
                            fresh.first_pass(&tpl);
                            for s in 0..SLOTS {
                                assert!(same(work.first[s], fresh.first[s]), "trit {x}: slot {s}");
                            }
                        }
                    }
                    fresh.first_pass(&tpl);
                    for s in 0..SLOTS {
                        assert!(same(work.first[s], fresh.first[s]), "slot {s}");
                    }
                }
            }

            /// A search's counter steps (cones per step) against a fresh template and pass 0
            /// per counter, across carries and the full-pass fallback.
            #[test]
            fn counter_steps_keep_the_first_pass_current() {
                if !supported() {
                    return;
                }
                let tx = $crate::ternary::transaction::Transaction::from_trits(&random_trits(
                    17,
                    $crate::ternary::transaction::TRANSACTION_TRITS,
                ))
                .unwrap();
                let job = $crate::search::job::SearchJob::new(&tx, 14).unwrap();
                let job = job.kernel_job();
                // Start below a long carry: 3^13 - 1 rolls over 13 trits (past CONE_LIMIT).
                let start = (3u64.pow(13) - 1) / 2 - 3;
                // SAFETY: `supported()` confirmed the target feature.
                unsafe {
                    let mut tpl = Template::new(&job, start);
                    let mut work = Work::new(14, Layout::Transaction);
                    work.first_pass(&tpl.slots);
                    for step in 0..12u64 {
                        let mut fresh = Work::new(14, Layout::Transaction);
                        fresh.first_pass(&Template::new(&job, start + step).slots);
                        for s in 0..SLOTS {
                            assert!(same(work.first[s], fresh.first[s]), "step {step}: slot {s}");
                        }
                        let changed = tpl.advance();
                        work.advanced(&tpl.slots, changed);
                    }
                }
            }
        }
    };
}
pub(crate) use wavefront_kernel;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphas_and_offsets() {
        // δ_0 = m / α_0 = 2^(F-1), and α_F = α_0·(-2)^F = (-1)^(F+1).
        for f in [1usize, 3, 4, 5, 6] {
            let a = alpha0(f);
            assert_eq!((364 * inverse(a)) % N, 1 << (f - 1));
            assert_eq!(delta(f, 0), 1 << (f - 1));
            let want = if f % 2 == 1 { 1 } else { N - 1 };
            assert_eq!((a * (-2i64).pow(f as u32)).rem_euclid(N), want);
        }
        assert_eq!([1, 3, 4, 5].map(side_len), [1, 5, 10, 21]);
        assert_eq!([1, 3, 4, 5, 6].map(lag), [0, 1, 2, 5, 10]);
        assert_eq!(side_len(5), SIDE);
    }

    #[test]
    fn cones_and_ranges() {
        assert_eq!(cone(5, 100), (79, 110));
        assert_eq!(cone(3, 0), (-5, 2));
        // The ranges of a cone's sweep read L_0 over the outputs' whole footprint.
        let r = level_ranges(5, 79, 110);
        assert_eq!(r[5], (79, 110));
        assert_eq!(r[0], (69, 131));
        // A six-round tail sweep of 32 outputs: 63 values in its widest stored level.
        let r = level_ranges(6, 487, 518);
        assert_eq!(r[1].1 - r[1].0 + 1, LEVEL_MAX as isize);
        assert_eq!(tail_range(6, 14), (487, 500));
        assert_eq!(tail_range(5, 14), (229, 242));
    }

    #[test]
    fn addresses_are_permutations() {
        let p5: Plan<17> = Plan::new([5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1], 128);
        let p4: Plan<21> = Plan::new(
            [
                4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1,
            ],
            128,
        );
        let p3: Plan<27> = Plan::new([3; 27], 64);
        let plans: [&[[u16; ADDR_LEN]]; 3] = [&p5.addr, &p4.addr, &p3.addr];
        for addr in plans {
            for a in addr {
                let mut seen = [false; STATE_LEN];
                for z in 0..STATE_LEN {
                    let s = a[z + 10] as usize;
                    assert!(!seen[s]);
                    seen[s] = true;
                }
            }
        }
        for (a, o) in p5.addr[3].iter().zip(&p5.off[3]) {
            assert_eq!(u32::from(*a) * 16, u32::from(*o));
        }
    }
}
