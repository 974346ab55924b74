//! [`BlockJob`]: one block PoW search, prepared once, and the host check of what a device
//! found.
//!
//! # Nonce layout
//! A search tries nonces whose bytes carry the lane and the counter, so every candidate is a
//! real `u64` nonce and a hit decodes to it without reading device memory:
//!
//! | nonce bytes (little-endian) | block trits (`b1t6`) | what |
//! |---|---|---|
//! | 0..2 | 192..204 | the lane number `l` (`0..65536`) |
//! | 2..8 | 204..240 | the 48-bit counter `n` |
//!
//! so the nonce is `n << 16 | l` ([`nonce_of`]). One transform of a `W`-lane kernel tries
//! lanes `0..W` for one counter; counters are handed out as for a transaction search
//! ([`CounterRange`]), out of [`COUNTERS`].

use super::{b1t6, score, BlockError, DIGEST_TRITS, NONCE_BYTES};
use crate::search::nonce::{CounterRange, Hit};
use crate::ternary::curl::STATE_LEN;
use crate::ternary::trinary::Trit;

/// Nonce bytes that hold the lane number.
pub(crate) const LANE_BYTES: usize = 2;
/// Block trits of the lane number.
pub const LANE_TRITS: std::ops::Range<usize> =
    DIGEST_TRITS..DIGEST_TRITS + LANE_BYTES * b1t6::TRITS_PER_BYTE;
/// Block trits of the counter.
pub const COUNTER_TRITS: std::ops::Range<usize> =
    LANE_TRITS.end..DIGEST_TRITS + NONCE_BYTES * b1t6::TRITS_PER_BYTE;
/// The most lanes one transform may carry (`2^16`).
pub(crate) const MAX_LANES: usize = 1 << (8 * LANE_BYTES);
/// Every counter of a block search: `0..2^48`.
pub const COUNTERS: CounterRange = CounterRange {
    start: 0,
    len: 1 << (64 - 8 * LANE_BYTES),
};

/// The nonce of lane `lane` (< 65536) at counter `n` (< 2^48): `n << 16 | lane`.
pub fn nonce_of(hit: Hit) -> Option<u64> {
    (hit.lane < MAX_LANES && hit.counter < COUNTERS.len)
        .then_some((hit.counter << (8 * LANE_BYTES)) | hit.lane as u64)
}

/// The lane-number trits of lane `lane` (< 65536): its two low bytes in `b1t6`.
pub(crate) fn lane_trits(lane: usize) -> [Trit; 12] {
    debug_assert!(lane < MAX_LANES);
    let mut t = [0; 12];
    b1t6::encode_into(&(lane as u16).to_le_bytes(), &mut t);
    t
}

/// The counter trits of counter `n`: its six low bytes in `b1t6` (bits above 48 dropped).
pub(crate) fn counter_trits(n: u64) -> [Trit; 36] {
    let mut t = [0; 36];
    b1t6::encode_into(&n.to_le_bytes()[..6], &mut t);
    t
}

/// One block PoW search, prepared once: the bytes before the nonce, the target, the zeros it
/// needs, and the state the kernels transform (the digest's trits, lane and counter trits
/// zero).
#[derive(Clone)]
pub struct BlockJob {
    head: Vec<u8>,
    target: f64,
    zeros: usize,
    state: [Trit; STATE_LEN],
}

impl std::fmt::Debug for BlockJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockJob")
            .field("len", &self.len())
            .field("target", &self.target)
            .field("zeros", &self.zeros)
            .finish_non_exhaustive()
    }
}

impl BlockJob {
    /// A search for `message` (its last 8 bytes are the nonce, whose value is ignored) to reach
    /// `target` ([`zeros_needed`](super::zeros_needed)'s errors).
    pub fn new(message: &[u8], target: f64) -> Result<BlockJob, BlockError> {
        let (head, _) = score::split(message)?;
        Self::without_nonce(head, target)
    }

    /// A search for the bytes before the nonce (the message is these and 8 nonce bytes).
    pub fn without_nonce(head: &[u8], target: f64) -> Result<BlockJob, BlockError> {
        let len = head
            .len()
            .checked_add(NONCE_BYTES)
            .ok_or(BlockError::TooShort { len: 0 })?;
        let zeros = super::zeros_needed(target, len)?;
        Ok(BlockJob {
            head: head.to_vec(),
            target,
            zeros,
            state: score::pow_state(&score::blake2b_256(head), 0),
        })
    }

    /// The message's length in bytes, nonce included.
    pub fn len(&self) -> usize {
        self.head.len() + NONCE_BYTES
    }

    /// Never: a message holds at least its nonce.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The target score.
    pub fn target(&self) -> f64 {
        self.target
    }

    /// Trailing zero trits a hash needs to reach the target.
    pub fn zeros(&self) -> usize {
        self.zeros
    }

    /// The state to transform, with the nonce's trits zero (the nonce 0).
    pub fn state(&self) -> &[Trit; STATE_LEN] {
        &self.state
    }

    /// The message with this nonce.
    pub fn message(&self, nonce: u64) -> Vec<u8> {
        let mut m = Vec::with_capacity(self.len());
        m.extend_from_slice(&self.head);
        m.extend_from_slice(&nonce.to_le_bytes());
        m
    }

    /// The host check: the nonce of this hit, if the message with it really reaches the
    /// target. The message is scored from its bytes ([`score`](fn@super::score): BLAKE2b-256 and
    /// a Curl-P-81 transform on the host), nothing read back from a device.
    pub fn verify(&self, hit: Hit) -> Option<u64> {
        let nonce = nonce_of(hit)?;
        self.verify_nonce(nonce).then_some(nonce)
    }

    /// Whether the message with `nonce` reaches the target (scored from its bytes).
    pub fn verify_nonce(&self, nonce: u64) -> bool {
        super::score(&self.message(nonce)) >= self.target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_the_nonce_in_b1t6() {
        for (lane, counter) in [
            (0usize, 0u64),
            (511, 77),
            (65535, (1 << 48) - 1),
            (300, 1 << 40),
        ] {
            let nonce = nonce_of(Hit { counter, lane }).unwrap();
            let want = b1t6::encode(&nonce.to_le_bytes());
            let mut got = lane_trits(lane).to_vec();
            got.extend_from_slice(&counter_trits(counter));
            assert_eq!(got, want);
        }
        assert_eq!(
            nonce_of(Hit {
                counter: 1 << 48,
                lane: 0
            }),
            None
        );
        assert_eq!(
            nonce_of(Hit {
                counter: 0,
                lane: 65536
            }),
            None
        );
        assert_eq!(COUNTER_TRITS, 204..240);
    }

    #[test]
    fn the_state_is_the_scored_block() {
        let msg: Vec<u8> = (0..100u8).collect();
        let job = BlockJob::new(&msg, 1.0).unwrap();
        let nonce = 0x0123_4567_89ab_cdef_u64;
        let mut s = *job.state();
        s[LANE_TRITS.start..COUNTER_TRITS.end].copy_from_slice(&b1t6::encode(&nonce.to_le_bytes()));
        crate::ternary::curl::transform(&mut s);
        let m = job.message(nonce);
        assert_eq!(m.len(), 100);
        assert_eq!(s[..243], super::super::pow_hash(&m).unwrap());
    }
}
