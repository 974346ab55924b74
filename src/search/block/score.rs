//! The PoW score of a message: the Curl-P-81 hash of one 243-trit block built from the message
//! (its BLAKE2b-256 digest without the nonce, then the nonce), its trailing zero trits, and
//! `3^zeros ÷ length`.

use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};

use super::{b1t6, BlockError, DIGEST_TRITS, NONCE_BYTES};
use crate::ternary::curl::{HASH_LEN, STATE_LEN};
use crate::ternary::trinary::Trit;

type Blake2b256 = Blake2b<U32>;

/// The BLAKE2b-256 digest of `bytes`.
pub(crate) fn blake2b_256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0; 32];
    out.copy_from_slice(&Blake2b256::digest(bytes));
    out
}

/// The bytes before the nonce, or why there are none.
pub(crate) fn split(message: &[u8]) -> Result<(&[u8], [u8; NONCE_BYTES]), BlockError> {
    let len = message.len();
    let at = len
        .checked_sub(NONCE_BYTES)
        .ok_or(BlockError::TooShort { len })?;
    let (head, tail) = message.split_at(at);
    Ok((head, tail.try_into().expect("8 bytes")))
}

/// The 729-trit state the PoW transforms: the digest's trits, the nonce's, three zero trits,
/// then the zero capacity.
pub(crate) fn pow_state(digest: &[u8; 32], nonce: u64) -> [Trit; STATE_LEN] {
    let mut s = [0; STATE_LEN];
    b1t6::encode_into(digest, &mut s[..DIGEST_TRITS]);
    b1t6::encode_into(
        &nonce.to_le_bytes(),
        &mut s[DIGEST_TRITS..DIGEST_TRITS + NONCE_BYTES * b1t6::TRITS_PER_BYTE],
    );
    s
}

/// The 243-trit PoW hash of a message (its last 8 bytes are the nonce, little-endian).
///
/// ```
/// let h = curlpow::block::pow_hash(&[0u8; 8]).unwrap();
/// assert_eq!(curlpow::trits::trailing_zeros(&h), 1);
/// ```
pub fn pow_hash(message: &[u8]) -> Result<[Trit; HASH_LEN], BlockError> {
    let (head, nonce) = split(message)?;
    let mut s = pow_state(&blake2b_256(head), u64::from_le_bytes(nonce));
    crate::ternary::curl::fast_transform(&mut s);
    Ok(s[..HASH_LEN].try_into().expect("243 trits"))
}

/// The trailing zero trits of a message's PoW hash.
///
/// ```
/// assert_eq!(curlpow::block::pow_zeros(&[203, 124, 2, 0, 0, 0, 0, 0]), Ok(10));
/// assert!(curlpow::block::pow_zeros(&[1, 2, 3]).is_err()); // no room for a nonce
/// ```
pub fn pow_zeros(message: &[u8]) -> Result<usize, BlockError> {
    pow_hash(message).map(|h| crate::ternary::trinary::trailing_zeros(&h))
}

/// `3^zeros` as the nearest `f64` (exact up to 3^33; the nearest value above, as the peers
/// compute it from an integer power).
pub fn pow3(zeros: usize) -> f64 {
    if zeros <= 80 {
        3u128.pow(zeros as u32) as f64
    } else {
        3u128.pow(80) as f64 * 3f64.powi(zeros as i32 - 80)
    }
}

/// The score of `zeros` trailing zero trits on a message of `len` bytes: `3^zeros ÷ len`.
pub fn score_of(zeros: usize, len: usize) -> f64 {
    pow3(zeros) / len as f64
}

/// A message's PoW score: `3^(trailing zero trits of its PoW hash) ÷ its length in bytes`. A
/// message is valid when its score reaches the network's minimum (4,000 on Chrysalis mainnet,
/// 1,500 on Stardust networks). A message shorter than its 8-byte nonce scores 0: it can carry
/// no PoW ([`pow_zeros`] says why).
///
/// ```
/// // The example of the Chrysalis "Message PoW" RFC (TIP-12): "Hello, World!" and its nonce.
/// let mut msg = b"Hello, World!".to_vec();
/// msg.extend_from_slice(&0xaaaa_aaaa_aaaa_e65e_u64.to_le_bytes());
/// assert_eq!(curlpow::block::score(&msg), 937.2857142857143);
/// ```
pub fn score(message: &[u8]) -> f64 {
    pow_zeros(message).map_or(0.0, |z| score_of(z, message.len()))
}

/// The fewest trailing zero trits whose score reaches `target` on a message of `len` bytes (its
/// nonce included): the smallest `z` with `3^z ÷ len ≥ target`. An error when `len` leaves no
/// room for the nonce, the target is not a finite number ≥ 0, or no hash can reach it (more
/// than 243 zeros).
///
/// ```
/// use curlpow::block::zeros_needed;
/// assert_eq!(zeros_needed(4000.0, 300), Ok(13)); // 3^13 / 300 ≈ 5314
/// assert_eq!(zeros_needed(0.0, 300), Ok(0));
/// assert!(zeros_needed(1e200, 300).is_err());
/// ```
pub fn zeros_needed(target: f64, len: usize) -> Result<usize, BlockError> {
    if len < NONCE_BYTES {
        return Err(BlockError::TooShort { len });
    }
    if !target.is_finite() || target < 0.0 {
        return Err(BlockError::InvalidScore(target));
    }
    (0..=HASH_LEN)
        .find(|&z| score_of(z, len) >= target)
        .ok_or(BlockError::Unreachable { target, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scores of TIP-12's example and of the Go reference's tests (Wollac/iota-crypto-demo,
    /// `pkg/pow/pow_test.go`), as bee-pow and iota-pow test them.
    #[test]
    fn published_scores() {
        let hello = [
            0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x2c, 0x20, 0x57, 0x6f, 0x72, 0x6c, 0x64, 0x21, 0x5e,
            0xe6, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
        ];
        assert_eq!(score(&hello), 937.2857142857143);
        assert_eq!(pow_zeros(&hello), Ok(9));
        assert_eq!(score(&[0; 8]), 3.0 / 8.0);
        assert_eq!(score(&[203, 124, 2, 0, 0, 0, 0, 0]), 3f64.powi(10) / 8.0);
        assert_eq!(
            score(&[65, 235, 119, 85, 85, 85, 85, 85]),
            3f64.powi(14) / 8.0
        );
        assert_eq!(score(&[0; 10000]), 1.0 / 10000.0);
    }

    #[test]
    fn the_hash_is_the_reference_transform_of_the_block() {
        let msg: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8).collect();
        let (head, nonce) = split(&msg).unwrap();
        let mut s = pow_state(&blake2b_256(head), u64::from_le_bytes(nonce));
        assert_eq!(s[240..], [0; STATE_LEN - 240]);
        crate::ternary::curl::transform(&mut s);
        assert_eq!(pow_hash(&msg).unwrap()[..], s[..HASH_LEN]);
    }

    #[test]
    fn zeros_needed_is_the_least_that_reaches_the_target() {
        for len in [8usize, 9, 21, 300, 1000, 32768] {
            for target in [0.0, 0.5, 1.0, 1500.0, 4000.0, 3f64.powi(13) / 300.0, 1e30] {
                let z = zeros_needed(target, len).unwrap();
                assert!(score_of(z, len) >= target);
                assert!(z == 0 || score_of(z - 1, len) < target, "{target} {len}");
            }
        }
        assert_eq!(zeros_needed(1.0, 7), Err(BlockError::TooShort { len: 7 }));
        assert!(matches!(
            zeros_needed(f64::NAN, 8),
            Err(BlockError::InvalidScore(_))
        ));
        assert!(zeros_needed(-1.0, 8).is_err());
        assert!(zeros_needed(f64::INFINITY, 8).is_err());
        assert_eq!(zeros_needed(pow3(243) / 8.0, 8), Ok(243));
        assert!(zeros_needed(pow3(243) / 4.0, 8).is_err());
    }

    #[test]
    fn short_messages_score_zero_and_say_why() {
        assert_eq!(score(&[]), 0.0);
        assert_eq!(score(&[1; 7]), 0.0);
        assert_eq!(pow_zeros(&[1; 7]), Err(BlockError::TooShort { len: 7 }));
    }
}
