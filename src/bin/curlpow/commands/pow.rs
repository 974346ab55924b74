//! `curlpow pow`: nonces for one transaction a line.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use curlpow::{Engine, Error, PowOptions, Transaction};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::input::{parse_all, read_input, InputArg};
use crate::progress::Progress;

#[derive(Args)]
pub struct PowArgs {
    /// Minimum weight magnitude: trailing zero trits of the hash (mainnet 14, testnet 9).
    #[arg(long, default_value_t = 14)]
    mwm: usize,
    /// Give up after this many seconds in all (exit 3).
    #[arg(long)]
    timeout: Option<f64>,
    /// Run each search on every free device at once (lowest latency).
    #[arg(long)]
    latency: bool,
    /// Print per-device statistics to stderr at the end.
    #[arg(long)]
    stats: bool,
    /// No progress display.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArg,
}

pub fn run(a: PowArgs) -> Result<ExitCode> {
    let input = read_input(&a.input.file)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let txs = parse_all(&input, |s| s.parse::<Transaction>())?;
    if txs.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let (engine, selection) = build_engine(&a.engine)?;
    let mut opts = PowOptions::mwm(a.mwm)
        .selection(selection)
        .latency(a.latency);
    if let Some(t) = a.timeout {
        if !(t.is_finite() && t >= 0.0) {
            return Err(UsageError(format!("--timeout {t} is not a number of seconds")).into());
        }
        opts = opts.timeout(Duration::from_secs_f64(t.min(1e9)));
    }
    let progress = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| Progress::start(engine.clone(), txs.len()));
    let started = Instant::now();
    let results = engine.pow_many(&txs, &opts);
    if let Some(p) = progress {
        p.finish();
    }
    let done = results.iter().filter(|r| r.is_ok()).count();
    let first_err = results.into_iter().collect::<Result<Vec<_>, _>>();
    if a.stats {
        print_stats(&engine);
    }
    match first_err {
        Ok(results) => {
            let mut out = std::io::stdout().lock();
            for r in &results {
                writeln!(out, "{}", r.transaction.to_trytes())?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ Error::Timeout { .. }) => {
            eprintln!(
                "curlpow: timed out after {:.2?}: {done} of {} transactions done, nothing written",
                started.elapsed(),
                txs.len()
            );
            Err(e.into())
        }
        Err(e) => Err(e.into()),
    }
}

fn print_stats(engine: &Engine) {
    eprintln!(
        "{:<14} {:>8} {:>14} {:>6} {:>6} {:>10}",
        "device", "searches", "nonces", "hits", "errors", "busy"
    );
    for d in engine.device_report() {
        let s = &d.stats;
        eprintln!(
            "{:<14} {:>8} {:>14} {:>6} {:>6} {:>9.3}s",
            d.info.id, s.searches, s.nonces, s.hits, s.errors, s.busy_seconds
        );
    }
}
