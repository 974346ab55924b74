//! `curlpow serve`: the IRI-compatible remote-PoW server (see `docs/server.md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use curlpow::broker::{remote_devices, BrokerUrl, RemoteConfig};
use curlpow::server::{Config, Credentials, Server, ServerError};
use curlpow::{Engine, PowOptions, Selection};

use crate::engine_args::{build_engine, build_engine_with, EngineArgs};
use crate::exit::UsageError;
use crate::output::errln;

#[derive(Args)]
pub struct ServeArgs {
    /// Address and port to listen on (0.0.0.0:14265 for every interface; port 0 picks one).
    #[arg(long, default_value = "127.0.0.1:14265")]
    listen: SocketAddr,
    /// Highest minWeightMagnitude accepted.
    #[arg(long, default_value_t = 14)]
    max_mwm: usize,
    /// Largest request body in bytes (IRI's default).
    #[arg(long, default_value_t = 1_000_000)]
    max_body_length: usize,
    /// Most transactions per attachToTangle (IRI's default).
    #[arg(long, default_value_t = 1000)]
    max_requests_list: usize,
    /// Seconds one request may take, queue wait included (0: no limit).
    #[arg(long, default_value_t = 300.0)]
    request_timeout: f64,
    /// Attaches running at once [default: devices + 1].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Attaches running at once for one client (auth user, else IP) [default: concurrency - 1].
    #[arg(long)]
    per_client: Option<usize>,
    /// Requests waiting for a slot; past it, 503 with Retry-After at once.
    #[arg(long, default_value_t = 64)]
    queue: usize,
    /// Requests waiting for one client [default: half the queue].
    #[arg(long)]
    per_client_queue: Option<usize>,
    /// HTTP Basic auth: a file with one `user:password` line (keep it mode 0600). Or set
    /// CURLPOW_REMOTE_AUTH=user:password.
    #[arg(long, env = "CURLPOW_REMOTE_AUTH_FILE")]
    remote_auth_file: Option<PathBuf>,
    /// Seconds attaches in flight may finish after SIGTERM/SIGINT before they are cancelled.
    #[arg(long, default_value_t = 30.0)]
    shutdown_grace: f64,
    /// Run each search on every free device at once (lowest latency per request).
    #[arg(long)]
    latency: bool,
    /// Log level: error, warn, info, debug, trace (RUST_LOG overrides).
    #[arg(long, default_value = "info")]
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
    /// With --broker: PoWs in flight on the queue at once (each one a device of the engine).
    #[arg(long, default_value_t = 8)]
    broker_slots: usize,
    #[command(flatten)]
    engine: EngineArgs,
}

fn seconds(flag: &str, v: f64) -> Result<Duration, UsageError> {
    if v.is_finite() && v >= 0.0 {
        Ok(Duration::from_secs_f64(v.min(1e9)))
    } else {
        Err(UsageError(format!("{flag} {v} is not a number of seconds")))
    }
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
        return Ok(Some(
            Credentials::from_file(path).map_err(|e| UsageError(e.to_string()))?,
        ));
    }
    match std::env::var("CURLPOW_REMOTE_AUTH") {
        Ok(v) if !v.is_empty() => {
            Ok(Some(Credentials::parse(&v).map_err(|e| {
                UsageError(format!("CURLPOW_REMOTE_AUTH: {e}"))
            })?))
        }
        _ => Ok(None),
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

/// The target of the lines that say the service started, got a signal and stopped: printed at
/// every `--log` level (scripts read the address from the first).
pub const LIFECYCLE: &str = "curlpow::lifecycle";

/// The log of `serve` and `worker`: one line per event on stderr, every line in the same format
/// (time, level, message, `key=value` fields).
pub fn init_logging(level: &str) -> Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.is_empty() => EnvFilter::try_new(v).context("RUST_LOG")?,
        _ => EnvFilter::try_new(level).map_err(|e| UsageError(format!("--log {level:?}: {e}")))?,
    };
    let filter = filter.add_directive(format!("{LIFECYCLE}=info").parse()?);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .map_err(|e| anyhow::anyhow!("logging: {e}"))
}

pub fn run(a: ServeArgs) -> Result<ExitCode> {
    init_logging(&a.log)?;
    let mut config = Config::default();
    config.listen = a.listen;
    config.max_mwm = a.max_mwm.min(243);
    config.max_body_length = a.max_body_length;
    config.max_requests_list = a.max_requests_list;
    let t = seconds("--request-timeout", a.request_timeout)?;
    config.request_timeout = (!t.is_zero()).then_some(t);
    for (flag, v) in [
        ("--concurrency", a.concurrency),
        ("--per-client", a.per_client),
    ] {
        if v == Some(0) {
            return Err(UsageError(format!("{flag} must be at least 1")).into());
        }
    }
    config.concurrency = a.concurrency;
    config.per_client = a.per_client;
    config.queue = a.queue;
    config.per_client_queue = a.per_client_queue;
    config.shutdown_grace = seconds("--shutdown-grace", a.shutdown_grace)?;
    config.auth = credentials(&a)?;
    let (engine, selection) = engine_for(&a)?;
    config.pow = PowOptions::default()
        .selection(selection)
        .latency(a.latency);
    let grace = config.shutdown_grace;
    let auth = config.auth.is_some();
    let mut server = Server::start(engine, config).map_err(|e| match e {
        // A bad setting is a usage error (exit 2); a socket that cannot be bound is a failure.
        ServerError::Config(m) => anyhow::Error::new(UsageError(m)),
        e => anyhow::Error::new(e),
    })?;
    tracing::info!(
        target: LIFECYCLE,
        "listening on http://{}{}",
        server.local_addr(),
        if auth { " (HTTP Basic auth on)" } else { "" }
    );
    let sig = server.wait_for_signal();
    tracing::info!(
        target: LIFECYCLE,
        grace_s = grace.as_secs_f64(),
        "{sig}: shutting down (attaches in flight may finish within the grace period)"
    );
    server.shutdown()?;
    tracing::info!(target: LIFECYCLE, "stopped");
    Ok(ExitCode::SUCCESS)
}
