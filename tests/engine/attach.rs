//! `Engine::attach_to_tangle`: IRI's chaining and field rules, checked against the public
//! iota.js bundle vector and the scalar reference hash; order, cancel, deadline, bad input.

use crate::attach_check;
use crate::common;

use std::cell::Cell;
use std::time::{Duration, Instant};

use curlpow::{
    attach::Hash, attach::MAX_TIMESTAMP, Backend, CancelToken, Engine, Error, Field, PowOptions,
    Transaction,
};

fn engine() -> Engine {
    Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn the_iota_js_bundle_attaches_as_iri_attached_it() {
    let (trunk, branch, request) = attach_check::iota_js_bundle();
    let answer: Vec<Transaction> = request.iter().rev().cloned().collect();
    // Replay the vector's own attachment timestamps, in processing order (head first): every
    // trit but the nonce must then come out as in the vector.
    let stamps: Vec<u64> = request
        .iter()
        .map(|t| attach_check::read_number(t, Field::AttachmentTimestamp) as u64)
        .collect();
    let next = Cell::new(0);
    let clock = || {
        let i = next.get();
        next.set(i + 1);
        stamps[i]
    };
    let mwm = 9;
    let done = engine()
        .attach_to_tangle_with_clock(&trunk, &branch, &request, &PowOptions::mwm(mwm), &clock)
        .unwrap();
    assert_eq!(next.get(), 4, "the clock is read once per transaction");
    attach_check::check(
        &request,
        &trunk,
        &branch,
        mwm,
        0..=MAX_TIMESTAMP,
        &done.transactions,
    )
    .unwrap();
    // Our nonces differ from the vector's, so the chained trunks (hashes of the transaction
    // processed before) differ too; the head's trunk is the request's. The vector's
    // attachmentTimestampUpperBound is 12 (the 2018 client that attached it wrote that), where
    // IRI writes (3^27 - 1) / 2, as `attach_check` requires.
    for (k, (got, want)) in done.transactions.iter().zip(&answer).enumerate() {
        let head = k == answer.len() - 1;
        assert_eq!(
            attach_check::read_number(want, Field::AttachmentTimestampUpperBound),
            12
        );
        for f in Field::ALL {
            if f != Field::Nonce
                && f != Field::AttachmentTimestampUpperBound
                && (head || f != Field::TrunkTransaction)
            {
                assert_eq!(got.field(f), want.field(f), "{f:?}");
            }
        }
    }
    for (h, t) in done.hashes.iter().zip(&done.transactions) {
        assert_eq!(h.trits().as_slice(), t.hash().as_slice());
    }
    assert_eq!(done.reports.len(), 4);
    assert!(done.nonces() > 0);
}

#[test]
fn order_of_the_request_does_not_matter_and_a_blank_tag_takes_the_obsolete_tag() {
    let (trunk, branch, mut request) = attach_check::iota_js_bundle();
    for t in &mut request {
        t.set_field(Field::Tag, &[0; 81]).unwrap();
    }
    request.swap(0, 2);
    request.swap(1, 3);
    let before = attach_check::now_ms();
    let done = engine()
        .attach_to_tangle(&trunk, &branch, &request, &PowOptions::mwm(7))
        .unwrap();
    let after = attach_check::now_ms();
    attach_check::check(
        &request,
        &trunk,
        &branch,
        7,
        before..=after,
        &done.transactions,
    )
    .unwrap();
    let indices: Vec<i128> = done
        .transactions
        .iter()
        .map(|t| attach_check::read_number(t, Field::CurrentIndex))
        .collect();
    assert_eq!(indices, [0, 1, 2, 3], "tail first");
}

#[test]
fn random_bundles_of_one_to_eight() {
    let e = engine();
    for n in 1..=8u64 {
        let txs: Vec<Transaction> = (0..n).map(|k| common::random_tx(100 * n + k)).collect();
        let trunk = Hash::from_trits(&txs[0].hash()).unwrap();
        let branch = Hash::NULL;
        let before = attach_check::now_ms();
        let done = e
            .attach_to_tangle(&trunk, &branch, &txs, &PowOptions::mwm(5))
            .unwrap();
        let after = attach_check::now_ms();
        attach_check::check(&txs, &trunk, &branch, 5, before..=after, &done.transactions)
            .unwrap_or_else(|e| panic!("bundle of {n}: {e}"));
    }
}

#[test]
fn nothing_to_attach_is_an_empty_answer() {
    let done = engine()
        .attach_to_tangle(&Hash::NULL, &Hash::NULL, &[], &PowOptions::mwm(14))
        .unwrap();
    assert!(done.transactions.is_empty());
}

#[test]
fn cancel_deadline_and_bad_mwm() {
    let e = engine();
    let txs = vec![common::random_tx(1), common::random_tx(2)];
    let token = CancelToken::new();
    token.cancel();
    let r = e.attach_to_tangle(
        &Hash::NULL,
        &Hash::NULL,
        &txs,
        &PowOptions::mwm(60).cancel(token),
    );
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");

    let t0 = Instant::now();
    let r = e.attach_to_tangle(
        &Hash::NULL,
        &Hash::NULL,
        &txs,
        &PowOptions::mwm(60).timeout(Duration::from_millis(200)),
    );
    assert!(matches!(r, Err(Error::Timeout { .. })), "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());

    let r = e.attach_to_tangle(&Hash::NULL, &Hash::NULL, &txs, &PowOptions::mwm(244));
    assert!(matches!(r, Err(Error::InvalidMwm(244))), "{r:?}");
}
