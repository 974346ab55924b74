//! [`Request`]: a PoW call's options as the search loop reads them, fixed once where the call
//! enters the engine ([`Engine::pow_with`](super::Engine::pow_with),
//! [`pow_many`](super::Engine::pow_many), [`attach_to_tangle`](super::Engine::attach_to_tangle),
//! [`block_pow_with`](super::Engine::block_pow_with)): the deadline computed from `timeout`
//! and `deadline`. [`Engine::run_request`](super::Engine::run_request) turns a request and a
//! job into a search; it is the one place the pre-checks (cancelled, past the deadline) run.

use std::time::{Duration, Instant};

use super::PowOptions;
use crate::base::error::Error;

/// One PoW call (or one batch, or one attach: every search of it shares the deadline).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The call's options (selection, cancel token, latency mode, CPU fallback and threads).
    pub(crate) opts: PowOptions,
    /// The earlier of `started + timeout` and the options' deadline, if either is set.
    pub(crate) deadline: Option<Instant>,
}

impl Request {
    /// The request `opts` makes for a call that started at `started`: its deadline, once.
    pub(crate) fn new(opts: &PowOptions, started: Instant) -> Request {
        Request {
            deadline: opts.deadline_from(started),
            opts: opts.clone(),
        }
    }

    /// Why a search of this request starting at `now` must not start: its token fired or its
    /// deadline passed. (A search that will not run costs no mid-state.)
    pub(crate) fn check_live(&self, now: Instant) -> Result<(), Error> {
        if self.opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(Error::Cancelled { nonces: 0 });
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(Error::Timeout {
                elapsed: Duration::ZERO,
                nonces: 0,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::control::CancelToken;

    #[test]
    fn the_deadline_is_fixed_when_the_request_is_made() {
        let t0 = Instant::now();
        let opts = PowOptions::mwm(1).timeout(Duration::from_secs(5));
        let r = Request::new(&opts, t0);
        assert_eq!(r.deadline, Some(t0 + Duration::from_secs(5)));
        assert!(r.check_live(t0).is_ok());
        assert!(matches!(
            r.check_live(t0 + Duration::from_secs(5)),
            Err(Error::Timeout { nonces: 0, .. })
        ));
        assert!(Request::new(&PowOptions::mwm(1), t0).deadline.is_none());
    }

    #[test]
    fn a_cancelled_request_does_not_start() {
        let c = CancelToken::new();
        let r = Request::new(&PowOptions::mwm(1).cancel(c.clone()), Instant::now());
        assert!(r.check_live(Instant::now()).is_ok());
        c.cancel();
        assert!(matches!(
            r.check_live(Instant::now()),
            Err(Error::Cancelled { nonces: 0 })
        ));
    }
}
