//! `curlpow bench`: nonces per second on each selected device.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::output::Stdout;
use crate::values;

/// The search `bench` measures.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Pow {
    Transaction,
    Block,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Seconds to run each device, 0.001 to 1e9.
    #[arg(long, default_value = "5", value_parser = values::bench_seconds)]
    seconds: Duration,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    /// Which search: `transaction` (the legacy PoW) or `block` (Chrysalis/Stardust messages
    /// and blocks; devices that do not run it are skipped).
    #[arg(long, value_enum, default_value_t = Pow::Transaction)]
    pow: Pow,
    /// Instead of the rate: this many whole PoWs at --mwm on each device, their latency split
    /// into mid-state, launches, read-back and host check (for scripts/gpu-check.sh).
    #[arg(long, hide = true)]
    latency_pows: Option<usize>,
    /// The MWM of --latency-pows.
    #[arg(long, hide = true, default_value_t = 14)]
    mwm: usize,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(a: BenchArgs) -> Result<ExitCode> {
    let mut ea = a.engine.clone();
    if ea.backend.is_empty() && ea.device.is_empty() {
        ea.backend.push("cpu".into());
    }
    let checked = ea.check()?;
    let mut out = Stdout::open()?;
    let (engine, selection) = build_engine(&ea, &checked)?;
    let devices = engine.select(&selection);
    if devices.is_empty() {
        return Err(UsageError("no device matches the selection".into()).into());
    }
    if let Some(n) = a.latency_pows {
        for info in devices {
            let r = engine.bench_latency(&info.id, a.mwm, n.max(1))?;
            println!("{}", serde_json::to_string(&r)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    for info in devices {
        let r = match a.pow {
            Pow::Transaction => engine.bench(&info.id, a.seconds)?,
            Pow::Block => match engine.bench_block(&info.id, a.seconds) {
                Ok(r) => r,
                Err(e) if !engine.runs_block_pow(&info.id) => {
                    crate::output::errln!("curlpow: {}: skipped: {e}", info.id);
                    continue;
                }
                Err(e) => return Err(e.into()),
            },
        };
        if a.json {
            out.line(serde_json::to_string(&r)?)?;
        } else {
            out.line(format_args!(
                "{:<12} {:<40} {:>10.3} M nonces/s  ({} nonces in {:.2} s{})",
                r.device_id,
                r.device,
                r.nonces_per_second / 1e6,
                r.nonces,
                r.seconds,
                format!(", kernel {}", r.kernel)
                    + &r.threads
                        .map(|t| format!(", {t} threads"))
                        .unwrap_or_default()
            ))?;
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
