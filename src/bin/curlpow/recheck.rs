//! The last look before a transaction is written: the exact bytes about to go out are parsed
//! again, hashed again and compared with what was searched. A command that would write a
//! transaction whose hash misses the MWM, or whose fields other than the ones it sets differ
//! from its input, fails (exit 1) instead.

use std::hash::{DefaultHasher, Hasher};

use anyhow::{anyhow, Result};
use curlpow::{attach::Hash, Field, Transaction, TRANSACTION_TRYTES};

/// The trytes of a transaction line before its nonce.
pub const BEFORE_NONCE: usize = TRANSACTION_TRYTES - 27;

/// A digest of the bytes of a transaction line outside its nonce: what `pow` keeps of each
/// line it searched, to know that the line it writes is that line.
pub fn digest_before_nonce(line: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(&line[..line.len().min(BEFORE_NONCE)]);
    h.write_usize(line.len());
    h.finish()
}

/// The fields `attach` sets (IRI's attachToTangle): chain, tag, attachment timestamps, nonce.
const ATTACH_OWNS: [Field; 7] = [
    Field::TrunkTransaction,
    Field::BranchTransaction,
    Field::Tag,
    Field::AttachmentTimestamp,
    Field::AttachmentTimestampLowerBound,
    Field::AttachmentTimestampUpperBound,
    Field::Nonce,
];

/// The weight of each transaction (zero trits at the end of its hash), from the batch sponge.
fn weights(txs: &[Transaction]) -> Vec<usize> {
    curlpow::hash_many(txs)
        .iter()
        .map(|h| curlpow::trits::trailing_zeros(h))
        .collect()
}

/// `pow`'s lines about to be written: `lines[i]` is line `numbers[i]` of the input with its
/// nonce, `digests[i]` what [`digest_before_nonce`] gave for the line searched. Err naming the
/// first line that is not the searched one or misses `mwm`.
pub fn check_pow_lines(
    lines: &[Vec<u8>],
    numbers: &[usize],
    digests: &[u64],
    mwm: usize,
) -> Result<()> {
    let mut txs = Vec::with_capacity(lines.len());
    for (k, line) in lines.iter().enumerate() {
        let number = numbers[k];
        if digest_before_nonce(line) != digests[k] {
            return Err(changed_line(number));
        }
        let tx = std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<Transaction>().ok())
            .ok_or_else(|| changed_line(number))?;
        txs.push(tx);
    }
    for (k, w) in weights(&txs).into_iter().enumerate() {
        if w < mwm {
            return Err(anyhow!(
                "line {}: the transaction to be written has weight {w}, below MWM {mwm}: \
                 not written (the input changed while it was read?)",
                numbers[k]
            ));
        }
    }
    Ok(())
}

fn changed_line(number: usize) -> anyhow::Error {
    anyhow!(
        "line {number} changed between the search and the output (a file written to during \
         the run?): its nonce would not be valid; not written"
    )
}

/// `attach`'s bundle about to be written, tail first: `written[j]` the trytes of each
/// transaction, `inputs[j]` the input transaction it came from. Checks each one's weight, that
/// only the fields IRI's attach sets differ from its input, and the chain: the head's trunk and
/// branch are the tips, every other transaction's trunk is the next one's hash and its branch
/// the trunk tip.
pub fn check_attached(
    written: &[String],
    inputs: &[&Transaction],
    trunk: &Hash,
    branch: &Hash,
    mwm: usize,
) -> Result<()> {
    let bad = |j: usize, what: String| {
        anyhow!("transaction {j} of the attached bundle {what}: nothing written")
    };
    let mut txs = Vec::with_capacity(written.len());
    for (j, s) in written.iter().enumerate() {
        let tx: Transaction = s
            .parse()
            .map_err(|e| bad(j, format!("does not parse ({e})")))?;
        for f in Field::ALL {
            if !ATTACH_OWNS.contains(&f) && tx.field(f) != inputs[j].field(f) {
                return Err(bad(j, format!("differs from its input in {f:?}")));
            }
        }
        // IRI's rule: an empty tag takes the obsolete tag, a tag that is set stays.
        let tag_was_empty = inputs[j].field(Field::Tag).iter().all(|&t| t == 0);
        let want_tag = if tag_was_empty {
            inputs[j].field(Field::ObsoleteTag)
        } else {
            inputs[j].field(Field::Tag)
        };
        if tx.field(Field::Tag) != want_tag {
            return Err(bad(j, "has a tag IRI's attach would not set".into()));
        }
        txs.push(tx);
    }
    let hashes = curlpow::hash_many(&txs);
    for (j, tx) in txs.iter().enumerate() {
        let w = curlpow::trits::trailing_zeros(&hashes[j]);
        if w < mwm {
            return Err(bad(j, format!("has weight {w}, below MWM {mwm}")));
        }
        let (want_trunk, want_branch): (&[i8], &[i8]) = match hashes.get(j + 1) {
            Some(next) => (next, trunk.trits()),
            None => (trunk.trits(), branch.trits()),
        };
        if tx.field(Field::TrunkTransaction) != want_trunk
            || tx.field(Field::BranchTransaction) != want_branch
        {
            return Err(bad(j, "is not chained to the tips as IRI chains".into()));
        }
    }
    Ok(())
}
