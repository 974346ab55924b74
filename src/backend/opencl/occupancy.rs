//! How many work-items fill one wave of an OpenCL device: compute units × work-groups resident
//! per unit × group size. OpenCL has no occupancy query, so the resident groups per unit are
//! estimated from what the device and the compiled kernel say:
//!
//! - the work-items a unit can hold: NVIDIA by compute capability
//!   (`CL_DEVICE_COMPUTE_CAPABILITY_*_NV`: 2048 threads per SM on 8.0 and 9.0, 1536 on 8.6/8.9,
//!   1024 on 7.5), AMD 2048 per CU, Intel 64 per EU, other GPUs 1024, CPU devices two groups
//!   per core;
//! - registers: NVIDIA has 64 K per SM, allocated per warp in blocks of 256; the kernel's
//!   count comes from the `-cl-nv-verbose` build log (`Used N registers`), 64 assumed without;
//! - `__local` memory: the unit's shared memory (NVIDIA by compute capability: 228 KB on 9.0,
//!   164 KB on 8.0, 100 KB on 8.6/8.9; elsewhere `CL_DEVICE_LOCAL_MEM_SIZE`) over the kernel's
//!   `CL_KERNEL_LOCAL_MEM_SIZE`;
//! - the groups a unit may hold (NVIDIA 32, 16 on 7.5/8.6, 24 on 8.9).
//!
//! Private memory (`CL_KERNEL_PRIVATE_MEM_SIZE`, a whole state per work-item) does not limit
//! residency on GPUs: what does not fit in registers goes to the per-thread "local memory" of
//! NVIDIA's terms (cached device memory), which costs bandwidth, not occupancy. The estimate
//! only seeds the launch sizing (`src/backend/gpu/sizer.rs`), which then grows while nonces per second
//! rise.

use crate::search::device::DeviceKind;

/// What the estimate reads.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Facts {
    pub kind: Option<DeviceKind>,
    pub vendor_id: u32,
    pub compute_units: usize,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`.
    pub device_local_mem: u64,
    /// NVIDIA compute capability, where the driver says it.
    pub nv_cc: Option<(u32, u32)>,
    /// Work-items per group.
    pub group: usize,
    /// `CL_KERNEL_LOCAL_MEM_SIZE` of the search kernel.
    pub kernel_local_mem: u64,
    /// Registers per work-item, from the build log.
    pub registers: Option<u32>,
}

/// The estimate and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wave {
    pub groups_per_unit: usize,
    pub items: usize,
    /// What limited the groups per unit: `threads`, `registers`, `local memory`, `groups`.
    pub limit: &'static str,
}

const NVIDIA: u32 = 0x10de;
const AMD: u32 = 0x1002;
const INTEL: u32 = 0x8086;

pub(super) fn estimate(f: &Facts) -> Wave {
    let group = f.group.max(1);
    let units = f.compute_units.max(1);
    if f.kind == Some(DeviceKind::Cpu) {
        return Wave {
            groups_per_unit: 2,
            items: 2 * units * group,
            limit: "cpu",
        };
    }
    let nv = f.vendor_id == NVIDIA;
    let cc = f.nv_cc.unwrap_or((9, 0));
    let (threads, max_groups, shared) = if nv {
        match cc {
            (7, 5) => (1024, 16, 64 << 10),
            (8, 6) => (1536, 16, 100 << 10),
            (8, 9) => (1536, 24, 100 << 10),
            (8, 0) => (2048, 32, 164 << 10),
            (9, _) => (2048, 32, 228 << 10),
            (12, _) => (1536, 32, 100 << 10),
            (7, _) => (2048, 32, 96 << 10),
            _ => (2048, 32, 64 << 10),
        }
    } else if f.vendor_id == AMD {
        (2048, 32, f.device_local_mem.max(64 << 10))
    } else if f.vendor_id == INTEL {
        (64, 8, f.device_local_mem.max(64 << 10))
    } else {
        (1024, 32, f.device_local_mem.max(32 << 10))
    };
    let mut candidates: Vec<(usize, &'static str)> = vec![
        ((threads / group).max(1), "threads"),
        (max_groups, "groups"),
    ];
    if nv {
        let regs = f.registers.unwrap_or(64).max(1) as usize;
        // Per warp: registers × 32 rounded up to 256.
        let per_warp = (regs * 32).div_ceil(256) * 256;
        let warps = group.div_ceil(32);
        candidates.push(((65536 / (per_warp * warps)).max(1), "registers"));
    }
    if let Some(n) = shared.checked_div(f.kernel_local_mem) {
        candidates.push(((n as usize).max(1), "local memory"));
    }
    let (groups_per_unit, limit) = candidates
        .into_iter()
        .min_by_key(|c| c.0)
        .unwrap_or((1, "threads"));
    Wave {
        groups_per_unit,
        items: units * groups_per_unit * group,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200(group: usize, registers: Option<u32>, local: u64) -> Facts {
        Facts {
            kind: Some(DeviceKind::Gpu),
            vendor_id: NVIDIA,
            compute_units: 132,
            device_local_mem: 48 << 10,
            nv_cc: Some((9, 0)),
            group,
            kernel_local_mem: local,
            registers,
        }
    }

    #[test]
    fn h200_waves() {
        // 64 registers (assumed): 65536 / (64 × 64) = 16 groups of 64 = 1024 items per SM.
        let w = estimate(&h200(64, None, 0));
        assert_eq!(
            (w.groups_per_unit, w.items, w.limit),
            (16, 132 * 1024, "registers")
        );
        // 32 registers: the 2048-thread limit.
        let w = estimate(&h200(64, Some(32), 0));
        assert_eq!((w.groups_per_unit, w.limit), (32, "threads"));
        // The cooperative kernel: 4 states of 5832 B per group of 128 → 10 groups by shared
        // memory (228 KB), 16 by threads; with 80 registers 65536 / (2560 × 4) = 6.
        let w = estimate(&h200(128, Some(80), 4 * 5832));
        assert_eq!((w.groups_per_unit, w.limit), (6, "registers"));
        let w = estimate(&h200(128, Some(32), 4 * 5832));
        assert_eq!((w.groups_per_unit, w.limit), (10, "local memory"));
    }

    #[test]
    fn cpu_devices_hold_two_groups_per_core() {
        let f = Facts {
            kind: Some(DeviceKind::Cpu),
            compute_units: 2,
            group: 1,
            ..Facts::default()
        };
        assert_eq!(estimate(&f).items, 4);
    }
}
