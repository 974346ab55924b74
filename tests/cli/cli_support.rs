//! What the `cli_*` tests share: the binary under test, and runs measured like a user meets
//! them (exit code or signal, output, peak memory).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// The `curlpow` binary of this build.
pub fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("curlpow")
}

/// The binary with the settings every CLI test uses: 2 CPU threads, no kernel or fault forced.
pub fn curlpow() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin());
    c.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL")
        .env_remove("CURLPOW_INJECT_FAULT");
    c
}

/// The example transaction (one line, with its line end).
pub fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/transaction.trytes"
    ))
    .unwrap()
}

/// How a run ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code, if it exited.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// Peak resident memory, KiB.
    pub max_rss_kib: u64,
}

impl Run {
    /// True for a Rust panic or a crash: what no input may cause.
    pub fn crashed(&self) -> bool {
        self.code == Some(101) || self.signal.is_some() || self.stderr.contains("panicked")
    }
}

/// GNU time, where installed: it forks from a small process, so the peak it reports is the
/// command's own.
const TIME: &str = "/usr/bin/time";

/// Run `cmd` with `stdin` as its input (a pipe), and measure its peak memory. Two CPU threads
/// unless `cmd` sets `CURLPOW_THREADS` itself.
///
/// The peak comes from GNU time when it is installed. Without it, wait4's figure is used, an
/// upper bound: Linux carries a process's peak across exec, and a child spawned with
/// posix_spawn (vfork) starts from this test process's peak.
pub fn run_measured(cmd: Command, stdin: &[u8]) -> Run {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut wrapped;
    let mut report = None;
    if std::path::Path::new(TIME).exists() {
        let path = std::env::temp_dir().join(format!(
            "curlpow-rss-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        wrapped = Command::new(TIME);
        wrapped
            .arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&path)
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => wrapped.env(k, v),
                None => wrapped.env_remove(k),
            };
        }
        report = Some(path);
    } else {
        wrapped = cmd;
    }
    let mut run = spawn_and_wait(wrapped, stdin);
    if let Some(path) = report {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::remove_file(&path).ok();
        for line in text.lines() {
            if let Some(sig) = line.strip_prefix("Command terminated by signal ") {
                run.signal = sig.trim().parse().ok();
                run.code = None;
            } else if let Ok(kib) = line.trim().parse() {
                run.max_rss_kib = kib;
            }
        }
    }
    run
}

// The child is reaped by wait4 (which also reports its resource use), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn spawn_and_wait(mut cmd: Command, stdin: &[u8]) -> Run {
    if !cmd.get_envs().any(|(k, _)| k == "CURLPOW_THREADS") {
        cmd.env("CURLPOW_THREADS", "2");
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn curlpow");
    let pid = child.id() as libc::pid_t;
    let mut input = child.stdin.take().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    std::thread::scope(|s| {
        s.spawn(move || {
            // The child may stop reading early (a bad option): a broken pipe here is fine.
            let _ = input.write_all(stdin);
        });
        let o = s.spawn(move || {
            let mut b = Vec::new();
            let _ = out.read_to_end(&mut b);
            b
        });
        let e = s.spawn(move || {
            let mut b = Vec::new();
            let _ = err.read_to_end(&mut b);
            String::from_utf8_lossy(&b).into_owned()
        });
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our child, not waited for yet; both out-pointers are valid.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
        let st = std::process::ExitStatus::from_raw(status);
        Run {
            code: st.code(),
            signal: st.signal(),
            stdout: o.join().unwrap(),
            stderr: e.join().unwrap(),
            max_rss_kib: usage.ru_maxrss as u64,
        }
    })
}

/// `curlpow ARGS` as a [`Command`] for [`run_measured`].
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .env_remove("CURLPOW_INJECT_FAULT")
        .env_remove("CURLPOW_CPU_KERNEL");
    c
}

/// `curlpow ARGS` started with standard output closed, as `curlpow ARGS >&-` in a shell.
pub fn with_stdout_closed(args: &[&str]) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new("sh");
    c.arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(bin())
        .args(args)
        .env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL")
        .env_remove("CURLPOW_INJECT_FAULT");
    c
}
