//! `curlpow devices`: every device of every compiled backend.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::output::Stdout;

#[derive(Args)]
pub struct DevicesArgs {
    /// JSON array of objects.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(a: DevicesArgs) -> Result<ExitCode> {
    let mut ea = a.engine.clone();
    ea.software = true;
    ea.verbose = true;
    let checked = ea.check()?;
    let mut out = Stdout::open()?;
    let (engine, _) = build_engine(&ea, &checked)?;
    let list = engine.device_report();
    if a.json {
        out.line(serde_json::to_string_pretty(&list)?)?;
    } else {
        for d in &list {
            out.line(format_args!(
                "{:<14} {:<7} {:<5} {}",
                d.info.id,
                d.info.backend.name(),
                serde_json::to_value(d.info.kind)?.as_str().unwrap_or(""),
                d.info.name
            ))?;
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
