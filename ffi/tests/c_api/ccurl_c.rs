//! ccurl's API from C: a test program (`c/ccurl_test.c`) compiled against `include/ccurl.h`
//! and this package's `libccurl.so`; every PoW it prints is checked again here with the
//! scalar reference, and its digests against public Curl-P-81 vectors.

use crate::support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();

fn run(args: &[&str]) -> Option<String> {
    let exe = support::c_program(&PROGRAM, "ccurl_test.c", "ccurl")?;
    let o = support::run(&exe, args, true, Duration::from_secs(120));
    let out = support::assert_success(&format!("ccurl_test {}", args[0]), &o);
    assert!(out.contains(&format!("ok {}", args[0])), "{out}");
    Some(out)
}

#[test]
fn pow_without_init_builds_the_engine() {
    if let Some(out) = run(&["lazy"]) {
        assert_eq!(support::check_results(&out), 2);
    }
}

#[test]
fn init_pow_finalize_cycles() {
    if let Some(out) = run(&["cycles"]) {
        assert_eq!(support::check_results(&out), 3);
    }
}

#[test]
fn ten_threads_at_mwm_9() {
    if let Some(out) = run(&["threads"]) {
        assert_eq!(support::check_results(&out), 10);
    }
}

#[test]
fn interrupt_cancels_the_searches_in_flight_only() {
    if let Some(out) = run(&["interrupt"]) {
        eprintln!(
            "{}",
            out.lines()
                .find(|l| l.starts_with("interrupt:"))
                .unwrap_or("")
        );
        assert_eq!(support::check_results(&out), 1);
    }
}

#[test]
fn bad_input_is_null() {
    if let Some(out) = run(&["bad_input"]) {
        assert_eq!(support::check_results(&out), 1);
    }
}

#[test]
fn digest_matches_the_public_vectors() {
    let path =
        support::repo_dir().join("tests/vectors/curlp81_crypto_rs_input_8019_output_243.json");
    let text = std::fs::read_to_string(&path).expect("vectors");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    for case in v["vectors"].as_array().expect("array").iter().take(3) {
        let (input, expected) = (case["in"].as_str().unwrap(), case["out"].as_str().unwrap());
        let Some(out) = run(&["digest", input]) else {
            return;
        };
        let hash = out
            .lines()
            .find_map(|l| l.strip_prefix("HASH "))
            .expect("HASH line");
        assert_eq!(hash, expected);
    }
}
