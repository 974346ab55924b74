//! The per-call paths against the reference: the host's fast single-state transform (every
//! implementation this CPU runs), batch hashing on every CPU kernel and batch size, the public
//! vectors through both, and `pow_many`'s one-search-per-worker path (validity, order,
//! statistics, deadlines, cancel, and tiny searches staying on the CPU).

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, Hit, SearchJob};
use curlpow::device::{Device, DeviceInfo, SearchOutcome};
use curlpow::internal::cpu::{CpuDevice, PoolConfig};
use curlpow::internal::KernelHooks;
use curlpow::internal::PlanesKernel;
use curlpow::{
    curl::STATE_LEN, Backend, CancelToken, CpuKernel, DeviceKind, Engine, Error, PowOptions,
    Transaction,
};

fn planes_kernels() -> Vec<PlanesKernel> {
    PlanesKernel::ALL
        .iter()
        .copied()
        .filter(|k| {
            let ok = k.is_supported();
            if !ok {
                common::skip(&format!("this CPU cannot run the {k:?} planes transform"));
            }
            ok
        })
        .collect()
}

#[test]
fn fast_transform_matches_the_reference() {
    let mut states = common::random_states(500, 0xFA57);
    states.extend([[0i8; STATE_LEN], [1; STATE_LEN], [-1; STATE_LEN]]);
    for i in [0usize, 26, 27, 242, 243, 364, 486, 728] {
        for t in [-1i8, 1] {
            let mut s = [0i8; STATE_LEN];
            s[i] = t;
            states.push(s);
        }
    }
    for k in planes_kernels() {
        for st in &states {
            let mut want = *st;
            curlpow::curl::transform(&mut want);
            let mut got = *st;
            k.transform(&mut got);
            assert!(got == want, "{k:?} differs from the reference");
        }
    }
    let mut a = states[0];
    let mut b = states[0];
    curlpow::internal::fast_transform(&mut a);
    curlpow::curl::transform(&mut b);
    assert!(a == b);
}

#[test]
fn public_vectors_through_the_fast_transform() {
    for k in planes_kernels() {
        let n = common::check_vectors_with(&format!("{k:?}"), |mut states| {
            for s in states.iter_mut() {
                k.transform(s);
            }
            states
        });
        assert!(n > 400);
    }
}

/// The first 81 trytes of every public vector's output are the hash of its input.
#[test]
fn public_vectors_through_hash_many() {
    let vectors = common::curl_vectors();
    let inputs: Vec<Vec<i8>> = vectors
        .iter()
        .map(|(i, _)| curlpow::trits::trytes_to_trits(i).unwrap())
        .collect();
    let refs: Vec<&[i8]> = inputs.iter().map(|v| &v[..]).collect();
    let engine = Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap();
    for hashes in [
        curlpow::hash_many_trits(&refs).unwrap(),
        engine.hash_many_trits(&refs).unwrap(),
    ] {
        for ((input, expected), h) in vectors.iter().zip(&hashes) {
            assert_eq!(
                curlpow::trits::trits_to_trytes(h).unwrap(),
                expected[..81],
                "input {}…",
                &input[..input.len().min(20)]
            );
        }
    }
    // The 64 whole transactions of the crypto.rs fixture, as transactions.
    let v = common::vectors("curlp81_crypto_rs_input_8019_output_243.json");
    let (txs, want): (Vec<Transaction>, Vec<String>) = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["in"].as_str().unwrap().parse().unwrap(),
                t["out"].as_str().unwrap().to_string(),
            )
        })
        .unzip();
    for k in common::cpu_kernels() {
        let e = Engine::builder()
            .threads(2)
            .cpu_kernel(k)
            .backends(&[Backend::Cpu])
            .build()
            .unwrap();
        for (h, w) in e.hash_many(&txs).iter().zip(&want) {
            assert_eq!(&curlpow::trits::trits_to_trytes(h).unwrap(), w, "{k}");
        }
    }
}

#[test]
fn hash_many_matches_the_reference_for_every_kernel_and_batch_size() {
    let txs: Vec<Transaction> = (0..1025).map(|s| common::random_tx(90_000 + s)).collect();
    let want: Vec<Vec<i8>> = txs.iter().map(|t| t.hash()).collect();
    let free = curlpow::hash_many(&txs);
    for (i, (g, w)) in free.iter().zip(&want).enumerate() {
        assert_eq!(&g[..], &w[..], "hash_many, transaction {i}");
    }
    for k in common::cpu_kernels() {
        let e = Engine::builder()
            .threads(2)
            .cpu_kernel(k)
            .backends(&[Backend::Cpu])
            .build()
            .unwrap();
        for n in [0usize, 1, 2, 63, 64, 65, 255, 257, 511, 512, 513, 1025] {
            let got = e.hash_many(&txs[..n]);
            assert_eq!(got.len(), n);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(&g[..], &w[..], "{k}, batch of {n}, transaction {i}");
            }
        }
    }
}

#[test]
fn verify_many_checks_weights() {
    let v = common::vectors("pow_attached_tx_iota_go.json");
    let mut txs: Vec<Transaction> = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trytes"].as_str().unwrap().parse().unwrap())
        .collect();
    txs.push(common::random_tx(4));
    let weights: Vec<usize> = txs.iter().map(|t| t.weight()).collect();
    for mwm in [0usize, 1, 14, weights[0], weights[0] + 1, 243] {
        let want: Vec<bool> = weights.iter().map(|&w| w >= mwm).collect();
        assert_eq!(curlpow::verify_many(&txs, mwm).unwrap(), want, "mwm {mwm}");
    }
    assert!(curlpow::verify_many(&txs, 14).unwrap()[..2]
        .iter()
        .all(|&ok| ok));
    assert!(matches!(
        curlpow::verify_many(&txs, 244),
        Err(Error::InvalidMwm(244))
    ));
}

#[test]
fn host_check_rejects_what_does_not_hit() {
    let tx = common::random_tx(12);
    let job = SearchJob::new(&tx, 40).unwrap();
    assert!(job
        .verify(Hit {
            counter: 0,
            lane: 729
        })
        .is_none());
    // At MWM 40 a fixed nonce essentially never hits; at MWM 0 every nonce does.
    assert!(job
        .verify(Hit {
            counter: 5,
            lane: 3
        })
        .is_none());
    let job0 = SearchJob::new(&tx, 0).unwrap();
    let t = job0
        .verify(Hit {
            counter: 5,
            lane: 3,
        })
        .unwrap();
    common::assert_valid_pow(&tx, &t, 0);
    assert_eq!(
        curlpow::trits::read_balanced(&t.nonce()[6..48]),
        5,
        "the counter trits"
    );
}

fn cpu_engine(threads: usize) -> Engine {
    Engine::builder()
        .threads(threads)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn pow_many_small_searches_are_valid_in_order_and_counted() {
    for threads in [1usize, 2, 3] {
        let e = cpu_engine(threads);
        let txs: Vec<Transaction> = (0..70).map(|s| common::random_tx(300 + s)).collect();
        for mwm in [0usize, 1, 5, 9] {
            let before = e.device_report()[0].stats.clone();
            let tried = e.nonces_tried();
            let results = e.pow_many(&txs, &PowOptions::mwm(mwm));
            let mut sum = 0;
            for (tx, r) in txs.iter().zip(results) {
                let r = r.unwrap();
                common::assert_valid_pow(tx, &r.transaction, mwm);
                assert_eq!(r.report.device, "cpu");
                assert!(r.report.nonces >= 1);
                sum += r.report.nonces;
            }
            let after = &e.device_report()[0].stats;
            assert_eq!(after.searches - before.searches, 70, "{threads} threads");
            assert_eq!(after.hits - before.hits, 70);
            assert_eq!(after.errors, 0);
            assert_eq!(after.max_concurrent, 1);
            assert_eq!(e.nonces_tried() - tried, sum, "every nonce counted once");
        }
    }
}

#[test]
fn pow_many_small_searches_respect_the_cpu_thread_cap() {
    let e = cpu_engine(3);
    let txs: Vec<Transaction> = (0..12).map(|s| common::random_tx(700 + s)).collect();
    let results = e.pow_many(&txs, &PowOptions::mwm(6).cpu_threads(1));
    for (tx, r) in txs.iter().zip(results) {
        common::assert_valid_pow(tx, &r.unwrap().transaction, 6);
    }
}

#[test]
fn pow_many_small_searches_stop_at_the_deadline_and_on_cancel() {
    let e = cpu_engine(2);
    let txs: Vec<Transaction> = (0..400).map(|s| common::random_tx(1_000 + s)).collect();
    let results = e.pow_many(
        &txs,
        &PowOptions::mwm(10).timeout(Duration::from_millis(30)),
    );
    assert_eq!(results.len(), txs.len());
    let mut timeouts = 0;
    for (tx, r) in txs.iter().zip(results) {
        match r {
            Ok(r) => common::assert_valid_pow(tx, &r.transaction, 10),
            Err(Error::Timeout { .. }) => timeouts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(timeouts > 0, "400 searches of 3^10 cannot finish in 30 ms");
    let cancel = CancelToken::new();
    cancel.cancel();
    let results = e.pow_many(&txs[..20], &PowOptions::mwm(3).cancel(cancel));
    assert!(results
        .iter()
        .all(|r| matches!(r, Err(Error::Cancelled { .. }))));
}

/// A device that claims to be a GPU and counts its searches (a one-thread portable CPU search
/// inside).
struct CountingGpu {
    info: DeviceInfo,
    inner: CpuDevice,
    calls: AtomicU64,
}

impl Device for CountingGpu {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.search(job, range, ctl)
    }
    fn nonces_tried(&self) -> u64 {
        self.inner.nonces_tried()
    }
}

#[test]
fn tiny_searches_stay_on_the_cpu_beside_a_gpu() {
    let gpu = Arc::new(CountingGpu {
        info: DeviceInfo::new(
            "gpu:0",
            Backend::Custom,
            "counting test GPU",
            DeviceKind::Gpu,
        )
        .with_lanes(64),
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
    let e = Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .add_device(gpu.clone())
        .wait_limit(Duration::from_millis(1))
        .build()
        .unwrap();
    let txs: Vec<Transaction> = (0..24).map(|s| common::random_tx(2_000 + s)).collect();
    for (tx, r) in txs.iter().zip(e.pow_many(&txs, &PowOptions::mwm(4))) {
        common::assert_valid_pow(tx, &r.unwrap().transaction, 4);
    }
    assert_eq!(
        gpu.calls.load(Ordering::Relaxed),
        0,
        "MWM 4 went to the GPU"
    );
    // Excluding the CPU sends them to the GPU after all.
    let only_gpu = PowOptions::mwm(4).selection(curlpow::Selection {
        exclude: vec!["cpu".into()],
        ..Default::default()
    });
    for (tx, r) in txs.iter().zip(e.pow_many(&txs[..3], &only_gpu)) {
        common::assert_valid_pow(tx, &r.unwrap().transaction, 4);
    }
    assert_eq!(gpu.calls.load(Ordering::Relaxed), 3);
    // Without CPU fallback the CPU does not take what the GPU could run.
    let no_fallback = PowOptions::mwm(4).cpu_fallback(false);
    for (tx, r) in txs.iter().zip(e.pow_many(&txs[..4], &no_fallback)) {
        common::assert_valid_pow(tx, &r.unwrap().transaction, 4);
    }
    assert_eq!(gpu.calls.load(Ordering::Relaxed), 7);
}

#[test]
fn a_single_small_search_is_counted_like_any_other() {
    let e = cpu_engine(2);
    let tx = common::random_tx(31);
    let r = e.pow(&tx, 2).unwrap();
    common::assert_valid_pow(&tx, &r.transaction, 2);
    let s = &e.device_report()[0].stats;
    assert_eq!((s.searches, s.hits), (1, 1));
    assert_eq!(s.nonces, r.report.nonces);
}

/// Time the calling thread has spent on a CPU, in nanoseconds (`/proc/thread-self/schedstat`,
/// first field): per-call costs stay measurable on a host shared with other jobs, where wall
/// time includes waiting for a core. 0 where the file is missing.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

/// Run `f` (which does `items` units of work) until it has used a second of CPU; print the CPU
/// and wall time per unit.
fn per_unit(label: &str, items: f64, mut f: impl FnMut()) {
    f();
    let (c0, w0) = (thread_cpu_ns(), std::time::Instant::now());
    let mut n = 0u64;
    while thread_cpu_ns() - c0 < 1_000_000_000 && w0.elapsed() < Duration::from_secs(20) {
        f();
        n += 1;
    }
    let cpu = (thread_cpu_ns() - c0) as f64 / (n as f64 * items);
    let wall = w0.elapsed().as_nanos() as f64 / (n as f64 * items);
    println!(
        "{label:<44} {:>10.3} us CPU {:>10.3} us wall",
        cpu / 1e3,
        wall / 1e3
    );
}

/// Per-call costs per CPU-second, single-threaded, beside iota-crypto 0.23.2 and iota-pow 0.2.1
/// (`cargo test --release --no-default-features --test per_call -- --ignored --nocapture
/// cpu_time`). Prints; asserts nothing about speed.
#[test]
#[ignore]
fn cpu_time_per_call() {
    use crypto::encoding::ternary::{T1B1Buf, TritBuf};
    use crypto::hashes::ternary::curl_p::{CurlP, CurlPBatchHasher, BATCH_SIZE};
    println!("{:<44} {:>17} {:>15}", "", "per unit", "");
    let state = common::random_states(1, 7)[0];
    let mut s = state;
    per_unit("transform: reference", 1.0, || {
        curlpow::curl::transform(&mut s)
    });
    for k in planes_kernels() {
        per_unit(&format!("transform: planes {k:?}"), 1000.0, || {
            k.transform_repeat(&mut s, 1000)
        });
    }
    let txs: Vec<Transaction> = (0..10_000).map(|s| common::random_tx(50_000 + s)).collect();
    let iota: Vec<TritBuf<T1B1Buf>> = txs
        .iter()
        .map(|t| TritBuf::<T1B1Buf>::from_i8s(&t.trits()[..]).unwrap())
        .collect();
    per_unit(
        "transform in a tx hash: curlpow planes",
        33.0 * 100.0,
        || {
            for t in &txs[..100] {
                std::hint::black_box(curlpow::hash_many(std::slice::from_ref(t)));
            }
        },
    );
    let mut curl = CurlP::new();
    per_unit(
        "transform in a tx hash: iota-crypto CurlP",
        33.0 * 100.0,
        || {
            for t in &iota[..100] {
                std::hint::black_box(curl.digest(t));
            }
        },
    );
    per_unit("tx hash: curlpow hash_many (1 thread)", 1e4, || {
        std::hint::black_box(curlpow::hash_many(&txs));
    });
    let mut batch = CurlPBatchHasher::<T1B1Buf>::new(curlpow::TRANSACTION_TRITS);
    per_unit("tx hash: iota-crypto CurlPBatchHasher", 1e4, || {
        for chunk in iota.chunks(BATCH_SIZE) {
            for t in chunk {
                batch.add(t.clone());
            }
            std::hint::black_box(batch.hash().count());
        }
    });
    per_unit("tx hash: iota-crypto CurlP", 1e3, || {
        for t in &iota[..1000] {
            std::hint::black_box(curl.digest(t));
        }
    });
    // A 1-thread engine runs an MWM 1 search on the calling thread: its CPU time is all here.
    let e = cpu_engine(1);
    let mut i = 0;
    per_unit("pow_with MWM 1, 1 thread: curlpow", 1.0, || {
        i = (i + 1) % 64;
        std::hint::black_box(e.pow_with(&txs[i], &PowOptions::mwm(1)).unwrap());
    });
    per_unit("pow MWM 1, 1 thread: iota-pow 0.2.1", 1.0, || {
        i = (i + 1) % 64;
        let o = iota_pow::PowOptions {
            min_weight_magnitude: 1,
            threads: 1,
        };
        std::hint::black_box(
            iota_pow::PearlDiver::new()
                .search(txs[i].trits().to_vec(), o)
                .unwrap(),
        );
    });
}

/// The one-lane-at-a-time scan of tiny searches finds exactly the hit of the kernel's first
/// transform (the lowest lane of the first counter), or the kernel's own later hit.
#[test]
fn tiny_search_scan_finds_the_kernels_hit() {
    use curlpow::internal::{Counters, Worker};
    for k in common::cpu_kernels() {
        let dev = CpuDevice::new(
            PoolConfig {
                threads: 2,
                pin: false,
            },
            k,
        )
        .unwrap();
        for mwm in 0..=5usize {
            for seed in 0..12u64 {
                let tx = common::random_tx(5_000 + seed * 7 + mwm as u64);
                let job = SearchJob::new(&tx, mwm).unwrap();
                for range in [
                    CounterRange::ALL,
                    CounterRange {
                        start: 1_000,
                        len: 50,
                    },
                ] {
                    let ctl = SearchControl::new(None, None);
                    let got = dev.search(&job, range, &ctl).unwrap();
                    let counters = Counters::new(1);
                    let mut w = Worker::new(&ctl, &counters, 0);
                    let want = k.search_range(&job, range, &mut w).unwrap();
                    assert_eq!(got.hit, want, "{k} mwm {mwm} seed {seed}");
                    let hit = got.hit.expect("a hit within 50 counters");
                    assert!(job.verify(hit).is_some());
                    if hit.counter == range.start {
                        assert!(got.nonces <= k.lanes() as u64);
                    }
                }
            }
        }
    }
}
