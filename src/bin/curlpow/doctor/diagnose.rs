//! The diagnosis: for each GPU the nodes show, whether a Vulkan or OpenCL driver for it is
//! installed (its library present) and the nodes may be opened; if not, the package to
//! install or the container setting to change.

use super::container::Container;
use super::icds::{Api, Driver, Icd, LibDirs};
use super::nodes::{Node, NodeKind, Vendor};
use super::Check;

/// The diagnosis' lines, and whether the files say some GPU can be used.
pub struct Diagnosis {
    pub checks: Vec<Check>,
    pub usable: bool,
}

/// One GPU maker's nodes (an NVIDIA GPU on nouveau apart from one on NVIDIA's driver).
struct Gpu<'a> {
    vendor: Vendor,
    nouveau: bool,
    nodes: Vec<&'a Node>,
}

impl Gpu<'_> {
    fn name(&self) -> String {
        let paths: Vec<&str> = self
            .nodes
            .iter()
            .filter(|n| n.kind.is_gpu())
            .map(|n| n.path.as_str())
            .collect();
        format!(
            "{} GPU{} ({})",
            self.vendor.name(),
            if self.nouveau { " on nouveau" } else { "" },
            paths.join(", ")
        )
    }
}

pub fn diagnose(
    nodes: &[Node],
    icds: &[Icd],
    container: Option<&Container>,
    libs: &LibDirs,
) -> Diagnosis {
    let mut gpus: Vec<Gpu> = Vec::new();
    for n in nodes {
        let nouveau = n.vendor == Vendor::Nvidia && !n.nvidia_proprietary();
        match gpus
            .iter_mut()
            .find(|g| g.vendor == n.vendor && g.nouveau == nouveau)
        {
            Some(g) => g.nodes.push(n),
            None => gpus.push(Gpu {
                vendor: n.vendor,
                nouveau,
                nodes: vec![n],
            }),
        }
    }
    gpus.retain(|g| g.nodes.iter().any(|n| n.kind.is_gpu()));
    let mut checks = Vec::new();
    let mut usable = false;
    for g in &gpus {
        let open = g.nodes.iter().any(|n| n.kind.is_gpu() && n.usable());
        let drivers = |api: Api| -> Vec<&Icd> {
            icds.iter()
                .filter(|i| i.api == api && i.usable() && i.driver.serves(g.vendor, g.nouveau))
                .collect()
        };
        let compiled = |api: Api| match api {
            Api::Vulkan => curlpow::Backend::Wgpu.compiled(),
            Api::Opencl => curlpow::Backend::Opencl.compiled(),
        };
        let mut have = Vec::new();
        let mut lack = Vec::new();
        for api in [Api::Vulkan, Api::Opencl] {
            if !compiled(api) {
                continue;
            }
            let d = drivers(api);
            if d.is_empty() {
                lack.push(api);
            } else {
                let names: Vec<&str> = d.iter().map(|i| i.driver.label()).collect();
                have.push(format!("{} {}", api.name(), names.join(" + ")));
            }
        }
        if !open {
            checks.push(Check::fail(
                "gpu",
                format!("{}: this user may open none of its nodes", g.name()),
                "see the node lines above",
            ));
            continue;
        }
        if have.is_empty() {
            let fixes: Vec<String> = lack.iter().map(|a| fix(g, *a, container, libs)).collect();
            checks.push(Check::fail(
                "gpu",
                format!(
                    "{}: no {} driver for it is installed, so neither backend can use it",
                    g.name(),
                    lack.iter()
                        .map(|a| a.name())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
                fixes.join("; "),
            ));
            continue;
        }
        usable = true;
        checks.push(Check::ok(
            "gpu",
            format!("{}: {}", g.name(), have.join("; ")),
        ));
        for api in lack {
            checks.push(Check::warn(
                "gpu",
                format!(
                    "{}: no {} driver, so the {} backend cannot use it",
                    g.name(),
                    api.name(),
                    match api {
                        Api::Vulkan => "wgpu",
                        Api::Opencl => "opencl",
                    }
                ),
                fix(g, api, container, libs),
            ));
        }
        if g.vendor != Vendor::Nvidia || g.nouveau {
            let rusticl_only = {
                let d = drivers(Api::Opencl);
                !d.is_empty() && d.iter().all(|i| i.driver == Driver::Rusticl)
            };
            if rusticl_only && curlpow::env::other("RUSTICL_ENABLE").is_none() {
                let name = match (g.vendor, g.nouveau) {
                    (Vendor::Amd, _) => "radeonsi",
                    (Vendor::Intel, _) => "iris",
                    (_, true) => "nouveau",
                    _ => "radeonsi",
                };
                checks.push(Check::warn(
                    "gpu",
                    format!(
                        "{}: its OpenCL driver is rusticl, which lists no GPU unless \
                         RUSTICL_ENABLE names its driver",
                        g.name()
                    ),
                    format!("export RUSTICL_ENABLE={name}"),
                ));
            }
        }
        if g.vendor == Vendor::Amd && !g.nodes.iter().any(|n| n.kind == NodeKind::Render) {
            checks.push(Check::warn(
                "gpu",
                format!(
                    "{}: /dev/kfd but no render node: Vulkan and ROCm both need /dev/dri/renderD*",
                    g.name()
                ),
                "pass /dev/dri in too (--device /dev/dri)",
            ));
        }
    }
    Diagnosis { checks, usable }
}

/// What to install (or change) so that `api` has a driver for the GPU `g`.
fn fix(g: &Gpu, api: Api, container: Option<&Container>, libs: &LibDirs) -> String {
    match (g.vendor, g.nouveau, api) {
        (Vendor::Nvidia, false, Api::Vulkan) => {
            if let Some(c) = container {
                if !c.has("graphics") {
                    return "the NVIDIA toolkit passes Vulkan only with the `graphics` \
                            capability: -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics"
                        .into();
                }
            }
            if libs.find("libGLX_nvidia.so.0").is_some() {
                return "libGLX_nvidia.so.0 is here but no Vulkan driver file names it: write \
                        /usr/share/vulkan/icd.d/nvidia_icd.json with {\"file_format_version\": \
                        \"1.0.0\", \"ICD\": {\"library_path\": \"libGLX_nvidia.so.0\", \
                        \"api_version\": \"1.3\"}}"
                    .into();
            }
            if container.is_some() {
                return "the host's NVIDIA driver was not mounted: run the container with --gpus \
                        all and NVIDIA_DRIVER_CAPABILITIES including graphics"
                    .into();
            }
            "install NVIDIA's Vulkan driver: Debian nvidia-vulkan-icd (non-free, with \
             nvidia-driver), Ubuntu libnvidia-gl-VERSION (part of nvidia-driver-VERSION)"
                .into()
        }
        (Vendor::Nvidia, false, Api::Opencl) => {
            if let Some(c) = container {
                if !c.has("compute") {
                    return "the NVIDIA toolkit passes OpenCL only with the `compute` \
                            capability: -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics"
                        .into();
                }
            }
            if libs.find("libnvidia-opencl.so.1").is_some() {
                return "libnvidia-opencl.so.1 is here but no .icd file names it: echo \
                        libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd"
                    .into();
            }
            if container.is_some() {
                return "the host's NVIDIA driver was not mounted: run the container with --gpus \
                        all and NVIDIA_DRIVER_CAPABILITIES including compute"
                    .into();
            }
            "install NVIDIA's OpenCL driver: Debian nvidia-opencl-icd (non-free, with \
             nvidia-driver), Ubuntu libnvidia-compute-VERSION (part of nvidia-driver-VERSION)"
                .into()
        }
        (Vendor::Nvidia, true, Api::Vulkan) => {
            "Mesa's NVK (mesa-vulkan-drivers, Mesa 24.1 or newer), or NVIDIA's own driver \
             (Debian nvidia-driver, Ubuntu nvidia-driver-VERSION) in place of nouveau"
                .into()
        }
        (Vendor::Nvidia, true, Api::Opencl) => {
            "NVIDIA's own driver in place of nouveau (Debian nvidia-driver with \
             nvidia-opencl-icd; Ubuntu nvidia-driver-VERSION)"
                .into()
        }
        (Vendor::Amd, _, Api::Vulkan) => "install Mesa's RADV: mesa-vulkan-drivers".into(),
        (Vendor::Amd, _, Api::Opencl) => {
            "install Mesa's rusticl (mesa-opencl-icd, then RUSTICL_ENABLE=radeonsi) or ROCm's \
             OpenCL from AMD's repository (amdgpu-install --usecase=opencl)"
                .into()
        }
        (Vendor::Intel, _, Api::Vulkan) => "install Mesa's ANV: mesa-vulkan-drivers".into(),
        (Vendor::Intel, _, Api::Opencl) => {
            "install Intel's compute runtime: intel-opencl-icd".into()
        }
        (Vendor::Wsl, _, Api::Vulkan) => {
            "install Mesa's Dozen (mesa-vulkan-drivers, built with the Microsoft driver) and \
             keep /usr/lib/wsl/lib on the library path"
                .into()
        }
        (Vendor::Wsl, _, Api::Opencl) => {
            "OpenCL under WSL comes from the GPU vendor's Windows driver (NVIDIA: its WSL CUDA \
             driver; Intel: intel-opencl-icd)"
                .into()
        }
        (_, _, api) => format!(
            "install a {} driver for this GPU (Mesa's mesa-vulkan-drivers covers most)",
            api.name()
        ),
    }
}
