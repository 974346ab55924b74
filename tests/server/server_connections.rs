//! `curlpow serve` against slow and idle clients: the real binary on loopback, plain sockets
//! from many loopback addresses (each a different peer), a real HTTP client (ureq) for the
//! requests that must still be answered. Headers, bodies and idle keep-alive connections each
//! have a time limit; connections are capped in all and per peer, and a new connection
//! displaces an idle one, so trickling clients never hold every slot.

use crate::server_support;

use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant};

use server_support::{closed_by_server, connect_from, read_answer, wait_until, Srv};

const INFO: &str = r#"{"command":"getNodeInfo"}"#;

fn ip(a: u8, b: u8) -> IpAddr {
    IpAddr::from([127, 0, a, b])
}

/// A fresh ureq connection's getNodeInfo: its status and how long it took.
fn timed_info(srv: &Srv) -> (u16, Duration) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let t0 = Instant::now();
    let r = agent
        .post(format!("{}/", srv.base))
        .header("X-IOTA-API-Version", "1")
        .send(INFO);
    let took = t0.elapsed();
    match r {
        Ok(mut resp) => {
            let _ = resp.body_mut().read_to_string();
            (resp.status().as_u16(), took)
        }
        Err(e) => panic!("no answer after {took:?}: {e}"),
    }
}

/// How long until the server closes `s`, writing `trickle` one byte at a time every
/// `every` (nothing when empty); `None` if it is still open after `within`.
fn closed_after(
    s: &mut TcpStream,
    trickle: &[u8],
    every: Duration,
    within: Duration,
) -> Option<Duration> {
    let t0 = Instant::now();
    let mut next = 0;
    while t0.elapsed() < within {
        if next < trickle.len() {
            if s.write_all(&trickle[next..next + 1]).is_err() {
                return Some(t0.elapsed());
            }
            next += 1;
        }
        s.set_read_timeout(Some(every)).unwrap();
        let mut b = [0u8; 4096];
        match s.read(&mut b) {
            Ok(0) => return Some(t0.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Some(t0.elapsed()),
        }
    }
    None
}

const SLOW_REQUEST: &[u8] = b"POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

#[test]
fn a_thousand_slow_connections_under_a_1024_file_limit_leave_a_real_client_answered_within_a_second(
) {
    // Defaults: at most 1024 - 128 = 896 connections, 64 per peer.
    let srv = Srv::launch(crate::BIN, &[], &[], Some(1024));
    let to = srv.addr();
    // 1,100 connections that send a byte now and then: 100 from the real client's own address,
    // 10 from each of 100 others. More than the server's file limit.
    let mut slow: Vec<TcpStream> = Vec::new();
    let mut failed = 0;
    let from: Vec<IpAddr> = (0..100)
        .map(|_| ip(0, 1))
        .chain((1..=100).flat_map(|k| std::iter::repeat_n(ip(1, k), 10)))
        .collect();
    assert_eq!(from.len(), 1100);
    for a in &from {
        match connect_from(*a, to) {
            Ok(mut s) => {
                let _ = s.write_all(&SLOW_REQUEST[..1]);
                slow.push(s);
            }
            Err(_) => failed += 1,
        }
    }
    let mut sent = 1;
    let mut trickle = |slow: &mut Vec<TcpStream>| {
        for s in slow.iter_mut() {
            let _ = s.write_all(&SLOW_REQUEST[sent..sent + 1]);
        }
        sent += 1;
    };
    trickle(&mut slow);
    // Real requests, each on a new connection, while the slow ones keep trickling.
    for round in 0..3 {
        let (status, took) = timed_info(&srv);
        assert_eq!(status, 200, "round {round}");
        assert!(
            took < Duration::from_secs(1),
            "round {round}: a real client waited {took:?} behind slow connections"
        );
        trickle(&mut slow);
        std::thread::sleep(Duration::from_millis(200));
    }
    let open = srv.metric("curlpow_connections_open");
    assert!(open <= 897.0, "{open} connections open, cap 896");
    let still_open = slow.iter().filter(|s| !closed_by_server(s)).count();
    assert!(
        still_open <= 896,
        "{still_open} slow connections still open"
    );
    let displaced = srv.metric("curlpow_connections_closed_total{reason=\"evicted\"}");
    assert!(displaced >= 1100.0 - 896.0 - failed as f64, "{displaced}");
}

#[test]
fn caps_in_all_and_per_peer_hold_and_a_newcomer_displaces_an_idle_connection() {
    let srv = Srv::start(
        crate::BIN,
        &["--max-connections", "8", "--max-connections-per-peer", "4"],
    );
    let to = srv.addr();
    let one: Vec<TcpStream> = (0..20)
        .map(|_| connect_from(ip(0, 3), to).unwrap())
        .collect();
    let alive = |v: &[TcpStream]| v.iter().filter(|s| !closed_by_server(s)).count();
    let evicted = || srv.metric("curlpow_connections_closed_total{reason=\"evicted\"}");
    wait_until(Duration::from_secs(10), "16 displaced", || {
        evicted() >= 16.0
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(alive(&one), 4, "the per-peer cap");
    let others: Vec<TcpStream> = (4..=5)
        .flat_map(|b| (0..3).map(move |_| ip(0, b)))
        .map(|a| connect_from(a, to).unwrap())
        .collect();
    wait_until(Duration::from_secs(10), "2 more displaced", || {
        evicted() >= 18.0
    });
    std::thread::sleep(Duration::from_millis(200));
    // 4 + 6 = 10 over a cap of 8: the peer with the most connections gave way.
    let (a, b) = (alive(&one), alive(&others));
    assert!(a + b <= 8, "{a} + {b} open, cap 8");
    assert!(
        a <= 2 && b >= 5,
        "{a} of the busiest peer, {b} of the others"
    );
    // A real client still gets in and is answered.
    let (status, _) = timed_info(&srv);
    assert_eq!(status, 200);
    assert!(srv.metric("curlpow_connections_open") <= 8.0);
}

#[test]
fn headers_sent_a_byte_at_a_time_are_cut_at_the_header_read_timeout() {
    let srv = Srv::start(crate::BIN, &["--header-read-timeout", "1"]);
    let mut s = connect_from(ip(0, 1), srv.addr()).unwrap();
    let t = closed_after(
        &mut s,
        SLOW_REQUEST,
        Duration::from_millis(100),
        Duration::from_secs(8),
    )
    .expect("a trickling client still connected after 8 s");
    assert!(
        t >= Duration::from_millis(900) && t < Duration::from_secs(5),
        "{t:?}"
    );
    // Nothing at all: the same limit.
    let mut s = connect_from(ip(0, 1), srv.addr()).unwrap();
    let t = closed_after(
        &mut s,
        b"",
        Duration::from_millis(100),
        Duration::from_secs(8),
    )
    .expect("a silent client still connected after 8 s");
    assert!(t < Duration::from_secs(5), "{t:?}");
    let n = srv.metric("curlpow_connections_closed_total{reason=\"header_timeout\"}");
    assert_eq!(n, 2.0);
}

#[test]
fn an_idle_kept_alive_connection_is_closed_at_the_idle_timeout() {
    let srv = Srv::start(
        crate::BIN,
        &["--idle-timeout", "1", "--header-read-timeout", "20"],
    );
    let mut s = connect_from(ip(0, 1), srv.addr()).unwrap();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Length: {}\r\n\r\n{INFO}",
        INFO.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    // The one answer, kept alive: no EOF after it.
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (status, _) = read_answer(&mut s);
    assert_eq!(status, 200);
    let t = closed_after(
        &mut s,
        b"",
        Duration::from_millis(100),
        Duration::from_secs(8),
    )
    .expect("an idle connection still open after 8 s");
    assert!(
        t >= Duration::from_millis(800) && t < Duration::from_secs(5),
        "{t:?}"
    );
    assert_eq!(
        srv.metric("curlpow_connections_closed_total{reason=\"idle_timeout\"}"),
        1.0
    );
}

#[test]
fn a_body_sent_a_byte_at_a_time_is_answered_408_at_the_body_read_timeout() {
    let srv = Srv::start(crate::BIN, &["--body-read-timeout", "1"]);
    let mut s = connect_from(ip(0, 1), srv.addr()).unwrap();
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Length: 1000\r\n\r\n{\"com",
    )
    .unwrap();
    let t0 = Instant::now();
    let writer = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(100));
                if w.write_all(b" ").is_err() {
                    break;
                }
            }
        })
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (status, v) = read_answer(&mut s);
    let took = t0.elapsed();
    assert_eq!(status, 408, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("--body-read-timeout"),
        "{v}"
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    let _ = writer.join();
}

/// A connection from `from` that sent a request's headers, declaring a 100 kB body, and one
/// byte of it.
fn body_trickler(from: IpAddr, to: std::net::SocketAddr) -> TcpStream {
    let mut s = connect_from(from, to).unwrap();
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Length: 100000\r\n\r\n{",
    )
    .unwrap();
    s
}

/// One more byte of body on each connection still open.
fn trickle_bodies(conns: &mut [TcpStream]) {
    for s in conns.iter_mut() {
        let _ = s.write_all(b" ");
    }
}

#[test]
fn body_tricklers_from_two_addresses_under_the_per_address_cap_do_not_lock_out_a_newcomer() {
    // The rate limit off: the connection caps alone must let the newcomer in.
    let srv = Srv::start(
        crate::BIN,
        &[
            "--max-connections",
            "20",
            "--max-connections-per-peer",
            "10",
            "--body-min-rate",
            "0",
        ],
    );
    let to = srv.addr();
    let mut tricklers: Vec<TcpStream> = (0..30)
        .map(|i| body_trickler(ip(2, 1 + (i % 2) as u8), to))
        .collect();
    // Past the first second, so each connection's rate counts.
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(250));
        trickle_bodies(&mut tricklers);
    }
    for round in 0..3 {
        let (status, _) = timed_info(&srv);
        assert_eq!(status, 200, "round {round}");
        trickle_bodies(&mut tricklers);
    }
    assert!(srv.metric("curlpow_connections_open") <= 20.0);
    assert!(srv.metric("curlpow_connections_closed_total{reason=\"evicted\"}") >= 3.0);
}

#[test]
fn body_tricklers_from_many_addresses_each_under_the_cap_do_not_lock_out_a_newcomer() {
    let srv = Srv::start(
        crate::BIN,
        &["--max-connections", "20", "--body-min-rate", "0"],
    );
    let to = srv.addr();
    let mut tricklers: Vec<TcpStream> = (1..=20).map(|k| body_trickler(ip(3, k), to)).collect();
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(250));
        trickle_bodies(&mut tricklers);
    }
    for round in 0..3 {
        let (status, _) = timed_info(&srv);
        assert_eq!(status, 200, "round {round}");
        trickle_bodies(&mut tricklers);
    }
    let displaced = tricklers.iter().filter(|s| closed_by_server(s)).count();
    assert!(displaced >= 1, "no trickler gave way");
}

#[test]
fn a_body_slower_than_the_minimum_rate_is_answered_408_long_before_the_body_timeout() {
    // 100 B/s after a 1 s start; a body read timeout of a minute.
    let srv = Srv::start(
        crate::BIN,
        &["--header-read-timeout", "1", "--body-min-rate", "100"],
    );
    let mut s = body_trickler(ip(0, 1), srv.addr());
    let writer = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(100));
                if w.write_all(b" ").is_err() {
                    break;
                }
            }
        })
    };
    // Within 10 s, not the minute of --body-read-timeout.
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (status, v) = read_answer(&mut s);
    assert_eq!(status, 408, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("--body-min-rate"),
        "{v}"
    );
    let _ = writer.join();
}
