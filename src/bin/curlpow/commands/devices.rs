//! `curlpow devices`: every device of every compiled backend.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::output::{errln, Stdout};

#[derive(Args)]
pub struct DevicesArgs {
    /// JSON array of objects.
    #[arg(long)]
    json: bool,
    /// Compile every GPU device's kernel first, so that build times, registers and spills
    /// (where the driver tells) appear under `details.launch`.
    #[arg(long)]
    prepare: bool,
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
    if a.prepare {
        for d in engine.device_report() {
            if d.info.backend != curlpow::Backend::Cpu {
                if let Err(e) = engine.prepare_device(&d.info.id) {
                    errln!("curlpow: {}: {e}", d.info.id);
                }
            }
        }
    }
    let list = engine.device_report();
    if a.json {
        out.line(serde_json::to_string_pretty(&list)?)?;
    } else {
        out.line(format_args!(
            "{:<14} {:<7} {:<9} {:<10} {:>12}  name",
            "id", "backend", "kind", "kernel", "est. M/s"
        ))?;
        for d in &list {
            let kind = serde_json::to_value(d.info.kind)?;
            let kind = kind.as_str().unwrap_or("");
            out.line(format_args!(
                "{:<14} {:<7} {:<9} {:<10} {:>12.1}  {}",
                d.info.id,
                d.info.backend.name(),
                if d.info.software { "software" } else { kind },
                d.info.kernel,
                d.stats.nonces_per_second / 1e6,
                d.info.name
            ))?;
        }
        if list.iter().any(|d| d.info.software) {
            out.line(
                "(software: a GPU API's driver running on the CPU; used only with --software or --device)",
            )?;
        }
    }
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
