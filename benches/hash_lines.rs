//! `curlpow hash` and `curlpow verify` over a whole process, beside iota-crypto's batch hasher
//! in the same run (`docs/benchmarks.md`, "Hashing lines of trytes").
//!
//! `cargo bench --no-default-features --features cli --bench hash_lines`
//!
//! 10,000 random transactions (the same as `per_call`'s `hash_many/*`), throughput in
//! transactions:
//! - `curlpow-hash-process` and `curlpow-verify-process`: the release binary started on a file
//!   of the transactions, one a line, 2 threads (`CURLPOW_THREADS=2`), results written to a file:
//!   start, read, check, parse, hash, write, exit;
//! - `curlpow-hash_many_trytes-2-threads`: the library call the command makes, in process, on
//!   the lines already in memory;
//! - `iota-crypto-0.23.2-batch-64`: iota-crypto's 64-lane `CurlPBatchHasher` in process on the
//!   same transactions, already parsed into its trits (its hashing alone).
//!
//! Before timing, every output line of both commands is checked against `hash_many` (itself
//! tested against the reference sponge) and every 97th against the reference sponge.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use crypto::encoding::ternary::{T1B1Buf, TritBuf};
use crypto::hashes::ternary::curl_p::{CurlPBatchHasher, BATCH_SIZE};
use curlpow::{Backend, Engine, Transaction};
use curlpow_testkit::common;

const TXS: usize = 10_000;
const BIN: &str = env!("CARGO_BIN_EXE_curlpow");

/// Run `curlpow ARGS FILE` with 2 threads, its output into `out` (a file it creates): the
/// whole process, as timed.
fn run(args: &[&str], file: &Path, out: &Path) {
    let status = Command::new(BIN)
        .args(args)
        .arg(file)
        .env("CURLPOW_THREADS", "2")
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "curlpow {args:?}: {status}");
}

/// [`run`], then the output read back (for the checks before timing; not timed).
fn output(args: &[&str], file: &Path, out: &Path) -> Vec<u8> {
    run(args, file, out);
    std::fs::read(out).unwrap()
}

fn hash_lines(c: &mut Criterion) {
    let txs: Vec<Transaction> = (0..TXS as u64)
        .map(|s| common::random_tx(50_000 + s))
        .collect();
    let want = curlpow::hash_many(&txs);
    for (tx, h) in txs.iter().zip(&want).step_by(97) {
        assert_eq!(tx.hash(), h.to_vec());
    }
    let dir = std::env::temp_dir().join(format!("curlpow-hash-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tx10k.txt");
    let out = dir.join("out.txt");
    let text: String = txs.iter().map(|t| t.to_trytes() + "\n").collect();
    std::fs::write(&file, &text).unwrap();

    let hashes = String::from_utf8(output(&["hash"], &file, &out)).unwrap();
    let weights = String::from_utf8(output(&["verify", "--mwm", "0"], &file, &out)).unwrap();
    assert_eq!(hashes.lines().count(), TXS);
    assert_eq!(weights.lines().count(), TXS);
    for ((line, w), h) in hashes.lines().zip(weights.lines()).zip(&want) {
        assert_eq!(line, curlpow::trits::trits_to_trytes(h).unwrap());
        assert_eq!(w, curlpow::trits::trailing_zeros(h).to_string());
    }

    let engine = Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap();
    let lines: Vec<&[u8]> = text.lines().map(str::as_bytes).collect();
    assert!(engine.hash_many_trytes(&lines).unwrap() == want);
    let iota: Vec<TritBuf<T1B1Buf>> = txs
        .iter()
        .map(|t| TritBuf::<T1B1Buf>::from_i8s(&t.trits()[..]).unwrap())
        .collect();
    let mut batch = CurlPBatchHasher::<T1B1Buf>::new(curlpow::TRANSACTION_TRITS);
    for t in &iota[..BATCH_SIZE] {
        batch.add(t.clone());
    }
    let check: Vec<_> = batch.hash().collect();
    assert_eq!(check[5].as_i8_slice(), &want[5][..]);

    let mut g = c.benchmark_group("hash_lines");
    g.throughput(Throughput::Elements(TXS as u64));
    g.sample_size(20).measurement_time(Duration::from_secs(8));
    // Interleaved by criterion's order: each process run, then the peer, then the next.
    g.bench_function("curlpow-hash-process", |b| {
        b.iter(|| run(&["hash"], &file, &out))
    });
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
    g.bench_function("curlpow-verify-process", |b| {
        b.iter(|| run(&["verify", "--mwm", "0"], &file, &out))
    });
    g.bench_function("curlpow-hash_many_trytes-2-threads", |b| {
        b.iter(|| {
            engine
                .hash_many_trytes(std::hint::black_box(&lines))
                .unwrap()
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, hash_lines);
criterion_main!(benches);
