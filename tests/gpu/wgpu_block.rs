//! The block PoW on both wgpu kernels (the storage-buffer kernel in each shape and lane width,
//! and the workgroup-memory kernel, the default on discrete GPUs) on a real driver (lavapipe on
//! CI and hosts without a GPU): every nonce found checked against the scalar reference, ranges
//! whose counters cross 32-bit boundaries inside a launch, exact counting of a short range,
//! and the found flag and deadline stopping a search.
#![cfg(feature = "wgpu")]

use std::time::{Duration, Instant};

use curlpow::block::{self, b1t6, BlockJob};
use curlpow::device::{CounterRange, Device, SearchControl};

use crate::wgpu::{device, serial, variants};

fn message(seed: u64, len: usize) -> Vec<u8> {
    curlpow::internal::xorshift::bytes(seed).take(len).collect()
}

/// Trailing zeros of `nonce` by the scalar reference transform.
fn reference_zeros(job: &BlockJob, nonce: u64) -> usize {
    let mut s = *job.state();
    s[curlpow::internal::block_layout::LANE_TRITS.start
        ..curlpow::internal::block_layout::COUNTER_TRITS.end]
        .copy_from_slice(&b1t6::encode(&nonce.to_le_bytes()));
    curlpow::curl::transform(&mut s);
    curlpow::trits::trailing_zeros(&s[..243])
}

#[test]
fn block_hits_pass_the_scalar_reference_on_every_kernel() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        assert!(dev.supports_block_pow(), "{v:?}");
        // Starts at zero, inside the first 16 bits, just below 2^32 (the launch's counters
        // carry into the high word) and past 2^40 (the counter's fifth and sixth bytes).
        let starts = [0, 250, (1 << 32) - 7, (1 << 40) + 3];
        for (k, zeros) in [0usize, 3, 6, 8].into_iter().enumerate() {
            let len = [8, 100, 300, 1000][k];
            let msg = message(70 + k as u64, len);
            let job = BlockJob::new(&msg, block::score_of(zeros, len)).unwrap();
            let ctl = SearchControl::new(None, None);
            let range = CounterRange {
                start: starts[k],
                len: 1 << 30,
            };
            let out = dev.search_block(&job, range, &ctl).unwrap();
            let hit = out.hit.expect("a hit");
            assert!(
                hit.lane < dev.lanes() && hit.counter >= range.start,
                "{v:?}: {hit:?}"
            );
            let nonce = curlpow::internal::block_layout::nonce_of(hit).unwrap();
            assert!(
                reference_zeros(&job, nonce) >= zeros,
                "{v:?}, {zeros} zeros: {hit:?}"
            );
            assert!(job.verify(hit).is_some(), "{v:?}: {hit:?}");
            assert!(out.nonces > 0);
        }
    }
}

#[test]
fn a_short_block_range_across_2_pow_32_is_counted_exactly() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        let job = BlockJob::new(&message(80, 300), block::score_of(243, 300)).unwrap();
        let ctl = SearchControl::new(None, None);
        let range = CounterRange {
            start: (1 << 32) - 100,
            len: 300,
        };
        let before = dev.nonces_tried();
        let out = dev.search_block(&job, range, &ctl).unwrap();
        assert_eq!(out.hit, None);
        assert_eq!(out.nonces, 300 * dev.lanes() as u64, "{v:?}");
        assert_eq!(dev.nonces_tried() - before, out.nonces);
    }
}

#[test]
fn block_searches_stop_at_the_deadline_on_every_kernel() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        let job = BlockJob::new(&message(81, 300), block::score_of(243, 300)).unwrap();
        let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_millis(300)));
        let out = dev
            .search_block(&job, curlpow::internal::block_layout::COUNTERS, &ctl)
            .unwrap();
        assert_eq!(out.hit, None);
        assert!(out.nonces > 0, "{v:?}");
    }
}

/// At zero trailing zeros every nonce hits: every state of every launch in flight finds one at
/// once, and the found flag (read atomically before each transform) must stop the launches
/// queued after it, leaving one consistent hit that the host re-scores.
#[test]
fn simultaneous_block_hits_record_one_consistent_hit() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        for i in 0..4 {
            let msg = message(90 + i, 200);
            let job = BlockJob::new(&msg, block::score_of(i as usize % 2, 200)).unwrap();
            let ctl = SearchControl::new(None, None);
            let out = dev
                .search_block(&job, curlpow::internal::block_layout::COUNTERS, &ctl)
                .unwrap();
            let hit = out.hit.expect("a hit");
            assert!(job.verify(hit).is_some(), "{v:?}: {hit:?}");
        }
    }
}
