//! The library's own attachToTangle, one call after another (what one HTTP client of
//! `curlpow serve` gets, minus HTTP), then the server's overhead measured A/B: the same attach
//! through the library and through the server (in this process, on loopback, one real HTTP
//! client), interleaved call by call so a loaded host slows both alike. One transaction per call.
//!
//! `cargo bench --bench attach` (prints tables; no criterion: per-call percentiles matter here).
//! `CURLPOW_BENCH_CALLS=X` scales the call counts.

use std::time::{Duration, Instant};

use curlpow::server::{Config, Server};
use curlpow::{attach::Hash, Backend, Engine, PowOptions, Transaction};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let engine = Engine::builder().backends(&[Backend::Cpu]).build().unwrap();
    let tx: Transaction = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/transaction.trytes"
    ))
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    let trunk: Hash = "A".repeat(81).parse().unwrap();
    let branch: Hash = "B".repeat(81).parse().unwrap();
    let scale: f64 = std::env::var("CURLPOW_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    println!(
        "library attach_to_tangle, 1 transaction per call, CPU {} x {} threads",
        curlpow::internal::engine_cpu(&engine).kernel().name(),
        curlpow::internal::engine_cpu(&engine).threads()
    );
    println!(
        "{:>4} {:>6} {:>10} {:>10} {:>10} {:>10}",
        "mwm", "calls", "calls/s", "mean", "p50", "p99"
    );
    for (mwm, calls) in [(1usize, 2000usize), (9, 400), (14, 40)] {
        let calls = ((calls as f64 * scale) as usize).max(5);
        let opts = PowOptions::mwm(mwm);
        // Warm up the pool and the caches.
        for _ in 0..3 {
            engine
                .attach_to_tangle(&trunk, &branch, std::slice::from_ref(&tx), &opts)
                .unwrap();
        }
        let mut times = Vec::with_capacity(calls);
        let t0 = Instant::now();
        for _ in 0..calls {
            let t = Instant::now();
            let done = engine
                .attach_to_tangle(&trunk, &branch, std::slice::from_ref(&tx), &opts)
                .unwrap();
            times.push(t.elapsed());
            assert!(done.hashes[0].weight() >= mwm);
        }
        let total = t0.elapsed();
        times.sort();
        println!(
            "{mwm:>4} {calls:>6} {:>10.1} {:>10.3?} {:>10.3?} {:>10.3?}",
            calls as f64 / total.as_secs_f64(),
            total / calls as u32,
            percentile(&times, 0.5),
            percentile(&times, 0.99)
        );
    }
    ab_overhead(&engine, &tx, &trunk, &branch, scale);
}

/// CPU time of this whole process (every thread: client, server, pool), from getrusage.
fn process_cpu() -> Duration {
    // SAFETY: getrusage only writes the rusage struct we pass, which is zero-initialised plain
    // data of the right type.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is a valid `who`.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Library vs server, interleaved: (p50, mean) of each and the difference of the medians.
fn ab_overhead(engine: &Engine, tx: &Transaction, trunk: &Hash, branch: &Hash, scale: f64) {
    let mut config = Config::default();
    config.listen = "127.0.0.1:0".parse().unwrap();
    let server = Server::start(engine.clone(), config).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    println!();
    println!("A/B, interleaved: the library's attach vs the same attach through curlpow serve (HTTP/1.1 keep-alive, loopback)");
    println!(
        "{:>4} {:>6} {:>12} {:>12} {:>12} {:>12} {:>14} {:>12} {:>12}",
        "mwm",
        "pairs",
        "lib p50",
        "http p50",
        "lib mean",
        "http mean",
        "p50 overhead",
        "lib cpu",
        "http cpu"
    );
    for (mwm, pairs) in [(1usize, 2000usize), (9, 300)] {
        let pairs = ((pairs as f64 * scale) as usize).max(5);
        let opts = PowOptions::mwm(mwm);
        let body = serde_json::json!({
            "command": "attachToTangle",
            "trunkTransaction": trunk.to_trytes(),
            "branchTransaction": branch.to_trytes(),
            "minWeightMagnitude": mwm,
            "trytes": [tx.to_trytes()],
        })
        .to_string();
        let http = |cpu: &mut Duration| {
            let c = process_cpu();
            let t = Instant::now();
            let mut r = agent
                .post(&url)
                .header("X-IOTA-API-Version", "1")
                .send(&body)
                .unwrap();
            assert_eq!(r.status().as_u16(), 200);
            let text = r.body_mut().read_to_string().unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["trytes"].as_array().map(|a| a.len()), Some(1));
            let d = t.elapsed();
            *cpu += process_cpu() - c;
            d
        };
        let lib = |cpu: &mut Duration| {
            let c = process_cpu();
            let t = Instant::now();
            engine
                .attach_to_tangle(trunk, branch, std::slice::from_ref(tx), &opts)
                .unwrap();
            let d = t.elapsed();
            *cpu += process_cpu() - c;
            d
        };
        let (mut ca, mut cb) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..5 {
            http(&mut cb);
            lib(&mut ca);
        }
        let (mut ca, mut cb) = (Duration::ZERO, Duration::ZERO);
        let (mut a, mut b) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
        for i in 0..pairs {
            // Alternate which goes first, so neither always follows the other.
            if i % 2 == 0 {
                a.push(lib(&mut ca));
                b.push(http(&mut cb));
            } else {
                b.push(http(&mut cb));
                a.push(lib(&mut ca));
            }
        }
        let mean = |v: &[Duration]| v.iter().sum::<Duration>() / v.len() as u32;
        let (ma, mb) = (mean(&a), mean(&b));
        a.sort();
        b.sort();
        let (pa, pb) = (percentile(&a, 0.5), percentile(&b, 0.5));
        println!(
            "{mwm:>4} {pairs:>6} {:>12.3?} {:>12.3?} {:>12.3?} {:>12.3?} {:>13.3}ms {:>12.3?} {:>12.3?}",
            pa,
            pb,
            ma,
            mb,
            (pb.as_secs_f64() - pa.as_secs_f64()) * 1e3,
            ca / pairs as u32,
            cb / pairs as u32
        );
    }
    server.shutdown().unwrap();
}
