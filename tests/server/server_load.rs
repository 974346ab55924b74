//! A bounded load test of the server: the library's `Server` in this process on a loopback port,
//! 32 real HTTP clients, 2,016 attachToTangle requests (bundles of 1 to 8, MWM 4), an engine with
//! a test device that fails now and then (driver errors and nonces the host check must reject).
//! Every answer is a verified result or a 503: 0 invalid, 0 lost; memory stays bounded.

use crate::attach_check;
use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::device::{
    CounterRange, Device, DeviceInfo, Hit, SearchControl, SearchJob, SearchOutcome,
};
use curlpow::internal::cpu::{CpuDevice, PoolConfig};
use curlpow::server::{Config, Server};
use curlpow::{attach::Hash, Backend, CpuKernel, DeviceKind, Engine, Error, Transaction};
use serde_json::{json, Value};

const CLIENTS: usize = 32;
const PER_CLIENT: usize = 63;
const MWM: usize = 4;

/// Searches for real on a one-thread portable CPU pool; every 5th call fails with a driver
/// error and every 7th answers a nonce that is wrong.
struct Flaky {
    info: DeviceInfo,
    inner: CpuDevice,
    calls: AtomicU64,
}

impl Device for Flaky {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(5) {
            return Err(Error::Backend {
                backend: Backend::Custom,
                device: self.info.id.clone(),
                message: "CL_OUT_OF_RESOURCES (injected)".into(),
            });
        }
        if n.is_multiple_of(7) {
            return Ok(SearchOutcome {
                hit: Some(Hit {
                    counter: n,
                    lane: 3,
                }),
                nonces: 64,
            });
        }
        self.inner.search(job, range, ctl)
    }
    fn nonces_tried(&self) -> u64 {
        self.inner.nonces_tried()
    }
}

fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

enum Outcome {
    Valid,
    Busy,
}

fn one_request(agent: &ureq::Agent, base: &str, seed: u64) -> Result<Outcome, String> {
    let n = 1 + (seed % 8) as usize;
    let txs: Vec<Transaction> = (0..n as u64)
        .map(|k| common::random_tx(seed * 16 + k))
        .collect();
    let trunk = Hash::from_trits(&common::random_tx(seed).hash()).unwrap();
    let branch = Hash::NULL;
    let body = json!({
        "command": "attachToTangle",
        "trunkTransaction": trunk.to_trytes(),
        "branchTransaction": branch.to_trytes(),
        "minWeightMagnitude": MWM,
        "trytes": txs.iter().map(|t| t.to_trytes()).collect::<Vec<_>>(),
    })
    .to_string();
    let before = attach_check::now_ms();
    let mut resp = agent
        .post(format!("{base}/"))
        .header("X-IOTA-API-Version", "1")
        .send(&body)
        .map_err(|e| format!("request {seed} lost: {e}"))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("request {seed}: body lost: {e}"))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("request {seed}: {e}: {text}"))?;
    match status {
        200 => {
            let out: Vec<Transaction> = v["trytes"]
                .as_array()
                .ok_or(format!("request {seed}: no trytes: {v}"))?
                .iter()
                .map(|t| t.as_str().unwrap_or("").parse())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("request {seed}: {e}"))?;
            attach_check::check(
                &txs,
                &trunk,
                &branch,
                MWM,
                before..=attach_check::now_ms(),
                &out,
            )
            .map_err(|e| format!("request {seed}: INVALID: {e}"))?;
            Ok(Outcome::Valid)
        }
        503 if resp.headers().contains_key("retry-after") => Ok(Outcome::Busy),
        _ => Err(format!("request {seed}: status {status}: {v}")),
    }
}

#[test]
fn thirty_two_clients_two_thousand_attaches_a_flaky_device_nothing_invalid_nothing_lost() {
    let flaky = Arc::new(Flaky {
        info: DeviceInfo::new(
            "flaky:0",
            Backend::Custom,
            "a device that fails now and then",
            DeviceKind::Gpu,
        )
        .with_lanes(64)
        .with_declared_speed(1e7),
        inner: CpuDevice::new(
            PoolConfig {
                threads: 1,
                pin: false,
            },
            CpuKernel::Portable,
        )
        .unwrap(),
        calls: AtomicU64::new(0),
    });
    let engine = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .add_device(flaky.clone())
        .wait_limit(Duration::from_millis(1))
        .reprobe_after(Duration::from_millis(20))
        .build()
        .unwrap();
    let mut config = Config::default();
    config.listen = "127.0.0.1:0".parse().unwrap();
    // 32 clients on one address are one client: 2 running (3 slots, per-client 2), 24 waiting,
    // the rest turned away with 503 + Retry-After.
    config.queue = 24;
    config.per_client_queue = Some(24);
    let server = Server::start(engine.clone(), config).unwrap();
    let base = format!("http://{}", server.local_addr());

    let t0 = Instant::now();
    let rss0 = rss_kib();
    let handles: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let base = base.clone();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(120)))
                    .build()
                    .into();
                let (mut valid, mut busy, mut errors) = (0u64, 0u64, Vec::new());
                for i in 0..PER_CLIENT {
                    match one_request(&agent, &base, (c * PER_CLIENT + i) as u64 + 1) {
                        Ok(Outcome::Valid) => valid += 1,
                        Ok(Outcome::Busy) => {
                            busy += 1;
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Err(e) => errors.push(e),
                    }
                }
                (valid, busy, errors)
            })
        })
        .collect();
    let (mut valid, mut busy, mut errors) = (0, 0, Vec::new());
    for h in handles {
        let (v, b, e) = h.join().unwrap();
        valid += v;
        busy += b;
        errors.extend(e);
    }
    let took = t0.elapsed();
    let rss1 = rss_kib();
    let total = (CLIENTS * PER_CLIENT) as u64;
    eprintln!(
        "{total} requests in {took:.1?}: {valid} attached and verified, {busy} answered 503; \
         flaky device called {} times; RSS {rss0:?} -> {rss1:?} KiB",
        flaky.calls.load(Ordering::Relaxed)
    );
    assert!(
        errors.is_empty(),
        "{} bad answers, first: {}",
        errors.len(),
        errors[0]
    );
    assert_eq!(valid + busy, total, "every request answered");
    assert!(valid >= total / 4, "too few served: {valid}");
    assert!(
        flaky.calls.load(Ordering::Relaxed) > 20,
        "the flaky device took part"
    );
    let faults: u64 = engine
        .device_report()
        .iter()
        .find(|d| d.info.id == "flaky:0")
        .unwrap()
        .stats
        .errors;
    assert!(faults > 0, "faults were injected and recorded");
    if let (Some(a), Some(b)) = (rss0, rss1) {
        assert!(b < a + 64 * 1024, "RSS grew from {a} to {b} KiB");
    }
    // The server's own accounting agrees: nothing left running or waiting.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let metrics = agent
        .get(format!("{base}/metrics"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(metrics.contains("curlpow_queue_depth 0"), "{metrics}");
    assert!(metrics.contains("curlpow_attaches_running 0"), "{metrics}");
    let served: u64 = metrics
        .lines()
        .filter(|l| l.starts_with("curlpow_requests_total{command=\"attachToTangle\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(served, total, "{metrics}");
    server.shutdown().unwrap();
}
