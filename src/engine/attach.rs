//! IRI's `attachToTangle`: chain a bundle's transactions to two tips and find each one's nonce.
//!
//! The rules are IRI 1.x's (its `attachToTangleStatement`), so a wallet gets from curlpow exactly
//! what a node would give it:
//!
//! 1. the transactions are processed by `currentIndex`, highest first (the bundle's head);
//! 2. the first one processed gets `trunkTransaction` = the given trunk and `branchTransaction` =
//!    the given branch; each later one gets trunk = the hash of the one processed before it and
//!    branch = the given trunk;
//! 3. a `tag` of all `9` takes the `obsoleteTag`;
//! 4. `attachmentTimestamp` = now in milliseconds, its lower bound 0, its upper bound
//!    (3^27 − 1) / 2 = [`MAX_TIMESTAMP`];
//! 5. PoW at the MWM;
//! 6. the answer lists the transactions in the reverse of the processing order: the tail
//!    (`currentIndex` 0) first.
//!
//! What the chain does not touch (blocks 0..30 of every transaction: everything before the trunk)
//! is absorbed into a prefix state up front, so each chained step costs two transforms (trunk and
//! branch), its search, and one reference transform for the hash the next step needs.

use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::base::error::{Error, TryteError};
use crate::engine::{Engine, PowOptions, PowReport, Request};
use crate::search::nonce::{LAST_BLOCK, NONCE_OFFSET};
use crate::search::search_job::{self as search, SearchJob};
use crate::ternary::curl::{self, HASH_LEN};
use crate::ternary::transaction::{Field, Transaction};
use crate::ternary::trinary::{self, Trit};

/// The largest 27-trit balanced value, (3^27 − 1) / 2: IRI's `attachmentTimestampUpperBound`.
pub const MAX_TIMESTAMP: u64 = 3_812_798_742_493;

/// Trytes in a [`struct@Hash`].
pub const HASH_TRYTES: usize = 81;

/// A transaction hash (trunk, branch, or a result's own): 81 trytes, 243 trits.
///
/// ```
/// use curlpow::attach::Hash;
/// let h: Hash = "A".repeat(81).parse().unwrap();
/// assert_eq!(h.to_trytes(), "A".repeat(81));
/// assert!("A".repeat(80).parse::<Hash>().unwrap_err().to_string().contains("81"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hash {
    trits: [Trit; HASH_LEN],
}

impl Hash {
    /// The all-zero hash (81 × `9`).
    pub const NULL: Hash = Hash {
        trits: [0; HASH_LEN],
    };

    /// Parse 81 trytes; the error names the length or the first bad character and its column.
    pub fn from_trytes(trytes: &str) -> Result<Hash, Error> {
        let n = trytes.chars().count();
        if n != HASH_TRYTES {
            return Err(TryteError::Length {
                found: n,
                expected: "81",
            }
            .into());
        }
        Self::from_trits(&trinary::trytes_to_trits(trytes)?)
    }

    /// Build from 243 trits.
    pub fn from_trits(trits: &[Trit]) -> Result<Hash, Error> {
        if trits.len() != HASH_LEN {
            return Err(Error::TritLength {
                found: trits.len(),
                expected: "243",
            });
        }
        if let Some(index) = trits.iter().position(|t| !(-1..=1).contains(t)) {
            return Err(Error::NotATrit {
                index,
                value: trits[index],
            });
        }
        let mut h = Hash::NULL;
        h.trits.copy_from_slice(trits);
        Ok(h)
    }

    /// The 243 trits.
    pub fn trits(&self) -> &[Trit; HASH_LEN] {
        &self.trits
    }

    /// The 81 trytes.
    pub fn to_trytes(&self) -> String {
        trinary::trits_to_trytes(&self.trits).expect("a hash always holds trits")
    }

    /// Trailing zero trits: the PoW weight of a transaction with this hash.
    pub fn weight(&self) -> usize {
        trinary::trailing_zeros(&self.trits)
    }
}

impl FromStr for Hash {
    type Err = Error;
    fn from_str(s: &str) -> Result<Hash, Error> {
        Hash::from_trytes(s)
    }
}

impl std::fmt::Display for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_trytes())
    }
}

impl std::fmt::Debug for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hash({})", self.to_trytes())
    }
}

/// What [`Engine::attach_to_tangle`] returns: the bundle with trunk, branch, tag, attachment
/// timestamps and nonce set, tail first (`currentIndex` 0 first), as IRI answers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Attached {
    /// The transactions, tail first; each hash ends in at least MWM zero trits (checked on the
    /// host with the scalar reference).
    pub transactions: Vec<Transaction>,
    /// Their hashes, same order (computed with the scalar reference).
    pub hashes: Vec<Hash>,
    /// Each transaction's search, same order.
    pub reports: Vec<PowReport>,
    /// Wall time of the whole attach.
    pub elapsed: Duration,
}

impl Attached {
    /// The transactions as 2673-tryte strings, tail first: IRI's `trytes` answer.
    pub fn trytes(&self) -> Vec<String> {
        self.transactions.iter().map(|t| t.to_trytes()).collect()
    }

    /// Nonces tried over the whole attach.
    pub fn nonces(&self) -> u64 {
        self.reports.iter().map(|r| r.nonces).sum()
    }
}

/// Milliseconds since the Unix epoch (0 for a clock set before 1970): the default clock.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis().min(u64::MAX as u128) as u64)
        .unwrap_or(0)
}

/// A transaction's `currentIndex` as a number.
fn current_index(tx: &Transaction) -> i128 {
    trinary::read_balanced(tx.field(Field::CurrentIndex))
}

fn balanced_27(v: u64) -> [Trit; 27] {
    let mut t = [0; 27];
    let ok = trinary::write_balanced(v.min(MAX_TIMESTAMP) as i128, &mut t);
    debug_assert!(ok, "clamped to the 27-trit range");
    t
}

/// Set the fields IRI's attach sets, before the search.
fn set_attach_fields(tx: &mut Transaction, trunk: &Hash, branch: &Hash, timestamp: u64) {
    let set = |tx: &mut Transaction, f: Field, v: &[Trit]| {
        tx.set_field(f, v).expect("field length and trits checked")
    };
    set(tx, Field::TrunkTransaction, trunk.trits());
    set(tx, Field::BranchTransaction, branch.trits());
    if tx.field(Field::Tag).iter().all(|&t| t == 0) {
        let obsolete = tx.field(Field::ObsoleteTag).to_vec();
        set(tx, Field::Tag, &obsolete);
    }
    set(tx, Field::AttachmentTimestamp, &balanced_27(timestamp));
    set(tx, Field::AttachmentTimestampLowerBound, &[0; 27]);
    set(
        tx,
        Field::AttachmentTimestampUpperBound,
        &balanced_27(MAX_TIMESTAMP),
    );
}

impl Engine {
    /// IRI's `attachToTangle` (see [the module](crate::engine::attach) for the rules): chain
    /// `transactions` to `trunk` and `branch`, set each tag, attachment timestamp and nonce, and
    /// return the bundle tail first.
    ///
    /// `opts` gives the MWM and, as for [`pow_with`](Self::pow_with), a timeout or deadline (for
    /// the whole attach), a [`CancelToken`](crate::CancelToken) (checked while waiting for a
    /// device and inside every search) and the device selection. A cancel answers
    /// [`Error::Cancelled`], a deadline [`Error::Timeout`], with the nonces of every step.
    ///
    /// ```
    /// use curlpow::{Engine, attach::Hash, PowOptions, Transaction};
    ///
    /// let engine = Engine::builder().threads(2).build()?;
    /// let trunk: Hash = "A".repeat(81).parse()?;
    /// let branch: Hash = "B".repeat(81).parse()?;
    /// let tx: Transaction = "9".repeat(2673).parse()?;
    /// let done = engine.attach_to_tangle(&trunk, &branch, &[tx], &PowOptions::mwm(5))?;
    /// assert_eq!(done.transactions[0].field_trytes(curlpow::Field::TrunkTransaction), trunk.to_trytes());
    /// assert!(done.hashes[0].weight() >= 5);
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn attach_to_tangle(
        &self,
        trunk: &Hash,
        branch: &Hash,
        transactions: &[Transaction],
        opts: &PowOptions,
    ) -> Result<Attached, Error> {
        self.attach_to_tangle_with_clock(trunk, branch, transactions, opts, &unix_millis)
    }

    /// [`attach_to_tangle`](Self::attach_to_tangle) with the attachment timestamps read from
    /// `clock` (milliseconds since the Unix epoch, read once per transaction just before its
    /// search; values past [`MAX_TIMESTAMP`] are clamped): tests pin it.
    pub fn attach_to_tangle_with_clock(
        &self,
        trunk: &Hash,
        branch: &Hash,
        transactions: &[Transaction],
        opts: &PowOptions,
        clock: &dyn Fn() -> u64,
    ) -> Result<Attached, Error> {
        let started = Instant::now();
        let mwm = opts.checked_mwm()?;
        // One request for the whole attach: every step shares its deadline.
        let req = Request::new(opts, started);

        // Processing order: currentIndex highest first; equal indices keep their input order.
        let mut order: Vec<&Transaction> = transactions.iter().collect();
        order.sort_by_key(|tx| std::cmp::Reverse(current_index(tx)));
        // Blocks 0..30 are the same whatever the chain gives: absorb them all before the first
        // search, so a step only waits for its own last blocks once the previous hash is known.
        let prefixes: Vec<_> = order.iter().map(|tx| search::prefix_state(tx)).collect();

        let mut done: Vec<(Transaction, Hash, PowReport)> = Vec::with_capacity(order.len());
        let mut nonces = 0u64;
        for (tx, prefix) in order.into_iter().zip(&prefixes) {
            let (tip, other) = match done.last() {
                None => (*trunk, *branch),
                Some((_, prev, _)) => (*prev, *trunk),
            };
            let mut tx = tx.clone();
            set_attach_fields(&mut tx, &tip, &other, clock());
            let found = match self.run_request(&req, || SearchJob::from_prefix(&tx, mwm, prefix)) {
                Ok(r) => r,
                Err(Error::Cancelled { nonces: n }) => {
                    return Err(Error::Cancelled { nonces: nonces + n })
                }
                Err(Error::Timeout { nonces: n, .. }) => {
                    return Err(Error::Timeout {
                        elapsed: started.elapsed(),
                        nonces: nonces + n,
                    })
                }
                Err(e) => return Err(e),
            };
            let (job, found, report) = found;
            nonces += report.nonces;
            let hash = hash_from_job(&job, &found);
            if hash.weight() < mwm.zeros() {
                // The engine verified the nonce already; this is a second look at the chain's
                // input, never expected to fire.
                return Err(Error::InvalidNonce {
                    device: report.device,
                });
            }
            done.push((found, hash, report));
        }
        let mut out = Attached {
            transactions: Vec::with_capacity(done.len()),
            hashes: Vec::with_capacity(done.len()),
            reports: Vec::with_capacity(done.len()),
            elapsed: Duration::ZERO,
        };
        for (tx, hash, report) in done.into_iter().rev() {
            out.transactions.push(tx);
            out.hashes.push(hash);
            out.reports.push(report);
        }
        out.elapsed = started.elapsed();
        Ok(out)
    }
}

/// A result's hash with the scalar reference: the job's state before the last transform with the
/// result's nonce written in, transformed once.
fn hash_from_job(job: &SearchJob, tx: &Transaction) -> Hash {
    let mut s = *job.state();
    s[..HASH_LEN].copy_from_slice(&tx.trits()[LAST_BLOCK..]);
    debug_assert_eq!(
        &s[..NONCE_OFFSET],
        &job.state()[..NONCE_OFFSET],
        "only the nonce differs from the job"
    );
    curl::transform(&mut s);
    Hash::from_trits(&s[..HASH_LEN]).expect("243 trits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::search_job::Mwm;

    fn tx(seed: u64) -> Transaction {
        let mut s = seed | 1;
        let trits: Vec<Trit> = (0..crate::ternary::transaction::TRANSACTION_TRITS)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 3) as i8 - 1
            })
            .collect();
        Transaction::from_trits(&trits).unwrap()
    }

    #[test]
    fn a_job_from_the_prefix_equals_a_job_from_scratch() {
        for seed in 1..6 {
            let t = tx(seed);
            let a = SearchJob::new(&t, 9).unwrap();
            let b = SearchJob::from_prefix(&t, Mwm::TESTNET, &search::prefix_state(&t));
            assert_eq!(a.state(), b.state());
        }
    }

    #[test]
    fn the_hash_from_the_job_is_the_reference_hash() {
        let t = tx(7);
        let job = SearchJob::from_prefix(&t, Mwm::new(0).unwrap(), &search::prefix_state(&t));
        assert_eq!(
            hash_from_job(&job, &t).trits().as_slice(),
            t.hash().as_slice()
        );
    }

    #[test]
    fn fields_follow_iri() {
        let mut t = tx(3);
        t.set_field(Field::Tag, &[0; 81]).unwrap();
        let trunk = Hash::from_trytes(&"T".repeat(81)).unwrap();
        let branch = Hash::from_trytes(&"B".repeat(81)).unwrap();
        set_attach_fields(&mut t, &trunk, &branch, 1_500_000_000_123);
        assert_eq!(t.field(Field::TrunkTransaction), trunk.trits());
        assert_eq!(t.field(Field::BranchTransaction), branch.trits());
        assert_eq!(t.field(Field::Tag), t.field(Field::ObsoleteTag));
        let read = |t: &Transaction, f| trinary::read_balanced(t.field(f));
        assert_eq!(read(&t, Field::AttachmentTimestamp), 1_500_000_000_123);
        assert_eq!(read(&t, Field::AttachmentTimestampLowerBound), 0);
        assert_eq!(
            read(&t, Field::AttachmentTimestampUpperBound),
            MAX_TIMESTAMP as i128
        );
        // A clock past the 27-trit range is clamped, not wrapped.
        set_attach_fields(&mut t, &trunk, &branch, u64::MAX);
        assert_eq!(read(&t, Field::AttachmentTimestamp), MAX_TIMESTAMP as i128);
        assert_eq!(MAX_TIMESTAMP as i128, (3i128.pow(27) - 1) / 2);
    }

    #[test]
    fn a_tag_that_is_set_stays() {
        let mut t = tx(4);
        let tag = t.field(Field::Tag).to_vec();
        assert!(tag.iter().any(|&x| x != 0));
        set_attach_fields(&mut t, &Hash::NULL, &Hash::NULL, 0);
        assert_eq!(t.field(Field::Tag), tag.as_slice());
    }

    #[test]
    fn hash_parse_errors_are_precise() {
        let e = Hash::from_trytes("9").unwrap_err().to_string();
        assert!(e.contains("81") && e.contains('1'), "{e}");
        let mut s = "9".repeat(81);
        s.replace_range(4..5, "a");
        let e = Hash::from_trytes(&s).unwrap_err().to_string();
        assert!(e.contains("column 5"), "{e}");
    }
}
