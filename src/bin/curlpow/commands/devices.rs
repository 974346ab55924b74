//! `curlpow devices`: every device of every compiled backend.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use curlpow::{device::DeviceInfo, DeviceReport};

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
    // Discovery's notes are always printed here; -v adds each device's details to the table.
    let detail = a.engine.verbose;
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
        let mut json = Vec::with_capacity(list.len());
        for d in &list {
            let mut v = serde_json::to_value(d)?;
            v["kind"] = kind_name(&d.info)?.into();
            json.push(v);
        }
        out.line(serde_json::to_string_pretty(&json)?)?;
    } else {
        out.line(format_args!(
            "{:<14} {:<7} {:<9} {:<10} {:>12}  name",
            "id", "backend", "kind", "kernel", "est. M/s"
        ))?;
        for d in &list {
            out.line(format_args!(
                "{:<14} {:<7} {:<9} {:<10} {:>12.1}  {}",
                d.info.id,
                d.info.backend.name(),
                kind_name(&d.info)?,
                d.info.kernel,
                d.stats.nonces_per_second / 1e6,
                d.info.name
            ))?;
            if detail {
                for (key, value) in details(d)? {
                    out.line(format_args!("    {key}: {value}"))?;
                }
            }
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

/// The kind a user reads, in the table and in `--json` alike: `software` for a GPU API's driver
/// running on the CPU (PoCL, llvmpipe), else the hardware's (`gpu`, `cpu`, ...). The `software`
/// field of `--json` says the same as a boolean.
fn kind_name(info: &DeviceInfo) -> Result<String> {
    if info.software {
        return Ok("software".into());
    }
    Ok(serde_json::to_value(info.kind)?
        .as_str()
        .unwrap_or("other")
        .to_string())
}

/// What `-v` adds under a device's table line: the facts the table leaves out, the backend's
/// details (platform, driver, compute units, memory, tuning, launch figures) and this
/// process's statistics, one `key: value` a line.
fn details(d: &DeviceReport) -> Result<Vec<(String, String)>> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let mut lines = vec![("lanes".to_string(), d.info.lanes.to_string())];
    if let Some(id) = d.info.pci_vendor_id {
        lines.push(("pci vendor".into(), format!("0x{id:04x}")));
    }
    if let Some(bus) = &d.info.pci_bus_id {
        lines.push(("pci bus".into(), bus.clone()));
    }
    if let Some(n) = d.info.declared_nonces_per_second {
        lines.push(("declared M/s".into(), format!("{:.1}", n / 1e6)));
    }
    for (k, v) in &d.info.details {
        lines.push((k.clone(), text(v)));
    }
    if let serde_json::Value::Object(stats) = serde_json::to_value(&d.stats)? {
        for (k, v) in stats {
            lines.push((format!("stats.{k}"), text(&v)));
        }
    }
    Ok(lines)
}
