//! The wgpu backend on a real driver (Mesa lavapipe on CI and development machines, any GPU where
//! there is one): the kernel's transform against the scalar reference and the public vectors,
//! searches with both lane widths checked on the host, stopping, range discipline, discovery.
//!
//! Without a wgpu adapter every test is skipped with a visible message, or fails when
//! `CURLPOW_REQUIRE_BACKENDS` names `wgpu`.
#![cfg(feature = "wgpu")]

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use curlpow::device::Device;
use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, SearchJob};
use curlpow::internal::wgpu::{discover_wgpu, Tuning, WgpuDevice};
use curlpow::internal::DiscoverOptions;
use curlpow::{curl::STATE_LEN, Backend, CancelToken, DeviceKind, Transaction};

/// Lane width and tuning of one kernel variant (`None`: the adapter's defaults).
pub(crate) type Variant = (bool, Option<Tuning>);

fn software() -> DiscoverOptions {
    DiscoverOptions {
        include_software: true,
    }
}

/// Tests of this binary run one at a time: they share devices, and a search waiting for another
/// test's search would spoil the timing checks (cancel latency, deadline, dispatch sizing).
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The first wgpu device for `variant`, shared by every test of this binary so that each
/// variant is opened (and compiled) once.
pub(crate) fn device(variant: Variant) -> Option<Arc<WgpuDevice>> {
    type Key = (bool, Option<(u32, u32, u32, u32, u32)>);
    type Cache = Mutex<HashMap<Key, Option<Arc<WgpuDevice>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (
        variant.0,
        variant.1.map(|t| {
            (
                t.workgroup_size,
                t.transforms_per_invocation,
                t.max_invocations,
                t.fuse,
                t.coop,
            )
        }),
    );
    let dev = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_insert_with(|| {
            let found = discover_wgpu(&software(), variant.1, variant.0);
            for w in &found.warnings {
                eprintln!("wgpu discovery: {w}");
            }
            found.devices.into_iter().next()
        })
        .clone();
    if common::gpu_available("wgpu", dev.is_some()) {
        dev
    } else {
        None
    }
}

/// Several transforms per invocation, a small workgroup and one round per pass: the kernel's
/// counter loop, dispatch bookkeeping and the unfused transform, still inside llvmpipe's loop
/// cap.
fn looped() -> Tuning {
    Tuning {
        workgroup_size: 16,
        transforms_per_invocation: 3,
        max_invocations: 1024,
        fuse: 1,
        target_dispatch: Duration::from_millis(8),
        coop: 0,
    }
}

/// The workgroup-memory kernel (the default on discrete GPUs) with `p` invocations per state:
/// 32 (NVIDIA's default, 4 states per workgroup) and 64 (the others', padded layout).
pub(crate) fn workgroup(p: u32) -> Tuning {
    Tuning {
        coop: p,
        ..Tuning::software()
    }
}

/// Five fused rounds per pass (the default is three).
fn fused5() -> Tuning {
    Tuning {
        fuse: 5,
        ..Tuning::software()
    }
}

/// Every correctness test runs on these: the default (64-bit lanes where the adapter has
/// SHADER_INT64), forced 32-bit lanes, the looped unfused shape (64 and 32-bit), five fused
/// rounds (64 and 32-bit) and the workgroup-memory kernel (32 and 64 invocations per state).
pub(crate) fn variants() -> Vec<Variant> {
    vec![
        (false, None),
        (true, None),
        (false, Some(looped())),
        (true, Some(looped())),
        (false, Some(fused5())),
        (true, Some(fused5())),
        (false, Some(workgroup(32))),
        (false, Some(workgroup(64))),
    ]
}

#[test]
fn lane_widths_are_what_was_asked() {
    let _serial = serial();
    let Some(d32) = device((true, None)) else {
        return;
    };
    assert_eq!(d32.lanes(), 32);
    assert_eq!(d32.info().details["lanes_64bit"], false);
    let d = device((false, None)).unwrap();
    let int64 = d.info().details["lanes_64bit"].as_bool().unwrap();
    assert_eq!(d.lanes(), if int64 { 64 } else { 32 });
    // CURLPOW_WGPU_LANES=32 forces 32-bit lanes everywhere.
    let forced = std::env::var("CURLPOW_WGPU_LANES").is_ok_and(|v| v.trim() == "32");
    if forced {
        assert!(!int64);
    } else if d.is_software() {
        // lavapipe offers SHADER_INT64: the 64-bit kernel must be the one tested there.
        assert!(int64, "lavapipe should offer SHADER_INT64");
    }
}

#[test]
fn transform_matches_scalar_on_random_states() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        // More states than one invocation's lanes, and not a multiple of them.
        let states = common::random_states(2 * dev.lanes() + 7, 42);
        let got = dev.transform(&states).expect("device transform");
        assert_eq!(got.len(), states.len());
        for (k, (mut s, g)) in states.into_iter().zip(got).enumerate() {
            curlpow::curl::transform(&mut s);
            assert!(
                s == g,
                "variant {v:?}: state {k} differs from the scalar transform"
            );
        }
    }
}

#[test]
fn transform_rejects_non_trits() {
    let _serial = serial();
    let Some(dev) = device((false, None)) else {
        return;
    };
    let mut s = [0i8; STATE_LEN];
    s[5] = 2;
    assert!(matches!(
        dev.transform(&[s]),
        Err(curlpow::Error::NotATrit { index: 5, value: 2 })
    ));
}

#[test]
fn device_sponge_matches_public_vectors() {
    let _serial = serial();
    for v in [(false, None), (true, None)] {
        let Some(dev) = device(v) else { return };
        let n = common::check_vectors_with(&format!("variant {v:?}"), |states| {
            dev.transform(&states).expect("device transform")
        });
        assert!(n > 400, "expected the public vectors");
    }
}

/// Search on `dev` and check the result on the host; returns the hit's transaction.
fn search_valid(
    dev: &WgpuDevice,
    tx: &Transaction,
    mwm: usize,
    range: CounterRange,
) -> Transaction {
    common::device_search_valid(dev, dev.lanes(), tx, mwm, range)
}

#[test]
fn search_random_transactions_mwm_1_to_9() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        for mwm in 1..=9 {
            let tx = common::random_tx(1000 + mwm as u64);
            search_valid(&dev, &tx, mwm, CounterRange::ALL);
        }
    }
}

#[test]
fn search_public_pow_inputs() {
    let _serial = serial();
    for v in [(false, None), (true, None)] {
        let Some(dev) = device(v) else { return };
        for (tx, mwm) in common::pow_inputs() {
            // lavapipe runs a few M nonces/s: cap the weight so the test stays in seconds there.
            let mwm = if dev.is_software() { mwm.min(9) } else { mwm };
            search_valid(&dev, &tx, mwm, CounterRange::ALL);
        }
    }
}

#[test]
fn search_stays_inside_its_range() {
    let _serial = serial();
    for v in variants() {
        let Some(dev) = device(v) else { return };
        let tx = common::random_tx(7);
        // A range far from zero, whose start crosses a 32-bit boundary inside the kernel.
        let range = CounterRange {
            start: (1 << 32) - 5,
            len: 1 << 40,
        };
        search_valid(&dev, &tx, 6, range);
        // A short range with an unreachable weight: exactly its counters are tried.
        let job = SearchJob::new(&tx, 100).unwrap();
        let ctl = SearchControl::new(None, None);
        let small = CounterRange {
            start: u64::MAX - 300,
            len: 300,
        };
        let before = dev.nonces_tried();
        let out = dev.search(&job, small, &ctl).unwrap();
        assert_eq!(out.hit, None);
        assert_eq!(out.nonces, 300 * dev.lanes() as u64, "variant {v:?}");
        assert_eq!(dev.nonces_tried() - before, out.nonces);
    }
}

/// On software adapters the transforms per invocation are clamped under llvmpipe's loop cap
/// (65,535 iterations per invocation; beyond it results are silently wrong): the largest
/// allowed shape must still find valid nonces there.
#[test]
fn software_loop_cap_clamp_is_correct() {
    let _serial = serial();
    let asked = Tuning {
        transforms_per_invocation: 100,
        ..looped()
    };
    let Some(dev) = device((false, Some(asked))) else {
        return;
    };
    if !dev.is_software() {
        assert_eq!(dev.tuning().transforms_per_invocation, 100);
        return;
    }
    let t = dev.tuning().transforms_per_invocation;
    assert_eq!(t, 7);
    // Dispatches of exactly that length (the sizing would pick it only on a slow adapter).
    dev.force_launch(None, Some(u64::from(t)));
    assert_eq!(dev.dispatch_transforms(), u64::from(t));
    assert!(
        t * curlpow::internal::wgpu::LOOP_ITERATIONS_PER_TRANSFORM
            < curlpow::internal::wgpu::SOFTWARE_LOOP_CAP
    );
    for mwm in [4, 7, 8] {
        search_valid(
            &dev,
            &common::random_tx(2000 + mwm as u64),
            mwm,
            CounterRange::ALL,
        );
    }
    let states = common::random_states(dev.lanes() + 1, 77);
    let got = dev.transform(&states).unwrap();
    for (mut s, g) in states.into_iter().zip(got) {
        curlpow::curl::transform(&mut s);
        assert!(s == g);
    }
}

/// At MWM 1 and 2 most invocations of a dispatch hit at once: the atomic claim must record one
/// consistent (counter, lane) pair, never one invocation's counter with another's lane.
#[test]
fn simultaneous_hits_record_one_consistent_hit() {
    let _serial = serial();
    for v in [(false, None), (true, None)] {
        let Some(dev) = device(v) else { return };
        // Warm up so that dispatches have grown past one workgroup.
        let job = SearchJob::new(&common::random_tx(40), 80).unwrap();
        let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_millis(200)));
        dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        assert!(dev.dispatch_invocations() > 1);
        for i in 0..30 {
            search_valid(
                &dev,
                &common::random_tx(4000 + i),
                1 + (i % 2) as usize,
                CounterRange::ALL,
            );
        }
    }
}

#[test]
fn mwm_zero_hits_at_once() {
    let _serial = serial();
    let Some(dev) = device((false, None)) else {
        return;
    };
    let tx = common::random_tx(3);
    search_valid(&dev, &tx, 0, CounterRange { start: 5, len: 1 });
}

#[test]
fn cancel_from_another_thread_stops_promptly() {
    let _serial = serial();
    for v in [(false, None), (true, None)] {
        let Some(dev) = device(v) else { return };
        let job = SearchJob::new(&common::random_tx(9), 60).unwrap();
        let token = CancelToken::new();
        let ctl = SearchControl::new(Some(token.clone()), None);
        let t2 = token.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            t2.cancel();
            Instant::now()
        });
        let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        let returned = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        assert_eq!(out.hit, None);
        assert!(out.nonces > 0);
        let late = returned.saturating_duration_since(cancelled_at);
        assert!(
            late < Duration::from_millis(1500),
            "returned {late:?} after cancel"
        );
    }
}

#[test]
fn deadline_stops_promptly() {
    let _serial = serial();
    let Some(dev) = device((false, None)) else {
        return;
    };
    let job = SearchJob::new(&common::random_tx(11), 60).unwrap();
    let start = Instant::now();
    let ctl = SearchControl::new(None, Some(start + Duration::from_millis(400)));
    let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
    let took = start.elapsed();
    assert_eq!(out.hit, None);
    assert!(took >= Duration::from_millis(400));
    assert!(took < Duration::from_millis(2000), "took {took:?}");
}

#[test]
fn dispatch_size_and_length_adapt_and_are_reported() {
    let _serial = serial();
    let Some(dev) = device((false, None)) else {
        return;
    };
    let job = SearchJob::new(&common::random_tx(12), 60).unwrap();
    let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_millis(800)));
    dev.search(&job, CounterRange::ALL, &ctl).unwrap();
    // The size grows from the wave estimate while nonces per second rise (unit-tested in
    // src/backend/gpu/sizer.rs) within bounds; the length fills the target dispatch time.
    let n = dev.dispatch_invocations();
    assert!(n >= dev.tuning().workgroup_size, "{n} invocations");
    assert!(n <= dev.tuning().max_invocations, "{n} invocations");
    assert_eq!(n % dev.tuning().workgroup_size, 0);
    let t = dev.dispatch_transforms();
    assert!(t >= 1 && t <= u64::from(dev.tuning().transforms_per_invocation));
    let st = dev.launch_stats().expect("launch stats");
    assert_eq!(st.items, u64::from(n));
    assert!(
        st.items >= st.wave_items,
        "never below the wave estimate: {st:?}"
    );
    assert_eq!(st.transforms_per_item, t);
    assert_eq!(st.counters_per_launch, st.items * t);
    assert_eq!(st.in_flight, 2);
    assert!(st.build_ms.unwrap() > 0.0 && st.first_launch_ms.is_some());
    assert!(st.bytes_per_nonce.unwrap() > 1000.0);
    let last = st.last_search.unwrap();
    assert!(last.launches >= 2 && last.wall_ms > 0.0, "{last:?}");
    assert!(last.kernel_ms.is_none(), "wgpu has no device times here");
}

/// A forced dispatch shape with several transforms per invocation: the kernel's loop, its early
/// exit after a hit and the honest count of the skipped offsets, on an adapter of its own.
#[test]
fn forced_dispatches_are_valid_and_counted_honestly() {
    let _serial = serial();
    for force32 in [false, true] {
        let found = discover_wgpu(&software(), Some(looped()), force32);
        let Some(dev) = found.devices.into_iter().next() else {
            common::gpu_available("wgpu", false);
            return;
        };
        dev.force_launch(Some(32), Some(3));
        let st = dev.launch_stats().unwrap();
        assert_eq!(
            (st.items, st.transforms_per_item, st.sizing.as_str()),
            (32, 3, "forced")
        );
        for mwm in [1, 5, 8] {
            search_valid(
                &dev,
                &common::random_tx(6000 + mwm as u64),
                mwm,
                CounterRange::ALL,
            );
        }
        let job = SearchJob::new(&common::random_tx(13), 100).unwrap();
        let ctl = SearchControl::new(None, None);
        let range = CounterRange {
            start: (1 << 32) - 50,
            len: 301,
        };
        let out = dev.search(&job, range, &ctl).unwrap();
        assert_eq!(out.nonces, 301 * dev.lanes() as u64, "exactly the range");
        // MWM 1: every invocation hits on its first transform and stops; the dispatch queued
        // behind stops at its first flag check.
        let job = SearchJob::new(&common::random_tx(14), 1).unwrap();
        let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        assert!(job.verify(out.hit.unwrap()).is_some());
        let per_dispatch = 32 * 3 * dev.lanes() as u64;
        assert!(out.nonces >= dev.lanes() as u64);
        assert!(
            out.nonces <= per_dispatch / 3 + dev.lanes() as u64,
            "{}",
            out.nonces
        );
    }
}

#[test]
fn device_info_is_complete() {
    let _serial = serial();
    let Some(dev) = device((false, None)) else {
        return;
    };
    let info = dev.info();
    assert_eq!(info.backend, Backend::Wgpu);
    assert!(info.id.starts_with("wgpu:"), "{}", info.id);
    assert!(info.id["wgpu:".len()..].parse::<usize>().is_ok());
    assert!(!info.name.is_empty());
    for key in [
        "driver",
        "driver_info",
        "device_type",
        "backend_api",
        "vendor",
        "device",
        "lanes_64bit",
        "workgroup_size",
        "max_dispatch_invocations",
    ] {
        assert!(info.details.contains_key(key), "missing {key}");
    }
    assert_eq!(info.lanes, dev.lanes());
    assert_eq!(info.kernel, format!("{}-lane", dev.lanes()));
    assert!(info.declared_nonces_per_second.is_some());
    if dev.is_software() {
        assert!(info.software);
        assert_eq!(info.kind, DeviceKind::Cpu);
        assert_eq!(info.details["device_type"], "cpu");
    } else {
        assert!(
            info.pci_vendor_id.is_some(),
            "a hardware adapter has a vendor id"
        );
    }
}

#[test]
fn discovery_without_software_never_returns_llvmpipe() {
    let _serial = serial();
    let found = curlpow::internal::wgpu::discover(&DiscoverOptions::default(), false);
    for d in &found.devices {
        assert!(!d.info().software, "{}", d.info().name);
        assert_ne!(d.info().kind, DeviceKind::Cpu, "{}", d.info().name);
        assert!(!d.info().name.to_lowercase().contains("llvmpipe"));
    }
    // A skipped software adapter is said, not hidden.
    let lavapipe = curlpow::internal::wgpu::discover_wgpu(&software(), None, false)
        .devices
        .iter()
        .any(|d| d.is_software());
    if lavapipe {
        assert!(
            found.warnings.iter().any(|w| w.contains("software driver")),
            "{:?}",
            found.warnings
        );
    }
    // With software adapters, lavapipe (where installed) is listed after every GPU.
    let all = curlpow::internal::wgpu::discover(&software(), false);
    let kinds: Vec<DeviceKind> = all.devices.iter().map(|d| d.info().kind).collect();
    if let Some(first_cpu) = kinds.iter().position(|k| *k == DeviceKind::Cpu) {
        assert!(kinds[first_cpu..].iter().all(|k| *k == DeviceKind::Cpu));
    }
    assert!(all.devices.len() >= found.devices.len());
}

/// Hashrate on the first device, both lane widths (not a timed test: run with
/// `cargo test --release --test wgpu -- --ignored --nocapture bench`).
#[test]
#[ignore]
fn bench_hashrate() {
    let _serial = serial();
    let secs: f64 = std::env::var("CURLPOW_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    for force32 in [false, true] {
        let t0 = Instant::now();
        // CURLPOW_BENCH_WG / CURLPOW_BENCH_T / CURLPOW_BENCH_FUSE override the workgroup size,
        // transforms per invocation and fused rounds (software defaults otherwise) to compare
        // kernel shapes.
        let env = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<u32>().ok());
        let tuning = (env("CURLPOW_BENCH_WG").is_some()
            || env("CURLPOW_BENCH_T").is_some()
            || env("CURLPOW_BENCH_FUSE").is_some())
        .then(|| {
            let d = Tuning::software();
            Tuning {
                workgroup_size: env("CURLPOW_BENCH_WG").unwrap_or(d.workgroup_size),
                transforms_per_invocation: env("CURLPOW_BENCH_T")
                    .unwrap_or(d.transforms_per_invocation),
                fuse: env("CURLPOW_BENCH_FUSE").unwrap_or(d.fuse),
                ..d
            }
        });
        let found = discover_wgpu(&software(), tuning, force32);
        let open = t0.elapsed();
        let Some(dev) = found.devices.into_iter().next() else {
            common::gpu_available("wgpu", false);
            return;
        };
        let job = SearchJob::new(&common::random_tx(5), 80).unwrap();
        // Warm-up: the first dispatch compiles; then the dispatch size settles.
        let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_secs(1)));
        dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        let start = Instant::now();
        let ctl = SearchControl::new(None, Some(start + Duration::from_secs_f64(secs)));
        let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        let took = start.elapsed().as_secs_f64();
        println!(
            "wgpu bench: {} ({}), {}-bit lanes: {:.3} M nonces/s over {:.1} s; discover+open (compile included) {:.0} ms, dispatch {} invocations x {} transforms, fuse {}",
            dev.info().name,
            dev.info().details["driver_info"],
            dev.lanes(),
            out.nonces as f64 / took / 1e6,
            took,
            open.as_secs_f64() * 1e3,
            dev.dispatch_invocations(),
            dev.tuning().transforms_per_invocation,
            dev.tuning().fuse,
        );
        // Whole searches at MWM 9 (the testnet weight): latency, dominated by dispatch sizing
        // and read-back at this size.
        let mut times: Vec<f64> = (0..15)
            .map(|i| {
                let job = SearchJob::new(&common::random_tx(500 + i), 9).unwrap();
                let ctl = SearchControl::new(None, None);
                let t = Instant::now();
                let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
                let hit = out.hit.expect("MWM 9 hit");
                assert!(job.verify(hit).is_some());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "wgpu bench: {}-bit lanes, MWM 9 search: median {:.1} ms, min {:.1} ms, max {:.1} ms (15 random transactions)",
            dev.lanes(),
            times[7],
            times[0],
            times[14],
        );
    }
}
