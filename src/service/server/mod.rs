//! `curlpow serve`: an IRI-compatible remote-PoW HTTP server (feature `server`).
//!
//! Wallets and nodes (Trinity, iota.js, PyOTA, iota.go) call it as they call an IRI node's
//! `attachToTangle`: every request is a `POST` of `{"command": …}` JSON with an
//! `X-IOTA-API-Version` header, on any path. The commands are `attachToTangle`,
//! `interruptAttachingToTangle` and `getNodeInfo`; `GET /health`, `GET /metrics` (Prometheus
//! text) and `GET /status` (a page that updates itself) are for operators. `docs/server.md` has
//! the API with examples, the limits, the metrics and how to run it.
//!
//! The layers, outermost first: tracing and panic catching (tower-http), CORS, auth, IRI's
//! request checks, admission (`limits`: a global concurrency limit, a bounded wait queue, a
//! per-client cap, clients served in turn), then [`Engine::attach_to_tangle`] on a blocking thread
//! (never on the async runtime's workers). The engine's registry gives each transaction's search a
//! free device as it does for any caller, and every nonce is verified on the host.
//!
//! ```no_run
//! use curlpow::server::{Config, Server};
//! use curlpow::Engine;
//!
//! let mut config = Config::default();
//! config.listen = "127.0.0.1:0".parse().unwrap();
//! let server = Server::start(Engine::new()?, config)?;
//! println!("listening on http://{}", server.local_addr());
//! server.shutdown()?; // stop accepting, let attaches finish within the grace period
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod api;
mod auth;
mod connections;
mod errors;
mod inflight;
mod limits;
mod metrics;
mod routes;
mod shutdown;
mod status;
mod trim;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{Engine, PowOptions};
use crate::search::search_job::Mwm;
pub use auth::Credentials;
use connections::{ConnLimits, Connections};
use inflight::InFlight;
use limits::{Admission, Limits};
use metrics::Metrics;

/// IRI's API port.
pub const DEFAULT_PORT: u16 = 14265;

/// The largest `max_body_length`: 256 MiB, about 95,000 transactions of JSON. Each connection
/// reading a body may hold this much.
pub const MAX_BODY_LENGTH: usize = 1 << 28;
/// The most transactions per attach a server may be set to take.
pub const MAX_REQUESTS_LIST: usize = 100_000;
/// The highest `concurrency`: each running attach holds a blocking thread.
pub const MAX_CONCURRENCY: usize = 1024;
/// The longest wait queue.
pub const MAX_QUEUE: usize = 65_536;
/// The most connections a server may be set to hold open.
pub const MAX_CONNECTIONS: usize = 1 << 20;
/// The default slowest body rate, bytes per second ([`Config::body_min_rate`]).
pub const DEFAULT_BODY_MIN_RATE: u64 = 500;
/// The shortest and longest connection time limits (header, body, idle).
pub const CONN_TIMEOUT_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(86_400);

/// What can stop the server from starting or running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A bad setting (an auth file that cannot be read, a zero limit).
    #[error("server configuration: {0}")]
    Config(String),
    /// A socket or runtime error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServerError {
    let what = what.into();
    move |source| ServerError::Io { what, source }
}

/// Server settings. Build with [`Config::default`] and change the fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Address to listen on (default `127.0.0.1:14265`, IRI's port; port 0 picks a free one).
    pub listen: SocketAddr,
    /// Largest request body in bytes (IRI's `maxBodyLength`, default 1,000,000).
    pub max_body_length: usize,
    /// Most transactions per attach (IRI's `maxRequestsList`, default 1000).
    pub max_requests_list: usize,
    /// Highest MWM accepted (default 14: mainnet's; PoW services cap it).
    pub max_mwm: usize,
    /// Time limit of one request, queue wait included (default 300 s; `None`: no limit).
    pub request_timeout: Option<Duration>,
    /// Attaches running at once (default: the engine's device count + 1, so a device never
    /// waits for the next request to be read).
    pub concurrency: Option<usize>,
    /// Attaches running at once for one client (its IP address, and its auth user when auth
    /// is on); default: the concurrency − 1 (at least 1), so another client always finds a slot.
    pub per_client: Option<usize>,
    /// Requests waiting for a slot, all clients (default 64). Past it: 503 + `Retry-After`.
    pub queue: usize,
    /// Requests waiting for one client (default: half the queue, rounded up).
    pub per_client_queue: Option<usize>,
    /// HTTP Basic credentials (IRI's `--remote-auth`); `None`: no auth.
    pub auth: Option<Credentials>,
    /// How long attaches in flight may finish after a shutdown begins (default 30 s).
    pub shutdown_grace: Duration,
    /// The search options every attach starts from (device selection, latency mode); the MWM,
    /// deadline and cancel token are set per request.
    pub pow: PowOptions,
    /// Async runtime worker threads (default 2: the HTTP layer is light; PoW runs elsewhere).
    pub runtime_threads: usize,
    /// Connections open at once, all peers (default 512). Past it a new connection displaces
    /// the least productive one (idle, or sending headers or a body slowest), or is closed at
    /// once (see `docs/hardening.md`).
    pub max_connections: usize,
    /// Connections open at once from one IP address (default 64).
    pub max_connections_per_peer: usize,
    /// Time for a request's headers to arrive, from the connection's start or from the first
    /// byte after the previous answer (default 10 s).
    pub header_read_timeout: Duration,
    /// Time for a request's body to arrive once its headers are in (default 60 s; past it the
    /// answer is 408).
    pub body_read_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request (default 30 s).
    pub idle_timeout: Duration,
    /// The slowest a body may arrive, in bytes per second (default 500, as Apache's
    /// `mod_reqtimeout`): a body has `header_read_timeout` to start and one more second for
    /// every `body_min_rate` bytes, never more than `body_read_timeout` in all; slower is a 408.
    /// 0: no rate, `body_read_timeout` alone.
    pub body_min_rate: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            max_body_length: 1_000_000,
            max_requests_list: 1000,
            max_mwm: 14,
            request_timeout: Some(Duration::from_secs(300)),
            concurrency: None,
            per_client: None,
            queue: 64,
            per_client_queue: None,
            auth: None,
            shutdown_grace: Duration::from_secs(30),
            pow: PowOptions::default(),
            runtime_threads: 2,
            max_connections: 512,
            max_connections_per_peer: 64,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(30),
            body_min_rate: DEFAULT_BODY_MIN_RATE,
        }
    }
}

impl Config {
    /// Every setting within its range; the error names the first that is not.
    pub fn check(&self) -> Result<(), ServerError> {
        fn within<T: PartialOrd + std::fmt::Debug>(
            what: &str,
            v: T,
            range: std::ops::RangeInclusive<T>,
        ) -> Result<(), ServerError> {
            if range.contains(&v) {
                Ok(())
            } else {
                Err(ServerError::Config(format!(
                    "{what} {v:?} is out of range: {:?} to {:?}",
                    range.start(),
                    range.end()
                )))
            }
        }
        within("max_mwm", self.max_mwm, 0..=Mwm::MAX.zeros())?;
        within("max_body_length", self.max_body_length, 1..=MAX_BODY_LENGTH)?;
        within(
            "max_requests_list",
            self.max_requests_list,
            1..=MAX_REQUESTS_LIST,
        )?;
        if let Some(c) = self.concurrency {
            within("concurrency", c, 1..=MAX_CONCURRENCY)?;
        }
        within("queue", self.queue, 0..=MAX_QUEUE)?;
        within("runtime_threads", self.runtime_threads, 1..=64)?;
        within("max_connections", self.max_connections, 1..=MAX_CONNECTIONS)?;
        within(
            "max_connections_per_peer",
            self.max_connections_per_peer,
            1..=self.max_connections,
        )?;
        for (what, d) in [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
        ] {
            within(what, d, CONN_TIMEOUT_RANGE)?;
        }
        Ok(())
    }

    /// The connection limits these settings give.
    pub(crate) fn conn_limits(&self) -> ConnLimits {
        ConnLimits {
            max_connections: self.max_connections,
            max_per_peer: self.max_connections_per_peer,
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
        }
    }

    /// The attaches that run at once with these settings on an engine with `devices` devices:
    /// [`Config::concurrency`], by default one more than the devices.
    pub fn concurrency_for(&self, devices: usize) -> usize {
        self.concurrency.unwrap_or(devices + 1).max(1)
    }

    /// The admission limits these settings give for an engine with `devices` devices.
    pub(crate) fn limits(&self, devices: usize) -> Limits {
        let concurrency = self.concurrency_for(devices);
        Limits {
            concurrency,
            per_client: self
                .per_client
                .unwrap_or(concurrency.saturating_sub(1))
                .clamp(1, concurrency),
            queue: self.queue,
            per_client_queue: self
                .per_client_queue
                .unwrap_or(self.queue.div_ceil(2))
                .min(self.queue),
        }
    }
}

/// The state every request handler shares.
pub(crate) struct App {
    pub(crate) engine: Engine,
    pub(crate) config: Config,
    pub(crate) admission: Arc<Admission>,
    pub(crate) connections: Arc<Connections>,
    pub(crate) inflight: Arc<InFlight>,
    pub(crate) metrics: Metrics,
    pub(crate) started: Instant,
    pub(crate) shutting_down: AtomicBool,
    /// Mean attach time (exponentially weighted, µs), for `Retry-After`.
    pub(crate) mean_attach_us: AtomicU64,
    /// The last minutes of counters, for `GET /status`.
    pub(crate) status: status::History,
    /// A large body was freed: the status sampler hands free memory back to the system on its
    /// next tick ([`trim`]).
    pub(crate) trim_wanted: AtomicBool,
}

impl App {
    /// Seconds a client turned away should wait: about the time the queue ahead of it takes.
    pub(crate) fn retry_after(&self, waiting: usize) -> u64 {
        let mean = self.mean_attach_us.load(Ordering::Relaxed) as f64 * 1e-6;
        let c = self.admission.limits().concurrency as f64;
        let est = mean * (waiting as f64 / c + 1.0);
        est.ceil().clamp(1.0, 60.0) as u64
    }

    pub(crate) fn observe_attach(&self, d: Duration) {
        let us = d.as_micros().min(u64::MAX as u128) as u64;
        let old = self.mean_attach_us.load(Ordering::Relaxed);
        let new = if old == 0 { us } else { (old * 7 + us) / 8 };
        self.mean_attach_us.store(new, Ordering::Relaxed);
    }
}

/// A running server: its own async runtime (a few threads for HTTP), the engine's devices for
/// PoW. Stop it with [`shutdown`](Server::shutdown) (graceful) or by dropping it (immediate).
pub struct Server {
    runtime: Option<tokio::runtime::Runtime>,
    addr: SocketAddr,
    app: Arc<App>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    signals: Option<shutdown::Signals>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Bind `config.listen` and start serving in the background.
    pub fn start(engine: Engine, config: Config) -> Result<Server, ServerError> {
        config.check()?;
        let limits = config.limits(engine.devices().len());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.runtime_threads)
            .thread_name("curlpow-http")
            // Attaches run on blocking threads; admission bounds them at `concurrency`, and a
            // few more serve cancelled searches that are still winding down.
            .max_blocking_threads(limits.concurrency * 2 + 4)
            .enable_all()
            .build()
            .map_err(io_err("starting the async runtime"))?;
        let std_listener = std::net::TcpListener::bind(config.listen)
            .map_err(io_err(format!("listening on {}", config.listen)))?;
        std_listener
            .set_nonblocking(true)
            .map_err(io_err("setting the listener non-blocking"))?;
        let addr = std_listener
            .local_addr()
            .map_err(io_err("reading the bound address"))?;
        let admission = Admission::new(limits);
        let connections = Connections::new(config.conn_limits());
        let app = Arc::new(App {
            metrics: Metrics::new(engine.clone(), admission.clone(), connections.clone()),
            engine,
            config,
            admission,
            connections,
            inflight: Arc::new(InFlight::default()),
            started: Instant::now(),
            shutting_down: AtomicBool::new(false),
            mean_attach_us: AtomicU64::new(0),
            status: status::History::default(),
            trim_wanted: AtomicBool::new(false),
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let (listener, signals) = runtime.block_on(async {
            let l = tokio::net::TcpListener::from_std(std_listener)
                .map_err(io_err("registering the listener"))?;
            let s = shutdown::Signals::register().map_err(io_err("registering signal handlers"))?;
            Ok::<_, ServerError>((l, s))
        })?;
        let task = runtime.spawn(shutdown::serve_until_stopped(
            app.clone(),
            listener,
            stop_rx,
        ));
        runtime.spawn(status::sampler(Arc::downgrade(&app)));
        let conns = app.connections.limits();
        tracing::info!(
            %addr,
            concurrency = limits.concurrency,
            per_client = limits.per_client,
            queue = limits.queue,
            per_client_queue = limits.per_client_queue,
            max_connections = conns.max_connections,
            max_per_peer = conns.max_per_peer,
            header_read_timeout_s = conns.header_read_timeout.as_secs_f64(),
            idle_timeout_s = conns.idle_timeout.as_secs_f64(),
            "serving"
        );
        Ok(Server {
            runtime: Some(runtime),
            addr,
            app,
            stop: Some(stop_tx),
            task: Some(task),
            signals: Some(signals),
        })
    }

    /// The address the server listens on (the real port when `listen` had port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Block until SIGTERM or SIGINT (Ctrl-C elsewhere); returns the signal's name.
    pub fn wait_for_signal(&mut self) -> &'static str {
        match (self.runtime.as_ref(), self.signals.as_mut()) {
            (Some(rt), Some(s)) => s.wait(rt),
            _ => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_out_of_range_is_refused() {
        assert!(Config::default().check().is_ok());
        type Change = fn(&mut Config);
        let bad: [(&str, Change); 8] = [
            ("max_body_length", |c| c.max_body_length = usize::MAX),
            ("max_body_length", |c| c.max_body_length = 0),
            ("max_mwm", |c| c.max_mwm = 300),
            ("concurrency", |c| c.concurrency = Some(usize::MAX)),
            ("queue", |c| c.queue = usize::MAX),
            ("max_connections_per_peer", |c| {
                c.max_connections_per_peer = c.max_connections + 1
            }),
            ("header_read_timeout", |c| {
                c.header_read_timeout = Duration::ZERO
            }),
            ("idle_timeout", |c| {
                c.idle_timeout = Duration::from_secs(u64::MAX)
            }),
        ];
        for (what, f) in bad {
            let mut c = Config::default();
            f(&mut c);
            let e = c.check().unwrap_err().to_string();
            assert!(
                e.contains(what) && e.contains("out of range"),
                "{what}: {e}"
            );
        }
    }
}
