//! `curlpow attach`: IRI's attachToTangle offline: chain a bundle to two tips, one transaction a
//! line in (any order), the attached bundle out tail first (currentIndex 0 first), as IRI answers.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use curlpow::{Hash, PowOptions, Transaction};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::input::{parse_all, read_input, InputArg};

#[derive(Args)]
pub struct AttachArgs {
    /// The trunk tip: 81 trytes (the head's trunk; every other transaction's branch).
    #[arg(long)]
    trunk: String,
    /// The branch tip: 81 trytes (the head's branch).
    #[arg(long)]
    branch: String,
    /// Minimum weight magnitude (mainnet 14, testnet 9).
    #[arg(long, default_value_t = 14)]
    mwm: usize,
    /// Give up after this many seconds in all (exit 3).
    #[arg(long)]
    timeout: Option<f64>,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArg,
}

fn hash_arg(flag: &str, s: &str) -> Result<Hash, UsageError> {
    s.trim()
        .parse()
        .map_err(|e| UsageError(format!("{flag}: {e}")))
}

pub fn run(a: AttachArgs) -> Result<ExitCode> {
    let trunk = hash_arg("--trunk", &a.trunk)?;
    let branch = hash_arg("--branch", &a.branch)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let input = read_input(&a.input.file)?;
    let txs = parse_all(&input, |s| s.parse::<Transaction>())?;
    if txs.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let (engine, selection) = build_engine(&a.engine)?;
    let mut opts = PowOptions::mwm(a.mwm).selection(selection);
    if let Some(t) = a.timeout {
        if !(t.is_finite() && t >= 0.0) {
            return Err(UsageError(format!("--timeout {t} is not a number of seconds")).into());
        }
        opts = opts.timeout(Duration::from_secs_f64(t.min(1e9)));
    }
    let done = engine.attach_to_tangle(&trunk, &branch, &txs, &opts)?;
    let mut out = std::io::stdout().lock();
    for tx in &done.transactions {
        writeln!(out, "{}", tx.to_trytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
