//! dcurl's remote-PoW message format, parsed and written with typed errors.
//!
//! A **request** is the 2673 transaction trytes followed at once by the minimum weight
//! magnitude in decimal ASCII: `…NONCE14` (2675 bytes) for MWM 14. dcurl's client sends it
//! with `content_type text/plain`, persistent, and `reply_to` set to its callback queue.
//!
//! A **reply** is exactly the 2673 trytes with the nonce set. An **error reply** (curlpow's
//! addition, for a request it rejects) is marked with the message property `type` =
//! [`ERROR_TYPE`] and the header [`HEADER_ERROR`] holding the reason; its body is the reason
//! too, padded with spaces to 2673 bytes, because dcurl's client copies 2673 bytes of whatever
//! body it gets: padded, it never reads past the body, and what it hands its caller is plainly
//! not trytes (every node rejects it) instead of a transaction without PoW.

use crate::base::error::TryteError;
use crate::search::search_job::Mwm;
use crate::ternary::transaction::{Transaction, TRANSACTION_TRYTES};

/// The most MWM digits a request carries (243 has three).
const MAX_MWM_DIGITS: usize = 3;

/// The message property `type` of an error reply.
pub const ERROR_TYPE: &str = "curlpow.error";

/// The reply header that says why a request was rejected (error replies only).
pub const HEADER_ERROR: &str = "x-curlpow-error";

/// The reply header with the number of nonces the worker tried (curlpow workers only).
pub const HEADER_NONCES: &str = "x-curlpow-nonces";

/// The reply header naming the worker that answered (curlpow workers only).
pub const HEADER_WORKER: &str = "x-curlpow-worker";

/// The reply header that says the broker had delivered the request before (to a worker that
/// died or lost its connection): the client may see two replies for it.
pub const HEADER_REDELIVERED: &str = "x-curlpow-redelivered";

/// What is wrong with a request or a reply body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The body is not 2673 trytes followed by 1 to 3 MWM digits.
    #[error(
        "request of {found} bytes: expected 2673 trytes followed by the MWM in 1 to 3 decimal digits (2674..=2676 bytes)"
    )]
    RequestLength {
        /// Bytes found.
        found: usize,
    },
    /// A reply body that is not exactly 2673 bytes.
    #[error("reply of {found} bytes: expected exactly 2673 trytes")]
    ReplyLength {
        /// Bytes found.
        found: usize,
    },
    /// A byte of the transaction that is not a tryte.
    #[error("transaction trytes: {0}")]
    Trytes(#[from] TryteError),
    /// The MWM after the trytes is not a decimal number.
    #[error("MWM {found:?} after the trytes is not a decimal number")]
    MwmNotDecimal {
        /// The bytes after the trytes, lossily decoded.
        found: String,
    },
    /// An MWM no hash can reach.
    #[error("MWM {0} is out of range (0..=243)")]
    MwmOutOfRange(usize),
    /// An MWM over the worker's limit.
    #[error("MWM {mwm} is over this worker's limit of {max}")]
    MwmOverMax {
        /// The MWM asked for.
        mwm: usize,
        /// The worker's `--max-mwm`.
        max: usize,
    },
    /// A `reply_to` that RabbitMQ would answer by closing the connection: a direct reply-to
    /// name (`amq.rabbitmq.reply-to.…`) that no broker issued.
    #[error("reply_to {preview:?} is not a direct reply-to name the broker issued ({why})")]
    ReplyTo {
        /// The name's first bytes.
        preview: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// A parsed PoW request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The transaction (its nonce is overwritten by the PoW).
    pub transaction: Transaction,
    /// The minimum weight magnitude.
    pub mwm: usize,
}

/// The first non-tryte byte of `bytes`, as a [`TryteError`] with its 1-based column.
fn check_trytes(bytes: &[u8]) -> Result<(), TryteError> {
    match crate::ternary::trinary::first_non_tryte(bytes) {
        None => Ok(()),
        Some(i) => Err(TryteError::BadChar {
            column: i + 1,
            found: char::from(bytes[i]),
        }),
    }
}

/// Parse a request body: 2673 trytes, then the MWM in decimal, nothing else. `max_mwm` is the
/// highest MWM accepted (at most 243).
///
/// ```
/// use curlpow::broker::protocol::{format_request, parse_request, ProtocolError};
/// let tx: curlpow::Transaction = "9".repeat(2673).parse().unwrap();
/// let body = format_request(&tx, 14);
/// assert_eq!(body.len(), 2675);
/// assert_eq!(parse_request(&body, 14).unwrap().mwm, 14);
/// assert_eq!(parse_request(&body, 9), Err(ProtocolError::MwmOverMax { mwm: 14, max: 9 }));
/// assert!(matches!(parse_request(b"ABC14", 14), Err(ProtocolError::RequestLength { found: 5 })));
/// ```
pub fn parse_request(body: &[u8], max_mwm: usize) -> Result<Request, ProtocolError> {
    let n = body.len();
    if !(TRANSACTION_TRYTES + 1..=TRANSACTION_TRYTES + MAX_MWM_DIGITS).contains(&n) {
        return Err(ProtocolError::RequestLength { found: n });
    }
    let (trytes, digits) = body.split_at(TRANSACTION_TRYTES);
    check_trytes(trytes)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return Err(ProtocolError::MwmNotDecimal {
            found: String::from_utf8_lossy(digits).into_owned(),
        });
    }
    let mwm = digits
        .iter()
        .fold(0usize, |acc, d| acc * 10 + usize::from(d - b'0'));
    if mwm > Mwm::MAX.zeros() {
        return Err(ProtocolError::MwmOutOfRange(mwm));
    }
    if mwm > max_mwm {
        return Err(ProtocolError::MwmOverMax { mwm, max: max_mwm });
    }
    let text = std::str::from_utf8(trytes).expect("trytes are ASCII");
    let transaction = transaction_of(text)?;
    Ok(Request { transaction, mwm })
}

/// RabbitMQ's direct reply-to pseudo-queue; a requester's `reply_to` is this, a `.`, then the
/// name the broker issued for its channel.
pub const DIRECT_REPLY_TO: &str = "amq.rabbitmq.reply-to";

/// Check that a reply can be published to `reply_to` without the broker closing the
/// connection. A plain queue name always can (a reply to a queue that does not exist comes back
/// unroutable). A direct reply-to name must have the shape RabbitMQ gives it,
/// `amq.rabbitmq.reply-to.<PID>.<KEY>` with `<PID>` the base64 of an Erlang pid in external
/// term format (its node an atom, or an integer hash in the newer form) and `<KEY>` not empty:
/// RabbitMQ decodes `<PID>` when it routes the reply, and one that does not decode crashes the
/// publishing channel and closes the connection (541 INTERNAL_ERROR).
///
/// ```
/// use curlpow::broker::protocol::check_reply_to;
/// assert!(check_reply_to("amq.gen-JzTY20BRgKO-HjmUJj0wLg").is_ok());
/// assert!(check_reply_to("amq.rabbitmq.reply-to.junk").is_err());
/// // A name RabbitMQ 3.10 issued (pid `rabbit@host`, NEW_PID_EXT).
/// assert!(check_reply_to(
///     "amq.rabbitmq.reply-to.g1h3C3JhYmJpdEBob3N0AAAB2gAAAAAAAAAA.k0NdcmQ8+Bg3XoYQ2ZfJ+A=="
/// ).is_ok());
/// ```
pub fn check_reply_to(reply_to: &str) -> Result<(), ProtocolError> {
    let Some(rest) = reply_to.strip_prefix(DIRECT_REPLY_TO) else {
        return Ok(());
    };
    let bad = |why| {
        let mut end = reply_to.len().min(64);
        while !reply_to.is_char_boundary(end) {
            end -= 1;
        }
        Err(ProtocolError::ReplyTo {
            preview: reply_to[..end].to_string(),
            why,
        })
    };
    if rest.is_empty() {
        return bad("the pseudo-queue itself, not a requester's name");
    }
    let Some(rest) = rest.strip_prefix('.') else {
        // `amq.rabbitmq.reply-toX`: an ordinary (if odd) queue name.
        return Ok(());
    };
    let Some((pid, key)) = rest.split_once('.') else {
        return bad("no key after the pid");
    };
    if key.is_empty() {
        return bad("an empty key");
    }
    let Some(term) = base64_decode(pid.as_bytes()) else {
        return bad("the pid is not base64");
    };
    if erlang_pid(&term) {
        Ok(())
    } else {
        bad("the pid is not an Erlang pid")
    }
}

/// Standard base64 with padding, as Erlang's `base64:encode`; `None` for anything else.
fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (i, chunk) in s.chunks(4).enumerate() {
        let last = i == s.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = n << 6 | val(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// Whether `t` is exactly one Erlang pid in external term format: version 131, then PID_EXT
/// (103) or NEW_PID_EXT (88), a node (an atom, or a small or 32-bit integer), then id, serial
/// and creation.
fn erlang_pid(t: &[u8]) -> bool {
    let [131, tag, rest @ ..] = t else {
        return false;
    };
    let creation = match tag {
        103 => 1,
        88 => 4,
        _ => return false,
    };
    let node_len = match rest {
        [100 | 118, hi, lo, ..] => 3 + (usize::from(*hi) << 8 | usize::from(*lo)),
        [115 | 119, n, ..] => 2 + usize::from(*n),
        [97, ..] => 2,
        [98, ..] => 5,
        _ => return false,
    };
    rest.len() == node_len + 4 + 4 + creation
}

/// A request body, as dcurl's client writes it: the trytes, then the MWM in decimal.
pub fn format_request(tx: &Transaction, mwm: usize) -> Vec<u8> {
    let mut body = tx.to_trytes().into_bytes();
    body.extend_from_slice(mwm.to_string().as_bytes());
    body
}

/// A reply body: exactly the 2673 trytes.
pub fn format_reply(tx: &Transaction) -> Vec<u8> {
    tx.to_trytes().into_bytes()
}

/// Parse a reply body: exactly 2673 trytes.
pub fn parse_reply(body: &[u8]) -> Result<Transaction, ProtocolError> {
    if body.len() != TRANSACTION_TRYTES {
        return Err(ProtocolError::ReplyLength { found: body.len() });
    }
    check_trytes(body)?;
    transaction_of(std::str::from_utf8(body).expect("trytes are ASCII"))
}

/// 2673 checked trytes as a transaction.
fn transaction_of(trytes: &str) -> Result<Transaction, ProtocolError> {
    Transaction::from_trytes(trytes).map_err(|e| match e {
        crate::base::error::Error::Tryte(t) => ProtocolError::Trytes(t),
        _ => ProtocolError::Trytes(TryteError::Length {
            found: trytes.len(),
            expected: "2673",
        }),
    })
}

/// An error reply's body: `reason`, padded with spaces to 2673 bytes (see the module notes).
pub fn format_error_reply(reason: &str) -> Vec<u8> {
    let mut body = format!("curlpow worker: {reason}").into_bytes();
    if body.len() < TRANSACTION_TRYTES {
        body.resize(TRANSACTION_TRYTES, b' ');
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ternary::trinary::TRYTE_ALPHABET;

    fn tx() -> Transaction {
        let t: String = (0..TRANSACTION_TRYTES)
            .map(|i| char::from(TRYTE_ALPHABET[i * 7 % 27]))
            .collect();
        t.parse().unwrap()
    }

    #[test]
    fn requests_round_trip_at_every_mwm() {
        let tx = tx();
        for mwm in [0, 1, 9, 14, 99, 100, 243] {
            let body = format_request(&tx, mwm);
            let r = parse_request(&body, 243).unwrap();
            assert_eq!((r.transaction.clone(), r.mwm), (tx.clone(), mwm));
        }
        assert_eq!(format_request(&tx, 14).len(), 2675);
        assert_eq!(format_request(&tx, 9).len(), 2674);
    }

    #[test]
    fn every_malformed_request_names_what_is_wrong() {
        let good = format_request(&tx(), 14);
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            parse_request(&b, 14)
        };
        assert_eq!(
            with(&|b| b.truncate(2673)),
            Err(ProtocolError::RequestLength { found: 2673 })
        );
        assert_eq!(
            parse_request(b"", 14),
            Err(ProtocolError::RequestLength { found: 0 })
        );
        assert_eq!(
            with(&|b| b.extend_from_slice(b"00")),
            Err(ProtocolError::RequestLength { found: 2677 })
        );
        assert_eq!(
            with(&|b| b[10] = b'a'),
            Err(ProtocolError::Trytes(TryteError::BadChar {
                column: 11,
                found: 'a'
            }))
        );
        assert_eq!(
            with(&|b| b[2673] = b'-'),
            Err(ProtocolError::MwmNotDecimal { found: "-4".into() })
        );
        assert_eq!(
            with(&|b| b.push(0)),
            Err(ProtocolError::MwmNotDecimal {
                found: "14\0".into()
            })
        );
        let mut b = good[..2673].to_vec();
        b.extend_from_slice(b"244");
        assert_eq!(
            parse_request(&b, 243),
            Err(ProtocolError::MwmOutOfRange(244))
        );
        assert_eq!(
            parse_request(&good, 13),
            Err(ProtocolError::MwmOverMax { mwm: 14, max: 13 })
        );
        for e in [
            with(&|b| b.truncate(5)).unwrap_err(),
            with(&|b| b[0] = b' ').unwrap_err(),
        ] {
            assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn replies_are_exactly_the_trytes() {
        let tx = tx();
        assert_eq!(parse_reply(&format_reply(&tx)), Ok(tx));
        assert_eq!(
            parse_reply(b"ABC"),
            Err(ProtocolError::ReplyLength { found: 3 })
        );
        let err = format_error_reply("MWM 99 is over this worker's limit of 14");
        assert_eq!(err.len(), TRANSACTION_TRYTES);
        assert!(parse_reply(&err).is_err());
    }

    #[test]
    fn reply_to_names_the_broker_would_close_the_connection_for_are_refused() {
        for ok in [
            "amq.gen-JzTY20BRgKO-HjmUJj0wLg",
            "callback",
            "amq.rabbitmq.reply-toX",
            // PID_EXT with an ATOM_EXT node, creation 1 byte.
            "amq.rabbitmq.reply-to.g2dkAAtyYWJiaXRAaG9zdAAAAdoAAAAAAA==.a2V5",
            // The newer form: NEW_PID_EXT with the node as a 32-bit hash.
            "amq.rabbitmq.reply-to.g1hiAAAwOQAAAdoAAAAAAAAAAA==.a2V5",
        ] {
            assert_eq!(check_reply_to(ok), Ok(()), "{ok}");
        }
        for bad in [
            "amq.rabbitmq.reply-to",
            "amq.rabbitmq.reply-to.junk",
            "amq.rabbitmq.reply-to.junk.key",
            "amq.rabbitmq.reply-to.g1h3C3JhYmJpdEBob3N0AAAB2gAAAAAAAAAA.",
            "amq.rabbitmq.reply-to.AAAA.key",
            "amq.rabbitmq.reply-to.g2dkAAtyYWJiaXRAaG9zdAAAAdoAAAAAAAA=.a2V5",
            "amq.rabbitmq.reply-to.g1h3C3JhYmJpdEBob3N0AAAB2gAAAAAAAAA=.key",
            "amq.rabbitmq.reply-to.=g1h.key",
        ] {
            assert!(
                matches!(check_reply_to(bad), Err(ProtocolError::ReplyTo { .. })),
                "{bad}"
            );
        }
        assert_eq!(base64_decode(b"a2V5"), Some(b"key".to_vec()));
        assert_eq!(base64_decode(b"aGk="), Some(b"hi".to_vec()));
        assert_eq!(base64_decode(b"aA=="), Some(b"h".to_vec()));
    }
}
