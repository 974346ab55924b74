//! The static check of the OpenCL kernels for real GPUs (`scripts/gpu-static.sh`): every
//! variant the tuner can choose compiles for NVIDIA sm_80/sm_89/sm_90 and AMD
//! gfx90a/gfx942/gfx1100, and the untuned GPU defaults keep the state on chip (see
//! `docs/gpu-kernels.md`). Without the compilers (clang-19 + libclc, ptxas, nvdisasm) the test
//! prints `SKIPPED:` and passes, unless `CURLPOW_REQUIRE_GPU_STATIC=1` (CI).

use std::process::Command;

use serde_json::Value;

/// The script's JSON lines, or `None` (skipped) when a tool is missing.
fn run_script(args: &[&str]) -> Option<Vec<Value>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/gpu-static.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(args)
        .env("CURLPOW", env!("CARGO_BIN_EXE_curlpow"))
        .output()
        .expect("run bash scripts/gpu-static.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) {
        let why = stderr.trim();
        curlpow_testkit::skip::skip_unless_required("CURLPOW_REQUIRE_GPU_STATIC", why);
        return None;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gpu-static.sh failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    Some(
        stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect(),
    )
}

fn row<'a>(rows: &'a [Value], variant: &str, arch: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["variant"] == variant && r["arch"] == arch)
        .unwrap_or_else(|| panic!("no row for {variant} on {arch}"))
}

#[test]
fn gpu_defaults_keep_the_state_on_chip() {
    let Some(rows) = run_script(&["--variant", "u32:coop,u32:coop64", "--arch", "sm_90,gfx90a"])
    else {
        return;
    };
    // NVIDIA's default on sm_90 (H100/H200): no spills, at most 64 bytes of stack, a quarter of
    // the warp slots resident, and a modelled H200 bound of at least 2 G nonces/s.
    let nv = row(&rows, "u32:coop", "sm_90");
    assert_eq!(nv["default_for"], serde_json::json!(["gpu:nvidia"]), "{nv}");
    assert_eq!(nv["spill_bytes"], 0, "{nv}");
    assert!(nv["stack_bytes"].as_u64().unwrap() <= 64, "{nv}");
    assert!(nv["occupancy"].as_f64().unwrap() >= 0.25, "{nv}");
    assert!(nv["bound_nonces_per_s"].as_f64().unwrap() >= 2e9, "{nv}");
    // The default on other GPUs, on gfx90a (MI200): at most 64 bytes of scratch, a quarter of
    // the wave slots.
    let amd = row(&rows, "u32:coop64", "gfx90a");
    assert_eq!(amd["default_for"], serde_json::json!(["gpu"]), "{amd}");
    assert!(amd["stack_bytes"].as_u64().unwrap() <= 64, "{amd}");
    assert_eq!(amd["spill_bytes"], 0, "{amd}");
    assert!(amd["occupancy"].as_f64().unwrap() >= 0.25, "{amd}");
    for r in &rows {
        let terms = r["terms"].as_object().expect("terms");
        for k in ["logic", "shared", "device_memory", "occupancy_factor"] {
            assert!(terms.contains_key(k), "{k} missing: {r}");
        }
    }
}

#[test]
fn every_variant_compiles_for_every_architecture() {
    let Some(rows) = run_script(&["--arch", "sm_90,gfx1100"]) else {
        return;
    };
    let list = Command::new(env!("CARGO_BIN_EXE_curlpow"))
        .args(["tune", "--list", "--json"])
        .output()
        .expect("curlpow tune --list --json");
    assert!(list.status.success());
    let variants: Vec<Value> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["backend"] == "opencl")
        .collect();
    assert!(variants.len() >= 4, "{variants:?}");
    for v in &variants {
        for arch in ["sm_90", "gfx1100"] {
            let r = row(&rows, v["variant"].as_str().unwrap(), arch);
            assert!(r.get("error").is_none(), "{r}");
            assert_eq!(r["build_options"], v["build_options"], "{r}");
            assert!(r["registers"].as_u64().unwrap() > 0, "{r}");
            assert!(r["bound_nonces_per_s"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}
