//! The fast single-state Curl-P-81 transform the host runs for every search's mid-state and
//! every host check: no per-trit index walk and no table look-ups.
//!
//! # The formulation
//! The state is two 729-bit planes, the bit-sliced low and high halves of every trit (encoding
//! in [`crate::search::bitslice::encode`]). A round, `new[i] = S(old[364·i], old[364·i + 364])`
//! (indices mod 729), becomes *one rotation and one bitwise S-box* if the storage is allowed to
//! drift: suppose round `r` keeps logical trit `x` at bit `c·x` (mod 729). Storing round
//! `r + 1`'s trit `i` at bit `364·c·i` gives
//!
//! ```text
//! new_bits[q] = S(bits[q], bits[q + 364·c])      for every bit q at once
//! ```
//!
//! so each round rotates the planes by `d_r = 364^(r+1)` (mod 729) and applies the S-box to
//! (planes, rotated planes). After 81 rounds trit `x` sits at `364^81·x = 244·x = x + 243·(x mod 3)`;
//! one reorder puts it back. The same idea drives iota.go's legacy `curl/transform.go` and
//! iota-crypto's `curl_p/regular`; the layout here is our own.
//!
//! # The layout
//! 729 = 27 × 27: a plane is 27 *limbs* of 27 bits, each in a `u32` (bit `27·i + j` is bit `j`
//! of limb `i`). A rotation by `d = 27·a + b` is then a limb permutation plus a shift within the
//! limbs: `out[i] = (limb[i + a] >> b) | (limb[i + a + 1] << (27 - b))`, masked to 27 bits. The
//! final reorder moves bit `j` of limb `i + 9·(j mod 3)` back to limb `i`: three masks. The rate
//! (trits 0..243) is limbs 0..9 and the nonce (trits 162..243) limbs 6..9, so absorbing a block
//! or placing a nonce writes whole limbs. With AVX-512 a plane is two `zmm` and the limb
//! permutation one `vpermt2d` ([`planes_avx512`](super::planes_avx512)); the portable version
//! below is plain `u32` code that compilers vectorise.
//!
//! Its speed beside the scalar reference and iota-crypto is in `docs/benchmarks.md`
//! ("Per-call latency").

use crate::ternary::curl::{HASH_LEN, ROUNDS, STATE_LEN};
use crate::ternary::trinary::Trit;

/// Bits per limb, and limbs per plane (729 = 27 × 27).
pub(crate) const LIMB: usize = 27;
/// `u32` lanes per plane in memory: two 512-bit vectors. Lanes `27..32` are scratch.
pub(crate) const LANES: usize = 32;
/// The 27 bits of a limb.
pub(crate) const MASK: u32 = (1 << LIMB) - 1;
/// Limbs of the rate: 243 = 9 × 27.
pub(crate) const RATE_LIMBS: usize = HASH_LEN / LIMB;
/// Bits `j` of a limb with `j ≡ m (mod 3)`, for `m = 0, 1, 2`.
pub(crate) const THIRDS: [u32; 3] = [0x0124_9249, 0x0249_2492, 0x0492_4924];

/// Round `r`'s rotation `d_r = 364^(r+1) mod 729` as `(d / 27, d % 27)`: whole limbs, then bits.
pub(crate) const ROTATION: [(u8, u8); ROUNDS] = {
    let mut t = [(0u8, 0u8); ROUNDS];
    let mut d = 364usize;
    let mut r = 0;
    while r < ROUNDS {
        t[r] = ((d / LIMB) as u8, (d % LIMB) as u8);
        d = d * 364 % STATE_LEN;
        r += 1;
    }
    t
};

/// A Curl state as two bit planes, natural order (trit `x` is bit `x mod 27` of limb `x / 27`).
/// Limbs `0..27` hold only their 27 low bits; lanes `27..32` hold anything.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct StatePlanes {
    pub(crate) lo: [u32; LANES],
    pub(crate) hi: [u32; LANES],
}

impl std::fmt::Debug for StatePlanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatePlanes").finish_non_exhaustive()
    }
}

/// The bit-sliced halves of 27 trits (at most): bit `j` = trit `j`.
#[inline]
fn limb_of(trits: &[Trit]) -> (u32, u32) {
    let (l, h) = pack(trits);
    (l as u32, h as u32)
}

/// Write the 27 trits of a limb (`trit = high - low`).
#[inline]
fn trits_of(l: u32, h: u32, out: &mut [Trit]) {
    for (j, t) in out.iter_mut().enumerate() {
        *t = ((h >> j) & 1) as i8 - ((l >> j) & 1) as i8;
    }
}

impl StatePlanes {
    /// The all-zero state (the sponge's start; `0` is `(1, 1)`).
    pub(crate) const ZERO: StatePlanes = StatePlanes {
        lo: [MASK; LANES],
        hi: [MASK; LANES],
    };

    /// A state from 729 trits (each -1, 0 or 1).
    pub(crate) fn from_trits(trits: &[Trit; STATE_LEN]) -> StatePlanes {
        let mut p = StatePlanes::ZERO;
        p.set_limbs(0, trits);
        p
    }

    /// The 729 trits.
    pub(crate) fn trits(&self) -> [Trit; STATE_LEN] {
        let mut out = [0; STATE_LEN];
        self.get_limbs(0, &mut out);
        out
    }

    /// Overwrite trits `27·limb .. 27·limb + trits.len()` (a whole number of limbs) with `trits`.
    #[inline]
    pub(crate) fn set_limbs(&mut self, limb: usize, trits: &[Trit]) {
        debug_assert!(trits.len().is_multiple_of(LIMB) && limb * LIMB + trits.len() <= STATE_LEN);
        let lo = &mut self.lo[limb..];
        let hi = &mut self.hi[limb..];
        for ((l, h), chunk) in lo
            .iter_mut()
            .zip(hi.iter_mut())
            .zip(trits.chunks_exact(LIMB))
        {
            (*l, *h) = limb_of(chunk);
        }
    }

    /// Read trits `27·limb .. 27·limb + out.len()` (a whole number of limbs).
    #[inline]
    pub(crate) fn get_limbs(&self, limb: usize, out: &mut [Trit]) {
        debug_assert!(out.len().is_multiple_of(LIMB) && limb * LIMB + out.len() <= STATE_LEN);
        let lo = &self.lo[limb..];
        let hi = &self.hi[limb..];
        for ((l, h), chunk) in lo.iter().zip(hi).zip(out.chunks_exact_mut(LIMB)) {
            trits_of(*l, *h, chunk);
        }
    }

    /// Absorb one 243-trit block: overwrite the rate, then transform.
    #[inline]
    pub(crate) fn absorb_block(&mut self, block: &[Trit], kernel: PlanesKernel) {
        debug_assert_eq!(block.len(), HASH_LEN);
        self.set_limbs(0, block);
        kernel.run(self);
    }

    /// How many trits at the end of the rate (from trit 242 down) are zero: a hash's weight.
    pub(crate) fn rate_trailing_zeros(&self) -> usize {
        let mut n = 0;
        for i in (0..RATE_LIMBS).rev() {
            // A trit is zero iff both its bits are set; count set bits down from bit 26.
            let z = self.lo[i] & self.hi[i] & MASK;
            let run = (!(z << (32 - LIMB))).leading_zeros() as usize;
            n += run;
            if run < LIMB {
                break;
            }
        }
        n
    }
}

/// Which implementation of the planes transform runs.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanesKernel {
    /// Plain `u32` code; every CPU.
    Portable,
    /// The same code compiled for AVX2 (x86-64 with AVX2).
    Avx2,
    /// Two `zmm` per plane, `vpermt2d` rotations, `vpternlogd` S-box (x86-64 with AVX-512F).
    Avx512,
}

impl PlanesKernel {
    /// Every implementation, slowest first.
    pub const ALL: &'static [PlanesKernel] = &[
        PlanesKernel::Portable,
        PlanesKernel::Avx2,
        PlanesKernel::Avx512,
    ];

    /// The fastest this CPU runs (`is_x86_feature_detected!` caches CPUID in a static: a load).
    #[inline]
    pub fn detect() -> PlanesKernel {
        *Self::ALL
            .iter()
            .rev()
            .find(|k| k.is_supported())
            .unwrap_or(&PlanesKernel::Portable)
    }

    /// Whether this CPU can run it.
    #[inline]
    pub fn is_supported(self) -> bool {
        match self {
            PlanesKernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            PlanesKernel::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            PlanesKernel::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Nanoseconds of one transform with a block or nonce written in, on one core, as measured
    /// on the development machines (`docs/benchmarks.md`): for choosing between this and a
    /// bit-sliced pass of a CPU kernel.
    pub(crate) fn transform_ns(self) -> u64 {
        match self {
            PlanesKernel::Portable => 2_000,
            PlanesKernel::Avx2 => 1_200,
            PlanesKernel::Avx512 => 450,
        }
    }

    /// One transform of `p` (the portable one where this kernel is not supported).
    #[inline]
    pub(crate) fn run(self, p: &mut StatePlanes) {
        match self {
            #[cfg(target_arch = "x86_64")]
            PlanesKernel::Avx512 if self.is_supported() => {
                // SAFETY: is_supported() just confirmed AVX-512F on this CPU.
                unsafe { super::planes_avx512::transform(p) }
            }
            #[cfg(target_arch = "x86_64")]
            PlanesKernel::Avx2 if self.is_supported() => {
                // SAFETY: is_supported() just confirmed AVX2 on this CPU.
                unsafe { transform_avx2(p) }
            }
            _ => transform_portable(p),
        }
    }

    /// Test and bench hook: the Curl-P-81 permutation of `state`, in and out of planes.
    pub fn transform(self, state: &mut [Trit; STATE_LEN]) {
        let mut p = StatePlanes::from_trits(state);
        self.run(&mut p);
        *state = p.trits();
    }

    /// Bench hook: `n` transforms of `state` back to back, converted in and out once.
    pub fn transform_repeat(self, state: &mut [Trit; STATE_LEN], n: usize) {
        let mut p = StatePlanes::from_trits(state);
        for _ in 0..n {
            self.run(&mut p);
        }
        *state = p.trits();
    }
}

/// The Curl-P-81 permutation with the fast planes transform (same result as
/// [`transform`](crate::curl::transform), the reference); test and bench hook.
#[doc(hidden)]
pub fn fast_transform(state: &mut [Trit; STATE_LEN]) {
    PlanesKernel::detect().transform(state);
}

/// One plane rotated by `a` limbs and `b` bits: `out[i] = (d[i + a] >> b) | (d[i + a + 1] <<
/// (27 - b))`, masked (`d` is the plane twice in a row).
#[inline(always)]
fn rotate(d: &[u32; 2 * LIMB], a: usize, b: u32, out: &mut [u32; LIMB]) {
    let x: &[u32; LIMB] = d[a..a + LIMB].try_into().expect("a < 27");
    let y: &[u32; LIMB] = d[a + 1..a + 1 + LIMB].try_into().expect("a < 27");
    let c = LIMB as u32 - b;
    for i in 0..LIMB {
        out[i] = ((x[i] >> b) | (y[i] << c)) & MASK;
    }
}

/// The portable transform.
fn transform_portable(p: &mut StatePlanes) {
    transform_body(p);
}

/// The portable transform compiled for AVX2 (the same code, 256-bit vectors).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn transform_avx2(p: &mut StatePlanes) {
    transform_body(p);
}

/// The plain-code transform. Each plane is kept twice in a row (54 limbs) so that the rotation
/// reads two straight runs, `limb[a..a + 27]` and `limb[a + 1..a + 28]`, with no wrap test.
#[inline(always)]
fn transform_body(p: &mut StatePlanes) {
    let mut dl = [0u32; 2 * LIMB];
    let mut dh = [0u32; 2 * LIMB];
    dl[..LIMB].copy_from_slice(&p.lo[..LIMB]);
    dl[LIMB..].copy_from_slice(&p.lo[..LIMB]);
    dh[..LIMB].copy_from_slice(&p.hi[..LIMB]);
    dh[LIMB..].copy_from_slice(&p.hi[..LIMB]);
    let mut rl = [0u32; LIMB];
    let mut rh = [0u32; LIMB];
    for &(a, b) in ROTATION.iter() {
        let (a, b) = (a as usize, u32::from(b));
        rotate(&dl, a, b, &mut rl);
        rotate(&dh, a, b, &mut rh);
        // S-box of (state, rotated state), written to both copies.
        for i in 0..LIMB {
            let (al, ah) = (dl[i], dh[i]);
            let lo = ah ^ (!rl[i] & al);
            let hi = al ^ (rh[i] & lo);
            dl[i] = lo;
            dl[i + LIMB] = lo;
            dh[i] = hi;
            dh[i + LIMB] = hi;
        }
    }
    // Trit 27·i + j ended in limb i + 9·(j mod 3).
    let [t0, t1, t2] = THIRDS;
    for i in 0..LIMB {
        p.lo[i] = (dl[i] & t0) | (dl[i + 9] & t1) | (dl[i + 18] & t2);
        p.hi[i] = (dh[i] & t0) | (dh[i + 9] & t1) | (dh[i + 18] & t2);
    }
}

/// The sponge state after absorbing `blocks` (whole 243-trit blocks of valid trits), in planes.
pub(crate) fn absorb(blocks: &[Trit], kernel: PlanesKernel) -> StatePlanes {
    debug_assert!(blocks.len().is_multiple_of(HASH_LEN));
    let mut p = StatePlanes::ZERO;
    for block in blocks.chunks_exact(HASH_LEN) {
        p.absorb_block(block, kernel);
    }
    p
}

/// Bit 0 of each byte of `x`, gathered: byte `j` → bit `j`. (The multiplier moves bit `8j` to
/// bit `56 + j`; no two partial products meet, so nothing carries.)
#[inline(always)]
fn gather_bytes(x: u64) -> u64 {
    ((x & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The bit-sliced halves of up to 64 trits: bit `j` = trit `j` (encoding in
/// [`crate::search::bitslice::encode`]). Eight trits per step: a trit byte is `0x01` for 1 and `0xFF`
/// for -1, so `high = !bit 7` and `low = !(bit 0 & !bit 7)`. Valid trits only (callers check).
#[inline]
pub(crate) fn pack(trits: &[Trit]) -> (u64, u64) {
    debug_assert!(trits.len() <= 64);
    let (mut one, mut neg) = (0u64, 0u64);
    let mut chunks = trits.chunks_exact(8);
    for (k, c) in chunks.by_ref().enumerate() {
        let x = u64::from_le_bytes(std::array::from_fn(|j| c[j] as u8));
        let b7 = x >> 7;
        one |= gather_bytes(x & !b7) << (8 * k);
        neg |= gather_bytes(b7) << (8 * k);
    }
    let base = trits.len() / 8 * 8;
    for (j, &t) in chunks.remainder().iter().enumerate() {
        one |= u64::from(t == 1) << (base + j);
        neg |= u64::from(t == -1) << (base + j);
    }
    let valid = if trits.len() == 64 {
        !0
    } else {
        (1u64 << trits.len()) - 1
    };
    (!one & valid, !neg & valid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ternary::curl::{transform, Curl};

    fn random_states(n: usize) -> Vec<[Trit; STATE_LEN]> {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut states = vec![[0i8; STATE_LEN], [1; STATE_LEN], [-1; STATE_LEN]];
        for _ in 0..n {
            let mut st = [0i8; STATE_LEN];
            for t in st.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *t = (seed % 3) as i8 - 1;
            }
            states.push(st);
        }
        states
    }

    fn kernels() -> impl Iterator<Item = PlanesKernel> {
        PlanesKernel::ALL
            .iter()
            .copied()
            .filter(|k| k.is_supported())
    }

    #[test]
    fn rotations_are_powers_of_364() {
        let mut d = 1usize;
        for &(a, b) in &ROTATION {
            d = d * 364 % STATE_LEN;
            assert_eq!(a as usize * LIMB + b as usize, d);
        }
        // The drift after 81 rounds is 244 = 1 + 243: what the final reorder undoes.
        let mut c = 1;
        for _ in 0..ROUNDS {
            c = c * 364 % STATE_LEN;
        }
        assert_eq!(c, 244);
        assert_eq!(THIRDS[0] | THIRDS[1] | THIRDS[2], MASK);
        assert_eq!(THIRDS[0] & THIRDS[1], 0);
        assert_eq!(THIRDS[1] & THIRDS[2], 0);
        assert_eq!(THIRDS[1], THIRDS[0] << 1);
        assert_eq!(THIRDS[2], THIRDS[0] << 2);
    }

    #[test]
    fn trits_round_trip() {
        for st in random_states(20) {
            let p = StatePlanes::from_trits(&st);
            assert_eq!(p.trits(), st);
            for i in 0..LIMB {
                assert_eq!(p.lo[i] & !MASK, 0);
                assert_eq!(p.hi[i] & !MASK, 0);
            }
        }
        assert_eq!(StatePlanes::ZERO.trits(), [0; STATE_LEN]);
    }

    #[test]
    fn every_kernel_matches_the_reference() {
        for k in kernels() {
            for st in random_states(300) {
                let mut want = st;
                transform(&mut want);
                let mut got = st;
                k.transform(&mut got);
                assert_eq!(got, want, "{k:?}");
            }
        }
    }

    #[test]
    fn repeated_transforms_match_the_reference() {
        for k in kernels() {
            for st in random_states(5) {
                let mut want = st;
                for _ in 0..7 {
                    transform(&mut want);
                }
                let mut got = st;
                k.transform_repeat(&mut got, 7);
                assert_eq!(got, want, "{k:?}");
            }
        }
    }

    #[test]
    fn absorb_matches_the_reference_sponge() {
        let trits: Vec<i8> = (0..HASH_LEN * 33)
            .map(|i| ((i * 7 + i / 5) % 3) as i8 - 1)
            .collect();
        for k in kernels() {
            let mut c = Curl::new();
            c.absorb(&trits).unwrap();
            let p = absorb(&trits, k);
            assert_eq!(p.trits(), *c.state(), "{k:?}");
        }
    }

    #[test]
    fn trailing_zeros_of_the_rate() {
        for st in random_states(50) {
            for zeros in [0usize, 1, 5, 26, 27, 28, 80, 81, 200, 243] {
                let mut s = st;
                s[HASH_LEN - zeros..HASH_LEN].fill(0);
                let p = StatePlanes::from_trits(&s);
                assert_eq!(
                    p.rate_trailing_zeros(),
                    crate::ternary::trinary::trailing_zeros(&s[..HASH_LEN]),
                    "{zeros}"
                );
            }
        }
    }
}
