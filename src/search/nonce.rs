//! The nonce layout every backend fills, and what a device returns: a [`Hit`] (counter and
//! lane) or the raw nonce trits ([`Found`]), searched over a [`CounterRange`].
//!
//! The nonce is trits 162..243 of the last 243-trit block (transaction trits 7938..8019).
//! Every backend fills it the same way, so a hit is fully described by a [`Hit`]:
//!
//! | block trits | what |
//! |---|---|
//! | 162..168 | the lane number `l` (0..729) as balanced ternary of `l - 364` |
//! | 168..210 | the 64-bit *counter* `n` as balanced ternary (42 trits) |
//! | 210..243 | zero |
//!
//! One transform of a `W`-lane kernel tries lanes `0..W` for one counter. A backend is given a
//! [`CounterRange`] and gives each worker, work-item and launch its own counters out of it, so
//! ranges are disjoint by construction; different devices get disjoint ranges too. A hit decodes
//! to its nonce without reading device memory: [`nonce_trits`].

use crate::ternary::curl::HASH_LEN;
use crate::ternary::transaction::TRANSACTION_TRITS;
use crate::ternary::trinary::{self, Trit};

/// Where the nonce starts within the last block.
pub(crate) const NONCE_OFFSET: usize = 162;
/// Lane-number trits within the last block.
pub const LANE_TRITS: std::ops::Range<usize> = 162..168;
/// Counter trits within the last block.
pub const COUNTER_TRITS: std::ops::Range<usize> = 168..210;
/// The most lanes one transform may carry (3^6).
pub(crate) const MAX_LANES: usize = 729;
/// Offset of the last block in the transaction.
pub const LAST_BLOCK: usize = TRANSACTION_TRITS - HASH_LEN;

/// The lane-number trits of lane `lane` (< 729).
pub(crate) fn lane_trits(lane: usize) -> [Trit; 6] {
    debug_assert!(lane < MAX_LANES);
    let mut t = [0; 6];
    let ok = trinary::write_balanced(lane as i128 - 364, &mut t);
    debug_assert!(ok);
    t
}

/// The counter trits of counter `n`.
pub(crate) fn counter_trits(n: u64) -> [Trit; 42] {
    let mut t = [0; 42];
    let ok = trinary::write_balanced(n as i128, &mut t);
    debug_assert!(ok);
    t
}

/// Trits in a nonce.
pub const NONCE_TRITS: usize = HASH_LEN - NONCE_OFFSET;

/// The 81 nonce trits of lane `lane` at counter `n`.
pub(crate) fn nonce_trits(lane: usize, n: u64) -> [Trit; NONCE_TRITS] {
    let mut t = [0; NONCE_TRITS];
    t[..6].copy_from_slice(&lane_trits(lane));
    t[6..48].copy_from_slice(&counter_trits(n));
    t
}

/// The hit whose nonce these trits are, if they follow the layout (a lane, a counter, zeros):
/// the inverse of [`nonce_trits`].
#[cfg(any(test, feature = "broker"))]
pub(crate) fn hit_of_nonce(nonce: &[Trit; NONCE_TRITS]) -> Option<Hit> {
    if nonce[48..].iter().any(|&t| t != 0) || nonce.iter().any(|t| !(-1..=1).contains(t)) {
        return None;
    }
    let lane = trinary::read_balanced(&nonce[..6]) + 364;
    let counter = trinary::read_balanced(&nonce[6..48]);
    let hit = Hit {
        lane: usize::try_from(lane).ok().filter(|&l| l < MAX_LANES)?,
        counter: u64::try_from(counter).ok()?,
    };
    (nonce_trits(hit.lane, hit.counter) == *nonce).then_some(hit)
}

/// A solution found by a kernel: the counter and the lane that hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The counter of the transform that hit.
    pub counter: u64,
    /// The (lowest) lane that hit.
    pub lane: usize,
}

/// A half-open range of counters, `start..start + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterRange {
    /// First counter.
    pub start: u64,
    /// Number of counters.
    pub len: u64,
}

impl CounterRange {
    /// Every counter.
    pub const ALL: CounterRange = CounterRange {
        start: 0,
        len: u64::MAX,
    };

    /// Split into `parts` disjoint equal sub-ranges; part `i` of them.
    pub fn part(self, i: usize, parts: usize) -> CounterRange {
        let size = self.len / parts as u64;
        CounterRange {
            start: self.start + size * i as u64,
            len: size,
        }
    }
}

/// What a device found: a hit in the crate's nonce layout (every built-in backend), or nonce
/// trits of its own (a remote worker, which may fill the nonce any way it likes). Either is
/// checked on the host ([`SearchJob::verify_found`](crate::search::search_job::SearchJob::verify_found)) before it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A counter and a lane (see the nonce layout above).
    Hit(Hit),
    /// The 81 nonce trits (the last 81 of the transaction).
    Nonce([Trit; NONCE_TRITS]),
}
