//! `curlpow doctor`: why a GPU is or is not used on this host, one line per check with the fix
//! (the checks are in `doctor/`). Exit 0 when a GPU is usable or none is here, 1 when one is
//! here but cannot be used.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::doctor::{self, Options, Root};
use crate::exit::UsageError;
use crate::output::Stdout;

#[derive(Args)]
pub struct DoctorArgs {
    /// The whole report as one JSON object (`checks`: status, topic, message, fix).
    #[arg(long)]
    json: bool,
    /// Also discover software drivers (PoCL, lavapipe), as `--software` does for a search.
    #[arg(long)]
    software: bool,
    /// Check the files only: do not load the GPU drivers to list their devices.
    #[arg(long)]
    no_probe: bool,
    /// Read every file under DIR instead of `/` (devices are then not probed).
    #[arg(long, hide = true, env = "CURLPOW_DOCTOR_ROOT")]
    root: Option<PathBuf>,
}

pub fn run(a: DoctorArgs) -> Result<ExitCode> {
    let dir = a.root.filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = &dir {
        if !d.is_dir() {
            return Err(UsageError(format!("--root {}: not a folder", d.display())).into());
        }
    }
    let root = Root::new(dir);
    let probe = !a.no_probe && root.is_host();
    let report = doctor::collect(&Options {
        root,
        probe,
        software: a.software,
    });
    let mut out = Stdout::open()?;
    if a.json {
        doctor::print::json(&report, &mut out)?;
    } else {
        doctor::print::text(&report, &mut out)?;
    }
    out.finish()?;
    Ok(ExitCode::from(report.exit_code))
}
