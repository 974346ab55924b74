//! What the GPU backends share: the search driver (the launch loop, stop checks, range
//! bookkeeping, hit validation, counting and the launch-size policy, written once) and the
//! discovery plumbing (ranking, the software-driver rule, environment settings).
//!
//! A backend supplies only a [`Launcher`]: upload a search, run one launch over a block of
//! counters, return the kernel's result words. Both kernels report a hit the same way: four
//! 32-bit words `[found, lane, counter_lo, counter_hi]`, `found` claimed once with an atomic.

pub(crate) mod discover;
pub(crate) mod driver;
pub mod tune_cache;
pub(crate) mod tuner;

pub(crate) use driver::{Geometry, Launch, LaunchResult, Launcher, Sizer};
