//! Level-by-level sweeps: a few outputs of one pass computed from the levels below them, not as
//! a wavefront over the whole state. A search uses them for the cones of pass 0 (the outputs a
//! changed counter trit reaches) and for the partial last pass (the outputs the hash's last
//! `mwm` trits need); [`wavefront`](super::wavefront) ("What a search runs") says why.

use super::simd::{Simd, Trit};
use super::wavefront::{
    cone, delta, level_ranges, slot_mod, tail_range, Passes, LEVEL_MAX, MAX_FUSED, SWEEP_OUT,
};
use crate::ternary::curl::STATE_LEN;

/// The outputs `L_F[lo..=hi]` of one pass of a search plan, by whole levels: a cone or a piece
/// of the tail. Built once per search; [`run`] runs it.
pub(crate) struct Sweep {
    pub fused: usize,
    /// [`level_ranges`] of the outputs.
    pub ranges: [(isize, isize); MAX_FUSED + 1],
    /// The slot of `L_0[z]` for each `z` of `ranges[0]`, read mod 729 (nothing the sweep reads
    /// has been overwritten).
    pub inputs: Vec<u16>,
    /// The slot of `L_F[z]` for each output `z`: where pass `p` would store it.
    pub outputs: Vec<u16>,
}

impl Sweep {
    /// The outputs `L_F[lo..=hi]` of pass `p` of `plan`.
    pub(crate) fn new(plan: &Passes, p: usize, lo: isize, hi: isize) -> Sweep {
        let fused = plan.fused[p] as usize;
        let ranges = level_ranges(fused, lo, hi);
        assert!(hi >= lo && ranges[1].1 - ranges[1].0 < LEVEL_MAX as isize);
        let addr = &plan.addr[p];
        let slots = |(l, h): (isize, isize)| (l..=h).map(|z| slot_mod(addr, z) as u16);
        Sweep {
            fused,
            ranges,
            inputs: slots(ranges[0]).collect(),
            outputs: slots((lo, hi)).collect(),
        }
    }

    /// Pass 0's outputs that template trit `x` reaches.
    pub(crate) fn cone(plan: &Passes, x: usize) -> Sweep {
        let z = ((x * usize::from(plan.inv0)) % STATE_LEN) as isize;
        let (lo, hi) = cone(plan.fused[0] as usize, z);
        Sweep::new(plan, 0, lo, hi)
    }

    /// The last pass for the state trits `HASH_LEN - n..HASH_LEN` (`n ≤ 243`), as sweeps of up
    /// to `SWEEP_OUT` consecutive outputs `z` (together `z = lo..=hi` of [`tail_range`]).
    pub(crate) fn tail(plan: &Passes, n: usize) -> Vec<Sweep> {
        let p = plan.fused.len() - 1;
        let (lo, hi) = tail_range(plan.fused[p] as usize, n);
        (lo..=hi)
            .step_by(SWEEP_OUT)
            .map(|l| Sweep::new(plan, p, l, hi.min(l + SWEEP_OUT as isize - 1)))
            .collect()
    }
}

/// Run a [`Sweep`]: its outputs `L_F[lo..=hi]`, computed level by level (not as a wavefront),
/// `L_{r+1}[z] = S(L_r[z], L_r[z + δ_r])`, reading `L_0` from `src` and keeping the levels in
/// `levels` (`2 · LEVEL_MAX` trits).
pub(crate) fn run<'a, S: Simd>(
    s: S,
    sw: &Sweep,
    src: &[Trit<S::V>],
    levels: &'a mut [Trit<S::V>],
) -> &'a [Trit<S::V>] {
    s.vectorize(
        #[inline(always)]
        move || {
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
                out[k] = s.sbox(src[usize::from(ins_a[k])], src[usize::from(ins_b[k])]);
            }
            for r in 1..sw.fused {
                let (a, b) = taps(r);
                let n = len(r + 1);
                let (la, lb, out) = (&cur[a..a + n], &cur[b..b + n], &mut next[..n]);
                for k in 0..n {
                    out[k] = s.sbox(la[k], lb[k]);
                }
                std::mem::swap(&mut cur, &mut next);
            }
            &cur[..len(sw.fused)]
        },
    )
}
