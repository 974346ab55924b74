//! `curlpow attach`: IRI's attachToTangle offline, one transaction a line in, the attached bundle
//! tail first out; bad tips and input are usage errors (exit 2) naming what is wrong.

use crate::attach_check;

use assert_cmd::Command;
use curlpow::Transaction;

fn curlpow() -> Command {
    let mut c = Command::cargo_bin("curlpow").unwrap();
    c.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL");
    c
}

#[test]
fn attach_chains_a_bundle_offline() {
    let (trunk, branch, request) = attach_check::iota_js_bundle();
    let input: String = request.iter().map(|t| t.to_trytes() + "\n").collect();
    let before = attach_check::now_ms();
    let out = curlpow()
        .args(["attach", "--backend", "cpu", "--mwm", "7"])
        .args([
            "--trunk",
            &trunk.to_trytes(),
            "--branch",
            &branch.to_trytes(),
        ])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let answer: Vec<Transaction> = text.lines().map(|l| l.parse().unwrap()).collect();
    attach_check::check(
        &request,
        &trunk,
        &branch,
        7,
        before..=attach_check::now_ms(),
        &answer,
    )
    .unwrap();
}

#[test]
fn bad_tips_and_input_are_usage_errors() {
    let a = "A".repeat(81);
    for (trunk, want) in [
        ("A".repeat(80), "--trunk: length 80"),
        ("a".repeat(81), "--trunk: column 1"),
    ] {
        curlpow()
            .args(["attach", "--trunk", &trunk, "--branch", &a])
            .write_stdin("9".repeat(2673))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(want));
    }
    curlpow()
        .args(["attach", "--trunk", &a, "--branch", &a])
        .write_stdin("ABC\n")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("line 1"));
    curlpow()
        .args(["attach", "--trunk", &a, "--branch", &a, "--mwm", "244"])
        .write_stdin("9".repeat(2673))
        .assert()
        .code(2);
}
