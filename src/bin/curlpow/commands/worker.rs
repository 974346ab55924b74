//! `curlpow worker`: PoW for a RabbitMQ queue in dcurl's remote protocol, the scale-out half of
//! `curlpow serve --broker` (see docs/scale-out.md).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use curlpow::broker::{BrokerError, BrokerUrl, BrokerWorker, WorkerConfig, DEFAULT_QUEUE};
use curlpow::PowOptions;

use super::serve::{block_stop_signals, check_log_level, init_logging, LIFECYCLE};
use crate::engine_args::{build_engine, EngineArgs};
use crate::exit::UsageError;

/// The longest `--shutdown-grace`, in seconds (about 31 years).
const MAX_GRACE_S: f64 = 1e9;

#[derive(Args)]
pub struct WorkerArgs {
    /// The broker: amqp://user:password@host:5672/%2f (%2f is the vhost /; amqps:// with the
    /// broker-tls feature). Or set CURLPOW_BROKER (keeps the password out of `ps`).
    #[arg(long, env = "CURLPOW_BROKER")]
    broker: String,
    /// The request queue (declared durable if it does not exist).
    #[arg(long, default_value = DEFAULT_QUEUE)]
    queue: String,
    /// Requests held unacknowledged at once, 1 to 65535 [default: the devices in use, one per
    /// slot].
    #[arg(long)]
    prefetch: Option<u16>,
    /// Highest MWM accepted, 0 to 243; a request over it gets an error reply and is dropped.
    #[arg(long, default_value_t = 14)]
    max_mwm: usize,
    /// Seconds the jobs in flight may finish after SIGTERM/SIGINT, 0 to 1e9; the rest go back
    /// to the queue.
    #[arg(long, default_value_t = 30.0)]
    shutdown_grace: f64,
    /// This worker's name, in the replies (header x-curlpow-worker) and logs [default:
    /// HOST:PID].
    #[arg(long)]
    name: Option<String>,
    /// Log level: error, warn, info, debug, trace (RUST_LOG overrides).
    #[arg(long, default_value = "info")]
    log: String,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(a: WorkerArgs) -> Result<ExitCode> {
    block_stop_signals()?;
    // Every option first, before logging starts or a device or the broker is touched.
    let checked = a.engine.check()?;
    if a.max_mwm > 243 {
        return Err(
            UsageError(format!("--max-mwm {} is out of range (0..=243)", a.max_mwm)).into(),
        );
    }
    let url: BrokerUrl = a
        .broker
        .parse()
        .map_err(|e: BrokerError| UsageError(e.to_string()))?;
    if !(a.shutdown_grace.is_finite() && (0.0..=MAX_GRACE_S).contains(&a.shutdown_grace)) {
        return Err(UsageError(format!(
            "--shutdown-grace {} is out of range (0 to {MAX_GRACE_S:e} seconds)",
            a.shutdown_grace
        ))
        .into());
    }
    if a.prefetch == Some(0) {
        return Err(UsageError(
            "--prefetch 0 is out of range (1 to 65535; 0 would mean no limit)".into(),
        )
        .into());
    }
    check_log_level(&a.log)?;
    init_logging(&a.log)?;
    let (engine, selection) = build_engine(&a.engine, &checked)?;
    let slots = engine.select(&selection).len().max(1);
    let mut config = WorkerConfig::new(url);
    config.queue = a.queue;
    config.prefetch = Some(
        a.prefetch
            .unwrap_or(u16::try_from(slots).unwrap_or(u16::MAX)),
    );
    config.max_mwm = a.max_mwm;
    config.shutdown_grace = std::time::Duration::from_secs_f64(a.shutdown_grace);
    if let Some(name) = a.name {
        config.name = name;
    }
    config.pow = PowOptions::default().selection(selection);
    let (name, queue, broker, grace) = (
        config.name.clone(),
        config.queue.clone(),
        config.url.to_string(),
        config.shutdown_grace,
    );
    let mut worker = BrokerWorker::start(engine, config).map_err(|e| UsageError(e.to_string()))?;
    tracing::info!(
        target: LIFECYCLE,
        %queue,
        %broker,
        prefetch = worker.prefetch(),
        "worker {name} started"
    );
    let sig = worker.wait_for_signal();
    crate::sd_notify::extend_stop_timeout(grace);
    tracing::info!(
        target: LIFECYCLE,
        grace_s = grace.as_secs_f64(),
        "{sig}: draining (jobs in flight may finish within the grace period)"
    );
    let stats = worker.shutdown();
    tracing::info!(
        target: LIFECYCLE,
        answered = stats.done,
        rejected = stats.rejected,
        requeued = stats.requeued,
        connections = stats.connections,
        "worker stopped"
    );
    Ok(ExitCode::SUCCESS)
}
