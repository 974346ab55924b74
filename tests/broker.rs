//! Scale-out over a real RabbitMQ on loopback: `curlpow worker` (the real binary) answering a
//! client that publishes exactly as dcurl's does, load shared by two workers, a worker killed
//! mid-job, a broker restart, malformed requests, and `curlpow serve --broker` end to end; plus
//! the remote device in the library (a lying worker is a fault, an unreachable broker falls
//! back to local devices).
//!
//! Every test uses its own queues (`incoming_queue-test-<pid>-<n>-…`) and deletes them. With no
//! broker the tests print `SKIPPED:` and pass, unless `CURLPOW_REQUIRE_BROKER=1` (CI). The broker
//! restart test stops and starts the local broker's application with `rabbitmqctl`, so it runs
//! alone (the others hold a shared lock it takes exclusively).

use curlpow_testkit::{attach_check, broker_client, common};

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use broker_client::{broker_available, broker_url, dcurl_properties, header, header_str, Amqp};
use curlpow::broker::protocol::{
    format_request, ERROR_TYPE, HEADER_ERROR, HEADER_NONCES, HEADER_REDELIVERED, HEADER_WORKER,
};
use curlpow::broker::{remote_devices, BrokerUrl, RemoteConfig};
use curlpow::{Backend, Engine, PowOptions, Transaction};
use lapin::types::{AMQPValue, ShortString};
use lapin::BasicProperties;
use serde_json::{json, Value};

/// Shared by every broker test; the restart test takes it exclusively.
static BROKER: RwLock<()> = RwLock::new(());

fn shared_broker() -> RwLockReadGuard<'static, ()> {
    BROKER.read().unwrap_or_else(|e| e.into_inner())
}

fn exclusive_broker() -> RwLockWriteGuard<'static, ()> {
    BROKER.write().unwrap_or_else(|e| e.into_inner())
}

/// The start of most tests: the broker shared with the other tests, a connection to it and a
/// fresh durable queue named after `prefix`; `None` (the test skips, with the message
/// `broker_available` printed) without a broker.
fn setup(prefix: &str) -> Option<(RwLockReadGuard<'static, ()>, Amqp, String)> {
    let guard = shared_broker();
    if !broker_available() {
        return None;
    }
    let mut amqp = Amqp::connect(&broker_url()).unwrap();
    let queue = broker_client::unique_queue(prefix);
    amqp.durable_queue(&queue);
    Some((guard, amqp, queue))
}

/// A running child process whose stderr is collected; killed on drop.
struct Proc {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    /// Start `curlpow ARGS` and wait (up to 60 s) for a stderr line containing `ready`.
    fn start(args: &[&str], ready: &str) -> (Proc, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_curlpow"))
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("CURLPOW_BROKER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start curlpow");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let (log2, ready) = (log.clone(), ready.to_string());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(&ready) {
                    let _ = tx.send(line.clone());
                }
                log2.lock().unwrap().push(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!("no {args:?} ready line; stderr: {:?}", log.lock().unwrap())
            });
        (Proc { child, log }, line)
    }

    /// `curlpow worker` on `queue`, one CPU thread, named `name`; waits until it consumes.
    fn worker(queue: &str, name: &str, extra: &[&str]) -> Proc {
        let url = broker_url();
        let mut args = vec![
            "worker",
            "--broker",
            &url,
            "--queue",
            queue,
            "--name",
            name,
            "--backend",
            "cpu",
            "--threads",
            "1",
        ];
        args.extend_from_slice(extra);
        Proc::start(&args, "consuming").0
    }

    fn lines_with(&self, s: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(s))
            .count()
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill {sig}");
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                t0.elapsed() < within,
                "still running after {within:?}; log: {:?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until `f()` holds, up to `within`.
fn wait_until(within: Duration, what: &str, f: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < within,
            "timed out after {within:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Correlation-id properties with `reply_to` (what a newer client sends).
fn props_with_id(reply_to: &ShortString, id: &str) -> BasicProperties {
    dcurl_properties(reply_to).with_correlation_id(id.into())
}

/// The reply to a request for `input` at `mwm`: exactly 2673 trytes, only the nonce changed,
/// the weight reached.
fn check_reply(input: &Transaction, mwm: usize, d: &lapin::message::Delivery) -> Transaction {
    assert_eq!(d.data.len(), 2673, "reply body of {} bytes", d.data.len());
    let out: Transaction = std::str::from_utf8(&d.data).unwrap().parse().unwrap();
    common::assert_valid_pow(input, &out, mwm);
    out
}

#[test]
fn a_dcurl_client_gets_valid_pow_from_the_worker() {
    let Some((_g, amqp, queue)) = setup("dcurl") else {
        return;
    };
    let _w = Proc::worker(&queue, "w-dcurl", &[]);
    // Exactly as dcurl's client: a fresh exclusive callback queue per call, the body
    // trytes + MWM, text/plain, persistent, reply_to, no correlation id.
    for (seed, mwm) in [(1, 9), (2, 9), (3, 12)] {
        let tx = common::random_tx(seed);
        let callback = amqp.dcurl_callback_queue();
        let mut replies = amqp.consume(callback.as_str());
        let body = format_request(&tx, mwm);
        assert_eq!(body.len(), 2673 + mwm.to_string().len());
        amqp.publish(&queue, &body, dcurl_properties(&callback));
        let d = amqp
            .next(&mut replies, Duration::from_secs(60))
            .expect("a reply within 60 s");
        check_reply(&tx, mwm, &d);
        assert_eq!(d.properties.correlation_id(), &None);
        assert_eq!(
            d.properties.content_type().as_ref().map(|c| c.as_str()),
            Some("text/plain")
        );
    }
    assert_eq!(amqp.ready(&queue), 0);
}

#[test]
fn the_reply_carries_the_correlation_id_the_worker_and_its_count() {
    let Some((_g, amqp, queue)) = setup("corr") else {
        return;
    };
    let _w = Proc::worker(&queue, "w-corr", &[]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let tx = common::random_tx(11);
    amqp.publish(
        &queue,
        &format_request(&tx, 8),
        props_with_id(&callback, "job-42"),
    );
    let d = amqp.next(&mut replies, Duration::from_secs(60)).unwrap();
    check_reply(&tx, 8, &d);
    assert_eq!(
        d.properties.correlation_id().as_ref().map(|c| c.as_str()),
        Some("job-42")
    );
    assert_eq!(header_str(&d, HEADER_WORKER).as_deref(), Some("w-corr"));
    assert!(matches!(header(&d, HEADER_NONCES), Some(AMQPValue::LongLongInt(n)) if n > 0));
    assert_eq!(
        header(&d, HEADER_REDELIVERED),
        Some(AMQPValue::Boolean(false))
    );
}

#[test]
fn malformed_requests_get_an_error_reply_and_are_not_retried() {
    let Some((_g, amqp, queue)) = setup("bad") else {
        return;
    };
    let w = Proc::worker(&queue, "w-bad", &["--max-mwm", "14"]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let good = format_request(&common::random_tx(21), 9);
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        b
    };
    let trytes = &good[..2673];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("short", good[..100].to_vec(), "request of 100 bytes"),
        ("empty", Vec::new(), "request of 0 bytes"),
        ("bad tryte", with(&|b| b[5] = b'a'), "column 6"),
        (
            "over max",
            [trytes, b"15"].concat(),
            "over this worker's limit of 14",
        ),
        ("out of range", [trytes, b"244"].concat(), "out of range"),
        (
            "not decimal",
            [trytes, b"1x"].concat(),
            "not a decimal number",
        ),
        (
            "too long",
            [trytes, b"0009"].concat(),
            "request of 2677 bytes",
        ),
    ];
    for (name, body, _) in &cases {
        amqp.publish(&queue, body, props_with_id(&callback, name));
    }
    // And one with nowhere to reply: rejected, no reply.
    amqp.publish(&queue, &good[..10], BasicProperties::default());
    let mut seen = HashMap::new();
    while seen.len() < cases.len() {
        let d = amqp
            .next(&mut replies, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("error replies so far: {:?}", seen.keys()));
        let id = d.properties.correlation_id().as_ref().unwrap().to_string();
        assert_eq!(
            d.properties.kind().as_ref().map(|k| k.as_str()),
            Some(ERROR_TYPE)
        );
        // Padded so dcurl's client, which copies 2673 bytes of any reply, stays in bounds.
        assert_eq!(d.data.len(), 2673);
        seen.insert(id, header_str(&d, HEADER_ERROR).expect("the reason header"));
    }
    for (name, _, words) in &cases {
        let reason = &seen[*name];
        assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
    }
    // Rejected once each, never requeued: nothing comes back, the queue is empty, and a good
    // request behind them is answered.
    wait_until(Duration::from_secs(10), "8 rejections", || {
        w.lines_with("rejected a request") == 8
    });
    amqp.publish(&queue, &good, props_with_id(&callback, "good"));
    let d = amqp.next(&mut replies, Duration::from_secs(60)).unwrap();
    assert_eq!(
        d.properties.correlation_id().as_ref().unwrap().as_str(),
        "good"
    );
    check_reply(&common::random_tx(21), 9, &d);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(w.lines_with("rejected a request"), 8, "{:?}", w.log());
    assert_eq!(amqp.ready(&queue), 0);
}

/// Publish `n` jobs with ids `job-0..n` at `mwm`; returns the inputs by id.
fn publish_jobs(
    amqp: &Amqp,
    queue: &str,
    reply_to: &ShortString,
    n: u64,
    mwm: usize,
    seed: u64,
) -> HashMap<String, Transaction> {
    (0..n)
        .map(|k| {
            let id = format!("job-{k}");
            let tx = common::random_tx(seed + k);
            amqp.publish(
                queue,
                &format_request(&tx, mwm),
                props_with_id(reply_to, &id),
            );
            (id, tx)
        })
        .collect()
}

/// Collect replies until every job has one, counting those in `answered` already; every reply
/// is checked, duplicates included (at-least-once: a job may be answered twice).
fn collect(
    amqp: &Amqp,
    replies: &mut lapin::Consumer,
    jobs: &HashMap<String, Transaction>,
    mwm: usize,
    answered: &mut HashSet<String>,
    within: Duration,
) -> Vec<lapin::message::Delivery> {
    let t0 = Instant::now();
    let mut got = Vec::new();
    while answered.len() < jobs.len() {
        let left = within.saturating_sub(t0.elapsed());
        let d = amqp.next(replies, left).unwrap_or_else(|| {
            panic!(
                "{} of {} jobs answered within {within:?}",
                answered.len(),
                jobs.len()
            )
        });
        let id = d.properties.correlation_id().as_ref().unwrap().to_string();
        let input = jobs
            .get(&id)
            .unwrap_or_else(|| panic!("a reply to no job: {id}"));
        check_reply(input, mwm, &d);
        answered.insert(id);
        got.push(d);
    }
    got
}

#[test]
fn two_workers_on_one_queue_share_the_load() {
    let Some((_g, amqp, queue)) = setup("share") else {
        return;
    };
    let _a = Proc::worker(&queue, "share-a", &[]);
    let _b = Proc::worker(&queue, "share-b", &[]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let jobs = publish_jobs(&amqp, &queue, &callback, 16, 10, 100);
    let got = collect(
        &amqp,
        &mut replies,
        &jobs,
        10,
        &mut HashSet::new(),
        Duration::from_secs(120),
    );
    let mut by_worker: HashMap<String, usize> = HashMap::new();
    for d in &got {
        *by_worker
            .entry(header_str(d, HEADER_WORKER).unwrap())
            .or_default() += 1;
    }
    assert!(
        by_worker.get("share-a").is_some_and(|&n| n > 0)
            && by_worker.get("share-b").is_some_and(|&n| n > 0),
        "both workers answer: {by_worker:?}"
    );
}

#[test]
fn a_worker_killed_mid_job_loses_no_job() {
    let Some((_g, amqp, queue)) = setup("kill") else {
        return;
    };
    // Worker a holds three jobs at a time; it is killed (SIGKILL: no drain, no goodbye) once it
    // has answered one, so it dies holding the others unacknowledged.
    let a = Proc::worker(&queue, "kill-a", &["--prefetch", "3"]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let jobs = publish_jobs(&amqp, &queue, &callback, 12, 12, 200);
    let first = amqp.next(&mut replies, Duration::from_secs(120)).unwrap();
    a.signal("-KILL");
    drop(a);
    let b = Proc::worker(&queue, "kill-b", &[]);
    let first_id = first
        .properties
        .correlation_id()
        .as_ref()
        .unwrap()
        .to_string();
    check_reply(&jobs[&first_id], 12, &first);
    let mut answered = HashSet::from([first_id]);
    let got = collect(
        &amqp,
        &mut replies,
        &jobs,
        12,
        &mut answered,
        Duration::from_secs(180),
    );
    let redelivered = got
        .iter()
        .filter(|d| header(d, HEADER_REDELIVERED) == Some(AMQPValue::Boolean(true)))
        .count();
    assert!(
        redelivered >= 1,
        "the jobs the killed worker held come back redelivered; log of b: {:?}",
        b.log()
    );
    assert_eq!(amqp.ready(&queue), 0);
}

#[test]
fn sigterm_drains_the_job_in_flight_then_exits_0() {
    let Some((_g, amqp, queue)) = setup("term") else {
        return;
    };
    let mut w = Proc::worker(&queue, "w-term", &[]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let jobs = publish_jobs(&amqp, &queue, &callback, 3, 13, 300);
    // Once the worker holds a job (nothing ready but two), ask it to stop.
    wait_until(Duration::from_secs(30), "the worker to take a job", || {
        amqp.ready(&queue) <= 2
    });
    w.signal("-TERM");
    let status = w.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "exit {status:?}; log {:?}", w.log());
    assert_eq!(w.lines_with("draining jobs="), 1, "{:?}", w.log());
    // What it held was answered (or, had it not started, is back in the queue): nothing lost.
    let mut answered = HashSet::new();
    while let Some(d) = amqp.next(&mut replies, Duration::from_millis(500)) {
        let id = d.properties.correlation_id().as_ref().unwrap().to_string();
        check_reply(&jobs[&id], 13, &d);
        answered.insert(id);
    }
    assert!(!answered.is_empty(), "the job in flight was finished");
    assert_eq!(answered.len() as u32 + amqp.ready(&queue), 3);
}

/// `rabbitmqctl` with a bounded wait; `None` if it cannot be run.
fn rabbitmqctl(args: &[&str]) -> Option<bool> {
    let mut child = Command::new("rabbitmqctl")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().ok()? {
            return Some(s.success());
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            return Some(false);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_worker_reconnects_after_a_broker_restart_and_the_jobs_complete() {
    let _g = exclusive_broker();
    if !broker_available() {
        return;
    }
    if rabbitmqctl(&["-q", "status"]) != Some(true) {
        assert!(
            std::env::var("CURLPOW_REQUIRE_BROKER").map_or(true, |v| v != "1"),
            "CURLPOW_REQUIRE_BROKER=1, but rabbitmqctl cannot control the local broker"
        );
        common::skip(
            "rabbitmqctl cannot control the broker (run as root, or as the rabbitmq user)",
        );
        return;
    }
    let url = broker_url();
    let queue = broker_client::unique_queue("restart");
    let reply_queue = broker_client::unique_queue("restart-replies");
    let mut amqp = Amqp::connect(&url).unwrap();
    amqp.durable_queue(&queue);
    // Replies go to a durable queue, so those published before the restart survive it.
    amqp.durable_queue(&reply_queue);
    let w = Proc::worker(&queue, "w-restart", &[]);
    // The serve side too: the engine's remote devices, before and after the restart.
    let mut cfg = RemoteConfig::new(url.parse::<BrokerUrl>().unwrap());
    cfg.queue = queue.clone();
    cfg.slots = 1;
    let remote = Engine::builder()
        .threads(1)
        .backends(&[])
        .add_device(remote_devices(cfg).unwrap().remove(0))
        .build()
        .unwrap();
    let opts = PowOptions::mwm(8).timeout(Duration::from_secs(60));
    let tx = common::random_tx(450);
    common::assert_valid_pow(&tx, &remote.pow_with(&tx, &opts).unwrap().transaction, 8);
    let reply_to: ShortString = reply_queue.as_str().into();
    let jobs = publish_jobs(&amqp, &queue, &reply_to, 10, 11, 400);
    let mut replies = amqp.consume(&reply_queue);
    let first = amqp.next(&mut replies, Duration::from_secs(120)).unwrap();
    let mut answered = HashSet::new();
    answered.insert(
        first
            .properties
            .correlation_id()
            .as_ref()
            .unwrap()
            .to_string(),
    );
    drop(replies);
    amqp.keep_queues(); // deleted by the connection opened after the restart
    assert_eq!(rabbitmqctl(&["-q", "stop_app"]), Some(true), "stop_app");
    std::thread::sleep(Duration::from_secs(1));
    let started = rabbitmqctl(&["-q", "start_app"]);
    let _ = rabbitmqctl(&["-q", "await_startup"]);
    assert_eq!(started, Some(true), "start_app");
    drop(amqp);
    let mut amqp = Amqp::connect_retrying(&url, Duration::from_secs(60));
    amqp.delete_on_drop(&queue);
    amqp.delete_on_drop(&reply_queue);
    let mut replies = amqp.consume(&reply_queue);
    collect(
        &amqp,
        &mut replies,
        &jobs,
        11,
        &mut answered,
        Duration::from_secs(180),
    );
    wait_until(Duration::from_secs(30), "a second connection", || {
        w.lines_with("consuming") >= 2
    });
    let tx = common::random_tx(451);
    common::assert_valid_pow(&tx, &remote.pow_with(&tx, &opts).unwrap().transaction, 8);
    assert!(w.lines_with("broker unavailable") >= 1, "{:?}", w.log());
}

#[test]
fn serve_with_a_broker_attaches_through_a_worker() {
    let Some((_g, _amqp, queue)) = setup("serve") else {
        return;
    };
    let _w = Proc::worker(&queue, "w-serve", &[]);
    let url = broker_url();
    let (serve, line) = Proc::start(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--broker",
            &url,
            "--broker-queue",
            &queue,
            "--broker-slots",
            "2",
        ],
        "listening on http://",
    );
    let addr = line.split("listening on http://").nth(1).unwrap().trim();
    let (trunk, branch, request) = attach_check::iota_js_bundle();
    let body = json!({
        "command": "attachToTangle",
        "trunkTransaction": trunk.to_trytes(),
        "branchTransaction": branch.to_trytes(),
        "minWeightMagnitude": 9,
        "trytes": request.iter().map(|t| t.to_trytes()).collect::<Vec<_>>(),
    })
    .to_string();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into();
    let before = attach_check::now_ms();
    let mut resp = agent
        .post(format!("http://{addr}/"))
        .header("Content-Type", "application/json")
        .header("X-IOTA-API-Version", "1")
        .send(&body)
        .expect("an answer");
    let after = attach_check::now_ms();
    let status = resp.status().as_u16();
    let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(status, 200, "{v}; serve log {:?}", serve.log());
    let out: Vec<Transaction> = v["trytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().parse().unwrap())
        .collect();
    attach_check::check(&request, &trunk, &branch, 9, before..=after, &out).unwrap();
    assert_eq!(serve.lines_with("connected to the broker"), 1);
}

#[test]
fn a_quorum_queue_the_operator_declared_is_used_as_it_is() {
    let _g = shared_broker();
    if !broker_available() {
        return;
    }
    let mut amqp = Amqp::connect(&broker_url()).unwrap();
    let queue = broker_client::unique_queue("quorum");
    let mut args = lapin::types::FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    let durable = lapin::options::QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    amqp.block_on(amqp.ch.queue_declare(queue.as_str().into(), durable, args))
        .expect("a quorum queue");
    amqp.delete_on_drop(&queue);
    let _w = Proc::worker(&queue, "w-quorum", &[]);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let tx = common::random_tx(700);
    amqp.publish(
        &queue,
        &format_request(&tx, 9),
        props_with_id(&callback, "q"),
    );
    check_reply(
        &tx,
        9,
        &amqp.next(&mut replies, Duration::from_secs(60)).unwrap(),
    );
    // The serve side declares it the same way.
    let mut cfg = RemoteConfig::new(broker_url().parse::<BrokerUrl>().unwrap());
    cfg.queue = queue.clone();
    cfg.slots = 1;
    let remote = Engine::builder()
        .threads(1)
        .backends(&[])
        .add_device(remote_devices(cfg).unwrap().remove(0))
        .build()
        .unwrap();
    let tx = common::random_tx(701);
    let opts = PowOptions::mwm(9).timeout(Duration::from_secs(60));
    common::assert_valid_pow(&tx, &remote.pow_with(&tx, &opts).unwrap().transaction, 9);
}

/// A fake worker in this process: answers each request on `queue` with `answer(tx, mwm)`.
fn fake_worker(
    queue: &str,
    answer: impl Fn(usize, &Transaction, usize) -> Vec<u8> + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let queue = queue.to_string();
    let (ready_tx, ready_rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let amqp = Amqp::connect(&broker_url()).unwrap();
        let mut requests = amqp.consume(&queue);
        let _ = ready_tx.send(());
        let mut k = 0;
        while let Some(d) = amqp.next(&mut requests, Duration::from_secs(20)) {
            let req = curlpow::broker::protocol::parse_request(&d.data, 243).unwrap();
            let props = BasicProperties::default()
                .with_correlation_id(d.properties.correlation_id().clone().unwrap_or_default());
            let reply_to = d.properties.reply_to().clone().unwrap();
            amqp.publish(
                reply_to.as_str(),
                &answer(k, &req.transaction, req.mwm),
                props,
            );
            k += 1;
        }
    });
    ready_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    h
}

#[test]
fn the_host_checks_every_remote_answer_and_retries_after_a_lie() {
    let Some((_g, _amqp, queue)) = setup("lie") else {
        return;
    };
    // The first answer has a wrong nonce, the second changes the trunk, the third is right.
    let local = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap();
    let _fake = fake_worker(&queue, move |k, tx, mwm| {
        let done = local.pow(tx, mwm).unwrap().transaction;
        let mut t = done.trits().to_vec();
        match k {
            0 => t[8018] = if t[8018] == 1 { 0 } else { 1 },
            1 => t[7290] = if t[7290] == 1 { 0 } else { 1 },
            _ => {}
        }
        Transaction::from_trits(&t)
            .unwrap()
            .to_trytes()
            .into_bytes()
    });
    let url: BrokerUrl = broker_url().parse().unwrap();
    let mut cfg = RemoteConfig::new(url);
    cfg.queue = queue.clone();
    cfg.slots = 3;
    let mut b = Engine::builder().threads(1).backends(&[]);
    for d in remote_devices(cfg).unwrap() {
        b = b.add_device(d);
    }
    let engine = b.build().unwrap();
    let tx = common::random_tx(500);
    let done = engine
        .pow_with(&tx, &PowOptions::mwm(9).timeout(Duration::from_secs(60)))
        .unwrap();
    common::assert_valid_pow(&tx, &done.transaction, 9);
    let faults: u64 = engine.device_report().iter().map(|d| d.stats.errors).sum();
    assert_eq!(faults, 2, "{:?}", engine.device_report());
}

#[test]
fn an_unreachable_broker_faults_and_local_devices_take_over() {
    // No broker needed: nothing listens on port 1.
    let url: BrokerUrl = "amqp://guest:guest@127.0.0.1:1/%2f".parse().unwrap();
    let mut cfg = RemoteConfig::new(url);
    cfg.connect_wait = Duration::from_millis(300);
    cfg.slots = 2;
    let mut b = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .cpu_fallback(true);
    for d in remote_devices(cfg).unwrap() {
        b = b.add_device(d);
    }
    let engine = b.build().unwrap();
    assert_eq!(engine.devices().len(), 3);
    for seed in 0..3 {
        let tx = common::random_tx(600 + seed);
        let done = engine
            .pow_with(&tx, &PowOptions::mwm(7).timeout(Duration::from_secs(60)))
            .unwrap();
        common::assert_valid_pow(&tx, &done.transaction, 7);
    }
    // Remote-only, the error says what is wrong and never shows the password.
    let url: BrokerUrl = "amqp://guest:hunter2@127.0.0.1:1/%2f".parse().unwrap();
    let mut cfg = RemoteConfig::new(url);
    cfg.connect_wait = Duration::from_millis(200);
    cfg.slots = 1;
    let engine = Engine::builder()
        .threads(1)
        .backends(&[])
        .add_device(remote_devices(cfg).unwrap().remove(0))
        .build()
        .unwrap();
    let e = engine
        .pow_with(&common::random_tx(7), &PowOptions::mwm(5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no connection to the broker"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn worker_usage_errors_exit_2_without_showing_the_password() {
    for (args, words) in [
        (vec!["--broker", "http://u:hunter2@h"], "expected amqp://"),
        (
            vec![
                "--broker",
                "amqp://u:hunter2@127.0.0.1/%2f",
                "--prefetch",
                "0",
            ],
            "--prefetch 0 is out of range (1 to 65535",
        ),
        (
            vec![
                "--broker",
                "amqp://u:hunter2@127.0.0.1/%2f",
                "--shutdown-grace",
                "1e10",
            ],
            "--shutdown-grace 10000000000 is out of range (0 to 1e9 seconds)",
        ),
        (
            vec![
                "--broker",
                "amqp://u:hunter2@127.0.0.1/%2f",
                "--log",
                "bogus",
            ],
            "--log \"bogus\" is not a log level",
        ),
        (
            vec![
                "--broker",
                "amqp://u:hunter2@127.0.0.1/%2f",
                "--max-mwm",
                "300",
            ],
            "--max-mwm 300 is out of range (0..=243)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_curlpow"))
            .arg("worker")
            .args(&args)
            .args(["--backend", "cpu", "--threads", "1"])
            .env_remove("CURLPOW_BROKER")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(words), "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "{args:?}: {err}");
    }
}

#[test]
fn a_request_whose_reply_is_refused_is_rejected_after_one_retry_and_never_delays_the_next() {
    let Some((_g, mut amqp, queue)) = setup("poison") else {
        return;
    };
    // One job at a time, so a looping request would hold the good one behind it forever.
    let mut w = Proc::worker(&queue, "w-poison", &["--prefetch", "1"]);
    let full = broker_client::unique_queue("full-reply");
    amqp.refusing_queue(&full);
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let poison = common::random_tx(61);
    let good = common::random_tx(62);
    amqp.publish(
        &queue,
        &format_request(&poison, 9),
        props_with_id(&ShortString::from(full.clone()), "poison"),
    );
    amqp.publish(
        &queue,
        &format_request(&good, 9),
        props_with_id(&callback, "good"),
    );
    let t0 = Instant::now();
    let d = amqp
        .next(&mut replies, Duration::from_secs(60))
        .unwrap_or_else(|| panic!("the good request was never answered; log {:?}", w.log()));
    let waited = t0.elapsed();
    assert_eq!(
        d.properties.correlation_id().as_ref().unwrap().as_str(),
        "good"
    );
    check_reply(&good, 9, &d);
    // Rejected once, logged once, not looping: a second later nothing more happened.
    wait_until(Duration::from_secs(10), "the rejection", || {
        w.lines_with("request rejected, not requeued") == 1
    });
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(amqp.ready(&queue), 0);
    w.signal("-TERM");
    let status = w.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "{status:?}; log {:?}", w.log());
    let log = w.log();
    assert_eq!(w.lines_with("request rejected, not requeued"), 1, "{log:?}");
    let stopped = log
        .iter()
        .find(|l| l.contains(" worker stopped "))
        .unwrap_or_else(|| panic!("no stopped line: {log:?}"));
    assert!(
        stopped.contains("answered=1 rejected=1 requeued=1"),
        "{stopped}"
    );
    // The log names the request by a bounded preview, never its whole body.
    assert!(log.iter().all(|l| l.len() < 2048), "{log:?}");
    eprintln!("the good request behind the refused one answered after {waited:?}");
}

#[test]
fn an_unroutable_reply_is_one_short_log_line() {
    let Some((_g, amqp, queue)) = setup("unroutable") else {
        return;
    };
    let mut w = Proc::worker(&queue, "w-unroutable", &[]);
    let gone = ShortString::from(broker_client::unique_queue("no-such-queue"));
    amqp.publish(
        &queue,
        &format_request(&common::random_tx(63), 5),
        props_with_id(&gone, "nobody"),
    );
    wait_until(Duration::from_secs(60), "the unroutable reply", || {
        w.lines_with("reply queue gone") == 1
    });
    std::thread::sleep(Duration::from_millis(300));
    w.signal("-TERM");
    assert!(w.wait_exit(Duration::from_secs(60)).success());
    let log = w.log();
    let longest = log.iter().map(String::len).max().unwrap_or(0);
    assert!(longest < 1024, "a log line of {longest} bytes: {log:?}");
    assert!(
        log.iter()
            .all(|l| !l.contains("Server returned us a message")),
        "{log:?}"
    );
}

/// `curlpow worker --software`: PoCL and lavapipe loaded (each installs signal handlers of its
/// own). Skips without them (a failure under `CURLPOW_REQUIRE_BACKENDS`).
fn worker_with_drivers(queue: &str, name: &str) -> Option<Proc> {
    let out = Command::new(env!("CARGO_BIN_EXE_curlpow"))
        .args(["devices", "--software"])
        .output()
        .expect("curlpow devices");
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    let opencl = common::gpu_available("opencl", listed.contains("opencl:"));
    let wgpu = common::gpu_available("wgpu", listed.contains("wgpu:"));
    if !(opencl && wgpu) {
        return None;
    }
    let url = broker_url();
    let args = [
        "worker",
        "--broker",
        &url,
        "--queue",
        queue,
        "--name",
        name,
        "--software",
        "--threads",
        "2",
        "--prefetch",
        "3",
    ];
    Some(Proc::start(&args, "consuming").0)
}

fn drain_with_drivers_loaded(sig: &str, word: &str) {
    let Some((_g, amqp, queue)) = setup(&format!("drivers{word}")) else {
        return;
    };
    let Some(mut w) = worker_with_drivers(&queue, &format!("w-drivers-{word}")) else {
        return;
    };
    let callback = amqp.dcurl_callback_queue();
    let mut replies = amqp.consume(callback.as_str());
    let jobs = publish_jobs(&amqp, &queue, &callback, 5, 12, 800);
    wait_until(Duration::from_secs(60), "the worker to take jobs", || {
        amqp.ready(&queue) <= 2
    });
    // Delivered is not yet started: give the jobs a moment to begin their searches (seconds
    // each at MWM 12 on this host's devices).
    std::thread::sleep(Duration::from_millis(500));
    w.signal(sig);
    let status = w.wait_exit(Duration::from_secs(120));
    let log = w.log();
    assert_eq!(status.code(), Some(0), "{status:?}; log {log:?}");
    assert!(
        log.iter()
            .any(|l| l.contains(&format!(" {word}: draining"))),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.contains(" worker stopped ")),
        "{log:?}"
    );
    // Every job held was answered with a valid PoW or went back to the queue: none lost.
    let mut answered = HashSet::new();
    while let Some(d) = amqp.next(&mut replies, Duration::from_millis(500)) {
        let id = d.properties.correlation_id().as_ref().unwrap().to_string();
        check_reply(&jobs[&id], 12, &d);
        answered.insert(id);
    }
    assert!(
        !answered.is_empty(),
        "the jobs in flight were finished; log {log:?}"
    );
    assert_eq!(answered.len() as u32 + amqp.ready(&queue), 5, "log {log:?}");
}

#[test]
fn sigterm_with_the_drivers_loaded_drains_and_exits_0() {
    drain_with_drivers_loaded("-TERM", "SIGTERM");
}

#[test]
fn sigint_with_the_drivers_loaded_drains_and_exits_0() {
    drain_with_drivers_loaded("-INT", "SIGINT");
}

#[test]
fn a_forged_direct_reply_to_is_never_published_to_and_the_job_behind_it_is_answered() {
    let _g = shared_broker();
    if !broker_available() {
        return;
    }
    let mut amqp = Amqp::connect(&broker_url()).unwrap();
    // The request queue dead-letters what is rejected to `dead`, as an operator sets it up.
    let queue = broker_client::unique_queue("forged");
    let dead = broker_client::unique_queue("forged-dead");
    amqp.durable_queue(&dead);
    let mut args = lapin::types::FieldTable::default();
    args.insert(
        "x-dead-letter-exchange".into(),
        AMQPValue::LongString("".into()),
    );
    args.insert(
        "x-dead-letter-routing-key".into(),
        AMQPValue::LongString(dead.clone().into()),
    );
    let durable = lapin::options::QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    amqp.block_on(amqp.ch.queue_declare(queue.as_str().into(), durable, args))
        .expect("queue.declare");
    amqp.delete_on_drop(&queue);
    // One job at a time: a job that made the worker loop would hold the good one forever.
    let mut w = Proc::worker(&queue, "w-forged", &["--prefetch", "1"]);
    // Forged direct reply-to names, which RabbitMQ answers by closing the publisher's
    // connection (541 INTERNAL_ERROR): junk before the key, and a pid cut one byte short. The
    // check refuses them unpublished.
    let forged = [
        "amq.rabbitmq.reply-to.junk.key",
        "amq.rabbitmq.reply-to.g1h3C3JhYmJpdEBob3N0AAAB2gAAAAAAAAA=.key",
        // Well formed (the newer brokers' form, the node as an integer hash), so the check
        // lets it through; a broker that does not know the form (RabbitMQ 3.10) closes the
        // reply connection over it. Costing only the reply connection, the job goes back once
        // and is rejected on its next delivery; a broker that knows the form drops the reply.
        "amq.rabbitmq.reply-to.g1hiAAAwOQAAAdoAAAAAAAAAAA==.a2V5",
    ];
    for (i, name) in forged.iter().enumerate() {
        amqp.publish(
            &queue,
            &format_request(&common::random_tx(70 + i as u64), 5),
            props_with_id(&ShortString::from(*name), "forged"),
        );
    }
    // The good job's client uses RabbitMQ's direct reply-to: a name the broker issued, which
    // the worker must accept.
    let mut replies = amqp.consume("amq.rabbitmq.reply-to");
    let good = common::random_tx(72);
    amqp.publish(
        &queue,
        &format_request(&good, 9),
        props_with_id(&ShortString::from("amq.rabbitmq.reply-to"), "good"),
    );
    let d = amqp
        .next(&mut replies, Duration::from_secs(60))
        .unwrap_or_else(|| panic!("the good job was never answered; log {:?}", w.log()));
    assert_eq!(
        d.properties.correlation_id().as_ref().unwrap().as_str(),
        "good"
    );
    check_reply(&good, 9, &d);
    // The two forged jobs rejected without requeue (dead-lettered), each logged once; the
    // third too where it cost the reply connection.
    const COST: &str = "publishing the reply cost the reply connection";
    let cost = |w: &Proc| w.lines_with(COST);
    wait_until(
        Duration::from_secs(20),
        "the forged jobs dead-lettered",
        || amqp.ready(&dead) == 2 + cost(&w) as u32,
    );
    assert_eq!(amqp.ready(&queue), 0);
    w.signal("-TERM");
    let status = w.wait_exit(Duration::from_secs(60));
    assert!(status.success(), "{status:?}; log {:?}", w.log());
    let log = w.log();
    assert_eq!(
        w.lines_with("is not a direct reply-to name the broker issued"),
        2,
        "{log:?}"
    );
    // One connection all along: no reconnection loop.
    assert_eq!(w.lines_with("consuming"), 1, "{log:?}");
    assert_eq!(w.lines_with("broker unavailable"), 0, "{log:?}");
    let stopped = log
        .iter()
        .find(|l| l.contains(" worker stopped "))
        .unwrap_or_else(|| panic!("no stopped line: {log:?}"));
    eprintln!("reply connections cost: {}; {stopped}", cost(&w));
    if cost(&w) == 1 {
        assert_eq!(
            w.lines_with("publishing its reply cost the worker its broker connection before"),
            1,
            "{log:?}"
        );
        assert!(
            stopped.contains("answered=1 rejected=3 requeued=1"),
            "{stopped}"
        );
    } else {
        assert_eq!(cost(&w), 0, "{log:?}");
        assert!(stopped.contains("answered=2 rejected=2"), "{stopped}");
    }
}
