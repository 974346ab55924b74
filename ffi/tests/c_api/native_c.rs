//! curlpow's own C API from C: a test program (`c/native_test.c`) compiled against
//! `include/curlpow.h` and this package's `libdcurl.so`; every PoW it prints is checked again
//! here with the scalar reference.

use crate::support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();

fn run(test: &str) -> Option<String> {
    let exe = support::c_program(&PROGRAM, "native_test.c", "dcurl")?;
    let o = support::run(&exe, &[test], true, Duration::from_secs(120));
    let out = support::assert_success(&format!("native_test {test}"), &o);
    assert!(out.contains(&format!("ok {test}")), "{out}");
    for line in out
        .lines()
        .filter(|l| !l.starts_with("RESULT") && !l.starts_with("ok "))
    {
        eprintln!("{test}: {line}");
    }
    Some(out)
}

#[test]
fn calls_before_init_say_not_initialized() {
    run("before_init");
}

#[test]
fn pow_report_devices_and_strings() {
    if let Some(out) = run("basics") {
        assert_eq!(support::check_results(&out), 3);
    }
}

#[test]
fn bad_input_gets_the_right_status_and_message() {
    if let Some(out) = run("bad_input") {
        assert_eq!(support::check_results(&out), 1);
    }
}

#[test]
fn timeout_stops_an_endless_search() {
    run("timeout");
}

#[test]
fn cancel_token_stops_its_calls_only() {
    if let Some(out) = run("cancel") {
        assert_eq!(support::check_results(&out), 1);
    }
}

#[test]
fn ten_threads_at_mwm_9() {
    if let Some(out) = run("threads") {
        assert_eq!(support::check_results(&out), 10);
    }
}

#[test]
fn destroy_cancels_and_init_works_again() {
    if let Some(out) = run("destroy_cancels") {
        assert_eq!(support::check_results(&out), 1);
    }
}

/// `curlpow_init` past the stated thread bound, and `CURLPOW_THREADS` past it: refused at once
/// with a message naming the bound (`curlpow_init(UINT_MAX)` included, which an unbounded
/// pool would try to create).
#[test]
fn thread_counts_past_the_bound_are_refused_at_once() {
    if run("thread_cap").is_none() {
        return;
    }
    let exe = support::c_program(&PROGRAM, "native_test.c", "dcurl").expect("built above");
    let o = support::run_with_env(
        &exe,
        &["thread_cap"],
        false,
        Duration::from_secs(60),
        &[("CURLPOW_THREADS", std::path::Path::new("1000000"))],
    );
    let out = support::assert_success("native_test thread_cap, CURLPOW_THREADS=1000000", &o);
    assert!(out.contains("ok thread_cap"), "{out}");
}
