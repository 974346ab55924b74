//! The one interface every backend implements, and what a device says about itself.

use serde::Serialize;

use crate::control::SearchControl;
use crate::error::Error;
use crate::search::{CounterRange, Hit, SearchJob};

/// A compute backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Backend {
    /// The SIMD CPU search on the engine's thread pool.
    Cpu,
    /// OpenCL (feature `opencl`).
    Opencl,
    /// wgpu: Vulkan, Metal, DX12 (feature `wgpu`).
    Wgpu,
}

impl Backend {
    /// The lowercase name used in ids, the CLI and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Opencl => "opencl",
            Backend::Wgpu => "wgpu",
        }
    }

    /// Parse a backend name.
    pub fn from_name(s: &str) -> Option<Backend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Some(Backend::Cpu),
            "opencl" | "ocl" => Some(Backend::Opencl),
            "wgpu" | "vulkan" => Some(Backend::Wgpu),
            _ => None,
        }
    }

    /// Whether this build has the backend compiled in.
    pub fn compiled(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Opencl => cfg!(feature = "opencl"),
            Backend::Wgpu => cfg!(feature = "wgpu"),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of hardware a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DeviceKind {
    /// A discrete or integrated GPU.
    Gpu,
    /// A CPU (the engine's pool, or a CPU OpenCL/Vulkan driver such as PoCL or lavapipe).
    Cpu,
    /// An accelerator card.
    Accelerator,
    /// Anything else.
    Other,
}

/// A device as listed by `curlpow devices`.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceInfo {
    /// Stable id: `"cpu"`, `"opencl:P:D"`, `"wgpu:N"`.
    pub id: String,
    /// The backend.
    pub backend: Backend,
    /// The device's name as its driver reports it.
    pub name: String,
    /// The kind of hardware.
    pub kind: DeviceKind,
    /// Backend details (platform, driver, compute units, memory, kernel, lanes, …).
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// The result of one device search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The hit, or `None` when the search stopped (found elsewhere, cancelled, deadline).
    pub hit: Option<Hit>,
    /// Nonces tried by this device in this search.
    pub nonces: u64,
}

/// A device that can run the bit-sliced search. Implemented by every backend; public so that
/// tests and embedders can plug in their own (e.g. a device that fails on purpose).
pub trait Device: Send + Sync {
    /// What the device is.
    fn info(&self) -> &DeviceInfo;

    /// Search the counters of `range` (see [`crate::search`] for the nonce layout) until a hit, or
    /// until `ctl` says stop. The returned hit is checked by the caller on the host; the device
    /// need not verify it. Must return promptly (milliseconds) once `ctl` says stop.
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error>;

    /// Nonces tried on this device over its life (summed on read from per-worker counters).
    fn nonces_tried(&self) -> u64;
}

/// What GPU discovery may return.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscoverOptions {
    /// Also list software and CPU devices of GPU APIs (PoCL, lavapipe/llvmpipe). Off by default:
    /// on a GPU host they are never picked unless asked for; tests turn this on.
    pub include_software: bool,
    /// wgpu: use the 32-bit-lane kernel even where the adapter offers 64-bit integers
    /// (also `CURLPOW_WGPU_LANES=32`).
    pub force_32bit_lanes: bool,
}

/// What a backend's discovery found: its devices, and what went wrong on the way (a driver that
/// failed to answer, a device that could not be opened) as readable warnings, never a panic.
#[derive(Default)]
pub struct Discovery {
    /// Usable devices, best first.
    pub devices: Vec<std::sync::Arc<dyn Device>>,
    /// Problems met while probing.
    pub warnings: Vec<String>,
}
