//! Faults injected from outside the library. A binary built with the
//! `fault-injection` feature adds a test device per `CURLPOW_INJECT_FAULT` entry (see
//! `curlpow::fault`); these tests drive the engine's fault paths through the binary.

use crate::cli_support;
use crate::common;

use cli_support::{curlpow, example};
use predicates::prelude::*;

/// Whether this build has the hook; a visible skip when it does not.
fn hooked() -> bool {
    if cfg!(feature = "fault-injection") {
        true
    } else {
        common::skip("built without the fault-injection feature (scripts/test.sh enables it)");
        false
    }
}

fn batch(n: u64) -> (Vec<curlpow::Transaction>, String) {
    let txs: Vec<_> = (0..n)
        .map(|k| {
            let mut t: Vec<i8> = example()
                .trim_end()
                .parse::<curlpow::Transaction>()
                .unwrap()
                .trits()
                .to_vec();
            // A different tag per transaction: distinct searches.
            t[7776..7776 + 3]
                .copy_from_slice(&curlpow::trits::tryte_value_to_trits((k % 27) as i8 - 13));
            curlpow::Transaction::from_trits(&t).unwrap()
        })
        .collect();
    let text = txs.iter().map(|t| t.to_trytes() + "\n").collect();
    (txs, text)
}

fn check_results(input: &[curlpow::Transaction], stdout: &[u8], mwm: usize) {
    let text = std::str::from_utf8(stdout).unwrap();
    let out: Vec<curlpow::Transaction> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(out.len(), input.len());
    for (a, b) in input.iter().zip(&out) {
        assert!(b.weight() >= mwm);
        assert_eq!(
            a.trits()[..7938],
            b.trits()[..7938],
            "only the nonce changes"
        );
    }
}

#[test]
fn a_lying_or_failing_device_is_caught_and_the_cpu_finishes() {
    if !hooked() {
        return;
    }
    for spec in [
        "wrong-nonce",
        "launch-error",
        "wrong-nonce:0.5",
        "launch-error:0.3",
    ] {
        // MWM 7: above what the engine keeps on the CPU beside other devices (3^6 expected
        // nonces), so the searches go through the registry and reach fault:0.
        let (txs, input) = batch(4);
        let out = curlpow()
            .env("CURLPOW_INJECT_FAULT", spec)
            .args(["pow", "--mwm", "7", "--stats", "-q"])
            .write_stdin(input)
            .assert()
            .success()
            .get_output()
            .clone();
        check_results(&txs, &out.stdout, 7);
        let stats = String::from_utf8_lossy(&out.stderr);
        let line = stats
            .lines()
            .find(|l| l.starts_with("fault:0"))
            .unwrap_or_else(|| panic!("{spec}: no fault:0 row in {stats}"));
        let errors: u64 = line.split_whitespace().nth(4).unwrap().parse().unwrap();
        assert!(errors >= 1, "{spec}: {line}");
    }
}

#[test]
fn the_fault_is_the_error_when_only_the_faulty_device_is_selected() {
    if !hooked() {
        return;
    }
    for (spec, said) in [
        (
            "wrong-nonce",
            "returned an invalid nonce (host check failed)",
        ),
        (
            "launch-error",
            "kernel launch failed (injected by CURLPOW_INJECT_FAULT)",
        ),
    ] {
        curlpow()
            .env("CURLPOW_INJECT_FAULT", spec)
            .args(["pow", "--mwm", "4", "--device", "fault:0", "-q"])
            .write_stdin(example())
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(said));
    }
}

#[test]
fn a_hanging_device_ends_at_the_timeout_or_when_another_finds() {
    if !hooked() {
        return;
    }
    let out = curlpow()
        .env("CURLPOW_INJECT_FAULT", "hang")
        .args([
            "pow",
            "--mwm",
            "4",
            "--device",
            "fault:0",
            "--timeout",
            "0.3",
        ])
        .write_stdin(example())
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("timed out").count(), 1, "{stderr}");
    // In latency mode the CPU searches beside the hanging device and stops it.
    let (txs, input) = batch(2);
    let out = curlpow()
        .env("CURLPOW_INJECT_FAULT", "hang")
        .args(["pow", "--mwm", "4", "--latency", "-q"])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .clone();
    check_results(&txs, &out.stdout, 4);
}

#[test]
fn fault_devices_are_listed_and_named() {
    if !hooked() {
        return;
    }
    curlpow()
        .env("CURLPOW_INJECT_FAULT", "none,hang:0.5")
        .args(["devices", "--backend", "cpu"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("fault:0")
                .and(predicate::str::contains("fault:1"))
                .and(predicate::str::contains("hang at rate 0.5")),
        );
}

#[test]
fn a_bad_fault_spec_is_a_usage_error_even_on_empty_input() {
    if !hooked() {
        return;
    }
    for spec in ["boom", "hang:2", "wrong-nonce:x"] {
        curlpow()
            .env("CURLPOW_INJECT_FAULT", spec)
            .arg("pow")
            .write_stdin("")
            .assert()
            .code(2)
            .stderr(predicate::str::contains("CURLPOW_INJECT_FAULT"));
    }
}
