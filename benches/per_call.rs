//! Per-call costs, each beside a peer in the same run (`docs/benchmarks.md`, "Per-call latency").
//!
//! `cargo bench --no-default-features --bench per_call` (add `-- transform`, `-- single`,
//! `-- hash_many` or `-- pow_with` to run one group).
//!
//! - `transform/*`: one Curl-P-81 transform of one state: `reference` (the scalar
//!   specification) and the host's fast planes transform per implementation (33 back to back,
//!   converted in and out once), throughput in transforms.
//! - `single/*`: one whole transaction hashed on one state (33 transforms, conversions
//!   included), throughput in transforms: curlpow's single-state path (`hash_many` of one
//!   transaction) beside iota-crypto 0.23.2's `CurlP::digest`.
//! - `hash_many/*`: the same 10,000 random transactions, throughput in transactions: curlpow's
//!   `hash_many` on the calling thread and `Engine::hash_many` on a 2-thread pool, beside
//!   iota-crypto's 64-lane `CurlPBatchHasher` and its `CurlP` one by one (single-threaded).
//! - `pow_with/*`: whole PoW calls at MWM 1 in process, on a CPU-only engine (mid-state, lease,
//!   search, host check, result), rotating 64 transactions; after criterion's figures, the
//!   median and p99 of every timed call are printed. Beside it iota-pow 0.2.1's PearlDiver.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use crypto::encoding::ternary::{T1B1Buf, TritBuf};
use crypto::hashes::ternary::curl_p::{CurlP, CurlPBatchHasher, BATCH_SIZE};
use curlpow::internal::PlanesKernel;
use curlpow::{Backend, Engine, PowOptions, Transaction};
use curlpow_testkit::common;

fn transform(c: &mut Criterion) {
    let mut g = c.benchmark_group("transform");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    let state = common::random_states(1, 7)[0];
    g.throughput(Throughput::Elements(1));
    g.bench_function("reference", |b| {
        let mut s = state;
        b.iter(|| curlpow::curl::transform(std::hint::black_box(&mut s)))
    });
    g.throughput(Throughput::Elements(33));
    for &k in PlanesKernel::ALL.iter().filter(|k| k.is_supported()) {
        g.bench_function(format!("planes-{k:?}").to_lowercase(), |b| {
            let mut s = state;
            b.iter(|| k.transform_repeat(std::hint::black_box(&mut s), 33))
        });
    }
    g.finish();
}

fn iota_trits(tx: &Transaction) -> TritBuf<T1B1Buf> {
    TritBuf::<T1B1Buf>::from_i8s(&tx.trits()[..]).expect("trits")
}

fn single(c: &mut Criterion) {
    let mut g = c.benchmark_group("single");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(33));
    let tx = common::random_tx(3);
    let want = tx.hash();
    assert_eq!(
        curlpow::hash_many(std::slice::from_ref(&tx))[0].to_vec(),
        want
    );
    g.bench_function("curlpow-planes", |b| {
        b.iter(|| curlpow::hash_many(std::hint::black_box(std::slice::from_ref(&tx))))
    });
    let trits = iota_trits(&tx);
    let mut curl = CurlP::new();
    assert_eq!(curl.digest(&trits).as_i8_slice(), &want[..]);
    g.bench_function("iota-crypto-0.23.2-CurlP", |b| {
        b.iter(|| curl.digest(std::hint::black_box(&trits)))
    });
    g.finish();
}

const TXS: usize = 10_000;

fn hash_many(c: &mut Criterion) {
    let txs: Vec<Transaction> = (0..TXS as u64)
        .map(|s| common::random_tx(50_000 + s))
        .collect();
    let want = curlpow::hash_many(&txs);
    for (tx, h) in txs.iter().zip(&want).step_by(97) {
        assert_eq!(tx.hash(), h.to_vec());
    }
    let engine = Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap();
    assert!(engine.hash_many(&txs) == want);
    let iota: Vec<TritBuf<T1B1Buf>> = txs.iter().map(iota_trits).collect();
    let mut g = c.benchmark_group("hash_many");
    g.throughput(Throughput::Elements(TXS as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("curlpow-1-thread", |b| {
        b.iter(|| curlpow::hash_many(std::hint::black_box(&txs)))
    });
    g.bench_function("curlpow-engine-2-threads", |b| {
        b.iter(|| engine.hash_many(std::hint::black_box(&txs)))
    });
    let mut batch = CurlPBatchHasher::<T1B1Buf>::new(curlpow::TRANSACTION_TRITS);
    let mut check = Vec::new();
    for t in &iota[..BATCH_SIZE] {
        batch.add(t.clone());
    }
    check.extend(batch.hash());
    assert_eq!(check[5].as_i8_slice(), &want[5][..]);
    g.bench_function("iota-crypto-0.23.2-batch-64", |b| {
        b.iter(|| {
            let mut n = 0;
            for chunk in iota.chunks(BATCH_SIZE) {
                for t in chunk {
                    batch.add(t.clone());
                }
                n += batch.hash().count();
            }
            n
        })
    });
    let mut curl = CurlP::new();
    g.bench_function("iota-crypto-0.23.2-CurlP", |b| {
        b.iter(|| iota.iter().map(|t| curl.digest(t).len()).sum::<usize>())
    });
    g.finish();
}

/// Criterion's timing loop, also keeping every call's own time (for the median and p99).
fn timed<R>(
    b: &mut criterion::Bencher<'_>,
    times: &RefCell<Vec<Duration>>,
    mut call: impl FnMut() -> R,
) {
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        let mut t = times.borrow_mut();
        for _ in 0..iters {
            let t0 = Instant::now();
            std::hint::black_box(call());
            let e = t0.elapsed();
            total += e;
            t.push(e);
        }
        total
    })
}

/// "median …, p99 … (n calls)" of the kept times, if the benchmark ran.
fn percentiles(name: &str, times: RefCell<Vec<Duration>>) -> Option<String> {
    let mut t = times.into_inner();
    if t.is_empty() {
        return None;
    }
    t.sort();
    let n = t.len();
    Some(format!(
        "{name}: median {:.1?}, p99 {:.1?} ({n} calls)",
        t[n / 2],
        t[n * 99 / 100]
    ))
}

fn pow_with(c: &mut Criterion) {
    let txs: Vec<Transaction> = (0..64).map(|s| common::random_tx(7_000 + s)).collect();
    let opts = PowOptions::mwm(1);
    let mut g = c.benchmark_group("pow_with");
    g.sample_size(50).measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(1));
    let mut lines = Vec::new();
    for threads in [1usize, 2] {
        let engine = Engine::builder()
            .threads(threads)
            .backends(&[Backend::Cpu])
            .build()
            .unwrap();
        let mut i = 0;
        let times = RefCell::new(Vec::new());
        let id = BenchmarkId::new("curlpow-mwm1", threads);
        g.bench_function(id.clone(), |b| {
            timed(b, &times, || {
                i = (i + 1) % txs.len();
                engine.pow_with(&txs[i], &opts).unwrap()
            })
        });
        lines.extend(percentiles(
            &format!("pow_with/curlpow-mwm1/{threads}"),
            times,
        ));
    }
    let mut i = 0;
    let times = RefCell::new(Vec::new());
    g.sample_size(20);
    g.bench_function(BenchmarkId::new("iota-pow-0.2.1-mwm1", 1), |b| {
        timed(b, &times, || {
            i = (i + 1) % txs.len();
            let trits: Vec<i8> = txs[i].trits().to_vec();
            let o = iota_pow::PowOptions {
                min_weight_magnitude: 1,
                threads: 1,
            };
            iota_pow::PearlDiver::new().search(trits, o).unwrap()
        })
    });
    lines.extend(percentiles("pow_with/iota-pow-0.2.1-mwm1/1", times));
    g.finish();
    for l in lines {
        println!("{l}");
    }
}

criterion_group!(benches, transform, single, hash_many, pow_with);
criterion_main!(benches);
