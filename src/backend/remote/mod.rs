//! Devices that hand each search to workers through the broker: what `curlpow serve --broker`
//! gives its engine.
//!
//! [`remote_devices`] opens one connection (in the background, reconnecting with backoff) and
//! returns `slots` devices sharing it: each is one PoW in flight on the queue, so the engine's
//! registry leases them like any device (one search each at a time) and the server's admission
//! sizes itself by them. A search publishes the transaction and MWM in dcurl's format, with a
//! `correlation_id` and `reply_to` = its slot's exclusive callback queue, and waits for the
//! reply until the search's deadline or cancel. It returns the reply's nonce trits
//! ([`Found::Nonce`]); **the engine checks them on the host** like any device's answer: a wrong
//! nonce, a reply that changed the transaction elsewhere, or an error reply is a fault, and the
//! search is retried on another device.
//!
//! If the connection drops while a search waits, the callback queue (and any reply headed for
//! it) is gone with it: the search publishes again once reconnected. Requests are therefore
//! sent transient (they need not survive a broker restart: the sender republishes), with an
//! `expiration` of the search's remaining time, so a request nobody took in time is dropped
//! by the broker rather than computed for nobody. While the broker cannot be reached for
//! longer than [`RemoteConfig::connect_wait`], searches fail at once (a fault), so the engine
//! can fall back to local devices (`serve --broker --local`).

pub(crate) mod amqp;
pub mod protocol;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lapin::message::Delivery;
use lapin::options::{
    BasicConsumeOptions, BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Channel, Confirmation, Connection};
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio_stream::StreamExt;

use self::amqp::{
    connect, declare_queue, process_tag, queue_name, Backoff, BrokerError, BrokerUrl, DEFAULT_QUEUE,
};
use self::protocol::{ERROR_TYPE, HEADER_ERROR, HEADER_NONCES, HEADER_WORKER};
use crate::base::error::Error;
use crate::search::device::{
    Backend, CounterRange, Device, DeviceInfo, DeviceKind, Found, NonceOutcome, SearchControl,
    SearchJob, SearchOutcome, NONCE_TRITS,
};
use crate::search::nonce::hit_of_nonce;
use crate::ternary::transaction::TRANSACTION_TRITS;

/// How often a waiting search looks at its stop conditions and the connection.
const POLL: Duration = Duration::from_millis(5);

/// Settings of [`remote_devices`]. Build with [`RemoteConfig::new`] and change the fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// The broker.
    pub url: BrokerUrl,
    /// The request queue (default dcurl's `incoming_queue`).
    pub queue: String,
    /// Devices, i.e. PoWs in flight on the queue at once (default 8).
    pub slots: usize,
    /// How long a search waits for a broker connection before it fails (default 10 s,
    /// dcurl's client's timeout before it falls back to local PoW).
    pub connect_wait: Duration,
    /// The first reconnection delay (default 100 ms); it doubles up to `reconnect_max`.
    pub reconnect_min: Duration,
    /// The longest reconnection delay (default 5 s).
    pub reconnect_max: Duration,
    /// The speed the registry assumes for each slot until it has measured it, in nonces per
    /// second (default 5 × 10^7).
    pub declared_speed: f64,
}

impl RemoteConfig {
    /// The defaults for a broker.
    pub fn new(url: BrokerUrl) -> Self {
        RemoteConfig {
            url,
            queue: DEFAULT_QUEUE.into(),
            slots: 8,
            connect_wait: Duration::from_secs(10),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
            declared_speed: 5e7,
        }
    }
}

/// `slots` devices (ids `broker:0`, `broker:1`, …) sending searches to the queue over one
/// connection, which is opened in the background (a broker that is down now is not an error:
/// searches wait for it up to `connect_wait`).
///
/// ```no_run
/// use curlpow::broker::{remote_devices, RemoteConfig};
/// use curlpow::{Backend, Engine};
/// let url = "amqp://guest:guest@127.0.0.1:5672/%2f".parse()?;
/// let mut builder = Engine::builder().backends(&[]); // remote only: no local device listed
/// for d in remote_devices(RemoteConfig::new(url))? {
///     builder = builder.add_device(d);
/// }
/// let engine = builder.build()?;
/// let tx: curlpow::Transaction = "9".repeat(2673).parse()?;
/// let done = engine.pow(&tx, 9)?; // answered by a worker, verified here
/// assert!(done.transaction.weight() >= 9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn remote_devices(config: RemoteConfig) -> Result<Vec<Arc<dyn Device>>, BrokerError> {
    if config.slots == 0 {
        return Err(BrokerError::Config(
            "broker slots must be at least 1".into(),
        ));
    }
    let queue = queue_name(&config.queue)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("curlpow-amqp-client")
        .enable_all()
        .build()
        .map_err(|e| BrokerError::Runtime {
            what: "starting the broker client's runtime".into(),
            message: e.to_string(),
        })?;
    let (session_tx, session_rx) = watch::channel(Link::Down {
        since: Instant::now(),
        error: "not connected yet".into(),
    });
    let shared = Arc::new(Shared {
        config: config.clone(),
        queue,
        session: session_rx,
        next_id: AtomicU64::new(0),
        tag: process_tag(),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    runtime.spawn(maintain(shared.clone(), session_tx, stop_rx));
    let client = Arc::new(Client {
        runtime: Some(runtime),
        stop: stop_tx,
        shared,
    });
    let name = format!("queue {} on {}", config.queue, config.url);
    Ok((0..config.slots)
        .map(|i| {
            Arc::new(RemoteDevice {
                info: DeviceInfo::new(
                    format!("broker:{i}"),
                    Backend::Custom,
                    &name,
                    DeviceKind::Other,
                )
                .with_kernel("amqp")
                .with_declared_speed(config.declared_speed)
                .with_detail("broker", config.url.masked())
                .with_detail("queue", config.queue.clone()),
                client: client.clone(),
                replies: Mutex::new(None),
                nonces: AtomicU64::new(0),
            }) as Arc<dyn Device>
        })
        .collect())
}

/// The connection as searches see it.
#[derive(Clone)]
enum Link {
    Up(Arc<Session>),
    Down { since: Instant, error: String },
}

/// One connection and its publishing channel (confirms on).
struct Session {
    channel: Channel,
    generation: u64,
}

struct Shared {
    config: RemoteConfig,
    queue: ShortString,
    session: watch::Receiver<Link>,
    next_id: AtomicU64,
    tag: String,
}

/// The connection's owner: stops it when the last device goes.
struct Client {
    runtime: Option<tokio::runtime::Runtime>,
    stop: watch::Sender<bool>,
    shared: Arc<Shared>,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl Client {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.as_ref().expect("runtime until drop").handle()
    }
}

/// Connect, watch the connection, reconnect with backoff, until stopped.
async fn maintain(shared: Arc<Shared>, link: watch::Sender<Link>, mut stop: watch::Receiver<bool>) {
    let cfg = &shared.config;
    let mut backoff = Backoff::new(cfg.reconnect_min, cfg.reconnect_max);
    let mut generation = 0u64;
    let mut down_since = Instant::now();
    loop {
        let opened = tokio::select! {
            o = open(&shared) => o,
            _ = stop.changed() => return,
        };
        let error = match opened {
            Ok((conn, channel)) => {
                generation += 1;
                backoff.reset();
                tracing::info!(broker = %cfg.url, queue = %shared.queue, "connected to the broker");
                let _ = link.send(Link::Up(Arc::new(Session {
                    channel: channel.clone(),
                    generation,
                })));
                // lapin notices a dead connection (heartbeats, a closed socket, a broker that
                // closes it) and marks it; searches notice their own errors at once.
                loop {
                    tokio::select! {
                        _ = stop.changed() => {
                            let _ = conn.close(200, "curlpow serve stopping".into()).await;
                            return;
                        }
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                    if !conn.status().connected() || !channel.status().connected() {
                        break;
                    }
                }
                down_since = Instant::now();
                let _ = conn.close(320, "reconnecting".into()).await;
                "the connection was lost".to_string()
            }
            Err(e) => e.to_string(),
        };
        let _ = link.send(Link::Down {
            since: down_since,
            error: error.clone(),
        });
        let wait = backoff.delay();
        tracing::warn!(broker = %cfg.url, %error, retry_in_s = wait.as_secs_f64(), "broker unavailable");
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.changed() => return,
        }
    }
}

/// A connection and its publishing channel with confirms on, the request queue declared
/// (unless it exists with other arguments).
async fn open(shared: &Shared) -> Result<(Connection, Channel), BrokerError> {
    let url = &shared.config.url;
    let err = |e: lapin::Error| url.err(e);
    let conn = connect(url, &format!("curlpow serve {}", shared.tag)).await?;
    let ch = conn.create_channel().await.map_err(err)?;
    let ch = declare_queue(&conn, ch, &shared.queue).await.map_err(err)?;
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .map_err(err)?;
    Ok((conn, ch))
}

/// A slot's own exclusive callback queue and its consumer, on one connection.
struct Replies {
    generation: u64,
    queue: ShortString,
    consumer: lapin::Consumer,
}

async fn open_replies(session: &Session) -> lapin::Result<Replies> {
    let callback = QueueDeclareOptions {
        exclusive: true,
        auto_delete: true,
        ..Default::default()
    };
    let queue = session
        .channel
        .queue_declare(ShortString::default(), callback, FieldTable::default())
        .await?
        .name()
        .clone();
    let consume = BasicConsumeOptions {
        no_ack: true,
        ..Default::default()
    };
    let consumer = session
        .channel
        .basic_consume(
            queue.clone(),
            ShortString::default(),
            consume,
            FieldTable::default(),
        )
        .await?;
    Ok(Replies {
        generation: session.generation,
        queue,
        consumer,
    })
}

/// One PoW in flight on the queue at a time (see the module notes). The search runs on the
/// engine's thread, which drives the broker futures itself (`Handle::block_on`): the reply
/// wakes it directly, with no hop through another thread.
struct RemoteDevice {
    info: DeviceInfo,
    client: Arc<Client>,
    /// This slot's callback queue (one search per device at a time: never contended).
    replies: Mutex<Option<Replies>>,
    nonces: AtomicU64,
}

/// What one wait for the broker brought.
enum Event {
    Reply(Option<lapin::Result<Delivery>>),
    Confirm(lapin::Result<Confirmation>),
    Tick,
}

impl RemoteDevice {
    fn fault(&self, message: impl Into<String>) -> Error {
        Error::Backend {
            backend: Backend::Custom,
            device: self.info.id.clone(),
            message: message.into(),
        }
    }

    /// The connection, waiting for it while the search may go on; `Ok(None)`: the search
    /// stopped first.
    fn session(&self, ctl: &SearchControl) -> Result<Option<Arc<Session>>, Error> {
        let shared = &self.client.shared;
        loop {
            match &*shared.session.borrow() {
                Link::Up(s) => return Ok(Some(s.clone())),
                Link::Down { since, error } => {
                    let waited = since.elapsed();
                    if waited >= shared.config.connect_wait {
                        return Err(self.fault(format!(
                            "no connection to the broker {} for {:.1} s: {error}",
                            shared.config.url,
                            waited.as_secs_f64()
                        )));
                    }
                }
            }
            if ctl.should_stop() {
                return Ok(None);
            }
            std::thread::sleep(POLL);
        }
    }

    /// A worker's reply as nonce trits, or the fault it is.
    fn decode(&self, job: &SearchJob, d: &Delivery) -> Result<([i8; NONCE_TRITS], u64), Error> {
        let p = &d.properties;
        let header = |k: &str| p.headers().as_ref().and_then(|h| h.inner().get(k).cloned());
        let worker = match header(HEADER_WORKER) {
            Some(AMQPValue::LongString(s)) => s.to_string(),
            _ => "a worker".into(),
        };
        if p.kind().as_ref().is_some_and(|k| k.as_str() == ERROR_TYPE) {
            let reason = match header(HEADER_ERROR) {
                Some(AMQPValue::LongString(s)) => s.to_string(),
                _ => String::from_utf8_lossy(&d.data).trim_end().to_string(),
            };
            return Err(self.fault(format!("{worker} rejected the job: {reason}")));
        }
        let tx = protocol::parse_reply(&d.data)
            .map_err(|e| self.fault(format!("{worker} answered with a malformed reply: {e}")))?;
        let start = TRANSACTION_TRITS - NONCE_TRITS;
        if tx.trits()[..start] != job.transaction().trits()[..start] {
            return Err(self.fault(format!(
                "{worker} answered a transaction that differs outside the nonce"
            )));
        }
        let mut nonce = [0; NONCE_TRITS];
        nonce.copy_from_slice(&tx.trits()[start..]);
        let nonces = match header(HEADER_NONCES) {
            Some(AMQPValue::LongLongInt(n)) => u64::try_from(n).unwrap_or(0),
            // A worker that does not say (dcurl's): the expected work, 3^MWM (saturating at
            // u64::MAX past MWM 40).
            _ => job.min_weight().expected_work() as u64,
        };
        Ok((nonce, nonces))
    }
}

impl Device for RemoteDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// For callers of the layout-only interface: the remote nonce as a [`crate::search::device::Hit`]
    /// when it follows the layout (a curlpow worker's does), else an error.
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let out = self.search_nonce(job, range, ctl)?;
        let hit = match out.found {
            None => None,
            Some(Found::Hit(h)) => Some(h),
            Some(Found::Nonce(n)) => Some(hit_of_nonce(&n).ok_or_else(|| {
                self.fault(
                    "the worker's nonce does not follow the crate's layout (use search_nonce)",
                )
            })?),
        };
        Ok(SearchOutcome {
            hit,
            nonces: out.nonces,
        })
    }

    fn search_nonce(
        &self,
        job: &SearchJob,
        _range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        let shared = &self.client.shared;
        let rt = self.client.handle();
        let id = format!(
            "{}-{}",
            shared.tag,
            shared.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let body = protocol::format_request(job.transaction(), job.mwm());
        let stopped = NonceOutcome {
            found: None,
            nonces: 0,
        };
        let mut slot = self.replies.lock();
        'attempt: loop {
            let Some(session) = self.session(ctl)? else {
                return Ok(stopped);
            };
            // A callback queue lives as long as its connection: open one per connection.
            if slot
                .as_ref()
                .is_none_or(|r| r.generation != session.generation)
            {
                match rt.block_on(open_replies(&session)) {
                    Ok(r) => *slot = Some(r),
                    Err(e) => {
                        tracing::debug!(
                            "opening a callback queue failed ({e}); again once reconnected"
                        );
                        *slot = None;
                        wait_for_change(shared, session.generation, ctl);
                        continue 'attempt;
                    }
                }
            }
            let replies = slot.as_mut().expect("opened above");
            let mut props = BasicProperties::default()
                .with_content_type("text/plain".into())
                .with_reply_to(replies.queue.clone())
                .with_correlation_id(id.as_str().into());
            if let Some(d) = ctl.deadline() {
                let ms = d
                    .saturating_duration_since(Instant::now())
                    .as_millis()
                    .max(1);
                props = props.with_expiration(ms.to_string().into());
            }
            let opts = BasicPublishOptions {
                mandatory: true,
                immediate: false,
            };
            let publish = session.channel.basic_publish(
                ShortString::default(),
                shared.queue.clone(),
                opts,
                &body,
                props,
            );
            let mut confirm = match rt.block_on(publish) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::debug!(%id, "publishing failed ({e}); again once reconnected");
                    wait_for_change(shared, session.generation, ctl);
                    continue 'attempt;
                }
            };
            loop {
                let event = rt.block_on(async {
                    tokio::select! {
                        d = replies.consumer.next() => Event::Reply(d),
                        c = async { confirm.as_mut().expect("guarded").await }, if confirm.is_some() => Event::Confirm(c),
                        _ = tokio::time::sleep(POLL) => Event::Tick,
                    }
                });
                match event {
                    Event::Reply(Some(Ok(d))) => {
                        let ours = d
                            .properties
                            .correlation_id()
                            .as_ref()
                            .is_some_and(|c| c.as_str() == id);
                        if ours {
                            let (nonce, nonces) = self.decode(job, &d)?;
                            self.nonces.fetch_add(nonces, Ordering::Relaxed);
                            return Ok(NonceOutcome {
                                found: Some(Found::Nonce(nonce)),
                                nonces,
                            });
                        }
                        // A late reply to an earlier search of this slot that stopped, or a
                        // duplicate after a redelivery: not this search's.
                    }
                    Event::Reply(_) => {
                        *slot = None;
                        wait_for_change(shared, session.generation, ctl);
                        continue 'attempt;
                    }
                    Event::Confirm(Ok(Confirmation::Nack(_))) => {
                        return Err(self.fault("the broker refused the request"))
                    }
                    Event::Confirm(Ok(Confirmation::Ack(Some(_)))) => {
                        return Err(self.fault(format!(
                            "the request could not be routed: no queue {}",
                            shared.queue
                        )))
                    }
                    Event::Confirm(Ok(_)) => confirm = None,
                    Event::Confirm(Err(e)) => {
                        tracing::debug!(%id, "the request's confirm failed ({e}); again once reconnected");
                        wait_for_change(shared, session.generation, ctl);
                        continue 'attempt;
                    }
                    Event::Tick => {}
                }
                if ctl.should_stop() {
                    return Ok(stopped);
                }
                // The connection the request went out on is gone, and its reply queue with it.
                let same = matches!(&*shared.session.borrow(), Link::Up(s) if s.generation == session.generation);
                if !same {
                    continue 'attempt;
                }
            }
        }
    }

    fn nonces_tried(&self) -> u64 {
        self.nonces.load(Ordering::Relaxed)
    }
}

/// After a failure on connection `generation`: wait until the connection is replaced (the
/// usual case: it died), the search stops, or a second has passed (the connection stayed up:
/// try again on it, without spinning).
fn wait_for_change(shared: &Shared, generation: u64, ctl: &SearchControl) {
    let t0 = Instant::now();
    while !ctl.should_stop()
        && t0.elapsed() < Duration::from_secs(1)
        && matches!(&*shared.session.borrow(), Link::Up(s) if s.generation == generation)
    {
        std::thread::sleep(POLL);
    }
}
