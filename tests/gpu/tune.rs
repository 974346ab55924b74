//! `curlpow tune` on real drivers (PoCL for OpenCL, lavapipe for wgpu): a verified choice is
//! made within the time bound, cached in `$XDG_CACHE_HOME/curlpow/tune.json`, and the next
//! process starts from it (`devices --json`: `kernel_source` `tuned`); a corrupt or foreign
//! cache is ignored with one warning; `CURLPOW_TUNE=0` ignores the cache. Without the driver a
//! test prints `SKIPPED:` and passes, unless `CURLPOW_REQUIRE_BACKENDS` names the backend.

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
    let out = curlpow(cache, &["devices", "--json", "--software"], envs);
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
    let chosen: Vec<&Value> = trials.iter().filter(|t| t["chosen"] == true).collect();
    assert_eq!(chosen.len(), 1, "{trials:?}");
    assert_eq!(chosen[0]["verified"], true);
    let variant = chosen[0]["variant"].as_str().unwrap().to_string();
    let file = cache.join("curlpow").join("tune.json");
    let cached: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(cached["curlpow"], env!("CARGO_PKG_VERSION"));
    assert_eq!(cached["devices"].as_object().unwrap().len(), 1, "{cached}");

    // The next process starts from the cache.
    let (d, _) = device(cache, backend, &[]);
    let d = d.unwrap();
    let details = &d["details"];
    assert_eq!(details["kernel_source"], "tuned", "{d}");
    assert!(details["tuned_nonces_per_second"].as_f64().unwrap() > 0.0);
    if backend == "opencl" {
        assert_eq!(d["kernel"], variant.as_str(), "{d}");
    }
    // CURLPOW_TUNE=0: the default.
    let (d, _) = device(cache, backend, &[("CURLPOW_TUNE", "0")]);
    assert_eq!(d.unwrap()["details"]["kernel_source"], "default");

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
        for k in ["backend", "variant", "build_options", "default_for"] {
            assert!(r.get(k).is_some(), "{k}: {r}");
        }
    }
    if cfg!(feature = "opencl") {
        let nv = rows
            .iter()
            .find(|r| {
                r["default_for"] == serde_json::json!(["gpu:nvidia"]) && r["backend"] == "opencl"
            })
            .expect("an NVIDIA default");
        assert!(
            nv["build_options"].as_str().unwrap().contains("-DCOOP=1"),
            "{nv}"
        );
    }
}
