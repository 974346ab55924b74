//! The core: trinary, the scalar Curl-P-81 reference against every public vector, transaction
//! fields, and the CPU search (validity, cancellation, deadline, concurrency).

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::{
    curl::Curl, trits::trits_to_trytes, trits::trytes_to_trits, CancelToken, Engine, Error, Field,
    PowOptions, Transaction,
};
use proptest::prelude::*;

#[test]
fn every_public_curl_vector() {
    let vectors = common::curl_vectors();
    assert_eq!(vectors.len(), 300 + 5 + 119);
    for (input, expected) in vectors {
        let trits = trytes_to_trits(&input).unwrap();
        let mut curl = Curl::new();
        curl.absorb(&trits).unwrap();
        let mut out = vec![0i8; expected.len() * 3];
        curl.squeeze(&mut out).unwrap();
        assert_eq!(
            trits_to_trytes(&out).unwrap(),
            expected,
            "input {}…",
            &input[..27]
        );
    }
}

#[test]
fn attached_mainnet_transactions_and_their_fields() {
    let v = common::vectors("pow_attached_tx_iota_go.json");
    for t in v["vectors"].as_array().unwrap() {
        let tx: Transaction = t["trytes"].as_str().unwrap().parse().unwrap();
        assert_eq!(tx.hash_trytes(), t["hash"].as_str().unwrap());
        assert!(tx.weight() >= 14);
        let f = &t["fields"];
        for (field, key) in [
            (Field::Address, "address"),
            (Field::ObsoleteTag, "obsoleteTag"),
            (Field::Bundle, "bundle"),
            (Field::TrunkTransaction, "trunkTransaction"),
            (Field::BranchTransaction, "branchTransaction"),
            (Field::Tag, "tag"),
            (Field::Nonce, "nonce"),
        ] {
            assert_eq!(tx.field_trytes(field), f[key].as_str().unwrap(), "{key}");
        }
        for (field, key) in [
            (Field::Value, "value"),
            (Field::Timestamp, "timestamp"),
            (Field::CurrentIndex, "currentIndex"),
            (Field::LastIndex, "lastIndex"),
            (Field::AttachmentTimestamp, "attachmentTimestamp"),
            (
                Field::AttachmentTimestampLowerBound,
                "attachmentTimestampLowerBound",
            ),
            (
                Field::AttachmentTimestampUpperBound,
                "attachmentTimestampUpperBound",
            ),
        ] {
            let n = curlpow::trits::read_balanced(tx.field(field));
            assert_eq!(n, f[key].as_i64().unwrap() as i128, "{key}");
        }
    }
}

#[test]
fn attach_to_tangle_bundle_hashes() {
    let v = common::vectors("attach_to_tangle_bundle_iota_js.json");
    for t in v["transactions"].as_array().unwrap() {
        let tx: Transaction = t["trytes"].as_str().unwrap().parse().unwrap();
        assert_eq!(tx.hash_trytes(), t["hash"].as_str().unwrap());
        assert!(tx.weight() >= 14);
    }
}

/// The CPU alone: these tests mean the CPU search, whatever GPUs the host has.
fn engine() -> Engine {
    Engine::builder()
        .threads(2)
        .backends(&[curlpow::Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn public_pow_inputs() {
    let e = engine();
    for (tx, mwm) in common::pow_inputs() {
        let mwm = mwm.min(12);
        let r = e.pow(&tx, mwm).unwrap();
        common::assert_valid_pow(&tx, &r.transaction, mwm);
        assert!(r.report.nonces > 0);
        assert_eq!(r.report.device, "cpu");
    }
}

#[test]
fn mwm_bounds() {
    let e = engine();
    let tx = common::random_tx(1);
    assert!(matches!(e.pow(&tx, 244), Err(Error::InvalidMwm(244))));
    let r = e.pow(&tx, 0).unwrap();
    common::assert_valid_pow(&tx, &r.transaction, 0);
}

#[test]
fn cancellation_stops_promptly() {
    let e = engine();
    let tx = common::random_tx(2);
    let token = CancelToken::new();
    let t2 = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        t2.cancel();
        Instant::now()
    });
    let r = e.pow_with(&tx, &PowOptions::mwm(100).cancel(token));
    let stopped = Instant::now();
    let cancelled_at = canceller.join().unwrap();
    match r {
        Err(Error::Cancelled { nonces }) => assert!(nonces > 0),
        other => panic!("{other:?}"),
    }
    let latency = stopped.saturating_duration_since(cancelled_at);
    assert!(
        latency < Duration::from_millis(500),
        "stopped {latency:?} after cancel"
    );
}

#[test]
fn deadline_returns_timeout() {
    let e = engine();
    let tx = common::random_tx(3);
    let t0 = Instant::now();
    match e.pow_with(
        &tx,
        &PowOptions::mwm(100).timeout(Duration::from_millis(150)),
    ) {
        Err(Error::Timeout { elapsed, nonces }) => {
            assert!(elapsed >= Duration::from_millis(150));
            assert!(nonces > 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(2));
}

fn os_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Runs alone in a child process: the thread count of the process is only this test's when no
/// other test builds engines at the same time.
#[test]
fn many_callers_share_one_pool() {
    if !common::run_alone("many_callers_share_one_pool") {
        return;
    }
    let e = Arc::new(engine());
    // Warm up: the pool exists from build(); one search so every lazy thing is made.
    e.pow(&common::random_tx(99), 3).unwrap();
    let pool_threads = curlpow::internal::engine_cpu(&e).threads();
    let before = os_threads();
    let callers: Vec<_> = (0..8)
        .map(|c| {
            let e = e.clone();
            std::thread::spawn(move || {
                for k in 0..4u64 {
                    let tx = common::random_tx(1000 + c * 10 + k);
                    let mwm = 1 + ((c + k) % 7) as usize;
                    let r = e.pow(&tx, mwm).unwrap();
                    common::assert_valid_pow(&tx, &r.transaction, mwm);
                }
                os_threads()
            })
        })
        .collect();
    let during: Vec<usize> = callers.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(curlpow::internal::engine_cpu(&e).threads(), pool_threads);
    // Only the 8 caller threads came and went: the pool itself never grew.
    assert!(
        during.iter().all(|&n| n <= before + 8),
        "threads before {before}, during {during:?}"
    );
    // Other tests of this binary run in parallel and may drop their engines meanwhile: the
    // count can only have gone down.
    assert!(os_threads() <= before);
}

#[test]
fn report_counts_nonces() {
    let e = engine();
    let before = e.nonces_tried();
    let r = e.pow(&common::random_tx(5), 8).unwrap();
    assert!(r.report.nonces >= 64);
    assert!(e.nonces_tried() - before >= r.report.nonces);
    assert!(r.report.nonces_per_second() > 0.0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trytes_trits_round_trip(s in "[9A-Z]{0,200}") {
        let trits = trytes_to_trits(&s).unwrap();
        prop_assert_eq!(trits.len(), s.len() * 3);
        prop_assert_eq!(trits_to_trytes(&trits).unwrap(), s);
    }

    #[test]
    fn trits_trytes_round_trip(t in proptest::collection::vec(-1i8..=1, 0..100)) {
        let n = t.len() / 3 * 3;
        let s = trits_to_trytes(&t[..n]).unwrap();
        prop_assert_eq!(trytes_to_trits(&s).unwrap(), t[..n].to_vec());
    }

    #[test]
    fn bad_tryte_is_located(prefix in "[9A-Z]{0,50}", bad in "[a-z0-8!# ]") {
        let s = format!("{prefix}{bad}ABC");
        match trytes_to_trits(&s) {
            Err(Error::Tryte(curlpow::TryteError::BadChar { column, .. })) => {
                prop_assert_eq!(column, prefix.len() + 1)
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn search_is_valid_and_changes_only_the_nonce(seed in any::<u64>(), mwm in 1usize..=9) {
        static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
        let e = ENGINE.get_or_init(engine);
        let tx = common::random_tx(seed);
        let r = e.pow(&tx, mwm).unwrap();
        common::assert_valid_pow(&tx, &r.transaction, mwm);
    }
}

/// Under `CURLPOW_REQUIRE_BACKENDS`, every named backend must be compiled in and find a device:
/// a CI build that silently left a backend out fails here instead of skipping its tests.
#[test]
fn required_backends_are_compiled_and_present() {
    let required = std::env::var("CURLPOW_REQUIRE_BACKENDS").unwrap_or_default();
    let names: Vec<&str> = required
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        common::skip("CURLPOW_REQUIRE_BACKENDS is not set");
        return;
    }
    let e = Engine::builder()
        .threads(1)
        .include_software(true)
        .build()
        .unwrap();
    for name in names {
        let b = curlpow::Backend::from_name(name)
            .unwrap_or_else(|| panic!("CURLPOW_REQUIRE_BACKENDS names unknown backend {name:?}"));
        assert!(
            b.compiled(),
            "backend {name} is required but not compiled in (cargo feature {name})"
        );
        assert!(
            e.devices().iter().any(|d| d.backend == b),
            "backend {name} is required but found no device; warnings: {:?}",
            e.discovery_warnings()
        );
    }
}

#[test]
fn pinned_pool_searches() {
    let e = Engine::builder()
        .threads(2)
        .pin_threads(true)
        .backends(&[curlpow::Backend::Cpu])
        .build()
        .unwrap();
    let tx = common::random_tx(77);
    let r = e.pow(&tx, 5).unwrap();
    common::assert_valid_pow(&tx, &r.transaction, 5);
    assert_eq!(curlpow::internal::engine_cpu(&e).threads(), 2);
    assert_eq!(e.devices()[0].details["pinned"], true);
}
