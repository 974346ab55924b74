//! `curlpow hash` and `curlpow verify`: hashes and weights, no device needed.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use curlpow::Transaction;

use crate::exit::UsageError;
use crate::input::{parse_all, read_input, InputArg};

#[derive(Args)]
pub struct VerifyArgs {
    /// Minimum weight magnitude to check against.
    #[arg(long)]
    mwm: usize,
    #[command(flatten)]
    input: InputArg,
}

pub fn run_hash(a: InputArg) -> Result<ExitCode> {
    let input = read_input(&a.file)?;
    let hashes = parse_all(&input, |s| {
        let n = s.chars().count();
        if n == 0 || n % 81 != 0 {
            return Err(curlpow::TryteError::Length {
                found: n,
                expected: "a multiple of 81",
            }
            .into());
        }
        let trits = curlpow::trytes_to_trits(s)?;
        curlpow::trits_to_trytes(&curlpow::hash(&trits)?)
    })?;
    let mut out = std::io::stdout().lock();
    for h in hashes {
        writeln!(out, "{h}")?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_verify(a: VerifyArgs) -> Result<ExitCode> {
    let input = read_input(&a.input.file)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let weights = parse_all(&input, |s| s.parse::<Transaction>().map(|t| t.weight()))?;
    let mut out = std::io::stdout().lock();
    let mut ok = true;
    for w in weights {
        writeln!(out, "{w}")?;
        ok &= w >= a.mwm;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
