//! dcurl's API from C: a test program (`c/dcurl_test.c`) compiled against `include/dcurl.h`
//! and this package's `libdcurl.so`; every PoW it prints is checked again here with the
//! scalar reference.

mod dcurl_broker;
mod support;

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
fn bad_input_of_every_kind_is_null() {
    if let Some(out) = run("bad_input") {
        assert_eq!(support::check_results(&out), 1);
    }
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
