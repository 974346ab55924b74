//! [`KernelConfig`]: the variants of `kernels/curl_pow.cl` (word type, vector width, fused
//! rounds, prefetch distance, where the state lives, the cooperative layout), their build
//! options and their estimated memory traffic.

use crate::search::device::DeviceKind;
use crate::search::nonce::MAX_LANES;
use crate::ternary::curl::STATE_LEN;

/// A kernel variant: the word type of the bit-sliced state and where the state lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    /// 32 (`uint`) or 64 (`ulong`) lanes per word.
    pub lane_bits: u32,
    /// Words per trit half: 1, 2, 4, 8 or 16 (an OpenCL vector type when above 1).
    pub vec: u32,
    /// Keep the state in `__local` memory (`[slot][half][work-item]`) instead of private memory.
    pub local_state: bool,
    /// Rounds fused per pass over the state: 3 (the default: 27 wavefront passes), 5 (15 passes
    /// of 5 and 2 of 3; more registers) or 1; the cooperative kernel: 3, or 4 (3 passes of 3,
    /// then 18 of 4: fewer shared-memory words per S-box, more registers).
    pub fuse: u32,
    /// Load each trit this many wavefront steps ahead (2, 3 or 4; 0: when its step needs it).
    /// Fused passes of the one-state-per-work-item kernel only.
    pub prefetch: u32,
    /// Work-items that share one state in the cooperative kernel (`:coop`, 32-bit words, state
    /// in `__local` memory); 0 for the one-state-per-work-item kernel.
    pub coop: u32,
}

/// Work-items per group the cooperative kernel aims at (states per group = this / `coop`).
pub(super) const COOP_GROUP: u32 = 128;

const NVIDIA: u32 = 0x10de;

impl KernelConfig {
    /// The kernel file (under `kernels/`) and the entry point every variant's transaction
    /// search compiles (`curlpow tune --list` names them).
    pub const SEARCH_KERNEL: (&'static str, &'static str) = ("curl_pow.cl", "curl_search");
    /// The kernel file and entry point of the block search: the same program as the
    /// transaction search, so every variant runs both proofs of work on one transform.
    pub const BLOCK_KERNEL: (&'static str, &'static str) = ("curl_pow.cl", "block_search");

    /// 32 lanes in `uint`, private state.
    pub const U32: KernelConfig = KernelConfig {
        lane_bits: 32,
        vec: 1,
        local_state: false,
        fuse: 3,
        prefetch: 0,
        coop: 0,
    };
    /// 64 lanes in `ulong`, private state.
    pub const U64: KernelConfig = KernelConfig {
        lane_bits: 64,
        ..KernelConfig::U32
    };
    /// 512 lanes in `ulong8`, private state (the CPU-device default: one AVX-512 register).
    pub const U64X8: KernelConfig = KernelConfig {
        lane_bits: 64,
        vec: 8,
        ..KernelConfig::U32
    };
    /// The cooperative kernel: 32 work-items per 32-lane state, in `__local` memory (4 states
    /// per group of 128), three fused rounds per pass.
    pub const U32_COOP: KernelConfig = KernelConfig {
        coop: 32,
        ..KernelConfig::U32
    };
    /// The cooperative kernel with passes of four fused rounds (18 of 4 and 3 of 3): 0.60
    /// shared-memory words per S-box LOP3 instead of 0.74. The default on NVIDIA GPUs.
    pub const U32_COOP_F4: KernelConfig = KernelConfig {
        coop: 32,
        fuse: 4,
        ..KernelConfig::U32
    };
    /// The cooperative kernel with 64 work-items per state, one state per group of 64: less
    /// `__local` memory per wave of 64. The default on other GPUs (AMD's 64 KB of LDS per
    /// compute unit then holds 10 groups).
    pub const U32_COOP64: KernelConfig = KernelConfig {
        coop: 64,
        ..KernelConfig::U32
    };

    /// Nonces per transform of one state.
    pub fn lanes(&self) -> usize {
        (self.lane_bits * self.vec) as usize
    }

    /// Bytes of one word (`W` in the kernel).
    pub(crate) fn word_bytes(&self) -> usize {
        self.lanes() / 8
    }

    /// Side slots of a fused pass (copies of the first trits the wrap-around reads).
    fn side_slots(&self) -> usize {
        match self.fuse {
            1 => 0,
            3 => 5,
            _ => 21,
        }
    }

    /// Bytes of one state: 729 trits, two halves (plus the side slots of fused passes for the
    /// one-state-per-work-item kernel).
    pub(crate) fn state_bytes(&self) -> usize {
        let slots = if self.coop > 0 {
            // The cooperative kernel's layout: two wrapped slots in front, and one word of
            // padding after every chunk when the chunk is even (`WORDS` in the kernel).
            let chunk = STATE_LEN.div_ceil(self.coop as usize);
            STATE_LEN
                + 2
                + if chunk.is_multiple_of(2) {
                    (STATE_LEN + 1) / chunk
                } else {
                    0
                }
        } else {
            STATE_LEN + self.side_slots()
        };
        2 * slots * self.word_bytes()
    }

    /// Whether the combination is one the kernel supports.
    pub(crate) fn is_valid(&self) -> bool {
        let shape = matches!(self.lane_bits, 32 | 64)
            && matches!(self.vec, 1 | 2 | 4 | 8 | 16)
            && self.lanes() <= MAX_LANES
            && matches!(self.fuse, 1 | 3 | 4 | 5)
            && (self.fuse != 4 || self.coop > 0);
        let prefetch = self.prefetch == 0 || ((2..=4).contains(&self.prefetch) && self.fuse != 1);
        let coop = self.coop == 0
            || ((8..=COOP_GROUP).contains(&self.coop)
                && self.lane_bits == 32
                && self.vec == 1
                && (self.fuse == 3 || (self.fuse == 4 && Self::four_round_chunk(self.coop)))
                && self.prefetch == 0
                && !self.local_state);
        shape && prefetch && coop
    }

    /// Whether the cooperative kernel's passes of four rounds take `coop` work-items per state:
    /// the unpadded layout (odd chunk), chunks of 10 trits or more (only the first work-item's
    /// reads wrap below t = 0), only the last one's past t = 728, and a chunk's writes (16
    /// apart) wrap at most once.
    fn four_round_chunk(coop: u32) -> bool {
        let chunk = STATE_LEN.div_ceil(coop as usize);
        chunk % 2 == 1 && chunk >= 10 && (STATE_LEN - 1) % chunk > 3 && 16 * (chunk - 1) < STATE_LEN
    }

    /// The untuned default for a kind of device of a vendor (PCI vendor id; 0 unknown): on a GPU
    /// the state stays on chip (the cooperative kernel, see `docs/gpu-kernels.md`).
    pub fn default_for(kind: DeviceKind, vendor_id: u32) -> KernelConfig {
        match kind {
            DeviceKind::Cpu => KernelConfig::U64X8,
            DeviceKind::Gpu if vendor_id == NVIDIA => KernelConfig::U32_COOP_F4,
            DeviceKind::Gpu => KernelConfig::U32_COOP64,
            _ => KernelConfig::U64,
        }
    }

    /// The device kinds for which this variant is the untuned default ([`default_for`](Self::default_for)):
    /// `"gpu:nvidia"`, `"gpu"` (every other GPU), `"accelerator"`, `"cpu"`.
    pub(crate) fn default_labels(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if *self == KernelConfig::U32_COOP_F4 {
            v.push("gpu:nvidia");
        }
        if *self == KernelConfig::U32_COOP64 {
            v.push("gpu");
        }
        if *self == KernelConfig::U64 {
            v.push("accelerator");
        }
        if *self == KernelConfig::U64X8 {
            v.push("cpu");
        }
        v
    }

    /// The variants the tuner times on a GPU (and `scripts/gpu-static.sh` compiles), the
    /// defaults first.
    pub(crate) fn candidates() -> Vec<KernelConfig> {
        [
            "u32-f4:coop",
            "u32:coop64",
            "u32:coop",
            "u32",
            "u64",
            "u64-f5",
            "u64-p",
            "u32:local",
            "u64x8",
        ]
        .iter()
        .filter_map(|n| KernelConfig::parse(n))
        .collect()
    }

    /// The work-group size of this variant on a device with `local_mem` bytes of `__local`
    /// memory and groups of at most `max_group`; `None` when a `__local` state does not fit.
    /// The cooperative kernel's group is `coop` work-items per state times the states that fit
    /// (up to 128 work-items; one state when `coop` is 64 or more).
    pub(crate) fn local_size(
        &self,
        kind: DeviceKind,
        local_mem: u64,
        max_group: usize,
    ) -> Option<usize> {
        let max = max_group.max(1);
        if self.coop > 0 {
            let p = self.coop as usize;
            let n = usize::try_from(local_mem)
                .unwrap_or(usize::MAX)
                .saturating_sub(64 + 16 * COOP_GROUP as usize)
                .checked_div(self.state_bytes())
                .unwrap_or(0);
            // With two or more states a group also keeps the laid-out mid-state (one state's
            // bytes) in `__local` memory.
            let fit = if n >= 3 { n - 1 } else { n.min(1) };
            let want = if p >= 64 { 1 } else { COOP_GROUP as usize / p };
            let states = want.min(fit).min(max / p);
            return (states > 0).then_some(states * p);
        }
        if self.local_state {
            let fit = usize::try_from(local_mem).unwrap_or(usize::MAX) / self.state_bytes();
            let n = fit.min(max).min(64);
            if n == 0 {
                return None;
            }
            // Largest power of two not above n.
            Some(1 << (usize::BITS - 1 - n.leading_zeros()))
        } else if kind == DeviceKind::Cpu {
            Some(1)
        } else {
            Some(64.min(max))
        }
    }

    /// The registers per work-item NVIDIA's compiler may use (`-cl-nv-maxrregcount`): 128 for
    /// the four-round cooperative kernel, so that 16 warps (a quarter of an SM's 64) stay
    /// resident on sm_80 to sm_90 (65,536 registers an SM) whatever the driver's compiler would
    /// take (uncapped, ptxas takes 128 to 136 for `u32-f4:coop`; capped, it fits without
    /// spilling). `None`: the compiler chooses (the three-round kernels need about 95, and a
    /// cap makes ptxas spend more on them).
    pub(crate) fn nvidia_max_registers(&self) -> Option<u32> {
        (self.coop > 0 && self.fuse == 4).then_some(128)
    }

    /// The options added on NVIDIA's OpenCL (the register cap), as `curlpow tune --list` shows
    /// them; empty when none.
    pub(crate) fn nvidia_options(&self) -> String {
        self.nvidia_max_registers()
            .map_or(String::new(), |n| format!("-cl-nv-maxrregcount={n}"))
    }

    /// The compiler options on a typical discrete GPU (48 KB of `__local` memory, groups of up
    /// to 1024), as `curlpow tune --list` shows them.
    pub(crate) fn reference_build_options(&self) -> String {
        let kind = if self.lanes() > 64 {
            DeviceKind::Cpu
        } else {
            DeviceKind::Gpu
        };
        self.build_options(self.local_size(kind, 48 << 10, 1024).unwrap_or(1))
    }

    /// Parse `u32`, `u64`, `u64x8`, `u32x16`, …, optionally followed by `-f1` or `-f5` (rounds
    /// fused per pass; 3 without), by `-p` (prefetch 2 steps ahead) or `-p3`/`-p4`, and by
    /// `:local`, `:private` or `:coop` / `:coopN` (the cooperative kernel, `N` work-items per
    /// state, 32 without; `u32` only).
    pub fn parse(s: &str) -> Option<KernelConfig> {
        let s = s.trim().to_ascii_lowercase();
        let (word, space) = s.split_once(':').unwrap_or((&s, "private"));
        let (local_state, coop) = match space {
            "local" => (true, 0),
            "private" => (false, 0),
            "coop" => (false, 32),
            other => (false, other.strip_prefix("coop")?.parse::<u32>().ok()?),
        };
        let mut parts = word.split('-');
        let base = parts.next()?;
        let (bits, vec) = match base.split_once('x') {
            Some((b, v)) => (b, v.parse::<u32>().ok()?),
            None => (base, 1),
        };
        let lane_bits = match bits {
            "u32" => 32,
            "u64" => 64,
            _ => return None,
        };
        let mut c = KernelConfig {
            lane_bits,
            vec,
            local_state,
            coop,
            ..KernelConfig::U32
        };
        let (mut fuse_set, mut prefetch_set) = (false, false);
        for part in parts {
            if let Some(f) = part.strip_prefix('f') {
                if fuse_set || prefetch_set {
                    return None;
                }
                c.fuse = f.parse().ok()?;
                fuse_set = true;
            } else if let Some(p) = part.strip_prefix('p') {
                if prefetch_set {
                    return None;
                }
                c.prefetch = if p.is_empty() { 2 } else { p.parse().ok()? };
                prefetch_set = true;
            } else {
                return None;
            }
        }
        c.is_valid().then_some(c)
    }

    /// The name [`parse`](Self::parse) reads back, e.g. `"u64x8"`, `"u64-f5-p"` or
    /// `"u32:coop"`.
    pub fn name(&self) -> String {
        let mut s = format!("u{}", self.lane_bits);
        if self.vec > 1 {
            s.push_str(&format!("x{}", self.vec));
        }
        if self.fuse != 3 {
            s.push_str(&format!("-f{}", self.fuse));
        }
        match self.prefetch {
            0 => {}
            2 => s.push_str("-p"),
            d => s.push_str(&format!("-p{d}")),
        }
        if self.local_state {
            s.push_str(":local");
        }
        match self.coop {
            0 => {}
            32 => s.push_str(":coop"),
            p => s.push_str(&format!(":coop{p}")),
        }
        s
    }

    /// Estimated bytes of memory traffic per nonce tried, and where it goes: `private` (the
    /// state of one work-item: registers and L1 at best, device memory when it spills),
    /// `local` (on-chip shared memory) — see `docs/benchmarks.md`, "GPU: what is modelled".
    ///
    /// One state serves `lanes()` nonces. A pass of the one-state kernel loads and stores every
    /// trit's two words once and copies its side slots (read and write); the cooperative kernel
    /// reads each work-item's chunk plus a halo of 7 trits (15 for a pass of four rounds) and
    /// writes the chunk (a low and a high 32-bit word each).
    pub fn bytes_per_nonce(&self) -> (f64, &'static str) {
        let w = self.word_bytes() as f64;
        let lanes = self.lanes() as f64;
        if self.coop > 0 {
            let chunk = STATE_LEN.div_ceil(self.coop as usize) as f64;
            let per_pass = |halo: f64| {
                (2.0 * f64::from(self.coop) * (chunk + halo) + 2.0 * STATE_LEN as f64) * w
            };
            let transform = if self.fuse == 4 {
                3.0 * per_pass(7.0) + 18.0 * per_pass(15.0)
            } else {
                27.0 * per_pass(7.0)
            };
            return (transform / lanes, "local");
        }
        let per_pass = |side: f64| (2.0 * 2.0 * STATE_LEN as f64 + 2.0 * 2.0 * side) * w;
        let transform = match self.fuse {
            1 => 81.0 * per_pass(0.0),
            3 => 27.0 * per_pass(5.0),
            _ => 15.0 * per_pass(21.0) + 2.0 * per_pass(5.0),
        };
        (
            transform / lanes,
            if self.local_state { "local" } else { "private" },
        )
    }

    /// States per work-group of the cooperative kernel with work-groups of `local_size`.
    pub(super) fn coop_states(&self, local_size: usize) -> usize {
        (local_size / self.coop.max(1) as usize).max(1)
    }

    /// The compiler options (`-D…`) of this variant built for work-groups of `local_size`.
    pub fn build_options(&self, local_size: usize) -> String {
        let mut o = format!(
            "-DLANE_BITS={} -DVEC={} -DSTATE_LOCAL={} -DLOCAL_SIZE={} -DFUSE={} -DPREFETCH={}",
            self.lane_bits,
            self.vec,
            u32::from(self.local_state),
            local_size,
            self.fuse,
            self.prefetch,
        );
        if self.coop > 0 {
            o.push_str(&format!(
                " -DCOOP=1 -DCOOP_P={} -DCOOP_S={}",
                self.coop,
                self.coop_states(local_size)
            ));
        }
        o
    }
}

impl std::fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_estimates() {
        // ~10 KB per nonce with 3 fused rounds, ~6.4 KB with 5, whatever the word.
        let (b3, w3) = KernelConfig::U64.bytes_per_nonce();
        assert!((9_800.0..10_000.0).contains(&b3), "{b3}");
        assert_eq!(w3, "private");
        assert_eq!(KernelConfig::U32.bytes_per_nonce().0, b3);
        let (b5, _) = KernelConfig::parse("u64-f5").unwrap().bytes_per_nonce();
        assert!((6_300.0..6_400.0).contains(&b5), "{b5}");
        let (bc, wc) = KernelConfig::U32_COOP.bytes_per_nonce();
        assert_eq!(wc, "local");
        assert!((11_000.0..11_500.0).contains(&bc), "{bc}");
        // Four rounds per pass: fewer passes over the state.
        let (b4, _) = KernelConfig::U32_COOP_F4.bytes_per_nonce();
        assert!((9_900.0..10_200.0).contains(&b4), "{b4}");
    }

    #[test]
    fn coop_groups_leave_room_for_the_laid_out_mid_state() {
        let c = KernelConfig::U32_COOP;
        let state = c.state_bytes();
        let reserve = 64 + 16 * COOP_GROUP as usize;
        let size = |states: usize| (reserve + states * state) as u64;
        // Four states and the mid-state: 5 states' bytes.
        assert_eq!(c.local_size(DeviceKind::Gpu, size(5), 1024), Some(128));
        assert_eq!(c.local_size(DeviceKind::Gpu, size(5) - 1, 1024), Some(96));
        // Two states need three; one state needs no mid-state copy.
        assert_eq!(c.local_size(DeviceKind::Gpu, size(3) - 1, 1024), Some(32));
        assert_eq!(c.local_size(DeviceKind::Gpu, size(1), 1024), Some(32));
        assert_eq!(c.local_size(DeviceKind::Gpu, size(1) - 1, 1024), None);
    }

    #[test]
    fn four_round_coop_variant() {
        let c = KernelConfig::parse("u32-f4:coop").unwrap();
        assert_eq!(c, KernelConfig::U32_COOP_F4);
        assert_eq!(c.name(), "u32-f4:coop");
        assert!(c.build_options(128).contains("-DFUSE=4"));
        assert_eq!(
            KernelConfig::default_for(DeviceKind::Gpu, NVIDIA),
            KernelConfig::U32_COOP_F4
        );
        assert_eq!(c.default_labels(), vec!["gpu:nvidia"]);
        // Four rounds: the cooperative kernel only, on odd chunks of 10 trits or more.
        for bad in [
            "u32-f4",
            "u64-f4",
            "u32-f4:coop64",
            "u32-f4:coop16",
            "u32-f4:coop9",
            "u32-f4:local",
        ] {
            assert!(KernelConfig::parse(bad).is_none(), "{bad}");
        }
        assert!(KernelConfig::parse("u32-f4:coop24").is_some());
        // Capped at 128 registers on NVIDIA (occupancy a quarter); the others uncapped.
        assert_eq!(c.nvidia_max_registers(), Some(128));
        assert_eq!(c.nvidia_options(), "-cl-nv-maxrregcount=128");
        assert_eq!(KernelConfig::U64X8.nvidia_options(), "");
        assert_eq!(KernelConfig::U32_COOP64.nvidia_options(), "");
    }

    #[test]
    fn coop_build_options() {
        let o = KernelConfig::U32_COOP.build_options(128);
        assert!(o.contains("-DCOOP=1 -DCOOP_P=32 -DCOOP_S=4"), "{o}");
        assert!(!KernelConfig::U32.build_options(64).contains("COOP"));
    }
}
