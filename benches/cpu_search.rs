//! Nonces per second of every CPU kernel this machine supports, side by side with `iota-pow`
//! 0.2.1 (IRI's PearlDiver port) on the same transactions and thread counts.
//!
//! `cargo bench --bench cpu_search` (add `-- pow` or `-- bare` to run one group).
//!
//! - `bare/<kernel>`: one thread, back-to-back search transforms at MWM 14 (what the search
//!   loop runs per counter: the cone update of one changed counter trit, the full passes, the
//!   partial tail for the last 14 hash trits; no counter, zero test or stop check);
//!   throughput = lanes per transform.
//! - `pow/<impl>/<threads>`: whole PoW calls at MWM 11 on a rotating set of random
//!   transactions. The throughput is the *expected* work per call, 3^11 nonces, so criterion's
//!   elements/s is the effective hashrate of the whole call (pool dispatch, stop checks and the
//!   overshoot of the last batch included), the same measure for both implementations.
//!   `iota-pow` cannot be stopped from outside or asked how many nonces it tried, so a fixed
//!   MWM is the one fair comparison.
//! - `mwm14/<kernel>/<threads>`: mean time of a mainnet-MWM PoW with the detected kernel on
//!   every CPU.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use curlpow::device::SearchJob;
use curlpow::internal::KernelHooks;
use curlpow::{CpuKernel, Engine};
use curlpow_testkit::common;

const MWM: usize = 11;

fn kernels() -> Vec<CpuKernel> {
    CpuKernel::ALL
        .iter()
        .copied()
        .filter(|k| k.is_supported())
        .collect()
}

fn bare(c: &mut Criterion) {
    let job = SearchJob::new(&common::random_tx(1), 14).unwrap();
    let mut g = c.benchmark_group("bare");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for k in kernels() {
        let n = 64;
        g.throughput(Throughput::Elements((n * k.lanes()) as u64));
        g.bench_function(k.name(), |b| {
            b.iter(|| std::hint::black_box(k.bare_transforms(&job, n).unwrap()))
        });
    }
    g.finish();
}

fn pow(c: &mut Criterion) {
    let txs: Vec<_> = (0..64).map(|s| common::random_tx(1000 + s)).collect();
    let work = 3u64.pow(MWM as u32);
    let mut g = c.benchmark_group("pow");
    g.throughput(Throughput::Elements(work));
    for threads in [1usize, 2] {
        g.sample_size(30).measurement_time(Duration::from_secs(8));
        for k in kernels() {
            let engine = Engine::builder()
                .threads(threads)
                .cpu_kernel(k)
                .build()
                .unwrap();
            let mut i = 0;
            g.bench_with_input(BenchmarkId::new(k.name(), threads), &threads, |b, _| {
                b.iter(|| {
                    i = (i + 1) % txs.len();
                    engine.pow(&txs[i], MWM).unwrap()
                })
            });
        }
        g.sample_size(10).measurement_time(Duration::from_secs(20));
        let mut i = 0;
        g.bench_with_input(
            BenchmarkId::new("iota-pow-0.2.1", threads),
            &threads,
            |b, &t| {
                b.iter(|| {
                    i = (i + 1) % txs.len();
                    let trits: Vec<i8> = txs[i].trits().to_vec();
                    let opts = iota_pow::PowOptions {
                        min_weight_magnitude: MWM,
                        threads: t,
                    };
                    iota_pow::PearlDiver::new().search(trits, opts).unwrap()
                })
            },
        );
    }
    g.finish();
}

/// The mainnet MWM, with the fastest kernel on every CPU: mean time per PoW call.
fn mwm14(c: &mut Criterion) {
    let txs: Vec<_> = (0..64).map(|s| common::random_tx(2000 + s)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let k = CpuKernel::detect();
    let engine = Engine::builder()
        .threads(threads)
        .cpu_kernel(k)
        .build()
        .unwrap();
    let mut g = c.benchmark_group("mwm14");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(3u64.pow(14)));
    let mut i = 0;
    g.bench_function(BenchmarkId::new(k.name(), threads), |b| {
        b.iter(|| {
            i = (i + 1) % txs.len();
            engine.pow(&txs[i], 14).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bare, pow, mwm14);
criterion_main!(benches);
