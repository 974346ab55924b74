//! A real IOTA client library against `curlpow serve`: iota.js (`@iota/core` 1.0.0-beta.30, as
//! wallets of its time used it) runs `tests/compat/iota_js_client.js` against the binary on a
//! loopback port: getNodeInfo's `RemotePOW`, attachToTangle on a real bundle (chaining checked
//! with iota.js's own Curl), and the error words wallets read.
//!
//! Needs Node.js and `npm ci` in `tests/compat` (CI does both). Without them the test is skipped
//! with a visible `SKIPPED:` line; with `CURLPOW_REQUIRE_COMPAT=1` (CI) a skip is a failure.
//! (PyOTA 2.1.0 was tried too: its `pysha3` dependency does not build on Python 3.11.)

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn skip(why: &str) {
    curlpow_testkit::skip::skip_unless_required("CURLPOW_REQUIRE_COMPAT", why);
}

#[test]
fn iota_js_attaches_through_the_server() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat");
    if Command::new("node").arg("--version").output().is_err() {
        return skip("node is not installed");
    }
    if !dir.join("node_modules/@iota/core").exists() {
        return skip("iota.js is not installed (cd tests/compat && npm ci)");
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_curlpow"))
        .args(["serve", "--listen", "127.0.0.1:0", "--backend", "cpu"])
        .args(["--threads", "2", "--log", "warn"])
        .env_remove("CURLPOW_REMOTE_AUTH")
        .env_remove("CURLPOW_REMOTE_AUTH_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on ").nth(1) {
                let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_string());
            }
            eprintln!("server: {line}");
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("listening line");
    let out = Command::new("node")
        .arg(dir.join("iota_js_client.js"))
        .arg(&url)
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "iota.js checks failed");
    assert!(stdout.contains("all checks passed"));
}
