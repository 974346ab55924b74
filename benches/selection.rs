//! The device-selection layer measured without the devices competing for the CPU: simulated GPUs
//! that take a fixed time per search (like a real GPU whose host thread only waits) and return a
//! nonce known to be valid. Shows batch throughput on 1..=4 devices and latency mode versus one.
//!
//! Then the real devices of this host, software drivers included (PoCL, lavapipe where installed):
//! 32 callers on one engine with the slow devices added against the CPU alone (adding a device
//! must never make the host slower), and where the searches of `--backend opencl,wgpu` go (the
//! faster of two unequal devices should take them while it is free).
//!
//! `cargo bench --all-features --bench selection` (prints tables; no criterion: each figure is a
//! whole batch). `CURLPOW_BENCH_CALLS` sets the PoWs per caller of the real-device part (20).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, Hit, SearchJob};
use curlpow::device::{Device, DeviceInfo, SearchOutcome};
use curlpow::internal::search::{COUNTER_TRITS, LANE_TRITS, LAST_BLOCK};
use curlpow::trits::read_balanced;
use curlpow::{Backend, DeviceKind, Engine, Error, PowOptions, Selection, Transaction};

/// A simulated GPU: sleeps `per_search` (in steps, honouring the stop flag) then answers with the
/// known nonce of the transaction, if it knows one and the nonce lies in its range.
struct SimGpu {
    info: DeviceInfo,
    per_search: Duration,
    known: Vec<(Transaction, Hit)>,
    /// Nonces it claims to try: 1e9 per second of searching, so its measured speed is a GPU's.
    tried: AtomicU64,
}

impl Device for SimGpu {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let t0 = Instant::now();
        let count = |t0: Instant| {
            let n = (t0.elapsed().as_secs_f64() * 1e9) as u64;
            self.tried.fetch_add(n, Ordering::Relaxed);
            n
        };
        while t0.elapsed() < self.per_search {
            if ctl.should_stop() {
                return Ok(SearchOutcome {
                    hit: None,
                    nonces: count(t0),
                });
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let hit = self
            .known
            .iter()
            .find(|(tx, _)| tx == job.transaction())
            .map(|(_, h)| *h)
            .filter(|h| h.counter >= range.start && h.counter - range.start < range.len);
        Ok(SearchOutcome {
            hit,
            nonces: count(t0),
        })
    }
    fn nonces_tried(&self) -> u64 {
        self.tried.load(Ordering::Relaxed)
    }
}

fn hit_of(tx: &Transaction) -> Hit {
    let block = &tx.trits()[LAST_BLOCK..];
    Hit {
        lane: (read_balanced(&block[LANE_TRITS]) + 364) as usize,
        counter: read_balanced(&block[COUNTER_TRITS]) as u64,
    }
}

fn main() {
    simulated();
    real_devices();
}

/// 32 threads × `calls` PoWs at MWM 5, distinct transactions: wall time and searches per device.
fn callers(e: &Engine, sel: &Selection, calls: u64) -> (f64, Vec<(String, u64)>) {
    let t0 = Instant::now();
    let threads: Vec<_> = (0..32u64)
        .map(|t| {
            let (e, sel) = (e.clone(), sel.clone());
            std::thread::spawn(move || {
                for k in 0..calls {
                    let mut trits = curlpow::bench::bench_transaction().trits().to_vec();
                    let tag = t * 1000 + k;
                    for (j, trit) in trits[7776..7790].iter_mut().enumerate() {
                        *trit = ((tag / 3u64.pow(j as u32)) % 3) as i8 - 1;
                    }
                    let tx = Transaction::from_trits(&trits).unwrap();
                    let r = e
                        .pow_with(&tx, &PowOptions::mwm(5).selection(sel.clone()))
                        .unwrap();
                    assert!(r.transaction.weight() >= 5);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let dt = t0.elapsed().as_secs_f64();
    let per = e
        .device_report()
        .into_iter()
        .map(|d| (d.info.id, d.stats.searches))
        .collect();
    (dt, per)
}

fn real_devices() {
    let calls: u64 = std::env::var("CURLPOW_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let cpu_only = Engine::builder().backends(&[Backend::Cpu]).build().unwrap();
    let all = Engine::builder().include_software(true).build().unwrap();
    println!();
    println!(
        "real devices: {:?}",
        all.devices()
            .iter()
            .map(|d| d.id.clone())
            .collect::<Vec<_>>()
    );
    // Alternated, three rounds each, so that a change in the host's load hits both alike; the
    // median of each side is compared.
    let (mut cpu_times, mut all_times, mut per) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        cpu_times.push(callers(&cpu_only, &Selection::default(), calls).0);
        let (t, p) = callers(&all, &Selection::default(), calls);
        all_times.push(t);
        per = p;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t_cpu, t_all) = (median(&mut cpu_times), median(&mut all_times));
    println!(
        "32 callers x {calls} PoWs at MWM 5, median of 3 alternated rounds: CPU alone {t_cpu:.2} s; CPU + software drivers {t_all:.2} s ({:.2}x the CPU alone; rounds {cpu_times:.2?} vs {all_times:.2?}); searches per device, all rounds {per:?}",
        t_all / t_cpu
    );
    let gpus = Selection {
        backends: vec![Backend::Opencl, Backend::Wgpu],
        ..Default::default()
    };
    if all.check_selection(&gpus).is_ok() {
        let before: Vec<(String, u64)> = all
            .device_report()
            .into_iter()
            .map(|d| (d.info.id, d.stats.searches))
            .collect();
        let (t, per) = callers(&all, &gpus, calls / 4 + 1);
        let delta: Vec<(String, u64)> = per
            .iter()
            .zip(&before)
            .map(|((id, n), (_, b))| (id.clone(), n - b))
            .filter(|(id, _)| !id.starts_with("cpu"))
            .collect();
        println!("--backend opencl,wgpu, 32 callers: {t:.2} s; searches per device {delta:?}");
    }
}

fn simulated() {
    let mwm = 6;
    let n = 32;
    let per_search = Duration::from_millis(20);
    // Solve each transaction once on the CPU; the simulated GPUs answer with those nonces.
    let cpu = Engine::builder().threads(2).build().unwrap();
    let txs: Vec<Transaction> = (0..n)
        .map(|i| {
            let mut t = curlpow::bench::bench_transaction().trits().to_vec();
            t[7776] = (i % 3) as i8 - 1;
            t[7777] = (i / 3 % 3) as i8 - 1;
            t[7778] = (i / 9 % 3) as i8 - 1;
            t[7779] = (i / 27 % 3) as i8 - 1;
            Transaction::from_trits(&t).unwrap()
        })
        .collect();
    let known: Vec<(Transaction, Hit)> = txs
        .iter()
        .map(|tx| {
            let r = cpu.pow(tx, mwm).unwrap();
            (tx.clone(), hit_of(&r.transaction))
        })
        .collect();
    // The host's share of every search: the scalar mid-state (32 transforms) and the host check.
    let t0 = Instant::now();
    for tx in &txs {
        std::hint::black_box(SearchJob::new(tx, mwm).unwrap());
    }
    let mid = t0.elapsed().as_secs_f64() / n as f64 * 1e3;
    println!("host mid-state per search (scalar, 32 transforms): {mid:.2} ms");
    println!(
        "simulated GPUs: {per_search:?} per search; batch of {n} transactions (MWM {mwm}); CPU pool excluded"
    );
    println!(
        "{:<34} {:>10} {:>12} {:>8}",
        "devices", "batch", "searches/s", "speedup"
    );
    let mut base = 0.0;
    for k in 1..=4 {
        let mut b = Engine::builder().threads(1).backends(&[Backend::Cpu]);
        for d in 0..k {
            b = b.add_device(Arc::new(SimGpu {
                info: DeviceInfo::new(
                    format!("sim:{d}"),
                    Backend::Custom,
                    format!("simulated GPU {d}"),
                    DeviceKind::Gpu,
                ),
                per_search,
                known: known.clone(),
                tried: AtomicU64::new(0),
            }));
        }
        let e = b.build().unwrap();
        let opts = PowOptions::mwm(mwm).selection(Selection {
            exclude: vec!["cpu".into()],
            ..Default::default()
        });
        let t0 = Instant::now();
        let results = e.pow_many(&txs, &opts);
        let dt = t0.elapsed().as_secs_f64();
        // Checked outside the timed region: a full reference hash costs ~2.5 ms per result.
        for r in results {
            assert!(r.unwrap().transaction.weight() >= mwm);
        }
        if k == 1 {
            base = dt;
        }
        // The devices' own time per search: what the batch would take with perfect hand-offs.
        let (busy, searches) = e
            .device_report()
            .iter()
            .filter(|d| d.info.id.starts_with("sim:"))
            .fold((0.0, 0u64), |(b, s), d| {
                (b + d.stats.busy_seconds, s + d.stats.searches)
            });
        println!(
            "{:<34} {:>9.3}s {:>12.1} {:>7.2}x   (device busy {:.1} ms per search, {:.0}% of the batch)",
            format!("{k} simulated GPU(s), pow_many"),
            dt,
            n as f64 / dt,
            base / dt,
            busy / searches as f64 * 1e3,
            busy / (k as f64 * dt) * 100.0
        );
        if k == 4 {
            // Latency mode: one search at a time on all four; the known nonce lies in the range
            // of exactly one device, which answers after `per_search`.
            let per_search = |opts: &PowOptions| {
                let mut total = Duration::ZERO;
                for tx in &txs[..8] {
                    let t0 = Instant::now();
                    let r = e.pow_with(tx, opts).unwrap();
                    total += t0.elapsed();
                    assert!(r.transaction.weight() >= mwm);
                }
                total.as_secs_f64() / 8.0 * 1e3
            };
            let lat = per_search(&opts.clone().latency(true));
            let single = per_search(&PowOptions::mwm(mwm).selection(Selection {
                devices: vec!["sim:0".into()],
                ..Default::default()
            }));
            println!(
                "latency mode on 4: {lat:.1} ms per search; one device: {single:.1} ms per search (overhead {:.2} ms)",
                lat - single
            );
        }
    }
}
