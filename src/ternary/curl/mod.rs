//! Curl-P-81: the scalar reference ([`transform`], [`Curl`], [`hash`]) and the fast single-state
//! transform the host uses for mid-states and host checks ([`planes`]).
//!
//! - `reference.rs`: the permutation exactly as specified; the public [`transform`].
//! - `planes.rs`: the state as two 729-bit planes, one rotation and one bitwise S-box per round;
//!   `planes_avx512.rs` is its AVX-512 version.

pub(crate) mod planes;
#[cfg(target_arch = "x86_64")]
mod planes_avx512;
mod reference;

pub(crate) use planes::StatePlanes;
pub use planes::{fast_transform, PlanesKernel};
pub use reference::transform;

use crate::base::error::Error;
use crate::ternary::trinary::Trit;

/// Trits in the Curl state.
pub const STATE_LEN: usize = 729;
/// Trits absorbed or squeezed per block (also the hash length).
pub const HASH_LEN: usize = 243;
/// Rounds per transform.
pub const ROUNDS: usize = 81;

/// The round's index walk: `I[0] = 0`, `I[k+1] = I[k] + 364` if `I[k] < 365`, else `I[k] - 365`.
/// 730 entries; `I[729] = 0`.
pub(crate) const INDEX: [usize; STATE_LEN + 1] = {
    let mut t = [0usize; STATE_LEN + 1];
    let mut k = 0;
    while k < STATE_LEN {
        t[k + 1] = if t[k] < 365 { t[k] + 364 } else { t[k] - 365 };
        k += 1;
    }
    t
};

/// A Curl-P-81 sponge on the scalar reference [`transform`] (for many whole transactions,
/// [`hash_many`](crate::hash_many) is much faster).
///
/// ```
/// use curlpow::curl::Curl;
/// let mut curl = Curl::new();
/// curl.absorb(&[0i8; 243]).unwrap();
/// let mut hash = [1i8; 243];
/// curl.squeeze(&mut hash).unwrap();
/// assert_eq!(hash, [0i8; 243]); // the zero state is a fixed point
/// ```
#[derive(Clone)]
pub struct Curl {
    state: [Trit; STATE_LEN],
}

impl Default for Curl {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Curl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Curl").finish_non_exhaustive()
    }
}

impl Curl {
    /// A sponge with the all-zero state.
    pub fn new() -> Self {
        Curl {
            state: [0; STATE_LEN],
        }
    }

    /// Absorb trits: each 243-trit block overwrites the rate and is followed by a transform.
    /// The length must be a multiple of 243 and every value a trit.
    pub fn absorb(&mut self, trits: &[Trit]) -> Result<(), Error> {
        check_blocks(trits)?;
        for block in trits.chunks_exact(HASH_LEN) {
            self.state[..HASH_LEN].copy_from_slice(block);
            transform(&mut self.state);
        }
        Ok(())
    }

    /// Squeeze trits into `out` (a multiple of 243): each block is the rate, with a transform
    /// before every block after the first.
    pub fn squeeze(&mut self, out: &mut [Trit]) -> Result<(), Error> {
        if !out.len().is_multiple_of(HASH_LEN) {
            return Err(Error::TritLength {
                found: out.len(),
                expected: "a multiple of 243",
            });
        }
        for (i, block) in out.chunks_exact_mut(HASH_LEN).enumerate() {
            if i > 0 {
                transform(&mut self.state);
            }
            block.copy_from_slice(&self.state[..HASH_LEN]);
        }
        Ok(())
    }

    /// The whole state (for building a search's mid-state).
    pub fn state(&self) -> &[Trit; STATE_LEN] {
        &self.state
    }
}

/// The 243-trit Curl-P-81 hash of `trits` (a multiple of 243 trits).
///
/// ```
/// let h = curlpow::hash(&[0i8; 486]).unwrap();
/// assert_eq!(h.len(), 243);
/// ```
pub fn hash(trits: &[Trit]) -> Result<Vec<Trit>, Error> {
    let mut curl = Curl::new();
    curl.absorb(trits)?;
    let mut out = vec![0i8; HASH_LEN];
    curl.squeeze(&mut out)?;
    Ok(out)
}

pub(crate) fn check_blocks(trits: &[Trit]) -> Result<(), Error> {
    if !trits.len().is_multiple_of(HASH_LEN) {
        return Err(Error::TritLength {
            found: trits.len(),
            expected: "a multiple of 243",
        });
    }
    crate::ternary::trinary::check_trits(trits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_walk_is_a_permutation() {
        let mut seen = [false; STATE_LEN];
        for &i in &INDEX[..STATE_LEN] {
            assert!(!seen[i]);
            seen[i] = true;
        }
        assert_eq!(INDEX[STATE_LEN], 0);
        for (k, &i) in INDEX.iter().enumerate() {
            assert_eq!(i, (364 * k) % STATE_LEN);
        }
    }

    #[test]
    fn zero_is_a_fixed_point() {
        let mut s = [0i8; STATE_LEN];
        transform(&mut s);
        assert_eq!(s, [0i8; STATE_LEN]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(hash(&[0; 10]).is_err());
        let mut t = vec![0i8; 243];
        t[5] = 2;
        assert!(matches!(
            hash(&t),
            Err(Error::NotATrit { index: 5, value: 2 })
        ));
    }
}
