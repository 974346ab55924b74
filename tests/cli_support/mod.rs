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

/// Run `cmd` with `stdin` as its input (a pipe), and measure its peak memory (wait4).
pub fn run_measured(mut cmd: Command, stdin: &[u8]) -> Run {
    cmd.env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_CPU_KERNEL")
        .stdin(Stdio::piped())
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
    c.args(args).env_remove("CURLPOW_INJECT_FAULT");
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
