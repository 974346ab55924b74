//! The shipped systemd units (`contrib/curlpow.service`, `packaging/systemd/*.service`) and
//! the stop timeout: every unit lets the service extend its stop timeout (`NotifyAccess=main`)
//! and is hardened (`systemd-analyze security --offline=yes` rates it 3.0 or lower, where
//! systemd-analyze is installed); on SIGTERM `serve` and `worker` send systemd
//! `EXTEND_TIMEOUT_USEC` for their `--shutdown-grace` plus 20 s, to a socket path or an
//! abstract one, as systemd passes it in `NOTIFY_SOCKET`.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_support::bin;

fn units() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![root.join("contrib/curlpow.service")];
    let mut pkg: Vec<PathBuf> = std::fs::read_dir(root.join("packaging/systemd"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "service"))
        .collect();
    pkg.sort();
    assert!(pkg.len() >= 2, "{pkg:?}");
    v.extend(pkg);
    v
}

/// The highest exposure `systemd-analyze security` may give a shipped unit.
const MAX_EXPOSURE: f64 = 3.0;

#[test]
fn every_shipped_unit_is_hardened_and_extends_its_stop_timeout() {
    let analyze = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !analyze {
        curlpow_testkit::skip::skip_unless_required(
            "CURLPOW_REQUIRE_SYSTEMD",
            "systemd-analyze is not installed: the units' exposure is not rated",
        );
    }
    for unit in units() {
        let text = std::fs::read_to_string(&unit).unwrap();
        let has = |line: &str| text.lines().any(|l| l.trim() == line);
        for line in [
            "NotifyAccess=main",
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "CapabilityBoundingSet=",
            "SystemCallFilter=@system-service",
            "UMask=0077",
        ] {
            assert!(has(line), "{}: no {line}", unit.display());
        }
        assert!(
            text.lines().any(|l| l.starts_with("TimeoutStopSec=")),
            "{}",
            unit.display()
        );
        if !analyze {
            continue;
        }
        let out = Command::new("systemd-analyze")
            .args(["security", "--offline=yes", "--no-pager"])
            .arg(&unit)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let score: f64 = text
            .lines()
            .find_map(|l| {
                l.split("Overall exposure level for ")
                    .nth(1)?
                    .split(": ")
                    .nth(1)?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| {
                panic!(
                    "{}: no exposure level in:\n{text}\n{}",
                    unit.display(),
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        assert!(
            score <= MAX_EXPOSURE,
            "{}: exposure {score} > {MAX_EXPOSURE}:\n{text}",
            unit.display()
        );
    }
}

/// Run `args` with `NOTIFY_SOCKET=notify`: wait for `ready` on its stderr, send SIGTERM, wait
/// for the exit.
fn stop_notification(args: &[&str], notify: &str, ready: &str) {
    let mut child = Command::new(bin())
        .args(args)
        .env("NOTIFY_SOCKET", notify)
        .env("CURLPOW_THREADS", "1")
        .env_remove("RUST_LOG")
        .env_remove("CURLPOW_BROKER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let ready = ready.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(&ready) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the service started");
    // SAFETY: kill(2) on our own child with a valid signal number.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("still running 60 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn received(sock: &UnixDatagram) -> String {
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut buf = [0u8; 256];
    let n = sock.recv(&mut buf).expect("a notification");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn serve_extends_its_stop_timeout_by_its_grace() {
    let dir = std::env::temp_dir().join(format!("curlpow-notify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("notify");
    let sock = UnixDatagram::bind(&path).unwrap();
    stop_notification(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--backend",
            "cpu",
            "--shutdown-grace",
            "100",
        ],
        path.to_str().unwrap(),
        "listening on",
    );
    assert_eq!(received(&sock), "EXTEND_TIMEOUT_USEC=120000000");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn worker_extends_its_stop_timeout_by_its_grace_on_an_abstract_socket() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("curlpow-notify-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let sock = UnixDatagram::bind_addr(&addr).unwrap();
    stop_notification(
        &[
            "worker",
            "--broker",
            "amqp://guest:guest@127.0.0.1:1/%2f",
            "--backend",
            "cpu",
            "--shutdown-grace",
            "7.5",
        ],
        &format!("@{name}"),
        "started",
    );
    assert_eq!(received(&sock), "EXTEND_TIMEOUT_USEC=27500000");
}
