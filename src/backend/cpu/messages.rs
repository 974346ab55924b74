//! The messages of a batch-hashing pass, as trits or as tryte characters, and how each kind is
//! loaded into the kernels' lane words: one pass ([`absorb_lanes`](super::hooks)) for both.

use super::transpose::{rows_to_words, WINDOW};
use super::tryte_words::{block_words, BLOCK_TRYTES};
use crate::ternary::curl::HASH_LEN;

/// Equal-length messages of a pass: trits (one `i8` a trit) or tryte characters (`9A-Z`, three
/// trits each). Either way a whole number of 243-trit blocks of valid digits.
#[derive(Clone, Copy)]
pub(crate) enum Messages<'a> {
    /// Rows of trits.
    Trits(&'a [&'a [i8]]),
    /// Rows of tryte characters.
    Trytes(&'a [&'a [u8]]),
}

impl<'a> Messages<'a> {
    /// How many messages.
    pub(crate) fn len(self) -> usize {
        match self {
            Messages::Trits(m) => m.len(),
            Messages::Trytes(m) => m.len(),
        }
    }

    /// Trits in message `i`.
    pub(crate) fn trits(self, i: usize) -> usize {
        match self {
            Messages::Trits(m) => m[i].len(),
            Messages::Trytes(m) => 3 * m[i].len(),
        }
    }

    /// Messages `range`.
    pub(crate) fn slice(self, range: std::ops::Range<usize>) -> Messages<'a> {
        match self {
            Messages::Trits(m) => Messages::Trits(&m[range]),
            Messages::Trytes(m) => Messages::Trytes(&m[range]),
        }
    }

    /// `f` on the messages at `indices`, in that order.
    pub(crate) fn picked<R>(self, indices: &[usize], f: impl FnOnce(Messages<'_>) -> R) -> R {
        match self {
            Messages::Trits(m) => f(Messages::Trits(
                &indices.iter().map(|&i| m[i]).collect::<Vec<_>>(),
            )),
            Messages::Trytes(m) => f(Messages::Trytes(
                &indices.iter().map(|&i| m[i]).collect::<Vec<_>>(),
            )),
        }
    }

    /// Trits loaded into lane words at a time: 33 blocks of trit rows (their transposes are
    /// 64 trits wide), one block of trytes (decoded where it is used, in the first-level cache).
    pub(crate) fn window(self) -> usize {
        match self {
            Messages::Trits(_) => WINDOW,
            Messages::Trytes(_) => HASH_LEN,
        }
    }

    /// Lane words of trits `start..start + lo.len()` of every message (`start` and the length
    /// whole blocks for trytes): `lo[x][w]` bit `k` is the low half of trit `start + x` of
    /// message `64·w + k`; lanes without a message hold zero trits.
    pub(crate) fn load<A: AsMut<[u64]>>(self, start: usize, lo: &mut [A], hi: &mut [A]) {
        match self {
            Messages::Trits(m) => rows_to_words(m, start, lo, hi),
            Messages::Trytes(m) => {
                debug_assert!(start.is_multiple_of(HASH_LEN) && lo.len().is_multiple_of(HASH_LEN));
                for (b, (l, h)) in lo
                    .chunks_exact_mut(HASH_LEN)
                    .zip(hi.chunks_exact_mut(HASH_LEN))
                    .enumerate()
                {
                    block_words(m, start / HASH_LEN + b, l, h);
                }
            }
        }
    }

    /// Trits `243·block ..` (one block) of message `i`.
    pub(crate) fn block(self, i: usize, block: usize, out: &mut [i8; HASH_LEN]) {
        match self {
            Messages::Trits(m) => out.copy_from_slice(&m[i][HASH_LEN * block..][..HASH_LEN]),
            Messages::Trytes(m) => {
                super::tryte_words::block_trits(&m[i][BLOCK_TRYTES * block..][..BLOCK_TRYTES], out)
            }
        }
    }
}
