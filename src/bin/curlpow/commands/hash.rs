//! `curlpow hash` and `curlpow verify`: hashes and weights, no device needed.
//!
//! Two passes over the input ([`crate::input`]): check every line, then compute and write. The
//! hashes of `hash` are computed a chunk of lines at a time by [`hash_lines`].

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use curlpow::{Backend, Engine, Transaction};

use crate::exit::UsageError;
use crate::input::{changed, line_error, parse_tx, Input, InputArg, MAX_TX_LINE, NAMED_BAD_LINES};
use crate::line_reader::{self, Line};
use crate::output::{errln, Stdout};

/// The longest line `hash` reads, in bytes (trytes).
const MAX_HASH_LINE: usize = 4 << 20;
/// Lines hashed per [`hash_lines`] call, and the most bytes they may hold together.
const HASH_CHUNK_LINES: usize = 256;
const HASH_CHUNK_BYTES: usize = 8 << 20;

#[derive(Args)]
pub struct VerifyArgs {
    /// Minimum weight magnitude to check against.
    #[arg(long)]
    mwm: usize,
    #[command(flatten)]
    input: InputArg,
}

pub fn run_hash(a: InputArg) -> Result<ExitCode> {
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a)?;
    input.check_lines(
        MAX_HASH_LINE,
        "at most 4194304 trytes, a multiple of 81",
        |b| hash_line_text(b).map(drop),
    )?;
    let engine = hasher()?;
    let mut chunk: Vec<String> = Vec::new();
    let mut chunk_bytes = 0;
    input.for_each_line(MAX_HASH_LINE, |line| {
        let Line::Text { bytes, .. } = line else {
            return Err(changed());
        };
        let s = hash_line_text(bytes).map_err(|_| changed())?;
        chunk_bytes += s.len();
        chunk.push(s.to_string());
        if chunk.len() == HASH_CHUNK_LINES || chunk_bytes >= HASH_CHUNK_BYTES {
            flush(&engine, &mut chunk, &mut out)?;
            chunk_bytes = 0;
        }
        Ok(())
    })?;
    flush(&engine, &mut chunk, &mut out)?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// Hash and write the lines of a chunk, then empty it.
fn flush(engine: &Engine, chunk: &mut Vec<String>, out: &mut Stdout) -> Result<()> {
    for h in hash_lines(engine, chunk)? {
        out.line(h)?;
    }
    chunk.clear();
    Ok(())
}

/// A `hash` line: trytes, a multiple of 81 of them.
fn hash_line_text(bytes: &[u8]) -> Result<&str, String> {
    let s = line_reader::text(bytes).map_err(|e| e.to_string())?;
    if !curlpow::trits::is_trytes(s.as_bytes()) {
        // The parser's error names the first bad character.
        curlpow::trytes_to_trits(s).map_err(|e| line_error(s, &e))?;
    }
    // Every character is an ASCII tryte now: bytes are trytes.
    if s.len() % 81 != 0 {
        return Err(curlpow::TryteError::Length {
            found: s.len(),
            expected: "a multiple of 81",
        }
        .to_string());
    }
    Ok(s)
}

/// The 81-tryte Curl-P-81 hash of each line (checked trytes, a multiple of 81 each), bit-sliced
/// across the lines on the CPU pool's kernel.
fn hash_lines(engine: &Engine, lines: &[String]) -> Result<Vec<String>> {
    let trits = lines
        .iter()
        .map(|s| curlpow::trytes_to_trits(s))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&[i8]> = trits.iter().map(|t| &t[..]).collect();
    engine
        .hash_many_trits(&refs)?
        .iter()
        .map(|h| Ok(curlpow::trits_to_trytes(h)?))
        .collect()
}

/// The CPU pool that hashes (no GPU driver is loaded for hashing).
fn hasher() -> Result<Engine> {
    Ok(Engine::builder().backends(&[Backend::Cpu]).build()?)
}

/// Transactions whose weights are computed together.
const VERIFY_CHUNK: usize = 512;

pub fn run_verify(a: VerifyArgs) -> Result<ExitCode> {
    // Checked before any input is read: a bad one is a usage error even for empty input.
    curlpow::Mwm::try_from(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a.input)?;
    input.check_lines(MAX_TX_LINE, "2673 trytes", |b| parse_tx(b).map(drop))?;
    let engine = hasher()?;
    let (mut total, mut below) = (0u64, 0u64);
    // The transactions of a chunk and their line numbers.
    let mut chunk: Vec<Transaction> = Vec::with_capacity(VERIFY_CHUNK);
    let mut numbers: Vec<usize> = Vec::with_capacity(VERIFY_CHUNK);
    let mut weigh =
        |chunk: &mut Vec<Transaction>, numbers: &mut Vec<usize>, out: &mut Stdout| -> Result<()> {
            for (h, number) in engine.hash_many(chunk).iter().zip(numbers.iter()) {
                let w = curlpow::trailing_zeros(h);
                out.line(w)?;
                total += 1;
                if w < a.mwm {
                    below += 1;
                    if below <= NAMED_BAD_LINES {
                        errln!(
                            "curlpow: line {number}: weight {w} is below --mwm {}",
                            a.mwm
                        );
                    }
                }
            }
            chunk.clear();
            numbers.clear();
            Ok(())
        };
    input.for_each_line(MAX_TX_LINE, |line| {
        let Line::Text { bytes, number } = line else {
            return Err(changed());
        };
        chunk.push(parse_tx(bytes).map_err(|_| changed())?);
        numbers.push(number);
        if chunk.len() == VERIFY_CHUNK {
            weigh(&mut chunk, &mut numbers, &mut out)?;
        }
        Ok(())
    })?;
    weigh(&mut chunk, &mut numbers, &mut out)?;
    out.finish()?;
    if below == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    Err(anyhow::anyhow!(
        "{below} of {total} transactions below --mwm {}{}",
        a.mwm,
        if below > NAMED_BAD_LINES {
            format!(" (the first {NAMED_BAD_LINES} named)")
        } else {
            String::new()
        }
    ))
}
