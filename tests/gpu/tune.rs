//! The tuner on real drivers (PoCL for OpenCL, lavapipe for wgpu). `curlpow tune`: a verified
//! choice is made within the time bound, cached in `$XDG_CACHE_HOME/curlpow/tune.json`, and
//! the next process starts from it (`devices --json`: `kernel_source` `tuned`, the `variant`
//! and the tuned rate); a corrupt or foreign cache is ignored with one warning;
//! `CURLPOW_TUNE=0` and `--no-tune` ignore the cache. The engine's own tuning (in a child
//! process with a cache of its own): the first search on a device starts it and is served at
//! once by the default variant; the device then switches to the choice, which is cached and
//! reused by the next engine; `tune(false)` neither tunes nor reads the cache. Every test uses
//! a temporary `XDG_CACHE_HOME`. Without the driver a test prints `SKIPPED:` and passes, unless
//! `CURLPOW_REQUIRE_BACKENDS` names the backend.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A fresh cache folder for one test, removed at the end.
struct CacheDir(std::path::PathBuf);

impl CacheDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("curlpow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        CacheDir(d)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for CacheDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn curlpow(cache: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_curlpow"));
    c.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("CURLPOW_TUNE")
        .env_remove("CURLPOW_OPENCL_KERNEL")
        .env_remove("CURLPOW_WGPU_TUNING");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("run curlpow")
}

/// The first device of `backend` in `devices --json`, if any.
fn device(cache: &Path, backend: &str, envs: &[(&str, &str)]) -> (Option<Value>, String) {
    device_with(cache, backend, &[], envs)
}

/// [`device`] with more flags after `devices --json --software`.
fn device_with(
    cache: &Path,
    backend: &str,
    flags: &[&str],
    envs: &[(&str, &str)],
) -> (Option<Value>, String) {
    let args: Vec<&str> = ["devices", "--json", "--software"]
        .iter()
        .chain(flags)
        .copied()
        .collect();
    let out = curlpow(cache, &args, envs);
    assert!(out.status.success(), "{out:?}");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = list
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["backend"] == backend)
        .cloned();
    (d, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn tune_then_reuse(backend: &str) {
    let dir = CacheDir::new(&format!("tune-{backend}"));
    let cache = dir.path();
    let (Some(d), _) = device(cache, backend, &[]) else {
        common::gpu_available(backend, false);
        return;
    };
    assert_eq!(d["details"]["kernel_source"], "default", "{d}");
    let id = d["id"].as_str().unwrap().to_string();
    let t = Instant::now();
    let out = curlpow(
        cache,
        &[
            "tune",
            "--json",
            "--software",
            "--device",
            &id,
            "--seconds",
            "4",
        ],
        &[],
    );
    let took = t.elapsed();
    assert!(out.status.success(), "{out:?}");
    // The bound: no candidate starts after 4 s; the one under way may finish its build.
    assert!(took < Duration::from_secs(4 + 40), "tune took {took:?}");
    let trials: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let chosen = |pow: &str| -> Vec<&Value> {
        trials
            .iter()
            .filter(|t| t["chosen"] == true && t["pow"] == pow)
            .collect()
    };
    let tx_chosen = chosen("transaction");
    assert_eq!(tx_chosen.len(), 1, "{trials:?}");
    assert_eq!(tx_chosen[0]["verified"], true);
    let variant = tx_chosen[0]["variant"].as_str().unwrap().to_string();
    // The block round, when the budget left one, chose at most one verified block variant.
    let block_chosen = chosen("block");
    assert!(block_chosen.len() <= 1, "{trials:?}");
    assert!(
        block_chosen.iter().all(|t| t["verified"] == true),
        "{trials:?}"
    );
    assert!(
        trials
            .iter()
            .all(|t| (t["pow"] == "block") == (t["phase"] == "block")),
        "{trials:?}"
    );
    // Every variant that could be built was probed before any was refined.
    let probed = trials.iter().filter(|t| t["phase"] == "probe").count();
    let first_refine = trials.iter().position(|t| t["phase"] == "refine");
    assert!(probed >= 1, "{trials:?}");
    if let Some(k) = first_refine {
        assert!(
            trials[..k].iter().all(|t| t["phase"] == "probe"),
            "{trials:?}"
        );
    }
    // The block trials come last.
    if let Some(k) = trials.iter().position(|t| t["pow"] == "block") {
        assert!(
            trials[k..].iter().all(|t| t["pow"] == "block"),
            "{trials:?}"
        );
    }
    let file = cache.join("curlpow").join("tune.json");
    let cached: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(cached["curlpow"], env!("CARGO_PKG_VERSION"));
    // One choice per proof of work, keyed by it.
    let keys: Vec<&String> = cached["devices"].as_object().unwrap().keys().collect();
    let with = |pow: &str| keys.iter().filter(|k| k.starts_with(pow)).count();
    assert_eq!(with("transaction|"), 1, "{cached}");
    assert_eq!(with("block|"), block_chosen.len(), "{cached}");
    assert_eq!(keys.len(), 1 + block_chosen.len(), "{cached}");

    // The next process starts from the cache.
    let (d, _) = device(cache, backend, &[]);
    let d = d.unwrap();
    let details = &d["details"];
    assert_eq!(details["kernel_source"], "tuned", "{d}");
    assert!(details["tuned_nonces_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(details["variant"], variant.as_str(), "{d}");
    if backend == "opencl" {
        assert_eq!(d["kernel"], variant.as_str(), "{d}");
    }
    // CURLPOW_TUNE=0 and --no-tune: the default.
    let (d, _) = device(cache, backend, &[("CURLPOW_TUNE", "0")]);
    assert_eq!(d.unwrap()["details"]["kernel_source"], "default");
    let (d, _) = device_with(cache, backend, &["--no-tune"], &[]);
    let d = d.unwrap();
    assert_eq!(d["details"]["kernel_source"], "default", "{d}");

    // A corrupt cache and one of another curlpow version: ignored, one warning each.
    for bad in [
        "{not json".to_string(),
        cached
            .to_string()
            .replace(env!("CARGO_PKG_VERSION"), "0.0.0-other"),
    ] {
        std::fs::write(&file, bad).unwrap();
        let (d, stderr) = device(cache, backend, &[]);
        assert_eq!(d.unwrap()["details"]["kernel_source"], "default");
        assert_eq!(stderr.matches("tune cache").count(), 1, "{stderr}");
    }
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_tune_is_cached_and_reused() {
    tune_then_reuse("opencl");
}

#[cfg(feature = "wgpu")]
#[test]
fn wgpu_tune_is_cached_and_reused() {
    tune_then_reuse("wgpu");
}

#[test]
fn list_names_every_variant() {
    let dir = CacheDir::new("tune-list");
    let out = curlpow(dir.path(), &["tune", "--list", "--json"], &[]);
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    for r in &rows {
        for k in [
            "pow",
            "backend",
            "variant",
            "kernel",
            "entry",
            "build_options",
            "nvidia_options",
            "default_for",
        ] {
            assert!(r.get(k).is_some(), "{k}: {r}");
        }
        assert!(r["pow"] == "transaction" || r["pow"] == "block", "{r}");
        // What to compile by hand: a file under kernels/ that defines the entry point (OpenCL;
        // the wgpu search entry points are generated from kernels/search_entry.wgsl).
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels")
            .join(r["kernel"].as_str().unwrap());
        let source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}: {r}"));
        let entry = r["entry"].as_str().unwrap();
        assert!(!entry.is_empty(), "{r}");
        if r["backend"] == "opencl" {
            assert!(
                source.contains(&format!("__kernel void {entry}(")),
                "{} has no kernel {entry}",
                file.display()
            );
        }
    }
    if cfg!(feature = "opencl") {
        // Each GPU default, for each proof of work, on its own kernel.
        for pow in ["transaction", "block"] {
            for label in ["gpu:nvidia", "gpu"] {
                let d: Vec<&Value> = rows
                    .iter()
                    .filter(|r| {
                        r["backend"] == "opencl"
                            && r["pow"] == pow
                            && r["default_for"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .any(|l| l == label)
                    })
                    .collect();
                assert_eq!(d.len(), 1, "{pow} defaults for {label}: {d:?}");
            }
        }
        let nv = rows
            .iter()
            .find(|r| {
                r["default_for"] == serde_json::json!(["gpu:nvidia"])
                    && r["backend"] == "opencl"
                    && r["pow"] == "transaction"
            })
            .expect("an NVIDIA default");
        assert!(
            nv["build_options"].as_str().unwrap().contains("-DCOOP=1"),
            "{nv}"
        );
        assert_eq!(nv["kernel"], "curl_pow.cl", "{nv}");
        // Its register cap keeps a quarter of an SM's warps resident.
        assert_eq!(nv["nvidia_options"], "-cl-nv-maxrregcount=128", "{nv}");
    }
}

/// The child's marker: the backend it tunes.
const CHILD_ENV: &str = "CURLPOW_TEST_AUTO_TUNE";

/// Run [`auto_tune_child`] in a process of its own (its own cache folder, the environment left
/// to it alone) for `backend`.
fn auto_tune_in_child(backend: &str) {
    let dir = CacheDir::new(&format!("auto-tune-{backend}"));
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "tune::auto_tune_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_ENV, backend)
        .env("XDG_CACHE_HOME", dir.path())
        .env_remove("CURLPOW_TUNE")
        .env_remove("CURLPOW_OPENCL_KERNEL")
        .env_remove("CURLPOW_WGPU_TUNING")
        .output()
        .expect("run the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    if text.contains("SKIPPED-NO-DEVICE") {
        common::gpu_available(backend, false);
        return;
    }
    assert!(text.contains("AUTO-TUNE-OK"), "{text}");
}

#[cfg(feature = "opencl")]
#[test]
fn opencl_first_search_tunes_the_device() {
    auto_tune_in_child("opencl");
}

#[cfg(feature = "wgpu")]
#[test]
fn wgpu_first_search_tunes_the_device() {
    auto_tune_in_child("wgpu");
}

/// The engine's own tuning, in the process [`auto_tune_in_child`] starts (a no-op elsewhere).
#[test]
#[ignore = "run in a child process by the *_first_search_tunes_the_device tests"]
fn auto_tune_child() {
    use curlpow::{Backend, Engine, PowOptions, Selection};
    let Ok(name) = std::env::var(CHILD_ENV) else {
        return;
    };
    let backend = Backend::from_name(&name).unwrap();
    let budget = Duration::from_secs(2);
    let build = |tune: bool| {
        Engine::builder()
            .threads(1)
            .backends(&[Backend::Cpu, backend])
            .include_software(true)
            .tune(tune)
            .tune_software(true)
            .tune_budget(budget)
            .build()
            .unwrap()
    };
    let engine = build(true);
    let Some(info) = engine.devices().into_iter().find(|d| d.backend == backend) else {
        println!("SKIPPED-NO-DEVICE");
        return;
    };
    assert_eq!(info.details["kernel_source"], "default", "{info:?}");
    let on_device = |e: &Engine, seed: usize| {
        let tx = common::random_tx(seed as u64);
        let opts = PowOptions::mwm(5)
            .timeout(Duration::from_secs(120))
            .selection(Selection {
                devices: vec![info.id.clone()],
                ..Default::default()
            });
        e.pow_with(&tx, &opts).unwrap()
    };
    // The first search starts the tuning and is served by the default variant, without
    // waiting for the tuner.
    let t = Instant::now();
    let first = on_device(&engine, 1);
    assert_eq!(first.report.device, info.id);
    assert!(first.transaction.weight() >= 5);
    let tuning = engine.tune_reports().is_empty() && !engine.wait_tuning(Duration::ZERO);
    println!(
        "first search {:?}, tuning still running: {tuning}",
        t.elapsed()
    );
    assert!(
        engine.wait_tuning(Duration::from_secs(300)),
        "tuning never ended"
    );
    let reports = engine.tune_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    let variant = r.variant.clone().expect("a verified choice");
    // The bound: no trial starts after the budget; the last may still finish its build.
    assert!(r.seconds < budget.as_secs_f64() + 60.0, "{r:?}");
    // The device switched to the choice, and still finds verified nonces.
    let now = engine
        .devices()
        .into_iter()
        .find(|d| d.id == info.id)
        .unwrap();
    assert_eq!(now.details["kernel_source"], "tuned", "{now:?}");
    assert_eq!(now.details["variant"], variant.as_str(), "{now:?}");
    assert!(on_device(&engine, 2).transaction.weight() >= 5);
    // Cached: the next engine starts from it and does not tune again.
    let file = std::path::PathBuf::from(std::env::var_os("XDG_CACHE_HOME").unwrap())
        .join("curlpow")
        .join("tune.json");
    let cached: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entries = cached["devices"].as_object().unwrap();
    assert_eq!(
        entries.len(),
        1 + usize::from(r.block_variant.is_some()),
        "{cached}"
    );
    // A block variant chosen: the device's block searches run on it, verified on the host.
    if let Some(bv) = &r.block_variant {
        assert!(entries.keys().any(|k| k.starts_with("block|")), "{cached}");
        assert_eq!(now.details["block_variant"], bv.as_str(), "{now:?}");
        assert!(engine.runs_block_pow(&info.id), "{now:?}");
        let message = vec![7u8; 64];
        let found = engine
            .block_pow_with(
                &message,
                curlpow::block::score_of(4, message.len()),
                &PowOptions::default()
                    .timeout(Duration::from_secs(120))
                    .selection(Selection {
                        devices: vec![info.id.clone()],
                        ..Default::default()
                    }),
            )
            .unwrap();
        assert_eq!(found.report.device, info.id);
    }
    drop(engine);
    let next = build(true);
    let d = next
        .devices()
        .into_iter()
        .find(|d| d.id == info.id)
        .unwrap();
    assert_eq!(d.details["kernel_source"], "tuned", "{d:?}");
    assert_eq!(d.details["variant"], variant.as_str(), "{d:?}");
    assert!(on_device(&next, 3).transaction.weight() >= 5);
    assert_eq!(next.start_tuning(), 0);
    assert!(next.tune_reports().is_empty());
    drop(next);
    // tune(false): the cache is not read, and nothing is tuned.
    let off = build(false);
    let d = off.devices().into_iter().find(|d| d.id == info.id).unwrap();
    assert_eq!(d.details["kernel_source"], "default", "{d:?}");
    assert!(on_device(&off, 4).transaction.weight() >= 5);
    assert_eq!(off.start_tuning(), 0);
    assert!(off.wait_tuning(Duration::ZERO) && off.tune_reports().is_empty());
    println!(
        "AUTO-TUNE-OK {variant} at {:.3} M nonces/s",
        r.nonces_per_second / 1e6
    );
}
