//! The shape of a backend's launches ([`Geometry`]): work-items per group and per state, lanes,
//! the wave estimate, the limits, the target launch time, and the sizes the environment or a
//! test forces (`CURLPOW_GPU_LAUNCH_ITEMS`, `CURLPOW_GPU_LAUNCH_ITERS`).

use std::time::Duration;

use crate::base::env;

/// The most counters one launch covers: the kernels count offsets and skipped counters in 32
/// bits.
pub(crate) const MAX_COUNTERS_PER_LAUNCH: u64 = 1 << 31;

/// A forced launch size is clamped to this many estimated waves of the device: a launch is not
/// interrupted, so one far past a wave would hold a search past its deadline or cancel (PoCL
/// with 10^8 work-items forced: 24 s a launch).
pub(crate) const MAX_FORCED_WAVES: usize = 16;

/// The shape of a backend's launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Work-items per group: every launch is a multiple of it.
    pub group: usize,
    /// Work-items that share one state (1; a cooperative kernel's group per state).
    pub items_per_state: usize,
    /// Nonces per counter (lanes of one state).
    pub lanes: u64,
    /// The estimated size of one full wave: where the sizing starts.
    pub wave_items: usize,
    /// The most work-items one launch may have.
    pub max_items: usize,
    /// The most transforms per state one launch may have.
    pub max_per_item: u64,
    /// How long one launch should run: it bounds how late a cancel or another device's hit is
    /// noticed.
    pub target: Duration,
    /// A launch size forced by the environment or a test.
    pub forced_items: Option<usize>,
    /// A launch length forced by the environment or a test.
    pub forced_per_item: Option<u64>,
}

impl Geometry {
    /// `forced_items` / `forced_per_item` from `CURLPOW_GPU_LAUNCH_ITEMS` /
    /// `CURLPOW_GPU_LAUNCH_ITERS`; a value that does not parse is a warning.
    pub(crate) fn with_env(mut self, warnings: &mut Vec<String>) -> Self {
        let positive = |v: &str| v.parse::<u64>().ok().filter(|&n| n > 0);
        match env::setting(
            env::GPU_LAUNCH_ITEMS,
            "a positive number of work-items",
            positive,
        ) {
            Ok(v) => self.forced_items = v.map(|n| n.min(usize::MAX as u64) as usize),
            Err(w) => warnings.push(w),
        }
        match env::setting(
            env::GPU_LAUNCH_ITERS,
            "a positive number of transforms",
            positive,
        ) {
            Ok(v) => self.forced_per_item = v,
            Err(w) => warnings.push(w),
        }
        self
    }
}
