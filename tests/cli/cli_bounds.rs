//! Promises `curlpow` keeps when its input or environment works against it: `pow` re-checks the
//! exact bytes it writes (an input file changed during the search fails, exit 1, instead of
//! writing the new line with the old nonce); a stream line without an end is not copied past
//! the line bound and is refused (exit 2) once it is clearly endless; a forced GPU launch size
//! does not outlast `--timeout`.

use crate::cli_support;
use crate::common;

use std::io::{Read, Seek, SeekFrom, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::bin;
use curlpow::Transaction;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("curlpow-cli-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Wait for `child` up to `within`; its status, or None (killed) past it.
fn wait_for(child: &mut std::process::Child, within: Duration) -> Option<std::process::ExitStatus> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if t0.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn pow_fails_when_the_input_file_changes_during_the_search() {
    // 48 transactions at MWM 13: seconds of search on two threads, so the file is rewritten
    // (in place, same length) after pass 1 read it and while pass 2 searches. A run that ends
    // before the rewrite proves nothing and is tried again at a higher MWM.
    let txs: Vec<Transaction> = (0..48).map(|k| common::random_tx(900 + k)).collect();
    let text: String = txs.iter().map(|t| t.to_trytes() + "\n").collect();
    let path = scratch("changed.txt");
    for mwm in [13, 15, 17] {
        std::fs::write(&path, &text).unwrap();
        let mut child = Command::new(bin())
            .args(["pow", "--backend", "cpu", "--threads", "2", "-q", "--mwm"])
            .arg(mwm.to_string())
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        if child.try_wait().unwrap().is_some() {
            let _ = child.wait_with_output();
            eprintln!("MWM {mwm}: finished before the rewrite; again at a higher MWM");
            continue;
        }
        // Line 20's signature, first tryte: 'A' <-> 'B' (still a valid transaction).
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let at = 19 * 2674;
        let old = text.as_bytes()[at];
        f.seek(SeekFrom::Start(at as u64)).unwrap();
        f.write_all(&[if old == b'A' { b'B' } else { b'A' }])
            .unwrap();
        drop(f);
        let still_running = child.try_wait().unwrap().is_none();
        let mut out = Vec::new();
        let mut err = String::new();
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        if !still_running {
            eprintln!("MWM {mwm}: finished during the rewrite; again at a higher MWM");
            continue;
        }
        assert_eq!(status.code(), Some(1), "stderr: {err}");
        assert!(
            err.contains("line 20 changed between the search and the output"),
            "{err}"
        );
        // What was written before line 20 is the input with valid nonces; line 20 is not there.
        let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        assert!(lines.len() < 20, "{} lines written", lines.len());
        for (k, l) in lines.iter().enumerate() {
            common::assert_valid_pow(&txs[k], &l.parse().unwrap(), mwm);
        }
        let _ = std::fs::remove_file(&path);
        return;
    }
    panic!("every run finished before the input could be changed: a host far faster than this test assumes");
}

/// Feed `cmd` a stream of `total` bytes with no line end; (exit code, stderr, bytes the
/// command took before it closed the pipe).
fn endless_line(args: &[&str], total: usize) -> (Option<i32>, String, usize) {
    let tmp = scratch("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = Command::new(bin())
        .args(args)
        .env("TMPDIR", &tmp)
        .env("CURLPOW_THREADS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![0u8; 64 << 10];
        let mut sent = 0;
        while sent < total {
            match stdin.write(&block) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        sent
    });
    let status = wait_for(&mut child, Duration::from_secs(60));
    let sent = writer.join().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.and_then(|s| s.code()), err, sent)
}

#[test]
fn a_stream_line_without_an_end_is_refused_while_it_is_copied() {
    // 256 MiB of NUL bytes and no LF, as `curlpow pow /dev/zero` reads: not copied past the
    // line bound (16 KiB for pow, 4 MiB for hash), measured up to 8 MiB, then refused.
    for (cmd, bound) in [
        ("pow", "8388608"),
        ("verify", "8388608"),
        ("hash", "8388608"),
    ] {
        let mut args = vec![cmd];
        if cmd == "verify" {
            args.extend(["--mwm", "1"]);
        }
        let (code, err, sent) = endless_line(&args, 256 << 20);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(
            err.contains(&format!(
                "line 1: more than {bound} bytes without a line end"
            )),
            "{cmd}: {err}"
        );
        assert!(
            sent < 16 << 20,
            "{cmd} read {sent} bytes of one line before stopping"
        );
    }
}

#[test]
fn a_forced_gpu_launch_size_does_not_outlast_the_timeout() {
    // 10^8 work-items a launch on PoCL took 24 s each (the run ignored --timeout 5 for 40 s);
    // the size is clamped to a few waves, so the deadline is met within a launch.
    let probe = Command::new(bin())
        .args(["devices", "--software", "--backend", "opencl"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&probe.stdout);
    let id = listed
        .split_whitespace()
        .find(|w| w.starts_with("opencl:"))
        .map(str::to_string);
    if !common::gpu_available("opencl", id.is_some()) {
        return;
    }
    let id = id.unwrap();
    let path = scratch("launch.txt");
    std::fs::write(&path, common::random_tx(5).to_trytes() + "\n").unwrap();
    let t0 = Instant::now();
    let mut child = Command::new(bin())
        .args([
            "pow",
            "-q",
            "--mwm",
            "40",
            "--timeout",
            "3",
            "--device",
            &id,
        ])
        .arg(&path)
        .env("CURLPOW_GPU_LAUNCH_ITEMS", "100000000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_for(&mut child, Duration::from_secs(60));
    let took = t0.elapsed();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = status.unwrap_or_else(|| panic!("still running after 60 s; stderr: {err}"));
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(err.contains("timed out"), "{err}");
    // Discovery (PoCL compiles its kernel) comes first; the search itself ends near 3 s.
    assert!(took < Duration::from_secs(30), "{took:?}: {err}");
    eprintln!("{id}, 10^8 items forced, --timeout 3: exit 3 after {took:.2?}");
    let _ = std::fs::remove_file(&path);
}
