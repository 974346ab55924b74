//! The Chrysalis and Stardust PoW: the Curl-P-81 nonce search for binary messages (Chrysalis)
//! and blocks (Stardust), which share one rule (TIP-12, the Chrysalis RFC "Message PoW").
//!
//! A message ends in an 8-byte nonce. Its PoW hash is Curl-P-81, from the zero state, of one
//! 243-trit block: the BLAKE2b-256 digest of the bytes before the nonce in [`b1t6`] (192
//! trits), the nonce's 8 little-endian bytes in `b1t6` (48 trits), and three zero trits. Its
//! [`score`](fn@score) is `3^(trailing zero trits of the hash) ÷ the message's length in bytes`; a
//! message is valid when the score reaches the network's minimum (4,000 on Chrysalis mainnet,
//! 1,500 on Stardust networks).
//!
//! The search is [`Engine::block_pow`](crate::Engine::block_pow): each candidate nonce costs
//! one transform, run on the same bit-sliced kernels as a transaction search ([`BlockJob`]
//! has the nonce layout).
//!
//! ```
//! use curlpow::{block, Backend, Engine};
//! let engine = Engine::builder().backends(&[Backend::Cpu]).build()?;
//! let mut msg = b"a Stardust block".to_vec();
//! msg.extend_from_slice(&[0; 8]);                    // the nonce, to be set
//! let done = engine.block_pow(&msg, 100.0)?;
//! assert!(block::score(&done.message) >= 100.0);     // checked on the host already
//! assert_eq!(done.message[..16], msg[..16]);
//! # Ok::<(), curlpow::Error>(())
//! ```

pub mod b1t6;
pub(crate) mod block_job;
mod score;

pub use crate::base::error::BlockError;
pub use block_job::BlockJob;
pub(crate) use block_job::{counter_trits, lane_trits, COUNTERS, COUNTER_TRITS, LANE_TRITS};
pub use score::{pow3, pow_hash, pow_zeros, score, score_of, zeros_needed};

/// Bytes of the nonce at the end of a message.
pub const NONCE_BYTES: usize = 8;
/// Trits of the digest at the start of the PoW block (32 bytes in `b1t6`).
pub const DIGEST_TRITS: usize = 32 * b1t6::TRITS_PER_BYTE;
