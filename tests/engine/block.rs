//! The block PoW (Chrysalis messages, Stardust blocks): every CPU kernel against the scalar
//! reference, and the engine's search with a transaction PoW's options.

use std::time::Duration;

use curlpow::block::{self, b1t6, BlockJob};
use curlpow::device::{CounterRange, Hit, SearchControl};
use curlpow::internal::KernelHooks;
use curlpow::internal::{Counters, Worker};
use curlpow::{Backend, CancelToken, CpuKernel, Engine, Error, PowOptions, Selection};

/// Pseudo-random message bytes.
fn message(seed: u64, len: usize) -> Vec<u8> {
    curlpow::internal::xorshift::bytes(seed).take(len).collect()
}

/// Trailing zeros of nonce `nonce` by the scalar reference: the job's state with the nonce's
/// `b1t6` trits written in, one reference transform.
fn reference_zeros(job: &BlockJob, nonce: u64) -> usize {
    let mut s = *job.state();
    s[curlpow::internal::block_layout::LANE_TRITS.start
        ..curlpow::internal::block_layout::COUNTER_TRITS.end]
        .copy_from_slice(&b1t6::encode(&nonce.to_le_bytes()));
    curlpow::curl::transform(&mut s);
    curlpow::trits::trailing_zeros(&s[..243])
}

/// The first hit of `range` by brute force: the lowest counter with a hitting lane, and its
/// lowest lane.
fn reference_first_hit(job: &BlockJob, range: CounterRange, lanes: usize) -> Option<Hit> {
    (range.start..range.start + range.len).find_map(|counter| {
        (0..lanes)
            .find(|&lane| {
                let nonce =
                    curlpow::internal::block_layout::nonce_of(Hit { counter, lane }).unwrap();
                reference_zeros(job, nonce) >= job.zeros()
            })
            .map(|lane| Hit { counter, lane })
    })
}

/// The kernel's first hit of `range` (no deadline), on this thread.
fn kernel_first_hit(k: CpuKernel, job: &BlockJob, range: CounterRange) -> Option<Hit> {
    let ctl = SearchControl::new(None, None);
    let counters = Counters::new(1);
    let mut w = Worker::new(&ctl, &counters, 0);
    k.search_block_range(job, range, &mut w).unwrap()
}

#[test]
fn every_kernel_finds_the_reference_first_hit() {
    // Counters where the b1t6 bytes roll over: the signed byte's 127 -> -128, a byte's carry,
    // two bytes' carry, and the top of the 48-bit counter.
    let starts = [0u64, 125, 253, 65_533, (1 << 40) - 2];
    for &k in CpuKernel::ALL {
        if !k.is_supported() {
            crate::common::skip(&format!("this CPU lacks the {k} kernel"));
            continue;
        }
        for (case, &start) in starts.iter().enumerate() {
            let len = [8, 21, 300, 1000, 77][case];
            let msg = message(0xB10C + case as u64, len);
            // About three counters of this kernel's lanes per hit, so counter steps are met.
            let zeros = (3.0 * k.lanes() as f64).log(3.0).round() as usize;
            let job = BlockJob::new(&msg, block::score_of(zeros, len)).unwrap();
            assert_eq!(job.zeros(), zeros);
            let range = CounterRange { start, len: 40 };
            let want = reference_first_hit(&job, range, k.lanes());
            let got = kernel_first_hit(k, &job, range);
            assert_eq!(got, want, "{k}: start {start}, {len} bytes, {zeros} zeros");
            let hit = got.expect("a hit within 40 counters");
            let nonce = job.verify(hit).expect("the host check accepts it");
            assert!(block::score(&job.message(nonce)) >= job.target());
        }
        // The last counters of the range: the search stops at its end.
        let job = BlockJob::new(&message(9, 300), block::score_of(243, 300)).unwrap();
        let end = CounterRange {
            start: curlpow::internal::block_layout::COUNTERS.len - 2,
            len: 2,
        };
        assert_eq!(kernel_first_hit(k, &job, end), None, "{k}");
    }
}

#[test]
fn every_kernel_agrees_with_the_reference_at_low_targets() {
    // Zero, one and two zeros: the hit is in the first counter, at a lane the reference names.
    for &k in CpuKernel::ALL.iter().filter(|k| k.is_supported()) {
        for zeros in 0..=2 {
            let msg = message(100 + zeros as u64, 64);
            let job = BlockJob::new(&msg, block::score_of(zeros, 64)).unwrap();
            let range = CounterRange {
                start: 7,
                len: 1000,
            };
            assert_eq!(
                kernel_first_hit(k, &job, range),
                reference_first_hit(&job, range, k.lanes()),
                "{k} {zeros}"
            );
        }
    }
}

fn cpu_engine(threads: usize) -> Engine {
    Engine::builder()
        .threads(threads)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn the_engine_finds_valid_nonces() {
    let engine = cpu_engine(2);
    for (k, len) in [8usize, 100, 300, 5000].into_iter().enumerate() {
        let mut msg = message(k as u64, len);
        let target = 1500.0;
        let r = engine.block_pow(&msg, target).unwrap();
        assert_eq!(r.message.len(), len);
        assert_eq!(r.message[..len - 8], msg[..len - 8]);
        assert_eq!(r.message[len - 8..], r.nonce.to_le_bytes());
        assert!(r.score >= target && block::score(&r.message) == r.score);
        assert_eq!(r.report.device, "cpu");
        assert!(r.report.nonces > 0);
        // The same search from the bytes before the nonce.
        msg.truncate(len - 8);
        let r2 = engine
            .block_pow_without_nonce(&msg, target, &PowOptions::default())
            .unwrap();
        assert!(block::score(&r2.message) >= target);
    }
}

#[test]
fn options_apply_as_for_a_transaction() {
    let engine = cpu_engine(2);
    let msg = message(5, 300);
    let never = block::score_of(243, 300);
    // Timeout.
    let opts = PowOptions::default().timeout(Duration::from_millis(200));
    match engine.block_pow_with(&msg, never, &opts) {
        Err(Error::Timeout { nonces, .. }) => assert!(nonces > 0),
        other => panic!("expected a timeout, got {other:?}"),
    }
    // Cancel from another thread.
    let cancel = CancelToken::new();
    let c2 = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        c2.cancel();
    });
    let opts = PowOptions::default().cancel(cancel);
    assert!(matches!(
        engine.block_pow_with(&msg, never, &opts),
        Err(Error::Cancelled { .. })
    ));
    t.join().unwrap();
    // One thread, latency mode, the CPU selected by id.
    let sel = Selection {
        devices: vec!["cpu".into()],
        ..Default::default()
    };
    let opts = PowOptions::default()
        .cpu_threads(1)
        .latency(true)
        .selection(sel);
    let r = engine.block_pow_with(&msg, 4000.0, &opts).unwrap();
    assert!(block::score(&r.message) >= 4000.0);
    // A selection with nothing that runs it.
    let none = Selection {
        backends: vec![Backend::Custom],
        ..Default::default()
    };
    let opts = PowOptions::default().selection(none);
    assert!(matches!(
        engine.block_pow_with(&msg, 4000.0, &opts),
        Err(Error::NoDevice(_))
    ));
}

#[test]
fn bad_messages_and_targets_are_errors() {
    let engine = cpu_engine(1);
    assert!(matches!(
        engine.block_pow(&[0; 7], 1.0),
        Err(Error::Block(block::BlockError::TooShort { len: 7 }))
    ));
    assert!(matches!(
        engine.block_pow(&[0; 8], f64::NAN),
        Err(Error::Block(block::BlockError::InvalidScore(_)))
    ));
    assert!(matches!(
        engine.block_pow(&[0; 8], 1e300),
        Err(Error::Block(block::BlockError::Unreachable { .. }))
    ));
}

#[test]
fn a_device_without_the_block_pow_is_never_given_one() {
    // The fault-free custom device of `examples/custom_device.rs` kind: runs transactions only.
    use curlpow::device::{Device, DeviceInfo, SearchJob, SearchOutcome};
    use curlpow::DeviceKind;
    struct TxOnly(DeviceInfo);
    impl Device for TxOnly {
        fn info(&self) -> &DeviceInfo {
            &self.0
        }
        fn search(
            &self,
            _: &SearchJob,
            _: CounterRange,
            _: &SearchControl,
        ) -> Result<SearchOutcome, Error> {
            panic!("a block search reached a device that does not run it")
        }
        fn nonces_tried(&self) -> u64 {
            0
        }
    }
    let dev = TxOnly(
        DeviceInfo::new(
            "mine:0",
            Backend::Custom,
            "tx only",
            DeviceKind::Accelerator,
        )
        .with_declared_speed(1e12),
    );
    let engine = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .add_device(std::sync::Arc::new(dev))
        .build()
        .unwrap();
    let r = engine.block_pow(&message(1, 40), 100.0).unwrap();
    assert_eq!(r.report.device, "cpu");
    assert!(!engine.runs_block_pow("mine:0") && engine.runs_block_pow("cpu"));
}

#[test]
fn bench_block_measures_the_cpu() {
    let engine = cpu_engine(1);
    let r = engine
        .bench_block("cpu", Duration::from_millis(200))
        .unwrap();
    assert!(r.nonces > 0 && r.nonces_per_second > 0.0);
    assert!(engine
        .bench_block("nope", Duration::from_millis(10))
        .is_err());
}
