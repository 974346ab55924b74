//! The `curlpow` binary: exit codes, bad input, output shape. Never a panic (exit 101).

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;

fn curlpow() -> Command {
    let mut c = Command::cargo_bin("curlpow").unwrap();
    c.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL");
    c
}

fn example() -> String {
    std::fs::read_to_string(format!(
        "{}/examples/transaction.trytes",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn pow_then_verify() {
    let input = format!("{}{}", example(), common::random_tx(7).to_trytes());
    let out = curlpow()
        .args(["pow", "--mwm", "7", "--backend", "cpu"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for (inp, outp) in input.lines().zip(&lines) {
        let a: curlpow::Transaction = inp.parse().unwrap();
        let b: curlpow::Transaction = outp.parse().unwrap();
        common::assert_valid_pow(&a, &b, 7);
    }
    curlpow()
        .args(["verify", "--mwm", "7"])
        .write_stdin(text.clone())
        .assert()
        .success();
    // Below --mwm: exit 1, each line named on stderr, the weights still on stdout.
    let out = curlpow()
        .args(["verify", "--mwm", "60"])
        .write_stdin(format!("\n{text}"))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("line 2: weight "), "{err}");
    assert!(err.contains("line 3: weight "), "{err}");
    assert!(err.contains("is below --mwm 60"), "{err}");
    assert!(err.contains("2 of 2 transactions below --mwm 60"), "{err}");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 2);
}

#[test]
fn pow_reads_a_file_with_crlf_and_blank_lines() {
    let dir = std::env::temp_dir().join(format!("curlpow-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("txs.trytes");
    std::fs::write(&f, format!("\r\n{}\r\n\r\n", example().trim())).unwrap();
    let out = curlpow()
        .args(["pow", "--mwm", "5", "--quiet"])
        .arg(&f)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_bad_line_is_named_and_nothing_is_written() {
    let good = example();
    let input = format!(
        "{good}{}\nABC\n{}\n",
        good.trim().to_lowercase(),
        "9".repeat(5000)
    );
    curlpow()
        .args(["pow", "--mwm", "5"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains("line 2: column 1")
                .and(predicate::str::contains(
                    "line 3: length 3 trytes, expected 2673",
                ))
                .and(predicate::str::contains("line 4: length 5000 trytes")),
        );
}

#[test]
fn odd_inputs_never_panic() {
    for input in [
        String::new(),
        "\n\n\r\n".to_string(),
        "\u{0}\u{1}\u{ff}".to_string(),
        "é".repeat(3000),
        "Z".repeat(1_000_000),
    ] {
        for args in [
            vec!["pow", "--mwm", "3"],
            vec!["hash"],
            vec!["verify", "--mwm", "3"],
        ] {
            let out = curlpow()
                .args(&args)
                .write_stdin(input.clone())
                .output()
                .unwrap();
            let code = out.status.code().unwrap();
            assert!(code == 0 || code == 2, "{args:?} exit {code}");
        }
    }
    let out = curlpow()
        .args(["hash"])
        .write_stdin(vec![0xffu8, 0xfe, b'\n'])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_arguments_are_usage_errors() {
    curlpow()
        .args(["pow", "--mwm", "244"])
        .write_stdin(example())
        .assert()
        .code(2);
    curlpow()
        .args(["pow", "--mwm", "5", "--kernel", "sse9"])
        .write_stdin(example())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sse9"));
    curlpow()
        .args(["pow", "--backend", "cuda"])
        .write_stdin(example())
        .assert()
        .code(2);
    curlpow()
        .args(["pow", "--device", "nope:0"])
        .write_stdin(example())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope:0"));
    curlpow().args(["pow", "/no/such/file"]).assert().code(2);
}

#[test]
fn timeout_exits_3() {
    curlpow()
        .args(["pow", "--mwm", "80", "--timeout", "0.3"])
        .write_stdin(example())
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("timed out"));
}

#[test]
fn hash_matches_vectors() {
    let v = common::vectors("curlp81_iota_go_golden.json");
    let vs: Vec<_> = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["hash"].as_str().unwrap().len() == 81)
        .take(20)
        .collect();
    let input: String = vs
        .iter()
        .map(|t| format!("{}\n", t["in"].as_str().unwrap()))
        .collect();
    let out = curlpow()
        .arg("hash")
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for (line, t) in text.lines().zip(&vs) {
        assert_eq!(line, t["hash"].as_str().unwrap());
    }
    assert_eq!(text.lines().count(), vs.len());
    curlpow()
        .arg("hash")
        .write_stdin("ABC\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("multiple of 81"));
}

#[test]
fn bench_json() {
    let out = curlpow()
        .args(["bench", "--seconds", "0.3", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["threads"], 2);
    assert!(v["nonces"].as_u64().unwrap() > 0);
    assert!(v["nonces_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["seconds"].as_f64().unwrap() >= 0.3);
    assert!(v["kernel"].is_string());
    assert!(v["device"].is_string());
}

#[test]
fn devices_json() {
    let out = curlpow()
        .args(["devices", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let list = v.as_array().unwrap();
    let cpu = list
        .iter()
        .find(|d| d["id"] == "cpu")
        .expect("the CPU is always listed");
    assert_eq!(cpu["backend"], "cpu");
    assert_eq!(cpu["kind"], "cpu");
    assert!(cpu["name"].is_string());
    assert!(cpu["stats"]["searches"].is_u64());
    for d in list {
        assert!(d["id"].is_string() && d["backend"].is_string() && d["kind"].is_string());
        // A software driver (PoCL, llvmpipe) is "software" here, as in the table.
        assert_eq!(d["software"] == true, d["kind"] == "software", "{d}");
    }
    // The table names the same kinds; -v adds each device's details under its line.
    let table = curlpow().args(["devices"]).assert().success();
    let table = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    for d in list {
        let id = d["id"].as_str().unwrap();
        let line = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("{id} not in the table:\n{table}"));
        assert_eq!(line.split_whitespace().nth(2), d["kind"].as_str(), "{line}");
    }
    let verbose = curlpow().args(["devices", "-v"]).assert().success();
    let verbose = String::from_utf8(verbose.get_output().stdout.clone()).unwrap();
    assert!(verbose.lines().count() > table.lines().count(), "{verbose}");
    assert!(verbose.contains("    lanes: "), "{verbose}");
    assert!(verbose.contains("    stats.searches: 0"), "{verbose}");
}

#[test]
fn pow_stats_go_to_stderr() {
    curlpow()
        .args(["pow", "--mwm", "4", "--stats", "--backend", "cpu"])
        .write_stdin(example())
        .assert()
        .success()
        .stderr(predicate::str::contains("searches").and(predicate::str::contains("cpu")));
}

#[test]
fn usage_lines_match_the_help() {
    // A FILE given beside a missing required option stays optional in the usage line.
    for (args, usage) in [
        (
            &["verify", "x"][..],
            "Usage: curlpow verify --mwm <MWM> [FILE]",
        ),
        (
            &["attach", "x"][..],
            "Usage: curlpow attach [OPTIONS] --trunk <TRUNK> --branch <BRANCH> [FILE]",
        ),
    ] {
        let err = curlpow().args(args).assert().code(2);
        let err = String::from_utf8(err.get_output().stderr.clone()).unwrap();
        assert!(err.contains(usage), "{args:?}: {err}");
        let help = curlpow().args([args[0], "--help"]).assert().success();
        let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
        assert!(help.contains(usage), "{args:?} --help: {help}");
    }
}

#[test]
fn generate_docs_writes_man_pages_and_completions() {
    let dir = std::env::temp_dir().join(format!("curlpow-gen-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    curlpow()
        .args(["generate-docs"])
        .arg(&dir)
        .assert()
        .success();
    let page = std::fs::read_to_string(dir.join("man/curlpow-pow.1")).unwrap();
    assert!(page.contains("mwm"), "{page}");
    for f in [
        "man/curlpow.1",
        "man/curlpow-serve.1",
        "man/curlpow-worker.1",
        "completions/curlpow.bash",
        "completions/_curlpow",
        "completions/curlpow.fish",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // The generator itself is hidden: not in the help, not a man page.
    assert!(!dir.join("man/curlpow-generate-docs.1").exists());
    let help = curlpow().arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    assert!(!help.contains("generate-docs"), "{help}");
    std::fs::remove_dir_all(&dir).unwrap();
}
