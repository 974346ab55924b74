//! `curlpow serve`: the IRI-compatible remote-PoW server (see `docs/server.md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use curlpow::server::{Config, Credentials, Server};
use curlpow::{Engine, PowOptions, Selection};

use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;

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

/// The engine the server runs on: the one place a future option (remote workers) adds devices.
fn engine_for(a: &ServeArgs) -> Result<(Engine, Selection)> {
    build_engine(&a.engine)
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
            eprintln!(
                "curlpow: warning: {} is readable by other users (chmod 600 it)",
                path.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_: &std::path::Path) {}

fn init_logging(level: &str) -> Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.is_empty() => EnvFilter::try_new(v).context("RUST_LOG")?,
        _ => EnvFilter::try_new(level).map_err(|e| UsageError(format!("--log {level:?}: {e}")))?,
    };
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
    let mut server = Server::start(engine, config).map_err(|e| UsageError(e.to_string()))?;
    eprintln!(
        "curlpow: listening on http://{}{}",
        server.local_addr(),
        if auth { " (HTTP Basic auth on)" } else { "" }
    );
    let sig = server.wait_for_signal();
    eprintln!("curlpow: {sig}: shutting down (attaches in flight have {grace:?} to finish)");
    server.shutdown()?;
    eprintln!("curlpow: stopped");
    Ok(ExitCode::SUCCESS)
}
