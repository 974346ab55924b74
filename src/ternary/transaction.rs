//! The 2673-tryte (8019-trit) IOTA transaction and its fields.

use std::ops::Range;
use std::str::FromStr;

use crate::base::error::{Error, TryteError};
use crate::ternary::curl;
use crate::ternary::trinary::{self, Trit};

/// Trits in a transaction.
pub const TRANSACTION_TRITS: usize = 8019;
/// Trytes in a transaction.
pub const TRANSACTION_TRYTES: usize = 2673;

/// A named transaction field: its trit range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// Signature or message, 6561 trits.
    SignatureMessageFragment,
    /// Address, 243 trits.
    Address,
    /// Value, 81 trits.
    Value,
    /// Obsolete tag, 81 trits.
    ObsoleteTag,
    /// Timestamp, 27 trits.
    Timestamp,
    /// Index in the bundle, 27 trits.
    CurrentIndex,
    /// Last index of the bundle, 27 trits.
    LastIndex,
    /// Bundle hash, 243 trits.
    Bundle,
    /// Trunk transaction hash, 243 trits.
    TrunkTransaction,
    /// Branch transaction hash, 243 trits.
    BranchTransaction,
    /// Tag, 81 trits.
    Tag,
    /// Attachment timestamp, 27 trits.
    AttachmentTimestamp,
    /// Attachment timestamp lower bound, 27 trits.
    AttachmentTimestampLowerBound,
    /// Attachment timestamp upper bound, 27 trits.
    AttachmentTimestampUpperBound,
    /// Nonce, 81 trits: what the PoW search sets.
    Nonce,
}

impl Field {
    /// Every field, in order.
    pub const ALL: [Field; 15] = [
        Field::SignatureMessageFragment,
        Field::Address,
        Field::Value,
        Field::ObsoleteTag,
        Field::Timestamp,
        Field::CurrentIndex,
        Field::LastIndex,
        Field::Bundle,
        Field::TrunkTransaction,
        Field::BranchTransaction,
        Field::Tag,
        Field::AttachmentTimestamp,
        Field::AttachmentTimestampLowerBound,
        Field::AttachmentTimestampUpperBound,
        Field::Nonce,
    ];

    /// The field's trit range within the transaction.
    pub const fn trits(self) -> Range<usize> {
        let (start, len) = match self {
            Field::SignatureMessageFragment => (0, 6561),
            Field::Address => (6561, 243),
            Field::Value => (6804, 81),
            Field::ObsoleteTag => (6885, 81),
            Field::Timestamp => (6966, 27),
            Field::CurrentIndex => (6993, 27),
            Field::LastIndex => (7020, 27),
            Field::Bundle => (7047, 243),
            Field::TrunkTransaction => (7290, 243),
            Field::BranchTransaction => (7533, 243),
            Field::Tag => (7776, 81),
            Field::AttachmentTimestamp => (7857, 27),
            Field::AttachmentTimestampLowerBound => (7884, 27),
            Field::AttachmentTimestampUpperBound => (7911, 27),
            Field::Nonce => (7938, 81),
        };
        start..start + len
    }
}

/// A transaction: 8019 trits.
///
/// ```
/// use curlpow::{Field, Transaction};
/// let tx: Transaction = "9".repeat(2673).parse().unwrap();
/// assert_eq!(tx.field(Field::Nonce).len(), 81);
/// assert_eq!(tx.to_trytes().len(), 2673);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Transaction {
    trits: Box<[Trit; TRANSACTION_TRITS]>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.to_trytes();
        write!(f, "Transaction({}…{})", &t[..9], &t[t.len() - 27..])
    }
}

impl Transaction {
    /// Parse 2673 trytes, optionally followed by one line end (`\n` or `\r\n`), so that a file
    /// holding one transaction parses as read. Anything else is an error that says what is wrong:
    /// the first character that is not a tryte (1-based column, with its code point when it is
    /// invisible), else the length.
    ///
    /// ```
    /// use curlpow::Transaction;
    /// let line = format!("{}\r\n", "9".repeat(2673));
    /// assert!(line.parse::<Transaction>().is_ok());
    /// let e = format!("{}\n\n", "9".repeat(2673)).parse::<Transaction>().unwrap_err();
    /// assert!(e.to_string().starts_with("column 2674: U+000A (line feed) is not a tryte"));
    /// let e = "ABC".parse::<Transaction>().unwrap_err();
    /// assert_eq!(e.to_string(), "length 3 trytes, expected 2673");
    /// ```
    pub fn from_trytes(trytes: &str) -> Result<Self, Error> {
        let trytes = strip_line_end(trytes);
        let n = trinary::check_trytes(trytes)?;
        if n != TRANSACTION_TRYTES {
            return Err(TryteError::Length {
                found: n,
                expected: "2673",
            }
            .into());
        }
        Self::from_trits(&trinary::trytes_to_trits(trytes)?)
    }

    /// Build from 8019 trits.
    pub fn from_trits(trits: &[Trit]) -> Result<Self, Error> {
        if trits.len() != TRANSACTION_TRITS {
            return Err(Error::TritLength {
                found: trits.len(),
                expected: "8019",
            });
        }
        trinary::check_trits(trits)?;
        let mut b = Box::new([0i8; TRANSACTION_TRITS]);
        b.copy_from_slice(trits);
        Ok(Transaction { trits: b })
    }

    /// All 8019 trits.
    pub fn trits(&self) -> &[Trit; TRANSACTION_TRITS] {
        &self.trits
    }

    /// The 2673 trytes.
    pub fn to_trytes(&self) -> String {
        trinary::trits_to_trytes(&self.trits[..]).expect("a transaction always holds trits")
    }

    /// A field's trits.
    pub fn field(&self, field: Field) -> &[Trit] {
        &self.trits[field.trits()]
    }

    /// A field's trytes.
    pub fn field_trytes(&self, field: Field) -> String {
        trinary::trits_to_trytes(self.field(field)).expect("fields are whole trytes")
    }

    /// Overwrite a field. `value` must be the field's length and hold trits.
    pub fn set_field(&mut self, field: Field, value: &[Trit]) -> Result<(), Error> {
        let r = field.trits();
        if value.len() != r.len() {
            return Err(Error::TritLength {
                found: value.len(),
                expected: "the field's length",
            });
        }
        trinary::check_trits(value)?;
        self.trits[r].copy_from_slice(value);
        Ok(())
    }

    /// The nonce's 81 trits.
    pub fn nonce(&self) -> &[Trit] {
        self.field(Field::Nonce)
    }

    /// The transaction's Curl-P-81 hash (243 trits), with the fast single-state transform
    /// (tested against the scalar reference [`crate::hash`] and the public vectors).
    pub fn hash(&self) -> Vec<Trit> {
        let p = curl::planes::absorb(&self.trits[..], curl::PlanesKernel::detect());
        p.trits()[..curl::HASH_LEN].to_vec()
    }

    /// The hash as 81 trytes.
    pub fn hash_trytes(&self) -> String {
        trinary::trits_to_trytes(&self.hash()).expect("243 trits")
    }

    /// The number of zero trits at the end of the hash: the PoW weight reached.
    pub fn weight(&self) -> usize {
        trinary::trailing_zeros(&self.hash())
    }
}

/// `s` without one trailing `\n` or `\r\n`.
fn strip_line_end(s: &str) -> &str {
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

impl FromStr for Transaction {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::from_trytes(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_the_transaction() {
        let mut end = 0;
        for f in Field::ALL {
            let r = f.trits();
            assert_eq!(r.start, end, "{f:?}");
            assert_eq!(r.len() % 3, 0);
            end = r.end;
        }
        assert_eq!(end, TRANSACTION_TRITS);
    }

    #[test]
    fn one_line_end_is_accepted_and_no_more() {
        let t = "9".repeat(2673);
        for ok in [t.clone(), format!("{t}\n"), format!("{t}\r\n")] {
            assert_eq!(Transaction::from_trytes(&ok).unwrap().to_trytes(), t);
        }
        for (bad, msg) in [
            (format!("{t}\n\n"), "column 2674: U+000A (line feed)"),
            (format!("{t}\r"), "column 2674: U+000D (carriage return)"),
            (format!("{t}\n\r\n"), "column 2674: U+000A (line feed)"),
            (format!("{t} \n"), "column 2674: U+0020 (space)"),
            (format!(" {t}"), "column 1: U+0020 (space)"),
            (format!("\u{feff}{t}"), "column 1: U+FEFF (byte order mark)"),
            (format!("{}\u{0}", &t[1..]), "column 2673: U+0000 (NUL)"),
        ] {
            let e = Transaction::from_trytes(&bad).unwrap_err().to_string();
            assert!(e.starts_with(msg), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_example_file_parses_as_read() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/transaction.trytes");
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.ends_with('\n'));
        let tx: Transaction = text.parse().unwrap();
        assert_eq!(tx.to_trytes(), text.trim_end());
    }

    #[test]
    fn wrong_length_says_found_and_expected() {
        let e = Transaction::from_trytes("ABC").unwrap_err().to_string();
        assert!(e.contains('3') && e.contains("2673"), "{e}");
    }
}
