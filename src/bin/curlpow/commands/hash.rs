//! `curlpow hash` and `curlpow verify`: hashes and weights, no device needed.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use curlpow::{Backend, Engine, Transaction};

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
    let inputs = parse_all(&input, |s| {
        let n = s.chars().count();
        if n == 0 || n % 81 != 0 {
            return Err(curlpow::TryteError::Length {
                found: n,
                expected: "a multiple of 81",
            }
            .into());
        }
        curlpow::trytes_to_trits(s)
    })?;
    let refs: Vec<&[i8]> = inputs.iter().map(|t| &t[..]).collect();
    let hashes = hasher()?.hash_many_trits(&refs)?;
    let mut out = std::io::stdout().lock();
    for h in hashes {
        writeln!(out, "{}", curlpow::trits_to_trytes(&h)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_verify(a: VerifyArgs) -> Result<ExitCode> {
    let input = read_input(&a.input.file)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let txs = parse_all(&input, |s| s.parse::<Transaction>())?;
    let weights = hasher()?
        .hash_many(&txs)
        .iter()
        .map(|h| curlpow::trailing_zeros(h))
        .collect::<Vec<_>>();
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

/// The CPU pool only (no device discovery): hashes are bit-sliced across transactions on it,
/// `CURLPOW_THREADS` workers (default: every core), the `CURLPOW_CPU_KERNEL` kernel.
fn hasher() -> Result<Engine> {
    Ok(Engine::builder().backends(&[Backend::Cpu]).build()?)
}
