//! A backend's side of a GPU search ([`Launcher`]): upload a job, submit one [`Launch`] over a
//! block of counters, wait for its [`LaunchResult`]. Both kernels report a hit the same way:
//! the first words of [`ResultWords`] are `[found, lane, counter_lo, counter_hi]`, `found`
//! claimed once with an atomic, and [`SKIPPED`] counts the counters left untried after a hit.

use crate::base::error::Error;
use crate::search::block::BlockJob;
use crate::search::search_job::SearchJob;
use crate::ternary::curl::STATE_LEN;
use crate::ternary::trinary::Trit;

use super::Sizer;

/// Words of a launch's result: `[found, lane, counter_lo, counter_hi, skipped, 0, 0, 0]`.
pub(crate) const RESULT_WORDS: usize = 8;
/// Result words of a launch.
pub(crate) type ResultWords = [u32; RESULT_WORDS];
/// Index of the `skipped` word: counters of the launch its work-items did not try because a
/// hit had been found.
pub(crate) const SKIPPED: usize = 4;

/// Launches kept in flight.
pub(crate) const IN_FLIGHT: usize = 2;

/// One launch: `items` work-items over the counters `base .. base + limit`, `per_item`
/// consecutive transforms per state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    pub base: u64,
    pub items: usize,
    pub per_item: u64,
    pub limit: u64,
}

/// What a finished launch returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LaunchResult {
    pub words: ResultWords,
    /// Device nanoseconds of the kernel, where the API profiles.
    pub kernel_ns: Option<u64>,
    /// Device nanoseconds of the result read, where the API profiles.
    pub read_ns: Option<u64>,
}

/// What a GPU search looks for: a transaction's nonce (the backend's search kernel) or a block
/// PoW nonce (its block kernel, the nonce layout of [`BlockJob`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum GpuJob<'a> {
    Transaction(&'a SearchJob),
    Block(&'a BlockJob),
}

impl GpuJob<'_> {
    /// Whether this is a block PoW job.
    pub(crate) fn is_block(&self) -> bool {
        matches!(self, GpuJob::Block(_))
    }

    /// The trailing zero trits a hit needs: the MWM, or the block target's zeros.
    pub(crate) fn zeros(&self) -> usize {
        match self {
            GpuJob::Transaction(j) => j.mwm(),
            GpuJob::Block(j) => j.zeros(),
        }
    }

    /// The mid-state the kernel starts every transform from.
    #[cfg_attr(not(feature = "opencl"), allow(dead_code))]
    pub(crate) fn state(&self) -> &[Trit; STATE_LEN] {
        match self {
            GpuJob::Transaction(j) => j.state(),
            GpuJob::Block(j) => j.state(),
        }
    }
}

/// A backend's side of a GPU search: the long-lived session of one device, with
/// [`Launcher::slots`] result slots so that that many launches can be in flight.
pub(crate) trait Launcher {
    /// Result slots (launches that can be in flight at once).
    fn slots(&self) -> usize {
        IN_FLIGHT
    }

    /// Upload a search: its mid-state and zeros; clear the found flag; the launches that
    /// follow run the kernel of the job's kind (the search kernel, or the block kernel with the
    /// nonce layout of [`BlockJob`]) until the next `begin`. Waits for anything a failed search
    /// left in flight.
    fn begin(&mut self, job: GpuJob<'_>) -> Result<(), Error>;

    /// The launch-size policy of the kernel that runs `job`, kept by the launcher across
    /// searches (one policy for both jobs where their kernels share a launch shape).
    fn sizer(&mut self, job: GpuJob<'_>) -> &mut Sizer;

    /// Queue a launch on `slot` (not in flight) without waiting for it: clear the slot's result,
    /// run the kernel, start reading the result back.
    fn submit(&mut self, slot: usize, launch: &Launch) -> Result<(), Error>;

    /// Wait for the launch on `slot` and return its result.
    fn wait(&mut self, slot: usize) -> Result<LaunchResult, Error>;
}
