//! The broker password never reaches the log, at any level: `worker` and `serve --broker` at
//! `--log trace` and at `RUST_LOG=trace` (which lifts every filter) connect to a fake AMQP
//! broker on loopback that answers the protocol header with `Connection.Start` (PLAIN), so the
//! client sends its `StartOk` with the password; the log is then searched for the password as
//! text, percent-encoded, and as its bytes in decimal and hex lists.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli_support::bin;

const PASSWORD: &str = "Pw7-s3cret-Zq";

/// A `Connection.Start` method frame: AMQP 0-9-1, no server properties, PLAIN, en_US.
fn connection_start() -> Vec<u8> {
    let mut payload = vec![0, 10, 0, 10, 0, 9];
    payload.extend_from_slice(&0u32.to_be_bytes());
    for s in ["PLAIN", "en_US"] {
        payload.extend_from_slice(&(s.len() as u32).to_be_bytes());
        payload.extend_from_slice(s.as_bytes());
    }
    let mut frame = vec![1, 0, 0];
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(&payload);
    frame.push(0xCE);
    frame
}

/// A fake broker: each connection gets `Connection.Start` after its protocol header, then
/// what the client sends is read (and counted when it holds the password: the `StartOk`
/// reached it) until the client closes or a second passes.
fn fake_broker() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let start_oks = Arc::new(AtomicUsize::new(0));
    let seen = start_oks.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                let mut header = [0u8; 8];
                if s.read_exact(&mut header).is_err() || &header[..4] != b"AMQP" {
                    return;
                }
                let _ = s.write_all(&connection_start());
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || got.len() > 1 << 16 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                if got
                    .windows(PASSWORD.len())
                    .any(|w| w == PASSWORD.as_bytes())
                {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    (port, start_oks)
}

/// The forms the password could take in a log line.
fn forms() -> Vec<String> {
    let b = PASSWORD.as_bytes();
    let join = |sep: &str, f: &dyn Fn(&u8) -> String| b.iter().map(f).collect::<Vec<_>>().join(sep);
    vec![
        PASSWORD.to_string(),
        PASSWORD.replace('-', "%2D"),
        join(", ", &|x| x.to_string()),
        join(",", &|x| x.to_string()),
        join(" ", &|x| x.to_string()),
        join("", &|x| format!("{x:02x}")),
        join(", ", &|x| format!("0x{x:02x}")),
        join(", ", &|x| format!("{x:#04x}")),
    ]
}

/// Run `args` (with the broker URL in CURLPOW_BROKER) until the fake broker has seen the
/// password (or 30 s), stop it, and check its log.
fn no_password_in_log(what: &str, args: &[&str], rust_log: Option<&str>) {
    let (port, start_oks) = fake_broker();
    let url = format!("amqp://user:{PASSWORD}@127.0.0.1:{port}/%2f");
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env("CURLPOW_BROKER", &url)
        .env("CURLPOW_THREADS", "1")
        .env_remove("CURLPOW_INJECT_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match rust_log {
        Some(v) => cmd.env("RUST_LOG", v),
        None => cmd.env_remove("RUST_LOG"),
    };
    let mut child = cmd.spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut log = Vec::new();
        let _ = stderr.read_to_end(&mut log);
        log
    });
    let t0 = Instant::now();
    while start_oks.load(Ordering::Relaxed) < 1 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The client's log of what it sent and of the broker closing on it.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child with a valid signal number.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let t1 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t1.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.wait();
    let log = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(
        start_oks.load(Ordering::Relaxed) >= 1,
        "{what}: the client never sent its StartOk; log:\n{log}"
    );
    assert!(
        log.lines().count() > 5,
        "{what}: the trace log is there: {log}"
    );
    for f in forms() {
        if let Some(line) = log.lines().find(|l| l.contains(&f)) {
            panic!("{what}: the password appears as {f:?} in:\n{line}");
        }
    }
}

const WORKER: &[&str] = &["worker", "--backend", "cpu", "--log", "trace"];
const SERVE: &[&str] = &[
    "serve",
    "--listen",
    "127.0.0.1:0",
    "--broker-slots",
    "1",
    "--log",
    "trace",
];

#[test]
fn worker_at_trace_logs_no_password() {
    no_password_in_log("worker --log trace", WORKER, None);
}

#[test]
fn worker_with_rust_log_trace_logs_no_password() {
    no_password_in_log(
        "worker RUST_LOG=trace",
        WORKER,
        Some("trace,lapin=trace,amq_protocol_tcp=trace"),
    );
}

#[test]
fn serve_broker_at_trace_logs_no_password() {
    no_password_in_log("serve --broker --log trace", SERVE, None);
}

#[test]
fn serve_broker_with_rust_log_trace_logs_no_password() {
    no_password_in_log(
        "serve --broker RUST_LOG=trace",
        SERVE,
        Some("trace,lapin::io_loop=trace"),
    );
}
