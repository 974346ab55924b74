//! dcurl's remote PoW: `dcurl_init` with `broker_host` set sends each `dcurl_entry` to workers
//! over RabbitMQ (`curlpow worker`, or dcurl's own), as dcurl does, and falls back to this
//! host's devices when no answer comes within [`REMOTE_WAIT`] (dcurl's client's 10 s).
//!
//! The remote side is an engine of its own whose only devices are
//! [`curlpow::broker::remote_devices`]: each is one request in flight on the queue, and the
//! engine checks every answer on the host (a wrong nonce is a fault, retried on another slot),
//! like any device's. It lives from the `dcurl_init` that names a broker to `dcurl_destroy`;
//! the process's local engine (`state.rs`) is untouched by it.
//!
//! `broker_host` is dcurl's: a host name or address (`localhost`, `10.0.0.5`, `host:5672`),
//! reached as RabbitMQ's `guest` on port 5672 and vhost `/`; an `amqp://user:password@host:
//! port/vhost` URL gives other credentials. The queue is dcurl's `incoming_queue`, or
//! `CURLPOW_BROKER_QUEUE`.

use std::time::Duration;

use parking_lot::{const_mutex, Mutex};

use curlpow::{Engine, Error, PowOptions, PowResult, Transaction};

use crate::boundary::{Failure, Status};

/// How long `dcurl_entry` waits for a worker's answer before it searches on this host.
pub(crate) const REMOTE_WAIT: Duration = Duration::from_secs(10);

/// The remote engine, while a broker is configured.
static REMOTE: Mutex<Option<Engine>> = const_mutex(None);

/// The broker URL for dcurl's `broker_host`.
#[cfg(feature = "broker")]
fn broker_url(host: &str) -> Result<curlpow::broker::BrokerUrl, Failure> {
    let host = host.trim();
    let url = if host.contains("://") {
        host.to_string()
    } else {
        // A bare IPv6 address needs brackets; a host without a port gets dcurl's 5672.
        let with_port = if host.parse::<std::net::Ipv6Addr>().is_ok() {
            format!("[{host}]:5672")
        } else if host.starts_with('[') && host.ends_with(']') {
            format!("{host}:5672")
        } else if host.contains(':') {
            host.to_string()
        } else {
            format!("{host}:5672")
        };
        format!("amqp://guest:guest@{with_port}/%2f")
    };
    url.parse().map_err(|e: curlpow::broker::BrokerError| {
        Failure::new(Status::InvalidArgument, format!("broker_host: {e}"))
    })
}

/// Start sending PoW to the broker at `host` (dcurl's `broker_host`), unless a broker is
/// configured already (the first one stands until `dcurl_destroy`).
#[cfg(feature = "broker")]
pub(crate) fn configure(host: &str) -> Result<(), Failure> {
    use curlpow::broker::{remote_devices, RemoteConfig};
    let mut remote = REMOTE.lock();
    if remote.is_some() {
        return Ok(());
    }
    let mut config = RemoteConfig::new(broker_url(host)?);
    if let Ok(Some(q)) = curlpow::env::get(curlpow::env::BROKER_QUEUE) {
        config.queue = q;
    }
    config.connect_wait = REMOTE_WAIT;
    let devices = remote_devices(config)
        .map_err(|e| Failure::new(Status::InvalidArgument, format!("broker_host: {e}")))?;
    // Remote devices only: no local device is listed, and the CPU pool is one idle thread.
    let mut b = Engine::builder().backends(&[]).threads(1);
    for d in devices {
        b = b.add_device(d);
    }
    *remote = Some(b.build().map_err(Failure::init)?);
    Ok(())
}

/// Without the `broker` feature a broker cannot be reached: say so rather than ignore it.
#[cfg(not(feature = "broker"))]
pub(crate) fn configure(host: &str) -> Result<(), Failure> {
    Err(Failure::new(
        Status::InvalidArgument,
        format!(
            "broker_host {host:?}: this library was built without the broker feature (remote PoW)"
        ),
    ))
}

/// Stop using the broker (its connection closes once the calls holding it return).
pub(crate) fn destroy() {
    let engine = REMOTE.lock().take();
    drop(engine);
}

/// PoW for `dcurl_entry`: on the workers when a broker is configured, for at most
/// [`REMOTE_WAIT`], then (or else) on `local`. A cancel (`dcurl_destroy`) ends both.
pub(crate) fn pow(local: &Engine, tx: &Transaction, opts: PowOptions) -> Result<PowResult, Error> {
    let remote = REMOTE.lock().clone();
    if let Some(remote) = remote {
        match remote.pow_with(tx, &opts.clone().timeout(REMOTE_WAIT)) {
            Ok(done) => return Ok(done),
            Err(e @ Error::Cancelled { .. }) => return Err(e),
            // No worker answered in time, the broker is down, or every answer was wrong:
            // dcurl searches locally then, and so does this.
            Err(_) => {}
        }
    }
    local.pow_with(tx, &opts)
}
