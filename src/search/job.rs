//! One PoW search prepared for the devices ([`SearchJob`]): the mid-state before the last
//! transform, the minimum weight, and the host check of a device's answer. The nonce layout it
//! fills is in `search::nonce`.

use crate::base::error::Error;
pub use crate::search::nonce::*;
use crate::ternary::curl::{Planes, PlanesKernel, HASH_LEN, STATE_LEN};
use crate::ternary::transaction::Transaction;
use crate::ternary::trinary::Trit;

/// One search, prepared once: the state before the last transform with the nonce's lane and
/// counter trits zero, and what the host check needs.
#[derive(Clone)]
pub struct SearchJob {
    tx: Transaction,
    mwm: usize,
    /// Curl state after absorbing blocks 1..32, with the last block written over the rate and the
    /// nonce field zeroed (lane and counter trits zero).
    state: [Trit; STATE_LEN],
    /// The same state as the host's fast transform holds it, for the host check.
    planes: Planes,
}

/// The nonce is whole limbs of the planes layout (limbs 6..9), so a check writes it directly.
pub(crate) const NONCE_LIMB: usize = NONCE_OFFSET / crate::ternary::curl::planes::LIMB;
const _: () = assert!(NONCE_LIMB * crate::ternary::curl::planes::LIMB == NONCE_OFFSET);

impl std::fmt::Debug for SearchJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchJob")
            .field("mwm", &self.mwm)
            .finish_non_exhaustive()
    }
}

impl SearchJob {
    /// Prepare a search: absorbs the first 32 blocks (the mid-state) once, with the host's fast
    /// transform (tested against the reference).
    pub fn new(tx: &Transaction, mwm: usize) -> Result<Self, Error> {
        check_mwm(mwm)?;
        // The transaction holds only trits, in 32 whole blocks here.
        let mid =
            crate::ternary::curl::planes::absorb(&tx.trits()[..LAST_BLOCK], PlanesKernel::detect());
        Ok(Self::from_planes(tx, mwm, mid))
    }

    /// Prepare a search from a mid-state computed elsewhere on the host (a batch of them at once:
    /// [`crate::engine::hash_batch::midstates`]): `mid` is the sponge state after the first 32 blocks.
    pub(crate) fn with_midstate(
        tx: &Transaction,
        mwm: usize,
        mid: &[Trit; STATE_LEN],
    ) -> Result<Self, Error> {
        check_mwm(mwm)?;
        Ok(Self::from_planes(tx, mwm, Planes::from_trits(mid)))
    }

    fn from_planes(tx: &Transaction, mwm: usize, mut planes: Planes) -> SearchJob {
        planes.set_limbs(0, &tx.trits()[LAST_BLOCK..]);
        planes.set_limbs(NONCE_LIMB, &[0; HASH_LEN - NONCE_OFFSET]);
        SearchJob {
            tx: tx.clone(),
            mwm,
            state: planes.trits(),
            planes,
        }
    }

    /// Prepare a search from a *prefix state*: the sponge state after absorbing blocks 0..30
    /// of `tx` (trits `0..PREFIX_TRITS`, everything before the trunk; [`prefix_state`]). Only
    /// blocks 30 and 31 (trunk and branch) are absorbed here, so a chain of searches whose
    /// trunk depends on the previous result (attachToTangle) pays 2 transforms per step, not
    /// 32. `prefix` must be `prefix_state` of a transaction with the same trits
    /// `0..PREFIX_TRITS` as `tx`; [`SearchJob::verify`] still checks every hit on the host.
    pub(crate) fn from_prefix(
        tx: &Transaction,
        mwm: usize,
        prefix: &[Trit; STATE_LEN],
    ) -> Result<Self, Error> {
        check_mwm(mwm)?;
        let kernel = PlanesKernel::detect();
        let mut mid = Planes::from_trits(prefix);
        for block in tx.trits()[PREFIX_TRITS..LAST_BLOCK].chunks_exact(HASH_LEN) {
            mid.absorb_block(block, kernel);
        }
        Ok(Self::from_planes(tx, mwm, mid))
    }

    /// The minimum weight magnitude.
    pub fn mwm(&self) -> usize {
        self.mwm
    }

    /// What a CPU kernel searches: the state, the MWM, the transaction's nonce layout.
    pub(crate) fn kernel_job(&self) -> crate::search::layout::KernelJob<'_> {
        crate::search::layout::KernelJob::new(
            &self.state,
            self.mwm,
            crate::search::layout::Layout::Transaction,
        )
    }

    /// The state to transform, with lane and counter trits zero.
    pub fn state(&self) -> &[Trit; STATE_LEN] {
        &self.state
    }

    /// The same state as the host's fast transform holds it (nonce trits zero).
    pub(crate) fn planes(&self) -> &Planes {
        &self.planes
    }

    /// The input transaction.
    pub fn transaction(&self) -> &Transaction {
        &self.tx
    }

    /// The host check: the transaction with this hit's nonce, if its hash really ends in `mwm`
    /// zero trits. One transform of the last block from the host's own mid-state (computed on
    /// the host, never read back from a device), with the host's fast transform.
    pub fn verify(&self, hit: Hit) -> Option<Transaction> {
        if hit.lane >= MAX_LANES {
            return None;
        }
        self.verify_nonce(&nonce_trits(hit.lane, hit.counter))
    }

    /// The host check of any 81 nonce trits (a remote worker's answer, which need not follow
    /// the crate's nonce layout): the transaction with this nonce, if its hash really ends in
    /// `mwm` zero trits. `None` also for a value that is not a trit.
    pub fn verify_nonce(&self, nonce: &[Trit; NONCE_TRITS]) -> Option<Transaction> {
        if nonce.iter().any(|t| !(-1..=1).contains(t)) {
            return None;
        }
        let mut p = self.planes;
        p.set_limbs(NONCE_LIMB, nonce);
        PlanesKernel::detect().run(&mut p);
        if p.rate_trailing_zeros() < self.mwm {
            return None;
        }
        let mut tx = self.tx.clone();
        tx.set_field(crate::ternary::transaction::Field::Nonce, nonce)
            .expect("81 trits");
        Some(tx)
    }

    /// The host check of what a device found, whichever form it has.
    pub fn verify_found(&self, found: &crate::search::nonce::Found) -> Option<Transaction> {
        match found {
            crate::search::nonce::Found::Hit(hit) => self.verify(*hit),
            crate::search::nonce::Found::Nonce(nonce) => self.verify_nonce(nonce),
        }
    }
}

/// Trits absorbed into a [`prefix_state`]: blocks 0..30, everything before the trunk field.
pub(crate) const PREFIX_TRITS: usize = 30 * HASH_LEN;

/// The sponge state after absorbing blocks 0..30 of `tx`: what no attachToTangle step changes
/// (trunk, branch, tag, timestamps and nonce all lie in blocks 30..33).
pub(crate) fn prefix_state(tx: &Transaction) -> [Trit; STATE_LEN] {
    crate::ternary::curl::planes::absorb(&tx.trits()[..PREFIX_TRITS], PlanesKernel::detect())
        .trits()
}

/// Check a minimum weight magnitude (0..=243).
pub fn check_mwm(mwm: usize) -> Result<(), Error> {
    if mwm > HASH_LEN {
        Err(Error::InvalidMwm(mwm))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_and_counter_encodings_are_injective() {
        let mut seen = std::collections::HashSet::new();
        for l in 0..MAX_LANES {
            assert!(seen.insert(lane_trits(l)));
        }
        for n in [0u64, 1, 2, 3, u64::MAX, u64::MAX - 1, 1 << 40] {
            let t = counter_trits(n);
            assert_eq!(crate::ternary::trinary::read_balanced(&t), n as i128);
        }
    }

    #[test]
    fn a_nonce_in_the_layout_decodes_to_its_hit() {
        for (lane, counter) in [(0, 0), (728, u64::MAX), (364, 1 << 40), (5, 77)] {
            let hit = Hit { lane, counter };
            assert_eq!(hit_of_nonce(&nonce_trits(lane, counter)), Some(hit));
        }
        let mut off_layout = nonce_trits(3, 9);
        off_layout[80] = 1;
        assert_eq!(hit_of_nonce(&off_layout), None);
        let mut negative = [0; NONCE_TRITS];
        negative[47] = -1;
        assert_eq!(hit_of_nonce(&negative), None);
    }

    #[test]
    fn parts_are_disjoint() {
        let r = CounterRange {
            start: 10,
            len: 100,
        };
        let a = r.part(0, 3);
        let b = r.part(1, 3);
        assert_eq!(a.start + a.len, b.start);
    }
}
