//! What the backends report on this host: each device, the pairs that are one physical GPU
//! seen through OpenCL and Vulkan (the engine keeps one of each pair), which device and kernel
//! variant a search would use and why (the tuner's cache, `CURLPOW_*` settings, software
//! drivers left out).

use serde::Serialize;

use curlpow::{Backend, DeviceKind, Engine, Selection};

use super::Check;

/// One device the engine kept.
#[derive(Debug, Clone, Serialize)]
pub struct LiveDevice {
    pub id: String,
    pub backend: String,
    pub name: String,
    pub kind: String,
    pub software: bool,
    /// The kernel (CPU: `avx2`, ...; GPU: the kernel's name).
    pub kernel: String,
    /// The GPU kernel variant and where it came from (`tuned`, `env`, `default`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant_source: Option<String>,
    pub estimated_nonces_per_second: f64,
}

/// The backends' report.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// Discovery included software drivers (`--software`).
    pub software: bool,
    pub devices: Vec<LiveDevice>,
    /// "A and B are the same GPU; using A", one per pair.
    pub pairs: Vec<String>,
    /// Discovery's other notes (backends not probed, software drivers skipped, driver errors).
    pub notes: Vec<String>,
    /// The device a search would start on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_device: Option<String>,
    /// The `CURLPOW_*` settings in the environment.
    pub settings: Vec<(String, String)>,
    /// The tuner's cache file, and whether it is read (`CURLPOW_TUNE=0` turns it off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tune_cache: Option<String>,
    pub tune_cache_used: bool,
    /// Hardware GPUs (and accelerators) among the devices.
    pub hardware_gpus: usize,
    /// The engine could not be built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Discover this host's devices as a search would (with software drivers when `software`).
pub fn probe(software: bool) -> Live {
    let mut settings: Vec<(String, String)> = curlpow::env::curlpow_vars()
        .into_iter()
        .filter(|(k, _)| k.starts_with("CURLPOW_") && k != "CURLPOW_DOCTOR_ROOT")
        .map(|(k, v)| {
            // Credentials (a password, a broker URL with one) are not printed.
            let secret = ["AUTH", "BROKER", "PASS", "TOKEN", "SECRET"]
                .iter()
                .any(|s| k.contains(s));
            (k, if secret { "(set, not shown)".into() } else { v })
        })
        .collect();
    settings.sort();
    let (tune_cache, tune_cache_used) = tune_cache();
    let mut live = Live {
        software,
        devices: Vec::new(),
        pairs: Vec::new(),
        notes: Vec::new(),
        search_device: None,
        settings,
        tune_cache,
        tune_cache_used,
        hardware_gpus: 0,
        error: None,
    };
    let engine = match Engine::builder().include_software(software).build() {
        Ok(e) => e,
        Err(e) => {
            live.error = Some(e.to_string());
            return live;
        }
    };
    for w in engine.discovery_warnings() {
        if w.contains("are the same GPU") {
            live.pairs.push(w.clone());
        } else {
            live.notes.push(w.clone());
        }
    }
    for d in engine.device_report() {
        let i = d.info;
        let text = |k: &str| {
            i.details
                .get(k)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let kind = serde_json::to_value(i.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "other".into());
        if !i.software && matches!(i.kind, DeviceKind::Gpu | DeviceKind::Accelerator) {
            live.hardware_gpus += 1;
        }
        live.devices.push(LiveDevice {
            id: i.id.clone(),
            backend: i.backend.name().into(),
            name: i.name.clone(),
            kind,
            software: i.software,
            kernel: i.kernel.clone(),
            variant: text("variant"),
            variant_source: text("kernel_source"),
            estimated_nonces_per_second: d.stats.nonces_per_second,
        });
    }
    // A search starts on the free device expected to finish it first: at the start, the one
    // with the highest estimated rate.
    let allowed = engine.select(&Selection::default());
    live.search_device = live
        .devices
        .iter()
        .filter(|d| allowed.iter().any(|a| a.id == d.id))
        .max_by(|a, b| {
            a.estimated_nonces_per_second
                .total_cmp(&b.estimated_nonces_per_second)
        })
        .map(|d| d.id.clone());
    live
}

#[cfg(any(feature = "opencl", feature = "wgpu"))]
fn tune_cache() -> (Option<String>, bool) {
    use curlpow::internal::tune_cache;
    (
        tune_cache::path().map(|p| p.display().to_string()),
        tune_cache::enabled(),
    )
}

#[cfg(not(any(feature = "opencl", feature = "wgpu")))]
fn tune_cache() -> (Option<String>, bool) {
    (None, false)
}

/// A line per device, pair and note, the search's choice and why.
pub fn checks(l: &Live, gpu_present: bool) -> Vec<Check> {
    let mut out = Vec::new();
    if let Some(e) = &l.error {
        let c = if gpu_present {
            Check::fail
        } else {
            Check::warn
        };
        out.push(c(
            "backend",
            format!("the engine could not be built: {e}"),
            "fix or unset the setting it names",
        ));
        return out;
    }
    for d in &l.devices {
        let variant = match (&d.variant, d.variant_source.as_deref()) {
            (Some(v), Some(s)) => format!(", variant {v} ({})", source_text(s, d)),
            (Some(v), None) => format!(", variant {v}"),
            _ => String::new(),
        };
        out.push(Check::ok(
            "device",
            format!(
                "{} ({}, {}{}): {}, kernel {}{variant}, est. {:.1} M nonces/s",
                d.id,
                d.backend,
                d.kind,
                if d.software { ", software" } else { "" },
                d.name,
                d.kernel,
                d.estimated_nonces_per_second / 1e6
            ),
        ));
    }
    for p in &l.pairs {
        out.push(Check::ok("pair", p.clone()));
    }
    for n in &l.notes {
        let quiet = n.contains("not probed") || n.contains("skipped");
        out.push(if quiet {
            Check::ok("discovery", n.clone())
        } else {
            Check::warn(
                "discovery",
                n.clone(),
                "`curlpow devices -v` shows each device's details; see the driver lines above",
            )
        });
    }
    if !l.software
        && l.notes
            .iter()
            .any(|n| n.contains("not probed") || n.contains("skipped"))
    {
        out.push(Check::ok(
            "discovery",
            "software drivers (PoCL, lavapipe) are left out: a search never uses them unless \
             --software (or --device names one)",
        ));
    }
    for (k, v) in &l.settings {
        out.push(Check::ok("setting", format!("{k}={v}")));
    }
    match (&l.tune_cache, l.tune_cache_used) {
        (Some(p), true) => {
            let state = if std::path::Path::new(p).exists() {
                "read at discovery"
            } else {
                "none yet: GPUs tune themselves on their first search"
            };
            out.push(Check::ok("tune", format!("tuner cache {p}: {state}")));
        }
        (Some(p), false) => out.push(Check::ok(
            "tune",
            format!("tuner cache {p} ignored: CURLPOW_TUNE=0"),
        )),
        (None, _) => {}
    }
    if let Some(id) = &l.search_device {
        let d = l.devices.iter().find(|d| &d.id == id);
        let why = match d {
            Some(d) if d.backend == Backend::Cpu.name() => {
                if l.hardware_gpus == 0 {
                    "the CPU: no GPU device was found".to_string()
                } else {
                    "the CPU: its estimated rate is above the GPUs'".to_string()
                }
            }
            Some(d) => format!(
                "{} ({}): the highest estimated rate; the others take searches that arrive \
                 while it is busy",
                d.id, d.name
            ),
            None => id.clone(),
        };
        out.push(Check::ok(
            "search",
            format!("a search would start on {why}"),
        ));
    }
    if gpu_present && l.hardware_gpus == 0 {
        out.push(Check::fail(
            "backend",
            "a GPU device node is here but neither backend reports a GPU",
            "install the driver the lines above name; `curlpow devices -v` shows what discovery \
             said",
        ));
    }
    out
}

fn source_text(source: &str, d: &LiveDevice) -> String {
    match source {
        "tuned" => "chosen by the tuner, from its cache".into(),
        "env" => format!(
            "forced by {}",
            if d.backend == "opencl" {
                "CURLPOW_OPENCL_KERNEL"
            } else {
                "CURLPOW_WGPU_TUNING"
            }
        ),
        "default" if d.software => "the default".into(),
        "default" => "the default; the engine tunes it on its first search".into(),
        s => s.to_string(),
    }
}
