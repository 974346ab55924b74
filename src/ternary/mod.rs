//! Ternary arithmetic and the Curl-P-81 sponge: balanced trits and trytes, the 2673-tryte
//! transaction and its fields, the scalar reference transform every fast path is tested
//! against, and the bit-plane (`planes`) single-state transform the host uses to check nonces, and the deterministic trit stream (`xorshift`) of
//! the bench transaction.
//!
//! It may import only `base`.

pub(crate) mod curl;
pub(crate) mod transaction;
pub(crate) mod trinary;
pub(crate) mod xorshift;
