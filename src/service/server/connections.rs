//! Open connections: how many, from whom, and for how long a connection may hold its socket
//! without a request in progress.
//!
//! * At most `max_connections` are open, and at most `max_per_peer` from one IP address.
//! * A new connection past either cap takes the place of the *least productive* one: among
//!   those idle, sending headers, or sending a body (never one whose request is in and being
//!   handled, nor one whose answer waits on a client that does not read), the one that received
//!   the fewest bytes per second in its current phase; among equals, the one of the peer with
//!   the most connections, then the oldest. A connection in its first second in a phase is taken
//!   only when every candidate is that young. At the per-peer cap the candidates are that
//!   peer's. When there is none, the new connection is closed at once. So connections that
//!   trickle headers or a body never hold every slot, from one address or many: a real client
//!   displaces one of them, and its request, once its body is in, cannot be displaced.
//! * A request's headers must arrive within `header_read_timeout` (from the connection's start,
//!   or from the first byte after the previous answer); a kept-alive connection with no request
//!   is closed after `idle_timeout`. The body's own time limits are the handler's
//!   (`body_read_timeout` and `body_min_rate`, answered 408).
//!
//! The sockets are wrapped ([`Watched`]) so that axum's server (hyper underneath) does the HTTP;
//! the wrapper only ends a read or write with an error when the connection is evicted or its
//! deadline has passed, which makes hyper close it.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// The connection limits; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnLimits {
    /// Connections open at once, all peers (≥ 1).
    pub max_connections: usize,
    /// Connections open at once from one IP address (≥ 1).
    pub max_per_peer: usize,
    /// Time for a request's headers to arrive.
    pub header_read_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
}

/// Why connections were closed by the server, for the metrics.
#[derive(Debug, Default)]
pub(crate) struct ConnCounts {
    /// Closed at once: a cap was reached and no connection could be displaced.
    pub refused: AtomicU64,
    /// Displaced by a new connection (idle, or sending headers or a body too slowly).
    pub evicted: AtomicU64,
    /// Headers not in within the header read timeout.
    pub header_timeouts: AtomicU64,
    /// Idle past the idle timeout.
    pub idle_timeouts: AtomicU64,
}

/// What a connection is doing, for its deadline and whether it may be displaced.
struct Phase {
    /// Requests being handled (headers read, answer not yet returned by the handler).
    busy: usize,
    /// When it last became free of requests (its start, or the end of the last request).
    idle_since: Instant,
    /// When the current request's headers began: the connection's start for the first
    /// request, else the first byte read after the previous answer.
    header_since: Option<Instant>,
    /// A write is waiting for the client to read.
    write_blocked: bool,
    /// The request being handled is still reading its body.
    reading_body: bool,
    /// When the current phase (idle or headers, body, handling) began.
    phase_since: Instant,
    /// Bytes read on the socket before the current phase began.
    phase_bytes: u64,
    /// Bytes read on the socket in all.
    read_bytes: u64,
}

impl Phase {
    fn enter(&mut self, now: Instant) {
        self.phase_since = now;
        self.phase_bytes = self.read_bytes;
    }
}

/// How long a phase must last before its data rate ranks it among the others: a connection
/// younger than this is displaced only when every other candidate is young too.
const RATE_GRACE: Duration = Duration::from_secs(1);

/// How a candidate for displacement ranks: the lowest is displaced first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    /// Younger than [`RATE_GRACE`] in its phase.
    young: bool,
    /// Bytes per second received in its phase (idle: 0).
    rate: u64,
    /// More connections from its peer rank lower.
    peer_conns: std::cmp::Reverse<usize>,
    /// Older phases rank lower.
    since: Instant,
}

/// One open connection's shared state: its socket wrapper, the request middleware and the
/// registry all see it.
pub(crate) struct ConnState {
    id: u64,
    peer: IpAddr,
    limits: ConnLimits,
    phase: Mutex<Phase>,
    evicted: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl std::fmt::Debug for ConnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnState")
            .field("id", &self.id)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// Why a connection's deadline is what it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    Headers,
    Idle,
}

impl ConnState {
    /// The deadline now in force, if any (none while a request is handled).
    fn deadline(&self) -> Option<(Instant, Wait)> {
        let p = self.phase.lock();
        if p.busy > 0 {
            return None;
        }
        Some(match p.header_since {
            Some(t) => (t + self.limits.header_read_timeout, Wait::Headers),
            None => (p.idle_since + self.limits.idle_timeout, Wait::Idle),
        })
    }

    /// `n` bytes arrived: with no request in progress, they start the next request's headers.
    fn on_read(&self, n: usize) {
        let mut p = self.phase.lock();
        if p.busy == 0 && p.header_since.is_none() {
            let now = Instant::now();
            p.header_since = Some(now);
            p.enter(now);
        }
        p.read_bytes += n as u64;
    }

    /// How this connection ranks for displacement; `None` when it may not be displaced (its
    /// request is in, being handled, or an answer waits for the client to read).
    fn rank(&self, now: Instant, peer_conns: usize) -> Option<Rank> {
        let p = self.phase.lock();
        if p.write_blocked || (p.busy > 0 && !p.reading_body) {
            return None;
        }
        let age = now.saturating_duration_since(p.phase_since);
        let bytes = p.read_bytes - p.phase_bytes;
        let ms = age.as_millis().max(RATE_GRACE.as_millis()) as u64;
        Some(Rank {
            young: age < RATE_GRACE,
            rate: bytes.saturating_mul(1000) / ms,
            peer_conns: std::cmp::Reverse(peer_conns),
            since: p.phase_since,
        })
    }

    /// A request's headers are in and its handler starts: no deadline until the returned guard
    /// drops. While `reading_body` (until [`body_done`](Self::body_done)) a newcomer at a cap
    /// may still displace it, by its data rate; after that, nothing does.
    pub(crate) fn begin_request(self: &Arc<Self>, reading_body: bool) -> RequestGuard {
        let mut p = self.phase.lock();
        p.busy += 1;
        p.header_since = None;
        p.reading_body = reading_body;
        p.enter(Instant::now());
        RequestGuard { conn: self.clone() }
    }

    /// The request's body is in (or failed): the request can no longer be displaced.
    pub(crate) fn body_done(&self) {
        let mut p = self.phase.lock();
        if p.reading_body {
            p.reading_body = false;
            p.enter(Instant::now());
        }
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        if let Some(w) = self.waker.lock().take() {
            w.wake();
        }
    }

    fn remember_waker(&self, cx: &Context<'_>) {
        let mut w = self.waker.lock();
        match &*w {
            Some(old) if old.will_wake(cx.waker()) => {}
            _ => *w = Some(cx.waker().clone()),
        }
    }
}

/// Held while a request is handled; see [`ConnState::begin_request`].
pub(crate) struct RequestGuard {
    conn: Arc<ConnState>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut p = self.conn.phase.lock();
        p.busy -= 1;
        if p.busy == 0 {
            let now = Instant::now();
            p.idle_since = now;
            p.header_since = None;
            p.reading_body = false;
            p.enter(now);
        }
    }
}

#[derive(Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Arc<ConnState>>,
    per_peer: HashMap<IpAddr, usize>,
}

impl Registry {
    fn remove(&mut self, id: u64) -> Option<Arc<ConnState>> {
        let c = self.open.remove(&id)?;
        if let Some(n) = self.per_peer.get_mut(&c.peer) {
            *n -= 1;
            if *n == 0 {
                self.per_peer.remove(&c.peer);
            }
        }
        Some(c)
    }

    /// The connection a newcomer from `peer` displaces, if a cap is reached: `Ok(None)` when
    /// there is room, `Err(())` when a cap is reached and no connection may be displaced.
    /// At the per-peer cap the candidates are that peer's, else all; the least productive goes
    /// (see [`Rank`]).
    fn victim(&self, peer: IpAddr, l: &ConnLimits) -> Result<Option<u64>, ()> {
        let mine = self.per_peer.get(&peer).copied().unwrap_or(0);
        let own_peer_only = if mine >= l.max_per_peer {
            true
        } else if self.open.len() >= l.max_connections {
            false
        } else {
            return Ok(None);
        };
        let now = Instant::now();
        self.open
            .values()
            .filter(|c| !own_peer_only || c.peer == peer)
            .filter_map(|c| {
                let n = self.per_peer.get(&c.peer).copied().unwrap_or(0);
                Some((c.rank(now, n)?, c.id))
            })
            .min()
            .map(|(_, id)| Some(id))
            .ok_or(())
    }
}

/// Every open connection, and the caps.
pub(crate) struct Connections {
    limits: ConnLimits,
    reg: Mutex<Registry>,
    /// Closes by cause.
    pub counts: ConnCounts,
}

impl Connections {
    /// A registry with these limits (zero caps raised to 1).
    pub(crate) fn new(mut limits: ConnLimits) -> Arc<Self> {
        limits.max_connections = limits.max_connections.max(1);
        limits.max_per_peer = limits.max_per_peer.clamp(1, limits.max_connections);
        Arc::new(Connections {
            limits,
            reg: Mutex::new(Registry::default()),
            counts: ConnCounts::default(),
        })
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> ConnLimits {
        self.limits
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.reg.lock().open.len()
    }

    /// Admit a connection from `peer`, displacing the least productive one if a cap is
    /// reached; `None`: a cap is reached and none may be displaced, close it.
    fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Arc<ConnState>> {
        let mut reg = self.reg.lock();
        match reg.victim(peer, &self.limits) {
            Err(()) => {
                self.counts.refused.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            Ok(Some(id)) => {
                if let Some(c) = reg.remove(id) {
                    c.evict();
                    self.counts.evicted.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(None) => {}
        }
        let id = reg.next;
        reg.next += 1;
        let now = Instant::now();
        let c = Arc::new(ConnState {
            id,
            peer,
            limits: self.limits,
            phase: Mutex::new(Phase {
                busy: 0,
                idle_since: now,
                header_since: Some(now),
                write_blocked: false,
                reading_body: false,
                phase_since: now,
                phase_bytes: 0,
                read_bytes: 0,
            }),
            evicted: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        reg.open.insert(id, c.clone());
        *reg.per_peer.entry(peer).or_insert(0) += 1;
        Some(c)
    }

    fn close(&self, id: u64) {
        self.reg.lock().remove(id);
    }
}

/// The listener axum serves from: accepts, applies the caps, wraps each socket.
pub(crate) struct CappedListener {
    inner: TcpListener,
    conns: Arc<Connections>,
}

impl CappedListener {
    /// Serve `inner`'s connections under `conns`' caps.
    pub(crate) fn new(inner: TcpListener, conns: Arc<Connections>) -> Self {
        CappedListener { inner, conns }
    }
}

impl axum::serve::Listener for CappedListener {
    type Io = Watched;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Watched, SocketAddr) {
        let mut last_warning: Option<Instant> = None;
        loop {
            let (stream, addr) = match self.inner.accept().await {
                Ok(x) => x,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // Out of file descriptors or memory: wait a little for some to free
                        // instead of spinning; say so at most once a second.
                        if last_warning.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                            tracing::warn!(error = %e, "accepting a connection failed; retrying");
                            last_warning = Some(Instant::now());
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            };
            let Some(conn) = self.conns.admit(addr.ip()) else {
                tracing::debug!(peer = %addr, "connection refused: at the connection cap, none to displace");
                drop(stream);
                continue;
            };
            let _ = stream.set_nodelay(true);
            return (
                Watched {
                    stream,
                    conn,
                    conns: self.conns.clone(),
                    timer: Box::pin(tokio::time::sleep_until(Instant::now())),
                    armed: None,
                },
                addr,
            );
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// What a handler sees of its connection (axum's `ConnectInfo`).
#[derive(Debug, Clone)]
pub(crate) struct ConnInfo {
    /// The peer's address.
    pub peer: SocketAddr,
    /// The connection's state.
    pub conn: Arc<ConnState>,
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, CappedListener>>
    for ConnInfo
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, CappedListener>) -> Self {
        ConnInfo {
            peer: *stream.remote_addr(),
            conn: stream.io().conn.clone(),
        }
    }
}

/// A socket that fails its reads and writes once its connection is evicted or past its
/// deadline (hyper then closes it), and unregisters itself when dropped.
pub(crate) struct Watched {
    stream: TcpStream,
    conn: Arc<ConnState>,
    conns: Arc<Connections>,
    timer: Pin<Box<Sleep>>,
    armed: Option<Instant>,
}

impl Watched {
    /// `Err` when the connection must close now; else arms the timer for its deadline.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if self.conn.evicted.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "displaced by a new connection at the connection cap",
            ));
        }
        self.conn.remember_waker(cx);
        let Some((deadline, why)) = self.conn.deadline() else {
            return Ok(());
        };
        if self.armed != Some(deadline) {
            self.timer.as_mut().reset(deadline);
            self.armed = Some(deadline);
        }
        if Instant::now() >= deadline || self.timer.as_mut().poll(cx).is_ready() {
            let counts = &self.conns.counts;
            let (counter, what) = match why {
                Wait::Headers => (
                    &counts.header_timeouts,
                    "request headers not received in time",
                ),
                Wait::Idle => (&counts.idle_timeouts, "idle past the keep-alive timeout"),
            };
            counter.fetch_add(1, Ordering::Relaxed);
            // Count once: the next call fails at the evicted check.
            self.conn.evicted.store(true, Ordering::Release);
            return Err(io::Error::new(io::ErrorKind::TimedOut, what));
        }
        Ok(())
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.conns.close(self.conn.id);
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.conn.on_read(buf.filled().len() - before);
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut this.stream).poll_write(cx, data);
        this.conn.phase.lock().write_blocked = r.is_pending();
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        let r = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.conn.phase.lock().write_blocked = r.is_pending();
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_peer: usize) -> ConnLimits {
        ConnLimits {
            max_connections: max,
            max_per_peer: per_peer,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(20),
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn evicted(c: &ConnState) -> bool {
        c.evicted.load(Ordering::Acquire)
    }

    #[test]
    fn a_newcomer_displaces_the_longest_idle_of_its_peer_at_the_per_peer_cap() {
        let conns = Connections::new(limits(10, 2));
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(1)).unwrap();
        let c = conns.admit(ip(1)).unwrap();
        assert!(evicted(&a));
        assert!(!evicted(&b) && !evicted(&c));
        assert_eq!(conns.open(), 2);
        // Requests in progress cannot be displaced once their body is in: with both handled,
        // the newcomer is refused.
        let _gb = b.begin_request(false);
        let _gc = c.begin_request(true);
        c.body_done();
        assert!(conns.admit(ip(1)).is_none());
        // Another peer still gets in.
        assert!(conns.admit(ip(2)).is_some());
        assert_eq!(conns.counts.refused.load(Ordering::Relaxed), 1);
        assert_eq!(conns.counts.evicted.load(Ordering::Relaxed), 1);
        // A connection that goes away frees its place.
        conns.close(b.id);
        assert!(conns.admit(ip(1)).is_some());
    }

    #[test]
    fn at_the_total_cap_the_peer_with_the_most_connections_gives_way() {
        let conns = Connections::new(limits(4, 4));
        let few = conns.admit(ip(1)).unwrap();
        let many: Vec<_> = (0..3).map(|_| conns.admit(ip(2)).unwrap()).collect();
        let _new = conns.admit(ip(3)).unwrap();
        assert!(!evicted(&few), "the older, lone peer stays");
        assert!(evicted(&many[0]), "the busiest peer's longest idle goes");
        assert_eq!(many.iter().filter(|c| evicted(c)).count(), 1);
        assert_eq!(conns.open(), 4);
    }

    #[test]
    fn deadlines_follow_the_phase() {
        let conns = Connections::new(limits(4, 4));
        let c = conns.admit(ip(1)).unwrap();
        let (d, why) = c.deadline().unwrap();
        assert!(why == Wait::Headers && d > Instant::now() + Duration::from_secs(9));
        let g = c.begin_request(false);
        assert!(c.deadline().is_none());
        assert!(
            c.rank(Instant::now(), 1).is_none(),
            "a request being handled cannot be displaced"
        );
        drop(g);
        let (d, why) = c.deadline().unwrap();
        assert!(why == Wait::Idle && d > Instant::now() + Duration::from_secs(19));
        c.on_read(1);
        let (d, why) = c.deadline().unwrap();
        assert!(why == Wait::Headers && d <= Instant::now() + Duration::from_secs(10));
    }

    #[test]
    fn a_body_trickler_is_displaced_before_a_productive_upload_or_a_handled_request() {
        let conns = Connections::new(limits(3, 3));
        let handled = conns.admit(ip(1)).unwrap();
        let _g1 = handled.begin_request(true);
        handled.body_done();
        let upload = conns.admit(ip(2)).unwrap();
        let _g2 = upload.begin_request(true);
        let trickle = conns.admit(ip(3)).unwrap();
        let _g3 = trickle.begin_request(true);
        // Judged after the grace: the upload got 1 MB, the trickler 3 bytes.
        let later = Instant::now() + RATE_GRACE * 2;
        upload.on_read(1 << 20);
        trickle.on_read(3);
        let r_up = upload.rank(later, 1).unwrap();
        let r_tr = trickle.rank(later, 1).unwrap();
        assert!(r_tr < r_up, "{r_tr:?} vs {r_up:?}");
        assert!(handled.rank(later, 1).is_none());
        // A young phase ranks after every judged one.
        let young = Rank {
            young: true,
            rate: 0,
            peer_conns: std::cmp::Reverse(9),
            since: later,
        };
        assert!(r_up < young);
    }
}
