//! `curlpow pow`: nonces for one transaction a line.
//!
//! Three passes over the input ([`crate::input`]): check every line; search in chunks of
//! [`CHUNK`] transactions, keeping only each nonce (27 trytes); write each input line with its
//! nonce. Memory stays bounded by the chunk, whatever the input's size.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use curlpow::{Engine, Field, PowOptions, Transaction, TRANSACTION_TRYTES};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::{batch_stopped, UsageError};
use crate::expected_time;
use crate::input::{changed, parse_tx, searched_all, Input, InputArg, MAX_TX_LINE};
use crate::line_reader::Line;
use crate::output::{errln, Stdout};
use crate::progress::Progress;
use crate::recheck;
use crate::values;

/// Transactions searched per `pow_many` call (their expanded trits live only this long).
pub const CHUNK: usize = 512;
const NONCE_TRYTES: usize = 27;

#[derive(Args)]
pub struct PowArgs {
    /// Minimum weight magnitude: trailing zero trits of the hash (mainnet 14, testnet 9).
    #[arg(long, default_value_t = 14)]
    mwm: usize,
    /// Give up after this many seconds in all, counted from the first search (exit 3); 0: no
    /// limit, as without it.
    #[arg(long, value_parser = values::seconds)]
    timeout: Option<Duration>,
    /// Run each search on every free device at once (lowest latency).
    #[arg(long)]
    latency: bool,
    /// Print per-device statistics to stderr at the end.
    #[arg(long)]
    stats: bool,
    /// No progress display and no time estimate (warnings stay).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArg,
}

pub fn run(a: PowArgs) -> Result<ExitCode> {
    let mwm = curlpow::Mwm::try_from(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let checked = a.engine.check()?;
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a.input)?;

    // Pass 1: every line checked, bad ones named as they are found.
    let count = input.check_lines(MAX_TX_LINE, "2673 trytes", |b| parse_tx(b).map(drop))?;
    if count == 0 {
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }

    // Pass 2: the searches, one deadline for all of them.
    let (engine, selection) = build_engine(&a.engine, &checked)?;
    expected_time::announce(&engine, &selection, mwm, count, a.quiet);
    let started = Instant::now();
    let mut opts = PowOptions::new(mwm).selection(selection).latency(a.latency);
    // 0: no limit, as for `serve --request-timeout` (`values::seconds`).
    if let Some(t) = a.timeout.filter(|t| !t.is_zero()) {
        if let Some(d) = started.checked_add(t) {
            opts = opts.deadline(d);
        }
    }
    let progress = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| Progress::start(engine.clone(), count));
    let mut nonces: Vec<[u8; NONCE_TRYTES]> = Vec::with_capacity(count);
    // What each searched line says outside its nonce, to know pass 3 writes that line.
    let mut digests: Vec<u64> = Vec::with_capacity(count);
    let mut done = 0usize;
    let mut chunk: Vec<Transaction> = Vec::with_capacity(CHUNK.min(count));
    let searched = input.for_each_line(MAX_TX_LINE, |line| {
        chunk.push(reparse(&line)?);
        if let Line::Text { bytes, .. } = &line {
            digests.push(recheck::digest_before_nonce(bytes));
        }
        if chunk.len() == CHUNK {
            search(&engine, &chunk, &opts, &mut nonces, &mut done)?;
            chunk.clear();
        }
        Ok(())
    });
    let searched = searched.and_then(|()| search(&engine, &chunk, &opts, &mut nonces, &mut done));
    drop(chunk);
    if let Some(p) = progress {
        p.finish();
    }
    if a.stats {
        print_stats(&engine);
    }
    searched.map_err(|e| batch_stopped(e, started, a.timeout, (done, count), "transaction"))?;
    searched_all(count, nonces.len(), "transaction")?;

    // Pass 3: each line with its nonce, in input order, a chunk at a time: the exact bytes to
    // be written are checked (the searched line, the weight reached) before they are written.
    let mut k = 0;
    let mut lines: Vec<Vec<u8>> = Vec::with_capacity(CHUNK.min(count));
    let mut numbers: Vec<usize> = Vec::with_capacity(CHUNK.min(count));
    let mut flush = |lines: &mut Vec<Vec<u8>>, numbers: &mut Vec<usize>, first: usize| {
        let end = first + lines.len();
        let searched = digests.get(first..end).ok_or_else(changed)?;
        recheck::check_pow_lines(lines, numbers, searched, a.mwm)?;
        for l in lines.iter() {
            out.bytes(l)?;
            out.bytes(b"\n")?;
        }
        lines.clear();
        numbers.clear();
        Ok::<(), anyhow::Error>(())
    };
    input.for_each_line(MAX_TX_LINE, |line| {
        let Line::Text { bytes, number } = line else {
            return Err(changed());
        };
        let nonce = nonces.get(k).ok_or_else(changed)?;
        if bytes.len() != TRANSACTION_TRYTES {
            return Err(changed());
        }
        let mut l = Vec::with_capacity(TRANSACTION_TRYTES);
        l.extend_from_slice(&bytes[..TRANSACTION_TRYTES - NONCE_TRYTES]);
        l.extend_from_slice(nonce);
        lines.push(l);
        numbers.push(number);
        k += 1;
        if lines.len() == CHUNK {
            flush(&mut lines, &mut numbers, k - CHUNK)?;
        }
        Ok(())
    })?;
    let first = k - lines.len();
    flush(&mut lines, &mut numbers, first)?;
    if k != count {
        return Err(changed());
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// A line of a later pass: pass 1 found it good, so an error means the input changed.
fn reparse(line: &Line<'_>) -> Result<Transaction> {
    match line {
        Line::Text { bytes, .. } => parse_tx(bytes).map_err(|_| changed()),
        Line::TooLong { .. } => Err(changed()),
    }
}

/// Search one chunk; each result's nonce kept, the finished searches counted in `done`. The
/// first error (in input order) ends the run.
fn search(
    engine: &Engine,
    txs: &[Transaction],
    opts: &PowOptions,
    nonces: &mut Vec<[u8; NONCE_TRYTES]>,
    done: &mut usize,
) -> Result<()> {
    if txs.is_empty() {
        return Ok(());
    }
    let results = engine.pow_many(txs, opts);
    *done += results.iter().filter(|r| r.is_ok()).count();
    let mut first_err = None;
    for r in results {
        match r {
            Ok(r) if first_err.is_none() => {
                let t = r.transaction.field_trytes(Field::Nonce);
                let mut n = [0u8; NONCE_TRYTES];
                n.copy_from_slice(t.as_bytes());
                nonces.push(n);
            }
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        None => Ok(()),
        Some(e) => Err(e.into()),
    }
}

pub fn print_stats(engine: &Engine) {
    errln!(
        "{:<14} {:>8} {:>14} {:>6} {:>6} {:>10}",
        "device",
        "searches",
        "nonces",
        "hits",
        "errors",
        "busy"
    );
    for d in engine.device_report() {
        let s = &d.stats;
        errln!(
            "{:<14} {:>8} {:>14} {:>6} {:>6} {:>9.3}s",
            d.info.id,
            s.searches,
            s.nonces,
            s.hits,
            s.errors,
            s.busy_seconds
        );
    }
}
