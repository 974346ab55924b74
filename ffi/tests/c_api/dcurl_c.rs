//! dcurl's API from C: a test program (`c/dcurl_test.c`) compiled against `include/dcurl.h`
//! and this package's `libdcurl.so`; every PoW it prints is checked again here with the
//! scalar reference.

mod dcurl_broker;
use crate::support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();

fn run(test: &str) -> Option<String> {
    let exe = support::c_program(&PROGRAM, "dcurl_test.c", "dcurl")?;
    let o = support::run(&exe, &[test], true, Duration::from_secs(120));
    let out = support::assert_success(&format!("dcurl_test {test}"), &o);
    assert!(out.contains(&format!("ok {test}")), "{out}");
    Some(out)
}

#[test]
fn entry_before_init_is_null() {
    run("before_init");
}

#[test]
fn init_entry_destroy_cycles() {
    if let Some(out) = run("cycles") {
        assert_eq!(support::check_results(&out), 7);
    }
}

#[test]
fn ten_threads_at_mwm_9() {
    if let Some(out) = run("threads") {
        assert_eq!(support::check_results(&out), 10);
    }
}

#[test]
fn bad_input_of_every_kind_is_null_and_negative_threads_are_the_default() {
    if let Some(out) = run("bad_input") {
        // threads -1 and -2 (dcurl's default), then the good call after the bad ones.
        assert_eq!(support::check_results(&out), 3);
    }
}

/// Init prints nothing (no driver's noise, with no XDG_RUNTIME_DIR as under a service or in
/// CI) and an init after destroy reuses the devices the first one found: at most 20 ms.
#[test]
fn init_is_quiet_and_a_warm_init_is_fast() {
    let Some(exe) = support::c_program(&PROGRAM, "dcurl_test.c", "dcurl") else {
        return;
    };
    let o = support::run_with_env_removed(
        &exe,
        &["warm_init"],
        Duration::from_secs(120),
        &["XDG_RUNTIME_DIR"],
    );
    let out = support::assert_success("dcurl_test warm_init", &o);
    assert!(out.contains("ok warm_init"), "{out}");
    eprintln!(
        "{}",
        out.lines().find(|l| l.starts_with("init:")).unwrap_or("")
    );
    assert_eq!(support::check_results(&out), 6);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.trim().is_empty(), "init wrote to stderr: {err}");
}

#[test]
fn destroy_cancels_a_search_in_flight() {
    if let Some(out) = run("destroy_cancels") {
        eprintln!(
            "{}",
            out.lines()
                .find(|l| l.starts_with("destroy took"))
                .unwrap_or("")
        );
        assert_eq!(support::check_results(&out), 1);
    }
}
