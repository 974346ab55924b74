//! `curlpow serve`: the IRI-compatible remote-PoW server (see `docs/server.md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use curlpow::broker::{remote_devices, BrokerUrl, RemoteConfig};
use curlpow::server::{
    Config, Credentials, Server, ServerError, CONN_TIMEOUT_RANGE, MAX_BODY_LENGTH, MAX_CONCURRENCY,
    MAX_CONNECTIONS, MAX_QUEUE, MAX_REQUESTS_LIST,
};
use curlpow::{env, Engine, PowOptions, Selection};

use crate::engine_args::{build_engine, build_engine_with, EngineArgs};
use crate::exit::UsageError;
use crate::log_lines;
use crate::output::errln;
use crate::values;

/// A whole-number flag within `lo..=hi` (clap's message names the range).
fn count(lo: u64, hi: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(lo..=hi as u64)
}

/// A connection time limit in seconds, within [`CONN_TIMEOUT_RANGE`].
fn conn_seconds(s: &str) -> Result<Duration, String> {
    let d = values::seconds(s)?;
    if CONN_TIMEOUT_RANGE.contains(&d) {
        Ok(d)
    } else {
        Err(format!(
            "{s} is out of range: {} to {} seconds",
            CONN_TIMEOUT_RANGE.start().as_secs_f64(),
            CONN_TIMEOUT_RANGE.end().as_secs_f64()
        ))
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address and port to listen on (0.0.0.0:14265 for every interface; port 0 picks one).
    #[arg(long, default_value = "127.0.0.1:14265")]
    listen: SocketAddr,
    /// Highest minWeightMagnitude accepted (0 to 243).
    #[arg(long, default_value_t = 14, value_parser = count(0, curlpow::Mwm::MAX.zeros()))]
    max_mwm: usize,
    /// Largest request body in bytes (IRI's default; 1 to 268435456).
    #[arg(long, default_value_t = 1_000_000, value_parser = count(1, MAX_BODY_LENGTH))]
    max_body_length: usize,
    /// Most transactions per attachToTangle (IRI's default; 1 to 100000).
    #[arg(long, default_value_t = 1000, value_parser = count(1, MAX_REQUESTS_LIST))]
    max_requests_list: usize,
    /// Seconds one request may take, queue wait included (0: no limit; at most 1e9).
    #[arg(long, default_value = "300", value_parser = values::seconds)]
    request_timeout: Duration,
    /// Attaches running at once, 1 to 1024 [default: devices + 1].
    #[arg(long, value_parser = count(1, MAX_CONCURRENCY))]
    concurrency: Option<usize>,
    /// Attaches running at once for one client (its address, with its auth user when auth is
    /// on), 1 to the concurrency [default: concurrency - 1].
    #[arg(long, value_parser = count(1, MAX_CONCURRENCY))]
    per_client: Option<usize>,
    /// Requests waiting for a slot (0 to 65536); past it, 503 with Retry-After at once.
    #[arg(long, default_value_t = 64, value_parser = count(0, MAX_QUEUE))]
    queue: usize,
    /// Requests waiting for one client, 0 to the queue [default: half the queue].
    #[arg(long, value_parser = count(0, MAX_QUEUE))]
    per_client_queue: Option<usize>,
    /// Connections open at once, all peers, 1 to the open-file limit less 128 [default: the
    /// smaller of 1024 and that]. Past it a new connection displaces the least productive one (idle, or sending
    /// headers or a body slowest) or is closed.
    #[arg(long, value_parser = count(1, MAX_CONNECTIONS))]
    max_connections: Option<usize>,
    /// Connections open at once from one IP address, 1 to --max-connections [default: 64, or
    /// --max-connections if lower].
    #[arg(long, value_parser = count(1, MAX_CONNECTIONS))]
    max_connections_per_peer: Option<usize>,
    /// Seconds for a request's headers to arrive (0.1 to 86400).
    #[arg(long, default_value = "10", value_parser = conn_seconds)]
    header_read_timeout: Duration,
    /// Seconds for a request's body to arrive once its headers are in (0.1 to 86400); past it
    /// the answer is 408.
    #[arg(long, default_value = "60", value_parser = conn_seconds)]
    body_read_timeout: Duration,
    /// The slowest a body may arrive, bytes per second (0 to 1e9; 0: no rate): it has
    /// --header-read-timeout to start and one more second per this many bytes, within
    /// --body-read-timeout in all; slower is a 408.
    #[arg(long, default_value_t = curlpow::server::DEFAULT_BODY_MIN_RATE, value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    body_min_rate: u64,
    /// Seconds a kept-alive connection may wait for its next request (0.1 to 86400).
    #[arg(long, default_value = "30", value_parser = conn_seconds)]
    idle_timeout: Duration,
    /// HTTP Basic auth: a file with one `user:password` line (keep it mode 0600). Or set
    /// CURLPOW_REMOTE_AUTH=user:password.
    #[arg(long, env = "CURLPOW_REMOTE_AUTH_FILE")]
    remote_auth_file: Option<PathBuf>,
    /// Seconds attaches in flight may finish after SIGTERM/SIGINT before they are cancelled
    /// (0 to 1e9).
    #[arg(long, default_value = "30", value_parser = values::seconds)]
    shutdown_grace: Duration,
    /// Run each search on every free device at once (lowest latency per request).
    #[arg(long)]
    latency: bool,
    /// Log level (RUST_LOG overrides).
    #[arg(long, default_value = "info", value_parser = ["error", "warn", "info", "debug", "trace"])]
    log: String,
    /// Send the PoW to workers (`curlpow worker`, dcurl's) through this RabbitMQ broker:
    /// amqp://user:password@host:5672/%2f. Or set CURLPOW_BROKER (keeps the password out of
    /// `ps`). See docs/scale-out.md.
    #[arg(long, env = "CURLPOW_BROKER")]
    broker: Option<String>,
    /// With --broker: also use this host's own devices (each search goes where it is expected
    /// to finish first; a broker that cannot be reached falls back to them).
    #[arg(long, requires = "broker")]
    local: bool,
    /// With --broker: the queue the requests go to.
    #[arg(long, default_value = curlpow::broker::DEFAULT_QUEUE)]
    broker_queue: String,
    /// With --broker: PoWs in flight on the queue at once (each one a device of the engine; 1
    /// to 1024).
    #[arg(long, default_value_t = 8, value_parser = count(1, 1024))]
    broker_slots: usize,
    #[command(flatten)]
    engine: EngineArgs,
}

/// File descriptors kept out of `--max-connections`: the engine, its drivers (a GPU driver
/// opens dozens), the listener, the auth file, the log.
const RESERVED_FDS: u64 = 128;

/// The soft open-file limit, if there is one.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct, which `r` is.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// `--max-connections` and `--max-connections-per-peer`, checked against the open-file limit.
fn connection_caps(a: &ServeArgs) -> Result<(usize, usize), UsageError> {
    let (top, why) = match open_file_limit() {
        Some(n) if n <= RESERVED_FDS => {
            return Err(UsageError(format!(
                "the open-file limit ({n}) is too low to serve: raise it (ulimit -n) above {RESERVED_FDS}"
            )))
        }
        Some(n) => (
            (n - RESERVED_FDS).min(MAX_CONNECTIONS as u64) as usize,
            format!("the open-file limit, {n}, less {RESERVED_FDS} kept for the engine and its drivers"),
        ),
        None => (MAX_CONNECTIONS, "the most this server holds".to_string()),
    };
    let max = match a.max_connections {
        Some(n) if n > top => {
            return Err(UsageError(format!(
                "--max-connections {n} is out of range: 1 to {top} ({why})"
            )))
        }
        Some(n) => n,
        None => top.min(1024),
    };
    let per_peer = match a.max_connections_per_peer {
        Some(n) if n > max => {
            return Err(UsageError(format!(
                "--max-connections-per-peer {n} is out of range: 1 to {max} (--max-connections)"
            )))
        }
        Some(n) => n,
        None => max.min(64),
    };
    Ok((max, per_peer))
}

/// The engine the server runs on: this host's devices, or with `--broker` devices that send
/// each search to the queue (and with `--local` both).
fn engine_for(a: &ServeArgs) -> Result<(Engine, Selection)> {
    let checked = a.engine.check()?;
    let Some(url) = &a.broker else {
        return build_engine(&a.engine, &checked);
    };
    if a.latency {
        return Err(UsageError(
            "--latency with --broker would send every search once per broker slot".into(),
        )
        .into());
    }
    if !a.local && (!a.engine.backend.is_empty() || !a.engine.device.is_empty()) {
        return Err(UsageError(
            "--backend and --device pick this host's devices: add --local to use them beside the broker"
                .into(),
        )
        .into());
    }
    let url: BrokerUrl = url
        .parse()
        .map_err(|e: curlpow::broker::BrokerError| UsageError(e.to_string()))?;
    let mut remote = RemoteConfig::new(url);
    remote.queue = a.broker_queue.clone();
    remote.slots = a.broker_slots;
    let devices = remote_devices(remote).map_err(|e| UsageError(e.to_string()))?;
    build_engine_with(&a.engine, &checked, devices, a.local)
}

fn credentials(a: &ServeArgs) -> Result<Option<Credentials>> {
    if let Some(path) = &a.remote_auth_file {
        warn_if_readable_by_others(path);
        return Ok(Some(Credentials::from_file(path).map_err(config_error)?));
    }
    match env::get(env::REMOTE_AUTH).map_err(UsageError)? {
        Some(v) => Ok(Some(Credentials::parse(&v).map_err(|e| {
            UsageError(format!("CURLPOW_REMOTE_AUTH: {}", config_error(e)))
        })?)),
        None => Ok(None),
    }
}

/// A bad setting as a usage error, its message once (without the "server configuration"
/// prefix the library's `Display` adds).
fn config_error(e: ServerError) -> UsageError {
    match e {
        ServerError::Config(m) => UsageError(m),
        e => UsageError(e.to_string()),
    }
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path) {
        if m.permissions().mode() & 0o077 != 0 {
            errln!(
                "curlpow: warning: {} is readable by other users (chmod 600 it)",
                path.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_: &std::path::Path) {}

/// SIGTERM and SIGINT blocked in this (the first) thread before any other thread starts or a
/// driver loads: every thread inherits the mask, so the handlers a driver installs (PoCL's,
/// LLVM's) never run for them. One thread takes them with sigwait from now on, so a signal
/// during start-up (device discovery, which a driver can make slow) ends the process at once
/// and one afterwards stops the service gracefully.
pub fn block_stop_signals() -> Result<()> {
    curlpow::signals::watch_stop_signals("curlpow").context("blocking SIGTERM and SIGINT")
}

/// The values `--log` takes.
const LOG_LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];

/// `--log`: one of [`LOG_LEVELS`] (a filter with targets goes in RUST_LOG).
pub fn check_log_level(level: &str) -> Result<(), UsageError> {
    if LOG_LEVELS.contains(&level.to_ascii_lowercase().as_str()) {
        Ok(())
    } else {
        Err(UsageError(format!(
            "--log {level:?} is not a log level (one of {}; RUST_LOG takes filters)",
            LOG_LEVELS.join(", ")
        )))
    }
}

/// The target of the lines that say the service started, got a signal and stopped: printed at
/// every `--log` level (scripts read the address from the first).
pub const LIFECYCLE: &str = "curlpow::lifecycle";

/// The log of `serve` and `worker`: one line per event on stderr, every line in the same format
/// (time, level, message, `key=value` fields).
pub fn init_logging(level: &str) -> Result<()> {
    check_log_level(level)?;
    use tracing_subscriber::EnvFilter;
    let mut filter = match env::other("RUST_LOG").and_then(|v| v.into_string().ok()) {
        Some(v) if !v.is_empty() => EnvFilter::try_new(v).context("RUST_LOG")?,
        _ => EnvFilter::try_new(level).map_err(|e| UsageError(format!("--log {level:?}: {e}")))?,
    };
    for d in log_lines::QUIET_LIBRARIES {
        filter = filter.add_directive(
            d.parse::<tracing_subscriber::filter::Directive>()
                .expect("a valid directive"),
        );
    }
    let filter = filter.add_directive(format!("{LIFECYCLE}=info").parse()?);
    use tracing_subscriber::prelude::*;
    // The AMQP client's frames and URI (the broker password) are cut at every level: a cap
    // after the filter, which no RUST_LOG directive can lift.
    let cap = tracing_subscriber::filter::filter_fn(log_lines::wire_level_capped);
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(log_lines::BoundedStderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(cap);
    tracing_subscriber::registry()
        .with(filter)
        .with(layer)
        .try_init()
        .map_err(|e| anyhow::anyhow!("logging: {e}"))
}

pub fn run(a: ServeArgs) -> Result<ExitCode> {
    block_stop_signals()?;
    init_logging(&a.log)?;
    let mut config = Config::default();
    config.listen = a.listen;
    config.max_mwm = a.max_mwm;
    config.max_body_length = a.max_body_length;
    config.max_requests_list = a.max_requests_list;
    config.request_timeout = (!a.request_timeout.is_zero()).then_some(a.request_timeout);
    config.concurrency = a.concurrency;
    config.per_client = a.per_client;
    config.queue = a.queue;
    if let Some(n) = a.per_client_queue.filter(|&n| n > a.queue) {
        return Err(UsageError(format!(
            "--per-client-queue {n} is out of range: 0 to {} (--queue)",
            a.queue
        ))
        .into());
    }
    config.per_client_queue = a.per_client_queue;
    (config.max_connections, config.max_connections_per_peer) = connection_caps(&a)?;
    config.header_read_timeout = a.header_read_timeout;
    config.body_read_timeout = a.body_read_timeout;
    config.body_min_rate = a.body_min_rate;
    config.idle_timeout = a.idle_timeout;
    config.shutdown_grace = a.shutdown_grace;
    config.auth = credentials(&a)?;
    let (engine, selection) = engine_for(&a)?;
    // GPU devices on their default variant tune now, in the background: attaches are served
    // meanwhile by the CPU pool (and by the other devices), and each device switches to its
    // tuned variant when its tuning ends.
    let tuning = engine.start_tuning();
    if tuning > 0 {
        tracing::info!(
            target: LIFECYCLE,
            "tuning {tuning} GPU device(s) in the background (--no-tune: never)"
        );
    }
    let concurrency = config.concurrency_for(engine.devices().len());
    if let Some(n) = a.per_client.filter(|&n| n > concurrency) {
        return Err(UsageError(format!(
            "--per-client {n} is out of range: 1 to {concurrency} (the concurrency)"
        ))
        .into());
    }
    config.pow = PowOptions::default()
        .selection(selection)
        .latency(a.latency);
    let grace = config.shutdown_grace;
    let auth = config.auth.is_some();
    let mut server = Server::start(engine, config).map_err(|e| match e {
        // A bad setting is a usage error (exit 2); a socket that cannot be bound is a failure.
        e @ ServerError::Config(_) => anyhow::Error::new(config_error(e)),
        e => anyhow::Error::new(e),
    })?;
    tracing::info!(
        target: LIFECYCLE,
        "listening on http://{}{}",
        server.local_addr(),
        if auth { " (HTTP Basic auth on)" } else { "" }
    );
    let sig = server.wait_for_signal();
    crate::sd_notify::extend_stop_timeout(grace);
    tracing::info!(
        target: LIFECYCLE,
        grace_s = grace.as_secs_f64(),
        "{sig}: shutting down (attaches in flight may finish within the grace period)"
    );
    server.shutdown()?;
    tracing::info!(target: LIFECYCLE, "stopped");
    Ok(ExitCode::SUCCESS)
}
