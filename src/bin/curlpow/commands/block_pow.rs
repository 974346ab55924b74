//! `curlpow block-pow`: nonces for one hex message (Chrysalis message or Stardust block, its 8
//! nonce bytes included) a line.
//!
//! Three passes over the input ([`crate::input`]), as `pow` runs them: check every line (hex,
//! length, a target its length can reach); search each message, keeping only its nonce (8
//! bytes); write each input line with its nonce. Memory stays bounded by one line and the
//! nonces.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use curlpow::{block, PowOptions};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::batch_stopped;
use crate::hex_message::{self, EXPECTED, MAX_HEX_LINE};
use crate::input::{changed, searched_all, Input, InputArg};
use crate::line_reader::Line;
use crate::output::Stdout;

#[derive(Args)]
pub struct BlockPowArgs {
    /// Target PoW score: 3^(trailing zero trits) ÷ message length must reach it (Chrysalis
    /// mainnet 4000, Stardust networks 1500).
    #[arg(long, value_parser = score)]
    score: f64,
    /// Give up after this many seconds in all, counted from the first search (exit 3); 0: no
    /// limit, as without it.
    #[arg(long, value_parser = crate::values::seconds)]
    timeout: Option<Duration>,
    /// Run each search on every free device at once (lowest latency).
    #[arg(long)]
    latency: bool,
    /// Print per-device statistics to stderr at the end.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArg,
}

/// A target score: a finite number, 0 or more.
fn score(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a score (a number, 0 or more)")),
    }
}

/// A line's message, checked against the target too.
fn parse(bytes: &[u8], target: f64) -> Result<Vec<u8>, String> {
    let msg = hex_message::parse(bytes)?;
    block::zeros_needed(target, msg.len()).map_err(|e| e.to_string())?;
    Ok(msg)
}

/// Whether the hex message `line` (nonce included) reaches `target`, by the rule the engine's
/// host check applies (its trailing zeros against the zeros its length needs).
fn reaches(line: &[u8], target: f64) -> bool {
    let Ok(msg) = hex_message::parse(line) else {
        return false;
    };
    match (
        block::pow_zeros(&msg),
        block::zeros_needed(target, msg.len()),
    ) {
        (Ok(have), Ok(need)) => have >= need,
        _ => false,
    }
}

pub fn run(a: BlockPowArgs) -> Result<ExitCode> {
    let checked = a.engine.check()?;
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a.input)?;

    // Pass 1: every line checked, bad ones named as they are found.
    let count = input.check_lines(MAX_HEX_LINE, EXPECTED, |b| parse(b, a.score).map(drop))?;
    if count == 0 {
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }

    // Pass 2: the searches, one deadline for all of them.
    let (engine, selection) = build_engine(&a.engine, &checked)?;
    let started = Instant::now();
    let mut opts = PowOptions::default()
        .selection(selection)
        .latency(a.latency);
    // 0: no limit, as for `serve --request-timeout` (`values::seconds`).
    if let Some(t) = a.timeout.filter(|t| !t.is_zero()) {
        if let Some(d) = started.checked_add(t) {
            opts = opts.deadline(d);
        }
    }
    let mut nonces: Vec<u64> = Vec::with_capacity(count);
    let searched = input.for_each_line(MAX_HEX_LINE, |line| {
        let Line::Text { bytes, .. } = line else {
            return Err(changed());
        };
        let msg = parse(bytes, a.score).map_err(|_| changed())?;
        let r = engine.block_pow_with(&msg, a.score, &opts)?;
        nonces.push(r.nonce);
        Ok(())
    });
    if a.stats {
        super::pow::print_stats(&engine);
    }
    let done = nonces.len();
    searched.map_err(|e| batch_stopped(e, started, a.timeout, (done, count), "message"))?;
    searched_all(count, nonces.len(), "message")?;

    // Pass 3: each line with its nonce, in input order; the exact bytes to be written are
    // re-scored first, so a line that changed since its search is never written with a nonce
    // found for other bytes.
    let mut k = 0;
    let mut written = Vec::new();
    input.for_each_line(MAX_HEX_LINE, |line| {
        let Line::Text { bytes, .. } = line else {
            return Err(changed());
        };
        let nonce = *nonces.get(k).ok_or_else(changed)?;
        if bytes.len() < 2 * block::NONCE_BYTES {
            return Err(changed());
        }
        written.clear();
        written.extend_from_slice(&bytes[..bytes.len() - 2 * block::NONCE_BYTES]);
        written.extend_from_slice(hex_message::nonce_hex(nonce).as_bytes());
        if !reaches(&written, a.score) {
            return Err(changed());
        }
        out.bytes(&written)?;
        out.bytes(b"\n")?;
        k += 1;
        Ok(())
    })?;
    if k != count {
        return Err(changed());
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn scores() {
        assert_eq!(super::score("4000"), Ok(4000.0));
        assert_eq!(super::score(" 1.5e3 "), Ok(1500.0));
        assert!(super::score("-1").is_err());
        assert!(super::score("nan").is_err());
        assert!(super::score("inf").is_err());
        assert!(super::score("x").is_err());
    }
}
