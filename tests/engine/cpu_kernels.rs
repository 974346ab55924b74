//! Every CPU kernel this machine supports, against the scalar reference: the bit-sliced
//! transform lane by lane, the public Curl-P-81 vectors, PoW validity, and disjoint nonces.
//! A kernel the CPU lacks is skipped with a printed message.

use crate::common;

use std::collections::HashSet;

use curlpow::device::{CounterRange, SearchJob};
use curlpow::internal::KernelHooks;
use curlpow::{curl::STATE_LEN, CpuKernel, Engine, Transaction};

#[test]
fn transform_matches_scalar_lane_by_lane() {
    for k in common::cpu_kernels() {
        // A full batch of random states, and a partial one (unused lanes stay zero).
        for (n, seed) in [(k.lanes(), 0xC0FFEE), (k.lanes() / 2 + 3, 0xBEEF)] {
            let mut got = common::random_states(n, seed);
            let mut want = got.clone();
            k.transform_states(&mut got).unwrap();
            for st in want.iter_mut() {
                curlpow::curl::transform(st);
            }
            for (lane, (g, w)) in got.iter().zip(&want).enumerate() {
                for i in 0..STATE_LEN {
                    assert_eq!(g[i], w[i], "{k}: lane {lane} trit {i}");
                }
            }
        }
    }
}

#[test]
fn transform_of_special_states() {
    // All zero (a fixed point), all +1, all -1, and single non-zero trits at the wrap-around
    // positions of the passes.
    let mut states = vec![[0i8; STATE_LEN], [1i8; STATE_LEN], [-1i8; STATE_LEN]];
    for i in [0usize, 1, 20, 21, 242, 243, 364, 365, 708, 719, 728] {
        let mut s = [0i8; STATE_LEN];
        s[i] = 1;
        states.push(s);
        s[i] = -1;
        states.push(s);
    }
    for k in common::cpu_kernels() {
        let mut got = states.clone();
        k.transform_states(&mut got).unwrap();
        for (g, s) in got.iter().zip(&states) {
            let mut w = *s;
            curlpow::curl::transform(&mut w);
            assert!(g == &w, "{k}: special state differs");
        }
    }
}

#[test]
fn public_vectors_through_the_kernel_transform() {
    for k in common::cpu_kernels() {
        let n = common::check_vectors_with(k.name(), |mut states| {
            k.transform_states(&mut states).expect("kernel transform");
            states
        });
        assert!(n > 400, "expected the public vectors");
    }
}

/// The CPU alone, with kernel `k`: on a host with a GPU the searches must still run here.
fn engine(k: CpuKernel, threads: usize) -> Engine {
    Engine::builder()
        .threads(threads)
        .cpu_kernel(k)
        .backends(&[curlpow::Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn search_is_valid_for_mwm_1_to_9() {
    for k in common::cpu_kernels() {
        let e = engine(k, 2);
        for mwm in 1..=9 {
            for seed in 0..3u64 {
                let tx = common::random_tx(seed * 31 + mwm as u64);
                let done = e.pow(&tx, mwm).unwrap();
                common::assert_valid_pow(&tx, &done.transaction, mwm);
            }
        }
    }
}

#[test]
fn search_on_public_pow_inputs() {
    for k in common::cpu_kernels() {
        let e = engine(k, 2);
        for (tx, mwm) in common::pow_inputs() {
            // Keep the suite fast: the MWM the suites used, capped at 9.
            let mwm = mwm.min(9);
            let done = e.pow(&tx, mwm).unwrap();
            common::assert_valid_pow(&tx, &done.transaction, mwm);
        }
    }
}

#[test]
fn hits_verify_and_are_the_lowest_lane() {
    // At MWM 1 about a third of the lanes hit: the kernel must return the lowest one.
    for k in common::cpu_kernels() {
        let tx = common::random_tx(77);
        let job = SearchJob::new(&tx, 1).unwrap();
        let e = engine(k, 1);
        let done = e.pow(&tx, 1).unwrap();
        common::assert_valid_pow(&tx, &done.transaction, 1);
        // With one worker and MWM 1 the first transform hits; lanes below the winner must miss.
        let nonce = &done.transaction.trits()[curlpow::Field::Nonce.trits()];
        let lane = (curlpow::trits::read_balanced(&nonce[..6]) + 364) as usize;
        let counter = curlpow::trits::read_balanced(&nonce[6..48]) as u64;
        for l in 0..lane {
            let hit = curlpow::device::Hit { counter, lane: l };
            assert!(
                job.verify(hit).is_none(),
                "{k}: lane {l} below {lane} also hits"
            );
        }
    }
}

#[test]
fn nonces_of_all_workers_are_distinct() {
    let tx = common::random_tx(5);
    let job = SearchJob::new(&tx, 9).unwrap();
    for k in common::cpu_kernels() {
        for workers in [2usize, 3, 8] {
            for range in [
                CounterRange::ALL,
                CounterRange {
                    start: 1000,
                    len: 40,
                },
            ] {
                let transforms = 13;
                let mut seen = HashSet::new();
                let mut total = 0;
                for w in 0..workers {
                    let part = range.part(w, workers);
                    let nonces = k.placed_nonces(&job, part, transforms).unwrap();
                    assert_eq!(
                        nonces.len() as u64,
                        k.lanes() as u64 * part.len.min(transforms as u64)
                    );
                    for n in nonces {
                        total += 1;
                        seen.insert(n);
                    }
                }
                assert_eq!(seen.len(), total, "{k}, {workers} workers: repeated nonces");
            }
        }
    }
}

#[test]
fn forcing_kernels_by_name() {
    for &k in CpuKernel::ALL {
        match CpuKernel::from_name(k.name()) {
            Ok(got) => assert_eq!(got, k),
            Err(e) => {
                assert!(!k.is_supported());
                assert!(e.to_string().contains(k.name()), "{e}");
            }
        }
    }
    assert!(CpuKernel::from_name("sse9").is_err());
    assert!(CpuKernel::detect().is_supported());
    let tx: Transaction = "9".repeat(2673).parse().unwrap();
    for k in common::cpu_kernels() {
        assert_eq!(curlpow::internal::engine_cpu(&engine(k, 1)).kernel(), k);
        engine(k, 1).pow(&tx, 3).unwrap();
    }
}

/// CPU time of this process so far (all threads, exited ones included), in nanoseconds, from
/// `/proc/self/stat` (user + system, in 10 ms ticks): rates per CPU-second stay meaningful on a
/// host shared with other jobs.
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) * 10_000_000
}

/// Not a test: rates for tuning (`cargo test --release --test cpu_kernels -- --ignored
/// --nocapture rates`): bare transforms on one thread, then whole searches on one and two
/// threads, in M nonces per wall second and per CPU-second.
#[test]
#[ignore]
fn rates() {
    use std::time::Instant;
    let tx = common::random_tx(1);
    let job = SearchJob::new(&tx, 243).unwrap();
    let only = std::env::var("KERNEL").ok();
    for k in common::cpu_kernels() {
        if only.as_deref().is_some_and(|o| o != k.name()) {
            continue;
        }
        let n = 8_000_000 / k.lanes();
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let (t, c) = (Instant::now(), cpu_ns());
            std::hint::black_box(k.bare_transforms(&job, n).unwrap());
            best.0 = best.0.min(t.elapsed().as_secs_f64());
            best.1 = best.1.min((cpu_ns() - c) as f64 / 1e9);
        }
        let nonces = (n * k.lanes()) as f64;
        let mut line = format!(
            "{k:>8}: bare {:6.2} M/s wall {:6.2} M/CPU-s",
            nonces / best.0 / 1e6,
            nonces / best.1 / 1e6
        );
        // The kernel's search loop on this thread, no pool and no deadline, over exactly `n`
        // transforms (MWM 243 never hits).
        for mwm in [243usize, 14] {
            let job = SearchJob::new(&tx, mwm).unwrap();
            let mut best = f64::MAX;
            for _ in 0..3 {
                let ctl = curlpow::device::SearchControl::new(None, None);
                let counters = curlpow::internal::Counters::new(1);
                let mut w = curlpow::internal::Worker::new(&ctl, &counters, 0);
                let range = CounterRange {
                    start: 0,
                    len: n as u64,
                };
                let c = cpu_ns();
                let hit = k.search_range(&job, range, &mut w).unwrap();
                let tried = w.tried as f64;
                best = best.min((cpu_ns() - c) as f64 / 1e9 / tried);
                if mwm == 243 {
                    assert!(hit.is_none());
                }
            }
            line += &format!(" | loop mwm {mwm} {:6.2} M/CPU-s", 1.0 / best / 1e6);
        }
        for threads in [1usize, 2] {
            let e = engine(k, threads);
            let opts = curlpow::PowOptions::mwm(243).timeout(std::time::Duration::from_secs(2));
            let mut rates = Vec::new();
            for _ in 0..3 {
                let c = cpu_ns();
                if let Err(curlpow::Error::Timeout { elapsed, nonces }) = e.pow_with(&tx, &opts) {
                    let cpu = (cpu_ns() - c) as f64 / 1e9;
                    rates.push((
                        nonces as f64 / elapsed.as_secs_f64() / 1e6,
                        nonces as f64 / cpu / 1e6,
                    ));
                }
            }
            rates.sort_by(|a, b| a.0.total_cmp(&b.0));
            let m = rates[rates.len() / 2];
            line += &format!(" | search {threads}T {:6.2} M/s {:6.2} M/CPU-s", m.0, m.1);
        }
        println!("{line}");
    }
}
