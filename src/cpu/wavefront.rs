//! The memory plan shared by the SIMD kernels: in-place, permuted storage and several rounds
//! fused per pass as a wavefront. Only index arithmetic lives here; each kernel file holds its
//! own vector code.
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
//! the offsets are then `16, -8, 4, -2, 1` (F = 5), `8, -4, 2, -1` (F = 4), `4, -2, 1` (F = 3)
//! or `1` (F = 1). For odd `F` the last level is back in natural order, `L_F[z] = state_F[z]`;
//! for even `F` it is mirrored, `L_F[z] = state_F[-z]`, which the storage map absorbs.
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
//! [`Plan::addr`] tabulates. The first pass reads the search's template (natural order) and
//! writes the work state: restoring the mid-state costs no copy.

use crate::curl::STATE_LEN;

/// Extra slots after the 729 for the wrap-around copies (`F = 5` needs 21).
pub(crate) const SIDE: usize = 21;
/// Slots of a kernel's state array: the state, the side copies, and a dummy slot that the
/// wavefront's warm-up steps write to (so the unrolled loop has no branch).
pub(crate) const SLOTS: usize = STATE_LEN + SIDE + 1;
/// The dummy slot.
pub(crate) const DUMMY: usize = SLOTS - 1;
/// Lowest `z` any pass touches (the `F = 5` prologue starts at `-10`).
pub(crate) const Z_MIN: isize = -10;
/// Entries of one pass's address table, for `z` in `Z_MIN..Z_MIN + ADDR_LEN`.
pub(crate) const ADDR_LEN: usize = 760;

const N: i64 = STATE_LEN as i64;

const fn inverse(a: i64) -> i64 {
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

/// The index plan of one transform: `P` passes (the fused-round counts sum to 81).
pub(crate) struct Plan<const P: usize> {
    /// Rounds fused in each pass (1, 3 or 5).
    pub fused: [u8; P],
    /// `addr[p][z - Z_MIN]`: the slot holding `L_0[z]` in pass `p`. In-place passes (`p > 0`)
    /// map `z ≥ 729` to the side slots `729 + (z - 729)`; the first pass reads the template,
    /// which it never overwrites, so it maps every `z` mod 729.
    pub addr: [[u16; ADDR_LEN]; P],
    /// `pos[x]`: the slot of logical trit `x` after the whole transform.
    pub pos: [u16; STATE_LEN],
}

impl<const P: usize> Plan<P> {
    /// Build the plan for the given pass sequence (evaluated at compile time).
    pub(crate) const fn new(fused: [u8; P]) -> Self {
        let mut addr = [[0u16; ADDR_LEN]; P];
        let mut c: i64 = 1;
        let mut total = 0;
        let mut p = 0;
        while p < P {
            let f = fused[p] as usize;
            assert!(f == 1 || f == 3 || f == 4 || f == 5);
            total += f;
            // This pass reads L_0[z] = state[α_0·z] from slot c·α_0·z ...
            c = (c * alpha0(f)) % N;
            let mut k = 0;
            while k < ADDR_LEN {
                let z = k as i64 + Z_MIN as i64;
                addr[p][k] = if p > 0 && z >= N {
                    z as u16
                } else {
                    (c * z).rem_euclid(N) as u16
                };
                k += 1;
            }
            // ... and writes L_F[z] = state'[α_F·z] there, α_F = (-1)^(F+1): for even F the
            // new state is stored mirrored.
            if f.is_multiple_of(2) {
                c = (N - c) % N;
            }
            p += 1;
        }
        assert!(total == crate::curl::ROUNDS);
        let mut pos = [0u16; STATE_LEN];
        let mut x = 0;
        while x < STATE_LEN {
            pos[x] = ((c * x as i64) % N) as u16;
            x += 1;
        }
        Plan { fused, addr, pos }
    }
}

/// Side slots an in-place pass of `fused` rounds reads (`L_0[729..729 + n]`): `lag + δ_0`.
pub(crate) const fn side_len(fused: usize) -> usize {
    match fused {
        1 => 1,
        3 => 5,
        4 => 10,
        _ => 21,
    }
}

/// 16 passes of 5 rounds and one single round (81 = 16·5 + 1): the layout study's plan, kept
/// for A/B runs (swap it into `avx512.rs`); it spills on 32 registers (see `avx512.rs`).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const FUSED5: Plan<17> = Plan::new([5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1]);
/// 20 passes of 4 rounds and one single round (81 = 20·4 + 1): a 10-trit window.
pub(crate) const FUSED4: Plan<21> = Plan::new([
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1,
]);
/// 27 passes of 3 rounds (81 = 27·3), for 16-register AVX2.
pub(crate) const FUSED3: Plan<27> = Plan::new([3; 27]);

/// The lane-number trits of a `lanes`-wide kernel as bit masks: `words[j][w]` holds bit
/// `l mod 64` = (low or high bit of lane trit `j` of lane `l = 64·w + bit`).
pub(crate) fn lane_masks<const W: usize>() -> [([u64; W], [u64; W]); 6] {
    let mut out = [([0u64; W], [0u64; W]); 6];
    for lane in 0..64 * W {
        let t = crate::search::lane_trits(lane);
        for (j, &tj) in t.iter().enumerate() {
            let (l, h) = crate::search::trit_bits(tj);
            out[j].0[lane / 64] |= u64::from(l) << (lane % 64);
            out[j].1[lane / 64] |= u64::from(h) << (lane % 64);
        }
    }
    out
}

/// The kernel body shared by the SIMD kernels: passes, transform, template, search and the test
/// hooks. The invoking file defines the vector primitives it uses: `Trit` (a `Copy` pair
/// `lo`, `hi`), `LANES`, `WORDS` (= LANES / 64), `PLAN`, and the `#[target_feature]` functions
/// `sbox`, `splat`, `from_words`, `to_words`, `ones`, `zero_and`, `first_lane`. `$feat` is
/// the target-feature string of those functions.
macro_rules! wavefront_kernel {
    ($feat:literal) => {
        use $crate::control::Worker;
        use $crate::cpu::wavefront::{lane_masks, side_len, ADDR_LEN, DUMMY, SLOTS, Z_MIN};
        use $crate::curl::{HASH_LEN, STATE_LEN};
        use $crate::search::{
            Counter, CounterRange, Hit, SearchJob, COUNTER_TRITS, LANE_TRITS, NONCE_OFFSET,
        };

        /// Copy `L_0[729..729 + n]` aside before an in-place pass overwrites slots `L_0[0..n]`.
        #[inline(always)]
        fn save_side(y: &mut [Trit], addr: &[u16; ADDR_LEN], n: usize) {
            for k in 0..n {
                y[STATE_LEN + k] = y[addr[k + (-Z_MIN) as usize] as usize];
            }
        }

        /// One wavefront step of [`pass5`] at ring position `U = i mod 9`. Each level keeps
        /// its recent values in a 9-entry ring indexed by constants (the loop is unrolled by
        /// 9), so LLVM holds the live ones in registers without moving them.
        #[target_feature(enable = $feat)]
        #[inline]
        fn step5<const FIRST: bool, const U: usize>(
            i: usize,
            tpl: &[Trit],
            y: &mut [Trit],
            addr: &[u16; ADDR_LEN],
            r: &mut [[Trit; 9]; 4],
        ) {
            let (a, b) = if FIRST {
                (tpl[addr[i] as usize], tpl[addr[i + 16] as usize])
            } else {
                (y[addr[i] as usize], y[addr[i + 16] as usize])
            };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 9]); // L2[t] = S(L1[t], L1[t-8])
            r[2][U] = sbox(r[1][(U + 5) % 9], r[1][U]); // L3[t-4] = S(L2[t-4], L2[t])
            r[3][U] = sbox(r[2][U], r[2][(U + 7) % 9]); // L4[t-4] = S(L3[t-4], L3[t-6])
            let out = sbox(r[3][(U + 8) % 9], r[3][U]); // L5[t-5] = S(L4[t-5], L4[t-4])
                                                        // Steps before t = 5 only fill the rings; their output goes to the dummy slot.
            let at = if i >= 15 { addr[i - 5] as usize } else { DUMMY };
            y[at] = out;
        }

        /// Five rounds in one in-place sweep. Offsets 16, -8, 4, -2, 1; step `t` computes
        /// `L1[t]`, `L2[t]`, `L3[t-4]`, `L4[t-4]`, `L5[t-5]` (see the module docs) for
        /// `t = -10..=733`, and stores `L5` from `t = 5` on. `FIRST`: read `L_0` from the
        /// template instead of `y`.
        #[target_feature(enable = $feat)]
        fn pass5<const FIRST: bool>(tpl: &[Trit], y: &mut [Trit], addr: &[u16; ADDR_LEN]) {
            if !FIRST {
                save_side(y, addr, side_len(5));
            }
            let mut r = [[splat(0); 9]; 4];
            // Step index i = t - Z_MIN: 744 steps = 82 × 9 + 6.
            let mut i = 0;
            while i < 738 {
                step5::<FIRST, 0>(i, tpl, y, addr, &mut r);
                step5::<FIRST, 1>(i + 1, tpl, y, addr, &mut r);
                step5::<FIRST, 2>(i + 2, tpl, y, addr, &mut r);
                step5::<FIRST, 3>(i + 3, tpl, y, addr, &mut r);
                step5::<FIRST, 4>(i + 4, tpl, y, addr, &mut r);
                step5::<FIRST, 5>(i + 5, tpl, y, addr, &mut r);
                step5::<FIRST, 6>(i + 6, tpl, y, addr, &mut r);
                step5::<FIRST, 7>(i + 7, tpl, y, addr, &mut r);
                step5::<FIRST, 8>(i + 8, tpl, y, addr, &mut r);
                i += 9;
            }
            step5::<FIRST, 0>(738, tpl, y, addr, &mut r);
            step5::<FIRST, 1>(739, tpl, y, addr, &mut r);
            step5::<FIRST, 2>(740, tpl, y, addr, &mut r);
            step5::<FIRST, 3>(741, tpl, y, addr, &mut r);
            step5::<FIRST, 4>(742, tpl, y, addr, &mut r);
            step5::<FIRST, 5>(743, tpl, y, addr, &mut r);
        }

        /// One wavefront step of [`pass4`] at ring position `U = i mod 5`.
        #[target_feature(enable = $feat)]
        #[inline]
        fn step4<const FIRST: bool, const U: usize>(
            i: usize,
            tpl: &[Trit],
            y: &mut [Trit],
            addr: &[u16; ADDR_LEN],
            r: &mut [[Trit; 5]; 3],
        ) {
            let (a, b) = if FIRST {
                (tpl[addr[i] as usize], tpl[addr[i + 8] as usize])
            } else {
                (y[addr[i] as usize], y[addr[i + 8] as usize])
            };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 5]); // L2[t] = S(L1[t], L1[t-4])
            r[2][U] = sbox(r[1][(U + 3) % 5], r[1][U]); // L3[t-2] = S(L2[t-2], L2[t])
            let out = sbox(r[2][U], r[2][(U + 4) % 5]); // L4[t-2] = S(L3[t-2], L3[t-3])
            let at = if i >= 12 { addr[i - 2] as usize } else { DUMMY };
            y[at] = out;
        }

        /// Four rounds in one in-place sweep. Offsets 8, -4, 2, -1; step `t` computes `L1[t]`,
        /// `L2[t]`, `L3[t-2]`, `L4[t-2]` for `t = -5..=730` and stores from `t = 2` on. The
        /// result is the new state mirrored (`L4[z] = state[-z]`), which the plan accounts for.
        #[target_feature(enable = $feat)]
        fn pass4<const FIRST: bool>(tpl: &[Trit], y: &mut [Trit], addr: &[u16; ADDR_LEN]) {
            if !FIRST {
                save_side(y, addr, side_len(4));
            }
            let mut r = [[splat(0); 5]; 3];
            // i = t - Z_MIN runs 5..741: 736 steps = 147 × 5 + 1.
            let mut i = 5;
            while i < 740 {
                step4::<FIRST, 0>(i, tpl, y, addr, &mut r);
                step4::<FIRST, 1>(i + 1, tpl, y, addr, &mut r);
                step4::<FIRST, 2>(i + 2, tpl, y, addr, &mut r);
                step4::<FIRST, 3>(i + 3, tpl, y, addr, &mut r);
                step4::<FIRST, 4>(i + 4, tpl, y, addr, &mut r);
                i += 5;
            }
            step4::<FIRST, 0>(740, tpl, y, addr, &mut r);
        }

        /// One wavefront step of [`pass3`] at ring position `U = i mod 3`.
        #[target_feature(enable = $feat)]
        #[inline]
        fn step3<const FIRST: bool, const U: usize>(
            i: usize,
            tpl: &[Trit],
            y: &mut [Trit],
            addr: &[u16; ADDR_LEN],
            r: &mut [[Trit; 3]; 2],
        ) {
            let (a, b) = if FIRST {
                (tpl[addr[i] as usize], tpl[addr[i + 4] as usize])
            } else {
                (y[addr[i] as usize], y[addr[i + 4] as usize])
            };
            r[0][U] = sbox(a, b); // L1[t]
            r[1][U] = sbox(r[0][U], r[0][(U + 1) % 3]); // L2[t] = S(L1[t], L1[t-2])
            let out = sbox(r[1][(U + 2) % 3], r[1][U]); // L3[t-1] = S(L2[t-1], L2[t])
            let at = if i >= 11 { addr[i - 1] as usize } else { DUMMY };
            y[at] = out;
        }

        /// Three rounds in one in-place sweep. Offsets 4, -2, 1; step `t` computes `L1[t]`,
        /// `L2[t]`, `L3[t-1]` for `t = -2..=729` and stores from `t = 1` on.
        #[target_feature(enable = $feat)]
        fn pass3<const FIRST: bool>(tpl: &[Trit], y: &mut [Trit], addr: &[u16; ADDR_LEN]) {
            if !FIRST {
                save_side(y, addr, side_len(3));
            }
            let mut r = [[splat(0); 3]; 2];
            // i = t - Z_MIN runs 8..740: 732 steps = 244 × 3.
            let mut i = 8;
            while i < 740 {
                step3::<FIRST, 0>(i, tpl, y, addr, &mut r);
                step3::<FIRST, 1>(i + 1, tpl, y, addr, &mut r);
                step3::<FIRST, 2>(i + 2, tpl, y, addr, &mut r);
                i += 3;
            }
        }

        /// One round in one in-place sweep: `L1[t] = S(L0[t], L0[t+1])`.
        #[target_feature(enable = $feat)]
        fn pass1<const FIRST: bool>(tpl: &[Trit], y: &mut [Trit], addr: &[u16; ADDR_LEN]) {
            if !FIRST {
                save_side(y, addr, side_len(1));
            }
            for i in 10..739usize {
                let (a, b) = if FIRST {
                    (tpl[addr[i] as usize], tpl[addr[i + 1] as usize])
                } else {
                    (y[addr[i] as usize], y[addr[i + 1] as usize])
                };
                y[addr[i] as usize] = sbox(a, b);
            }
        }

        /// The 81-round transform of `tpl` (natural order) into `y` (stored as `PLAN.pos` says).
        #[target_feature(enable = $feat)]
        fn transform(tpl: &[Trit], y: &mut [Trit]) {
            assert!(tpl.len() >= SLOTS && y.len() >= SLOTS);
            for (p, addr) in PLAN.addr.iter().enumerate() {
                match (PLAN.fused[p], p == 0) {
                    (5, true) => pass5::<true>(tpl, y, addr),
                    (5, false) => pass5::<false>(tpl, y, addr),
                    (4, true) => pass4::<true>(tpl, y, addr),
                    (4, false) => pass4::<false>(tpl, y, addr),
                    (3, true) => pass3::<true>(tpl, y, addr),
                    (3, false) => pass3::<false>(tpl, y, addr),
                    (_, true) => pass1::<true>(tpl, y, addr),
                    (_, false) => pass1::<false>(tpl, y, addr),
                }
            }
        }

        /// The lowest lane whose last `mwm` hash trits are all zero.
        #[target_feature(enable = $feat)]
        fn zero_lane(y: &[Trit], mwm: usize) -> Option<usize> {
            let mut acc = ones();
            for x in HASH_LEN - mwm..HASH_LEN {
                acc = zero_and(acc, y[PLAN.pos[x] as usize]);
            }
            first_lane(acc)
        }

        /// The pre-transform state of a search, in natural order: the mid-state, each lane's
        /// number, and the counter (the same for every lane).
        struct Template {
            slots: Vec<Trit>,
            counter: Counter,
        }

        impl Template {
            #[target_feature(enable = $feat)]
            fn new(job: &SearchJob, start: u64) -> Template {
                let mut slots = vec![splat(0); SLOTS];
                for (x, &t) in job.state().iter().enumerate() {
                    slots[x] = splat(t);
                }
                for (j, (lo, hi)) in lane_masks::<WORDS>().into_iter().enumerate() {
                    slots[LANE_TRITS.start + j] = from_words(lo, hi);
                }
                let counter = Counter::new(start);
                for (j, &t) in counter.trits().iter().enumerate() {
                    slots[COUNTER_TRITS.start + j] = splat(t);
                }
                Template { slots, counter }
            }

            /// Next counter: rewrite only the counter trits that changed.
            #[target_feature(enable = $feat)]
            fn advance(&mut self) {
                let changed = self.counter.increment();
                for j in 0..changed {
                    self.slots[COUNTER_TRITS.start + j] = splat(self.counter.trits()[j]);
                }
            }
        }

        /// Search `range` on one worker: one transform per counter, the stop condition read
        /// once per transform; returns the lowest lane that hit.
        #[target_feature(enable = $feat)]
        pub fn search(job: &SearchJob, range: CounterRange, w: &mut Worker<'_>) -> Option<Hit> {
            let mut tpl = Template::new(job, range.start);
            let mut y = vec![splat(0); SLOTS];
            let mwm = job.mwm();
            for _ in 0..range.len {
                if !w.keep_going() {
                    return None;
                }
                transform(&tpl.slots, &mut y);
                let lane = zero_lane(&y, mwm);
                w.batch_done(LANES as u64);
                if let Some(lane) = lane {
                    return Some(Hit {
                        counter: tpl.counter.value(),
                        lane,
                    });
                }
                tpl.advance();
            }
            None
        }

        /// Test hook: the kernel's transform of up to `LANES` states, lane `k` = `states[k]`.
        #[target_feature(enable = $feat)]
        pub(crate) fn transform_states(states: &mut [[i8; STATE_LEN]]) {
            for chunk in states.chunks_mut(LANES) {
                let mut tpl = vec![splat(0); SLOTS];
                for (x, slot) in tpl.iter_mut().enumerate().take(STATE_LEN) {
                    let mut lo = [0u64; WORDS];
                    let mut hi = [0u64; WORDS];
                    for (k, st) in chunk.iter().enumerate() {
                        let (l, h) = $crate::search::trit_bits(st[x]);
                        lo[k / 64] |= u64::from(l) << (k % 64);
                        hi[k / 64] |= u64::from(h) << (k % 64);
                    }
                    *slot = from_words(lo, hi);
                }
                let mut y = vec![splat(0); SLOTS];
                transform(&tpl, &mut y);
                for x in 0..STATE_LEN {
                    let t = y[PLAN.pos[x] as usize];
                    let (lo, hi) = (to_words(t.lo), to_words(t.hi));
                    for (k, st) in chunk.iter_mut().enumerate() {
                        let bit = |w: &[u64; WORDS]| (w[k / 64] >> (k % 64)) & 1 == 1;
                        st[x] = $crate::search::bits_trit(bit(&lo), bit(&hi));
                    }
                }
            }
        }

        /// Test hook: the nonces (block trits 162..243) placed in each lane of the kernel's
        /// pre-transform states for the first `transforms` counters of `range`, exactly as
        /// [`search`] builds them.
        #[target_feature(enable = $feat)]
        pub(crate) fn placed_nonces(
            job: &SearchJob,
            range: CounterRange,
            transforms: usize,
        ) -> Vec<[i8; 81]> {
            let mut tpl = Template::new(job, range.start);
            let mut out = Vec::new();
            for n in 0..(transforms as u64).min(range.len) {
                if n > 0 {
                    tpl.advance();
                }
                let words: Vec<_> = (NONCE_OFFSET..HASH_LEN)
                    .map(|x| (to_words(tpl.slots[x].lo), to_words(tpl.slots[x].hi)))
                    .collect();
                for k in 0..LANES {
                    let mut nonce = [0i8; 81];
                    for (t, (lo, hi)) in nonce.iter_mut().zip(&words) {
                        let bit = |w: &[u64; WORDS]| (w[k / 64] >> (k % 64)) & 1 == 1;
                        *t = $crate::search::bits_trit(bit(lo), bit(hi));
                    }
                    out.push(nonce);
                }
            }
            out
        }

        /// Bench hook: `n` bare transforms (template reload folded in, no counter, zero test or
        /// stop check). Returns a value derived from the result so nothing is optimised away.
        #[target_feature(enable = $feat)]
        pub(crate) fn bare_transforms(job: &SearchJob, n: usize) -> u64 {
            let tpl = Template::new(job, 0);
            let mut y = vec![splat(0); SLOTS];
            let mut acc = 0u64;
            for _ in 0..n {
                transform(&tpl.slots, &mut y);
                acc = acc.wrapping_add(to_words(y[PLAN.pos[242] as usize].lo)[0]);
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
            use $crate::cpu::transpose::{rows_to_words, words_to_rows, WINDOW};
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
    };
}
pub(crate) use wavefront_kernel;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphas_and_offsets() {
        // δ_0 = m / α_0 = 2^(F-1), and α_F = α_0·(-2)^F = (-1)^(F+1).
        for f in [1usize, 3, 4, 5] {
            let a = alpha0(f);
            assert_eq!((364 * inverse(a)) % N, 1 << (f - 1));
            let want = if f % 2 == 1 { 1 } else { N - 1 };
            assert_eq!((a * (-2i64).pow(f as u32)).rem_euclid(N), want);
        }
    }

    #[test]
    fn addresses_are_permutations() {
        let plans: [&[[u16; ADDR_LEN]]; 3] = [&FUSED5.addr, &FUSED4.addr, &FUSED3.addr];
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
    }
}
