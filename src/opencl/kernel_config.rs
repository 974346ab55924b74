//! [`KernelConfig`]: the variants of `kernels/curl_pow.cl` (word type, vector width, fused
//! rounds, where the state lives) and their build options.

use crate::curl::STATE_LEN;
use crate::device::DeviceKind;
use crate::search::MAX_LANES;

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
    /// of 5 and 2 of 3; more registers) or 1.
    pub fuse: u32,
}

impl KernelConfig {
    /// 32 lanes in `uint`, private state.
    pub const U32: KernelConfig = KernelConfig {
        lane_bits: 32,
        vec: 1,
        local_state: false,
        fuse: 3,
    };
    /// 64 lanes in `ulong`, private state.
    pub const U64: KernelConfig = KernelConfig {
        lane_bits: 64,
        vec: 1,
        local_state: false,
        fuse: 3,
    };
    /// 512 lanes in `ulong8`, private state (the CPU-device default: one AVX-512 register).
    pub const U64X8: KernelConfig = KernelConfig {
        lane_bits: 64,
        vec: 8,
        local_state: false,
        fuse: 3,
    };

    /// Nonces per transform of one work-item.
    pub fn lanes(&self) -> usize {
        (self.lane_bits * self.vec) as usize
    }

    /// Bytes of one word (`W` in the kernel).
    pub fn word_bytes(&self) -> usize {
        self.lanes() / 8
    }

    /// Bytes of one work-item's state (729 trits, two halves, plus the side slots of fused passes).
    pub fn state_bytes(&self) -> usize {
        let slots = if self.fuse == 1 {
            STATE_LEN
        } else {
            STATE_LEN + 5
        };
        2 * slots * self.word_bytes()
    }

    /// Whether the combination is one the kernel supports.
    pub fn is_valid(&self) -> bool {
        matches!(self.lane_bits, 32 | 64)
            && matches!(self.vec, 1 | 2 | 4 | 8 | 16)
            && self.lanes() <= MAX_LANES
            && matches!(self.fuse, 1 | 3 | 5)
    }

    /// The default for a kind of device.
    pub fn default_for(kind: DeviceKind) -> KernelConfig {
        match kind {
            DeviceKind::Cpu => KernelConfig::U64X8,
            _ => KernelConfig::U64,
        }
    }

    /// Parse `u32`, `u64`, `u64x8`, `u32x16`, …, optionally followed by `-f1` or `-f5` (rounds
    /// fused per pass; 3 without) and by `:local` or `:private`.
    pub fn parse(s: &str) -> Option<KernelConfig> {
        let s = s.trim().to_ascii_lowercase();
        let (word, space) = match s.split_once(':') {
            Some((w, sp)) => (w.to_string(), sp.to_string()),
            None => (s, "private".to_string()),
        };
        let local_state = match space.as_str() {
            "local" => true,
            "private" => false,
            _ => return None,
        };
        let (word, fuse) = match word.split_once("-f") {
            Some((w, f)) => (w.to_string(), f.parse::<u32>().ok()?),
            None => (word, 3),
        };
        let (bits, vec) = match word.split_once('x') {
            Some((b, v)) => (b, v.parse::<u32>().ok()?),
            None => (word.as_str(), 1),
        };
        let lane_bits = match bits {
            "u32" => 32,
            "u64" => 64,
            _ => return None,
        };
        let c = KernelConfig {
            lane_bits,
            vec,
            local_state,
            fuse,
        };
        c.is_valid().then_some(c)
    }

    /// The name [`parse`](Self::parse) reads back, e.g. `"u64x8"`, `"u64-f1"` or `"u32:local"`.
    pub fn name(&self) -> String {
        let mut s = format!("u{}", self.lane_bits);
        if self.vec > 1 {
            s.push_str(&format!("x{}", self.vec));
        }
        if self.fuse != 3 {
            s.push_str(&format!("-f{}", self.fuse));
        }
        if self.local_state {
            s.push_str(":local");
        }
        s
    }

    pub(super) fn build_options(&self, local_size: usize) -> String {
        format!(
            "-DLANE_BITS={} -DVEC={} -DSTATE_LOCAL={} -DLOCAL_SIZE={} -DFUSE={}",
            self.lane_bits,
            self.vec,
            u32::from(self.local_state),
            local_size,
            self.fuse
        )
    }
}

impl std::fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}
