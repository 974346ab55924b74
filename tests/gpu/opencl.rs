//! The OpenCL backend on a real driver (PoCL on CI and on hosts without a GPU, any GPU where
//! there is one): the device transform against the scalar reference and the public vectors,
//! searches checked on the host, stopping, and discovery.
//!
//! Without an OpenCL device every test is skipped with a visible message, or fails when
//! `CURLPOW_REQUIRE_BACKENDS` names `opencl`.
#![cfg(feature = "opencl")]

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use curlpow::device::Device;
use curlpow::device::SearchControl;
use curlpow::device::{CounterRange, SearchJob};
use curlpow::internal::opencl::{discover_opencl, KernelConfig, OpenClDevice};
use curlpow::internal::DiscoverOptions;
use curlpow::{curl::STATE_LEN, Backend, CancelToken, DeviceKind};

fn software() -> DiscoverOptions {
    DiscoverOptions {
        include_software: true,
    }
}

/// The first OpenCL device with kernel `cfg` (`None`: its default), shared by every test of this
/// binary so that each variant is compiled once.
fn device(cfg: Option<KernelConfig>) -> Option<Arc<OpenClDevice>> {
    type Cache = Mutex<HashMap<Option<KernelConfig>, Option<Arc<OpenClDevice>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let dev = cache
        .lock()
        .unwrap()
        .entry(cfg)
        .or_insert_with(|| discover_opencl(&software(), cfg).devices.into_iter().next())
        .clone();
    if common::gpu_available("opencl", dev.is_some()) {
        dev
    } else {
        None
    }
}

/// A kernel variant by name; a name that does not parse fails the test (it must never quietly
/// test the default instead).
fn kc(name: &str) -> Option<KernelConfig> {
    Some(KernelConfig::parse(name).unwrap_or_else(|| panic!("{name:?} is not a kernel variant")))
}

/// The kernel variants every correctness test runs on.
fn variants() -> Vec<Option<KernelConfig>> {
    vec![
        None,
        Some(KernelConfig::U32),
        Some(KernelConfig::U64),
        Some(KernelConfig::U64X8),
        kc("u32:local"),
        kc("u64x8-f1"),
        kc("u32-f1:local"),
        kc("u32-f5"),
        kc("u64x8-f5"),
        kc("u64-p"),
        kc("u64x8-p4"),
        kc("u32-f5-p3"),
        kc("u32:coop"),
        kc("u32-f4:coop"),
        kc("u32:coop64"),
        kc("u32:coop128"),
    ]
}

/// The variants the search tests run on: the defaults, both scalar words, prefetch and the
/// cooperative kernel.
fn search_variants() -> Vec<Option<KernelConfig>> {
    vec![
        None,
        Some(KernelConfig::U32),
        Some(KernelConfig::U64),
        kc("u64-p"),
        kc("u32-f5-p3"),
        Some(KernelConfig::U32_COOP),
        Some(KernelConfig::U32_COOP_F4),
        kc("u32:coop64"),
    ]
}

#[test]
fn transform_matches_the_scalar_reference_on_random_states() {
    for cfg in variants() {
        let Some(dev) = device(cfg) else { return };
        // More than one work-item's lanes for the narrow kernels, a partial one for the wide.
        let n = dev.lanes() + 37;
        let states = common::random_states(n, 0xC0FFEE ^ dev.lanes() as u64);
        let got = dev.transform(&states).expect("device transform");
        assert_eq!(got.len(), n);
        for (k, (mut want, got)) in states.into_iter().zip(got).enumerate() {
            curlpow::curl::transform(&mut want);
            assert!(
                want == got,
                "kernel {}: state {k} differs from the scalar transform",
                dev.kernel()
            );
        }
    }
}

#[test]
fn transform_rejects_non_trits() {
    let Some(dev) = device(None) else { return };
    let mut st = [0i8; STATE_LEN];
    st[5] = 2;
    match dev.transform(&[[0; STATE_LEN], st]) {
        Err(curlpow::Error::NotATrit { index, value }) => {
            assert_eq!((index, value), (STATE_LEN + 5, 2));
        }
        other => panic!("expected NotATrit, got {other:?}"),
    }
    assert!(dev.transform(&[]).unwrap().is_empty());
}

/// A Curl-P-81 sponge run on the device transform matches every public vector.
#[test]
fn sponge_on_the_device_transform_matches_the_public_vectors() {
    let Some(dev) = device(None) else { return };
    let n = common::check_vectors_with("opencl", |states| {
        dev.transform(&states).expect("device transform")
    });
    assert!(n > 400, "expected the public vectors");
}

fn search_and_check(dev: &OpenClDevice, tx: &curlpow::Transaction, mwm: usize) {
    common::device_search_valid(dev, dev.lanes(), tx, mwm, CounterRange::ALL);
}

#[test]
fn search_is_valid_at_mwm_1_to_9_on_random_transactions() {
    for cfg in search_variants() {
        let Some(dev) = device(cfg) else { return };
        for mwm in 1..=9 {
            let tx = common::random_tx(1000 + mwm as u64 + 17 * dev.lanes() as u64);
            search_and_check(&dev, &tx, mwm);
        }
    }
}

#[test]
fn search_is_valid_on_the_public_pow_inputs() {
    let Some(dev) = device(None) else { return };
    let inputs = common::pow_inputs();
    assert!(!inputs.is_empty());
    for (tx, mwm_used) in inputs {
        // The suites used MWM 9 to 14; 10 keeps the test short on a CPU driver.
        search_and_check(&dev, &tx, mwm_used.min(10));
    }
}

#[test]
fn search_stays_inside_its_counter_range() {
    for cfg in search_variants() {
        let Some(dev) = device(cfg) else { return };
        range_discipline(&dev);
    }
}

fn range_discipline(dev: &OpenClDevice) {
    let tx = common::random_tx(77);
    // Unreachable MWM over 5 counters: the search ends by exhausting its range.
    let job = SearchJob::new(&tx, 200).unwrap();
    let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_secs(60)));
    let range = CounterRange {
        start: u64::MAX - 10,
        len: 5,
    };
    let out = dev.search(&job, range, &ctl).unwrap();
    assert_eq!(out.hit, None);
    assert_eq!(out.nonces, 5 * dev.lanes() as u64);
    // A reachable MWM in a range far from 0: the hit's counter is inside it.
    let job = SearchJob::new(&tx, 6).unwrap();
    let range = CounterRange {
        start: 1 << 50,
        len: 1 << 20,
    };
    let hit = dev.search(&job, range, &ctl).unwrap().hit.expect("hit");
    assert!(hit.counter >= range.start && hit.counter < range.start + range.len);
    let done = job.verify(hit).expect("host check");
    common::assert_valid_pow(&tx, &done, 6);
}

/// A device of its own with a forced launch shape: several transforms per state, so the
/// kernel's loop, its early exit after a hit and the honest count of what it skipped are used.
fn forced_device(cfg: Option<KernelConfig>, items: usize, iters: u64) -> Option<Arc<OpenClDevice>> {
    let dev = discover_opencl(&software(), cfg).devices.into_iter().next();
    if !common::gpu_available("opencl", dev.is_some()) {
        return None;
    }
    let dev = dev?;
    dev.force_launch(Some(items), Some(iters));
    Some(dev)
}

#[test]
fn forced_launches_with_many_transforms_per_state_are_valid_and_counted_honestly() {
    for cfg in [None, Some(KernelConfig::U32_COOP)] {
        let Some(dev) = forced_device(cfg, 8, 5) else {
            return;
        };
        let st = dev.launch_stats().unwrap();
        assert_eq!(st.transforms_per_item, 5);
        assert_eq!(st.sizing, "forced");
        for mwm in [1, 4, 7] {
            let tx = common::random_tx(3000 + mwm as u64);
            search_and_check(&dev, &tx, mwm);
        }
        range_discipline(&dev);
        // Exactly the range's counters when nothing is found, over launches of 5 per state.
        let job = SearchJob::new(&common::random_tx(8), 200).unwrap();
        let ctl = SearchControl::new(None, None);
        let range = CounterRange {
            start: 12345,
            len: 1001,
        };
        let out = dev.search(&job, range, &ctl).unwrap();
        assert_eq!(out.nonces, 1001 * dev.lanes() as u64);
        let t = dev.launch_stats().unwrap().last_search.unwrap();
        assert!(t.launches >= 2, "{t:?}");
        // MWM 1 hits at once in every state: the states stop after one transform and the
        // pipelined launch behind it stops at its first flag check, so far fewer than the
        // submitted counters are counted (each launch covers states × 5).
        let job = SearchJob::new(&common::random_tx(9), 1).unwrap();
        let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        assert!(job.verify(out.hit.unwrap()).is_some());
        let per_launch = st.counters_per_launch * dev.lanes() as u64;
        assert!(out.nonces >= dev.lanes() as u64);
        assert!(
            out.nonces < 2 * per_launch,
            "{} nonces counted, {per_launch} per launch",
            out.nonces
        );
    }
}

#[test]
fn launch_sizing_and_build_facts_are_reported() {
    let Some(dev) = own_device() else { return };
    let st = dev.launch_stats().expect("launch stats");
    assert!(st.build_ms.unwrap() > 0.0);
    assert!(st.first_launch_ms.is_some());
    assert!(st.compiler.contains_key("build_log"));
    assert!(st.compiler.contains_key("build_options"));
    assert!(
        st.compiler.contains_key("private_mem_bytes"),
        "{:?}",
        st.compiler
    );
    assert!(st.bytes_per_nonce.unwrap() > 1000.0);
    assert_eq!(st.in_flight, 2);
    let wave = st.wave_items;
    assert!(wave >= 1 && st.items >= wave, "{st:?}");
    let job = SearchJob::new(&common::random_tx(21), 60).unwrap();
    let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_millis(600)));
    let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
    let st = dev.launch_stats().unwrap();
    assert!(st.launches > 0, "{st:?}");
    assert!(["growing", "settled"].contains(&st.sizing.as_str()));
    assert!(st.items >= wave, "never below the wave estimate: {st:?}");
    assert_eq!(st.counters_per_launch, st.items * st.transforms_per_item);
    assert!(st.best_nonces_per_second.unwrap() > 0.0);
    let t = st.last_search.unwrap();
    assert!(t.launches >= 2 && t.wall_ms > 0.0);
    // PoCL profiles: device times are known.
    assert!(t.kernel_ms.unwrap() > 0.0 && t.read_ms.is_some(), "{t:?}");
    assert!(out.nonces > 0);
}

/// Compiling happens before the clock: `bench` reports it apart (`prepare_ms`, the build
/// time) and its measured seconds and the device's busy time exclude it.
#[test]
fn compile_time_stays_out_of_bench_and_busy_time() {
    let engine = curlpow::Engine::builder()
        .backends(&[Backend::Opencl])
        .include_software(true)
        .build()
        .unwrap();
    let devices: Vec<_> = engine
        .device_report()
        .into_iter()
        .filter(|d| d.info.backend == Backend::Opencl)
        .collect();
    if !common::gpu_available("opencl", !devices.is_empty()) {
        return;
    }
    let id = devices[0].info.id.clone();
    // Before preparing: the sizing it starts from, no build yet.
    let before = devices[0].info.details.clone();
    assert!(before.contains_key("launch"), "{before:?}");
    assert!(before["launch"]["build_ms"].is_null(), "not built yet");
    let r = engine.bench(&id, Duration::from_millis(300)).unwrap();
    let launch = r.launch.clone().expect("launch stats in bench");
    assert!(r.prepare_ms > 0.0);
    assert!(launch.build_ms.unwrap() > 0.0 && launch.items > 0 && launch.transforms_per_item > 0);
    assert!(r.seconds < 0.3 + 0.25, "{} s measured", r.seconds);
    let again = engine.bench(&id, Duration::from_millis(200)).unwrap();
    assert!(
        again.prepare_ms < 5.0,
        "prepared once: {} ms",
        again.prepare_ms
    );
    let report = engine
        .device_report()
        .into_iter()
        .find(|d| d.info.id == id)
        .unwrap();
    assert!(
        report.stats.busy_seconds < r.seconds + again.seconds + 0.1,
        "busy {} s",
        report.stats.busy_seconds
    );
    let l = &report.info.details["launch"];
    assert!(l["items"].as_u64().unwrap() > 0, "{l}");
    assert!(l["build_ms"].as_f64().unwrap() > 0.0);
    let json = serde_json::to_value(&again).unwrap();
    assert!(json["launch"]["transforms_per_item"].as_u64().unwrap() > 0);
}

/// A device of its own (not shared with the other tests of this binary), compiled, for the
/// tests that time a search.
fn own_device() -> Option<Arc<OpenClDevice>> {
    let dev = discover_opencl(&software(), None)
        .devices
        .into_iter()
        .next();
    if !common::gpu_available("opencl", dev.is_some()) {
        return None;
    }
    let dev = dev?;
    dev.prepare().expect("compile");
    Some(dev)
}

#[test]
fn cancel_from_another_thread_stops_between_launches() {
    let Some(dev) = own_device() else { return };
    let job = SearchJob::new(&common::random_tx(5), 60).unwrap();
    let token = CancelToken::new();
    let ctl = SearchControl::new(Some(token.clone()), None);
    let t2 = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        t2.cancel();
        Instant::now()
    });
    let before = dev.nonces_tried();
    let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
    let returned = Instant::now();
    let cancelled_at = canceller.join().unwrap();
    assert_eq!(out.hit, None);
    assert!(out.nonces > 0);
    assert!(dev.nonces_tried() >= before + out.nonces);
    let late = returned.saturating_duration_since(cancelled_at);
    assert!(
        late < Duration::from_millis(1000),
        "returned {late:?} after cancel"
    );
}

#[test]
fn deadline_ends_the_search() {
    let Some(dev) = own_device() else { return };
    let job = SearchJob::new(&common::random_tx(6), 60).unwrap();
    let start = Instant::now();
    let ctl = SearchControl::new(None, Some(start + Duration::from_millis(300)));
    let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
    let took = start.elapsed();
    assert_eq!(out.hit, None);
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn discovery_lists_software_devices_only_on_request() {
    let all = discover_opencl(&software(), None);
    let hw = discover_opencl(&DiscoverOptions::default(), None);
    assert!(hw
        .devices
        .iter()
        .all(|d| matches!(d.info().kind, DeviceKind::Gpu | DeviceKind::Accelerator)));
    let cpus = all
        .devices
        .iter()
        .filter(|d| d.info().kind == DeviceKind::Cpu)
        .count();
    assert_eq!(all.devices.len(), hw.devices.len() + cpus);
    // GPUs first, ids stable and well formed.
    let kinds: Vec<_> = all.devices.iter().map(|d| d.info().kind).collect();
    let first_cpu = kinds.iter().position(|k| *k == DeviceKind::Cpu);
    if let Some(i) = first_cpu {
        assert!(kinds[..i].iter().all(|k| *k != DeviceKind::Cpu));
        assert!(kinds[i..]
            .iter()
            .all(|k| *k == DeviceKind::Cpu || *k == DeviceKind::Other));
    }
    let again = discover_opencl(&software(), None);
    for (a, b) in all.devices.iter().zip(&again.devices) {
        assert_eq!(a.info().id, b.info().id);
    }
    for d in &all.devices {
        let info = d.info();
        assert_eq!(info.backend, Backend::Opencl);
        let parts: Vec<&str> = info.id.split(':').collect();
        assert_eq!(parts.len(), 3, "{}", info.id);
        assert_eq!(parts[0], "opencl");
        assert!(parts[1].parse::<usize>().is_ok() && parts[2].parse::<usize>().is_ok());
        for key in [
            "platform",
            "driver_version",
            "compute_units",
            "global_mem_bytes",
            "max_work_group_size",
        ] {
            assert!(info.details.contains_key(key), "{}: no {key}", info.id);
        }
        assert_eq!(info.lanes, d.lanes());
        assert_eq!(info.kernel, d.kernel().name());
        assert!(info.declared_nonces_per_second.is_some());
        assert_eq!(info.software, info.kind == DeviceKind::Cpu);
    }
    // The engine-facing entry point returns the same devices.
    let dynamic = curlpow::internal::opencl::discover(&software());
    assert_eq!(dynamic.devices.len(), all.devices.len());
    common::gpu_available("opencl", !all.devices.is_empty());
}

#[test]
fn discovery_is_fast() {
    // Discovery probes drivers only; it compiles nothing. Alone it takes ~40 ms on PoCL, but a
    // driver may hold a lock while another test's kernel compiles: the best of a few tries must
    // be fast.
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let found = discover_opencl(&software(), None);
        times.push(start.elapsed());
        if found.devices.is_empty() {
            assert!(!found.warnings.is_empty(), "no devices and no warning");
        }
        if times.last().unwrap() < &Duration::from_millis(500) {
            return;
        }
    }
    panic!("discovery took {times:?}");
}

/// With no OpenCL driver installed, discovery returns no device and a warning within 100 ms
/// (ocl's own `Platform::list()` would panic after 10 s). Simulated in a child process whose ICD
/// loader reads an empty vendors folder (`OCL_ICD_VENDORS`); the loader's platform list is fixed
/// per process, hence the child.
#[test]
fn no_driver_means_no_devices_at_once() {
    const NAME: &str = "no_driver_means_no_devices_at_once";
    if std::env::var_os("CURLPOW_OPENCL_TEST_CHILD").is_some() {
        let start = Instant::now();
        let found = discover_opencl(&software(), None);
        let took = start.elapsed();
        assert!(found.devices.is_empty(), "found devices with no driver");
        assert!(!found.warnings.is_empty(), "no warning");
        assert!(took < Duration::from_millis(100), "discovery took {took:?}");
        let engine_view = curlpow::internal::opencl::discover(&software());
        assert!(engine_view.devices.is_empty() && !engine_view.warnings.is_empty());
        println!("child: {took:?}, {:?}", found.warnings);
        return;
    }
    let empty = std::env::temp_dir().join(format!("curlpow-no-icd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        // The name libtest runs this test under (its module path included): its thread's.
        .args(["--exact", std::thread::current().name().unwrap_or(NAME)])
        .args(["--nocapture", "--test-threads=1"])
        .env("CURLPOW_OPENCL_TEST_CHILD", "1")
        .env("OCL_ICD_VENDORS", &empty)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed") && stdout.contains("child:"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kernel_config_names_round_trip() {
    for name in [
        "u32",
        "u64",
        "u64x8",
        "u32x16",
        "u64x4:local",
        "u32:local",
        "u64x8-f1",
        "u32-f1:local",
        "u64-f5",
        "u64-p",
        "u64-f5-p4",
        "u32x2-p3:local",
        "u32:coop",
        "u32-f4:coop",
        "u32:coop64",
    ] {
        let c = KernelConfig::parse(name).unwrap();
        assert_eq!(c.name(), name);
        assert!(c.lanes() <= 729);
    }
    for bad in [
        "",
        "u16",
        "u64x3",
        "u64x16",
        "u32:global",
        "x8",
        "u64-f2",
        "u64-f",
        "u64-f1-p",
        "u64-p5",
        "u64-p-f5",
        "u64:coop",
        "u32x2:coop",
        "u32-f5:coop",
        "u32-f4:coop64",
        "u32:coop4",
    ] {
        assert!(KernelConfig::parse(bad).is_none(), "{bad}");
    }
    assert_eq!(KernelConfig::parse("U64X8"), Some(KernelConfig::U64X8));
}

/// Hashrate of every kernel variant on the first device: `cargo test --release --features
/// opencl --test opencl -- --ignored --nocapture bench` (`CURLPOW_BENCH_SECS`, default 5).
#[test]
#[ignore = "benchmark, not a test"]
fn bench_opencl_hashrate() {
    let secs: u64 = std::env::var("CURLPOW_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let names = [
        "u32",
        "u64",
        "u64x4",
        "u64x8",
        "u32x16",
        "u64x8-f1",
        "u64x8-f5",
        "u32x16-f1",
        "u32:local",
        "u64x8-p",
        "u32:coop",
    ];
    for name in names {
        let Some(dev) = device(kc(name)) else {
            return;
        };
        let t = Instant::now();
        dev.prepare().unwrap();
        let prep = t.elapsed();
        let job = SearchJob::new(&common::random_tx(9), 243).unwrap();
        // Warm up (JIT, launch-size adaptation), then measure.
        let ctl = SearchControl::new(None, Some(Instant::now() + Duration::from_millis(500)));
        dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        let start = Instant::now();
        let ctl = SearchControl::new(None, Some(start + Duration::from_secs(secs)));
        let out = dev.search(&job, CounterRange::ALL, &ctl).unwrap();
        let rate = out.nonces as f64 / start.elapsed().as_secs_f64();
        println!(
            "opencl {} kernel {:<10} {:>8.3} M nonces/s (prepare {:?})",
            dev.info().name,
            dev.kernel().name(),
            rate / 1e6,
            prep
        );
    }
}

/// Trailing zeros of block nonce `nonce` by the scalar reference transform.
fn block_reference_zeros(job: &curlpow::block::BlockJob, nonce: u64) -> usize {
    use curlpow::block;
    let mut s = *job.state();
    s[curlpow::internal::block_layout::LANE_TRITS.start
        ..curlpow::internal::block_layout::COUNTER_TRITS.end]
        .copy_from_slice(&block::b1t6::encode(&nonce.to_le_bytes()));
    curlpow::curl::transform(&mut s);
    curlpow::trits::trailing_zeros(&s[..243])
}

#[test]
fn block_search_is_valid_on_every_search_variant() {
    use curlpow::block::{self, BlockJob};
    for cfg in search_variants() {
        let Some(dev) = device(cfg) else { return };
        // Counters whose bytes carry (255, 65535) and counters above 2^32.
        for (k, start) in [0u64, 250, 65_530, (1 << 40) - 3].into_iter().enumerate() {
            let zeros = [1usize, 3, 5, 7][k];
            let len = [8, 100, 300, 1000][k];
            let msg: Vec<u8> = curlpow::internal::xorshift::bytes(90 + k as u64)
                .take(len)
                .collect();
            let job = BlockJob::new(&msg, block::score_of(zeros, len)).unwrap();
            let ctl = SearchControl::new(None, None);
            let range = CounterRange {
                start,
                len: 1 << 30,
            };
            let out = dev.search_block(&job, range, &ctl).unwrap();
            let hit = out.hit.expect("a hit");
            let name = dev.kernel().name();
            assert!(
                hit.lane < dev.lanes() && hit.counter >= range.start,
                "{name}: {hit:?}"
            );
            let nonce = curlpow::internal::block_layout::nonce_of(hit).unwrap();
            assert!(
                block_reference_zeros(&job, nonce) >= zeros,
                "{name}, {zeros} zeros: {hit:?}"
            );
            assert!(job.verify(hit).is_some(), "{name}: {hit:?}");
        }
    }
}

#[test]
fn block_and_transaction_searches_alternate_on_one_device() {
    use curlpow::block::{self, BlockJob};
    for cfg in [
        None,
        Some(KernelConfig::U32_COOP),
        Some(KernelConfig::U32_COOP_F4),
    ] {
        let Some(dev) = forced_device(cfg, 8, 5) else {
            return;
        };
        for round in 0..2u64 {
            let msg: Vec<u8> = curlpow::internal::xorshift::bytes(700 + round)
                .take(64)
                .collect();
            let job = BlockJob::new(&msg, block::score_of(4, 64)).unwrap();
            let ctl = SearchControl::new(None, None);
            let out = dev
                .search_block(&job, curlpow::internal::block_layout::COUNTERS, &ctl)
                .unwrap();
            let hit = out.hit.expect("a block hit");
            assert!(
                block_reference_zeros(
                    &job,
                    curlpow::internal::block_layout::nonce_of(hit).unwrap()
                ) >= 4
            );
            // Nothing found: exactly the range's nonces are counted, over launches of 5
            // transforms per state.
            let hard = BlockJob::new(&msg, block::score_of(243, 64)).unwrap();
            let range = CounterRange {
                start: 77,
                len: 1001,
            };
            let out = dev.search_block(&hard, range, &ctl).unwrap();
            assert_eq!(out.hit, None);
            assert_eq!(out.nonces, 1001 * dev.lanes() as u64);
            // A transaction search on the same device and program in between.
            let tx = common::random_tx(710 + round);
            search_and_check(&dev, &tx, 5);
        }
    }
}

#[test]
fn transaction_counters_near_the_top_of_the_range_are_converted_exactly() {
    // The counter's trits are computed per trit from pieces of the counter; a hit just below
    // 2^64 checks the highest ones on the host.
    for cfg in [
        None,
        Some(KernelConfig::U32_COOP),
        Some(KernelConfig::U32_COOP_F4),
        kc("u32:coop64"),
    ] {
        let Some(dev) = device(cfg) else { return };
        let tx = common::random_tx(79);
        let job = SearchJob::new(&tx, 6).unwrap();
        let ctl = SearchControl::new(None, None);
        let range = CounterRange {
            start: u64::MAX - (1 << 24),
            len: 1 << 24,
        };
        let hit = dev.search(&job, range, &ctl).unwrap().hit.expect("hit");
        assert!(hit.counter >= range.start);
        let done = job.verify(hit).expect("host check");
        common::assert_valid_pow(&tx, &done, 6);
    }
}
