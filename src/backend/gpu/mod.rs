//! What the GPU backends share: the search driver (the launch loop, stop checks, range
//! bookkeeping, hit validation, counting and the launch-size policy, written once) and the
//! discovery plumbing (ranking, the software-driver rule, environment settings).
//!
//! A backend supplies only a [`Launcher`]: upload a search, run one launch over a block of
//! counters, return the kernel's result words. Both kernels report a hit the same way: four
//! 32-bit words `[found, lane, counter_lo, counter_hi]`, `found` claimed once with an atomic.
//!
//! Files: `launcher.rs` (the backend's side: [`Launcher`], [`Launch`], the result words),
//! `geometry.rs` (the launch shape and its limits), `sizer.rs` (the launch-size policy),
//! `ring.rs` (the launches in flight), `decode.rs` (result words to a hit), `driver.rs` (the
//! search loop over them), `discover.rs`, `tune_cache.rs`.

mod decode;
pub(crate) mod discover;
pub(crate) mod driver;
pub(crate) mod geometry;
mod launcher;
mod ring;
mod sizer;
pub(crate) mod tune_cache;

pub(crate) use geometry::Geometry;
#[allow(unused_imports)]
pub(crate) use launcher::{
    GpuJob, Launch, LaunchResult, Launcher, ResultWords, IN_FLIGHT, RESULT_WORDS,
};
pub(crate) use sizer::Sizer;
