//! The device-selection layer: leases, fallback, latency mode, batches, faults, stress.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, Hit, SearchJob};
use curlpow::device::{Device, DeviceInfo, SearchOutcome};
use curlpow::internal::cpu::{CpuDevice, PoolConfig};
use curlpow::{
    Backend, CancelToken, CpuKernel, DeviceKind, Engine, EngineBuilder, Error, PowOptions,
    Selection,
};

/// How a test device behaves.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Searches for real (a one-thread portable CPU search) while claiming to be a GPU.
    Works,
    /// Fails with a driver error.
    Fails,
    /// Returns a nonce the host check must reject.
    Lies,
    /// Finds nothing and returns only when the search is stopped.
    Hangs,
}

struct TestDevice {
    info: DeviceInfo,
    inner: CpuDevice,
    mode: Mode,
    calls: AtomicU64,
    /// The MWM of every search it ran, in order (tests tag searches by MWM).
    order: parking_lot::Mutex<Vec<usize>>,
}

impl TestDevice {
    fn new(id: &str, mode: Mode) -> Arc<Self> {
        Self::with_speed(id, mode, 1e9)
    }

    /// A test device declaring `speed` nonces per second.
    fn with_speed(id: &str, mode: Mode, speed: f64) -> Arc<Self> {
        Arc::new(TestDevice {
            info: DeviceInfo::new(
                id,
                Backend::Opencl,
                format!("test device {id}"),
                DeviceKind::Gpu,
            )
            .with_lanes(64)
            .with_declared_speed(speed),
            inner: CpuDevice::new(
                PoolConfig {
                    threads: 1,
                    pin: false,
                },
                CpuKernel::Portable,
            )
            .unwrap(),
            mode,
            calls: AtomicU64::new(0),
            order: Default::default(),
        })
    }
}

impl Device for TestDevice {
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
        self.order.lock().push(job.mwm());
        match self.mode {
            Mode::Works => self.inner.search(job, range, ctl),
            Mode::Fails => Err(Error::Backend {
                backend: Backend::Opencl,
                device: self.info.id.clone(),
                message: "CL_OUT_OF_RESOURCES (injected)".into(),
            }),
            Mode::Hangs => {
                while !ctl.should_stop() {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(SearchOutcome {
                    hit: None,
                    nonces: 0,
                })
            }
            Mode::Lies => Ok(SearchOutcome {
                hit: Some(Hit {
                    counter: 12345,
                    lane: 7,
                }),
                nonces: 64,
            }),
        }
    }
    fn nonces_tried(&self) -> u64 {
        self.inner.nonces_tried()
    }
}

fn builder() -> EngineBuilder {
    Engine::builder().threads(2).backends(&[Backend::Cpu])
}

fn stats(e: &Engine, id: &str) -> curlpow::DeviceStats {
    e.device_report()
        .into_iter()
        .find(|d| d.info.id == id)
        .unwrap()
        .stats
}

#[test]
fn failing_gpu_job_moves_to_the_cpu() {
    for mode in [Mode::Fails, Mode::Lies] {
        let bad = TestDevice::new("bad:0", mode);
        let e = builder().add_device(bad.clone()).build().unwrap();
        let tx = common::random_tx(11);
        let r = e.pow(&tx, 6).unwrap();
        common::assert_valid_pow(&tx, &r.transaction, 6);
        assert_eq!(r.report.device, "cpu");
        assert_eq!(
            bad.calls.load(Ordering::Relaxed),
            1,
            "the GPU was tried first"
        );
        let s = stats(&e, "bad:0");
        assert_eq!(s.errors, 1);
        assert!(!s.healthy);
        // The next search does not touch the unhealthy device.
        e.pow(&tx, 3).unwrap();
        assert_eq!(bad.calls.load(Ordering::Relaxed), 1);
    }
}

#[test]
fn the_error_reaches_the_caller_only_when_no_device_is_left() {
    let bad = TestDevice::new("bad:0", Mode::Fails);
    let e = builder().add_device(bad).build().unwrap();
    let only_bad = PowOptions::mwm(3).selection(Selection {
        devices: vec!["bad:0".into()],
        ..Default::default()
    });
    match e.pow_with(&common::random_tx(1), &only_bad) {
        Err(Error::Backend { message, .. }) => assert!(message.contains("injected")),
        other => panic!("{other:?}"),
    }
    let liar = TestDevice::new("liar:0", Mode::Lies);
    let e = builder().add_device(liar).build().unwrap();
    let only = PowOptions::mwm(8).selection(Selection {
        devices: vec!["liar:0".into()],
        ..Default::default()
    });
    assert!(matches!(
        e.pow_with(&common::random_tx(1), &only),
        Err(Error::InvalidNonce { .. })
    ));
}

#[test]
fn unhealthy_devices_are_probed_again() {
    let bad = TestDevice::new("bad:0", Mode::Fails);
    let e = builder()
        .add_device(bad.clone())
        .reprobe_after(Duration::from_millis(100))
        .build()
        .unwrap();
    e.pow(&common::random_tx(2), 3).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    e.pow(&common::random_tx(3), 3).unwrap();
    assert_eq!(bad.calls.load(Ordering::Relaxed), 2);
    assert_eq!(stats(&e, "bad:0").errors, 2);
}

/// A GPU busy with a search that will take long: a new search does not wait for it when the
/// free CPU is expected to finish first.
#[test]
fn a_busy_gpu_with_a_long_search_leaves_new_work_to_the_cpu() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = builder()
        .add_device(gpu)
        .wait_limit(Duration::from_secs(60))
        .build()
        .unwrap();
    let e2 = e.clone();
    let stop = CancelToken::new();
    let stop2 = stop.clone();
    let hog = std::thread::spawn(move || {
        let only_gpu = PowOptions::mwm(100)
            .timeout(Duration::from_secs(20))
            .cancel(stop2)
            .selection(Selection {
                devices: vec!["gpu:0".into()],
                ..Default::default()
            });
        e2.pow_with(&common::random_tx(4), &only_gpu)
    });
    let t0 = Instant::now();
    while stats(&e, "gpu:0").nonces == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the hog never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The GPU is busy with an MWM 100 search: the CPU, free, takes an MWM 4 search at once,
    // far inside the 60 s wait limit.
    let r = e.pow(&common::random_tx(5), 4).unwrap();
    assert_eq!(r.report.device, "cpu");
    assert!(!hog.is_finished(), "the hog is still searching");
    assert!(r.report.elapsed < Duration::from_secs(20));
    stop.cancel();
    assert!(matches!(hog.join().unwrap(), Err(Error::Cancelled { .. })));
}

/// When the estimate says to wait for a faster device but that device does not deliver (here:
/// it hangs until stopped), the search stops waiting after the wait limit and takes the free
/// CPU.
#[test]
fn a_stalled_fast_device_is_given_up_after_the_wait_limit() {
    let gpu = TestDevice::new("gpu:0", Mode::Hangs);
    let e = builder()
        .add_device(gpu.clone())
        .wait_limit(Duration::from_millis(150))
        .build()
        .unwrap();
    // The hanging GPU is declared 25x faster than the CPU and is busy with an MWM 12 search
    // (until its 3 s timeout): for another MWM 12 search, waiting for it looks better (about
    // 5 ms) than the CPU (about 13 ms).
    let e2 = e.clone();
    let hog = std::thread::spawn(move || {
        let only_gpu = PowOptions::mwm(12)
            .timeout(Duration::from_secs(3))
            .selection(Selection {
                devices: vec!["gpu:0".into()],
                ..Default::default()
            });
        e2.pow_with(&common::random_tx(6), &only_gpu)
    });
    let t0 = Instant::now();
    while gpu.calls.load(Ordering::Relaxed) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the hog never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let t0 = Instant::now();
    let r = e.pow(&common::random_tx(7), 12).unwrap();
    let waited = t0.elapsed();
    assert_eq!(r.report.device, "cpu");
    assert!(
        waited >= Duration::from_millis(140),
        "took the CPU after {waited:?}, before the wait limit"
    );
    assert!(matches!(hog.join().unwrap(), Err(Error::Timeout { .. })));
}

/// Two devices of unequal speed: the faster one takes every search while it is free.
#[test]
fn the_faster_free_device_is_taken() {
    let fast = TestDevice::with_speed("fast:0", Mode::Works, 1e9);
    let slow = TestDevice::with_speed("slow:0", Mode::Works, 1e7);
    let e = Engine::builder()
        .threads(1)
        .backends(&[])
        .add_device(slow.clone())
        .add_device(fast.clone())
        .build()
        .unwrap();
    for i in 0..50 {
        let tx = common::random_tx(300 + i);
        let r = e.pow(&tx, 4).unwrap();
        common::assert_valid_pow(&tx, &r.transaction, 4);
    }
    assert_eq!(fast.calls.load(Ordering::Relaxed), 50);
    assert_eq!(slow.calls.load(Ordering::Relaxed), 0);
}

#[test]
fn without_fallback_waiting_respects_max_wait_and_deadlines() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = builder()
        .add_device(gpu)
        .cpu_fallback(false)
        .max_wait(Duration::from_millis(200))
        .build()
        .unwrap();
    let e2 = e.clone();
    let hog = std::thread::spawn(move || {
        e2.pow_with(
            &common::random_tx(6),
            &PowOptions::mwm(100).timeout(Duration::from_millis(4000)),
        )
    });
    std::thread::sleep(Duration::from_millis(100));
    let gpu_only = Selection {
        devices: vec!["gpu:0".into()],
        ..Default::default()
    };
    // Queued past max_wait.
    let t0 = Instant::now();
    let r = e.pow_with(
        &common::random_tx(7),
        &PowOptions::mwm(3).selection(gpu_only.clone()),
    );
    assert!(matches!(r, Err(Error::NoDevice(_))), "{r:?}");
    let w = t0.elapsed();
    assert!(
        w >= Duration::from_millis(190) && w < Duration::from_millis(2000),
        "{w:?}"
    );
    // Deadline while queued.
    let t0 = Instant::now();
    let r = e.pow_with(
        &common::random_tx(8),
        &PowOptions::mwm(3)
            .selection(gpu_only.clone())
            .timeout(Duration::from_millis(80)),
    );
    assert!(matches!(r, Err(Error::Timeout { .. })), "{r:?}");
    assert!(t0.elapsed() < Duration::from_millis(1500));
    // Cancel while queued.
    let token = CancelToken::new();
    let t2 = token.clone();
    let c = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        t2.cancel();
    });
    let r = e.pow_with(
        &common::random_tx(9),
        &PowOptions::mwm(3).selection(gpu_only).cancel(token),
    );
    c.join().unwrap();
    assert!(matches!(r, Err(Error::Cancelled { .. })), "{r:?}");
    assert!(matches!(hog.join().unwrap(), Err(Error::Timeout { .. })));
}

#[test]
fn latency_mode_uses_every_free_device() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = builder().add_device(gpu.clone()).build().unwrap();
    let tx = common::random_tx(10);
    let r = e.pow_with(&tx, &PowOptions::mwm(9).latency(true)).unwrap();
    common::assert_valid_pow(&tx, &r.transaction, 9);
    assert_eq!(gpu.calls.load(Ordering::Relaxed), 1);
    assert_eq!(stats(&e, "cpu").searches, 1);
    assert_eq!(stats(&e, "gpu:0").searches, 1);
}

#[test]
fn pow_many_keeps_order_and_spreads_over_devices() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = builder()
        .add_device(gpu)
        .wait_limit(Duration::from_millis(1))
        .build()
        .unwrap();
    let txs: Vec<_> = (0..12).map(|i| common::random_tx(200 + i)).collect();
    let results = e.pow_many(&txs, &PowOptions::mwm(7));
    for (tx, r) in txs.iter().zip(results) {
        common::assert_valid_pow(tx, &r.unwrap().transaction, 7);
    }
    assert!(stats(&e, "cpu").searches > 0);
    assert!(stats(&e, "gpu:0").searches > 0);
}

#[test]
fn selection_errors() {
    let e = builder().build().unwrap();
    let none = Selection {
        backends: vec![Backend::Wgpu],
        ..Default::default()
    };
    assert!(e.check_selection(&none).is_err());
    assert!(matches!(
        e.pow_with(&common::random_tx(1), &PowOptions::mwm(1).selection(none)),
        Err(Error::NoDevice(_))
    ));
    let unknown = Selection {
        devices: vec!["opencl:9:9".into()],
        ..Default::default()
    };
    assert!(e
        .check_selection(&unknown)
        .unwrap_err()
        .to_string()
        .contains("opencl:9:9"));
}

/// 32 threads at once on every device CI has (CPU, PoCL, lavapipe when compiled) plus a test GPU:
/// every result valid, no device ever runs two searches at once, nothing deadlocks.
#[test]
fn stress_32_threads() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = Engine::builder()
        .threads(2)
        .include_software(true)
        .add_device(gpu)
        .wait_limit(Duration::from_millis(5))
        .build()
        .unwrap();
    eprintln!(
        "stress devices: {:?}",
        e.devices().iter().map(|d| d.id.clone()).collect::<Vec<_>>()
    );
    let t0 = Instant::now();
    let workers: Vec<_> = (0..32u64)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                for k in 0..3u64 {
                    let tx = common::random_tx(t * 100 + k);
                    let mwm = 1 + ((t + k) % 6) as usize;
                    let opts = PowOptions::mwm(mwm)
                        .latency(k == 2)
                        .timeout(Duration::from_secs(120));
                    let r = e.pow_with(&tx, &opts).unwrap();
                    common::assert_valid_pow(&tx, &r.transaction, mwm);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let total: u64 = e.device_report().iter().map(|d| d.stats.hits).sum();
    assert_eq!(total, 96, "every search hit exactly once");
    for d in e.device_report() {
        assert!(
            d.stats.max_concurrent <= 1,
            "{} ran {} searches at once",
            d.info.id,
            d.stats.max_concurrent
        );
        eprintln!("{}: {:?}", d.info.id, d.stats);
    }
    eprintln!("stress: 96 searches in {:?}", t0.elapsed());
}

#[test]
fn cancel_while_running() {
    let e = builder().build().unwrap();
    let token = CancelToken::new();
    let t2 = token.clone();
    let c = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        t2.cancel();
    });
    let r = e.pow_with(&common::random_tx(12), &PowOptions::mwm(100).cancel(token));
    c.join().unwrap();
    assert!(
        matches!(r, Err(Error::Cancelled { nonces }) if nonces > 0),
        "{r:?}"
    );
}

/// Waiters for a busy device are served in arrival order.
#[test]
fn waiters_are_served_first_come_first_served() {
    let gpu = TestDevice::new("gpu:0", Mode::Works);
    let e = builder()
        .add_device(gpu.clone())
        .cpu_fallback(false)
        .build()
        .unwrap();
    let only_gpu = Selection {
        devices: vec!["gpu:0".into()],
        ..Default::default()
    };
    // Hold the device (MWM 100 until a 400 ms timeout), then queue MWM 1, 2, 3, 4 in that order.
    let hog = {
        let (e, sel) = (e.clone(), only_gpu.clone());
        std::thread::spawn(move || {
            e.pow_with(
                &common::random_tx(40),
                &PowOptions::mwm(100)
                    .timeout(Duration::from_millis(400))
                    .selection(sel),
            )
        })
    };
    let t0 = Instant::now();
    while gpu.calls.load(Ordering::Relaxed) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the hog never started"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // Each waiter is queued before the next one starts: arrival order by construction.
    let waiters: Vec<_> = (1..=4usize)
        .map(|mwm| {
            let (e2, sel) = (e.clone(), only_gpu.clone());
            let h = std::thread::spawn(move || {
                e2.pow_with(
                    &common::random_tx(40 + mwm as u64),
                    &PowOptions::mwm(mwm).selection(sel),
                )
            });
            let t0 = Instant::now();
            while curlpow::internal::queued_searches(&e) < mwm {
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "waiter {mwm} never queued"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            h
        })
        .collect();
    for w in waiters {
        w.join().unwrap().unwrap();
    }
    assert!(matches!(hog.join().unwrap(), Err(Error::Timeout { .. })));
    assert_eq!(*gpu.order.lock(), vec![100, 1, 2, 3, 4]);
}
