//! Discovery plumbing both GPU backends use: ranking, errors.

use crate::base::error::Error;
use crate::search::device::{DeviceInfo, DeviceKind};

/// The device nodes a hardware GPU driver opens on Linux: DRM render nodes (Mesa's Intel, AMD
/// and other drivers, ROCm), NVIDIA's nodes, AMD's compute node and WSL's GPU.
#[cfg(target_os = "linux")]
const GPU_NODES: [(&str, &str); 4] = [
    ("/dev/dri", "renderD"),
    ("/dev", "nvidia"),
    ("/dev", "kfd"),
    ("/dev", "dxg"),
];

/// Whether a hardware GPU could be here for a driver to find. On Linux that needs one of
/// [`GPU_NODES`]; without one only software drivers (lavapipe, PoCL) could answer, and loading
/// them costs tens of milliseconds, tens of megabytes and their messages on stderr. Elsewhere:
/// always (the drivers are asked).
pub(crate) fn hardware_possible() -> bool {
    #[cfg(target_os = "linux")]
    {
        GPU_NODES.iter().any(|(dir, prefix)| {
            std::fs::read_dir(dir).is_ok_and(|entries| {
                entries
                    .filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
            })
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// The warning of a backend not probed because [`hardware_possible`] is false.
pub(crate) fn not_probed(backend: &str) -> String {
    format!(
        "{backend}: not probed: no GPU device node (/dev/dri/renderD*, /dev/nvidia*, /dev/kfd, \
         /dev/dxg), so only a software driver on the CPU could answer (--software uses it)"
    )
}

/// Sort key, best first: hardware GPUs, accelerators, other hardware, then software drivers of
/// GPU APIs (PoCL, lavapipe), which run on the CPU the engine's own pool already uses.
pub(crate) fn rank(kind: DeviceKind, software: bool) -> u8 {
    match (software, kind) {
        (true, _) => 3,
        (false, DeviceKind::Gpu) => 0,
        (false, DeviceKind::Accelerator) => 1,
        (false, _) => 2,
    }
}

/// Order devices best first; equal ranks keep the driver's enumeration order.
pub(crate) fn sort_best_first<T>(found: &mut [T], info: impl Fn(&T) -> &DeviceInfo) {
    found.sort_by_key(|d| {
        let i = info(d);
        rank(i.kind, i.software)
    });
}

/// A backend error for this device.
pub(crate) fn device_error(info: &DeviceInfo, message: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: info.backend,
        device: info.id.clone(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::device::Backend;

    #[test]
    fn hardware_before_software() {
        let mut v = vec![
            DeviceInfo::new("a", Backend::Wgpu, "llvmpipe", DeviceKind::Cpu).with_software(true),
            DeviceInfo::new("b", Backend::Wgpu, "card", DeviceKind::Other),
            DeviceInfo::new("c", Backend::Wgpu, "gpu", DeviceKind::Gpu),
            DeviceInfo::new("d", Backend::Wgpu, "gpu2", DeviceKind::Gpu),
        ];
        sort_best_first(&mut v, |d| d);
        let ids: Vec<_> = v.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["c", "d", "b", "a"]);
    }
}
