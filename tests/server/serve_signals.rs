//! `curlpow serve` stopped by SIGTERM or SIGINT with the GPU drivers loaded (PoCL for OpenCL,
//! lavapipe for Vulkan, both installing signal handlers of their own): every attach in flight
//! is answered with a valid PoW, the process prints "stopped" and exits 0. The drivers are
//! loaded by `--software` (the default backends with the software drivers used). Without them
//! the test prints `SKIPPED:`, or fails when `CURLPOW_REQUIRE_BACKENDS` names the backend.

use crate::attach_check;
use crate::common;
use crate::server_support::Srv;

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use curlpow::{attach::Hash, Transaction};
use serde_json::{json, Value};

/// Whether PoCL and lavapipe are there to be loaded (each a `SKIPPED:` line, or a failure
/// under `CURLPOW_REQUIRE_BACKENDS`, when missing).
fn drivers_present() -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_curlpow"))
        .args(["devices", "--software"])
        .output()
        .expect("curlpow devices");
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    let opencl = common::gpu_available("opencl", listed.contains("opencl:"));
    let wgpu = common::gpu_available("wgpu", listed.contains("wgpu:"));
    opencl && wgpu
}

/// The MWM of the attaches: seconds of search each on this host, so that all of them are in
/// flight when the signal comes.
const MWM: usize = 13;

/// Start `n` attaches of two transactions at [`MWM`]; each thread returns (status, body) or
/// the transport error (no answer).
type Answer = Result<(u16, String), String>;

fn attaches(srv: &Srv, n: u64) -> Vec<(Vec<Transaction>, std::thread::JoinHandle<Answer>)> {
    (0..n)
        .map(|k| {
            let txs: Vec<Transaction> = (0..2)
                .map(|i| common::random_tx(7000 + 10 * k + i))
                .collect();
            let body = json!({
                "command": "attachToTangle",
                "trunkTransaction": Hash::NULL.to_trytes(),
                "branchTransaction": Hash::NULL.to_trytes(),
                "minWeightMagnitude": MWM,
                "trytes": txs.iter().map(|t| t.to_trytes()).collect::<Vec<_>>(),
            })
            .to_string();
            let url = format!("{}/", srv.base);
            let h = std::thread::spawn(move || {
                let mut r = Srv::agent()
                    .post(url)
                    .header("X-IOTA-API-Version", "1")
                    .send(&body)
                    .map_err(|e| e.to_string())?;
                let status = r.status().as_u16();
                Ok((
                    status,
                    r.body_mut().read_to_string().map_err(|e| e.to_string())?,
                ))
            });
            (txs, h)
        })
        .collect()
}

/// One server at a time: each loads both drivers and searches on every device.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn stop_with(signal: libc::c_int, name: &str) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !drivers_present() {
        return;
    }
    let mut srv = Srv::start(
        crate::BIN,
        &[
            "--software",
            "--concurrency",
            "8",
            "--per-client",
            "8",
            "--shutdown-grace",
            "120",
        ],
    );
    let jobs = attaches(&srv, 6);
    // Every attach in flight (running) before the signal: a request not yet sent then would
    // be refused, rightly, as a new connection during shutdown.
    let t0 = Instant::now();
    while srv.running() < 6 && !jobs.iter().any(|(_, h)| h.is_finished()) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the attaches never all ran"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = attach_check::now_ms();
    // SAFETY: kill(2) on our own child's pid with a valid signal number; no memory involved.
    assert_eq!(
        unsafe { libc::kill(srv.child.id() as libc::pid_t, signal) },
        0
    );
    for (k, (txs, h)) in jobs.into_iter().enumerate() {
        let (status, text) = h
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("attach {k} got no answer ({e}); log {:?}", srv.log()));
        assert_eq!(status, 200, "attach {k}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        let out: Vec<Transaction> = v["trytes"]
            .as_array()
            .unwrap_or_else(|| panic!("no trytes in {v}"))
            .iter()
            .map(|t| t.as_str().unwrap().parse().unwrap())
            .collect();
        attach_check::check(
            &txs,
            &Hash::NULL,
            &Hash::NULL,
            MWM,
            0..=before + 600_000,
            &out,
        )
        .unwrap_or_else(|e| panic!("attach {k}: {e}"));
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = srv.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "still running; log {:?}",
            srv.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let log = srv.log();
    assert_eq!(status.code(), Some(0), "{status:?}; log {log:?}");
    assert!(
        log.iter()
            .any(|l| l.contains(&format!(" {name}: shutting down"))),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.ends_with(" stopped")), "{log:?}");
}

#[test]
fn sigterm_with_the_drivers_loaded_answers_every_attach_and_exits_0() {
    stop_with(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sigint_with_the_drivers_loaded_answers_every_attach_and_exits_0() {
    stop_with(libc::SIGINT, "SIGINT");
}
