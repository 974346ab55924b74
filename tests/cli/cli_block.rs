//! `curlpow block-pow` and `curlpow block-score`: the real binary, its output checked by the
//! library's scorer; bad lines named, exit codes.

use assert_cmd::Command;
use predicates::prelude::*;

fn curlpow() -> Command {
    let mut c = Command::cargo_bin("curlpow").unwrap();
    c.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL");
    c
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn message(seed: u64, len: usize) -> Vec<u8> {
    curlpow::internal::xorshift::bytes(seed).take(len).collect()
}

/// The TIP-12 example: "Hello, World!" with its nonce.
const HELLO: &str = "48656c6c6f2c20576f726c64215ee6aaaaaaaaaaaa";

#[test]
fn block_pow_sets_valid_nonces_in_order() {
    let msgs: Vec<Vec<u8>> = [8usize, 21, 300]
        .iter()
        .map(|&n| message(n as u64, n))
        .collect();
    // Upper-case hex, a CRLF line end and a blank line are read as pow reads them.
    let input = format!(
        "{}\r\n\n{}\n{}\n",
        hex(&msgs[0]).to_uppercase(),
        hex(&msgs[1]),
        hex(&msgs[2])
    );
    let out = curlpow()
        .args(["block-pow", "--score", "1500", "--backend", "cpu"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    let inputs: Vec<&str> = input.lines().filter(|l| !l.is_empty()).collect();
    for (inp, outp) in inputs.iter().zip(&lines) {
        let inp = inp.trim_end_matches('\r');
        assert_eq!(outp.len(), inp.len());
        // Everything but the nonce is the input, as written.
        assert_eq!(outp[..outp.len() - 16], inp[..inp.len() - 16]);
        assert!(curlpow::block::score(&unhex(outp)) >= 1500.0, "{outp}");
    }
}

#[test]
fn block_pow_reads_a_file_and_takes_the_options() {
    let dir = std::env::temp_dir().join(format!("curlpow-block-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("msgs.hex");
    std::fs::write(&f, format!("{}\n", hex(&message(3, 100)))).unwrap();
    let out = curlpow()
        .args([
            "block-pow",
            "--score",
            "4000",
            "--threads",
            "1",
            "--device",
            "cpu",
        ])
        .arg(&f)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let line = String::from_utf8(out).unwrap();
    assert!(curlpow::block::score(&unhex(line.trim_end())) >= 4000.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_lines_are_named_and_nothing_is_written() {
    let good = hex(&message(1, 40));
    let input = format!("{good}\n00zz0102030405060708\n0001020304050607080\n00010203\n{good}\n");
    curlpow()
        .args(["block-pow", "--score", "100", "--backend", "cpu"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("line 2: column 3: 'z' is not a hex digit")
                .and(predicate::str::contains(
                    "line 3: length 19 hex digits is odd",
                ))
                .and(predicate::str::contains(
                    "line 4: length 4 bytes is shorter",
                ))
                .and(predicate::str::contains("3 bad input lines")),
        );
    // A target no hash reaches on a line this short is a bad line too.
    curlpow()
        .args(["block-pow", "--score", "1e200", "--backend", "cpu"])
        .write_stdin(format!("{good}\n"))
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("line 1: target score")
                .and(predicate::str::contains("out of reach")),
        );
}

#[test]
fn bad_arguments_are_usage_errors() {
    for score in ["-1", "x", "nan", "inf"] {
        curlpow()
            .args(["block-pow", "--score", score])
            .write_stdin("")
            .assert()
            .code(2);
    }
    curlpow()
        .args(["block-pow"])
        .write_stdin("")
        .assert()
        .code(2);
    curlpow()
        .args(["block-pow", "--score", "1", "--backend", "nope"])
        .write_stdin("")
        .assert()
        .code(2);
    // No lines: nothing to do.
    curlpow()
        .args(["block-pow", "--score", "4000"])
        .write_stdin("\n")
        .assert()
        .success()
        .stdout("");
}

#[test]
fn timeout_exits_3() {
    curlpow()
        .args([
            "block-pow",
            "--score",
            "1e100",
            "--timeout",
            "0.3",
            "--backend",
            "cpu",
        ])
        .write_stdin(format!("{}\n", hex(&message(2, 32768))))
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains("timed out"));
}

#[test]
fn block_score_prints_each_lines_score() {
    let zeros = hex(&[0; 8]);
    curlpow()
        .args(["block-score"])
        .write_stdin(format!("{HELLO}\n{zeros}\ncb7c020000000000\n"))
        .assert()
        .success()
        .stdout("937.2857142857143\n0.375\n7381.125\n");
    curlpow()
        .args(["block-score", "-"])
        .write_stdin("abc\n")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "line 1: length 3 hex digits is odd",
        ));
}

#[test]
fn help_lists_the_block_commands() {
    curlpow()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("block-pow").and(predicate::str::contains("block-score")));
    curlpow()
        .args(["block-pow", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("--score")
                .and(predicate::str::contains("--threads"))
                .and(predicate::str::contains("--timeout"))
                .and(predicate::str::contains("--backend"))
                .and(predicate::str::contains("--device")),
        );
}

#[test]
fn bench_block_pow() {
    let out = curlpow()
        .args(["bench", "--pow", "block", "--seconds", "0.2", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8(out).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(v["device_id"], "cpu");
    assert!(v["nonces_per_second"].as_f64().unwrap() > 0.0);
}

/// Bytes that are not UTF-8 in a hex line are named as such, with what a hex line holds (not
/// the trytes a transaction line holds); exit 2, nothing written.
#[test]
fn bad_utf8_in_hex_is_named_as_not_hex() {
    let mut line = b"48656c6c".to_vec();
    line.extend_from_slice(b"\xff\xfe");
    line.extend_from_slice(b"6f2c20576f726c64210000000000000000\n");
    for cmd in [
        &["block-pow", "--score", "1", "--backend", "cpu"][..],
        &["block-score"],
    ] {
        curlpow()
            .args(cmd)
            .write_stdin(line.clone())
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::contains(
                    "line 1: column 9: byte 0xFF is not UTF-8 text (expected 0-9, a-f or A-F)",
                )
                .and(predicate::str::contains("9 or A-Z").not()),
            );
    }
}
