//! [`PowJob`]: what the engine's search loop (lease, run, host check, retry) needs of a search, so
//! that one loop serves the transaction PoW ([`SearchJob`]) and the block PoW ([`BlockJob`]).

use crate::base::error::Error;
use crate::search::block::BlockJob;
use crate::search::control::SearchControl;
use crate::search::device::{Device, Found, NonceOutcome};
use crate::search::nonce::CounterRange;
use crate::search::search_job::{Mwm, SearchJob};
use crate::ternary::transaction::Transaction;

/// One prepared search.
pub(crate) trait PowJob: Send + Sync + 'static {
    /// What a verified hit gives.
    type Output: Send + 'static;

    /// Trailing zero trits a hit needs (the registry's expected work is its
    /// [`Mwm::expected_work`]).
    fn min_weight(&self) -> Mwm;

    /// Every counter the search may use; devices of a latency-mode search get parts of it.
    fn counters(&self) -> CounterRange;

    /// Whether `device` runs this kind of search.
    fn runs_on(device: &dyn Device) -> bool;

    /// Run the search on `device`.
    fn run(
        &self,
        device: &dyn Device,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error>;

    /// The host check of what the device found.
    fn verify(&self, found: &Found) -> Option<Self::Output>;
}

impl PowJob for SearchJob {
    type Output = Transaction;

    fn min_weight(&self) -> Mwm {
        SearchJob::min_weight(self)
    }

    fn counters(&self) -> CounterRange {
        CounterRange::ALL
    }

    fn runs_on(_: &dyn Device) -> bool {
        true
    }

    fn run(
        &self,
        device: &dyn Device,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        device.search_nonce(self, range, ctl)
    }

    fn verify(&self, found: &Found) -> Option<Transaction> {
        self.verify_found(found)
    }
}

impl PowJob for BlockJob {
    type Output = u64;

    fn min_weight(&self) -> Mwm {
        Mwm::saturating(BlockJob::zeros(self))
    }

    fn counters(&self) -> CounterRange {
        crate::search::block::COUNTERS
    }

    fn runs_on(device: &dyn Device) -> bool {
        device.supports_block_pow()
    }

    fn run(
        &self,
        device: &dyn Device,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        device
            .search_block(self, range, ctl)
            .map(NonceOutcome::from)
    }

    fn verify(&self, found: &Found) -> Option<u64> {
        match found {
            Found::Hit(hit) => BlockJob::verify(self, *hit),
            // Raw transaction nonce trits mean nothing for a block.
            Found::Nonce(_) => None,
        }
    }
}
