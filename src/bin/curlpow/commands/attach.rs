//! `curlpow attach`: IRI's attachToTangle offline: chain a bundle to two tips, one transaction a
//! line in (any order), the attached bundle out tail first (currentIndex 0 first), as IRI answers.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use curlpow::trits::read_balanced;
use curlpow::{attach::Hash, Error, Field, PowOptions, Transaction};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::{Stopped, UsageError};
use crate::input::{parse_tx, Input, InputArg, MAX_TX_LINE};
use crate::output::Stdout;
use crate::recheck;
use crate::values;

/// The most transactions one attach takes (IRI's `maxRequestsList`): a bundle is chained as a
/// whole, so it is held in memory.
const MAX_TRANSACTIONS: usize = 1000;

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
    /// Give up after this many seconds in all (exit 3); 0: no limit, as without it.
    #[arg(long, value_parser = values::seconds)]
    timeout: Option<Duration>,
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
    let mwm = curlpow::Mwm::try_from(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let checked = a.engine.check()?;
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a.input)?;
    let mut txs = Vec::new();
    let lines = input.check_lines(MAX_TX_LINE, "2673 trytes", |bytes| {
        let tx = parse_tx(bytes)?;
        if txs.len() < MAX_TRANSACTIONS {
            txs.push(tx);
        }
        Ok(())
    })?;
    if lines > MAX_TRANSACTIONS {
        return Err(UsageError(format!(
            "{lines} transactions: one attach takes at most {MAX_TRANSACTIONS} (a bundle)"
        ))
        .into());
    }
    if txs.is_empty() {
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let (engine, selection) = build_engine(&a.engine, &checked)?;
    let started = Instant::now();
    let mut opts = PowOptions::new(mwm).selection(selection);
    // 0: no limit, as for `serve --request-timeout` (`values::seconds`).
    if let Some(d) = a
        .timeout
        .filter(|t| !t.is_zero())
        .and_then(|t| started.checked_add(t))
    {
        opts = opts.deadline(d);
    }
    let done = match engine.attach_to_tangle(&trunk, &branch, &txs, &opts) {
        Ok(done) => done,
        Err(Error::Timeout { .. }) => {
            return Err(Stopped(format!(
                "timed out after {:.2?}: nothing written",
                started.elapsed()
            ))
            .into())
        }
        Err(e) => return Err(e.into()),
    };
    // The library chains in order of currentIndex, highest first (equal ones in input order),
    // and answers tail first: the input of written transaction j.
    let mut order: Vec<&Transaction> = txs.iter().collect();
    order.sort_by_key(|tx| std::cmp::Reverse(read_balanced(tx.field(Field::CurrentIndex))));
    order.reverse();
    let written = done.trytes();
    recheck::check_attached(&written, &order, &trunk, &branch, a.mwm)?;
    for line in &written {
        out.line(line)?;
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
