//! `curlpow serve` against bodies that lie about themselves and bodies built to take memory:
//! a body shorter than its `Content-Length`, malformed or unfinished chunking (each a 400, never
//! an attach of what arrived), and a burst of large bodies full of junk from two clients (the
//! queued requests hold only their transactions, and the process shrinks back once idle). Raw
//! loopback sockets, each read bounded.

use crate::common;
use crate::server_support;

use std::io::Write;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{json, Value};
use server_support::{connect_from, read_answer, wait_until, Srv};

fn ip(a: u8, b: u8) -> IpAddr {
    IpAddr::from([127, 0, a, b])
}

/// A good attach of one random transaction at `mwm`, with `junk` extra bytes of a JSON array
/// of zeros that the API does not use.
fn attach(seed: u64, mwm: usize, junk: usize) -> String {
    let mut v = json!({
        "command": "attachToTangle",
        "trunkTransaction": "9".repeat(81),
        "branchTransaction": "9".repeat(81),
        "minWeightMagnitude": mwm,
        "trytes": [common::random_tx(seed).to_trytes()],
    });
    if junk > 0 {
        v["junk"] = json!(vec![0; junk / 2]);
    }
    v.to_string()
}

/// A POST's head: IRI's header and `extra` header lines.
fn head(extra: &str) -> String {
    format!("POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Type: application/json\r\n{extra}\r\n")
}

/// Send `parts`, then half-close when `close`; the answer, read within 30 s.
fn exchange(to: SocketAddr, parts: &[&[u8]], close: bool) -> (u16, Value) {
    let mut s = connect_from(ip(0, 1), to).unwrap();
    for p in parts {
        s.write_all(p).unwrap();
    }
    if close {
        s.shutdown(Shutdown::Write).unwrap();
    }
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    read_answer(&mut s)
}

fn chunk(data: &str) -> String {
    format!("{:x}\r\n{data}\r\n", data.len())
}

#[test]
fn a_body_shorter_than_declared_or_badly_chunked_is_a_400_not_an_attach() {
    let srv = Srv::start(crate::BIN, &[]);
    let to = srv.addr();
    let body = attach(80, 1, 0);
    let bad = |(status, v): (u16, Value), what: &str| {
        assert_eq!(status, 400, "{what}: {v}");
        let e = v["error"].as_str().unwrap_or_default();
        assert!(e.starts_with("Invalid request body"), "{what}: {v}");
    };
    // Content-Length 75 bytes more than sent, then a half-close.
    let h = head(&format!("Content-Length: {}\r\n", body.len() + 75));
    bad(
        exchange(to, &[h.as_bytes(), body.as_bytes()], true),
        "short body",
    );
    let chunked = head("Transfer-Encoding: chunked\r\n");
    // A valid chunk, then a chunk-size line that is not hex.
    bad(
        exchange(
            to,
            &[chunked.as_bytes(), chunk(&body).as_bytes(), b"zz\r\n"],
            false,
        ),
        "bad chunk size",
    );
    // A valid chunk and no final chunk: the client closes its side.
    bad(
        exchange(to, &[chunked.as_bytes(), chunk(&body).as_bytes()], true),
        "no final chunk",
    );
    // The same body whole, in two chunks and the final one: attached.
    let (a, b) = body.split_at(100);
    let (status, v) = exchange(
        to,
        &[
            chunked.as_bytes(),
            chunk(a).as_bytes(),
            chunk(b).as_bytes(),
            b"0\r\n\r\n",
        ],
        false,
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["trytes"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        srv.metric("curlpow_attach_transactions_total"),
        1.0,
        "only the whole body was attached"
    );
}

/// The server's resident memory in bytes (VmRSS of /proc/PID/status).
fn rss(srv: &Srv) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {status}"));
    kb << 10
}

fn send(from: IpAddr, to: SocketAddr, body: &str) -> TcpStream {
    let mut s = connect_from(from, to).unwrap();
    let h = head(&format!(
        "Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    ));
    s.write_all(h.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    s
}

fn waiting(srv: &Srv) -> u64 {
    let (_, v, _) = srv.post(r#"{"command":"getNodeInfo"}"#);
    v["attachesWaiting"].as_u64().unwrap()
}

#[test]
fn queued_requests_with_large_junk_hold_little_memory_and_it_is_given_back() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    const MB: u64 = 1 << 20;
    // One attach at a time; it runs for as long as the test wants (MWM 20, interrupted at the
    // end), so the others queue.
    let srv = Srv::start(
        crate::BIN,
        &["--concurrency", "1", "--max-mwm", "20", "--queue", "64"],
    );
    let to = srv.addr();
    let (status, _) = server_support::raw_post(ip(0, 1), to, &attach(81, 1, 0), &[]);
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(1500));
    let base = rss(&srv);
    let mut holder = send(ip(7, 1), to, &attach(82, 20, 0));
    srv.wait_running(1);
    // 2 clients x 16 requests of about 990 KB, nearly all a junk array: as a JSON tree each
    // would take about 16 MB while it waits.
    let mut queued: Vec<TcpStream> = Vec::new();
    for (k, from) in [ip(7, 2), ip(7, 3)].into_iter().enumerate() {
        for i in 0..16 {
            let body = attach(100 + (k * 16 + i) as u64, 1, 990_000);
            queued.push(send(from, to, &body));
        }
    }
    wait_until(Duration::from_secs(60), "32 requests waiting", || {
        waiting(&srv) == 32
    });
    // Held while queued: each request's one transaction, not its body or a tree of it.
    let mut held = 0;
    let t0 = std::time::Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        held = rss(&srv).saturating_sub(base);
        if held < 48 * MB {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        held < 48 * MB,
        "32 queued requests hold {} MB over the base of {} MB",
        held / MB,
        base / MB
    );
    // Interrupt everything: every request answers, the server goes idle.
    for from in [ip(7, 2), ip(7, 3), ip(7, 1)] {
        let (status, _) =
            server_support::raw_post(from, to, r#"{"command":"interruptAttachingToTangle"}"#, &[]);
        assert_eq!(status, 200);
    }
    for s in queued.iter_mut().chain(std::iter::once(&mut holder)) {
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let (status, v) = read_answer(s);
        assert_eq!(status, 200, "{v}");
    }
    wait_until(Duration::from_secs(30), "idle", || srv.running() == 0);
    let mut after = 0;
    let t0 = std::time::Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        after = rss(&srv).saturating_sub(base);
        if after < 32 * MB {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        after < 32 * MB,
        "idle after the burst: {} MB over the base of {} MB",
        after / MB,
        base / MB
    );
    eprintln!(
        "base {} MB; queued +{} MB; idle after +{} MB",
        base / MB,
        held / MB,
        after / MB
    );
}
