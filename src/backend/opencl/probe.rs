//! Raw OpenCL probing: only calls that return a status, never ocl's panicking or retrying
//! helpers (`Platform::list()` panics and `Platform::first()` waits 10 s when no driver is
//! installed). Every `unsafe` call here is a query into a buffer sized by the driver's own answer.

use std::ffi::c_void;
use std::ptr;

use ocl::core::ffi;

use crate::search::device::DeviceKind;

pub(super) fn platform_ids() -> Result<Vec<ffi::cl_platform_id>, String> {
    let mut n: ffi::cl_uint = 0;
    // SAFETY: the count query of clGetPlatformIDs: num_entries 0 with a null list is allowed and
    // `n` is a valid out-pointer for the duration of the call.
    let rc = unsafe { ffi::clGetPlatformIDs(0, ptr::null_mut(), &mut n) };
    if rc == ffi::CL_PLATFORM_NOT_FOUND_KHR {
        return Err("no OpenCL platform: no ICD driver is installed".into());
    }
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetPlatformIDs failed ({})", status_name(rc)));
    }
    if n == 0 {
        return Err("no OpenCL platform".into());
    }
    let mut ids: Vec<ffi::cl_platform_id> = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for exactly `n` entries.
    let rc = unsafe { ffi::clGetPlatformIDs(n, ids.as_mut_ptr(), ptr::null_mut()) };
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetPlatformIDs failed ({})", status_name(rc)));
    }
    Ok(ids)
}

pub(super) fn device_ids(platform: ffi::cl_platform_id) -> Result<Vec<ffi::cl_device_id>, String> {
    let mut n: ffi::cl_uint = 0;
    // SAFETY: count query on a platform id returned by clGetPlatformIDs; `n` is a valid out
    // pointer.
    let rc = unsafe {
        ffi::clGetDeviceIDs(
            platform,
            ffi::CL_DEVICE_TYPE_ALL,
            0,
            ptr::null_mut(),
            &mut n,
        )
    };
    if rc == ffi::CL_DEVICE_NOT_FOUND || (rc == ffi::CL_SUCCESS && n == 0) {
        return Ok(Vec::new());
    }
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetDeviceIDs failed ({})", status_name(rc)));
    }
    let mut ids: Vec<ffi::cl_device_id> = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for exactly `n` entries.
    let rc = unsafe {
        ffi::clGetDeviceIDs(
            platform,
            ffi::CL_DEVICE_TYPE_ALL,
            n,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    if rc != ffi::CL_SUCCESS {
        return Err(format!("clGetDeviceIDs failed ({})", status_name(rc)));
    }
    Ok(ids)
}

fn platform_bytes(p: ffi::cl_platform_id, param: ffi::cl_platform_info) -> Option<Vec<u8>> {
    let mut size: ffi::size_t = 0;
    // SAFETY: size query (null value, size 0) on a valid platform id.
    let rc = unsafe { ffi::clGetPlatformInfo(p, param, 0, ptr::null_mut(), &mut size) };
    if rc != ffi::CL_SUCCESS {
        return None;
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds exactly `size` bytes, the size the driver just asked for.
    let rc = unsafe {
        ffi::clGetPlatformInfo(
            p,
            param,
            size,
            buf.as_mut_ptr() as *mut c_void,
            ptr::null_mut(),
        )
    };
    (rc == ffi::CL_SUCCESS).then_some(buf)
}

fn device_bytes(d: ffi::cl_device_id, param: ffi::cl_device_info) -> Result<Vec<u8>, i32> {
    let mut size: ffi::size_t = 0;
    // SAFETY: size query (null value, size 0) on a valid device id.
    let rc = unsafe { ffi::clGetDeviceInfo(d, param, 0, ptr::null_mut(), &mut size) };
    if rc != ffi::CL_SUCCESS {
        return Err(rc);
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds exactly `size` bytes, the size the driver just asked for.
    let rc = unsafe {
        ffi::clGetDeviceInfo(
            d,
            param,
            size,
            buf.as_mut_ptr() as *mut c_void,
            ptr::null_mut(),
        )
    };
    if rc != ffi::CL_SUCCESS {
        return Err(rc);
    }
    Ok(buf)
}

fn c_string(mut b: Vec<u8>) -> String {
    if let Some(z) = b.iter().position(|&c| c == 0) {
        b.truncate(z);
    }
    String::from_utf8_lossy(&b).trim().to_string()
}

fn le_uint(b: &[u8]) -> Option<u64> {
    match b.len() {
        4 => Some(u64::from(u32::from_ne_bytes(b.try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(b.try_into().ok()?)),
        _ => None,
    }
}

pub(super) struct PlatformInfo {
    pub(super) name: String,
    pub(super) version: String,
    pub(super) vendor: String,
}

impl PlatformInfo {
    pub(super) fn read(p: ffi::cl_platform_id) -> Self {
        let s = |param| platform_bytes(p, param).map(c_string).unwrap_or_default();
        PlatformInfo {
            name: s(ffi::CL_PLATFORM_NAME),
            version: s(ffi::CL_PLATFORM_VERSION),
            vendor: s(ffi::CL_PLATFORM_VENDOR),
        }
    }
}

/// cl_khr_pci_bus_info: `CL_DEVICE_PCI_BUS_INFO_KHR`, four `cl_uint` (domain, bus, device,
/// function).
const CL_DEVICE_PCI_BUS_INFO_KHR: ffi::cl_device_info = 0x410F;
/// cl_nv_device_attribute_query: bus and slot ids (slot = device << 3 | function) and domain.
const CL_DEVICE_PCI_BUS_ID_NV: ffi::cl_device_info = 0x4008;
const CL_DEVICE_PCI_SLOT_ID_NV: ffi::cl_device_info = 0x4009;
const CL_DEVICE_PCI_DOMAIN_ID_NV: ffi::cl_device_info = 0x400A;

pub(super) struct RawDevice {
    pub(super) name: String,
    pub(super) kind: DeviceKind,
    pub(super) vendor: String,
    pub(super) vendor_id: u64,
    pub(super) version: String,
    pub(super) driver: String,
    pub(super) compute_units: u64,
    pub(super) global_mem: u64,
    pub(super) local_mem: u64,
    pub(super) max_work_group: usize,
    pub(super) available: bool,
    pub(super) compiler_available: bool,
    pub(super) pci: Option<String>,
}

impl RawDevice {
    pub(super) fn read(d: ffi::cl_device_id) -> Result<Self, String> {
        let num = |param, what: &str| -> Result<u64, String> {
            device_bytes(d, param)
                .map_err(|rc| format!("{what}: {}", status_name(rc)))
                .and_then(|b| le_uint(&b).ok_or_else(|| format!("{what}: bad size {}", b.len())))
        };
        let text = |param| device_bytes(d, param).map(c_string).unwrap_or_default();
        let ty = num(ffi::CL_DEVICE_TYPE, "device type")?;
        let kind = if ty & ffi::CL_DEVICE_TYPE_GPU != 0 {
            DeviceKind::Gpu
        } else if ty & ffi::CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceKind::Accelerator
        } else if ty & ffi::CL_DEVICE_TYPE_CPU != 0 {
            DeviceKind::Cpu
        } else {
            DeviceKind::Other
        };
        let extensions = text(ffi::CL_DEVICE_EXTENSIONS);
        let has = |ext: &str| extensions.split_whitespace().any(|e| e == ext);
        let pci = if has("cl_khr_pci_bus_info") {
            device_bytes(d, CL_DEVICE_PCI_BUS_INFO_KHR)
                .ok()
                .filter(|b| b.len() == 16)
                .map(|b| {
                    let w = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                    format!("{:04x}:{:02x}:{:02x}.{:x}", w(0), w(4), w(8), w(12))
                })
        } else {
            None
        };
        let pci = pci.or_else(|| {
            if !has("cl_nv_device_attribute_query") {
                return None;
            }
            let bus = num(CL_DEVICE_PCI_BUS_ID_NV, "bus").ok()?;
            let slot = num(CL_DEVICE_PCI_SLOT_ID_NV, "slot").ok()?;
            let domain = num(CL_DEVICE_PCI_DOMAIN_ID_NV, "domain").unwrap_or(0);
            Some(format!(
                "{domain:04x}:{bus:02x}:{:02x}.{:x}",
                slot >> 3,
                slot & 7
            ))
        });
        Ok(RawDevice {
            name: text(ffi::CL_DEVICE_NAME),
            kind,
            vendor: text(ffi::CL_DEVICE_VENDOR),
            vendor_id: num(ffi::CL_DEVICE_VENDOR_ID, "vendor id").unwrap_or(0),
            version: text(ffi::CL_DEVICE_VERSION),
            driver: text(ffi::CL_DRIVER_VERSION),
            compute_units: num(ffi::CL_DEVICE_MAX_COMPUTE_UNITS, "compute units").unwrap_or(1),
            global_mem: num(ffi::CL_DEVICE_GLOBAL_MEM_SIZE, "global memory").unwrap_or(0),
            local_mem: num(ffi::CL_DEVICE_LOCAL_MEM_SIZE, "local memory").unwrap_or(0),
            max_work_group: num(ffi::CL_DEVICE_MAX_WORK_GROUP_SIZE, "work-group size").unwrap_or(1)
                as usize,
            available: num(ffi::CL_DEVICE_AVAILABLE, "available").unwrap_or(0) != 0,
            compiler_available: num(ffi::CL_DEVICE_COMPILER_AVAILABLE, "compiler").unwrap_or(0)
                != 0,
            pci,
        })
    }
}

pub(super) fn status_name(rc: i32) -> String {
    let name = match rc {
        -1 => "CL_DEVICE_NOT_FOUND",
        -2 => "CL_DEVICE_NOT_AVAILABLE",
        -5 => "CL_OUT_OF_RESOURCES",
        -6 => "CL_OUT_OF_HOST_MEMORY",
        -30 => "CL_INVALID_VALUE",
        -32 => "CL_INVALID_PLATFORM",
        -33 => "CL_INVALID_DEVICE",
        -1001 => "CL_PLATFORM_NOT_FOUND_KHR",
        _ => "",
    };
    if name.is_empty() {
        format!("OpenCL status {rc}")
    } else {
        format!("{name} ({rc})")
    }
}
