//! The options every device-using command shares: checked before any input is read
//! ([`EngineArgs::check`]: names, bounds, environment variables, nothing discovered), then the
//! engine they describe, built only when there is work ([`build_engine`]).

use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use curlpow::device::Device;
use curlpow::{env, Backend, CpuKernel, Engine, Selection};

use crate::exit::UsageError;
use crate::output::errln;
use crate::values;

#[derive(Args, Clone)]
pub struct EngineArgs {
    /// CPU worker threads [default: CURLPOW_THREADS, else all cores]. At most
    /// 64, or 4 per logical CPU on a host with more than 16.
    #[arg(long, value_parser = values::threads)]
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
    /// Never tune a GPU device, and ignore the tuner's cache (as CURLPOW_TUNE=0): every GPU
    /// device runs its default variant.
    #[arg(long)]
    pub no_tune: bool,
    /// Print what device discovery found wrong or skipped (e.g. software drivers left out:
    /// --software uses them).
    #[arg(long, short)]
    pub verbose: bool,
}

/// What [`EngineArgs::check`] found valid, ready to build from.
pub struct Checked {
    threads: Option<usize>,
    kernel: Option<CpuKernel>,
    backends: Vec<Backend>,
    #[cfg(feature = "fault-injection")]
    faults: Vec<curlpow::fault::FaultSpec>,
}

impl EngineArgs {
    /// Every name and bound the options and environment variables hold, checked without
    /// discovering a device: a bad one is a usage error even when the input is empty.
    pub fn check(&self) -> Result<Checked> {
        let threads = match self.threads {
            Some(n) => Some(n),
            None if env::is_set(env::THREADS) => {
                let n = curlpow::internal::cpu::default_threads()?;
                Some(values::check_threads("CURLPOW_THREADS=", n).map_err(UsageError)?)
            }
            None => None,
        };
        let kernel = match &self.kernel {
            Some(k) => Some(CpuKernel::from_name(k)?),
            None => {
                CpuKernel::from_env().map_err(|e| UsageError(format!("CURLPOW_CPU_KERNEL: {e}")))?
            }
        };
        let mut backends = Vec::new();
        for name in &self.backend {
            let be = Backend::from_name(name).ok_or_else(|| {
                UsageError(format!(
                    "unknown backend {name:?} (known: cpu, opencl, wgpu)"
                ))
            })?;
            check_compiled(be, &format!("--backend {name}"))?;
            if !backends.contains(&be) {
                backends.push(be);
            }
        }
        for id in &self.device {
            check_device_id("--device", id)?;
        }
        for id in &self.exclude {
            check_device_id("--exclude", id)?;
        }
        #[cfg(feature = "fault-injection")]
        let faults = curlpow::fault::specs_from_env()?;
        #[cfg(not(feature = "fault-injection"))]
        if env::is_set(env::INJECT_FAULT) {
            errln!(
                "curlpow: note: CURLPOW_INJECT_FAULT is ignored: this binary was built without \
                 the fault-injection feature"
            );
        }
        Ok(Checked {
            threads,
            kernel,
            backends,
            #[cfg(feature = "fault-injection")]
            faults,
        })
    }
}

fn check_compiled(be: Backend, what: &str) -> Result<(), UsageError> {
    if be.compiled() {
        Ok(())
    } else {
        Err(UsageError(format!(
            "{what}: backend {be} is not compiled into this binary (rebuild with --features {be})"
        )))
    }
}

/// A device id's shape: `cpu`, `opencl:P:D`, `wgpu:N` (and `fault:N` in fault-injection
/// builds). Whether the device exists is known only after discovery.
fn check_device_id(flag: &str, id: &str) -> Result<(), UsageError> {
    let num = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = id.split(':').collect();
    let backend = match parts.as_slice() {
        ["cpu"] => Some(Backend::Cpu),
        ["opencl", p, d] if num(p) && num(d) => Some(Backend::Opencl),
        ["wgpu", n] if num(n) => Some(Backend::Wgpu),
        ["fault", n] if cfg!(feature = "fault-injection") && num(n) => None,
        _ => {
            return Err(UsageError(format!(
                "{flag} {id:?} is not a device id (ids look like cpu, opencl:0:0, wgpu:0; \
                 `curlpow devices` lists this host's)"
            )))
        }
    };
    match backend {
        Some(be) => check_compiled(be, &format!("{flag} {id}")),
        None => Ok(()),
    }
}

/// Build the engine the checked arguments describe, and the selection they make.
pub fn build_engine(a: &EngineArgs, c: &Checked) -> Result<(Engine, Selection)> {
    build_engine_with(a, c, Vec::new(), true)
}

/// [`build_engine`] with `extra` devices beside this host's (remote workers, `serve --broker`);
/// with `local` false, this host's own devices are left out of the engine's device list (its
/// CPU pool still exists, one thread unless `--threads` says otherwise, and runs nothing).
pub fn build_engine_with(
    a: &EngineArgs,
    c: &Checked,
    extra: Vec<Arc<dyn Device>>,
    local: bool,
) -> Result<(Engine, Selection)> {
    let mut b = Engine::builder()
        .pin_threads(a.pin)
        .include_software(a.software)
        .force_32bit_lanes(a.wgpu_32bit)
        .local_devices(local)
        .tune(!a.no_tune);
    if let Some(n) = c.threads {
        b = b.threads(n);
    }
    if let Some(k) = c.kernel {
        b = b.cpu_kernel(k);
    }
    #[cfg(feature = "fault-injection")]
    for (i, spec) in c.faults.iter().enumerate() {
        b = b.add_device(curlpow::fault::FaultDevice::new(i, *spec));
    }
    let has_extra = !extra.is_empty();
    for d in extra {
        b = b.add_device(d);
    }
    let mut sel = Selection {
        backends: c.backends.clone(),
        devices: a.device.clone(),
        exclude: a.exclude.clone(),
    };
    // `--backend` picks among this host's devices; the extra ones stay allowed beside them.
    if has_extra && !sel.backends.is_empty() {
        sel.backends.push(Backend::Custom);
    }
    // Which backends are discovered, software drivers for named devices, the second look
    // with software drivers for a backend that has only those: the builder's policy.
    let built = b.build_for(&sel)?;
    if built.software_fallback {
        errln!(
            "curlpow: note: no hardware device for the selected backend; using its software driver"
        );
    }
    let engine = built.engine;
    // Discovery notes (a skipped software adapter, a driver that did not answer) matter when
    // the caller asked for devices; a plain `pow` on a headless box stays quiet.
    if a.verbose || !a.backend.is_empty() || !a.device.is_empty() {
        for w in engine.discovery_warnings() {
            errln!("curlpow: note: {w}");
        }
    }
    engine
        .check_selection(&sel)
        .map_err(|e| UsageError(e.to_string()))?;
    Ok((engine, sel))
}
