//! dcurl's remote PoW through libdcurl.so: a C program (`c/dcurl_broker.c`) calls `dcurl_init`
//! with a `broker_host`, then `dcurl_entry`; a curlpow worker (`curlpow::broker::Worker`, the
//! code of `curlpow worker`) answers on the real RabbitMQ on loopback; every PoW is checked
//! here again with the scalar reference. Without a broker the worker test prints `SKIPPED:` and
//! passes, unless `CURLPOW_REQUIRE_BROKER=1` (CI); `CURLPOW_TEST_BROKER` picks the broker. A
//! broker that cannot be reached falls back to this host's devices (no broker needed). A module
//! of the `dcurl_c` test binary.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use curlpow::broker::{BrokerWorker, WorkerConfig};
use curlpow::{Backend, Engine};

use crate::support;

static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();
/// The tests share the queue: one at a time.
static QUEUE_LOCK: Mutex<()> = Mutex::new(());
/// The queue of these tests (reused by every run: nothing accumulates on the broker).
const QUEUE: &str = "incoming_queue-curlpow-ffi-test";

/// The broker: `CURLPOW_TEST_BROKER`, else RabbitMQ's guest account on loopback.
fn broker_url() -> String {
    std::env::var("CURLPOW_TEST_BROKER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// Whether the broker's port answers; otherwise `SKIPPED:` (or a panic under
/// `CURLPOW_REQUIRE_BROKER=1`).
fn broker_available(url: &str) -> bool {
    let authority = url.split("://").nth(1).unwrap_or(url);
    let authority = authority.split('/').next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host_port = if host_port.contains(':') {
        host_port.to_string()
    } else {
        format!("{host_port}:5672")
    };
    let reached = host_port
        .to_socket_addrs()
        .map_err(|e| e.to_string())
        .and_then(|mut a| a.next().ok_or_else(|| "no address".to_string()))
        .and_then(|a| {
            TcpStream::connect_timeout(&a, Duration::from_secs(2)).map_err(|e| e.to_string())
        });
    match reached {
        Ok(_) => true,
        Err(e) => {
            curlpow_testkit::skip::skip_unless_required(
                "CURLPOW_REQUIRE_BROKER",
                &format!(
                    "no RabbitMQ broker answers at {host_port} ({e}); start one \
                     (rabbitmq-server -detached) or set CURLPOW_TEST_BROKER"
                ),
            );
            false
        }
    }
}

/// Run the C program: `dcurl_init` with `broker_host`, then `count` PoWs at `mwm`.
fn run(broker_host: &str, count: usize, mwm: usize) -> Option<std::process::Output> {
    let exe = support::c_program(&PROGRAM, "dcurl_broker.c", "dcurl")?;
    let queue = PathBuf::from(QUEUE);
    Some(support::run_with_env(
        &exe,
        &[broker_host, &count.to_string(), &mwm.to_string()],
        true,
        Duration::from_secs(120),
        &[("CURLPOW_BROKER_QUEUE", queue.as_path())],
    ))
}

#[test]
fn dcurl_entry_is_answered_by_a_worker_through_the_broker() {
    let _one = QUEUE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let url = broker_url();
    if !broker_available(&url) {
        return;
    }
    let engine = Engine::builder()
        .backends(&[Backend::Cpu])
        .threads(1)
        .build()
        .unwrap();
    let mut config = WorkerConfig::new(url.parse().unwrap());
    config.queue = QUEUE.into();
    config.name = "ffi-test-worker".into();
    config.shutdown_grace = Duration::from_secs(5);
    let worker = BrokerWorker::start(engine, config).unwrap();
    let start = Instant::now();
    while worker.stats().connections == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the worker did not start consuming"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // dcurl's own form (a host, guest on port 5672) for the default broker, else the URL.
    let host = if std::env::var_os("CURLPOW_TEST_BROKER").is_some() {
        url.clone()
    } else {
        "127.0.0.1".into()
    };
    let Some(o) = run(&host, 3, 9) else {
        return;
    };
    let out = support::assert_success("dcurl_broker", &o);
    assert!(out.contains("ok broker"), "{out}");
    assert_eq!(support::check_results(&out), 3);
    let stats = worker.shutdown();
    assert_eq!(stats.done, 3, "every PoW was the worker's: {stats:?}");
}

#[test]
fn an_unreachable_broker_falls_back_to_this_host() {
    let _one = QUEUE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Port 1 on loopback: refused at once; the search waits out dcurl's 10 s, then runs here.
    let started = Instant::now();
    let Some(o) = run("127.0.0.1:1", 1, 9) else {
        return;
    };
    let out = support::assert_success("dcurl_broker (unreachable broker)", &o);
    assert_eq!(support::check_results(&out), 1);
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_broker_host_that_is_no_host_fails_init() {
    let _one = QUEUE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(o) = run("http://example/", 1, 9) else {
        return;
    };
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dcurl_init with broker_host"), "{err}");
    assert!(err.contains("broker_host: "), "{err}");
}
