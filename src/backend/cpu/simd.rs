//! The vector primitives the SIMD kernels are written over: one trait, implemented once per
//! instruction set (`avx2.rs`, `avx512.rs`), and the bit-sliced trit they operate on.
//!
//! An implementing type is a zero-sized token that can only be made on a CPU with its
//! instructions (`Avx2::new()` returns `None` elsewhere), so the generic search loop
//! ([`kernel`](super::kernel), [`passes`](super::passes), [`sweep`](super::sweep)) is safe code
//! that takes a token.
//!
//! [`Simd::vectorize`] runs a closure inside a `#[target_feature]` function that is never
//! inlined: the code inside it, with the primitives and every helper (`#[inline(always)]`),
//! compiles to that instruction set's vector code, and the call is where one function ends.
//! The loop places those boundaries on purpose: one function per pass, per sweep, for the
//! search transform and for the search (`docs/cpu-kernel.md`, "Where the code is", measures
//! what they are worth). Each closure is `#[inline(always)]` too, so that its body is compiled
//! inside the vector function, never beside it.

use super::wavefront::Passes;

/// One trit of every lane, bit-sliced: bit `l` of `lo` and of `hi` is lane `l`'s trit (encoding
/// in [`crate::search::bitslice::encode`]). Aligned to a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Trit<V> {
    pub lo: V,
    pub hi: V,
}

/// An instruction set the generic kernel runs on. A value of the type proves the CPU has it.
pub(crate) trait Simd: Copy {
    /// One vector: one bit per lane.
    type V: Copy;
    /// A vector as 64-bit words, lane `l` = bit `l mod 64` of word `l / 64` (`[u64; WORDS]`).
    type Words: Copy + Default + AsRef<[u64]> + AsMut<[u64]>;
    /// Lanes per vector (nonces per transform).
    const LANES: usize;
    /// 64-bit words per vector (`LANES / 64`).
    const WORDS: usize = Self::LANES / 64;
    /// The whole 81-round transform (the test and batch hooks).
    const PLAN: Passes;
    /// A search's transform: `PLAN`'s passes but the last, then a partial tail.
    const SEARCH: Passes;

    /// Run `f` inside a function compiled for this instruction set.
    fn vectorize<R>(self, f: impl FnOnce() -> R) -> R;
    /// The 4-operation S-box: `low' = a.hi ^ (!b.lo & a.lo)`, `high' = a.lo ^ (b.hi & low')`.
    fn sbox(self, a: Trit<Self::V>, b: Trit<Self::V>) -> Trit<Self::V>;
    /// Every lane holds trit `t`.
    fn splat(self, t: i8) -> Trit<Self::V>;
    /// A trit from lane bit masks (`WORDS` words each; lane `l` = bit `l mod 64` of word
    /// `l / 64`).
    fn trit_from_words(self, lo: &[u64], hi: &[u64]) -> Trit<Self::V>;
    /// The lane bit masks of a vector.
    fn to_words(self, v: Self::V) -> Self::Words;
    /// All lanes set.
    fn ones(self) -> Self::V;
    /// `acc & !(t.lo ^ t.hi)`: the lanes of `acc` whose trit `t` is zero.
    fn zero_and(self, acc: Self::V, t: Trit<Self::V>) -> Self::V;
    /// The lowest set lane of `acc`.
    fn first_lane(self, acc: Self::V) -> Option<usize>;
}
