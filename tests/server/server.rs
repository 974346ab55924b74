//! `curlpow serve`, the real binary on an ephemeral loopback port, driven by a real HTTP client
//! (ureq): IRI's chaining and field rules against the library's reference hash, every bad
//! request, auth, interrupt, a full queue, a request past its time limit, graceful shutdown.

use crate::attach_check;
use crate::common;
use crate::server_support;

use std::time::{Duration, Instant};

use curlpow::{attach::Hash, Transaction};
use serde_json::{json, Value};
use server_support::{basic, raw_post, wait_until, Srv};

fn attach_body(trunk: &Hash, branch: &Hash, mwm: usize, txs: &[Transaction]) -> String {
    json!({
        "command": "attachToTangle",
        "trunkTransaction": trunk.to_trytes(),
        "branchTransaction": branch.to_trytes(),
        "minWeightMagnitude": mwm,
        "trytes": txs.iter().map(|t| t.to_trytes()).collect::<Vec<_>>(),
    })
    .to_string()
}

fn answered(v: &Value) -> Vec<Transaction> {
    v["trytes"]
        .as_array()
        .unwrap_or_else(|| panic!("no trytes in {v}"))
        .iter()
        .map(|t| t.as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn attach_chains_and_sets_fields_as_iri() {
    let srv = Srv::start(crate::BIN, &[]);
    let (trunk, branch, request) = attach_check::iota_js_bundle();
    let before = attach_check::now_ms();
    let (status, v, _) = srv.post(&attach_body(&trunk, &branch, 9, &request));
    let after = attach_check::now_ms();
    assert_eq!(status, 200, "{v}");
    assert!(v["duration"].is_u64(), "{v}");
    let out = answered(&v);
    attach_check::check(&request, &trunk, &branch, 9, before..=after, &out).unwrap();
    // A single random transaction, and an empty list (IRI answers an empty list).
    let tx = common::random_tx(5);
    let (status, v, _) = srv.post(&attach_body(&trunk, &trunk, 5, std::slice::from_ref(&tx)));
    assert_eq!(status, 200);
    attach_check::check(
        &[tx],
        &trunk,
        &trunk,
        5,
        before..=attach_check::now_ms(),
        &answered(&v),
    )
    .unwrap();
    let (status, v, _) = srv.post(&attach_body(&trunk, &branch, 9, &[]));
    assert_eq!((status, v["trytes"].clone()), (200, json!([])));
}

#[test]
fn node_info_health_and_metrics() {
    let srv = Srv::start(crate::BIN, &[]);
    let (status, v, _) = srv.post(r#"{"command":"getNodeInfo"}"#);
    assert_eq!(status, 200);
    assert_eq!(v["appName"], "curlpow");
    assert!(v["features"]
        .as_array()
        .unwrap()
        .contains(&json!("RemotePOW")));
    assert!(v["duration"].is_u64());
    assert_eq!(v["devices"][0]["id"], "cpu");
    assert_eq!(v["devices"][0]["state"], "healthy");
    let (status, body) = srv.get("/health");
    assert_eq!(status, 200, "{body}");
    let (status, text) = srv.get("/metrics");
    assert_eq!(status, 200);
    for name in [
        "curlpow_requests_total{command=\"getNodeInfo\",status=\"200\"} 1",
        "curlpow_attach_duration_seconds_bucket",
        "curlpow_attach_transactions_total",
        "curlpow_attach_nonces_total",
        "curlpow_queue_depth 0",
        "curlpow_device_busy_seconds_total{device=\"cpu\"}",
        "curlpow_device_faults_total{device=\"cpu\"} 0",
        "curlpow_device_healthy{device=\"cpu\"} 1",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
}

#[test]
fn every_bad_request_is_answered_with_what_is_wrong() {
    let srv = Srv::start(crate::BIN, &["--max-requests-list", "2"]);
    let tx = "9".repeat(2673);
    let a = "A".repeat(81);
    let attach = |over: &[(&str, Value)], remove: &str| {
        let mut v = json!({
            "command": "attachToTangle",
            "trunkTransaction": a,
            "branchTransaction": a,
            "minWeightMagnitude": 9,
            "trytes": [tx],
        });
        for (k, x) in over {
            v[*k] = x.clone();
        }
        v.as_object_mut().unwrap().remove(remove);
        v.to_string()
    };
    let mut bad_tx = tx.clone();
    bad_tx.replace_range(99..100, "a");
    let cases: Vec<(String, &str)> = vec![
        ("{\"command\": ".into(), "Invalid JSON syntax"),
        ("[1, 2]".into(), "Invalid request payload"),
        ("{}".into(), "COMMAND parameter has not been specified"),
        (
            r#"{"command":"getTips"}"#.into(),
            "Command [getTips] is unknown",
        ),
        (
            r#"{"command":"attachToTangle"}"#.into(),
            "Invalid parameters",
        ),
        (attach(&[], "trytes"), "Invalid parameters"),
        (attach(&[], "minWeightMagnitude"), "Invalid parameters"),
        (
            attach(&[("trunkTransaction", json!("A9"))], ""),
            "Invalid trunkTransaction input",
        ),
        (
            attach(&[("branchTransaction", json!("a".repeat(81)))], ""),
            "Invalid branchTransaction input",
        ),
        (
            attach(&[("minWeightMagnitude", json!("nine"))], ""),
            "Invalid minWeightMagnitude input",
        ),
        (
            attach(&[("minWeightMagnitude", json!(15))], ""),
            "above this server's limit of 14",
        ),
        (
            attach(&[("trytes", json!([tx, bad_tx]))], ""),
            "Invalid trytes input: trytes[1]: column 100",
        ),
        (
            attach(&[("trytes", json!([tx, &tx[1..]]))], ""),
            "trytes[1]: length 2672 trytes, expected 2673",
        ),
        (
            attach(&[("trytes", json!([tx, tx, tx]))], ""),
            "at most 2 per request",
        ),
        (" ".repeat(1_000_001), "Request too long"),
        // Every byte a tryte, as IRI: no line end (a file's line parser takes one; JSON not).
        (
            attach(&[("trytes", json!([format!("{tx}\n")]))], ""),
            "trytes[0]: column 2674: U+000A (line feed) is not a tryte",
        ),
        (
            attach(&[("trytes", json!([tx, format!("{tx}\r\n")]))], ""),
            "trytes[1]: column 2674: U+000D",
        ),
        (
            attach(&[("trytes", json!([format!("{}\u{0}", &tx[1..])]))], ""),
            "trytes[0]: column 2673: U+0000",
        ),
    ];
    for (body, want) in &cases {
        let (status, v, _) = srv.post(body);
        assert_eq!(status, 400, "{want}: {v}");
        let msg = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
        assert!(msg.contains(want), "wanted {want:?}, got {msg:?}");
        assert!(v["duration"].is_u64(), "{v}");
    }
    // No X-IOTA-API-Version header.
    let (status, v, _) = srv.post_with(r#"{"command":"getNodeInfo"}"#, &[]);
    assert_eq!(
        (status, v["error"].as_str()),
        (400, Some("Invalid API Version"))
    );
    // A browser's preflight, on any path.
    let resp = Srv::agent()
        .options(format!("{}/any/path", srv.base))
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let allow = resp.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    assert!(allow.contains("X-IOTA-API-Version") && allow.contains("Content-Type"));
    assert_eq!(resp.headers()["access-control-allow-origin"], "*");
}

#[test]
fn basic_auth_from_a_file_or_the_environment() {
    let dir = std::env::temp_dir().join(format!("curlpow-srv-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("auth");
    std::fs::write(&file, "alice:s3cret:x\n").unwrap();
    let path = file.to_str().unwrap();
    let b64 = |s: &str| {
        use base64::Engine as _;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(s)
        )
    };
    for srv in [
        Srv::start(crate::BIN, &["--remote-auth-file", path]),
        Srv::start_with_env(
            crate::BIN,
            &[],
            &[("CURLPOW_REMOTE_AUTH", "alice:s3cret:x")],
        ),
    ] {
        let info = r#"{"command":"getNodeInfo"}"#;
        for auth in [None, Some(b64("alice:wrong")), Some(b64("bob:s3cret:x"))] {
            let mut h = vec![("X-IOTA-API-Version", "1")];
            if let Some(a) = &auth {
                h.push(("Authorization", a));
            }
            let (status, v, _) = srv.post_with(info, &h);
            assert_eq!(status, 401, "{auth:?}: {v}");
        }
        let good = b64("alice:s3cret:x");
        let (status, v, _) = srv.post_with(
            info,
            &[("X-IOTA-API-Version", "1"), ("Authorization", &good)],
        );
        assert_eq!(status, 200, "{v}");
        // The credentials never reach the log.
        assert!(!srv.log.lock().unwrap().iter().any(|l| l.contains("s3cret")));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Start an attach that never finishes on its own (MWM 40) in a thread.
fn endless_attach(srv: &Srv, seed: u64) -> std::thread::JoinHandle<(u16, Value, Duration)> {
    let base = srv.base.clone();
    let body = attach_body(&Hash::NULL, &Hash::NULL, 40, &[common::random_tx(seed)]);
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut resp = Srv::agent()
            .post(format!("{base}/"))
            .header("X-IOTA-API-Version", "1")
            .send(&body)
            .unwrap();
        let status = resp.status().as_u16();
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        (status, v, t0.elapsed())
    })
}

#[test]
fn interrupt_stops_the_attaches_and_they_answer_empty_trytes() {
    let srv = Srv::start(crate::BIN, &["--max-mwm", "40"]);
    let a = endless_attach(&srv, 1);
    srv.wait_running(1);
    let (status, v, _) = srv.post(r#"{"command":"interruptAttachingToTangle"}"#);
    assert_eq!(status, 200, "{v}");
    assert!(v["duration"].is_u64());
    let (status, v, took) = a.join().unwrap();
    assert_eq!((status, v["trytes"].clone()), (200, json!([])), "{v}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(srv.running(), 0);
}

#[test]
fn a_full_queue_answers_503_with_retry_after_at_once() {
    let srv = Srv::start(
        crate::BIN,
        &[
            "--max-mwm",
            "40",
            "--concurrency",
            "1",
            "--queue",
            "1",
            "--per-client-queue",
            "1",
        ],
    );
    let running = endless_attach(&srv, 2);
    srv.wait_running(1);
    let waiting = endless_attach(&srv, 3);
    let t0 = Instant::now();
    loop {
        let (_, v, _) = srv.post(r#"{"command":"getNodeInfo"}"#);
        if v["attachesWaiting"] == 1 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    }
    let t0 = Instant::now();
    let (status, v, retry) = srv.post(&attach_body(
        &Hash::NULL,
        &Hash::NULL,
        1,
        &[common::random_tx(4)],
    ));
    assert_eq!(status, 503, "{v}");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "503 at once, not after a wait"
    );
    assert!(
        v["error"].as_str().unwrap().contains("queue is full"),
        "{v}"
    );
    let secs: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&secs));
    // Other commands still answer while the queue is full.
    assert_eq!(srv.post(r#"{"command":"getNodeInfo"}"#).0, 200);
    srv.post(r#"{"command":"interruptAttachingToTangle"}"#);
    for h in [running, waiting] {
        let (status, v, _) = h.join().unwrap();
        assert_eq!((status, v["trytes"].clone()), (200, json!([])), "{v}");
    }
}

#[test]
fn a_request_past_its_time_limit_is_a_503() {
    let srv = Srv::start(crate::BIN, &["--max-mwm", "40", "--request-timeout", "0.5"]);
    let t0 = Instant::now();
    let (status, v, _) = srv.post(&attach_body(
        &Hash::NULL,
        &Hash::NULL,
        40,
        &[common::random_tx(6)],
    ));
    let took = t0.elapsed();
    assert_eq!(status, 503, "{v}");
    assert!(v["error"].as_str().unwrap().contains("timed out"), "{v}");
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(15),
        "{took:?}"
    );
    assert_eq!(srv.running(), 0);
}

#[test]
fn sigterm_lets_attaches_in_flight_finish_then_exits_0() {
    let mut srv = Srv::start(crate::BIN, &["--shutdown-grace", "60"]);
    let txs: Vec<Transaction> = (0..3).map(|k| common::random_tx(40 + k)).collect();
    let body = attach_body(&Hash::NULL, &Hash::NULL, 14, &txs);
    let base = srv.base.clone();
    let h = std::thread::spawn(move || {
        let mut resp = Srv::agent()
            .post(format!("{base}/"))
            .header("X-IOTA-API-Version", "1")
            .send(&body)
            .unwrap();
        let status = resp.status().as_u16();
        (status, resp.body_mut().read_to_string().unwrap())
    });
    // (On a very fast host the attach may finish before the signal: the rules still hold.)
    srv.wait_running_or(1, || h.is_finished());
    let before = attach_check::now_ms();
    srv.sigterm();
    let (status, text) = h.join().unwrap();
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    attach_check::check(
        &txs,
        &Hash::NULL,
        &Hash::NULL,
        14,
        0..=before + 120_000,
        &answered(&v),
    )
    .unwrap();
    let st = srv.wait_exit(Duration::from_secs(60));
    assert!(st.success(), "{st:?}");
}

#[test]
fn sigterm_stops_accepting_and_cancels_what_outlives_the_grace_period() {
    let mut srv = Srv::start(crate::BIN, &["--max-mwm", "40", "--shutdown-grace", "2"]);
    let a = endless_attach(&srv, 7);
    srv.wait_running(1);
    srv.sigterm();
    std::thread::sleep(Duration::from_millis(500));
    // No new connections once the shutdown began.
    let r = Srv::agent()
        .post(format!("{}/", srv.base))
        .header("X-IOTA-API-Version", "1")
        .send(r#"{"command":"getNodeInfo"}"#);
    assert!(r.is_err(), "a new connection was served during shutdown");
    let (status, v, took) = a.join().unwrap();
    assert_eq!(status, 503, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("shutting down"),
        "{v}"
    );
    assert!(
        took >= Duration::from_secs(2),
        "cancelled before the grace period: {took:?}"
    );
    let st = srv.wait_exit(Duration::from_secs(30));
    assert!(st.success(), "{st:?}");
}

/// Run `curlpow serve ARGS` to its exit (killed after 20 s); (exit code, stderr).
fn serve_exit(args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_curlpow"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--backend",
            "cpu",
            "--threads",
            "1",
        ])
        .args(args)
        .env_remove("CURLPOW_REMOTE_AUTH")
        .env_remove("CURLPOW_REMOTE_AUTH_FILE")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_serve_flag_out_of_its_range_is_a_usage_error_naming_the_range() {
    for (args, range) in [
        (&["--max-mwm", "300"][..], "0..=243"),
        (
            &["--max-body-length", "18446744073709551615"],
            "1..=268435456",
        ),
        (&["--max-body-length", "0"], "1..=268435456"),
        (&["--max-requests-list", "0"], "1..=100000"),
        (&["--concurrency", "0"], "1..=1024"),
        (&["--concurrency", "18446744073709551615"], "1..=1024"),
        (&["--concurrency", "2", "--per-client", "3"], "1 to 2"),
        (&["--queue", "1000000"], "0..=65536"),
        (&["--queue", "2", "--per-client-queue", "3"], "0 to 2"),
        (&["--request-timeout", "nan"], "not a number of seconds"),
        (&["--request-timeout", "1e19"], "more than the 1e9"),
        (&["--shutdown-grace=-1"], "expected 0 or more"),
        (&["--header-read-timeout", "0"], "0.1 to 86400"),
        (&["--body-read-timeout", "1e6"], "0.1 to 86400"),
        (&["--body-min-rate", "2000000000"], "0..=1000000000"),
        (&["--body-min-rate=-1"], "-1"),
        (&["--idle-timeout", "0.01"], "0.1 to 86400"),
        (&["--max-connections", "0"], "1..="),
        (&["--max-connections", "1000000000"], "1..=1048576"),
        (&["--max-connections", "1048576"], "the open-file limit"),
        (
            &[
                "--max-connections",
                "10",
                "--max-connections-per-peer",
                "11",
            ],
            "1 to 10",
        ),
        (&["--broker-slots", "0"], "1..=1024"),
        (
            &["--log", "bogus"],
            "possible values: error, warn, info, debug, trace",
        ),
    ] {
        let (code, err) = serve_exit(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: wanted {range:?} in {err}");
        assert!(!err.contains("listening"), "{args:?}: {err}");
    }
}

#[test]
fn a_bad_auth_file_is_named_once_without_a_repeated_prefix() {
    let dir = std::env::temp_dir().join(format!("curlpow-srv-badauth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("auth");
    std::fs::write(&file, "no-colon-here\n").unwrap();
    let (code, err) = serve_exit(&["--remote-auth-file", file.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    assert!(err.contains("expected one line `user:password`"), "{err}");
    assert!(err.matches("server configuration").count() <= 1, "{err}");
    assert_eq!(err.matches("remote auth").count(), 1, "{err}");
}

#[test]
fn the_largest_body_limit_refuses_a_larger_declared_body_and_a_long_chunked_one() {
    let srv = Srv::start(crate::BIN, &["--max-body-length", "268435456"]);
    let to = srv.addr();
    // Declared past the limit: answered at once, unread.
    let mut s = server_support::connect_from([127, 0, 0, 1].into(), to).unwrap();
    use std::io::Write;
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nContent-Length: 300000000\r\n\r\n{",
    )
    .unwrap();
    let (status, v) = server_support::read_answer(&mut s);
    assert_eq!(
        (status, v["error"].as_str()),
        (400, Some("Request too long"))
    );
    // A small limit bounds a chunked body the same way.
    let srv = Srv::start(crate::BIN, &["--max-body-length", "1000"]);
    let mut s = server_support::connect_from([127, 0, 0, 1].into(), srv.addr()).unwrap();
    let mut req = b"POST / HTTP/1.1\r\nHost: x\r\nX-IOTA-API-Version: 1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..5 {
        req.extend_from_slice(format!("3e8\r\n{}\r\n", " ".repeat(1000)).as_bytes());
    }
    req.extend_from_slice(b"0\r\n\r\n");
    s.write_all(&req).unwrap();
    let (status, v) = server_support::read_answer(&mut s);
    assert_eq!(
        (status, v["error"].as_str()),
        (400, Some("Request too long"))
    );
}

/// An attach that never finishes on its own (MWM 40) from the loopback address `from`, in a
/// thread, on a plain socket.
fn endless_attach_from(
    srv: &Srv,
    from: [u8; 4],
    seed: u64,
    auth: Option<String>,
) -> std::thread::JoinHandle<(u16, Value)> {
    let to = srv.addr();
    let body = attach_body(&Hash::NULL, &Hash::NULL, 40, &[common::random_tx(seed)]);
    std::thread::spawn(move || {
        let h: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
        raw_post(from.into(), to, &body, &h)
    })
}

fn running_with(srv: &Srv, auth: &str) -> u64 {
    let (_, v, _) = srv.post_with(
        r#"{"command":"getNodeInfo"}"#,
        &[("X-IOTA-API-Version", "1"), ("Authorization", auth)],
    );
    v["attachesRunning"].as_u64().unwrap()
}

#[test]
fn with_auth_on_each_address_is_its_own_client_for_admission() {
    let auth = basic("wallet:pw");
    let srv = Srv::start_with_env(
        crate::BIN,
        &[
            "--max-mwm",
            "40",
            "--concurrency",
            "2",
            "--per-client",
            "1",
            "--queue",
            "0",
        ],
        &[("CURLPOW_REMOTE_AUTH", "wallet:pw")],
    );
    // One set of credentials, two addresses: each runs one attach (per-client 1).
    let a = endless_attach_from(&srv, [127, 0, 0, 2], 11, Some(auth.clone()));
    wait_until(Duration::from_secs(30), "the first attach runs", || {
        running_with(&srv, &auth) == 1
    });
    let b = endless_attach_from(&srv, [127, 0, 0, 3], 12, Some(auth.clone()));
    wait_until(Duration::from_secs(30), "both run", || {
        b.is_finished() || running_with(&srv, &auth) == 2
    });
    if b.is_finished() {
        panic!(
            "the second address was turned away: {:?}",
            b.join().unwrap()
        );
    }
    // The same credentials from the same address are the same client: its share is taken.
    let (status, v) = raw_post(
        [127, 0, 0, 2].into(),
        srv.addr(),
        &attach_body(&Hash::NULL, &Hash::NULL, 40, &[common::random_tx(13)]),
        &[("Authorization", &auth)],
    );
    assert_eq!(status, 503, "{v}");
    for (from, h) in [([127, 0, 0, 2], a), ([127, 0, 0, 3], b)] {
        let (status, _) = raw_post(
            from.into(),
            srv.addr(),
            r#"{"command":"interruptAttachingToTangle"}"#,
            &[("Authorization", &auth)],
        );
        assert_eq!(status, 200);
        let (status, v) = h.join().unwrap();
        assert_eq!((status, v["trytes"].clone()), (200, json!([])), "{v}");
    }
}

#[test]
fn interrupt_stops_only_the_callers_own_attaches() {
    let srv = Srv::start(crate::BIN, &["--max-mwm", "40", "--concurrency", "3"]);
    let mine = endless_attach_from(&srv, [127, 0, 0, 2], 21, None);
    let other = endless_attach_from(&srv, [127, 0, 0, 3], 22, None);
    srv.wait_running(2);
    let (status, _) = raw_post(
        [127, 0, 0, 2].into(),
        srv.addr(),
        r#"{"command":"interruptAttachingToTangle"}"#,
        &[],
    );
    assert_eq!(status, 200);
    let (status, v) = mine.join().unwrap();
    assert_eq!((status, v["trytes"].clone()), (200, json!([])), "{v}");
    // The other client's attach runs on.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !other.is_finished(),
        "another client's attach was interrupted"
    );
    assert_eq!(srv.running(), 1);
    raw_post(
        [127, 0, 0, 3].into(),
        srv.addr(),
        r#"{"command":"interruptAttachingToTangle"}"#,
        &[],
    );
    let (status, v) = other.join().unwrap();
    assert_eq!((status, v["trytes"].clone()), (200, json!([])), "{v}");
}
