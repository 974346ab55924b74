//! [`BrokerWorker`]: the consumer behind `curlpow worker`. It takes dcurl-format requests from the
//! queue, does the PoW on this host's devices through an [`Engine`], and replies to each
//! request's `reply_to`.
//!
//! What it does that dcurl's worker does not:
//! - **acknowledges a request only after its reply is published and confirmed** by the broker
//!   (publisher confirms), so a worker that dies mid-job loses nothing: the broker hands the
//!   unacknowledged request to another worker (at-least-once; a client may then get two
//!   replies, each with a valid nonce);
//! - **prefetch = its device slots** (one unacknowledged request per engine device unless told
//!   otherwise), so a busy worker never hoards requests another could take;
//! - **checks every request** (length, trytes, MWM range and `max_mwm`): a malformed one gets an
//!   error reply (see [`protocol`]) and is rejected without requeue, never
//!   retried forever;
//! - **never loops on a request it cannot answer**: a reply the broker refuses (a `reply_to`
//!   queue that is full, say `x-max-length 0` with `x-overflow reject-publish`) sends the
//!   request back to the queue once, its result kept, so the second delivery only publishes
//!   again; refused again, the request is rejected without requeue and logged once (see
//!   [`MAX_REPLY_ATTEMPTS`]);
//! - **never publishes to a `reply_to` the broker would close the connection for** (a direct
//!   reply-to name no broker issued, see [`protocol::check_reply_to`]): such a request is
//!   rejected without requeue at once. Replies go out on a connection of their own, one at a
//!   time, so a reply the broker answers by closing the connection costs only that connection,
//!   never the consumer and the requests it holds; and the request that cost it is remembered
//!   (by a digest of its body, `reply_to`, `correlation_id` and `message_id`, across
//!   reconnections), so its next delivery is rejected without requeue (to the queue's
//!   dead-letter exchange where it has one) and logged once;
//! - copies the request's `correlation_id` to the reply, so newer clients can match replies;
//! - **reconnects with backoff** when the broker goes away (requests it held go back to the
//!   queue), and on shutdown stops consuming, lets the jobs it holds finish within a grace
//!   period, then closes.
//!
//! The PoW runs on tokio's blocking threads (at most `prefetch` at once), never on the async
//! runtime's worker, which only moves messages.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use lapin::message::Delivery;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions,
    BasicPublishOptions, BasicQosOptions, BasicRejectOptions, ConfirmSelectOptions,
};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Channel, Confirmation};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_stream::StreamExt;

use crate::backend::remote::amqp::{
    connect, declare_queue, queue_name, Backoff, BrokerError, BrokerUrl, DEFAULT_QUEUE,
};
use crate::backend::remote::protocol::HEADER_WORKER;
use crate::backend::remote::protocol::{
    self, ERROR_TYPE, HEADER_ERROR, HEADER_NONCES, HEADER_REDELIVERED,
};
use crate::base::error::Error;
use crate::engine::{Engine, PowOptions};
use crate::search::control::CancelToken;
use crate::search::search_job::Mwm;
use crate::service::signals::Signals;
use lapin::protocol::{AMQPErrorKind, AMQPHardError};

/// AMQP delivery mode 2: persistent (what dcurl's peers send).
const PERSISTENT: u8 = 2;

/// Deliveries of one request whose reply the broker refuses before it is rejected without
/// requeue: the first refusal sends it back to the queue (the reply queue may have room a moment
/// later), the second ends it. A delivery's number is `x-delivery-count` + 1 where the queue
/// counts (quorum queues), else 2 for a redelivered request and 1 for a new one.
pub const MAX_REPLY_ATTEMPTS: u64 = 2;

/// Results kept for requests whose reply was refused, so that their redelivery publishes again
/// without a second search (oldest dropped first).
const REFUSED_KEPT: usize = 64;

/// Requests remembered as having cost the worker its reply connection (oldest forgotten first).
const SUSPECTS_KEPT: usize = 4096;

/// A message's identity: a digest of its body, `reply_to`, `correlation_id` and `message_id`.
type MessageKey = [u8; 32];

/// The identity of the message `d`, the same on every delivery of it.
fn message_key(d: &Delivery) -> MessageKey {
    use blake2::digest::consts::U32;
    use blake2::{Blake2b, Digest};
    let p = &d.properties;
    let mut h = Blake2b::<U32>::new();
    let parts: [Option<&[u8]>; 4] = [
        Some(&d.data),
        p.reply_to().as_ref().map(|s| s.as_str().as_bytes()),
        p.correlation_id().as_ref().map(|s| s.as_str().as_bytes()),
        p.message_id().as_ref().map(|s| s.as_str().as_bytes()),
    ];
    for part in parts {
        match part {
            Some(b) => {
                h.update([1]);
                h.update((b.len() as u64).to_le_bytes());
                h.update(b);
            }
            None => h.update([0]),
        }
    }
    let mut out = [0; 32];
    out.copy_from_slice(&h.finalize());
    out
}

/// Requests whose reply publish cost the worker its reply connection: kept across
/// reconnections, so that the second delivery of one is rejected instead of tried again.
#[derive(Default)]
struct Suspects {
    order: VecDeque<MessageKey>,
    set: HashSet<MessageKey>,
}

impl Suspects {
    fn add(&mut self, k: MessageKey) {
        if !self.set.insert(k) {
            return;
        }
        if self.order.len() == SUSPECTS_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.order.push_back(k);
    }

    /// Whether `k` is a suspect; it is forgotten (its delivery is about to be rejected).
    fn take(&mut self, k: &MessageKey) -> bool {
        if !self.set.remove(k) {
            return false;
        }
        self.order.retain(|x| x != k);
        true
    }
}

/// Bytes of a message body shown in a log line; the rest is counted, never logged.
pub(crate) const LOG_PREVIEW_BYTES: usize = 48;

/// The first [`LOG_PREVIEW_BYTES`] bytes of `body`, escaped, and how many there were: what a
/// log line may say about a body.
pub(crate) fn body_preview(body: &[u8]) -> String {
    let shown = &body[..body.len().min(LOG_PREVIEW_BYTES)];
    let mut s: String = shown.escape_ascii().to_string();
    if body.len() > shown.len() {
        s.push_str(&format!("... ({} bytes)", body.len()));
    }
    s
}

/// `curlpow worker`'s settings. Build with [`WorkerConfig::new`] and change the fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WorkerConfig {
    /// The broker.
    pub url: BrokerUrl,
    /// The request queue (default dcurl's `incoming_queue`); declared durable if it does not
    /// exist (an existing one, a quorum queue say, is used as it is).
    pub queue: String,
    /// Requests held unacknowledged at once (default: the engine's device count: one per
    /// device slot, so nothing waits here that another worker could run).
    pub prefetch: Option<u16>,
    /// The highest MWM accepted (default 14, mainnet's); higher ones are rejected.
    pub max_mwm: usize,
    /// How long jobs in flight may finish after a shutdown begins (default 30 s); what is left
    /// then is cancelled and goes back to the queue.
    pub shutdown_grace: Duration,
    /// The first reconnection delay (default 100 ms); it doubles up to `reconnect_max`.
    pub reconnect_min: Duration,
    /// The longest reconnection delay (default 5 s).
    pub reconnect_max: Duration,
    /// This worker's name, in the reply header `x-curlpow-worker` and in logs (default
    /// `HOST:PID`).
    pub name: String,
    /// The search options every job starts from (device selection); the MWM and the cancel
    /// token are set per job.
    pub pow: PowOptions,
}

impl WorkerConfig {
    /// The defaults for a broker.
    pub fn new(url: BrokerUrl) -> Self {
        WorkerConfig {
            url,
            queue: DEFAULT_QUEUE.into(),
            prefetch: None,
            max_mwm: Mwm::MAINNET.zeros(),
            shutdown_grace: Duration::from_secs(30),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
            name: default_name(),
            pow: PowOptions::default(),
        }
    }
}

/// `HOST:PID`.
fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| crate::base::env::other("HOSTNAME").and_then(|h| h.into_string().ok()))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    format!("{host}:{}", std::process::id())
}

/// What a worker has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerStats {
    /// Requests answered with a valid nonce and acknowledged.
    pub done: u64,
    /// Of those, replies the broker could not route (the client's reply queue was gone).
    pub unroutable_replies: u64,
    /// Requests rejected (malformed, no `reply_to`, or a PoW that failed twice).
    pub rejected: u64,
    /// Requests handed back to the queue after a failure.
    pub requeued: u64,
    /// Connections opened (1 + reconnections).
    pub connections: u64,
    /// Reply connections opened (replies go out on a connection of their own; see
    /// [`BrokerWorker`]).
    pub reply_connections: u64,
}

#[derive(Default)]
struct Counters {
    done: AtomicU64,
    unroutable: AtomicU64,
    rejected: AtomicU64,
    requeued: AtomicU64,
    connections: AtomicU64,
    reply_connections: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// How the worker should be running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    Consume,
    /// Stop consuming, let held jobs finish within the grace period.
    Drain,
    /// Stop now: cancel held jobs (the broker requeues them).
    Now,
}

struct Shared {
    engine: Engine,
    config: WorkerConfig,
    queue: ShortString,
    prefetch: u16,
    counters: Counters,
    /// The results of requests whose reply was refused, for their redelivery.
    refused: Mutex<VecDeque<Refused>>,
    /// Requests that cost the worker its reply connection.
    suspects: Mutex<Suspects>,
}

/// A result the broker refused to route to `reply_to`.
struct Refused {
    request: Vec<u8>,
    reply_to: ShortString,
    reply: Vec<u8>,
    nonces: u64,
}

impl Shared {
    fn keep_refused(&self, r: Refused) {
        let mut q = self.refused.lock();
        if q.len() == REFUSED_KEPT {
            q.pop_front();
        }
        q.push_back(r);
    }

    /// The kept result for this request and reply queue, taken out of the list.
    fn take_refused(&self, request: &[u8], reply_to: &ShortString) -> Option<Refused> {
        let mut q = self.refused.lock();
        let i = q
            .iter()
            .position(|r| r.request == request && &r.reply_to == reply_to)?;
        q.remove(i)
    }
}

/// Which delivery of its request `d` is (1 for the first).
fn delivery_number(d: &Delivery) -> u64 {
    let count = d
        .properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get("x-delivery-count").cloned())
        .and_then(|v| match v {
            AMQPValue::LongLongInt(n) => u64::try_from(n).ok(),
            AMQPValue::LongInt(n) => u64::try_from(n).ok(),
            AMQPValue::LongUInt(n) => Some(u64::from(n)),
            AMQPValue::ShortInt(n) => u64::try_from(n).ok(),
            AMQPValue::ShortUInt(n) => Some(u64::from(n)),
            _ => None,
        });
    match count {
        Some(n) => n.saturating_add(1),
        None if d.redelivered => 2,
        None => 1,
    }
}

/// A running worker: its own small async runtime for the broker connection, the engine's
/// devices for PoW. Stop it with [`shutdown`](BrokerWorker::shutdown) (drains) or by dropping it
/// (held jobs are cancelled and go back to the queue).
///
/// ```no_run
/// use curlpow::broker::{BrokerWorker, WorkerConfig};
/// let url = "amqp://guest:guest@127.0.0.1:5672/%2f".parse()?;
/// let mut worker = BrokerWorker::start(curlpow::Engine::new()?, WorkerConfig::new(url))?;
/// let signal = worker.wait_for_signal(); // SIGTERM or SIGINT
/// eprintln!("{signal}: draining");
/// let stats = worker.shutdown();
/// eprintln!("{} answered", stats.done);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BrokerWorker {
    runtime: Option<tokio::runtime::Runtime>,
    task: Option<tokio::task::JoinHandle<()>>,
    run: watch::Sender<Run>,
    shared: Arc<Shared>,
    signals: Option<Signals>,
}

impl std::fmt::Debug for BrokerWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerWorker")
            .field("broker", &self.shared.config.url)
            .field("queue", &self.shared.config.queue)
            .field("prefetch", &self.shared.prefetch)
            .finish_non_exhaustive()
    }
}

impl BrokerWorker {
    /// Check the settings and start consuming in the background (connecting, and reconnecting
    /// with backoff, until stopped). A broker that is down at start is not an error: the
    /// worker keeps trying and logs each failure.
    pub fn start(engine: Engine, config: WorkerConfig) -> Result<BrokerWorker, BrokerError> {
        let queue = queue_name(&config.queue)?;
        if config.max_mwm > Mwm::MAX.zeros() {
            return Err(BrokerError::Config(format!(
                "max MWM {} is out of range (0..=243)",
                config.max_mwm
            )));
        }
        let devices = engine.devices().len();
        let prefetch = match config.prefetch {
            Some(0) => {
                return Err(BrokerError::Config(
                    "prefetch must be at least 1 (0 would mean no limit: one worker would take every request)"
                        .into(),
                ))
            }
            Some(n) => n,
            None => u16::try_from(devices.max(1)).unwrap_or(u16::MAX),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("curlpow-amqp")
            // One blocking thread per held job runs its PoW; a few more for jobs winding down.
            .max_blocking_threads(usize::from(prefetch) + 4)
            .enable_all()
            .build()
            .map_err(|e| BrokerError::Runtime {
                what: "starting the async runtime".into(),
                message: e.to_string(),
            })?;
        let signals = runtime
            .block_on(async { Signals::register() })
            .map_err(|e| BrokerError::Runtime {
                what: "registering signal handlers".into(),
                message: e.to_string(),
            })?;
        let shared = Arc::new(Shared {
            engine,
            config,
            queue,
            prefetch,
            counters: Counters::default(),
            refused: Mutex::new(VecDeque::new()),
            suspects: Mutex::new(Suspects::default()),
        });
        let (run, run_rx) = watch::channel(Run::Consume);
        let task = runtime.spawn(consume_until_stopped(shared.clone(), run_rx));
        Ok(BrokerWorker {
            runtime: Some(runtime),
            task: Some(task),
            run,
            shared,
            signals: Some(signals),
        })
    }

    /// The prefetch in use (requests held unacknowledged at once).
    pub fn prefetch(&self) -> u16 {
        self.shared.prefetch
    }

    /// What the worker has done so far.
    pub fn stats(&self) -> WorkerStats {
        let c = &self.shared.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        WorkerStats {
            done: get(&c.done),
            unroutable_replies: get(&c.unroutable),
            rejected: get(&c.rejected),
            requeued: get(&c.requeued),
            connections: get(&c.connections),
            reply_connections: get(&c.reply_connections),
        }
    }

    /// Block until SIGTERM or SIGINT (Ctrl-C elsewhere); returns the signal's name.
    pub fn wait_for_signal(&mut self) -> &'static str {
        match (self.runtime.as_ref(), self.signals.as_mut()) {
            (Some(rt), Some(s)) => s.wait(rt),
            _ => "none",
        }
    }

    /// Graceful shutdown: stop consuming, let the jobs held finish within
    /// [`WorkerConfig::shutdown_grace`] (their replies published, the requests acknowledged),
    /// hand the rest back to the queue, close the connection. Returns the final statistics.
    pub fn shutdown(mut self) -> WorkerStats {
        self.stop(Run::Drain);
        self.stats()
    }

    fn stop(&mut self, how: Run) {
        let _ = self.run.send(how);
        let Some(rt) = self.runtime.take() else {
            return;
        };
        if let Some(task) = self.task.take() {
            let limit = self.shared.config.shutdown_grace + Duration::from_secs(10);
            let _ = rt.block_on(async { tokio::time::timeout(limit, task).await });
        }
        rt.shutdown_timeout(Duration::from_secs(5));
    }
}

impl Drop for BrokerWorker {
    fn drop(&mut self) {
        self.stop(Run::Now);
    }
}

/// Sessions, one per connection, until told to stop; waits between them with backoff.
async fn consume_until_stopped(shared: Arc<Shared>, mut run: watch::Receiver<Run>) {
    let cfg = &shared.config;
    let mut backoff = Backoff::new(cfg.reconnect_min, cfg.reconnect_max);
    loop {
        if *run.borrow() != Run::Consume {
            return;
        }
        let e = match session(&shared, &mut run, &mut backoff).await {
            Ok(()) => return,
            Err(e) => e,
        };
        if *run.borrow() != Run::Consume {
            return;
        }
        let wait = backoff.delay();
        tracing::warn!(error = %e, retry_in_s = wait.as_secs_f64(), "broker unavailable");
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = run.changed() => return,
        }
    }
}

/// One connection: consume until it fails (an error: reconnect) or a stop (drain, `Ok`).
async fn session(
    shared: &Arc<Shared>,
    run: &mut watch::Receiver<Run>,
    backoff: &mut Backoff,
) -> Result<(), BrokerError> {
    let cfg = &shared.config;
    let url = &cfg.url;
    let name = format!("curlpow worker {}", cfg.name);
    let conn = tokio::select! {
        c = connect(url, &name) => c?,
        _ = run.changed() => return Ok(()),
    };
    let err = |e: lapin::Error| url.err(e);
    let ch = conn.create_channel().await.map_err(err)?;
    let ch = declare_queue(&conn, ch, &shared.queue).await.map_err(err)?;
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .map_err(err)?;
    ch.basic_qos(shared.prefetch, BasicQosOptions::default())
        .await
        .map_err(err)?;
    let mut consumer = ch
        .basic_consume(
            shared.queue.clone(),
            ShortString::default(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .map_err(err)?;
    bump(&shared.counters.connections);
    backoff.reset();
    tracing::info!(
        queue = %shared.queue,
        broker = %url,
        prefetch = shared.prefetch,
        heartbeat_s = conn.configuration().heartbeat(),
        worker = %cfg.name,
        "consuming"
    );
    let cancel = CancelToken::new();
    let link = Arc::new(ReplyLink::new(shared.clone(), format!("{name} (replies)")));
    let mut jobs = JoinSet::new();
    let lost = loop {
        tokio::select! {
            _ = run.changed() => break None,
            Some(_) = jobs.join_next(), if !jobs.is_empty() => {}
            _ = link.failed.notified() => {
                break Some(url.err("the reply connection could not be opened"))
            }
            d = consumer.next() => match d {
                Some(Ok(d)) => {
                    jobs.spawn(handle(shared.clone(), link.clone(), d, cancel.clone()));
                }
                Some(Err(e)) => break Some(url.err(e)),
                None => break Some(url.err("the broker cancelled the consumer (queue deleted?)")),
            },
        }
    };
    if let Some(e) = lost {
        // The jobs held can no longer be acknowledged on this connection; the broker gives
        // them to another consumer (or to this one once it is back).
        cancel.cancel();
        wait_all(&mut jobs, Duration::from_secs(5)).await;
        link.close().await;
        return Err(e);
    }
    // Stop: no new deliveries; what was delivered and not started goes back with the channel.
    let _ = ch
        .basic_cancel(consumer.tag(), BasicCancelOptions::default())
        .await;
    let grace = if *run.borrow() == Run::Now {
        Duration::ZERO
    } else {
        cfg.shutdown_grace
    };
    tracing::info!(jobs = jobs.len(), grace_s = grace.as_secs_f64(), "draining");
    let drained = tokio::select! {
        d = wait_all(&mut jobs, grace) => d,
        _ = async { while run.changed().await.is_ok() && *run.borrow() != Run::Now {} } => false,
    };
    if !drained {
        tracing::warn!(
            jobs = jobs.len(),
            "shutdown: cancelling the jobs still running; the broker requeues them"
        );
        cancel.cancel();
        wait_all(&mut jobs, Duration::from_secs(5)).await;
    }
    link.close().await;
    let _ = ch.close(200, "curlpow worker stopping".into()).await;
    let _ = conn.close(200, "curlpow worker stopping".into()).await;
    let c = &shared.counters;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    tracing::info!(
        done = get(&c.done),
        rejected = get(&c.rejected),
        requeued = get(&c.requeued),
        connections = get(&c.connections),
        "stopped"
    );
    Ok(())
}

/// Wait for every job, up to `limit`; true if all ended.
async fn wait_all(jobs: &mut JoinSet<()>, limit: Duration) -> bool {
    let all = async {
        while let Some(r) = jobs.join_next().await {
            if let Err(e) = r {
                if e.is_panic() {
                    tracing::error!("a job task panicked: {e}");
                }
            }
        }
    };
    tokio::time::timeout(limit, all).await.is_ok()
}

/// Where replies go out: a connection of its own, opened on the first reply and again after a
/// failure, so that a reply the broker answers by closing the connection never takes the
/// consumer, and the requests it holds, with it. Replies are published one at a time, so a
/// connection lost while publishing is charged to the one request being answered.
struct ReplyLink {
    shared: Arc<Shared>,
    name: String,
    open: tokio::sync::Mutex<Option<(lapin::Connection, Channel)>>,
    /// Fired when the connection could not be opened: the session ends and reconnects with
    /// backoff.
    failed: tokio::sync::Notify,
}

/// Why a reply was not published.
enum PublishFailure {
    /// The reply connection could not be opened.
    Open(BrokerError),
    /// The connection or channel failed while this reply was published; `charged` when the
    /// broker closed it with an error (not a shutdown): this message cost the connection.
    Lost { error: lapin::Error, charged: bool },
}

impl std::fmt::Display for PublishFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PublishFailure::Open(e) => write!(f, "opening the reply connection: {e}"),
            PublishFailure::Lost { error, .. } => write!(f, "{error}"),
        }
    }
}

/// Whether a publish error is the broker closing the channel or connection over this message
/// (541 INTERNAL_ERROR, a channel error), rather than the broker shutting down (320
/// CONNECTION_FORCED) or the network failing.
fn charged_to_message(e: &lapin::Error) -> bool {
    match e.kind() {
        lapin::ErrorKind::ProtocolError(a) => !matches!(
            a.kind(),
            AMQPErrorKind::Hard(AMQPHardError::CONNECTIONFORCED)
        ),
        _ => false,
    }
}

impl ReplyLink {
    fn new(shared: Arc<Shared>, name: String) -> Self {
        ReplyLink {
            shared,
            name,
            open: tokio::sync::Mutex::new(None),
            failed: tokio::sync::Notify::new(),
        }
    }

    async fn publish(
        &self,
        routing_key: &ShortString,
        body: &[u8],
        props: BasicProperties,
    ) -> Result<Confirmation, PublishFailure> {
        let mut open = self.open.lock().await;
        let ch = match &*open {
            Some((c, ch)) if c.status().connected() && ch.status().connected() => ch.clone(),
            _ => {
                open.take();
                let url = &self.shared.config.url;
                let opened = async {
                    let conn = connect(url, &self.name).await?;
                    let ch = conn.create_channel().await.map_err(|e| url.err(e))?;
                    ch.confirm_select(ConfirmSelectOptions::default())
                        .await
                        .map_err(|e| url.err(e))?;
                    Ok::<_, BrokerError>((conn, ch))
                };
                match opened.await {
                    Ok((conn, ch)) => {
                        bump(&self.shared.counters.reply_connections);
                        *open = Some((conn, ch.clone()));
                        ch
                    }
                    Err(e) => {
                        self.failed.notify_one();
                        return Err(PublishFailure::Open(e));
                    }
                }
            }
        };
        match publish(&ch, routing_key, body, props).await {
            Ok(c) => Ok(c),
            Err(error) => {
                if let Some((conn, _)) = open.take() {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(1),
                        conn.close(200, "reply connection failed".into()),
                    )
                    .await;
                }
                let charged = charged_to_message(&error);
                Err(PublishFailure::Lost { error, charged })
            }
        }
    }

    async fn close(&self) {
        if let Some((conn, _)) = self.open.lock().await.take() {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                conn.close(200, "curlpow worker stopping".into()),
            )
            .await;
        }
    }
}

/// Publish through the default exchange to `routing_key`, mandatory (an unroutable reply comes
/// back instead of vanishing), and wait for the broker's confirm.
async fn publish(
    ch: &Channel,
    routing_key: &ShortString,
    body: &[u8],
    props: BasicProperties,
) -> lapin::Result<Confirmation> {
    let opts = BasicPublishOptions {
        mandatory: true,
        immediate: false,
    };
    ch.basic_publish(
        ShortString::default(),
        routing_key.clone(),
        opts,
        body,
        props,
    )
    .await?
    .await
}

/// The properties every reply carries: text, persistent, the worker's name, the request's
/// correlation id when it had one.
fn reply_properties(shared: &Shared, d: &Delivery, mut headers: FieldTable) -> BasicProperties {
    headers.insert(
        HEADER_WORKER.into(),
        AMQPValue::LongString(shared.config.name.clone().into()),
    );
    headers.insert(HEADER_REDELIVERED.into(), AMQPValue::Boolean(d.redelivered));
    let props = BasicProperties::default()
        .with_content_type("text/plain".into())
        .with_delivery_mode(PERSISTENT)
        .with_headers(headers);
    match d.properties.correlation_id() {
        Some(c) => props.with_correlation_id(c.clone()),
        None => props,
    }
}

/// One request, start to acknowledgement.
async fn handle(shared: Arc<Shared>, ch: Arc<ReplyLink>, d: Delivery, cancel: CancelToken) {
    let key = message_key(&d);
    if shared.suspects.lock().take(&key) {
        // Its reply cost the reply connection once already: never again.
        let reason = "publishing its reply cost the worker its broker connection before";
        return reject(&shared, &ch, &d, None, reason).await;
    }
    let reply_to = d.properties.reply_to().clone();
    if let Some(r) = &reply_to {
        if let Err(e) = protocol::check_reply_to(r.as_str()) {
            // Never published to: the broker would close the connection.
            return reject(&shared, &ch, &d, None, &e.to_string()).await;
        }
    }
    let req = match protocol::parse_request(&d.data, shared.config.max_mwm) {
        Ok(r) => r,
        Err(e) => return reject(&shared, &ch, &d, reply_to.as_ref(), &e.to_string()).await,
    };
    let Some(reply_to) = reply_to else {
        return reject(
            &shared,
            &ch,
            &d,
            None,
            "no reply_to: nowhere to send the result",
        )
        .await;
    };
    if d.redelivered || delivery_number(&d) > 1 {
        if let Some(kept) = shared.take_refused(&d.data, &reply_to) {
            // Its reply was refused before: publish the result again, no second search.
            return reply(&shared, &ch, &d, key, &reply_to, kept.reply, kept.nonces).await;
        }
    }
    let engine = shared.engine.clone();
    let opts = shared
        .config
        .pow
        .clone()
        .with_mwm(req.mwm)
        .cancel(cancel.clone());
    let tx = req.transaction;
    let done = match tokio::task::spawn_blocking(move || engine.pow_with(&tx, &opts)).await {
        Ok(Ok(done)) => done,
        // The connection is gone or the worker stops now: the broker requeues the request.
        Ok(Err(_)) if cancel.is_cancelled() => return,
        Ok(Err(e)) => return pow_failed(&shared, &ch, &d, &reply_to, &e).await,
        Err(e) => {
            tracing::error!("the PoW task failed: {e}");
            let e = crate::base::error::InternalError::TaskFailed {
                message: e.to_string(),
            };
            return pow_failed(&shared, &ch, &d, &reply_to, &e.into()).await;
        }
    };
    let nonces = done.report.nonces;
    reply(
        &shared,
        &ch,
        &d,
        key,
        &reply_to,
        protocol::format_reply(&done.transaction),
        nonces,
    )
    .await;
}

/// Publish the result, then acknowledge the request: only once the broker confirmed the reply.
/// A reply the broker refuses sends the request back to the queue, its result kept, up to
/// [`MAX_REPLY_ATTEMPTS`] deliveries; then the request is rejected without requeue.
#[allow(clippy::too_many_arguments)]
async fn reply(
    shared: &Shared,
    ch: &ReplyLink,
    d: &Delivery,
    key: MessageKey,
    reply_to: &ShortString,
    body: Vec<u8>,
    nonces: u64,
) {
    let mut headers = FieldTable::default();
    headers.insert(
        HEADER_NONCES.into(),
        AMQPValue::LongLongInt(i64::try_from(nonces).unwrap_or(i64::MAX)),
    );
    let props = reply_properties(shared, d, headers);
    match ch.publish(reply_to, &body, props).await {
        Ok(Confirmation::Nack(_)) => {
            let delivery = delivery_number(d);
            if delivery >= MAX_REPLY_ATTEMPTS {
                bump(&shared.counters.rejected);
                tracing::warn!(
                    %reply_to,
                    delivery,
                    request = %body_preview(&d.data),
                    "the broker refused the reply again; request rejected, not requeued"
                );
                let opts = BasicRejectOptions { requeue: false };
                if let Err(e) = d.acker.reject(opts).await {
                    tracing::warn!("rejecting a request failed: {e}");
                }
                return;
            }
            tracing::debug!(%reply_to, delivery, "the broker refused the reply; the request goes back to the queue once");
            shared.keep_refused(Refused {
                request: d.data.clone(),
                reply_to: reply_to.clone(),
                reply: body,
                nonces,
            });
            bump(&shared.counters.requeued);
            nack(d).await;
        }
        Ok(c) => {
            if c.take_message().is_some() {
                // The client's reply queue is gone (it gave up waiting): nobody to answer.
                tracing::info!(%reply_to, "reply queue gone (the client gave up); request dropped");
                bump(&shared.counters.unroutable);
            }
            match d.acker.ack(BasicAckOptions::default()).await {
                Ok(_) => {
                    bump(&shared.counters.done);
                    tracing::debug!(%reply_to, nonces, "answered");
                }
                // The reply is out; the broker will hand the request out again (a duplicate).
                Err(e) => tracing::warn!(%reply_to, "acknowledging after the reply failed: {e}"),
            }
        }
        Err(PublishFailure::Lost {
            error,
            charged: true,
        }) => {
            // The broker closed the reply connection over this message: remember it, so
            // that its next delivery is rejected instead of costing another connection.
            shared.suspects.lock().add(key);
            tracing::warn!(
                %reply_to,
                %error,
                request = %body_preview(&d.data),
                "publishing the reply cost the reply connection; the request goes back to the queue once and is rejected if it comes back"
            );
            bump(&shared.counters.requeued);
            nack(d).await;
        }
        // The reply connection failed (or could not open): the request goes back to the
        // queue; the consumer's own connection is untouched unless the broker is gone.
        Err(e) => {
            tracing::warn!(%reply_to, "publishing the reply failed: {e}");
            bump(&shared.counters.requeued);
            nack(d).await;
        }
    }
}

/// A PoW that failed on this host: back to the queue the first time (another worker may do
/// better); rejected with an error reply the second, so it never loops.
async fn pow_failed(
    shared: &Shared,
    ch: &ReplyLink,
    d: &Delivery,
    reply_to: &ShortString,
    e: &Error,
) {
    if d.redelivered {
        let reason = format!("the PoW failed on a second delivery: {e}");
        return reject(shared, ch, d, Some(reply_to), &reason).await;
    }
    tracing::warn!(error = %e, "the PoW failed; the request goes back to the queue");
    bump(&shared.counters.requeued);
    nack(d).await;
}

async fn nack(d: &Delivery) {
    let opts = BasicNackOptions {
        multiple: false,
        requeue: true,
    };
    if let Err(e) = d.acker.nack(opts).await {
        tracing::warn!("handing a request back failed: {e}");
    }
}

/// Reject without requeue, with an error reply when there is somewhere to send it.
async fn reject(
    shared: &Shared,
    ch: &ReplyLink,
    d: &Delivery,
    reply_to: Option<&ShortString>,
    reason: &str,
) {
    bump(&shared.counters.rejected);
    tracing::warn!(
        reason,
        bytes = d.data.len(),
        request = %body_preview(&d.data),
        reply_to = reply_to.map(ShortString::as_str),
        "rejected a request, not requeued (it goes to the queue's dead-letter exchange if it has one)"
    );
    if let Some(reply_to) = reply_to {
        let mut headers = FieldTable::default();
        headers.insert(
            HEADER_ERROR.into(),
            AMQPValue::LongString(reason.to_string().into()),
        );
        let props = reply_properties(shared, d, headers).with_type(ERROR_TYPE.into());
        let body = protocol::format_error_reply(reason);
        if let Err(e) = ch.publish(reply_to, &body, props).await {
            tracing::warn!(%reply_to, "publishing the error reply failed: {e}");
        }
    }
    let opts = BasicRejectOptions { requeue: false };
    if let Err(e) = d.acker.reject(opts).await {
        tracing::warn!("rejecting a request failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspects_are_remembered_once_and_bounded() {
        let mut s = Suspects::default();
        s.add([1; 32]);
        s.add([1; 32]);
        assert!(s.take(&[1; 32]));
        assert!(!s.take(&[1; 32]), "forgotten once taken");
        for i in 0..SUSPECTS_KEPT + 10 {
            let mut k = [0; 32];
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            s.add(k);
        }
        assert_eq!(s.order.len(), SUSPECTS_KEPT);
        assert_eq!(s.set.len(), SUSPECTS_KEPT);
        assert!(!s.take(&[0; 32]), "the oldest went first");
    }
}
