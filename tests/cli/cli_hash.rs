//! `curlpow hash` and `curlpow verify` on many lines: every output line against the reference
//! sponge (`curlpow::hash`) and the public vectors, lines of several lengths mixed, more lines
//! than one chunk of the command, and a bad line far into the input.

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;

fn curlpow() -> Command {
    let mut c = Command::cargo_bin("curlpow").unwrap();
    c.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL");
    c
}

/// 600 random transactions (more than one 512-lane pass), with the 64 whole transactions of
/// the crypto.rs vectors and iota.go's golden inputs (other multiples of 81 trytes) between
/// them: each line's trytes and its hash trytes.
fn lines() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let v = common::vectors("curlp81_crypto_rs_input_8019_output_243.json");
    let mut vectors: Vec<(String, String)> = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["in"].as_str().unwrap().to_string(),
                t["out"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let g = common::vectors("curlp81_iota_go_golden.json");
    vectors.extend(
        g["vectors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| {
                let i = t["in"].as_str().unwrap();
                t["hash"].as_str().unwrap().len() == 81 && !i.is_empty() && i.len() % 81 == 0
            })
            .take(40)
            .map(|t| {
                (
                    t["in"].as_str().unwrap().to_string(),
                    t["hash"].as_str().unwrap().to_string(),
                )
            }),
    );
    let mut vectors = vectors.into_iter();
    for s in 0..600u64 {
        let tx = common::random_tx(90_000 + s);
        let hash = curlpow::trits::trits_to_trytes(&curlpow::hash(tx.trits()).unwrap()).unwrap();
        out.push((tx.to_trytes(), hash));
        if s % 5 == 0 {
            out.extend(vectors.next());
        }
    }
    out.extend(vectors);
    out
}

#[test]
fn hash_and_verify_match_the_reference_on_every_line() {
    let lines = lines();
    // The reference itself, on a few vector lines (the rest are the vectors' own hashes).
    for (l, h) in lines.iter().step_by(50) {
        let t = curlpow::trits::trytes_to_trits(l).unwrap();
        assert_eq!(
            &curlpow::trits::trits_to_trytes(&curlpow::hash(&t).unwrap()).unwrap(),
            h
        );
    }
    let input: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
    let out = curlpow()
        .arg("hash")
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), lines.len());
    for (i, (got, (_, want))) in text.lines().zip(&lines).enumerate() {
        assert_eq!(got, want, "line {}", i + 1);
    }

    // verify: the transactions only (2673 trytes), CRLF line ends and blank lines between.
    let txs: Vec<&(String, String)> = lines.iter().filter(|(l, _)| l.len() == 2673).collect();
    let input: String = txs.iter().map(|(l, _)| format!("{l}\r\n\n")).collect();
    let out = curlpow()
        .args(["verify", "--mwm", "0"])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), txs.len());
    for (got, (_, h)) in text.lines().zip(&txs) {
        let trits = curlpow::trits::trytes_to_trits(h).unwrap();
        assert_eq!(got, curlpow::trits::trailing_zeros(&trits).to_string());
    }
}

#[test]
fn a_bad_line_past_the_first_chunk_writes_nothing() {
    // 5,000 lines: the bad one after the first chunk of the second pass (4,096 lines).
    let good = "9".repeat(2673);
    let mut input = format!("{good}\n").repeat(5_000);
    let at = 4_500 * 2674 + 7;
    input.replace_range(at..at + 1, "a");
    for args in [&["hash"][..], &["verify", "--mwm", "0"]] {
        curlpow()
            .args(args)
            .write_stdin(input.clone())
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::contains("line 4501: column 8: 'a' is not a tryte").and(
                    predicate::str::contains("1 bad input line; nothing written"),
                ),
            );
    }
    // The same for a line of the wrong length.
    let mut input = format!("{good}\n").repeat(5_000);
    input.insert_str(4_700 * 2674, "ABC\n");
    curlpow()
        .arg("hash")
        .write_stdin(input.clone())
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "line 4701: length 3 trytes, expected a multiple of 81",
        ));
    curlpow()
        .args(["verify", "--mwm", "0"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "line 4701: length 3 trytes, expected 2673",
        ));
    // Every line good: one hash a line, in order, across chunks.
    let input = format!("{good}\n").repeat(5_000);
    let out = curlpow()
        .arg("hash")
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 5_000);
    assert!(text.lines().all(|l| l == "9".repeat(81)));
}
