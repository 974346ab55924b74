//! The SIMD search loop, written once over [`Simd`]: per counter, pass 0 kept current by cones,
//! the full passes, the partial tail into the hash's last `mwm` trits, and the zero test.
//! [`wavefront`](super::wavefront) ("What a search runs") describes the plan.

use super::passes::{full_pass, save_side};
use super::simd::{Simd, Trit};
use super::sweep::{self, Sweep};
use super::wavefront::{side_len, LEVEL_MAX, SLOTS};
use crate::search::control::Worker;
use crate::search::layout::{KernelJob, Layout, LayoutCounter};
use crate::search::nonce::{CounterRange, Hit};
use crate::ternary::curl::HASH_LEN;

/// More changed template trits than this and pass 0 is rerun in full instead of by cones (a
/// cone is ~1/20 of a pass; 12 or more changed trits happen once in 3^11 counters).
const CONE_LIMIT: usize = 12;

/// What one worker's search transforms work on: pass 0's output for the current template (kept
/// current by cones), the work state, the sweeps' levels, the cones of the counter trits, the
/// tail for this search's MWM and its output.
pub(crate) struct Work<S: Simd> {
    s: S,
    first: Vec<Trit<S::V>>,
    y: Vec<Trit<S::V>>,
    levels: Vec<Trit<S::V>>,
    cones: Vec<Sweep>,
    tail: Vec<Sweep>,
    /// The last `mwm` state trits after [`Work::transform`], in the order `z` of the last pass
    /// (`hash[k]` = `L_F[lo + k]`).
    pub(super) hash: Vec<Trit<S::V>>,
}

impl<S: Simd> Work<S> {
    /// For searches at `mwm` (the last `mwm` hash trits must be zero) whose counter trits lie
    /// where `layout` puts them.
    #[inline(always)]
    pub(crate) fn new(s: S, mwm: usize, layout: Layout) -> Work<S> {
        let n = mwm.min(HASH_LEN);
        let plan = S::SEARCH;
        Work {
            s,
            first: vec![s.splat(0); SLOTS],
            y: vec![s.splat(0); SLOTS],
            levels: vec![s.splat(0); 2 * LEVEL_MAX],
            cones: layout
                .counter_trits()
                .map(|x| Sweep::cone(&plan, x))
                .collect(),
            tail: Sweep::tail(&plan, n),
            hash: vec![s.splat(0); n],
        }
    }

    /// Fill pass 1's side slots of `first` (it reads `first`, writes `y`).
    #[inline(always)]
    fn side_for_pass1(&mut self) {
        let plan = S::SEARCH;
        // SAFETY: `first` holds SLOTS trits.
        unsafe {
            save_side(
                self.first.as_mut_ptr(),
                &plan.off[1],
                side_len(plan.fused[1] as usize),
            )
        };
    }

    /// Pass 0 in full: the template into `first`.
    #[inline(always)]
    pub(crate) fn first_pass(&mut self, tpl: &[Trit<S::V>]) {
        let (s, plan) = (self.s, S::SEARCH);
        assert!(tpl.len() >= SLOTS);
        // SAFETY: both arrays hold SLOTS trits; the template needs no side slots.
        unsafe {
            full_pass(
                s,
                plan.fused[0],
                tpl.as_ptr(),
                self.first.as_mut_ptr(),
                &plan.off[0],
            )
        };
        self.side_for_pass1();
    }

    /// Recompute the outputs of pass 0 in `sw` (a cone of changed template trits).
    #[inline(always)]
    fn apply(
        s: S,
        first: &mut [Trit<S::V>],
        levels: &mut [Trit<S::V>],
        sw: &Sweep,
        tpl: &[Trit<S::V>],
    ) {
        let out = sweep::run(s, sw, tpl, levels);
        for (&slot, &v) in sw.outputs.iter().zip(out) {
            first[usize::from(slot)] = v;
        }
    }

    /// After [`Template::advance`] changed the low `changed` counter trits: update pass 0's
    /// output by their cones (or in full after a long carry).
    #[inline(always)]
    pub(crate) fn advanced(&mut self, tpl: &[Trit<S::V>], changed: usize) {
        let s = self.s;
        if changed > CONE_LIMIT {
            self.first_pass(tpl);
            return;
        }
        for sw in &self.cones[..changed] {
            Self::apply(s, &mut self.first, &mut self.levels, sw, tpl);
        }
        self.side_for_pass1();
    }

    /// Passes 1.. of the search plan from `first`, then its tail into `hash`: the state trits
    /// `HASH_LEN - mwm..HASH_LEN` of the transform.
    pub(crate) fn transform(&mut self) {
        let (s, plan) = (self.s, S::SEARCH);
        s.vectorize(
            #[inline(always)]
            || {
                let q = plan.fused.len();
                let yp = self.y.as_mut_ptr();
                for p in 1..q - 1 {
                    let src = if p == 1 {
                        self.first.as_ptr()
                    } else {
                        yp.cast_const()
                    };
                    // SAFETY: both arrays hold SLOTS trits; pass 1 reads `first`, whose side slots
                    // `side_for_pass1` filled; the rest run in place.
                    unsafe { full_pass(s, plan.fused[p], src, yp, &plan.off[p]) };
                }
                // The tail only reads `y`: its outputs go to `hash`.
                let mut k = 0;
                for sw in &self.tail {
                    let out = sweep::run(s, sw, &self.y, &mut self.levels);
                    self.hash[k..k + out.len()].copy_from_slice(out);
                    k += out.len();
                }
            },
        )
    }
}

/// The lowest lane whose trits in `hash` (the last `mwm` of the hash, from
/// [`Work::transform`]) are all zero.
#[inline(always)]
fn zero_lane<S: Simd>(s: S, hash: &[Trit<S::V>]) -> Option<usize> {
    let mut acc = s.ones();
    for &t in hash {
        acc = s.zero_and(acc, t);
    }
    s.first_lane(acc)
}

/// The pre-transform state of a search, in natural order: the mid-state, each lane's number,
/// and the counter (the same for every lane).
pub(crate) struct Template<S: Simd> {
    s: S,
    pub(super) slots: Vec<Trit<S::V>>,
    counter: LayoutCounter,
}

impl<S: Simd> Template<S> {
    #[inline(always)]
    pub(crate) fn new(s: S, job: &KernelJob<'_>, start: u64) -> Template<S> {
        let mut slots = vec![s.splat(0); SLOTS];
        for (x, &t) in job.state().iter().enumerate() {
            slots[x] = s.splat(t);
        }
        let layout = job.layout();
        let lanes = layout.lane_trits().start;
        for (j, (lo, hi)) in layout.lane_words(S::WORDS).iter().enumerate() {
            slots[lanes + j] = s.trit_from_words(lo, hi);
        }
        let counter = LayoutCounter::new(layout, start);
        let at = counter.start();
        for (j, &t) in counter.trits().iter().enumerate() {
            slots[at + j] = s.splat(t);
        }
        Template { s, slots, counter }
    }

    /// Next counter: rewrite only the counter trits that changed; returns how many (the low
    /// ones).
    #[inline(always)]
    pub(crate) fn advance(&mut self) -> usize {
        let s = self.s;
        let changed = self.counter.increment();
        let at = self.counter.start();
        for j in 0..changed {
            self.slots[at + j] = s.splat(self.counter.trits()[j]);
        }
        changed
    }
}

/// Search `range` on one worker: one transform per counter, the stop condition read once per
/// transform; returns the lowest lane that hit.
pub(crate) fn search<S: Simd>(
    s: S,
    job: &KernelJob<'_>,
    range: CounterRange,
    w: &mut Worker<'_>,
) -> Option<Hit> {
    s.vectorize(
        #[inline(always)]
        || {
            let mut tpl = Template::new(s, job, range.start);
            let mut work = Work::new(s, job.mwm(), job.layout());
            work.first_pass(&tpl.slots);
            for _ in 0..range.len {
                if !w.keep_going() {
                    return None;
                }
                work.transform();
                let lane = zero_lane(s, &work.hash);
                w.batch_done(S::LANES as u64);
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
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::hooks::pack;
    use crate::ternary::curl::STATE_LEN;

    /// Pseudo-random trits (the crate's xorshift stream).
    fn random_trits(seed: u64, n: usize) -> Vec<i8> {
        crate::ternary::xorshift::trits(seed).take(n).collect()
    }

    /// Lane `k` of a bit-sliced trit.
    fn lane<S: Simd>(s: S, t: Trit<S::V>, k: usize) -> i8 {
        let (lo, hi) = (s.to_words(t.lo), s.to_words(t.hi));
        let bit = |w: S::Words| (w.as_ref()[k / 64] >> (k % 64)) & 1 == 1;
        // A (0, 0) pair is no trit: 2 makes the comparison with the reference fail.
        crate::search::bitslice::decode(bit(lo), bit(hi)).unwrap_or(2)
    }

    fn same<S: Simd>(s: S, a: Trit<S::V>, b: Trit<S::V>) -> bool {
        let w = |v: S::V| s.to_words(v);
        w(a.lo).as_ref() == w(b.lo).as_ref() && w(a.hi).as_ref() == w(b.hi).as_ref()
    }

    fn random_states<S: Simd>(seed: u64) -> Vec<[i8; STATE_LEN]> {
        (0..S::LANES as u64)
            .map(|k| {
                let t = random_trits(seed * 7919 + k, STATE_LEN);
                std::array::from_fn(|i| t[i])
            })
            .collect()
    }

    /// The search transform (cones for pass 0 aside) leaves exactly the scalar reference's hash
    /// tail, for every tail length the search uses.
    fn search_transform_matches_scalar_on_the_hash_tail<S: Simd>(s: S) {
        use super::super::wavefront::tail_range;
        let states = random_states::<S>(3);
        let mut want = states.clone();
        for st in want.iter_mut() {
            crate::ternary::curl::transform(st);
        }
        let tpl = pack(s, &states);
        let plan = S::SEARCH;
        for n in [1usize, 2, 9, 14, 27, 81, 200, 242, 243] {
            let mut work = Work::new(s, n, Layout::Transaction);
            work.first_pass(&tpl);
            work.transform();
            let f = plan.fused[plan.fused.len() - 1] as usize;
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
                    assert_eq!(lane(s, t, k), w[x], "n {n}: lane {k} trit {x}");
                }
            }
        }
    }

    /// Cone updates after changing template trits give exactly pass 0 rerun in full, for every
    /// trit position (the wrap-around ones included) and for the counter trits the search
    /// changes.
    fn cones_equal_a_full_first_pass<S: Simd>(s: S) {
        let states = random_states::<S>(5);
        let flips = random_trits(99, 2 * STATE_LEN);
        let plan = S::SEARCH;
        let mut tpl = pack(s, &states);
        let mut work = Work::new(s, 14, Layout::Transaction);
        let mut fresh = Work::new(s, 14, Layout::Transaction);
        work.first_pass(&tpl);
        for x in 0..STATE_LEN {
            // A new value in some lanes: mix in another trit pattern.
            let v = s.splat(flips[x]);
            tpl[x] = s.sbox(tpl[x], v);
            let cone = Sweep::cone(&plan, x);
            Work::apply(s, &mut work.first, &mut work.levels, &cone, &tpl);
            work.side_for_pass1();
            let counter = Layout::Transaction.counter_trits();
            if x % 61 == 0 || counter.contains(&x) || x > 720 {
                fresh.first_pass(&tpl);
                for slot in 0..SLOTS {
                    let ok = same(s, work.first[slot], fresh.first[slot]);
                    assert!(ok, "trit {x}: slot {slot}");
                }
            }
        }
        fresh.first_pass(&tpl);
        for slot in 0..SLOTS {
            assert!(same(s, work.first[slot], fresh.first[slot]), "slot {slot}");
        }
    }

    /// A search's counter steps (cones per step) against a fresh template and pass 0 per
    /// counter, across carries and the full-pass fallback.
    fn counter_steps_keep_the_first_pass_current<S: Simd>(s: S) {
        use crate::ternary::transaction::{Transaction, TRANSACTION_TRITS};
        let tx = Transaction::from_trits(&random_trits(17, TRANSACTION_TRITS)).unwrap();
        let job = crate::search::search_job::SearchJob::new(&tx, 14).unwrap();
        let job = job.kernel_job();
        // Start below a long carry: 3^13 - 1 rolls over 13 trits (past CONE_LIMIT).
        let start = (3u64.pow(13) - 1) / 2 - 3;
        let mut tpl = Template::new(s, &job, start);
        let mut work = Work::new(s, 14, Layout::Transaction);
        work.first_pass(&tpl.slots);
        for step in 0..12u64 {
            let mut fresh = Work::new(s, 14, Layout::Transaction);
            fresh.first_pass(&Template::new(s, &job, start + step).slots);
            for slot in 0..SLOTS {
                let ok = same(s, work.first[slot], fresh.first[slot]);
                assert!(ok, "step {step}: slot {slot}");
            }
            let changed = tpl.advance();
            work.advanced(&tpl.slots, changed);
        }
    }

    /// Run a check on every SIMD kernel this CPU has, saying which it skips.
    macro_rules! on_every_kernel {
        ($($check:ident),* $(,)?) => {$(
            #[test]
            fn $check() {
                #[cfg(target_arch = "x86_64")]
                {
                    match crate::backend::cpu::avx2::Avx2::new() {
                        Some(s) => super::$check(s),
                        None => eprintln!("SKIPPED: this CPU lacks avx2"),
                    }
                    match crate::backend::cpu::avx512::Avx512::new() {
                        Some(s) => super::$check(s),
                        None => eprintln!("SKIPPED: this CPU lacks avx512f"),
                    }
                }
            }
        )*};
    }

    mod each_kernel {
        on_every_kernel!(
            search_transform_matches_scalar_on_the_hash_tail,
            cones_equal_a_full_first_pass,
            counter_steps_keep_the_first_pass_current,
        );
    }
}
