//! `curlpow serve`, the real binary on an ephemeral loopback port, driven by a real HTTP client
//! (ureq): IRI's chaining and field rules against the library's reference hash, every bad
//! request, auth, interrupt, a full queue, a request past its time limit, graceful shutdown.

use crate::attach_check;
use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use curlpow::{Hash, Transaction};
use serde_json::{json, Value};

/// A running `curlpow serve`; killed on drop if it is still running.
struct Srv {
    child: Child,
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Srv {
    fn start(args: &[&str]) -> Srv {
        Self::start_with_env(args, &[])
    }

    fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Srv {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_curlpow"));
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--backend", "cpu"])
            .args(["--threads", "2"])
            .args(args)
            .env_remove("CURLPOW_REMOTE_AUTH")
            .env_remove("CURLPOW_REMOTE_AUTH_FILE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start curlpow serve");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                log2.lock().unwrap().push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no listening line; stderr: {:?}", log.lock().unwrap()));
        Srv {
            child,
            base: format!("http://{addr}"),
            log,
        }
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into()
    }

    /// POST a body with IRI's header; (status, JSON, Retry-After).
    fn post(&self, body: &str) -> (u16, Value, Option<String>) {
        self.post_with(body, &[("X-IOTA-API-Version", "1")])
    }

    fn post_with(&self, body: &str, headers: &[(&str, &str)]) -> (u16, Value, Option<String>) {
        let mut req = Self::agent()
            .post(format!("{}/", self.base))
            .header("Content-Type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).expect("an answer");
        let status = resp.status().as_u16();
        let retry = resp
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        assert_eq!(
            resp.headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap()),
            Some("*"),
            "CORS header on every answer"
        );
        let text = resp.body_mut().read_to_string().unwrap();
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, v, retry)
    }

    fn get(&self, path: &str) -> (u16, String) {
        let mut resp = Self::agent()
            .get(format!("{}{path}", self.base))
            .call()
            .unwrap();
        (
            resp.status().as_u16(),
            resp.body_mut().read_to_string().unwrap(),
        )
    }

    fn running(&self) -> u64 {
        let (_, v, _) = self.post(r#"{"command":"getNodeInfo"}"#);
        v["attachesRunning"].as_u64().unwrap()
    }

    fn wait_running(&self, n: u64) {
        self.wait_running_or(n, || false);
    }

    /// Wait until `n` attaches run, or `done()` (the attach finished first).
    fn wait_running_or(&self, n: u64, done: impl Fn() -> bool) {
        let t0 = Instant::now();
        while self.running() < n && !done() {
            assert!(t0.elapsed() < Duration::from_secs(30), "never {n} running");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn sigterm(&self) {
        // SAFETY: kill(2) on our own child's pid with a valid signal number; no memory involved.
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(r, 0);
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                t0.elapsed() < within,
                "still running after {within:?}; stderr: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Srv {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

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
    let srv = Srv::start(&[]);
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
    let srv = Srv::start(&[]);
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
    let srv = Srv::start(&["--max-requests-list", "2"]);
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
        Srv::start(&["--remote-auth-file", path]),
        Srv::start_with_env(&[], &[("CURLPOW_REMOTE_AUTH", "alice:s3cret:x")]),
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
    let srv = Srv::start(&["--max-mwm", "40"]);
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
    let srv = Srv::start(&[
        "--max-mwm",
        "40",
        "--concurrency",
        "1",
        "--queue",
        "1",
        "--per-client-queue",
        "1",
    ]);
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
    let srv = Srv::start(&["--max-mwm", "40", "--request-timeout", "0.5"]);
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
    let mut srv = Srv::start(&["--shutdown-grace", "60"]);
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
    let mut srv = Srv::start(&["--max-mwm", "40", "--shutdown-grace", "2"]);
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
