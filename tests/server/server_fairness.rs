//! `curlpow serve` with clients that fill the wait queue: another client still gets a place
//! (the client holding the most places gives one up, answered 503), so two clients cannot turn
//! every other client away. Raw loopback sockets, one address per client.

use crate::common;
use crate::server_support;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::json;
use server_support::{connect_from, raw_post, read_answer, wait_until, Srv};

fn ip(b: u8) -> IpAddr {
    IpAddr::from([127, 0, 8, b])
}

fn attach(seed: u64, mwm: usize) -> String {
    json!({
        "command": "attachToTangle",
        "trunkTransaction": "9".repeat(81),
        "branchTransaction": "9".repeat(81),
        "minWeightMagnitude": mwm,
        "trytes": [common::random_tx(seed).to_trytes()],
    })
    .to_string()
}

/// Send an attach from `from` and leave its answer unread.
fn send(from: IpAddr, to: SocketAddr, body: &str) -> TcpStream {
    let mut s = connect_from(from, to).unwrap();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// Attach answers with status 503 so far (0 before the first).
fn busy(srv: &Srv) -> f64 {
    let (_, text) = srv.get("/metrics");
    text.lines()
        .find_map(|l| {
            l.strip_prefix(r#"curlpow_requests_total{command="attachToTangle",status="503"} "#)?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0.0)
}

fn interrupt(from: IpAddr, to: SocketAddr) {
    let (status, v) = raw_post(from, to, r#"{"command":"interruptAttachingToTangle"}"#, &[]);
    assert_eq!(status, 200, "{v}");
}

#[test]
fn two_clients_filling_the_queue_do_not_turn_a_third_away() {
    // One attach runs (MWM 20: until interrupted); the default queue of 64, 32 per client.
    let srv = Srv::start(crate::BIN, &["--concurrency", "1", "--max-mwm", "20"]);
    let to = srv.addr();
    let mut holder = send(ip(1), to, &attach(90, 20));
    srv.wait_running(1);
    let mut fillers: Vec<TcpStream> = Vec::new();
    for (k, from) in [ip(2), ip(3)].into_iter().enumerate() {
        for i in 0..32 {
            fillers.push(send(from, to, &attach(200 + (k * 32 + i) as u64, 1)));
        }
    }
    let waiting = || {
        let (_, v, _) = srv.post(r#"{"command":"getNodeInfo"}"#);
        v["attachesWaiting"].as_u64().unwrap()
    };
    wait_until(Duration::from_secs(60), "the queue full", || {
        waiting() == 64
    });
    assert_eq!(busy(&srv), 0.0);
    // A third client: it takes a place in the full queue, and one filler request gives its up.
    let mut third = send(ip(4), to, &attach(300, 1));
    wait_until(Duration::from_secs(30), "one 503", || busy(&srv) == 1.0);
    assert_eq!(waiting(), 64);
    // The third client's request was queued, not refused: interrupted, it answers 200 [].
    interrupt(ip(4), to);
    let (status, v) = read_answer(&mut third);
    assert_eq!(
        (status, v["trytes"].clone()),
        (200, json!([])),
        "the third client: {v}"
    );
    // The filler that gave its place was told to retry.
    for from in [ip(2), ip(3), ip(1)] {
        interrupt(from, to);
    }
    let mut answers = Vec::new();
    for s in fillers.iter_mut().chain(std::iter::once(&mut holder)) {
        answers.push(read_answer(s));
    }
    let refused: Vec<_> = answers.iter().filter(|(s, _)| *s == 503).collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    let message = refused[0].1["error"].as_str().unwrap();
    assert!(message.contains("gave its place"), "{message}");
    assert!(answers.iter().all(|(s, _)| *s == 200 || *s == 503));
}
