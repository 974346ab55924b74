//! Admission: how many attaches run at once, how many wait, and who goes next.
//!
//! * At most `concurrency` attaches run at once, over all clients (one global count, not a
//!   per-route limiter: every path reaches the same API).
//! * A client (its IP address, and its auth user when auth is on) runs at most `per_client` of
//!   them, so one client cannot hold every slot.
//! * Requests that cannot run yet wait, at most `queue` of them in all and `per_client_queue` per
//!   client. Past that the answer is an immediate 503 with `Retry-After`: nothing waits unbounded.
//! * Every client keeps a share of the queue: when it is full, a request from a client with
//!   fewer requests waiting takes the place of the newest waiter of the client with the most
//!   (at least two more), which is answered 503 with `Retry-After`. So clients that fill the
//!   queue do not turn every other client away; their shares shrink until all are even.
//! * When a slot frees, clients with waiting requests take turns (round robin), each client's own
//!   requests in arrival order.
//!
//! The state sits under one mutex held only for a few list operations, never across an `.await`
//! or a search.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

/// The admission limits; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Attaches running at once, all clients together (≥ 1).
    pub concurrency: usize,
    /// Attaches running at once for one client (≥ 1).
    pub per_client: usize,
    /// Requests waiting, all clients together (0: none wait, a busy server answers 503 at once).
    pub queue: usize,
    /// Requests waiting for one client.
    pub per_client_queue: usize,
}

#[derive(Default)]
struct Client {
    active: usize,
    waiters: VecDeque<(u64, oneshot::Sender<Permit>)>,
}

#[derive(Default)]
struct State {
    active: usize,
    waiting: usize,
    next_ticket: u64,
    clients: HashMap<String, Client>,
    /// Clients with waiting requests, in turn order (each at most once).
    turns: VecDeque<String>,
    /// Waiters that gave their place to another client's request.
    displaced: u64,
}

/// The admission controller. Shared as an `Arc`.
pub(crate) struct Admission {
    limits: Limits,
    state: Mutex<State>,
}

/// A running slot; the next waiter gets it when this drops.
pub(crate) struct Permit {
    adm: Arc<Admission>,
    client: String,
    armed: bool,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.armed {
            self.adm.release(&self.client);
        }
    }
}

/// A request waiting for a slot. Dropping it (timeout, cancel, the client went away) takes it
/// out of the queue.
pub(crate) struct Waiting {
    adm: Arc<Admission>,
    client: String,
    ticket: u64,
    rx: oneshot::Receiver<Permit>,
}

impl Waiting {
    /// Wait for the slot. `None`: this request gave its place in the full queue to a client
    /// with fewer requests waiting (a sender leaves the queue only to send, to be displaced, or
    /// with `Drop for Waiting`); answer 503.
    pub(crate) async fn permit(&mut self) -> Option<Permit> {
        (&mut self.rx).await.ok()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // Still queued: leave the queue. Already granted: the permit in the channel is dropped
        // with the receiver and frees its slot.
        self.adm.leave(&self.client, self.ticket);
    }
}

/// What [`Admission::admit`] decided.
pub(crate) enum Admit {
    /// Run now.
    Now(Permit),
    /// Wait your turn.
    Wait(Waiting),
    /// The queue (or this client's share of it) is full: answer 503.
    Full {
        /// Requests waiting, all clients.
        waiting: usize,
        /// Whether it was the client's own share that was full.
        client_share: bool,
    },
}

/// A snapshot of the counts, for metrics and getNodeInfo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth {
    /// Attaches running.
    pub active: usize,
    /// Requests waiting.
    pub waiting: usize,
}

impl Admission {
    /// A controller with these limits (zeros raised to 1 where 0 would mean "never run").
    pub(crate) fn new(mut limits: Limits) -> Arc<Self> {
        limits.concurrency = limits.concurrency.max(1);
        limits.per_client = limits.per_client.clamp(1, limits.concurrency);
        limits.per_client_queue = limits.per_client_queue.min(limits.queue);
        Arc::new(Admission {
            limits,
            state: Mutex::new(State::default()),
        })
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Running and waiting counts.
    pub(crate) fn depth(&self) -> Depth {
        let st = self.state.lock();
        Depth {
            active: st.active,
            waiting: st.waiting,
        }
    }

    /// Ask for a slot for `client`.
    pub(crate) fn admit(self: &Arc<Self>, client: &str) -> Admit {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let l = self.limits;
        let active = st.active;
        let c = st.clients.entry(client.to_string()).or_default();
        // Run now only when nobody of this client is waiting already (arrival order) and both
        // caps allow it. Other clients' waiters are waiting because of *their* caps or because
        // every slot is taken; in the latter case `active == concurrency` here too.
        if c.waiters.is_empty() && c.active < l.per_client && active < l.concurrency {
            c.active += 1;
            st.active += 1;
            return Admit::Now(Permit {
                adm: self.clone(),
                client: client.to_string(),
                armed: true,
            });
        }
        let mine = c.waiters.len();
        if st.waiting >= l.queue && mine < l.per_client_queue {
            // The queue is full: the newest waiter of the client holding the most places may
            // give its place to this client, whose share is smaller.
            Self::displace(st, client, mine);
        }
        if st.waiting >= l.queue || mine >= l.per_client_queue {
            let waiting = st.waiting;
            let client_share = mine >= l.per_client_queue && st.waiting < l.queue;
            let c = st.clients.get(client).expect("entry made above");
            if c.active == 0 && c.waiters.is_empty() {
                st.clients.remove(client);
            }
            return Admit::Full {
                waiting,
                client_share,
            };
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let (tx, rx) = oneshot::channel();
        let c = st.clients.get_mut(client).expect("entry made above");
        c.waiters.push_back((ticket, tx));
        let first = c.waiters.len() == 1;
        st.waiting += 1;
        if first {
            st.turns.push_back(client.to_string());
        }
        Admit::Wait(Waiting {
            adm: self.clone(),
            client: client.to_string(),
            ticket,
            rx,
        })
    }

    /// The queue is full and `client` (with `mine` waiting) wants a place: take the newest
    /// waiter of the client with the most waiting, if it has at least two more than `client`,
    /// out of the queue (its request answers 503).
    fn displace(st: &mut State, client: &str, mine: usize) {
        let heaviest = st
            .clients
            .iter()
            .filter(|(k, _)| k.as_str() != client)
            .filter_map(|(k, c)| Some((c.waiters.len(), c.waiters.back()?.0, k)))
            .max();
        let Some((n, _, key)) = heaviest else {
            return;
        };
        if n < mine + 2 {
            return;
        }
        let key = key.clone();
        let c = st.clients.get_mut(&key).expect("found above");
        // Dropping the sender tells the waiter it was displaced.
        drop(c.waiters.pop_back());
        st.waiting -= 1;
        st.displaced += 1;
        if c.waiters.is_empty() {
            st.turns.retain(|k| *k != key);
            if c.active == 0 {
                st.clients.remove(&key);
            }
        }
    }

    /// Waiters displaced so far (see [`Admission::admit`]).
    #[cfg(test)]
    fn displaced(&self) -> u64 {
        self.state.lock().displaced
    }

    fn release(self: &Arc<Self>, client: &str) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        st.active -= 1;
        if let Some(c) = st.clients.get_mut(client) {
            c.active -= 1;
            if c.active == 0 && c.waiters.is_empty() {
                st.clients.remove(client);
            }
        }
        self.dispatch(st);
    }

    fn leave(self: &Arc<Self>, client: &str, ticket: u64) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Some(c) = st.clients.get_mut(client) else {
            return;
        };
        let Some(pos) = c.waiters.iter().position(|w| w.0 == ticket) else {
            return;
        };
        c.waiters.remove(pos);
        let (empty, idle) = (c.waiters.is_empty(), c.active == 0);
        st.waiting -= 1;
        if empty {
            st.turns.retain(|k| k != client);
            if idle {
                st.clients.remove(client);
            }
        }
        // A waiter leaving never frees a slot, but it may unblock nothing else either: no
        // dispatch needed.
    }

    /// Hand free slots to waiting clients in turn.
    fn dispatch(self: &Arc<Self>, st: &mut State) {
        let l = self.limits;
        let mut passes = st.turns.len();
        while st.active < l.concurrency && passes > 0 {
            let Some(key) = st.turns.pop_front() else {
                break;
            };
            passes -= 1;
            let c = st
                .clients
                .get_mut(&key)
                .expect("a client in turn order exists");
            if c.active >= l.per_client {
                // At its cap: keep its place for the next round.
                st.turns.push_back(key);
                continue;
            }
            let mut granted = false;
            while let Some((_, tx)) = c.waiters.pop_front() {
                st.waiting -= 1;
                c.active += 1;
                let permit = Permit {
                    adm: self.clone(),
                    client: key.clone(),
                    armed: true,
                };
                match tx.send(permit) {
                    Ok(()) => {
                        granted = true;
                        break;
                    }
                    Err(mut p) => {
                        // The waiter is gone (its drop is about to run `leave`, which will not
                        // find this ticket): undo and try this client's next waiter.
                        p.armed = false;
                        c.active -= 1;
                    }
                }
            }
            if granted {
                st.active += 1;
                // Everyone gets another pass now that this client had its turn.
                passes = st.turns.len() + 1;
            }
            if !c.waiters.is_empty() {
                st.turns.push_back(key);
            } else if c.active == 0 {
                st.clients.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(concurrency: usize, per_client: usize, queue: usize) -> Limits {
        Limits {
            concurrency,
            per_client,
            queue,
            per_client_queue: queue,
        }
    }

    fn now(a: Admit) -> Permit {
        match a {
            Admit::Now(p) => p,
            _ => panic!("expected to run now"),
        }
    }

    fn wait(a: Admit) -> Waiting {
        match a {
            Admit::Wait(w) => w,
            _ => panic!("expected to wait"),
        }
    }

    fn granted(w: &mut Waiting) -> Option<Permit> {
        w.rx.try_recv().ok()
    }

    #[test]
    fn the_global_cap_queue_and_503() {
        let adm = Admission::new(limits(2, 2, 1));
        let a = now(adm.admit("a"));
        let _b = now(adm.admit("b"));
        let mut w = wait(adm.admit("c"));
        assert!(matches!(adm.admit("d"), Admit::Full { waiting: 1, .. }));
        assert_eq!(
            adm.depth(),
            Depth {
                active: 2,
                waiting: 1
            }
        );
        drop(a);
        let _c = granted(&mut w).expect("the waiter got the freed slot");
        assert_eq!(
            adm.depth(),
            Depth {
                active: 2,
                waiting: 0
            }
        );
    }

    #[test]
    fn clients_take_turns() {
        let adm = Admission::new(limits(1, 1, 10));
        let first = now(adm.admit("a"));
        let mut a: Vec<Waiting> = (0..3).map(|_| wait(adm.admit("a"))).collect();
        let mut b = wait(adm.admit("b"));
        // The slot frees: "a" had the last one, but turns follow arrival of clients: a's
        // waiters were first in line, then b. After one of a's, b goes before a's next.
        drop(first);
        let p1 = granted(&mut a[0]).expect("a's first waiter");
        drop(p1);
        let p2 = granted(&mut b).expect("then b, before a's second");
        assert!(granted(&mut a[1]).is_none());
        drop(p2);
        assert!(granted(&mut a[1]).is_some());
    }

    #[test]
    fn the_per_client_cap_leaves_slots_to_others() {
        let adm = Admission::new(limits(3, 2, 10));
        let _a1 = now(adm.admit("a"));
        let _a2 = now(adm.admit("a"));
        let _w = wait(adm.admit("a"));
        let _b = now(adm.admit("b"));
        assert_eq!(
            adm.depth(),
            Depth {
                active: 3,
                waiting: 1
            }
        );
    }

    #[test]
    fn a_client_cannot_fill_the_whole_queue() {
        let adm = Admission::new(Limits {
            concurrency: 1,
            per_client: 1,
            queue: 4,
            per_client_queue: 2,
        });
        let _a = now(adm.admit("a"));
        let _w1 = wait(adm.admit("a"));
        let _w2 = wait(adm.admit("a"));
        assert!(matches!(
            adm.admit("a"),
            Admit::Full {
                client_share: true,
                ..
            }
        ));
        let _wb = wait(adm.admit("b"));
    }

    #[test]
    fn a_waiter_that_leaves_frees_its_place_and_nothing_leaks() {
        let adm = Admission::new(limits(1, 1, 2));
        let a = now(adm.admit("a"));
        let w1 = wait(adm.admit("b"));
        let mut w2 = wait(adm.admit("c"));
        drop(w1);
        assert_eq!(
            adm.depth(),
            Depth {
                active: 1,
                waiting: 1
            }
        );
        drop(a);
        let p = granted(&mut w2).unwrap();
        drop(p);
        assert_eq!(
            adm.depth(),
            Depth {
                active: 0,
                waiting: 0
            }
        );
        assert!(adm.state.lock().clients.is_empty());
        // A permit granted to a waiter that then goes away without reading it is freed too.
        let a = now(adm.admit("a"));
        let w = wait(adm.admit("b"));
        drop(a);
        drop(w);
        assert_eq!(
            adm.depth(),
            Depth {
                active: 0,
                waiting: 0
            }
        );
        assert!(adm.state.lock().clients.is_empty());
    }

    #[test]
    fn clients_that_fill_the_queue_give_places_to_a_newcomer() {
        let adm = Admission::new(Limits {
            concurrency: 1,
            per_client: 1,
            queue: 4,
            per_client_queue: 2,
        });
        let _run = now(adm.admit("x"));
        let mut a: Vec<Waiting> = (0..2).map(|_| wait(adm.admit("a"))).collect();
        let mut b: Vec<Waiting> = (0..2).map(|_| wait(adm.admit("b"))).collect();
        // Full: a third client still gets a place; the newest waiter of a heaviest client goes.
        let _c1 = wait(adm.admit("c"));
        let gone = |ws: &mut Vec<Waiting>| {
            let mut n = 0;
            for w in ws.iter_mut() {
                if matches!(w.rx.try_recv(), Err(oneshot::error::TryRecvError::Closed)) {
                    n += 1;
                }
            }
            n
        };
        assert_eq!(gone(&mut a) + gone(&mut b), 1);
        assert_eq!(adm.displaced(), 1);
        assert_eq!(adm.depth().waiting, 4);
        // Shares are even now (2, 1, 1 or 1, 2, 1): nobody holds two more than anyone else, so
        // nobody is displaced and the full queue answers 503.
        assert!(matches!(adm.admit("c"), Admit::Full { .. }));
        assert!(matches!(adm.admit("a"), Admit::Full { .. }));
        assert!(matches!(adm.admit("b"), Admit::Full { .. }));
        assert_eq!(gone(&mut a) + gone(&mut b), 1);
        assert_eq!(adm.depth().waiting, 4);
    }
}
