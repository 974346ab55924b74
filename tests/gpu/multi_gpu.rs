//! A multi-GPU host: PoCL exposing four identical OpenCL devices
//! (`POCL_DEVICES="pthread pthread pthread pthread"`, `POCL_MAX_PTHREAD_COUNT=1`, the way a
//! server shows eight GPUs of one model) beside lavapipe. PoCL reads those variables when it
//! loads, so every check runs in a child process that has them: the `curlpow` binary, or this
//! test binary re-run on one test.
//!
//! - the engine leases each device to one search at a time, under many callers at once (each
//!   device wrapped in a counter of the searches running on it, and presented as a hardware
//!   GPU: the engine keeps software drivers, which share the host's cores, from running side
//!   by side);
//! - a batch spreads over several of the four devices, and latency mode puts all of them on one PoW;
//! - `serve`, attached to by many callers at once, answers every attach, valid, from the four;
//! - a device faulting mid-batch (`CURLPOW_INJECT_FAULT`) loses no PoW;
//! - discovery's dedupe keeps the four identical devices apart (different hardware).
//!
//! MWM 8 to 10 keeps every search short. Without PoCL the tests skip visibly, unless
//! `CURLPOW_REQUIRE_BACKENDS` names `opencl`.
#![cfg(all(feature = "opencl", feature = "cli"))]

use crate::common;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use curlpow::device::{
    CounterRange, Device, DeviceInfo, NonceOutcome, SearchControl, SearchJob, SearchOutcome,
};
use curlpow::internal::DiscoverOptions;
use curlpow::{DeviceKind, Engine, Error, PowOptions, Transaction};
use curlpow_testkit::attach_check;
use curlpow_testkit::server_support::Srv;
use serde_json::{json, Value};

/// The four identical devices.
const POCL: [(&str, &str); 2] = [
    ("POCL_DEVICES", "pthread pthread pthread pthread"),
    ("POCL_MAX_PTHREAD_COUNT", "1"),
];
const DEVICES: usize = 4;
/// Set in the child process this binary re-runs itself as.
const CHILD: &str = "CURLPOW_MULTI_GPU_CHILD";

/// In the parent: re-run this test binary on `test` alone with [`POCL`] set, fail if it fails,
/// return false. In the child: true (the caller runs the test body).
fn in_child(test: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let full = std::thread::current()
        .name()
        .filter(|n| n.ends_with(test))
        .unwrap_or(test)
        .to_string();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            full.as_str(),
            "--exact",
            "--test-threads",
            "1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .envs(POCL)
        .output()
        .expect("re-run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{test} in its child process:\n{text}");
    assert!(text.contains("1 passed"), "{test} did not run:\n{text}");
    false
}

/// The `curlpow` binary with [`POCL`] set.
fn curlpow(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_curlpow"));
    c.args(args)
        .envs(POCL)
        .env("CURLPOW_TUNE", "0")
        .env_remove("CURLPOW_OPENCL_KERNEL")
        .env_remove("CURLPOW_INJECT_FAULT")
        .env_remove("CURLPOW_THREADS");
    c
}

/// The PoCL devices `devices --json --software` lists; `None` (skipped) without PoCL.
fn pocl_devices() -> Option<Vec<Value>> {
    let out = curlpow(&["devices", "--json", "--software"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pocl: Vec<Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["backend"] == "opencl" && d["software"] == true)
        .cloned()
        .collect();
    if !common::gpu_available("opencl", !pocl.is_empty()) {
        return None;
    }
    assert_eq!(
        pocl.len(),
        DEVICES,
        "POCL_DEVICES asks for {DEVICES} devices: {list:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(pocl)
}

/// The ids of the PoCL devices, for `--device`.
fn ids(pocl: &[Value]) -> String {
    pocl.iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn dedupe_keeps_identical_devices_apart() {
    let Some(pocl) = pocl_devices() else {
        return;
    };
    let names: Vec<&str> = pocl.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert!(names.iter().all(|n| *n == names[0]), "{names:?}");
    let mut ids: Vec<&str> = pocl.iter().map(|d| d["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), DEVICES, "{ids:?}");
    let out = curlpow(&["devices", "--software", "-v"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("same GPU"), "{err}");
}

/// A device that counts the searches running on it at once (and the most ever). It presents
/// its device as a hardware GPU (`software` off, kind GPU): the engine runs at most one of the
/// software drivers on a search, since they share the host's cores, while a host's GPUs all
/// run; PoCL's devices stand for GPUs of one model here.
struct Leased {
    inner: Arc<dyn Device>,
    info: DeviceInfo,
    now: AtomicUsize,
    most: AtomicUsize,
    searches: AtomicUsize,
}

struct Lease<'a>(&'a Leased);

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Leased {
    fn new(inner: Arc<dyn Device>) -> Arc<Leased> {
        let mut info = inner.info().clone();
        info.software = false;
        info.kind = DeviceKind::Gpu;
        Arc::new(Leased {
            inner,
            info,
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            searches: AtomicUsize::new(0),
        })
    }

    fn enter(&self) -> Lease<'_> {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(n, Ordering::SeqCst);
        self.searches.fetch_add(1, Ordering::SeqCst);
        Lease(self)
    }
}

impl Device for Leased {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let _lease = self.enter();
        self.inner.search(job, range, ctl)
    }
    fn search_nonce(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        let _lease = self.enter();
        self.inner.search_nonce(job, range, ctl)
    }
    fn nonces_tried(&self) -> u64 {
        self.inner.nonces_tried()
    }
    fn prepare(&self) -> Result<(), Error> {
        self.inner.prepare()
    }
    fn launch_stats(&self) -> Option<curlpow::device::LaunchStats> {
        self.inner.launch_stats()
    }
}

/// The engine on the four PoCL devices (and lavapipe where there is one) alone, each wrapped
/// in [`Leased`]; `None` without PoCL.
fn leased_engine() -> Option<(Engine, Vec<Arc<Leased>>)> {
    let opts = DiscoverOptions {
        include_software: true,
    };
    let mut found: Vec<Arc<dyn Device>> = curlpow::internal::opencl::discover(&opts)
        .devices
        .into_iter()
        .filter(|d| d.info().software)
        .collect();
    if !common::gpu_available("opencl", !found.is_empty()) {
        return None;
    }
    assert_eq!(found.len(), DEVICES, "POCL_DEVICES asks for {DEVICES}");
    #[cfg(feature = "wgpu")]
    found.extend(
        curlpow::internal::wgpu::discover(&opts, false)
            .devices
            .into_iter()
            .filter(|d| d.info().software)
            .take(1),
    );
    let leased: Vec<Arc<Leased>> = found.into_iter().map(Leased::new).collect();
    let mut b = Engine::builder().local_devices(false).tune(false);
    for d in &leased {
        b = b.add_device(d.clone());
    }
    Some((b.build().unwrap(), leased))
}

fn searches(leased: &[Arc<Leased>]) -> Vec<usize> {
    leased
        .iter()
        .map(|d| d.searches.load(Ordering::SeqCst))
        .collect()
}

#[test]
fn each_device_is_leased_to_one_search_at_a_time() {
    if !in_child("each_device_is_leased_to_one_search_at_a_time") {
        return;
    }
    let Some((engine, leased)) = leased_engine() else {
        return;
    };
    // Many callers at once, more than devices: 12 threads, 2 searches each.
    let callers = 12;
    let start = Arc::new(Barrier::new(callers));
    let threads: Vec<_> = (0..callers)
        .map(|c| {
            let (engine, start) = (engine.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for k in 0..2u64 {
                    let tx = common::random_tx(1000 + 10 * c as u64 + k);
                    let done = engine.pow(&tx, 9).expect("a nonce");
                    common::assert_valid_pow(&tx, &done.transaction, 9);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a caller");
    }
    // Identical devices, every one kept: none merged as the same hardware.
    assert_eq!(
        engine.devices().len(),
        leased.len(),
        "{:?}",
        engine.devices()
    );
    for d in &leased {
        assert!(
            d.most.load(Ordering::SeqCst) <= 1,
            "{} ran searches at once",
            d.info().id
        );
    }

    // A batch spreads over several devices.
    let before = searches(&leased);
    let txs: Vec<Transaction> = (0..16).map(|k| common::random_tx(2000 + k)).collect();
    let results = engine.pow_many(&txs, &PowOptions::mwm(9));
    for (tx, r) in txs.iter().zip(&results) {
        let done = r.as_ref().expect("a nonce");
        common::assert_valid_pow(tx, &done.transaction, 9);
    }
    // Which devices take part depends on their measured rates: a waiter waits for a faster
    // busy device rather than take one expected to finish later, and four PoCL devices sharing
    // this host's cores measure unevenly. So the check is that the batch ran on several of the
    // four, not on every one.
    let after = searches(&leased);
    let used = (0..DEVICES).filter(|&k| after[k] > before[k]).count();
    assert!(
        used >= 2,
        "the batch ran on {used} of the {DEVICES} devices: {before:?} -> {after:?}"
    );

    // --latency: one PoW on every device at once.
    let before = searches(&leased);
    let tx = common::random_tx(3000);
    let done = engine
        .pow_with(&tx, &PowOptions::mwm(10).latency(true))
        .expect("a nonce");
    common::assert_valid_pow(&tx, &done.transaction, 10);
    let after = searches(&leased);
    for (k, d) in leased.iter().enumerate() {
        assert!(
            after[k] > before[k],
            "{} had no part of the latency-mode PoW: {before:?} -> {after:?}",
            d.info().id
        );
    }
    for d in &leased {
        assert_eq!(d.most.load(Ordering::SeqCst), 1, "{}", d.info().id);
    }
}

/// A batch on the four devices beside two injected faulty ones (a launch error on every other
/// search, a wrong nonce on every other): every transaction answered, each nonce valid, and
/// the faults did happen.
#[test]
fn a_device_faulting_mid_batch_loses_no_pow() {
    if !cfg!(feature = "fault-injection") {
        curlpow_testkit::skip::skip("built without the fault-injection feature");
        return;
    }
    let Some(pocl) = pocl_devices() else {
        return;
    };
    let txs: Vec<Transaction> = (0..16).map(|k| common::random_tx(5000 + k)).collect();
    let input: String = txs.iter().map(|t| format!("{}\n", t.to_trytes())).collect();
    let dir = std::env::temp_dir().join(format!("curlpow-multi-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("batch.trytes");
    std::fs::write(&file, input).unwrap();
    let out = curlpow(&[
        "pow",
        "--mwm",
        "8",
        "--stats",
        "--quiet",
        "--software",
        "--device",
        &format!("{},fault:0,fault:1", ids(&pocl)),
        file.to_str().unwrap(),
    ])
    .env("CURLPOW_INJECT_FAULT", "launch-error:0.5,wrong-nonce:0.5")
    .output()
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<Transaction> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(lines.len(), txs.len(), "{err}");
    for (tx, done) in txs.iter().zip(&lines) {
        common::assert_valid_pow(tx, done, 8);
    }
    let faults: u64 = err
        .lines()
        .filter(|l| l.starts_with("fault:"))
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<u64>().ok())
        .sum();
    assert!(faults >= 1, "no fault happened: {err}");
}

/// `serve` on the four devices, attached to by 8 callers at once: every attach answered and
/// valid, every search run on the four (`curlpow_device_searches_total`), no fault.
#[test]
fn serve_answers_many_callers_on_the_four_devices() {
    let Some(pocl) = pocl_devices() else {
        return;
    };
    let device = ids(&pocl);
    let env: Vec<(&str, &str)> = POCL
        .iter()
        .copied()
        .chain([("CURLPOW_TUNE", "0")])
        .collect();
    let srv = Arc::new(Srv::start_with_env(
        env!("CARGO_BIN_EXE_curlpow"),
        &["--software", "--device", &device, "--max-mwm", "10"],
        &env,
    ));
    let (trunk, branch, request) = attach_check::iota_js_bundle();
    let body = json!({
        "command": "attachToTangle",
        "trunkTransaction": trunk.to_trytes(),
        "branchTransaction": branch.to_trytes(),
        "minWeightMagnitude": 9,
        "trytes": request.iter().map(|t| t.to_trytes()).collect::<Vec<_>>(),
    })
    .to_string();
    let callers = 8;
    let start = Arc::new(Barrier::new(callers));
    let before = attach_check::now_ms();
    let threads: Vec<_> = (0..callers)
        .map(|_| {
            let (srv, start, body) = (srv.clone(), start.clone(), body.clone());
            std::thread::spawn(move || {
                start.wait();
                let (status, v, _) = srv.post(&body);
                (status, v)
            })
        })
        .collect();
    for t in threads {
        let (status, v) = t.join().unwrap();
        assert_eq!(status, 200, "{v}");
        let out: Vec<Transaction> = v["trytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().parse().unwrap())
            .collect();
        attach_check::check(
            &request,
            &trunk,
            &branch,
            9,
            before..=attach_check::now_ms(),
            &out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    // Every search ran on the four devices, none faulted. (How they share the searches is the
    // engine's: software drivers share the host's cores, so it keeps them from running side by
    // side; the spread over GPUs is checked on the engine above.)
    let (_, metrics) = srv.get("/metrics");
    let mut searches = 0.0;
    for d in &pocl {
        let id = d["id"].as_str().unwrap();
        searches += srv.metric(&format!("curlpow_device_searches_total{{device=\"{id}\"}}"));
        let faults = srv.metric(&format!("curlpow_device_faults_total{{device=\"{id}\"}}"));
        assert_eq!(faults, 0.0, "{id}:\n{metrics}");
    }
    assert!(
        searches >= (callers * request.len()) as f64,
        "{searches} searches for {callers} attaches of {}:\n{metrics}",
        request.len()
    );
}
