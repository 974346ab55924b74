//! `curlpow tune`: tune each selected GPU device now (the library's tuner,
//! [`curlpow::Engine::tune_device`]: its variants × launch sizes timed for a bounded time, the
//! fastest whose nonces verify on the host kept and recorded in the tuner's cache,
//! `$XDG_CACHE_HOME/curlpow/tune.json`, which later processes start from). `--list` prints the
//! variants of both proofs of work instead, with what to compile to rebuild each by hand.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::output::{errln, Stdout};
use crate::values;

#[derive(Args)]
pub struct TuneArgs {
    /// Seconds per device, 0.001 to 1e9: no trial starts after them (the one under way may
    /// still finish its build and its share).
    #[arg(long, default_value = "10", value_parser = values::bench_seconds)]
    seconds: Duration,
    /// Print the variants (one line each) instead of tuning.
    #[arg(long)]
    list: bool,
    /// One JSON object per line: with --list `pow` (`transaction` or `block`), `backend`,
    /// `variant`, `build_options`, `nvidia_options` (added on NVIDIA's OpenCL: the register
    /// cap), `default_for`, `kernel` (its file under `kernels/`) and `entry` (the kernel
    /// function); when tuning, one per trial (variant and launch size) and device.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(a: TuneArgs) -> Result<ExitCode> {
    let mut out = Stdout::open()?;
    if a.list {
        for v in curlpow::tune::tune_variants() {
            if a.json {
                out.line(serde_json::to_string(&v)?)?;
            } else {
                out.line(format_args!(
                    "{:<11} {:<7} {:<12} {:<22} {:<24} {}{}",
                    v.pow,
                    v.backend,
                    v.variant,
                    v.default_for.join(","),
                    format!("{}:{}", v.kernel, v.entry),
                    v.build_options,
                    if v.nvidia_options.is_empty() {
                        String::new()
                    } else {
                        format!(" (NVIDIA: {})", v.nvidia_options)
                    }
                ))?;
            }
        }
        out.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let ea = a.engine.clone();
    let checked = ea.check()?;
    let (engine, selection) = build_engine(&ea, &checked)?;
    let devices: Vec<_> = engine
        .select(&selection)
        .into_iter()
        .filter(|d| matches!(d.backend, curlpow::Backend::Opencl | curlpow::Backend::Wgpu))
        .collect();
    if devices.is_empty() {
        return Err(UsageError(
            "tune: no OpenCL or wgpu device matches the selection (--software includes PoCL and lavapipe)".into(),
        )
        .into());
    }
    // A choice that could not be recorded is lost to every later process: a failure (exit 1),
    // reported after the trials are printed.
    let mut unsaved = Vec::new();
    for info in devices {
        let report = engine.tune_device(&info.id, a.seconds)?;
        if let Some(e) = &report.cache_error {
            unsaved.push(format!("{}: {e}", info.id));
        }
        if report.variant.is_none() {
            errln!("curlpow: tune: {}: no variant verified", info.id);
        }
        if report.variant.is_some() && report.block_variant.is_none() {
            errln!(
                "curlpow: tune: {}: no block-search variant verified (block PoW keeps its default)",
                info.id
            );
        }
        for t in &report.trials {
            if a.json {
                out.line(serde_json::to_string(t)?)?;
            } else {
                out.line(format_args!(
                    "{:<12} {:<11} {:<12} {:<6} {:>9} {:>12.3} M nonces/s  {}{}",
                    t.device_id,
                    t.pow,
                    t.variant,
                    t.phase,
                    t.launch_items
                        .map_or_else(|| "adaptive".to_string(), |n| n.to_string()),
                    t.nonces_per_second / 1e6,
                    if t.chosen { "chosen" } else { "" },
                    t.error
                        .as_deref()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                ))?;
            }
        }
    }
    out.finish()?;
    if !unsaved.is_empty() {
        anyhow::bail!(
            "tune: the choice could not be written to the cache ({})",
            unsaved.join("; ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
