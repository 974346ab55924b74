//! The static check of the OpenCL kernels for real GPUs (`scripts/gpu-static.sh`, which runs
//! `scripts/gpu_static.py`): every variant `curlpow tune --list --json` names, of both proofs of
//! work, compiles for NVIDIA sm_90 and AMD gfx1100, and each GPU default stays within the
//! budgets `docs/gpu-kernels.md` states (the script's exit status). Without the compilers
//! (clang-19 + libclc, ptxas, nvdisasm) the tests print `SKIPPED:` and pass, unless
//! `CURLPOW_REQUIRE_GPU_STATIC=1` (CI).

use std::process::Command;

use serde_json::Value;

/// Budget rows (`pow/default_for/arch`) the defaults do not meet yet: reported, not failed.
/// None today: both proofs of work run on the cooperative layout.
const KNOWN_FAILING: &str = "";

/// The script's JSON lines and its stderr, or `None` (skipped) when a tool is missing.
fn run_script(args: &[&str]) -> Option<(Vec<Value>, String)> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/gpu-static.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(args)
        .env("CURLPOW", env!("CARGO_BIN_EXE_curlpow"))
        .env("GPU_STATIC_KNOWN_FAILING", KNOWN_FAILING)
        .output()
        .expect("run bash scripts/gpu-static.sh");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.code() == Some(2) {
        curlpow_testkit::skip::skip_unless_required("CURLPOW_REQUIRE_GPU_STATIC", stderr.trim());
        return None;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gpu-static.sh failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    let rows = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    Some((rows, stderr))
}

fn row<'a>(rows: &'a [Value], pow: &str, variant: &str, arch: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["pow"] == pow && r["variant"] == variant && r["arch"] == arch)
        .unwrap_or_else(|| panic!("no row for {pow} {variant} on {arch}"))
}

#[test]
fn gpu_defaults_are_within_the_documented_budgets() {
    // The script exits 1 when a default is past its budget: run_script asserts it did not.
    let Some((rows, stderr)) = run_script(&["--defaults", "--arch", "sm_90,gfx90a"]) else {
        return;
    };
    eprintln!("{stderr}");
    for (arch, label) in [("sm_90", "gpu:nvidia"), ("gfx90a", "gpu")] {
        for pow in ["transaction", "block"] {
            let r = rows
                .iter()
                .find(|r| {
                    r["pow"] == pow
                        && r["arch"] == arch
                        && r["default_for"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|l| l == label)
                })
                .unwrap_or_else(|| panic!("no {pow} default on {arch}"));
            assert!(r.get("error").is_none(), "{r}");
            let hot = &r["hot_loop"];
            assert!(hot["instructions"].as_u64().unwrap() > 0, "{r}");
            assert!(r["bound_nonces_per_s"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    // NVIDIA's transaction default on sm_90 (H100/H200): on chip, its hot loop's op mix read
    // from the SASS.
    let nv = row(&rows, "transaction", "u32-f4:coop", "sm_90");
    assert_eq!(nv["default_for"], serde_json::json!(["gpu:nvidia"]), "{nv}");
    assert_eq!(nv["spill_bytes"], 0, "{nv}");
    assert_eq!(nv["local_ops"], 0, "{nv}");
    assert!(nv["occupancy"].as_f64().unwrap() >= 0.25, "{nv}");
    for k in [
        "lop3",
        "instructions_per_lop3",
        "shared_words_per_lop3",
        "ldl",
        "stl",
    ] {
        assert!(nv["hot_loop"].get(k).is_some(), "{k}: {nv}");
    }
    // The default on other GPUs, on gfx90a (MI200): its VALU mix per pass from the .s.
    let amd = row(&rows, "transaction", "u32:coop64", "gfx90a");
    assert_eq!(amd["spill_bytes"], 0, "{amd}");
    // No division in the pass: the padded layout's write addresses are computed once.
    assert_eq!(amd["hot_loop"]["divisions"], 0, "{amd}");
    for k in [
        "valu",
        "logic_valu_per_sbox",
        "divisions",
        "lds_words_per_sbox",
    ] {
        assert!(amd["hot_loop"].get(k).is_some(), "{k}: {amd}");
    }
}

#[test]
fn every_variant_compiles_for_every_architecture() {
    let Some((rows, _)) = run_script(&["--arch", "sm_90,gfx1100", "--no-budgets"]) else {
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
    assert!(variants.iter().any(|v| v["pow"] == "block"), "{variants:?}");
    for v in &variants {
        for arch in ["sm_90", "gfx1100"] {
            let r = row(
                &rows,
                v["pow"].as_str().unwrap(),
                v["variant"].as_str().unwrap(),
                arch,
            );
            assert!(r.get("error").is_none(), "{r}");
            for k in ["build_options", "kernel", "entry"] {
                assert_eq!(r[k], v[k], "{k}: {r}");
            }
            assert!(r["registers"].as_u64().unwrap() > 0, "{r}");
            assert!(r["bound_nonces_per_s"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}
