//! Threading experiments behind `docs/threading-model.md` (not a criterion bench: it prints
//! one table per experiment). `cargo bench --bench threading`.
//!
//! 1. Whole PoW calls at MWM 1..=6: the engine's persistent pool versus building the threads
//!    (a pool) for every call, the dcurl/libtuv pattern.
//! 2. Cancellation latency: time from `CancelToken::cancel` to `pow_with` returning.
//! 3. Per-worker counters versus one shared atomic (the HAProxy lesson), in the real search
//!    loop (one update per transform) and in a tight loop (one update per 64 nonces).
//! 4. Oversubscription and load balance: nonces each worker tried when threads > cores.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use curlpow::device::Device;
use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, SearchJob};
use curlpow::internal::cpu::{CpuDevice, PoolConfig};
use curlpow::internal::KernelHooks;
use curlpow::internal::{Counters, Worker};
use curlpow::{CancelToken, CpuKernel, Engine, PowOptions};
use curlpow_testkit::common;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pool_vs_spawn(kernel: CpuKernel, threads: usize) {
    println!(
        "\n## PoW time, persistent pool vs pool built per call ({kernel}, {threads} threads, \
         median of 200 transactions)"
    );
    println!(
        "The search alone (job prepared once, `Device::search`), and the whole `Engine::pow` call"
    );
    println!(
        "(which also absorbs the 32-block mid-state with the scalar Curl and checks the nonce)."
    );
    println!();
    println!("| MWM | search, persistent pool µs | search, pool per call µs | whole call, persistent µs | whole call, pool per call µs |");
    println!("|---:|---:|---:|---:|---:|");
    let engine = Engine::builder()
        .threads(threads)
        .cpu_kernel(kernel)
        .build()
        .unwrap();
    let cfg = PoolConfig {
        threads,
        pin: false,
    };
    let txs: Vec<_> = (0..200).map(|s| common::random_tx(500 + s)).collect();
    for mwm in 1..=6 {
        let mut cols: [Vec<f64>; 4] = Default::default();
        for tx in &txs {
            let job = SearchJob::new(tx, mwm).unwrap();
            let t = Instant::now();
            let ctl = SearchControl::new(None, None);
            let out = curlpow::internal::engine_cpu(&engine)
                .search(&job, CounterRange::ALL, &ctl)
                .unwrap();
            cols[0].push(t.elapsed().as_secs_f64() * 1e6);
            assert!(job.verify(out.hit.unwrap()).is_some());
            let t = Instant::now();
            let dev = CpuDevice::new(cfg, kernel).unwrap();
            let ctl = SearchControl::new(None, None);
            let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
            drop(dev);
            cols[1].push(t.elapsed().as_secs_f64() * 1e6);
            assert!(job.verify(out.hit.unwrap()).is_some());
            let t = Instant::now();
            engine.pow(tx, mwm).unwrap();
            cols[2].push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let e = Engine::builder()
                .threads(threads)
                .cpu_kernel(kernel)
                .build()
                .unwrap();
            e.pow(tx, mwm).unwrap();
            drop(e);
            cols[3].push(t.elapsed().as_secs_f64() * 1e6);
        }
        let m = cols.map(median);
        println!(
            "| {mwm} | {:.0} | {:.0} | {:.0} | {:.0} |",
            m[0], m[1], m[2], m[3]
        );
    }
}

fn cancel_latency(kernel: CpuKernel, threads: usize) {
    let engine = Engine::builder()
        .threads(threads)
        .cpu_kernel(kernel)
        .build()
        .unwrap();
    let tx = common::random_tx(9);
    let mut lat = Vec::new();
    for _ in 0..30 {
        let token = CancelToken::new();
        let opts = PowOptions::mwm(243).cancel(token.clone());
        let (e, tx) = (engine.clone(), tx.clone());
        let h = std::thread::spawn(move || {
            let r = e.pow_with(&tx, &opts);
            (Instant::now(), r.is_err())
        });
        std::thread::sleep(Duration::from_millis(30));
        let t = Instant::now();
        token.cancel();
        let (done, cancelled) = h.join().unwrap();
        assert!(cancelled);
        lat.push(done.duration_since(t).as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "\n## Cancellation latency ({kernel}, {threads} threads, 30 runs): median {:.0} µs, \
         p90 {:.0} µs, max {:.0} µs",
        lat[lat.len() / 2],
        lat[lat.len() * 9 / 10],
        lat[lat.len() - 1]
    );
}

/// Run `threads` plain threads on disjoint ranges for `dur`, each publishing its count to
/// `counters` slot `slot(i)`; returns nonces per second and each worker's count.
fn run_workers(
    kernel: CpuKernel,
    threads: usize,
    counters: &Counters,
    shared: bool,
    dur: Duration,
) -> (f64, Vec<u64>) {
    let job = SearchJob::new(&common::random_tx(3), 243).unwrap();
    let ctl = SearchControl::new(None, Some(Instant::now() + dur));
    let t = Instant::now();
    let tried: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (job, ctl) = (&job, &ctl);
                s.spawn(move || {
                    let mut w = Worker::new(ctl, counters, if shared { 0 } else { i });
                    kernel
                        .search_range(job, CounterRange::ALL.part(i, threads), &mut w)
                        .unwrap();
                    w.tried
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: u64 = tried.iter().sum();
    (total as f64 / t.elapsed().as_secs_f64(), tried)
}

fn counters_experiment(kernel: CpuKernel, threads: usize) {
    println!("\n## Per-worker counters vs one shared atomic ({kernel}, {threads} threads)");
    println!("| counting | search loop (1 update / transform): M nonces/s | tight loop (1 update / 64 nonces): M updates/s |");
    println!("|---|---:|---:|");
    for shared in [false, true] {
        let counters = Counters::new(if shared { 1 } else { threads });
        let rates: Vec<f64> = (0..3)
            .map(|_| run_workers(kernel, threads, &counters, shared, Duration::from_secs(2)).0)
            .collect();
        // The tight loop: what counting every 64-lane word would cost.
        let slots: Vec<CachePadded<AtomicU64>> = (0..threads)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect();
        let n = 20_000_000u64;
        let t = Instant::now();
        std::thread::scope(|s| {
            for i in 0..threads {
                let slot = &slots[if shared { 0 } else { i }];
                s.spawn(move || {
                    for _ in 0..n {
                        slot.fetch_add(64, Ordering::Relaxed);
                    }
                });
            }
        });
        let ups = (n * threads as u64) as f64 / t.elapsed().as_secs_f64() / 1e6;
        println!(
            "| {} | {:.2} | {:.0} |",
            if shared {
                "one shared atomic"
            } else {
                "per-worker, cache-padded"
            },
            median(rates) / 1e6,
            ups
        );
    }
}

fn oversubscription(kernel: CpuKernel) {
    println!(
        "\n## Threads vs cores ({kernel}; host has {} CPUs)",
        num_cpus()
    );
    println!("| threads | M nonces/s (2 s) | nonces per worker (M) |");
    println!("|---:|---:|---|");
    for threads in [1usize, 2, 3, 4] {
        let counters = Counters::new(threads);
        let (rate, tried) = run_workers(kernel, threads, &counters, false, Duration::from_secs(2));
        let per: Vec<String> = tried
            .iter()
            .map(|t| format!("{:.1}", *t as f64 / 1e6))
            .collect();
        println!("| {threads} | {:.2} | {} |", rate / 1e6, per.join(" / "));
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters nothing here.
    let kernel = CpuKernel::detect();
    let threads = num_cpus().min(2);
    println!(
        "# Threading experiments: kernel {kernel}, {threads} threads, {}",
        curlpow::internal::cpu::cpu_name()
    );
    pool_vs_spawn(kernel, threads);
    cancel_latency(kernel, threads);
    counters_experiment(kernel, threads);
    oversubscription(kernel);
}
