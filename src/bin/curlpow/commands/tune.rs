//! `curlpow tune`: time each kernel variant on each selected GPU device for a bounded time,
//! keep the fastest whose nonces verify on the host, and record it in the tuner's cache
//! (`$XDG_CACHE_HOME/curlpow/tune.json`), which later processes start from. `--list` prints
//! the variants instead.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;
use crate::output::{errln, Stdout};
use crate::values;

#[derive(Args)]
pub struct TuneArgs {
    /// Seconds per device, 0.001 to 1e9: no candidate starts after them (the last one may
    /// still finish its build and its share).
    #[arg(long, default_value = "10", value_parser = values::bench_seconds)]
    seconds: Duration,
    /// Print the variants (one line each) instead of tuning.
    #[arg(long)]
    list: bool,
    /// One JSON object per line: with --list `backend`, `variant`, `build_options`,
    /// `default_for`; when tuning, one per candidate and device.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

/// One variant of one backend.
#[derive(serde::Serialize)]
struct Variant {
    backend: &'static str,
    variant: String,
    /// OpenCL: the `-D…` compiler options on a typical discrete GPU; wgpu: the
    /// `CURLPOW_WGPU_TUNING` pairs that select it.
    build_options: String,
    default_for: Vec<&'static str>,
}

fn variants() -> Vec<Variant> {
    #[allow(unused_mut)]
    let mut v = Vec::new();
    #[cfg(feature = "opencl")]
    for k in curlpow::internal::opencl::KernelConfig::candidates() {
        v.push(Variant {
            backend: "opencl",
            variant: k.name(),
            build_options: k.reference_build_options(),
            default_for: k.default_labels(),
        });
    }
    #[cfg(feature = "wgpu")]
    for (name, t, default_for) in curlpow::internal::wgpu::Tuning::variants() {
        v.push(Variant {
            backend: "wgpu",
            variant: name.into(),
            build_options: format!("fuse={},coop={}", t.fuse, t.coop),
            default_for,
        });
    }
    v
}

/// One candidate's measurement.
#[derive(serde::Serialize)]
struct Trial {
    device_id: String,
    device: String,
    variant: String,
    nonces_per_second: f64,
    verified: bool,
    chosen: bool,
    error: Option<String>,
}

/// A device opened with one candidate variant.
type Candidate = (String, std::sync::Arc<dyn curlpow::device::Device>);
/// Opens the device with one variant (when it is that variant's turn).
type Opener = Box<dyn FnOnce() -> Option<Candidate>>;

/// Every candidate of the device `id` (`backend`), each opened with its variant, lazily.
fn open_candidates(backend: curlpow::Backend, id: &str) -> Vec<(String, Opener)> {
    #[allow(unused_mut)]
    let mut out: Vec<(String, Opener)> = Vec::new();
    let opts = curlpow::device::DiscoverOptions {
        include_software: true,
    };
    match backend {
        #[cfg(feature = "opencl")]
        curlpow::Backend::Opencl => {
            for k in curlpow::internal::opencl::KernelConfig::candidates() {
                let id = id.to_string();
                out.push((
                    k.name(),
                    Box::new(move || {
                        let found = curlpow::internal::opencl::discover_opencl(&opts, Some(k));
                        found
                            .devices
                            .into_iter()
                            .find(|d| curlpow::device::Device::info(&**d).id == id)
                            .map(|d| (k.name(), d as std::sync::Arc<dyn curlpow::device::Device>))
                    }),
                ));
            }
        }
        #[cfg(feature = "wgpu")]
        curlpow::Backend::Wgpu => {
            for (name, t, _) in curlpow::internal::wgpu::Tuning::variants() {
                let id = id.to_string();
                out.push((
                    name.to_string(),
                    Box::new(move || {
                        let found = curlpow::internal::wgpu::discover_wgpu(&opts, Some(t), false);
                        found
                            .devices
                            .into_iter()
                            .find(|d| curlpow::device::Device::info(&**d).id == id)
                            .map(|d| {
                                (
                                    name.to_string(),
                                    d as std::sync::Arc<dyn curlpow::device::Device>,
                                )
                            })
                    }),
                ));
            }
        }
        _ => {}
    }
    out
}

/// Verify and time one opened candidate for `share` once it is built: a search at MWM 6 whose
/// nonce must pass the host check, then the rate at an unreachable weight.
fn trial(dev: &dyn curlpow::device::Device, share: Duration) -> Result<f64, String> {
    use curlpow::device::{CounterRange, SearchControl, SearchJob};
    dev.prepare().map_err(|e| e.to_string())?;
    let until = Instant::now() + share;
    let tx = curlpow::Transaction::from_trytes(&"9".repeat(2673)).map_err(|e| e.to_string())?;
    let job = SearchJob::new(&tx, 6).map_err(|e| e.to_string())?;
    let ctl = SearchControl::new(None, Some(until));
    let out = dev
        .search(&job, CounterRange::ALL, &ctl)
        .map_err(|e| e.to_string())?;
    let hit = out.hit.ok_or("no nonce before the time was up")?;
    job.verify(hit).ok_or("its nonce failed the host check")?;
    let slow = SearchJob::new(&tx, 243).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let ctl = SearchControl::new(None, Some(until));
    let out = dev
        .search(&slow, CounterRange::ALL, &ctl)
        .map_err(|e| e.to_string())?;
    Ok(out.nonces as f64 / t.elapsed().as_secs_f64().max(1e-9))
}

pub fn run(a: TuneArgs) -> Result<ExitCode> {
    let mut out = Stdout::open()?;
    if a.list {
        for v in variants() {
            if a.json {
                out.line(serde_json::to_string(&v)?)?;
            } else {
                out.line(format_args!(
                    "{:<7} {:<12} {:<22} {}",
                    v.backend,
                    v.variant,
                    v.default_for.join(","),
                    v.build_options
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
    drop(engine);
    if devices.is_empty() {
        return Err(UsageError(
            "tune: no OpenCL or wgpu device matches the selection (--software includes PoCL and lavapipe)".into(),
        )
        .into());
    }
    for info in devices {
        let started = Instant::now();
        let deadline = started + a.seconds;
        let mut candidates = open_candidates(info.backend, &info.id);
        // The device's current variant first: it is measured even when time runs short.
        if let Some(i) = candidates.iter().position(|c| c.0 == info.kernel) {
            let current = candidates.remove(i);
            candidates.insert(0, current);
        }
        let n = candidates.len().max(1) as u32;
        let mut trials: Vec<Trial> = Vec::new();
        for (k, (name, open)) in candidates.into_iter().enumerate() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            // An equal share of what is left for each candidate still to come.
            let share = (deadline - now) / (n - k as u32).max(1);
            let mut t = Trial {
                device_id: info.id.clone(),
                device: info.name.clone(),
                variant: name,
                nonces_per_second: 0.0,
                verified: false,
                chosen: false,
                error: None,
            };
            match open() {
                None => t.error = Some("the device did not open with this variant".into()),
                Some((_, dev)) => match trial(&*dev, share) {
                    Ok(rate) => {
                        t.nonces_per_second = rate;
                        t.verified = true;
                    }
                    Err(e) => t.error = Some(e),
                },
            }
            trials.push(t);
        }
        let best = trials
            .iter_mut()
            .filter(|t| t.verified && t.nonces_per_second > 0.0)
            .max_by(|x, y| x.nonces_per_second.total_cmp(&y.nonces_per_second));
        if let Some(b) = best {
            b.chosen = true;
            let backend = info.backend.name();
            let driver = match info.backend {
                curlpow::Backend::Wgpu => info.details.get("driver_info"),
                _ => info.details.get("driver_version"),
            }
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
            let key = curlpow::internal::tune_cache::key(backend, &info.name, &driver);
            if let Err(e) = curlpow::internal::tune_cache::store(
                &key,
                curlpow::internal::tune_cache::Tuned {
                    variant: b.variant.clone(),
                    nonces_per_second: b.nonces_per_second,
                },
            ) {
                errln!("curlpow: {e}");
            }
        } else {
            errln!("curlpow: tune: {}: no variant verified", info.id);
        }
        for t in &trials {
            if a.json {
                out.line(serde_json::to_string(t)?)?;
            } else {
                out.line(format_args!(
                    "{:<12} {:<12} {:>12.3} M nonces/s  {}{}",
                    t.device_id,
                    t.variant,
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
    Ok(ExitCode::SUCCESS)
}
