//! Input reporting where a user meets it: bounded threads and
//! memory, options checked before the input is read, every bad character named (with its code
//! point when invisible), one column convention, whitespace rules, and the time estimate.

use crate::cli_support;

use cli_support::{command, curlpow, example, run_measured};
use predicates::prelude::*;

fn tx() -> String {
    example().trim_end().to_string()
}

#[test]
fn threads_are_bounded_with_a_clear_error() {
    for n in ["100000", "5000", "0", "-3", "many"] {
        curlpow()
            .args(["pow", "--mwm", "1", "--threads", n])
            .write_stdin(example())
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty());
    }
    curlpow()
        .args(["pow", "--threads", "100000"])
        .write_stdin(example())
        .assert()
        .stderr(predicate::str::contains("limit of"));
    curlpow()
        .env("CURLPOW_THREADS", "100000")
        .args(["pow", "--mwm", "1"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("CURLPOW_THREADS=100000"));
}

#[test]
fn options_are_checked_when_the_input_is_empty() {
    let cases: [&[&str]; 12] = [
        &["pow", "--threads", "0"],
        &["pow", "--timeout", "nan"],
        &["pow", "--backend", "bogus"],
        &["pow", "--backend", "cpu,"],
        &["pow", "--kernel", "bogus"],
        &["pow", "--device", "nope:0"],
        &["pow", "--device", "wgpu:x"],
        &["pow", "--exclude", "opencl:0"],
        &["pow", "--mwm", "244"],
        &["verify", "--mwm", "244"],
        &["bench", "--kernel", "sse9"],
        &["devices", "--threads", "0"],
    ];
    for args in cases {
        for input in ["", "\n\n"] {
            curlpow()
                .args(args)
                .write_stdin(input)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("panicked").not());
        }
    }
    for (var, value) in [
        ("CURLPOW_THREADS", "abc"),
        ("CURLPOW_THREADS", "0"),
        ("CURLPOW_CPU_KERNEL", "bogus"),
    ] {
        curlpow()
            .env(var, value)
            .args(["pow"])
            .write_stdin("")
            .assert()
            .code(2)
            .stderr(predicate::str::contains(var));
    }
    // Well-formed options on an empty input: nothing to do, exit 0.
    curlpow()
        .args([
            "pow",
            "--threads",
            "1",
            "--backend",
            "cpu",
            "--timeout",
            "1",
        ])
        .write_stdin("")
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
}

#[test]
fn invisible_characters_are_named_with_their_code_point() {
    let t = tx();
    for (c, name) in [
        ('\u{0}', "U+0000 (NUL)"),
        ('\u{a0}', "U+00A0 (no-break space)"),
        ('\u{feff}', "U+FEFF (byte order mark)"),
        ('\u{b}', "U+000B (vertical tab)"),
        ('\u{200b}', "U+200B (zero-width space)"),
    ] {
        // In place of a tryte (the length is right), and as an extra character (it is not).
        let replaced = format!("{}{c}{}", &t[..100], &t[101..]);
        let inserted = format!("{c}{t}");
        for (line, column) in [(replaced, 101), (inserted, 1)] {
            let msg = format!("line 1: column {column}: {name} is not a tryte");
            for cmd in ["pow", "verify", "hash"] {
                let mut c = curlpow();
                c.arg(cmd);
                if cmd == "verify" {
                    c.args(["--mwm", "1"]);
                }
                c.write_stdin(format!("{line}\n"))
                    .assert()
                    .code(2)
                    .stdout(predicate::str::is_empty())
                    .stderr(predicate::str::contains(msg.clone()));
            }
        }
    }
}

#[test]
fn bad_utf8_has_a_1_based_character_column() {
    // "é" is two bytes and one character: the bad byte is the third character.
    let mut line = "éA".as_bytes().to_vec();
    line.push(0xff);
    line.extend_from_slice(b"\n");
    for cmd in [&["pow"][..], &["hash"], &["verify", "--mwm", "1"]] {
        curlpow()
            .args(cmd)
            .write_stdin(line.clone())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "line 1: column 3: byte 0xFF is not UTF-8 text",
            ));
    }
    // Characters are counted the same way in a tryte error.
    curlpow()
        .arg("hash")
        .write_stdin("ééa\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 1: column 1: 'é' (U+00E9)"));
}

#[test]
fn whitespace_at_line_edges_is_rejected_and_line_ends_are_not() {
    let t = tx();
    for (line, column, name) in [
        (format!(" {t}"), 1, "U+0020 (space)"),
        (format!("{t} "), 2674, "U+0020 (space)"),
        (format!("\t{t}"), 1, "U+0009 (tab)"),
        (format!("{t}\t"), 2674, "U+0009 (tab)"),
        (format!("{t}\r"), 2674, "U+000D (carriage return)"),
        ("   ".to_string(), 1, "U+0020 (space)"),
    ] {
        curlpow()
            .args(["pow", "--mwm", "1"])
            .write_stdin(format!("{line}\r\n"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "line 1: column {column}: {name}"
            )));
    }
    // LF and CRLF line ends, blank lines and a last line without an end are all fine.
    let out = curlpow()
        .args(["pow", "--mwm", "1", "--backend", "cpu"])
        .write_stdin(format!("\n{t}\r\n\r\n\n{t}"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
}

#[test]
fn bad_lines_are_streamed_and_capped() {
    let n = 20_000;
    let input = "ABC\n".repeat(n);
    let out = curlpow()
        .arg("hash")
        .write_stdin(input)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("curlpow: line ").count(), 100, "{stderr}");
    assert!(stderr.contains("line 100: length 3 trytes, expected a multiple of 81"));
    assert!(!stderr.contains("line 101:"));
    assert!(
        stderr.contains("20000 bad input lines (the first 100 named above); nothing written"),
        "{stderr}"
    );
}

#[test]
fn memory_stays_bounded_on_a_large_bad_input() {
    // 8 MB of one-character bad lines, and one 8 MB line: well under the 100 MB bound.
    let many = "a\n".repeat(4 << 20);
    let long = "9".repeat(8 << 20);
    for input in [many.as_bytes(), long.as_bytes()] {
        for args in [&["pow"][..], &["hash"]] {
            let r = run_measured(command(args), input);
            assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
            assert!(
                r.max_rss_kib < 100 * 1024,
                "{args:?}: {} KiB",
                r.max_rss_kib
            );
        }
    }
}

#[test]
fn a_line_too_long_to_read_is_measured() {
    curlpow()
        .args(["pow", "--mwm", "1"])
        .write_stdin(format!("{}\n", "9".repeat(1_000_000)))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "line 1: length 1000000 characters (1000000 bytes), expected 2673 trytes",
        ));
}

#[test]
fn a_piped_input_larger_than_the_memory_copy_reads_like_a_file() {
    // 1.3 MB of 81-tryte lines through a pipe: past the 1 MiB copy kept in memory, so the
    // second pass reads the temporary file.
    let line = "A".repeat(81);
    let trits = curlpow::trits::trytes_to_trits(&line).unwrap();
    let hash = curlpow::trits::trits_to_trytes(&curlpow::hash(&trits).unwrap()).unwrap();
    let n = 16_000;
    let piped = curlpow()
        .arg("hash")
        .write_stdin(format!("{line}\n").repeat(n))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(piped, format!("{hash}\n").repeat(n).into_bytes());
    // A file, and standard input redirected from it (seekable: read twice from where it
    // stood), give the same.
    let dir = std::env::temp_dir().join(format!("curlpow-cli-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("lines.trytes");
    std::fs::write(&f, format!("{line}\n\n{}", example())).unwrap();
    let from_file = curlpow()
        .args(["hash"])
        .arg(&f)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let redirected = curlpow()
        .arg("hash")
        .pipe_stdin(&f)
        .unwrap()
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    std::fs::remove_dir_all(&dir).ok();
    let text = String::from_utf8(from_file.clone()).unwrap();
    assert_eq!(text.lines().next(), Some(hash.as_str()));
    assert_eq!(text.lines().count(), 2);
    assert_eq!(from_file, redirected);
}

#[test]
fn a_path_that_is_a_stream_is_read_once_and_copied() {
    // /dev/stdin is a pipe here, as `<(command)` or a FIFO would be: it cannot be rewound.
    let line = "A".repeat(81);
    let out = curlpow()
        .args(["hash", "/dev/stdin"])
        .write_stdin(format!("{line}\n{line}\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
}

#[test]
fn a_folder_is_not_an_input() {
    curlpow()
        .args(["hash", env!("CARGO_MANIFEST_DIR")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("folder"));
}

/// A folder on standard input is the same usage error as a folder named as FILE (exit 2), for
/// every command that reads an input.
#[test]
fn a_folder_on_standard_input_is_not_an_input() {
    for args in [
        &["hash"][..],
        &["pow", "--mwm", "1", "--backend", "cpu"],
        &["block-pow", "--score", "1", "--backend", "cpu"],
        &["block-score"],
        &["verify", "--mwm", "1"],
    ] {
        let dir = std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
        let o = std::process::Command::new(cli_support::bin())
            .args(args)
            .env("CURLPOW_THREADS", "2")
            .stdin(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("cannot read standard input: it is a folder"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// A closed standard input (`<&-`) is an error (exit 2), not an empty input with exit 0; an
/// empty one (`</dev/null`) stays an empty input.
#[test]
fn a_closed_standard_input_is_an_error() {
    for args in [
        "hash",
        "pow --mwm 1 --backend cpu",
        "block-pow --score 1 --backend cpu",
        "block-score",
    ] {
        let run = |redirect: &str| {
            std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("exec \"$0\" {args} {redirect}"))
                .arg(cli_support::bin())
                .env("CURLPOW_THREADS", "2")
                .output()
                .unwrap()
        };
        let o = run("<&-");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args}: {err}");
        assert!(
            err.contains("cannot read standard input: it is closed"),
            "{args}: {err}"
        );
        let o = run("</dev/null");
        assert_eq!(o.status.code(), Some(0), "{args}: {o:?}");
        assert!(o.stdout.is_empty(), "{args}");
    }
}

/// `--timeout 0` means no limit, as `serve --request-timeout 0` does: the search runs to its
/// end (exit 0), where it used to stop at once (exit 3).
#[test]
fn a_zero_timeout_is_no_limit() {
    let out = curlpow()
        .args(["pow", "--mwm", "9", "--backend", "cpu", "--timeout", "0"])
        .write_stdin(example())
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
    curlpow()
        .args([
            "block-pow",
            "--score",
            "100",
            "--backend",
            "cpu",
            "--timeout",
            "0",
        ])
        .write_stdin("48656c6c6f2c20576f726c64210000000000000000\n")
        .assert()
        .code(0);
    for cmd in ["pow", "block-pow", "attach"] {
        curlpow()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("0: no").and(predicate::str::contains("limit")));
    }
}

#[test]
fn a_hopeless_mwm_is_warned_about_and_a_long_one_estimated() {
    curlpow()
        .args([
            "pow",
            "--mwm",
            "243",
            "--backend",
            "cpu",
            "--timeout",
            "0.2",
        ])
        .write_stdin(example())
        .assert()
        .code(3)
        .stderr(
            predicate::str::contains("warning: MWM 243").and(predicate::str::contains(
                "cannot finish in a human lifetime",
            )),
        );
    curlpow()
        .args(["pow", "--mwm", "22", "--backend", "cpu", "--timeout", "0.2"])
        .write_stdin(example())
        .assert()
        .code(3)
        .stderr(
            predicate::str::contains("note: MWM 22 expects about")
                .and(predicate::str::contains("per transaction")),
        );
    // --quiet drops the note, never the warning.
    curlpow()
        .args([
            "pow",
            "-q",
            "--mwm",
            "22",
            "--backend",
            "cpu",
            "--timeout",
            "0.1",
        ])
        .write_stdin(example())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("note:").not());
    // A short search says nothing.
    curlpow()
        .args(["pow", "--mwm", "5", "--backend", "cpu"])
        .write_stdin(example())
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

#[test]
fn a_transaction_file_parses_as_read() {
    let text = example();
    assert!(text.ends_with('\n'));
    let t: curlpow::Transaction = text.parse().unwrap();
    assert_eq!(t.to_trytes(), tx());
    let crlf: curlpow::Transaction = format!("{}\r\n", tx()).parse().unwrap();
    assert_eq!(crlf, t);
    let e = format!("{text}\n")
        .parse::<curlpow::Transaction>()
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("column 2674: U+000A (line feed) is not a tryte"),
        "{e}"
    );
}
