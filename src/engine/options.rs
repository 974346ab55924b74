//! [`PowOptions`]: what one PoW call may use and how long it may take.

use std::time::{Duration, Instant};

use crate::base::error::Error;
use crate::engine::registry::Selection;
use crate::search::control::CancelToken;
use crate::search::search_job::Mwm;

/// Options of one PoW call: built with [`PowOptions::mwm`] and the setters.
///
/// ```
/// use std::time::Duration;
/// use curlpow::{CancelToken, PowOptions};
///
/// let cancel = CancelToken::new();
/// let opts = PowOptions::mwm(9)
///     .timeout(Duration::from_secs(10))
///     .cancel(cancel.clone())
///     .latency(true);
/// # let _ = opts;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PowOptions {
    /// Checked where the number came in ([`PowOptions::mwm`]); a number out of range is kept
    /// to be the call's [`Error::InvalidMwm`].
    mwm: Result<Mwm, usize>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) deadline: Option<Instant>,
    pub(crate) cancel: Option<CancelToken>,
    pub(crate) selection: Selection,
    pub(crate) latency: bool,
    pub(crate) cpu_fallback: Option<bool>,
    pub(crate) cpu_threads: Option<usize>,
}

impl Default for PowOptions {
    /// Mainnet's MWM ([`Mwm::MAINNET`]), no time limit, any device.
    fn default() -> Self {
        PowOptions::new(Mwm::MAINNET)
    }
}

impl From<Mwm> for PowOptions {
    fn from(mwm: Mwm) -> Self {
        PowOptions::new(mwm)
    }
}

impl PowOptions {
    /// Options with this minimum weight magnitude (0..=243; mainnet 14, testnet 9) and nothing
    /// else: no time limit, any device. The number is checked here, once; one above 243 makes
    /// the call that uses these options fail with [`Error::InvalidMwm`].
    pub fn mwm(mwm: usize) -> Self {
        PowOptions::checked(Mwm::try_from(mwm).map_err(|_| mwm))
    }

    /// Options with this checked minimum weight magnitude and nothing else.
    ///
    /// ```
    /// use curlpow::{Mwm, PowOptions};
    /// let opts = PowOptions::new(Mwm::TESTNET);
    /// assert_eq!(opts.min_weight_magnitude(), 9);
    /// ```
    pub fn new(mwm: Mwm) -> Self {
        PowOptions::checked(Ok(mwm))
    }

    fn checked(mwm: Result<Mwm, usize>) -> Self {
        PowOptions {
            mwm,
            timeout: None,
            deadline: None,
            cancel: None,
            selection: Selection::default(),
            latency: false,
            cpu_fallback: None,
            cpu_threads: None,
        }
    }

    /// Change the minimum weight magnitude (checked as [`PowOptions::mwm`] checks it).
    pub fn with_mwm(mut self, mwm: usize) -> Self {
        self.mwm = Mwm::try_from(mwm).map_err(|_| mwm);
        self
    }

    /// Change the minimum weight magnitude to a checked one.
    pub fn min_weight(mut self, mwm: Mwm) -> Self {
        self.mwm = Ok(mwm);
        self
    }

    /// Give up this long after the call starts ([`Error::Timeout`]),
    /// waiting for a device included.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Give up at this instant ([`Error::Timeout`]); with a
    /// [`timeout`](Self::timeout) too, the earlier wins.
    pub fn deadline(mut self, at: Instant) -> Self {
        self.deadline = Some(at);
        self
    }

    /// Cancel from another thread ([`Error::Cancelled`]).
    pub fn cancel(mut self, c: CancelToken) -> Self {
        self.cancel = Some(c);
        self
    }

    /// Restrict the devices (default: any).
    pub fn selection(mut self, s: Selection) -> Self {
        self.selection = s;
        self
    }

    /// Latency mode: run the search on every free allowed device at once over disjoint nonce
    /// ranges; the first valid hit stops the rest.
    pub fn latency(mut self, on: bool) -> Self {
        self.latency = on;
        self
    }

    /// Override the engine's CPU-fallback rule for this call (whether the CPU may take a
    /// search that selected GPUs once they stayed busy past the wait limit).
    pub fn cpu_fallback(mut self, on: bool) -> Self {
        self.cpu_fallback = Some(on);
        self
    }

    /// Use at most this many of the CPU pool's threads if the search runs on the CPU (0 or
    /// more than the pool: the whole pool). dcurl's `threads` argument maps here.
    pub fn cpu_threads(mut self, n: usize) -> Self {
        self.cpu_threads = (n > 0).then_some(n);
        self
    }

    /// The minimum weight magnitude, as it was given.
    pub fn min_weight_magnitude(&self) -> usize {
        match self.mwm {
            Ok(m) => m.zeros(),
            Err(n) => n,
        }
    }

    /// The checked minimum weight magnitude, or [`Error::InvalidMwm`] for a number above 243.
    pub fn checked_mwm(&self) -> Result<Mwm, Error> {
        self.mwm.map_err(Error::InvalidMwm)
    }

    /// The instant this call must end by, if any, for a call starting at `start`.
    pub(super) fn deadline_from(&self, start: Instant) -> Option<Instant> {
        let t = self.timeout.and_then(|t| start.checked_add(t));
        match (t, self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_mainnet_and_unbounded() {
        let o = PowOptions::default();
        assert_eq!(o.min_weight_magnitude(), 14);
        assert!(o.deadline_from(Instant::now()).is_none());
    }

    #[test]
    fn the_earlier_deadline_wins() {
        let now = Instant::now();
        let o = PowOptions::mwm(1)
            .timeout(Duration::from_secs(5))
            .deadline(now + Duration::from_secs(1));
        assert_eq!(o.deadline_from(now), Some(now + Duration::from_secs(1)));
        // A timeout too large to represent is no deadline, not a panic.
        let o = PowOptions::mwm(1).timeout(Duration::MAX);
        assert!(o.deadline_from(now).is_none());
    }

    #[test]
    fn zero_cpu_threads_means_the_whole_pool() {
        assert_eq!(PowOptions::mwm(1).cpu_threads(0).cpu_threads, None);
        assert_eq!(PowOptions::mwm(1).cpu_threads(3).cpu_threads, Some(3));
    }
}
