//! Output where a user meets it: results that cannot be written are never
//! exit 0 (closed stdout, a full disk), a reader that leaves is a quiet exit 141 and never a
//! panic, durations a timer cannot hold are usage errors, and a timeout says so once.

use crate::cli_support;
use crate::common;

use std::io::Read;
use std::process::Stdio;

use cli_support::{curlpow, example, with_stdout_closed};
use predicates::prelude::*;

/// Run `args` with `input` on stdin and a stdout pipe whose reader has already gone.
fn into_a_closed_pipe(args: &[&str], input: &str) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut c = std::process::Command::new(cli_support::bin());
    c.args(args)
        .env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_INJECT_FAULT")
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_reader_that_left_is_a_quiet_141_for_every_command() {
    let tx = example();
    let cases: [(&[&str], &str); 6] = [
        (&["devices"], ""),
        (&["devices", "--json"], ""),
        (&["bench", "--seconds", "0.05", "--backend", "cpu"], ""),
        (&["pow", "--mwm", "3", "--backend", "cpu", "-q"], &tx),
        (&["hash"], &tx),
        (&["verify", "--mwm", "0"], &tx),
    ];
    for (args, input) in cases {
        let out = into_a_closed_pipe(args, input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} should be quiet: {stderr}");
    }
}

#[test]
fn a_reader_that_takes_one_line_and_leaves_is_141() {
    // `curlpow pow | head -1`: more output than a pipe holds, the reader takes one line.
    let input: String = (0..60).map(|_| example()).collect();
    let mut child = std::process::Command::new(cli_support::bin())
        .args(["pow", "--mwm", "1", "--backend", "cpu", "-q"])
        .env("CURLPOW_THREADS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let mut first = vec![0u8; 2674];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let tx: curlpow::Transaction = std::str::from_utf8(&first).unwrap().parse().unwrap();
    assert!(tx.weight() >= 1);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(out.stderr.is_empty());
}

#[test]
fn closed_stdout_is_exit_1_before_any_work() {
    let tx = example();
    let cases: [(&[&str], &str); 5] = [
        (&["pow", "--mwm", "3", "--backend", "cpu"], &tx),
        (&["hash"], &tx),
        (&["verify", "--mwm", "0"], &tx),
        (&["bench", "--seconds", "0.05"], ""),
        (&["devices"], ""),
    ];
    for (args, input) in cases {
        with_stdout_closed(args)
            .write_stdin(input)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("standard output is closed"));
    }
    // Bad usage is still reported as such.
    with_stdout_closed(&["pow", "--threads", "0"])
        .write_stdin(tx)
        .assert()
        .code(2);
}

/// `curlpow ARGS < examples/transaction.trytes > stdout`.
fn std_command(args: &[&str], stdout: std::fs::File) -> std::process::Output {
    let input = std::fs::File::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/transaction.trytes"
    ))
    .unwrap();
    std::process::Command::new(cli_support::bin())
        .args(args)
        .env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_INJECT_FAULT")
        .stdin(input)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_is_exit_1_with_the_error() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else {
        common::skip("no /dev/full on this host");
        return;
    };
    let out = std_command(&["pow", "--mwm", "3", "--backend", "cpu", "-q"], full);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write standard output"), "{stderr}");
}

#[test]
fn dev_null_is_a_place_to_write() {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let out = std_command(&["hash"], null);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn durations_a_timer_cannot_hold_are_usage_errors() {
    for v in [
        "1e19", "1e20", "1e300", "inf", "nan", "-1", "0", "1e-12", "abc", "",
    ] {
        curlpow()
            .args(["bench", "--backend", "cpu", "--seconds", v])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("panicked").not());
    }
    for v in ["1e19", "1e300", "inf", "nan", "-0.5", "x"] {
        curlpow()
            .args(["pow", "--mwm", "1", "--timeout", v])
            .write_stdin(example())
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty());
    }
    // The largest accepted timeout is no limit in practice, and no panic.
    curlpow()
        .args(["pow", "--mwm", "1", "--backend", "cpu", "--timeout", "1e9"])
        .write_stdin(example())
        .assert()
        .success();
}

#[test]
fn a_timeout_is_reported_once() {
    let input: String = (0..3).map(|_| example()).collect();
    let out = curlpow()
        .args(["pow", "--mwm", "40", "--backend", "cpu", "--timeout", "0.2"])
        .write_stdin(input)
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("timed out").count(), 1, "{stderr}");
    assert!(
        stderr.contains("0 of 3 transactions done, nothing written"),
        "{stderr}"
    );
}
