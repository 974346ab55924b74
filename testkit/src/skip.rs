//! Skipping a test visibly. libtest captures what a test prints with `print!`/`eprint!`, so a
//! skipped test would report `ok` and say nothing; [`skip`] writes its line straight to the
//! process's standard error (which libtest does not capture) and appends it to the file named by
//! `CURLPOW_SKIP_LOG`, which `scripts/test.sh` sets and prints at the end of the run.

use std::io::Write;

/// The variable naming the file every skip line is appended to.
pub const SKIP_LOG: &str = "CURLPOW_SKIP_LOG";

/// Report that the calling test skips, and why: `SKIPPED: <binary> <test>: <reason>`. The
/// caller then returns without running the test.
pub fn skip(reason: &str) {
    let line = format!("SKIPPED: {}: {reason}\n", who());
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        // One write of the whole line: appends from tests running at once do not interleave.
        let written = file.and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            let _ = writeln!(
                std::io::stderr().lock(),
                "cannot append to {SKIP_LOG}={}: {e}",
                std::path::Path::new(&path).display()
            );
        }
    }
}

/// Skip the calling test for `reason`, or fail it when the variable `require` is `1` (CI sets
/// `CURLPOW_REQUIRE_BROKER=1`, `CURLPOW_REQUIRE_CC=1`, … where the tool must be there).
pub fn skip_unless_required(require: &str, reason: &str) {
    if std::env::var(require).is_ok_and(|v| v == "1") {
        panic!("{require}=1, but {reason}");
    }
    skip(&format!("{reason} ({require}=1 makes this a failure)"));
}

/// The test binary (without cargo's hash suffix) and the running test's name, which libtest
/// gives the thread it runs the test on.
fn who() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name.to_string()
            }
            _ => s,
        })
        .unwrap_or_else(|| "test".into());
    match std::thread::current().name() {
        Some(t) if t != "main" => format!("{binary} {t}"),
        _ => binary,
    }
}
