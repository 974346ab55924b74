//! The names of the compute backends and of the kinds of hardware a device is.

use serde::Serialize;

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
    /// A device of the embedder's own, added with
    /// [`EngineBuilder::add_device`](crate::EngineBuilder::add_device).
    Custom,
}

impl Backend {
    /// The lowercase name used in ids, the CLI and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Opencl => "opencl",
            Backend::Wgpu => "wgpu",
            Backend::Custom => "custom",
        }
    }

    /// Parse a backend name.
    pub fn from_name(s: &str) -> Option<Backend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Some(Backend::Cpu),
            "opencl" | "ocl" => Some(Backend::Opencl),
            "wgpu" | "vulkan" => Some(Backend::Wgpu),
            "custom" => Some(Backend::Custom),
            _ => None,
        }
    }

    /// Whether this build has the backend compiled in.
    pub fn compiled(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Opencl => cfg!(feature = "opencl"),
            Backend::Wgpu => cfg!(feature = "wgpu"),
            Backend::Custom => true,
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
