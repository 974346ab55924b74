//! [`Tuning`]: the shape of the kernel and its dispatches, with per-kind defaults and the
//! clamps that keep it inside an adapter's limits (and llvmpipe's loop cap).

use std::time::Duration;

use super::buffers::SLOTS;
use crate::base::env;
use crate::ternary::curl::STATE_LEN;

/// Loop iterations of one transform in the kernel, the larger shape (81 single rounds of 92;
/// fused: 27 passes of 198), plus copy, counter and test; used to stay under llvmpipe's cap of
/// 65,535 per invocation.
pub const LOOP_ITERATIONS_PER_TRANSFORM: u32 = 81 * 92 + 81 + 42 + 243 + 1;
/// llvmpipe's cap on loop iterations per shader invocation: more silently computes garbage.
pub const SOFTWARE_LOOP_CAP: u32 = 65_535;

/// The scratch buffer never grows past this (1 GiB: 92 K invocations of 64-bit lanes), whatever
/// the adapter's limits say.
pub(crate) const MAX_SCRATCH_BYTES: u64 = 1 << 30;

/// Shape of the kernel and its dispatches. The defaults depend on the adapter (software or
/// GPU); every field can be overridden with `CURLPOW_WGPU_TUNING`: comma-separated
/// `key=value` pairs, keys `workgroup`, `transforms`, `max_invocations`, `fuse`, `target_ms`,
/// `coop` (e.g. `CURLPOW_WGPU_TUNING=fuse=3,workgroup=128`; `coop=32` the workgroup-memory
/// kernel with 32 invocations per state, `coop=0` the storage-buffer kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Invocations per workgroup (`WORKGROUP_SIZE`).
    pub workgroup_size: u32,
    /// The most transforms per invocation in one dispatch (`TRANSFORMS`): the launch sizing
    /// (`src/backend/gpu/sizer.rs`) picks each dispatch's length below it. On software adapters it is
    /// clamped so that it stays under llvmpipe's loop cap.
    pub transforms_per_invocation: u32,
    /// The most invocations one dispatch may have (sizes the scratch buffer).
    pub max_invocations: u32,
    /// Rounds per pass over the state (`FUSE`): 1, 3 or 5 (fused wavefronts; others mean 3).
    pub fuse: u32,
    /// Target wall time of one dispatch (the length is set to reach it; a hit is seen about
    /// one dispatch after it happens, and a cancel within one).
    pub target_dispatch: Duration,
    /// Invocations per state of the workgroup-memory kernel (`kernels/curl_pow_workgroup.wgsl`:
    /// the state in `var<workgroup>` memory, 32-bit lanes, the workgroup size follows), 16 to
    /// 128; 0 for the storage-buffer kernel (`kernels/curl_pow.wgsl`).
    pub coop: u32,
}

impl Tuning {
    /// Defaults for a software adapter (llvmpipe): up to 7 transforms per invocation (the most
    /// under its loop cap; the sizing picks the length), a few thousand invocations, small
    /// workgroups (llvmpipe runs one workgroup per thread: 8 invocations fill one 256-bit SIMD
    /// vector and let several workgroups share the cores).
    pub fn software() -> Self {
        Tuning {
            workgroup_size: 8,
            transforms_per_invocation: 7,
            max_invocations: 4096,
            fuse: 3,
            target_dispatch: Duration::from_millis(25),
            coop: 0,
        }
    }

    /// Defaults for a GPU: enough invocations to fill a large GPU, up to 64 transforms each, five
    /// fused rounds (a fifth of the memory traffic of single rounds; GPUs have the registers
    /// for the windows), 2 ms dispatches. Reasoned, not yet measured on a real GPU.
    pub fn gpu() -> Self {
        Tuning {
            workgroup_size: 64,
            transforms_per_invocation: 64,
            max_invocations: 1 << 18,
            fuse: 5,
            target_dispatch: Duration::from_millis(2),
            coop: 0,
        }
    }

    /// Defaults for a discrete GPU: the state in workgroup memory (the layout of the OpenCL
    /// cooperative kernel), 32 invocations per state on NVIDIA (PCI vendor 0x10de), 64 on
    /// others (less workgroup memory per wave of 64).
    pub(crate) fn gpu_workgroup(vendor: u32) -> Self {
        Tuning {
            coop: if vendor == 0x10de { 32 } else { 64 },
            ..Self::gpu()
        }
    }

    /// This tuning with the overrides of `spec` (the `CURLPOW_WGPU_TUNING` syntax): `Err` names the
    /// pair that does not parse.
    pub(crate) fn with_overrides(mut self, spec: &str) -> Result<Self, String> {
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                format!("{}: {pair:?} is not key=number (keys workgroup, transforms, max_invocations, fuse, target_ms, coop)", env::WGPU_TUNING)
            };
            let (k, v) = pair.split_once('=').ok_or_else(bad)?;
            let n: u32 = v.trim().parse().map_err(|_| bad())?;
            match k.trim() {
                "workgroup" => self.workgroup_size = n,
                "transforms" => self.transforms_per_invocation = n,
                "max_invocations" => self.max_invocations = n,
                "fuse" => self.fuse = n,
                "target_ms" => self.target_dispatch = Duration::from_millis(u64::from(n)),
                "coop" => self.coop = n,
                _ => return Err(bad()),
            }
        }
        Ok(self)
    }

    /// The kernel variants (name, tuning, the adapters it is the default for): the
    /// storage-buffer kernel with 1, 3 or 5 fused rounds and the workgroup kernel with 32 or
    /// 64 invocations per state.
    pub fn variants() -> Vec<(&'static str, Tuning, Vec<&'static str>)> {
        let f = |fuse| Tuning {
            fuse,
            ..Self::gpu()
        };
        vec![
            (
                "workgroup32",
                Self::gpu_workgroup(0x10de),
                vec!["gpu:nvidia"],
            ),
            ("workgroup64", Self::gpu_workgroup(0), vec!["gpu"]),
            ("storage-f5", f(5), vec!["integrated-gpu"]),
            ("storage-f3", f(3), vec!["cpu"]),
            ("storage-f1", f(1), vec![]),
        ]
    }

    /// The kernel file (under `kernels/`) and the entry point of this tuning's transaction
    /// search, or of its block search (`block`).
    pub(crate) fn kernel_entry(&self, block: bool) -> (&'static str, &'static str) {
        // Both layouts' modules hold both searches (`src/backend/wgpu/source.rs`); the block
        // search adds `block_pow.wgsl`'s counter writer to the layout's file.
        let file = if self.coop > 0 {
            "curl_pow_workgroup.wgsl"
        } else {
            "curl_pow.wgsl"
        };
        (file, if block { "block_search" } else { "search" })
    }

    /// Bytes of the scratch buffer per invocation: a whole state of the storage-buffer kernel
    /// (words of `word` bytes), or a share of one state (the transform test's input and output)
    /// of the workgroup kernel.
    pub(super) fn scratch_bytes_per_invocation(&self, word: u64) -> u64 {
        if self.coop > 0 {
            (STATE_LEN as u64 * 2 * 4).div_ceil(u64::from(self.coop))
        } else {
            slot_bytes(word)
        }
    }

    /// The default for an adapter: [`software`](Self::software) on CPU adapters,
    /// [`gpu_workgroup`](Self::gpu_workgroup) on discrete GPUs, [`gpu`](Self::gpu) on others.
    pub(super) fn for_adapter(ai: &wgpu::AdapterInfo) -> Self {
        match ai.device_type {
            wgpu::DeviceType::Cpu => Self::software(),
            wgpu::DeviceType::DiscreteGpu => Self::gpu_workgroup(ai.vendor),
            _ => Self::gpu(),
        }
    }

    /// The tuning an adapter can run: workgroup size within its limits, transforms under the
    /// software loop cap, invocations within the largest scratch buffer it may bind (words of
    /// `word` bytes), and counter offsets `j * stride + g` that fit the kernel's u32.
    pub(super) fn clamped(mut self, limits: &wgpu::Limits, software: bool, word: u64) -> Self {
        if self.coop != 0 {
            // The workgroup kernel: its group is its states' invocations, and it needs the
            // workgroup memory of those states (two halves of 4-byte words each).
            self.coop = self.coop.clamp(16, 128);
            let states = super::workgroup::states_per_group(self.coop);
            let group = self.coop * states;
            let bytes = 2 * 4 * super::workgroup::words(self.coop) * states;
            if group > limits.max_compute_invocations_per_workgroup
                || group > limits.max_compute_workgroup_size_x
                || bytes > limits.max_compute_workgroup_storage_size
            {
                self.coop = 0;
            } else {
                self.workgroup_size = group;
            }
        }
        self.workgroup_size = self
            .workgroup_size
            .clamp(1, limits.max_compute_workgroup_size_x)
            .min(limits.max_compute_invocations_per_workgroup);
        self.transforms_per_invocation = self.transforms_per_invocation.max(1);
        if !matches!(self.fuse, 1 | 3 | 5) {
            self.fuse = 3;
        }
        if software {
            // Stay well under llvmpipe's loop cap (7 transforms, ~55,000 iterations).
            self.transforms_per_invocation = self
                .transforms_per_invocation
                .clamp(1, SOFTWARE_LOOP_CAP / LOOP_ITERATIONS_PER_TRANSFORM - 1);
        }
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(MAX_SCRATCH_BYTES);
        let wg = self.workgroup_size;
        let max_groups = (max_binding / self.scratch_bytes_per_invocation(word) / u64::from(wg))
            .min(u64::from(self.max_invocations.max(wg) / wg))
            .min(u64::from(limits.max_compute_workgroups_per_dimension))
            .max(1) as u32;
        self.max_invocations = max_groups * wg;
        self.transforms_per_invocation = self
            .transforms_per_invocation
            .min(u32::MAX / self.max_invocations);
        self
    }
}

/// The invocations of one full wave, reasoned (wgpu has no occupancy query and no count of
/// compute units): a large discrete GPU holds 64 K to 270 K resident invocations (an H200: 132
/// SMs × up to 2048), an integrated one a few thousand; a software adapter runs one workgroup
/// per CPU thread. The sizing grows from here while nonces per second rise (up to the scratch
/// buffer's cap).
pub(super) fn wave_invocations(ai: &wgpu::AdapterInfo, software: bool, t: &Tuning) -> u32 {
    let wg = t.workgroup_size.max(1);
    let guess = if software {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u32;
        threads * wg
    } else {
        match ai.device_type {
            wgpu::DeviceType::DiscreteGpu => 65_536,
            wgpu::DeviceType::IntegratedGpu => 4_096,
            _ => 16_384,
        }
    };
    guess.clamp(wg, t.max_invocations.max(wg))
}

/// `CURLPOW_WGPU_TUNING` applied to `t` (unset: `t`); a value that does not parse is a warning
/// and leaves `t`.
pub(super) fn tuning_env(t: Tuning) -> Result<Tuning, String> {
    match env::get(env::WGPU_TUNING)? {
        Some(v) => t.with_overrides(&v),
        None => Ok(t),
    }
}

/// Scratch bytes of one invocation's state.
pub(super) fn slot_bytes(word: u64) -> u64 {
    SLOTS as u64 * 2 * word
}

/// `CURLPOW_WGPU_LANES`: `32` forces 32-bit lanes; `64` or unset keeps the default. The one
/// place the variable is read.
pub(super) fn lanes_env() -> Result<bool, String> {
    env::setting(env::WGPU_LANES, "32 or 64", |v| match v {
        "32" => Some(true),
        "64" => Some(false),
        _ => None,
    })
    .map(|v| v.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_budget_fits_software_cap() {
        let t = Tuning::software().transforms_per_invocation;
        assert!(t * LOOP_ITERATIONS_PER_TRANSFORM + t < SOFTWARE_LOOP_CAP);
        let limits = wgpu::Limits::default();
        let big = Tuning {
            transforms_per_invocation: 100,
            ..Tuning::software()
        };
        let c = big.clamped(&limits, true, 8);
        assert!(c.transforms_per_invocation * LOOP_ITERATIONS_PER_TRANSFORM < SOFTWARE_LOOP_CAP);
    }

    #[test]
    fn overrides_parse_and_say_what_is_wrong() {
        let t = Tuning::gpu()
            .with_overrides("fuse=3, workgroup=128,target_ms=5")
            .unwrap();
        assert_eq!((t.fuse, t.workgroup_size), (3, 128));
        assert_eq!(t.target_dispatch, Duration::from_millis(5));
        assert_eq!(
            t.transforms_per_invocation,
            Tuning::gpu().transforms_per_invocation
        );
        assert!(Tuning::gpu()
            .with_overrides("fuse")
            .unwrap_err()
            .contains("\"fuse\""));
        assert!(Tuning::gpu().with_overrides("speed=9").is_err());
        assert_eq!(Tuning::gpu().with_overrides("").unwrap(), Tuning::gpu());
    }

    #[test]
    fn clamped_tuning_fits_the_limits() {
        let limits = wgpu::Limits::default();
        let t = Tuning {
            workgroup_size: 100_000,
            max_invocations: u32::MAX,
            fuse: 4,
            ..Tuning::gpu()
        }
        .clamped(&limits, false, 8);
        assert!(t.workgroup_size <= limits.max_compute_workgroup_size_x);
        assert_eq!(t.max_invocations % t.workgroup_size, 0);
        assert!(u64::from(t.max_invocations) * slot_bytes(8) <= MAX_SCRATCH_BYTES);
        assert_eq!(t.fuse, 3);
        assert!(
            u64::from(t.transforms_per_invocation) * u64::from(t.max_invocations)
                <= u64::from(u32::MAX)
        );
    }
}
