//! PoW through RabbitMQ beside the same PoW done locally: jobs per second and the latency each
//! job adds, at MWM 1 (the protocol's overhead: the search itself takes microseconds) and MWM 9,
//! with 1 and 2 `curlpow worker` processes (one CPU thread each) on this machine, the broker
//! on loopback. `docs/scale-out.md` has the figures.
//!
//! `cargo bench --bench broker` (a broker at `CURLPOW_TEST_BROKER`, default the guest account
//! on 127.0.0.1:5672; skipped with a message without one). `-- --quick` runs fewer jobs.
//!
//! Rows:
//! - `local`: `Engine::pow` on one CPU thread in this process, one job after another;
//! - `broker, sequential`: one job in flight at a time, as a dcurl client sends them (publish,
//!   wait for the reply): the round trip; minus `local` it is the latency the broker adds;
//! - `broker, all at once`: every job published up front, replies counted as they come: the
//!   throughput the workers reach when the queue never runs dry;
//! - `serve path`: `Engine::pow` on `remote_devices` (what `curlpow serve --broker` does: a
//!   correlation id per job, the answer verified on the host), one job after another.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use curlpow::broker::protocol::format_request;
use curlpow::broker::{remote_devices, BrokerUrl, RemoteConfig};
use curlpow::device::{CounterRange, SearchControl, SearchJob};
use curlpow::{Backend, Engine, Transaction};
use curlpow_testkit::broker_client::{self, broker_url, Amqp};

/// `n` distinct transactions (xorshift trits, deterministic).
fn transactions(n: usize, seed: u64) -> Vec<Transaction> {
    (0..n as u64)
        .map(|k| {
            let trits: Vec<i8> =
                curlpow::internal::xorshift::trits((seed + k).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .take(curlpow::TRANSACTION_TRITS)
                    .collect();
            Transaction::from_trits(&trits).unwrap()
        })
        .collect()
}

/// A `curlpow worker` process, killed on drop.
struct WorkerProc(Child);

impl WorkerProc {
    fn start(queue: &str, name: &str, extra: &[&str]) -> WorkerProc {
        let url = broker_url();
        let mut child = Command::new(env!("CARGO_BIN_EXE_curlpow"))
            .args(["worker", "--broker", &url, "--queue", queue, "--name", name])
            .args(extra)
            .args(["--backend", "cpu", "--threads", "1"])
            // `--log` takes a level; the filter that shows the "consuming" line is RUST_LOG's.
            .env("RUST_LOG", "warn,curlpow=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start curlpow worker");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("consuming") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the worker consumes within 60 s");
        WorkerProc(child)
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Median, mean and 90th percentile in milliseconds.
fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mean = v.iter().map(|&d| ms(d)).sum::<f64>() / v.len() as f64;
    (ms(v[v.len() / 2]), mean, ms(v[v.len() * 9 / 10]))
}

fn row(label: &str, lat: Option<(f64, f64, f64)>, jobs_per_s: Option<f64>) {
    let lat = lat.map_or(String::new(), |(med, mean, p90)| {
        format!("median {med:7.3} ms  mean {mean:7.3} ms  p90 {p90:7.3} ms")
    });
    let jps = jobs_per_s.map_or(String::new(), |j| format!("{j:8.1} jobs/s"));
    println!("  {label:<42} {lat:<52} {jps}");
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    if !broker_client::broker_available() {
        return;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "broker bench: {} CPUs, load average at start {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let local = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap();
    for mwm in [1usize, 9] {
        let n = match (mwm, quick) {
            (1, false) => 2000,
            (1, true) => 300,
            (_, false) => 400,
            (_, true) => 80,
        };
        let txs = transactions(n, 1000 * mwm as u64);
        println!("\nMWM {mwm}, {n} jobs, one CPU thread per worker:");
        // Local, one after another.
        let mut lat = Vec::with_capacity(n);
        let mut out = Vec::with_capacity(n);
        let t0 = Instant::now();
        for tx in &txs {
            let t = Instant::now();
            out.push(local.pow(tx, mwm).unwrap().transaction);
            lat.push(t.elapsed());
        }
        let local_jps = n as f64 / t0.elapsed().as_secs_f64();
        // Checked outside the timed loop: the reference hash costs more than a small search.
        assert!(out.iter().all(|t| t.weight() >= mwm));
        let local_lat = stats(lat);
        row(
            "local (Engine::pow, 1 thread)",
            Some(local_lat),
            Some(local_jps),
        );
        // What of that is the host's own work around any device: the mid-state of a job and
        // the host check of its answer (a remote search pays both on the sending host too).
        let t = Instant::now();
        let jobs: Vec<SearchJob> = txs
            .iter()
            .map(|tx| SearchJob::new(tx, mwm).unwrap())
            .collect();
        let prep = t.elapsed().as_secs_f64() * 1e3 / n as f64;
        let t = Instant::now();
        for (job, done) in jobs.iter().zip(&out) {
            let mut nonce = [0i8; 81];
            nonce.copy_from_slice(&done.trits()[8019 - 81..]);
            assert!(job.verify_nonce(&nonce).is_some());
        }
        let check = t.elapsed().as_secs_f64() * 1e3 / n as f64;
        println!(
            "  {:<34} of which mid-state {prep:.3} ms, host check {check:.3} ms per job",
            ""
        );
        for workers in [1usize, 2] {
            let queue = broker_client::unique_queue(&format!("bench-{mwm}-{workers}"));
            let mut amqp = Amqp::connect(&broker_url()).unwrap();
            amqp.durable_queue(&queue);
            let running: Vec<WorkerProc> = (0..workers)
                .map(|k| WorkerProc::start(&queue, &format!("bench-{k}"), &[]))
                .collect();
            let callback = amqp.dcurl_callback_queue();
            let mut replies = amqp.consume(callback.as_str());
            let props = |id: usize| {
                broker_client::dcurl_properties(&callback)
                    .with_correlation_id(id.to_string().into())
            };
            let bodies: Vec<Vec<u8>> = txs.iter().map(|t| format_request(t, mwm)).collect();
            // Sequential: one in flight.
            let mut lat = Vec::with_capacity(n);
            let t0 = Instant::now();
            for (k, body) in bodies.iter().enumerate() {
                let t = Instant::now();
                amqp.publish(&queue, body, props(k));
                let d = amqp
                    .next(&mut replies, Duration::from_secs(60))
                    .expect("a reply");
                lat.push(t.elapsed());
                assert_eq!(d.data.len(), 2673);
            }
            let seq_jps = n as f64 / t0.elapsed().as_secs_f64();
            let seq = stats(lat);
            row(
                &format!("broker, {workers} worker(s), sequential"),
                Some(seq),
                Some(seq_jps),
            );
            println!(
                "  {:<42} added latency per job: median {:+.3} ms, mean {:+.3} ms",
                "",
                seq.0 - local_lat.0,
                seq.1 - local_lat.1
            );
            // All at once.
            let t0 = Instant::now();
            for (k, body) in bodies.iter().enumerate() {
                amqp.publish(&queue, body, props(n + k));
            }
            let mut seen = HashSet::new();
            while seen.len() < n {
                let d = amqp
                    .next(&mut replies, Duration::from_secs(120))
                    .expect("a reply");
                let id = d.properties.correlation_id().as_ref().unwrap().to_string();
                seen.insert(id);
            }
            let all_jps = n as f64 / t0.elapsed().as_secs_f64();
            row(
                &format!("broker, {workers} worker(s), all at once"),
                None,
                Some(all_jps),
            );
            if workers == 1 {
                // One more request held per worker hides the round trip between jobs.
                drop(running);
                let _w2 = WorkerProc::start(&queue, "bench-p2", &["--prefetch", "2"]);
                let t0 = Instant::now();
                for (k, body) in bodies.iter().enumerate() {
                    amqp.publish(&queue, body, props(2 * n + k));
                }
                let mut seen = HashSet::new();
                while seen.len() < n {
                    let d = amqp
                        .next(&mut replies, Duration::from_secs(120))
                        .expect("a reply");
                    seen.insert(d.properties.correlation_id().as_ref().unwrap().to_string());
                }
                let jps = n as f64 / t0.elapsed().as_secs_f64();
                row(
                    "broker, 1 worker --prefetch 2, all at once",
                    None,
                    Some(jps),
                );
                // The serve path: the engine's remote devices, host verification included.
                let url: BrokerUrl = broker_url().parse().unwrap();
                let mut cfg = RemoteConfig::new(url);
                cfg.queue = queue.clone();
                cfg.slots = 1;
                let devices = remote_devices(cfg).unwrap();
                let dev = devices[0].clone();
                let mut b = Engine::builder().threads(1).backends(&[]);
                for d in devices {
                    b = b.add_device(d);
                }
                let remote = b.build().unwrap();
                // The device alone (no engine, job prepared up front): the broker round trip
                // as the serve path sees it.
                let mut lat = Vec::with_capacity(n);
                for job in &jobs {
                    let ctl = SearchControl::new(None, None);
                    let t = Instant::now();
                    let out = dev.search_nonce(job, CounterRange::ALL, &ctl).unwrap();
                    lat.push(t.elapsed());
                    assert!(out.found.is_some());
                }
                row("remote device alone, 1 worker", Some(stats(lat)), None);
                let mut lat = Vec::with_capacity(n);
                let mut out = Vec::with_capacity(n);
                let t0 = Instant::now();
                for tx in &txs {
                    let t = Instant::now();
                    out.push(remote.pow(tx, mwm).unwrap().transaction);
                    lat.push(t.elapsed());
                }
                let jps = n as f64 / t0.elapsed().as_secs_f64();
                assert!(out.iter().all(|t| t.weight() >= mwm));
                row(
                    "serve path (remote device), 1 worker",
                    Some(stats(lat)),
                    Some(jps),
                );
            }
        }
    }
    echo_ceiling(if quick { 1000 } else { 5000 });
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nload average at the end {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}

/// The broker's ceiling on this host for the worker's protocol without any PoW: an echo
/// consumer in this process (prefetch `p`, the reply published with a confirm, then the
/// request acknowledged, as `curlpow worker` does) answering `n` requests published at once.
fn echo_ceiling(n: usize) {
    use lapin::options::ConfirmSelectOptions;
    use lapin::options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    };
    use lapin::types::FieldTable;
    use tokio_stream::StreamExt;
    println!("\nprotocol ceiling: an echo consumer (no PoW), {n} requests published at once:");
    let tx = &transactions(1, 7)[0];
    let body = format_request(tx, 9);
    for prefetch in [1u16, 8, 64] {
        let queue = broker_client::unique_queue(&format!("bench-echo-{prefetch}"));
        let mut client = Amqp::connect(&broker_url()).unwrap();
        client.durable_queue(&queue);
        let callback = client.dcurl_callback_queue();
        let mut replies = client.consume(callback.as_str());
        let echo = Amqp::connect(&broker_url()).unwrap();
        let (ready_tx, ready_rx) = mpsc::channel();
        let q = queue.clone();
        let handle = std::thread::spawn(move || {
            echo.block_on(async {
                let ch = &echo.ch;
                ch.confirm_select(ConfirmSelectOptions::default())
                    .await
                    .unwrap();
                ch.basic_qos(prefetch, BasicQosOptions::default())
                    .await
                    .unwrap();
                let mut c = ch
                    .basic_consume(
                        q.as_str().into(),
                        "".into(),
                        BasicConsumeOptions::default(),
                        FieldTable::default(),
                    )
                    .await
                    .unwrap();
                let _ = ready_tx.send(());
                let mut pending = tokio::task::JoinSet::new();
                let mut done = 0;
                while done < n {
                    let d = c.next().await.unwrap().unwrap();
                    let ch = ch.clone();
                    pending.spawn(async move {
                        let reply_to = d.properties.reply_to().clone().unwrap();
                        let props = lapin::BasicProperties::default().with_correlation_id(
                            d.properties.correlation_id().clone().unwrap_or_default(),
                        );
                        let opts = BasicPublishOptions {
                            mandatory: true,
                            immediate: false,
                        };
                        ch.basic_publish("".into(), reply_to, opts, &d.data[..2673], props)
                            .await
                            .unwrap()
                            .await
                            .unwrap();
                        d.acker.ack(BasicAckOptions::default()).await.unwrap();
                    });
                    done += 1;
                }
                while pending.join_next().await.is_some() {}
            });
            echo
        });
        ready_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let t0 = Instant::now();
        for k in 0..n {
            client.publish(
                &queue,
                &body,
                broker_client::dcurl_properties(&callback)
                    .with_correlation_id(k.to_string().into()),
            );
        }
        let mut got = 0;
        while got < n {
            client
                .next(&mut replies, Duration::from_secs(60))
                .expect("an echo");
            got += 1;
        }
        let jps = n as f64 / t0.elapsed().as_secs_f64();
        row(&format!("echo, prefetch {prefetch}"), None, Some(jps));
        drop(handle.join());
    }
}
