//! The SIMD kernels' entry points besides the search: the whole transform of given states (the
//! test hooks compare it with the scalar reference), the nonces a search places, bare
//! transforms for the benches, and batch absorbing for hashing many messages.

use super::kernel::{Template, Work};
use super::messages::Messages;
use super::passes::transform;
use super::simd::{Simd, Trit};
use super::transpose::words_to_rows;
use super::wavefront::SLOTS;
use crate::search::bitslice::{BadTrit, Planes};
use crate::search::layout::KernelJob;
use crate::search::nonce::{CounterRange, NONCE_OFFSET};
use crate::ternary::curl::{HASH_LEN, STATE_LEN};

/// Write the lane words of `t` into trit `x` of `planes` (`S::WORDS` words per trit).
fn put_words<S: Simd>(s: S, t: Trit<S::V>, planes: &mut Planes, x: usize) {
    let w = S::WORDS;
    planes.lo[x * w..(x + 1) * w].copy_from_slice(s.to_words(t.lo).as_ref());
    planes.hi[x * w..(x + 1) * w].copy_from_slice(s.to_words(t.hi).as_ref());
}

/// Up to `LANES` states bit-sliced into a template (lane `k` = `states[k]`, natural order),
/// with room for the side slots.
#[inline(always)]
pub(super) fn pack<S: Simd>(s: S, states: &[[i8; STATE_LEN]]) -> Vec<Trit<S::V>> {
    let planes = Planes::from_states(states, S::WORDS, 64);
    let mut tpl = vec![s.splat(0); SLOTS];
    for (x, slot) in tpl.iter_mut().enumerate().take(STATE_LEN) {
        let (lo, hi) = planes.words_of(x);
        *slot = s.trit_from_words(lo, hi);
    }
    tpl
}

/// Test hook: the kernel's transform of up to `LANES` states, lane `k` = `states[k]`.
pub(crate) fn transform_states<S: Simd>(
    s: S,
    states: &mut [[i8; STATE_LEN]],
) -> Result<(), BadTrit> {
    s.vectorize(
        #[inline(always)]
        || {
            for chunk in states.chunks_mut(S::LANES) {
                let tpl = pack(s, chunk);
                let mut y = vec![s.splat(0); SLOTS];
                transform(s, &tpl, &mut y);
                let mut out = Planes::zeros(STATE_LEN, S::WORDS, 64);
                for x in 0..STATE_LEN {
                    put_words(s, y[S::PLAN.pos[x] as usize], &mut out, x);
                }
                let n = chunk.len();
                chunk.copy_from_slice(&out.to_states::<STATE_LEN>(n)?);
            }
            Ok(())
        },
    )
}

/// Test hook: the nonces (block trits 162..243) placed in each lane of the kernel's
/// pre-transform states for the first `transforms` counters of `range`, exactly as the search
/// builds them.
pub(crate) fn placed_nonces<S: Simd>(
    s: S,
    job: &KernelJob<'_>,
    range: CounterRange,
    transforms: usize,
) -> Result<Vec<[i8; 81]>, BadTrit> {
    s.vectorize(
        #[inline(always)]
        || {
            let mut tpl = Template::new(s, job, range.start);
            let mut out = Vec::new();
            for n in 0..(transforms as u64).min(range.len) {
                if n > 0 {
                    tpl.advance();
                }
                let mut nonces = Planes::zeros(HASH_LEN - NONCE_OFFSET, S::WORDS, 64);
                for (j, x) in (NONCE_OFFSET..HASH_LEN).enumerate() {
                    put_words(s, tpl.slots[x], &mut nonces, j);
                }
                out.extend(nonces.to_states::<81>(S::LANES)?);
            }
            Ok(out)
        },
    )
}

/// Bench hook: `n` bare search transforms at the job's MWM, each with the cone update of one
/// changed counter trit (the search averages 1.5), but no counter, zero test or stop check.
/// Returns a value derived from the result so nothing is optimised away.
pub(crate) fn bare_transforms<S: Simd>(s: S, job: &KernelJob<'_>, n: usize) -> u64 {
    s.vectorize(
        #[inline(always)]
        || {
            let tpl = Template::new(s, job, 0);
            let mut work = Work::new(s, job.mwm().max(1), job.layout());
            work.first_pass(&tpl.slots);
            let mut acc = 0u64;
            for _ in 0..n {
                work.advanced(&tpl.slots, 1);
                work.transform();
                acc = acc.wrapping_add(s.to_words(work.hash[0].lo).as_ref()[0]);
            }
            acc
        },
    )
}

/// Batch hook: absorb up to `LANES` messages of equal length (at least one whole 243-trit
/// block, valid digits; trits or trytes, [`Messages`]), one per lane, with this kernel's
/// transform, and write the first `out_len` trits (natural order: 243 for a hash, 729 for a
/// mid-state) of each final state to `out`, message after message. Between blocks the state is
/// read back in natural order (the transform stores it permuted, `PLAN.pos`) and the next block
/// written over the rate.
pub(crate) fn absorb_lanes<S: Simd>(s: S, msgs: Messages<'_>, out_len: usize, out: &mut [i8]) {
    s.vectorize(
        #[inline(always)]
        || {
            let n = msgs.len();
            let len = if n == 0 { 0 } else { msgs.trits(0) };
            assert!(n <= S::LANES && out_len <= STATE_LEN && out.len() == n * out_len);
            assert!(len >= HASH_LEN && len.is_multiple_of(HASH_LEN));
            assert!((0..n).all(|i| msgs.trits(i) == len));
            let pos = S::PLAN.pos;
            let mut tpl = vec![s.splat(0); SLOTS];
            let mut y = vec![s.splat(0); SLOTS];
            // The messages' trits as lane words, a window at a time (33 blocks of trits: 1 MB
            // with 512 lanes; one block of trytes).
            let window = msgs.window();
            let mut lo = vec![S::Words::default(); len.min(window)];
            let mut hi = vec![S::Words::default(); len.min(window)];
            for win in (0..len).step_by(window) {
                let wl = (len - win).min(window);
                msgs.load(win, &mut lo[..wl], &mut hi[..wl]);
                for start in (0..wl).step_by(HASH_LEN) {
                    for x in 0..HASH_LEN {
                        tpl[x] = s.trit_from_words(lo[start + x].as_ref(), hi[start + x].as_ref());
                    }
                    if win + start > 0 {
                        for x in HASH_LEN..STATE_LEN {
                            tpl[x] = y[pos[x] as usize];
                        }
                    }
                    transform(s, &tpl, &mut y);
                }
            }
            let mut lo = vec![S::Words::default(); out_len];
            let mut hi = vec![S::Words::default(); out_len];
            for x in 0..out_len {
                let t = y[pos[x] as usize];
                lo[x] = s.to_words(t.lo);
                hi[x] = s.to_words(t.hi);
            }
            words_to_rows(&lo, &hi, n, out);
        },
    )
}
