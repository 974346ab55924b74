//! `curlpow verify`: each transaction's weight (its hash's trailing zero trits), exit 1 when
//! one is below `--mwm`; the lines are hashed by `hash`'s pipeline ([`super::hash`]).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use curlpow::TRANSACTION_TRYTES;

use super::hash::{hash_input, Chunk, Emit};
use crate::exit::UsageError;
use crate::input::{parse_tx, Input, InputArg, MAX_TX_LINE, NAMED_BAD_LINES};
use crate::output::{errln, Stdout};

#[derive(Args)]
pub struct VerifyArgs {
    /// Minimum weight magnitude to check against.
    #[arg(long)]
    mwm: usize,
    #[command(flatten)]
    input: InputArg,
}

/// A `verify` line: a transaction (2673 trytes), or what is wrong with it as the transaction
/// parser says it.
fn tx_line(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() == TRANSACTION_TRYTES && curlpow::trits::is_trytes(bytes) {
        return Ok(());
    }
    parse_tx(bytes).map(drop)
}

/// `verify`: each line's weight; the lines below `--mwm` counted, the first ones named.
struct Weights {
    mwm: usize,
    total: u64,
    below: u64,
    /// Line number and weight of the first [`NAMED_BAD_LINES`] below `--mwm`.
    named: Vec<(usize, usize)>,
}

impl Emit for Weights {
    fn add(&mut self, chunk: &Chunk, hashes: &[[i8; 243]], text: &mut Vec<u8>) {
        for (h, &number) in hashes.iter().zip(&chunk.numbers) {
            let w = curlpow::trits::trailing_zeros(h);
            push_number(w, text);
            self.total += 1;
            if w < self.mwm {
                self.below += 1;
                if self.below <= NAMED_BAD_LINES {
                    self.named.push((number, w));
                }
            }
        }
    }

    fn reset(&mut self) {
        (self.total, self.below) = (0, 0);
        self.named.clear();
    }
}

pub fn run_verify(a: VerifyArgs) -> Result<ExitCode> {
    // Checked before any input is read: a bad one is a usage error even for empty input.
    curlpow::Mwm::try_from(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let mut out = Stdout::open()?;
    let mut input = Input::open(&a.input)?;
    let weights = Weights {
        mwm: a.mwm,
        total: 0,
        below: 0,
        named: Vec::new(),
    };
    let w = hash_input(
        &mut input,
        MAX_TX_LINE,
        "2673 trytes",
        tx_line,
        weights,
        &mut out,
    )?;
    out.finish()?;
    for (number, weight) in &w.named {
        errln!(
            "curlpow: line {number}: weight {weight} is below --mwm {}",
            a.mwm
        );
    }
    if w.below == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    Err(anyhow::anyhow!(
        "{} of {} transactions below --mwm {}{}",
        w.below,
        w.total,
        a.mwm,
        if w.below > NAMED_BAD_LINES {
            format!(" (the first {NAMED_BAD_LINES} named)")
        } else {
            String::new()
        }
    ))
}

/// Append a weight (0..=243) and a line end.
fn push_number(w: usize, out: &mut Vec<u8>) {
    use std::io::Write;
    let _ = writeln!(out, "{w}");
}
