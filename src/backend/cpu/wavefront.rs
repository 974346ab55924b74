//! The memory plan shared by the SIMD kernels: in-place, permuted storage and several rounds
//! fused per pass as a wavefront. Only index arithmetic lives here: the passes that follow it
//! are [`passes`](super::passes) and [`sweep`](super::sweep), the search loop
//! [`kernel`](super::kernel). `docs/cpu-kernel.md` has the cost model and the measurements.
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

/// A plan's tables without its pass count in the type, as the generic kernel reads them.
#[derive(Clone, Copy)]
pub(crate) struct Passes {
    /// [`Plan::fused`].
    pub fused: &'static [u8],
    /// [`Plan::addr`].
    pub addr: &'static [[u16; ADDR_LEN]],
    /// [`Plan::off`].
    pub off: &'static [[u16; ADDR_LEN]],
    /// [`Plan::inv0`].
    pub inv0: u16,
    /// [`Plan::pos`].
    pub pos: &'static [u16; STATE_LEN],
}

impl<const P: usize> Plan<P> {
    /// This plan's tables as [`Passes`].
    pub(crate) const fn passes(&'static self) -> Passes {
        Passes {
            fused: &self.fused,
            addr: &self.addr,
            off: &self.off,
            inv0: self.inv0,
            pos: &self.pos,
        }
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
