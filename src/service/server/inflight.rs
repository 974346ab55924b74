//! The attaches in flight (waiting or running), so that `interruptAttachingToTangle` and a
//! shutdown can cancel them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::search::control::CancelToken;

/// Why an attach was stopped from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopCause {
    /// Not stopped.
    None,
    /// `interruptAttachingToTangle`: answer 200 `{"trytes": []}` as IRI does.
    Interrupted,
    /// The server is shutting down and the grace period is over: answer 503.
    Shutdown,
}

struct Entry {
    owner: String,
    cancel: CancelToken,
    wake: Arc<Notify>,
    cause: Arc<AtomicU8>,
}

/// Every attach in flight.
#[derive(Default)]
pub(crate) struct InFlight {
    next: AtomicU64,
    map: Mutex<HashMap<u64, Entry>>,
}

/// One attach's registration; dropping it unregisters the attach and cancels its search (a
/// client that went away stops its PoW).
pub(crate) struct Ticket {
    set: Arc<InFlight>,
    id: u64,
    /// Cancels the search (given to the engine in `PowOptions`).
    pub cancel: CancelToken,
    /// Wakes the request while it waits for a slot.
    pub wake: Arc<Notify>,
    cause: Arc<AtomicU8>,
}

impl Ticket {
    /// Why the attach was stopped, if it was.
    pub(crate) fn cause(&self) -> StopCause {
        decode(self.cause.load(Ordering::Acquire))
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.set.map.lock().remove(&self.id);
    }
}

fn encode(c: StopCause) -> u8 {
    match c {
        StopCause::None => 0,
        StopCause::Interrupted => 1,
        StopCause::Shutdown => 2,
    }
}

fn decode(v: u8) -> StopCause {
    match v {
        1 => StopCause::Interrupted,
        2 => StopCause::Shutdown,
        _ => StopCause::None,
    }
}

impl InFlight {
    /// Register an attach started by `owner` (the client: its address, and its auth user).
    pub(crate) fn register(self: &Arc<Self>, owner: String) -> Ticket {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = CancelToken::new();
        let wake = Arc::new(Notify::new());
        let cause = Arc::new(AtomicU8::new(0));
        self.map.lock().insert(
            id,
            Entry {
                owner,
                cancel: cancel.clone(),
                wake: wake.clone(),
                cause: cause.clone(),
            },
        );
        Ticket {
            set: self.clone(),
            id,
            cancel,
            wake,
            cause,
        }
    }

    /// Stop the attaches of `owner` (all of them for `None`); returns how many.
    pub(crate) fn stop(&self, owner: Option<&str>, cause: StopCause) -> usize {
        let map = self.map.lock();
        let mut n = 0;
        for e in map.values() {
            if owner.is_none_or(|o| e.owner == o) {
                // The first cause sticks: an interrupted attach stays interrupted.
                let _ =
                    e.cause
                        .compare_exchange(0, encode(cause), Ordering::AcqRel, Ordering::Acquire);
                e.cancel.cancel();
                e.wake.notify_one();
                n += 1;
            }
        }
        n
    }

    /// Attaches in flight.
    #[allow(clippy::len_without_is_empty)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().len()
    }
}
