//! The options every device-using command shares, and building the engine from them.

use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use curlpow::device::Device;
use curlpow::{Backend, CpuKernel, Engine, Selection};

use crate::exit::UsageError;

#[derive(Args, Clone)]
pub struct EngineArgs {
    /// CPU worker threads [default: CURLPOW_THREADS, else all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Force a CPU kernel: portable, avx2, avx512 [default: CURLPOW_CPU_KERNEL, else the fastest].
    #[arg(long)]
    pub kernel: Option<String>,
    /// Only these backends: cpu, opencl, wgpu (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// Only these devices, by id from `curlpow devices` (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub device: Vec<String>,
    /// Never these devices (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Also use software GPU drivers (PoCL, lavapipe); implied by naming one with --device.
    #[arg(long)]
    pub software: bool,
    /// wgpu: use 32-bit lanes even where 64-bit integers are offered.
    #[arg(long)]
    pub wgpu_32bit: bool,
    /// Pin CPU worker threads to cores.
    #[arg(long)]
    pub pin: bool,
    /// Print what device discovery found wrong or skipped (e.g. software drivers left out:
    /// --software uses them).
    #[arg(long, short)]
    pub verbose: bool,
}

/// Build the engine the arguments describe, and the selection they make.
pub fn build_engine(a: &EngineArgs) -> Result<(Engine, Selection)> {
    build_engine_with(a, Vec::new(), true)
}

/// [`build_engine`] with `extra` devices beside this host's (remote workers, `serve --broker`);
/// with `local` false, this host's own devices are left out of the engine's device list (its
/// CPU pool still exists, one thread unless `--threads` says otherwise, and runs nothing).
pub fn build_engine_with(
    a: &EngineArgs,
    extra: Vec<Arc<dyn Device>>,
    local: bool,
) -> Result<(Engine, Selection)> {
    let mut b = Engine::builder().pin_threads(a.pin);
    let mut backends = Vec::new();
    if let Some(n) = a.threads {
        if n == 0 {
            return Err(UsageError("--threads must be at least 1".into()).into());
        }
        b = b.threads(n);
    }
    if let Some(k) = &a.kernel {
        b = b.cpu_kernel(CpuKernel::from_name(k)?);
    }
    for name in &a.backend {
        let be = Backend::from_name(name).ok_or_else(|| {
            UsageError(format!(
                "unknown backend {name:?} (known: cpu, opencl, wgpu)"
            ))
        })?;
        if !be.compiled() {
            return Err(UsageError(format!(
                "backend {be} is not compiled into this binary (rebuild with --features {be})"
            ))
            .into());
        }
        backends.push(be);
    }
    // Naming a software device (PoCL, lavapipe) or a GPU backend on a host without GPUs must
    // find it, so naming devices lets software drivers be discovered.
    let software = a.software || !a.device.is_empty();
    b = b.include_software(software).force_32bit_lanes(a.wgpu_32bit);
    if !backends.is_empty() {
        let mut discover = backends.clone();
        if !discover.contains(&Backend::Cpu) {
            discover.push(Backend::Cpu);
        }
        b = b.backends(&discover);
    }
    let has_extra = !extra.is_empty();
    for d in extra {
        b = b.add_device(d);
    }
    if !local {
        b = b.backends(&[]);
        if a.threads.is_none() {
            b = b.threads(1);
        }
    }
    let mut sel = Selection {
        backends,
        devices: a.device.clone(),
        exclude: a.exclude.clone(),
    };
    // `--backend` picks among this host's devices; the extra ones stay allowed beside them.
    if has_extra && !sel.backends.is_empty() {
        sel.backends.push(Backend::Custom);
    }
    let mut engine = b.clone().build()?;
    // `--backend opencl` (or wgpu) on a host whose only driver of that API is a software one
    // (PoCL, lavapipe) asks for that driver: look again with software drivers allowed.
    if !software && !sel.backends.is_empty() && engine.check_selection(&sel).is_err() {
        let again = b.include_software(true).build()?;
        if again.check_selection(&sel).is_ok() {
            eprintln!("curlpow: note: no hardware device for the selected backend; using its software driver");
            engine = again;
        }
    }
    // Discovery notes (a skipped software adapter, a driver that did not answer) matter when
    // the caller asked for devices; a plain `pow` on a headless box stays quiet.
    if a.verbose || !a.backend.is_empty() || !a.device.is_empty() {
        for w in engine.discovery_warnings() {
            eprintln!("curlpow: note: {w}");
        }
    }
    engine
        .check_selection(&sel)
        .map_err(|e| UsageError(e.to_string()))?;
    Ok((engine, sel))
}
