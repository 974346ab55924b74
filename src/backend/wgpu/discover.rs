//! Finding the wgpu adapters (Vulkan, Metal, DX12), describing each with typed facts
//! ([`device_info`]) and opening one device on each.

use std::sync::Arc;
use std::time::Instant;

use super::tuning::{lanes_env, tuning_env, Tuning};
use super::WgpuDevice;
use crate::backend::gpu::discover::sort_best_first;
use crate::backend::gpu::tune_cache;
use crate::base::env;
use crate::search::device::{Backend, Device, DeviceInfo, DeviceKind};
use crate::search::discovery::{DiscoverOptions, Discovery};

/// Find the wgpu adapters and open one device on each, with the default [`Tuning`] for its
/// kind; `force_32bit` (or `CURLPOW_WGPU_LANES=32`) uses 32-bit lanes everywhere.
///
/// Ids are `"wgpu:N"`, `N` the adapter's index in wgpu's enumeration (stable whether software
/// adapters are included or not); devices come best first (GPUs, other hardware, then
/// software). No adapter gives zero devices, never a panic.
pub fn discover(opts: &DiscoverOptions, force_32bit: bool) -> Discovery {
    discover_for_engine(opts, force_32bit, true)
}

/// [`discover`], with the tuner's cache used or not (`EngineBuilder::tune`).
pub(crate) fn discover_for_engine(
    opts: &DiscoverOptions,
    force_32bit: bool,
    use_cache: bool,
) -> Discovery {
    let found = discover_with(opts, None, force_32bit, use_cache);
    Discovery {
        devices: found
            .devices
            .into_iter()
            .map(|d| d as Arc<dyn Device>)
            .collect(),
        warnings: found.warnings,
    }
}

/// What [`discover_wgpu`] found: the concrete devices (for [`WgpuDevice::transform`] and the
/// tuning accessors) and the problems met on the way.
#[derive(Debug, Default)]
pub struct WgpuDiscovery {
    /// Opened devices, best first.
    pub devices: Vec<Arc<WgpuDevice>>,
    /// Adapters that could not be opened, ignored settings.
    pub warnings: Vec<String>,
}

/// [`discover`] returning concrete [`WgpuDevice`]s, with an explicit [`Tuning`] for every
/// device (`None`: the per-kind defaults).
pub fn discover_wgpu(
    opts: &DiscoverOptions,
    tuning: Option<Tuning>,
    force_32bit: bool,
) -> WgpuDiscovery {
    discover_with(opts, tuning, force_32bit, true)
}

/// [`discover_wgpu`]; with `use_cache` false the tuner's cache is not read.
pub(crate) fn discover_with(
    opts: &DiscoverOptions,
    tuning: Option<Tuning>,
    force_32bit: bool,
    use_cache: bool,
) -> WgpuDiscovery {
    let mut found = WgpuDiscovery::default();
    if !opts.include_software && !crate::backend::gpu::discover::hardware_possible() {
        found
            .warnings
            .push(crate::backend::gpu::discover::not_probed("wgpu"));
        return found;
    }
    let force32 = match lanes_env() {
        Ok(f) => force_32bit || f,
        Err(e) => {
            found.warnings.push(e);
            force_32bit
        }
    };
    let backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = pollster::block_on(instance.enumerate_adapters(backends));
    if adapters.is_empty() {
        found
            .warnings
            .push("wgpu: no Vulkan, Metal or DX12 adapter found".into());
    }
    let env_set = env::is_set(env::WGPU_TUNING);
    // The tuner's choices, unless a tuning is given (argument or environment) or
    // CURLPOW_TUNE=0.
    let tuned_file = tune_cache::for_discovery(
        use_cache && tuning.is_none() && !env_set,
        &mut found.warnings,
    );
    let mut opened: Vec<Arc<WgpuDevice>> = Vec::new();
    for (index, adapter) in adapters.into_iter().enumerate() {
        let ai = adapter.get_info();
        if is_software(&ai) && !opts.include_software {
            found.warnings.push(format!(
                "wgpu:{index} ({}) skipped: a software driver on the CPU (--software uses it)",
                ai.name
            ));
            continue;
        }
        let tuned = tuned_file
            .get("wgpu", &ai.name, &ai.driver_info)
            .and_then(|c| {
                Tuning::variants()
                    .into_iter()
                    .find(|v| v.0 == c.variant)
                    .map(|v| (v.1, c.nonces_per_second, c.launch_items))
            });
        let source = tune_cache::source(tuning.is_some() || env_set, tuned.is_some());
        let t = match (tuning, tuned) {
            (Some(t), _) => t,
            (None, Some((t, _, _))) => t,
            (None, None) => tuning_env(Tuning::for_adapter(&ai)).unwrap_or_else(|w| {
                found.warnings.push(w);
                Tuning::for_adapter(&ai)
            }),
        };
        match WgpuDevice::open(adapter, index, force32, t, &mut found.warnings) {
            Ok(mut d) => {
                let variant = variant_name(&d.tuning());
                d.info = d
                    .info
                    .with_detail("kernel_source", source)
                    .with_detail("variant", variant);
                if let Some((_, rate, items)) = tuned {
                    d.info = d.info.with_detail("tuned_nonces_per_second", rate);
                    // The launch size the tuner chose, unless the environment forces one.
                    if let (Some(n), false) = (items, env::is_set(env::GPU_LAUNCH_ITEMS)) {
                        d.force_launch(Some(n), None);
                    }
                }
                opened.push(Arc::new(d))
            }
            Err(e) => found
                .warnings
                .push(format!("wgpu:{index} ({}): {e}", ai.name)),
        }
    }
    sort_best_first(&mut opened, |d| d.info());
    found.devices = opened;
    found
}

/// The name of the [`Tuning::variants`] entry a tuning is a shape of: `workgroupN` for the
/// workgroup-memory kernel, `storage-fN` for the storage-buffer kernel (a software adapter's
/// default is `storage-f3` with its own dispatch sizes).
pub(crate) fn variant_name(t: &Tuning) -> String {
    if t.coop > 0 {
        format!("workgroup{}", t.coop)
    } else {
        format!("storage-f{}", t.fuse)
    }
}

/// lavapipe/llvmpipe and other CPU adapters.
pub(super) fn is_software(ai: &wgpu::AdapterInfo) -> bool {
    ai.device_type == wgpu::DeviceType::Cpu
}

/// Estimated bytes of memory traffic per nonce of `tuning`'s kernel and where it goes
/// (`storage`: the scratch buffer in device memory; `workgroup`: on chip).
pub(super) fn bytes_per_nonce(tuning: &Tuning) -> (f64, &'static str) {
    if tuning.coop > 0 {
        (super::workgroup::bytes_per_nonce(tuning.coop), "workgroup")
    } else {
        (super::buffers::bytes_per_nonce(tuning.fuse), "storage")
    }
}

/// The typed description of an adapter opened with `tuning` and `lanes`-bit words.
pub(super) fn device_info(
    index: usize,
    ai: &wgpu::AdapterInfo,
    lanes: usize,
    tuning: &Tuning,
    opened: Instant,
) -> DeviceInfo {
    let software = is_software(ai);
    let kind = match ai.device_type {
        wgpu::DeviceType::DiscreteGpu
        | wgpu::DeviceType::IntegratedGpu
        | wgpu::DeviceType::VirtualGpu => DeviceKind::Gpu,
        wgpu::DeviceType::Cpu => DeviceKind::Cpu,
        wgpu::DeviceType::Other => DeviceKind::Other,
    };
    let backend_api = match ai.backend {
        wgpu::Backend::Vulkan => "vulkan",
        wgpu::Backend::Metal => "metal",
        wgpu::Backend::Dx12 => "dx12",
        _ => "other",
    };
    // The speed declared before the device has worked: a GPU at the arithmetic estimate of a
    // large card (`docs/gpu-kernels.md`), lavapipe near its rate in `docs/benchmarks.md` ("GPU").
    let declared = match (software, kind) {
        (true, _) => 5e5,
        (false, DeviceKind::Gpu) => 1e9,
        _ => 1e7,
    };
    let mut info = DeviceInfo::new(
        format!("wgpu:{index}"),
        Backend::Wgpu,
        ai.name.clone(),
        kind,
    )
    .with_software(software)
    .with_lanes(lanes)
    .with_kernel(if tuning.coop > 0 {
        format!("{lanes}-lane:workgroup{}", tuning.coop)
    } else {
        format!("{lanes}-lane")
    })
    .with_declared_speed(declared)
    .with_detail("driver", ai.driver.clone())
    .with_detail("driver_info", ai.driver_info.clone())
    .with_detail(
        "device_type",
        format!("{:?}", ai.device_type).to_ascii_lowercase(),
    )
    .with_detail("backend_api", backend_api)
    .with_detail("vendor", format!("0x{:04x}", ai.vendor))
    .with_detail("device", format!("0x{:04x}", ai.device))
    .with_detail("lanes_64bit", lanes == 64)
    .with_detail("workgroup_size", tuning.workgroup_size)
    .with_detail("fused_rounds", tuning.fuse)
    .with_detail(
        "transforms_per_invocation",
        tuning.transforms_per_invocation,
    )
    .with_detail("max_dispatch_invocations", tuning.max_invocations)
    .with_detail("workgroup_state_invocations", tuning.coop)
    .with_detail("bytes_per_nonce", bytes_per_nonce(tuning).0.round())
    .with_detail("traffic", bytes_per_nonce(tuning).1)
    .with_detail(
        "target_dispatch_ms",
        tuning.target_dispatch.as_secs_f64() * 1e3,
    )
    .with_detail("open_ms", opened.elapsed().as_secs_f64() * 1e3);
    if ai.vendor != 0 {
        info = info.with_pci_vendor_id(ai.vendor);
    }
    if !ai.device_pci_bus_id.is_empty() {
        info = info.with_pci_bus_id(ai.device_pci_bus_id.to_ascii_lowercase());
    }
    info
}

/// An adapter as NVIDIA's Vulkan driver describes an H200 (for tests that need the real shape).
#[cfg(all(test, feature = "opencl", feature = "wgpu"))]
pub(crate) fn nvidia_h200_for_tests(index: usize) -> DeviceInfo {
    let mut ai = wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan);
    ai.name = "NVIDIA H200".into();
    ai.vendor = 0x10de;
    ai.device = 0x2335;
    ai.device_pci_bus_id = format!("0000:{:02x}:00.0", 0x19 + index);
    ai.driver = "NVIDIA".into();
    ai.driver_info = "550.90.07".into();
    device_info(index, &ai, 64, &Tuning::gpu(), Instant::now())
}
