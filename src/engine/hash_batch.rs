//! Hashing many messages at once: [`hash_many`], [`hash_many_trits`], [`hash_many_trytes`],
//! [`verify_many`], and the same on an engine's pool ([`Engine::hash_many`],
//! [`Engine::hash_many_trits`], [`Engine::hash_many_trytes`], [`Engine::verify_many`]).
//!
//! Lines of trytes are decoded straight into the bit-sliced lanes (one table look-up per tryte,
//! no trits in between); trits are packed into them. Either way, one pass of the kernel runs
//! both.
//!
//! Equal-length messages are bit-sliced across messages with the CPU search kernels' own
//! transform, one message per lane: 512 per pass with AVX-512, 256 with AVX2, 64 portable. A
//! pass costs the same however many lanes are used, so a remainder too small to pay for one
//! (and every message on a CPU whose single-state transform is cheaper per message than a lane
//! of its bit-sliced one) goes through the host's fast single-state transform instead. Both
//! paths are tested against the reference sponge ([`crate::hash`]) and the public vectors.
//!
//! The mid-states of a batch of searches ([`midstates`]) are computed the same way.

use parking_lot::Mutex;

use crate::backend::cpu::messages::Messages;
use crate::backend::cpu::{CpuDevice, CpuKernel};
use crate::base::error::{Error, TryteError};
use crate::engine::Engine;
use crate::search::nonce::LAST_BLOCK;
use crate::ternary::curl::planes::StatePlanes;
use crate::ternary::curl::{self, PlanesKernel, HASH_LEN, STATE_LEN};
use crate::ternary::transaction::Transaction;
use crate::ternary::trinary::{self, Trit};

/// The fewest messages for which one bit-sliced pass of `kernel` beats the single-state path
/// (more than its lanes: never).
pub(crate) fn batch_min(kernel: CpuKernel) -> usize {
    (kernel.transform_ns() / PlanesKernel::detect().transform_ns()) as usize + 1
}

/// Messages per task when the engine spreads single-state hashing over its pool.
const SINGLE_CHUNK: usize = 64;

/// Absorb equal-length messages (at least one whole block each, valid digits) and write the
/// first `out_len` trits (243 or 729) of each final state to `out`, message after message.
fn absorb_into(kernel: CpuKernel, msgs: Messages<'_>, out_len: usize, out: &mut [Trit]) {
    debug_assert_eq!(out.len(), msgs.len() * out_len);
    let n = msgs.len();
    let lanes = kernel.lanes();
    let min = batch_min(kernel);
    let batched = if min > lanes {
        0
    } else if n % lanes >= min {
        n
    } else {
        n / lanes * lanes
    };
    if batched > 0 {
        kernel.absorb_many(
            msgs.slice(0..batched),
            out_len,
            &mut out[..batched * out_len],
        );
    }
    let pk = PlanesKernel::detect();
    let mut block = [0; HASH_LEN];
    for (i, o) in (batched..n).zip(out[batched * out_len..].chunks_exact_mut(out_len)) {
        let mut p = StatePlanes::ZERO;
        for b in 0..msgs.trits(i) / HASH_LEN {
            msgs.block(i, b, &mut block);
            p.absorb_block(&block, pk);
        }
        p.get_limbs(0, o);
    }
}

/// One chunk of [`absorb_on`]: its messages and its part of the output.
type Task<'a> = Mutex<(Messages<'a>, &'a mut [Trit])>;

/// [`absorb_into`] with the work spread over the CPU device's pool: chunks of one pass each
/// (or of [`SINGLE_CHUNK`] single-state messages), one per task.
fn absorb_on(cpu: &CpuDevice, msgs: Messages<'_>, out_len: usize, out: &mut [Trit]) {
    let kernel = cpu.kernel();
    let chunk = if batch_min(kernel) > kernel.lanes() {
        SINGLE_CHUNK
    } else {
        kernel.lanes()
    };
    let n = msgs.len();
    let tasks: Vec<Task<'_>> = out
        .chunks_mut(chunk * out_len)
        .enumerate()
        .map(|(i, o)| Mutex::new((msgs.slice(chunk * i..n.min(chunk * (i + 1))), o)))
        .collect();
    cpu.run_tasks(tasks.len(), |i| {
        let mut t = tasks[i].lock();
        let (m, o) = &mut *t;
        absorb_into(kernel, *m, out_len, o);
    });
}

/// Hash equal-length groups of `inputs` with `absorb`, results in input order.
fn hash_groups(
    inputs: Messages<'_>,
    absorb: impl Fn(Messages<'_>, &mut [Trit]),
) -> Vec<[Trit; HASH_LEN]> {
    let n = inputs.len();
    let mut out = vec![[0; HASH_LEN]; n];
    // The common case, every input the same length: no reordering.
    if n > 0 && (1..n).all(|i| inputs.trits(i) == inputs.trits(0)) {
        if inputs.trits(0) > 0 {
            absorb(inputs, out.as_flattened_mut());
        }
        return out;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| inputs.trits(i));
    for group in order.chunk_by(|&a, &b| inputs.trits(a) == inputs.trits(b)) {
        if inputs.trits(group[0]) == 0 {
            // Nothing absorbed: the zero state's rate.
            continue;
        }
        let mut flat = vec![0; group.len() * HASH_LEN];
        inputs.picked(group, |m| absorb(m, &mut flat));
        for (&i, h) in group.iter().zip(flat.chunks_exact(HASH_LEN)) {
            out[i].copy_from_slice(h);
        }
    }
    out
}

/// [`hash_groups`] of trits, each input checked first.
fn hash_trit_groups(
    inputs: &[&[Trit]],
    absorb: impl Fn(Messages<'_>, &mut [Trit]),
) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
    for m in inputs {
        curl::check_blocks(m)?;
    }
    Ok(hash_groups(Messages::Trits(inputs), absorb))
}

/// [`hash_groups`] of tryte lines, each checked first.
fn hash_tryte_groups(
    inputs: &[&[u8]],
    absorb: impl Fn(Messages<'_>, &mut [Trit]),
) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
    for m in inputs {
        check_tryte_blocks(m)?;
    }
    Ok(hash_groups(Messages::Trytes(inputs), absorb))
}

/// An error unless `bytes` are tryte characters, a multiple of 81 of them. A bad character is
/// named as the tryte parser names it.
fn check_tryte_blocks(bytes: &[u8]) -> Result<(), Error> {
    if let Some(i) = trinary::first_non_tryte(bytes) {
        // Every byte before `i` is an ASCII tryte: column i + 1.
        let e = match bytes[i..].utf8_chunks().next() {
            Some(c) if !c.valid().is_empty() => TryteError::BadChar {
                column: i + 1,
                found: c.valid().chars().next().unwrap_or('\u{fffd}'),
            },
            _ => TryteError::NotUtf8 {
                column: i + 1,
                byte: bytes[i],
            },
        };
        return Err(e.into());
    }
    if !bytes.len().is_multiple_of(HASH_LEN / 3) {
        return Err(TryteError::Length {
            found: bytes.len(),
            expected: "a multiple of 81",
        }
        .into());
    }
    Ok(())
}

fn tx_trits(txs: &[Transaction]) -> Vec<&[Trit]> {
    txs.iter().map(|t| &t.trits()[..]).collect()
}

/// The Curl-P-81 hash of every transaction, in order, on the calling thread: bit-sliced across
/// transactions with the detected CPU kernel (512 per pass with AVX-512), the same as
/// [`Transaction::hash`] for each (the reference sponge), many times faster.
///
/// ```
/// use curlpow::{hash_many, Transaction};
/// let txs: Vec<Transaction> = vec!["9".repeat(2673).parse()?; 3];
/// let hashes = hash_many(&txs);
/// assert_eq!(hashes.len(), 3);
/// assert_eq!(hashes[0].to_vec(), txs[0].hash());
/// # Ok::<(), curlpow::Error>(())
/// ```
pub fn hash_many(txs: &[Transaction]) -> Vec<[Trit; HASH_LEN]> {
    let mut out = vec![[0; HASH_LEN]; txs.len()];
    let kernel = CpuKernel::detect();
    absorb_into(
        kernel,
        Messages::Trits(&tx_trits(txs)),
        HASH_LEN,
        out.as_flattened_mut(),
    );
    out
}

/// The Curl-P-81 hash ([`crate::hash`]) of every input (each a whole number of 243-trit
/// blocks, possibly of different lengths), in order, on the calling thread. The first input
/// that is not whole blocks of trits is the error.
///
/// ```
/// let a = vec![1i8; 243];
/// let b = vec![0i8; 486];
/// let h = curlpow::hash_many_trits(&[&a[..], &b[..]])?;
/// assert_eq!(h[0].to_vec(), curlpow::hash(&a)?);
/// assert_eq!(h[1], [0; 243]);
/// # Ok::<(), curlpow::Error>(())
/// ```
pub fn hash_many_trits(inputs: &[&[Trit]]) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
    let kernel = CpuKernel::detect();
    hash_trit_groups(inputs, |m, o| absorb_into(kernel, m, HASH_LEN, o))
}

/// The Curl-P-81 hash of every line of tryte characters (`9A-Z`, a multiple of 81 of them each,
/// possibly of different lengths), in order, on the calling thread: the trytes are decoded
/// straight into the kernel's bit-sliced lanes, no trits in between. The first line that is
/// not whole blocks of trytes is the error, naming its bad character or its length.
///
/// ```
/// let a = "A".repeat(81);
/// let b = "9".repeat(162);
/// let h = curlpow::hash_many_trytes(&[a.as_bytes(), b.as_bytes()])?;
/// assert_eq!(h[0].to_vec(), curlpow::hash(&curlpow::trits::trytes_to_trits(&a)?)?);
/// assert_eq!(h[1], [0; 243]);
/// assert!(curlpow::hash_many_trytes(&[b"9a".as_slice()]).is_err());
/// # Ok::<(), curlpow::Error>(())
/// ```
pub fn hash_many_trytes(lines: &[&[u8]]) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
    let kernel = CpuKernel::detect();
    hash_tryte_groups(lines, |m, o| absorb_into(kernel, m, HASH_LEN, o))
}

/// Whether each transaction's hash ends in at least `mwm` zero trits (its PoW is valid), in
/// order: [`hash_many`] and the trailing zeros. An `mwm` above 243 is an error.
///
/// ```
/// use curlpow::{verify_many, Transaction};
/// let tx: Transaction = "9".repeat(2673).parse()?;
/// assert_eq!(verify_many(&[tx], 243)?, vec![true]); // the zero state hashes to zero
/// # Ok::<(), curlpow::Error>(())
/// ```
pub fn verify_many(txs: &[Transaction], mwm: usize) -> Result<Vec<bool>, Error> {
    let mwm = crate::search::search_job::Mwm::try_from(mwm)?;
    Ok(weights_reach(&hash_many(txs), mwm.zeros()))
}

/// The sponge state after the first 32 blocks of each transaction: the mid-states of a batch of
/// searches, bit-sliced like [`hash_many`], spread over the CPU device's pool.
pub(crate) fn midstates(cpu: &CpuDevice, txs: &[&Transaction]) -> Vec<[Trit; STATE_LEN]> {
    let msgs: Vec<&[Trit]> = txs.iter().map(|t| &t.trits()[..LAST_BLOCK]).collect();
    let mut flat = vec![0; txs.len() * STATE_LEN];
    absorb_on(cpu, Messages::Trits(&msgs), STATE_LEN, &mut flat);
    flat.chunks_exact(STATE_LEN)
        .map(|s| s.try_into().expect("729 trits"))
        .collect()
}

/// Whether each hash ends in at least `zeros` zero trits.
fn weights_reach(hashes: &[[Trit; HASH_LEN]], zeros: usize) -> Vec<bool> {
    hashes
        .iter()
        .map(|h| trinary::trailing_zeros(h) >= zeros)
        .collect()
}

impl Engine {
    /// [`hash_many`] on the engine's CPU pool: chunks of one bit-sliced pass spread over its
    /// workers (it waits for a running CPU search, and a CPU search waits for it).
    ///
    /// ```
    /// use curlpow::{Engine, Transaction};
    /// let engine = Engine::builder().threads(2).backends(&[curlpow::Backend::Cpu]).build()?;
    /// let txs: Vec<Transaction> = vec!["9".repeat(2673).parse()?; 5];
    /// assert_eq!(engine.hash_many(&txs), curlpow::hash_many(&txs));
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn hash_many(&self, txs: &[Transaction]) -> Vec<[Trit; HASH_LEN]> {
        let mut out = vec![[0; HASH_LEN]; txs.len()];
        absorb_on(
            self.cpu(),
            Messages::Trits(&tx_trits(txs)),
            HASH_LEN,
            out.as_flattened_mut(),
        );
        out
    }

    /// [`hash_many_trits`] on the engine's CPU pool.
    pub fn hash_many_trits(&self, inputs: &[&[Trit]]) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
        hash_trit_groups(inputs, |m, o| absorb_on(self.cpu(), m, HASH_LEN, o))
    }

    /// [`hash_many_trytes`] on the engine's CPU pool: what `curlpow hash` runs.
    ///
    /// ```
    /// use curlpow::{Engine, Transaction};
    /// let engine = Engine::builder().threads(2).backends(&[curlpow::Backend::Cpu]).build()?;
    /// let line = "9".repeat(2673);
    /// let tx: Transaction = line.parse()?;
    /// assert_eq!(engine.hash_many_trytes(&[line.as_bytes()])?, curlpow::hash_many(&[tx]));
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn hash_many_trytes(&self, lines: &[&[u8]]) -> Result<Vec<[Trit; HASH_LEN]>, Error> {
        hash_tryte_groups(lines, |m, o| absorb_on(self.cpu(), m, HASH_LEN, o))
    }

    /// [`verify_many`] on the engine's CPU pool.
    ///
    /// ```
    /// use curlpow::{Engine, Transaction};
    /// let engine = Engine::builder().threads(2).backends(&[curlpow::Backend::Cpu]).build()?;
    /// let tx: Transaction = "9".repeat(2673).parse()?;
    /// assert_eq!(engine.verify_many(&[tx], 243)?, vec![true]);
    /// # Ok::<(), curlpow::Error>(())
    /// ```
    pub fn verify_many(&self, txs: &[Transaction], mwm: usize) -> Result<Vec<bool>, Error> {
        let mwm = crate::search::search_job::Mwm::try_from(mwm)?;
        Ok(weights_reach(&self.hash_many(txs), mwm.zeros()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_trits(n: usize, seed: u64) -> Vec<Trit> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 3) as i8 - 1
            })
            .collect()
    }

    #[test]
    fn every_kernel_and_both_paths_match_the_reference() {
        let rows: Vec<Vec<Trit>> = (0..70).map(|i| random_trits(3 * HASH_LEN, i)).collect();
        // Longer than one window of the lane words (33 blocks): 40 blocks.
        let long: Vec<Vec<Trit>> = (0..5)
            .map(|i| random_trits(40 * HASH_LEN, 99 + i))
            .collect();
        let long_refs: Vec<&[Trit]> = long.iter().map(|r| &r[..]).collect();
        let msgs: Vec<&[Trit]> = rows.iter().map(|r| &r[..]).collect();
        let want: Vec<Vec<Trit>> = rows.iter().map(|r| curl::hash(r).unwrap()).collect();
        for &k in CpuKernel::ALL.iter().filter(|k| k.is_supported()) {
            for n in [1, 2, 63, 64, 65, 70] {
                let mut bits = vec![0; n * HASH_LEN];
                k.absorb_many(Messages::Trits(&msgs[..n]), HASH_LEN, &mut bits);
                let mut any = vec![0; n * HASH_LEN];
                absorb_into(k, Messages::Trits(&msgs[..n]), HASH_LEN, &mut any);
                for (i, w) in want.iter().enumerate().take(n) {
                    let r = i * HASH_LEN..(i + 1) * HASH_LEN;
                    assert_eq!(bits[r.clone()], w[..], "{k} bit-sliced n={n} i={i}");
                    assert_eq!(any[r], w[..], "{k} n={n} i={i}");
                }
            }
            let mut out = vec![0; 5 * HASH_LEN];
            k.absorb_many(Messages::Trits(&long_refs), HASH_LEN, &mut out);
            for (i, r) in long.iter().enumerate() {
                let want = curl::hash(r).unwrap();
                assert_eq!(
                    out[i * HASH_LEN..(i + 1) * HASH_LEN],
                    want[..],
                    "{k} long {i}"
                );
            }
            // Whole states too (the mid-state shape).
            let mut full = vec![0; 3 * STATE_LEN];
            k.absorb_many(Messages::Trits(&msgs[..3]), STATE_LEN, &mut full);
            for i in 0..3 {
                let mut c = curl::Curl::new();
                c.absorb(msgs[i]).unwrap();
                assert_eq!(
                    full[i * STATE_LEN..(i + 1) * STATE_LEN],
                    c.state()[..],
                    "{k}"
                );
            }
        }
    }

    #[test]
    fn mixed_lengths_and_bad_input() {
        let a = random_trits(HASH_LEN, 1);
        let b = random_trits(4 * HASH_LEN, 2);
        let c = random_trits(HASH_LEN, 3);
        let h = hash_many_trits(&[&a, &[], &b, &c]).unwrap();
        assert_eq!(h[0].to_vec(), curl::hash(&a).unwrap());
        assert_eq!(h[1], [0; HASH_LEN]);
        assert_eq!(h[2].to_vec(), curl::hash(&b).unwrap());
        assert_eq!(h[3].to_vec(), curl::hash(&c).unwrap());
        assert!(matches!(
            hash_many_trits(&[&a, &a[..10]]),
            Err(Error::TritLength { found: 10, .. })
        ));
        let mut bad = a.clone();
        bad[7] = 3;
        assert!(matches!(
            hash_many_trits(&[&bad]),
            Err(Error::NotATrit { index: 7, value: 3 })
        ));
        assert!(hash_many_trits(&[]).unwrap().is_empty());
    }

    fn trytes_of(trits: &[Trit]) -> Vec<u8> {
        trinary::trits_to_trytes(trits).unwrap().into_bytes()
    }

    #[test]
    fn trytes_match_the_reference_on_every_kernel_and_both_paths() {
        // 600 transactions: one whole AVX-512 pass and a remainder on either path.
        let rows: Vec<Vec<Trit>> = (0..600).map(|i| random_trits(8019, 500 + i)).collect();
        let lines: Vec<Vec<u8>> = rows.iter().map(|r| trytes_of(r)).collect();
        let refs: Vec<&[u8]> = lines.iter().map(|l| &l[..]).collect();
        let want: Vec<Vec<Trit>> = rows.iter().map(|r| curl::hash(r).unwrap()).collect();
        for &k in CpuKernel::ALL.iter().filter(|k| k.is_supported()) {
            for n in [1, 63, 64, 65, 300, 513, 600] {
                let mut bits = vec![0; n * HASH_LEN];
                k.absorb_many(Messages::Trytes(&refs[..n]), HASH_LEN, &mut bits);
                let mut any = vec![0; n * HASH_LEN];
                absorb_into(k, Messages::Trytes(&refs[..n]), HASH_LEN, &mut any);
                for (i, w) in want.iter().enumerate().take(n) {
                    let r = i * HASH_LEN..(i + 1) * HASH_LEN;
                    assert_eq!(bits[r.clone()], w[..], "{k} bit-sliced n={n} i={i}");
                    assert_eq!(any[r], w[..], "{k} n={n} i={i}");
                }
            }
        }
        let got = hash_many_trytes(&refs).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g[..], w[..]);
        }
    }

    #[test]
    fn tryte_lines_of_mixed_lengths_and_bad_lines() {
        let a = random_trits(HASH_LEN, 11);
        let b = random_trits(4 * HASH_LEN, 12);
        let (ta, tb) = (trytes_of(&a), trytes_of(&b));
        let h = hash_many_trytes(&[&ta[..], &b""[..], &tb[..], &ta[..]]).unwrap();
        assert_eq!(h[0].to_vec(), curl::hash(&a).unwrap());
        assert_eq!(h[1], [0; HASH_LEN]);
        assert_eq!(h[2].to_vec(), curl::hash(&b).unwrap());
        assert_eq!(h[3], h[0]);
        let e = |line: &[u8]| hash_many_trytes(&[&ta[..], line]).unwrap_err().to_string();
        assert_eq!(e(&ta[..80]), "length 80 trytes, expected a multiple of 81");
        let mut bad = ta.clone();
        bad[4] = b'*';
        assert_eq!(e(&bad), "column 5: '*' is not a tryte (expected 9 or A-Z)");
        let mut utf8 = ta[..10].to_vec();
        utf8.extend_from_slice("\u{feff}".as_bytes());
        assert!(e(&utf8).starts_with("column 11: U+FEFF"), "{}", e(&utf8));
        bad[4] = 0xFF;
        assert_eq!(
            e(&bad),
            "column 5: byte 0xFF is not UTF-8 text (expected 9 or A-Z)"
        );
        assert!(hash_many_trytes(&[]).unwrap().is_empty());
    }
}
