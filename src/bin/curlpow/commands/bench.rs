//! `curlpow bench`: nonces per second on each selected device.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::output::Stdout;
use crate::values;

#[derive(Args)]
pub struct BenchArgs {
    /// Seconds to run each device, 0.001 to 1e9.
    #[arg(long, default_value = "5", value_parser = values::bench_seconds)]
    seconds: Duration,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
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
    for info in devices {
        let r = engine.bench(&info.id, a.seconds)?;
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
