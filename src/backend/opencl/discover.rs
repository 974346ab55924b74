//! Listing OpenCL devices: every platform's devices, without ever hanging or panicking, each
//! described by typed facts ([`device_info`]) and given its kernel variant.

use std::sync::Arc;

use super::kernel_config::KernelConfig;
use super::occupancy::{self, Facts};
use super::probe::{self, PlatformInfo, RawDevice};
use super::{OpenClDevice, PROBE_LOCK};
use crate::backend::gpu::discover::sort_best_first;
use crate::backend::gpu::{tune_cache, Geometry};
use crate::base::env;
use crate::search::device::{Backend, Device, DeviceInfo, DeviceKind};
use crate::search::discovery::{DiscoverOptions, Discovery};

/// Discovery's result with the concrete device type (for [`OpenClDevice::transform`] and the
/// tests); [`discover`] returns the same devices as trait objects.
#[derive(Default)]
pub struct OpenClDiscovery {
    /// Usable devices, GPUs first.
    pub devices: Vec<Arc<OpenClDevice>>,
    /// Problems met while probing.
    pub warnings: Vec<String>,
}

/// Every OpenCL device of every platform (the engine's entry point). Never panics or hangs: with
/// no OpenCL driver it returns no devices and a warning within milliseconds.
pub fn discover(opts: &DiscoverOptions) -> Discovery {
    discover_for_engine(opts, true)
}

/// [`discover`], with the tuner's cache used or not (`EngineBuilder::tune`).
pub(crate) fn discover_for_engine(opts: &DiscoverOptions, use_cache: bool) -> Discovery {
    let found = discover_with(opts, None, use_cache);
    Discovery {
        devices: found
            .devices
            .into_iter()
            .map(|d| d as Arc<dyn Device>)
            .collect(),
        warnings: found.warnings,
    }
}

/// Like [`discover`], with the concrete type, and every device using `kernel` when given
/// (otherwise `CURLPOW_OPENCL_KERNEL`, otherwise [`KernelConfig::default_for`] its kind).
pub fn discover_opencl(opts: &DiscoverOptions, kernel: Option<KernelConfig>) -> OpenClDiscovery {
    discover_with(opts, kernel, true)
}

/// [`discover_opencl`]; with `use_cache` false the tuner's cache is not read.
pub(crate) fn discover_with(
    opts: &DiscoverOptions,
    kernel: Option<KernelConfig>,
    use_cache: bool,
) -> OpenClDiscovery {
    let _probing = PROBE_LOCK.lock();
    let mut out = OpenClDiscovery::default();
    if !opts.include_software && !crate::backend::gpu::discover::hardware_possible() {
        out.warnings
            .push(crate::backend::gpu::discover::not_probed("OpenCL"));
        return out;
    }
    let env_kernel = env::setting(
        env::OPENCL_KERNEL,
        "a kernel such as u32, u64, u64x8, u64-f5, u64-p, u32:local or u32:coop",
        KernelConfig::parse,
    )
    .unwrap_or_else(|w| {
        out.warnings.push(w);
        None
    });
    // The tuner's choices, unless a variant is given (argument or environment) or
    // CURLPOW_TUNE=0.
    let tuned_file = tune_cache::for_discovery(
        use_cache && kernel.is_none() && env_kernel.is_none(),
        &mut out.warnings,
    );
    let platforms = match probe::platform_ids() {
        Ok(p) => p,
        Err(msg) => {
            out.warnings.push(msg);
            return out;
        }
    };
    let mut found: Vec<OpenClDevice> = Vec::new();
    let mut launch_warnings = Vec::new();
    for (pi, &platform) in platforms.iter().enumerate() {
        let devices = match probe::device_ids(platform) {
            Ok(d) if d.is_empty() => {
                out.warnings
                    .push(format!("OpenCL platform {pi}: no devices"));
                continue;
            }
            Ok(d) => d,
            Err(msg) => {
                out.warnings.push(format!("OpenCL platform {pi}: {msg}"));
                continue;
            }
        };
        let pinfo = PlatformInfo::read(platform);
        for (di, &device) in devices.iter().enumerate() {
            let id = format!("opencl:{pi}:{di}");
            let raw = match RawDevice::read(device) {
                Ok(r) => r,
                Err(msg) => {
                    out.warnings.push(format!("{id}: {msg}"));
                    continue;
                }
            };
            if is_software(&raw) && !opts.include_software {
                out.warnings.push(format!(
                    "{id} ({}) skipped: a software driver on the CPU (--software uses it)",
                    raw.name
                ));
                continue;
            }
            if !raw.available || !raw.compiler_available {
                out.warnings.push(format!(
                    "{id} ({}): not available or has no compiler; skipped",
                    raw.name
                ));
                continue;
            }
            let tuned = tuned_file
                .get("opencl", &raw.name, &raw.driver)
                .and_then(|t| {
                    KernelConfig::parse(&t.variant)
                        .map(|c| (c, t.nonces_per_second, t.launch_items))
                });
            let source = tune_cache::source(kernel.or(env_kernel).is_some(), tuned.is_some());
            let mut cfg = kernel
                .or(env_kernel)
                .or(tuned.map(|t| t.0))
                .unwrap_or_else(|| {
                    KernelConfig::default_for(raw.kind, u32::try_from(raw.vendor_id).unwrap_or(0))
                });
            let local_size = match launch_local_size(&cfg, &raw) {
                Some(l) => l,
                None => {
                    out.warnings.push(format!(
                        "{id}: kernel {cfg} does not fit ({} B of local memory, {} B per state); using the private-state u32 kernel",
                        raw.local_mem, cfg.state_bytes()
                    ));
                    if cfg.coop > 0 {
                        cfg = KernelConfig::U32;
                    }
                    cfg.local_state = false;
                    launch_local_size(&cfg, &raw).unwrap_or(1)
                }
            };
            let facts = Facts {
                kind: Some(raw.kind),
                vendor_id: u32::try_from(raw.vendor_id).unwrap_or(0),
                compute_units: raw.compute_units.max(1) as usize,
                device_local_mem: raw.local_mem,
                group: local_size,
                ..Facts::default()
            };
            let geometry = Geometry {
                group: local_size,
                items_per_state: if cfg.coop > 0 { cfg.coop as usize } else { 1 },
                lanes: cfg.lanes() as u64,
                // Refined once the kernel is built (registers, local memory).
                wave_items: occupancy::estimate(&facts).items,
                max_items: super::MAX_GLOBAL,
                max_per_item: super::MAX_ITERS,
                target: target_launch(raw.kind),
                forced_items: None,
                forced_per_item: None,
            }
            .with_env(&mut launch_warnings);
            let mut geometry = geometry;
            if geometry.forced_items.is_none() {
                // The launch size the tuner chose with this variant, unless the environment
                // forces one.
                geometry.forced_items = tuned.and_then(|t| t.2);
            }
            let mut info = device_info(id, &pinfo, &raw, &cfg, local_size)
                .with_detail("initial_wave_items", geometry.wave_items)
                .with_detail("kernel_source", source)
                .with_detail("variant", cfg.name());
            if let Some((_, rate, _)) = tuned {
                info = info.with_detail("tuned_nonces_per_second", rate);
            }
            found.push(OpenClDevice::new(
                info, platform, device, cfg, geometry, facts,
            ));
        }
    }
    launch_warnings.dedup();
    out.warnings.extend(launch_warnings);
    sort_best_first(&mut found, |d| d.info());
    out.devices = found.into_iter().map(Arc::new).collect();
    out
}

fn target_launch(kind: DeviceKind) -> std::time::Duration {
    if kind == DeviceKind::Cpu {
        super::TARGET_LAUNCH_CPU
    } else {
        super::TARGET_LAUNCH
    }
}

/// A CPU device of OpenCL (PoCL, Intel's CPU runtime) runs on the cores the engine's own pool
/// already uses.
fn is_software(raw: &RawDevice) -> bool {
    raw.kind == DeviceKind::Cpu
}

/// The typed description of a probed device.
pub(super) fn device_info(
    id: String,
    pinfo: &PlatformInfo,
    raw: &RawDevice,
    cfg: &KernelConfig,
    local_size: usize,
) -> DeviceInfo {
    let compute_units = raw.compute_units.max(1) as f64;
    // The speed declared before the device has worked: 1e7 nonces/s per compute unit of a GPU
    // (~1.3e9 for a 132-SM card, the arithmetic estimate in `docs/gpu-kernels.md`), 5e6 per
    // core of a CPU device (PoCL's rate is in `docs/benchmarks.md`, "GPU").
    let declared = match raw.kind {
        DeviceKind::Gpu => 1e7 * compute_units,
        DeviceKind::Accelerator => 1e8,
        _ => 5e6 * compute_units,
    };
    let (bytes, traffic) = cfg.bytes_per_nonce();
    let mut info = DeviceInfo::new(id, Backend::Opencl, raw.name.clone(), raw.kind)
        .with_software(is_software(raw))
        .with_lanes(cfg.lanes())
        .with_kernel(cfg.name())
        .with_detail("bytes_per_nonce", bytes.round())
        .with_detail("traffic", traffic)
        .with_declared_speed(declared)
        .with_detail("platform", pinfo.name.clone())
        .with_detail("platform_version", pinfo.version.clone())
        .with_detail("platform_vendor", pinfo.vendor.clone())
        .with_detail("vendor", raw.vendor.clone())
        .with_detail("device_version", raw.version.clone())
        .with_detail("driver_version", raw.driver.clone())
        .with_detail("compute_units", raw.compute_units)
        .with_detail("global_mem_bytes", raw.global_mem)
        .with_detail("local_mem_bytes", raw.local_mem)
        .with_detail("max_work_group_size", raw.max_work_group)
        .with_detail("local_size", local_size)
        .with_detail(
            "target_launch_ms",
            target_launch(raw.kind).as_secs_f64() * 1e3,
        );
    if let Ok(v) = u32::try_from(raw.vendor_id) {
        if v != 0 {
            info = info.with_pci_vendor_id(v);
        }
    }
    if let Some(pci) = &raw.pci {
        info = info.with_pci_bus_id(pci.clone());
    }
    info
}

/// The work-group size for `cfg` on this device, `None` if a local-memory state does not fit.
fn launch_local_size(cfg: &KernelConfig, raw: &RawDevice) -> Option<usize> {
    cfg.local_size(raw.kind, raw.local_mem, raw.max_work_group)
}

/// A device as the NVIDIA driver describes an H200 (for tests that need the real shape).
#[cfg(all(test, feature = "opencl", feature = "wgpu"))]
pub(crate) fn nvidia_h200_for_tests(index: usize) -> DeviceInfo {
    let raw = RawDevice {
        name: "NVIDIA H200".into(),
        kind: DeviceKind::Gpu,
        vendor: "NVIDIA Corporation".into(),
        vendor_id: 0x10de,
        version: "OpenCL 3.0 CUDA".into(),
        driver: "550.90.07".into(),
        compute_units: 132,
        global_mem: 150_000_000_000,
        local_mem: 49152,
        max_work_group: 1024,
        available: true,
        compiler_available: true,
        pci: Some(format!("0000:{:02x}:00.0", 0x19 + index)),
    };
    let pinfo = PlatformInfo {
        name: "NVIDIA CUDA".into(),
        version: "OpenCL 3.0 CUDA 12.4.131".into(),
        vendor: "NVIDIA Corporation".into(),
    };
    let cfg = KernelConfig::default_for(raw.kind, 0x10de);
    device_info(format!("opencl:0:{index}"), &pinfo, &raw, &cfg, 64)
}
