//! The device-selection layer measured without the devices competing for the CPU: simulated GPUs
//! that take a fixed time per search (like a real GPU whose host thread only waits) and return a
//! nonce known to be valid. Shows batch throughput on 1..=4 devices and latency mode versus one.
//!
//! `cargo bench --bench selection` (prints a table; no criterion: each figure is a whole batch).

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
    let mwm = 6;
    let n = 32;
    let per_search = Duration::from_millis(20);
    // Solve each transaction once on the CPU; the simulated GPUs answer with those nonces.
    let cpu = Engine::builder().threads(2).build().unwrap();
    let txs: Vec<Transaction> = (0..n)
        .map(|i| {
            let mut t = curlpow::bench_transaction().trits().to_vec();
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
