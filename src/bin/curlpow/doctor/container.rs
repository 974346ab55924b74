//! Inside a container: which one, and what the NVIDIA container toolkit passed through
//! (`NVIDIA_VISIBLE_DEVICES`, `NVIDIA_DRIVER_CAPABILITIES`: Vulkan needs `graphics`, OpenCL
//! `compute`).

use serde::Serialize;

use super::nodes::{Node, NodeKind, Vendor};
use super::{Check, Root};

/// The toolkit's capabilities when `NVIDIA_DRIVER_CAPABILITIES` is not set.
const DEFAULT_CAPABILITIES: &str = "compute,utility";

#[derive(Debug, Clone, Serialize)]
pub struct Container {
    /// `docker`, `podman`, `kubernetes`, ... or `container`.
    pub kind: String,
    /// What told it (a file, the cgroup, the `container` variable).
    pub evidence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_visible_devices: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvidia_driver_capabilities: Option<String>,
}

impl Container {
    /// The toolkit's capabilities in force (its default when the variable is unset).
    pub fn capabilities(&self) -> Vec<String> {
        self.nvidia_driver_capabilities
            .as_deref()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or(DEFAULT_CAPABILITIES)
            .split(',')
            .map(|c| c.trim().to_lowercase())
            .filter(|c| !c.is_empty())
            .collect()
    }

    /// Whether the toolkit passes `cap` (`all` passes every one).
    pub fn has(&self, cap: &str) -> bool {
        self.capabilities().iter().any(|c| c == cap || c == "all")
    }
}

/// The container this process runs in, if any.
pub fn detect(root: &Root) -> Option<Container> {
    let var = |n: &str| curlpow::env::other(n).and_then(|v| v.into_string().ok());
    let (kind, evidence) = if root.path("/.dockerenv").exists() {
        ("docker".to_string(), "/.dockerenv".to_string())
    } else if root.path("/run/.containerenv").exists() {
        ("podman".to_string(), "/run/.containerenv".to_string())
    } else if let Some(k) = cgroup_kind(root) {
        (k.to_string(), "/proc/1/cgroup".to_string())
    } else if let Some(v) = var("container").filter(|v| !v.is_empty()) {
        (v, "the `container` variable".to_string())
    } else {
        return None;
    };
    Some(Container {
        kind,
        evidence,
        nvidia_visible_devices: var("NVIDIA_VISIBLE_DEVICES"),
        nvidia_driver_capabilities: var("NVIDIA_DRIVER_CAPABILITIES"),
    })
}

/// A container runtime named in init's cgroup path.
fn cgroup_kind(root: &Root) -> Option<&'static str> {
    let text = std::fs::read_to_string(root.path("/proc/1/cgroup")).ok()?;
    [
        ("kubepods", "kubernetes"),
        ("libpod", "podman"),
        ("docker", "docker"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ]
    .into_iter()
    .find(|(needle, _)| text.contains(needle))
    .map(|(_, kind)| kind)
}

/// What the container passed in, and what it left out.
pub fn checks(c: &Container, nodes: &[Node]) -> Vec<Check> {
    let mut out = vec![Check::ok(
        "container",
        format!("in a {} container ({})", c.kind, c.evidence),
    )];
    let nvidia = nodes.iter().any(|n| n.kind == NodeKind::NvidiaGpu);
    let amd = nodes.iter().any(|n| n.vendor == Vendor::Amd);
    let visible = c
        .nvidia_visible_devices
        .as_deref()
        .filter(|v| !matches!(v.trim(), "" | "void" | "none"));
    if !nodes.iter().any(|n| n.kind.is_gpu()) {
        out.push(Check::warn(
            "container",
            match visible {
                Some(v) => format!(
                    "NVIDIA_VISIBLE_DEVICES={v} but no /dev/nvidia* node: the NVIDIA runtime did \
                     not set up this container"
                ),
                None => "no GPU was passed into this container".to_string(),
            },
            "NVIDIA: docker run --gpus all (with nvidia-container-toolkit on the host), podman \
             run --device nvidia.com/gpu=all (CDI); AMD: --device /dev/kfd --device /dev/dri; \
             Intel: --device /dev/dri",
        ));
        return out;
    }
    if nvidia {
        let caps = c.capabilities().join(",");
        let set = if c.nvidia_driver_capabilities.is_some() {
            format!("NVIDIA_DRIVER_CAPABILITIES={caps}")
        } else {
            format!("NVIDIA_DRIVER_CAPABILITIES unset (the toolkit's default: {caps})")
        };
        let missing: Vec<&str> = ["graphics", "compute"]
            .into_iter()
            .filter(|cap| !c.has(cap))
            .collect();
        if missing.is_empty() {
            out.push(Check::ok(
                "container",
                format!("{set}: the NVIDIA toolkit passes Vulkan (graphics) and OpenCL (compute)"),
            ));
        } else {
            let what: Vec<String> = missing
                .iter()
                .map(|m| match *m {
                    "graphics" => "`graphics` (Vulkan: the wgpu backend)".to_string(),
                    _ => "`compute` (OpenCL and CUDA)".to_string(),
                })
                .collect();
            out.push(Check::warn(
                "container",
                format!("{set}: no {}", what.join(" and no ")),
                "start the container with -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics \
                 (or all)",
            ));
        }
    }
    if amd && !nodes.iter().any(|n| n.kind == NodeKind::Kfd) {
        out.push(Check::warn(
            "container",
            "an AMD render node but no /dev/kfd: ROCm's OpenCL cannot run here (Vulkan can)",
            "add --device /dev/kfd to docker/podman run",
        ));
    }
    out
}
