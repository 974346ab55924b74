//! The block PoW on the GPU backends' real drivers (PoCL for OpenCL and lavapipe for wgpu on
//! CI and hosts without a GPU, any GPU where there is one): nonces found on the device,
//! checked against the scalar reference, and the engine's choice of devices.
//!
//! Without a device of a backend its tests are skipped with a visible message, or fail when
//! `CURLPOW_REQUIRE_BACKENDS` names the backend.

use crate::common;

use curlpow::block;
use curlpow::{Backend, Engine, Error, PowOptions, Selection};

fn message(seed: u64, len: usize) -> Vec<u8> {
    curlpow::internal::xorshift::bytes(seed).take(len).collect()
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use std::time::Duration;

    use curlpow::block::{b1t6, BlockJob};
    use curlpow::device::{CounterRange, Device, SearchControl};
    use curlpow::internal::DiscoverOptions;

    /// Trailing zeros of `nonce` by the scalar reference transform.
    fn reference_zeros(job: &BlockJob, nonce: u64) -> usize {
        let mut s = *job.state();
        s[curlpow::internal::block_layout::LANE_TRITS.start
            ..curlpow::internal::block_layout::COUNTER_TRITS.end]
            .copy_from_slice(&b1t6::encode(&nonce.to_le_bytes()));
        curlpow::curl::transform(&mut s);
        curlpow::trits::trailing_zeros(&s[..243])
    }

    fn opencl() -> Option<std::sync::Arc<curlpow::internal::opencl::OpenClDevice>> {
        let found = curlpow::internal::opencl::discover_opencl(
            &DiscoverOptions {
                include_software: true,
            },
            None,
        )
        .devices
        .into_iter()
        .next();
        common::gpu_available("opencl", found.is_some()).then(|| found.expect("found"))
    }

    #[test]
    fn opencl_block_hits_pass_the_scalar_reference() {
        let Some(dev) = opencl() else { return };
        assert!(dev.supports_block_pow());
        for (k, zeros) in [0usize, 3, 6, 9].into_iter().enumerate() {
            let len = [8, 100, 300, 1000][k];
            let msg = message(40 + k as u64, len);
            let job = BlockJob::new(&msg, block::score_of(zeros, len)).unwrap();
            let ctl = SearchControl::new(None, None);
            let range = CounterRange {
                start: [0, 250, 65_530, 1 << 40][k],
                len: 1 << 30,
            };
            let out = dev.search_block(&job, range, &ctl).unwrap();
            let hit = out.hit.expect("a hit");
            assert!(
                hit.lane < dev.lanes() && hit.counter >= range.start,
                "{hit:?}"
            );
            let nonce = curlpow::internal::block_layout::nonce_of(hit).unwrap();
            assert!(
                reference_zeros(&job, nonce) >= zeros,
                "{zeros} zeros: {hit:?}"
            );
            assert!(job.verify(hit).is_some());
            assert!(out.nonces > 0);
        }
    }

    #[test]
    fn opencl_block_search_stops_at_the_deadline() {
        let Some(dev) = opencl() else { return };
        // A first search builds the block kernel (at the device's first block search).
        let easy = BlockJob::new(&message(6, 300), 0.0).unwrap();
        let ctl = SearchControl::new(None, None);
        assert!(dev
            .search_block(&easy, curlpow::internal::block_layout::COUNTERS, &ctl)
            .unwrap()
            .hit
            .is_some());
        let job = BlockJob::new(&message(7, 300), block::score_of(243, 300)).unwrap();
        let t0 = std::time::Instant::now();
        let ctl = SearchControl::new(
            None,
            Some(std::time::Instant::now() + Duration::from_millis(300)),
        );
        let out = dev
            .search_block(&job, curlpow::internal::block_layout::COUNTERS, &ctl)
            .unwrap();
        assert_eq!(out.hit, None);
        assert!(out.nonces > 0);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }

    #[test]
    fn the_engine_runs_block_searches_on_opencl() {
        let Some(_) = opencl() else { return };
        let engine = Engine::builder()
            .threads(1)
            .backends(&[Backend::Cpu, Backend::Opencl])
            .include_software(true)
            .build()
            .unwrap();
        let sel = Selection {
            backends: vec![Backend::Opencl],
            ..Default::default()
        };
        let opts = PowOptions::default().selection(sel).cpu_fallback(false);
        let r = engine
            .block_pow_with(&message(8, 200), 500.0, &opts)
            .unwrap();
        assert!(
            r.report.device.starts_with("opencl:"),
            "{}",
            r.report.device
        );
        assert!(block::score(&r.message) >= 500.0);
        // Latency mode: the CPU and the OpenCL device on disjoint counters.
        let opts = PowOptions::default().latency(true);
        let r = engine
            .block_pow_with(&message(9, 200), 2000.0, &opts)
            .unwrap();
        assert!(block::score(&r.message) >= 2000.0);
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn wgpu_block_nonces_pass_the_scalar_reference() {
    let engine = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu, Backend::Wgpu])
        .include_software(true)
        .build()
        .unwrap();
    let wgpu: Vec<_> = engine
        .devices()
        .into_iter()
        .filter(|d| d.backend == Backend::Wgpu)
        .collect();
    if !common::gpu_available("wgpu", !wgpu.is_empty()) {
        return;
    }
    assert!(wgpu.iter().all(|d| engine.runs_block_pow(&d.id)));
    let sel = Selection {
        devices: vec![wgpu[0].id.clone()],
        ..Default::default()
    };
    let opts = PowOptions::default().selection(sel).cpu_fallback(false);
    for (k, zeros) in [0usize, 4, 8].into_iter().enumerate() {
        let len = [8, 100, 300][k];
        let msg = message(60 + k as u64, len);
        let target = block::score_of(zeros, len);
        let r = engine.block_pow_with(&msg, target, &opts).unwrap();
        assert_eq!(r.report.device, wgpu[0].id);
        let job = block::BlockJob::new(&msg, target).unwrap();
        let mut s = *job.state();
        s[curlpow::internal::block_layout::LANE_TRITS.start
            ..curlpow::internal::block_layout::COUNTER_TRITS.end]
            .copy_from_slice(&block::b1t6::encode(&r.nonce.to_le_bytes()));
        curlpow::curl::transform(&mut s);
        assert!(
            curlpow::trits::trailing_zeros(&s[..243]) >= zeros,
            "{zeros}: {}",
            r.nonce
        );
    }
    // A bad selection still names what is wrong.
    let none = Selection {
        backends: vec![Backend::Custom],
        ..Default::default()
    };
    assert!(matches!(
        engine.block_pow_with(
            &message(1, 50),
            10.0,
            &PowOptions::default().selection(none)
        ),
        Err(Error::NoDevice(_))
    ));
}
