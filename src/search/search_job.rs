//! One PoW search prepared for the devices ([`SearchJob`]): the mid-state before the last
//! transform, the minimum weight ([`Mwm`]), and the host check of a device's answer. The nonce
//! layout it fills is in `search::nonce`.

use crate::base::error::Error;
use crate::search::nonce::*;
use crate::ternary::curl::{PlanesKernel, StatePlanes, HASH_LEN, STATE_LEN};
use crate::ternary::transaction::Transaction;
use crate::ternary::trinary::Trit;

/// One search, prepared once: the state before the last transform with the nonce's lane and
/// counter trits zero, and what the host check needs.
#[derive(Clone)]
pub struct SearchJob {
    tx: Transaction,
    mwm: Mwm,
    /// Curl state after absorbing blocks 1..32, with the last block written over the rate and the
    /// nonce field zeroed (lane and counter trits zero).
    state: [Trit; STATE_LEN],
    /// The same state as the host's fast transform holds it, for the host check.
    planes: StatePlanes,
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
    /// transform (tested against the reference). An `mwm` above 243 is [`Error::InvalidMwm`]
    /// (the crate itself prepares its jobs with [`SearchJob::prepare`], from a checked [`Mwm`]).
    pub fn new(tx: &Transaction, mwm: usize) -> Result<Self, Error> {
        Ok(Self::prepare(tx, Mwm::try_from(mwm)?))
    }

    /// [`SearchJob::new`] with a checked MWM.
    pub fn prepare(tx: &Transaction, mwm: Mwm) -> Self {
        // The transaction holds only trits, in 32 whole blocks here.
        let mid =
            crate::ternary::curl::planes::absorb(&tx.trits()[..LAST_BLOCK], PlanesKernel::detect());
        Self::from_planes(tx, mwm, mid)
    }

    /// Prepare a search from a mid-state computed elsewhere on the host (a batch of them at once:
    /// [`crate::engine::hash_batch::midstates`]): `mid` is the sponge state after the first 32 blocks.
    pub(crate) fn with_midstate(tx: &Transaction, mwm: Mwm, mid: &[Trit; STATE_LEN]) -> Self {
        Self::from_planes(tx, mwm, StatePlanes::from_trits(mid))
    }

    fn from_planes(tx: &Transaction, mwm: Mwm, mut planes: StatePlanes) -> SearchJob {
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
    pub(crate) fn from_prefix(tx: &Transaction, mwm: Mwm, prefix: &[Trit; STATE_LEN]) -> Self {
        let kernel = PlanesKernel::detect();
        let mut mid = StatePlanes::from_trits(prefix);
        for block in tx.trits()[PREFIX_TRITS..LAST_BLOCK].chunks_exact(HASH_LEN) {
            mid.absorb_block(block, kernel);
        }
        Self::from_planes(tx, mwm, mid)
    }

    /// The minimum weight magnitude, as the trailing-zero count it is compared with.
    pub fn mwm(&self) -> usize {
        self.mwm.zeros()
    }

    /// The minimum weight magnitude.
    pub fn min_weight(&self) -> Mwm {
        self.mwm
    }

    /// What a CPU kernel searches: the state, the MWM, the transaction's nonce layout.
    pub(crate) fn kernel_job(&self) -> crate::search::layout::KernelJob<'_> {
        crate::search::layout::KernelJob::new(
            &self.state,
            self.mwm.zeros(),
            crate::search::layout::Layout::Transaction,
        )
    }

    /// The state to transform, with lane and counter trits zero.
    pub fn state(&self) -> &[Trit; STATE_LEN] {
        &self.state
    }

    /// The same state as the host's fast transform holds it (nonce trits zero).
    pub(crate) fn planes(&self) -> &StatePlanes {
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
        if p.rate_trailing_zeros() < self.mwm.zeros() {
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

/// A minimum weight magnitude: the trailing zero trits a transaction's hash needs, 0..=243,
/// checked once where the number enters ([`Mwm::new`], `TryFrom`), so nothing past that point
/// checks it again.
///
/// ```
/// use curlpow::Mwm;
/// assert_eq!(Mwm::new(14)?, Mwm::MAINNET);
/// assert_eq!(Mwm::try_from(9usize)?.get(), 9);
/// assert!(matches!(Mwm::try_from(244u32), Err(curlpow::Error::InvalidMwm(244))));
/// # Ok::<(), curlpow::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mwm(u8);

impl Mwm {
    /// Mainnet's minimum weight magnitude, 14.
    pub const MAINNET: Mwm = Mwm(14);
    /// The testnets' (devnet's) minimum weight magnitude, 9.
    pub const TESTNET: Mwm = Mwm(9);
    /// The largest: every trit of the hash zero.
    pub const MAX: Mwm = Mwm(HASH_LEN as u8);

    /// `mwm` if it is at most 243, else [`Error::InvalidMwm`].
    pub const fn new(mwm: u8) -> Result<Mwm, Error> {
        if mwm as usize > HASH_LEN {
            Err(Error::InvalidMwm(mwm as usize))
        } else {
            Ok(Mwm(mwm))
        }
    }

    /// The number.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The number as the trailing-zero counts it is compared with.
    pub const fn zeros(self) -> usize {
        self.0 as usize
    }

    /// The nonces a search at this MWM tries on average: 3^MWM (a hash ends in MWM zero trits
    /// with probability 3^-MWM). Finite for every MWM: 3^243 is about 8.7e115.
    ///
    /// ```
    /// use curlpow::Mwm;
    /// assert_eq!(Mwm::TESTNET.expected_work(), 19683.0);
    /// assert!(Mwm::MAX.expected_work().is_finite());
    /// ```
    pub fn expected_work(self) -> f64 {
        3f64.powi(i32::from(self.0))
    }

    /// A count of trailing zero trits as an MWM, [`Mwm::MAX`] for a count past it (a hash has no
    /// more zeros than trits).
    pub(crate) const fn saturating(zeros: usize) -> Mwm {
        if zeros > Mwm::MAX.zeros() {
            Mwm::MAX
        } else {
            Mwm(zeros as u8)
        }
    }
}

impl std::fmt::Display for Mwm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Mwm> for usize {
    fn from(m: Mwm) -> usize {
        m.zeros()
    }
}

impl From<Mwm> for u8 {
    fn from(m: Mwm) -> u8 {
        m.0
    }
}

impl TryFrom<u8> for Mwm {
    type Error = Error;
    fn try_from(mwm: u8) -> Result<Mwm, Error> {
        Mwm::new(mwm)
    }
}

impl TryFrom<usize> for Mwm {
    type Error = Error;
    fn try_from(mwm: usize) -> Result<Mwm, Error> {
        u8::try_from(mwm)
            .map_err(|_| Error::InvalidMwm(mwm))
            .and_then(Mwm::new)
    }
}

impl TryFrom<u32> for Mwm {
    type Error = Error;
    fn try_from(mwm: u32) -> Result<Mwm, Error> {
        Mwm::try_from(mwm as usize)
    }
}

impl TryFrom<u64> for Mwm {
    type Error = Error;
    fn try_from(mwm: u64) -> Result<Mwm, Error> {
        Mwm::try_from(usize::try_from(mwm).unwrap_or(usize::MAX))
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
    fn an_mwm_is_0_to_243_whatever_the_integer_type() {
        assert_eq!(Mwm::new(0).unwrap().get(), 0);
        assert_eq!(Mwm::new(243).unwrap(), Mwm::MAX);
        assert!(matches!(Mwm::new(244), Err(Error::InvalidMwm(244))));
        assert!(matches!(Mwm::new(255), Err(Error::InvalidMwm(255))));
        assert_eq!(Mwm::try_from(14usize).unwrap(), Mwm::MAINNET);
        assert_eq!(Mwm::try_from(9u32).unwrap(), Mwm::TESTNET);
        assert!(matches!(
            Mwm::try_from(256usize),
            Err(Error::InvalidMwm(256))
        ));
        assert!(matches!(
            Mwm::try_from(usize::MAX),
            Err(Error::InvalidMwm(usize::MAX))
        ));
        assert!(Mwm::try_from(1u64 << 40).is_err());
        assert_eq!(usize::from(Mwm::MAINNET), 14);
        assert_eq!(Mwm::TESTNET.to_string(), "9");
        assert!(Mwm::TESTNET < Mwm::MAINNET);
    }

    #[test]
    fn a_job_keeps_its_mwm() {
        let tx =
            Transaction::from_trits(&[0; crate::ternary::transaction::TRANSACTION_TRITS]).unwrap();
        assert_eq!(SearchJob::new(&tx, 9).unwrap().min_weight(), Mwm::TESTNET);
        assert!(matches!(
            SearchJob::new(&tx, 244),
            Err(Error::InvalidMwm(244))
        ));
        assert_eq!(SearchJob::prepare(&tx, Mwm::MAINNET).mwm(), 14);
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
