//! Local state read and written without surprises: the tuner's cache is read only when it is a
//! regular file of bounded size, without blocking (a FIFO, a link to `/dev/zero`); `serve` and
//! `worker` stop at once on SIGTERM even while device discovery hangs in a driver; `tune` fails
//! (exit 1, naming the path) when its choice cannot be written. The driver-dependent tests
//! skip visibly without an OpenCL device (`CURLPOW_REQUIRE_BACKENDS=opencl` makes that a
//! failure).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli_support::bin;
use crate::common;

/// A fresh folder for one test, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("curlpow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path and a mode; no memory is shared.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

/// `curlpow` with a cache of its own and no variant forced.
fn command(cache: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env("CURLPOW_THREADS", "2")
        .env_remove("CURLPOW_TUNE")
        .env_remove("CURLPOW_OPENCL_KERNEL")
        .env_remove("CURLPOW_WGPU_TUNING")
        .env_remove("CURLPOW_INJECT_FAULT")
        .env_remove("CURLPOW_BROKER")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Wait for `child` at most `within`; killed (and the test failed) past it.
fn finish(mut child: Child, within: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > within {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {within:?} (killed); stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Limit the child's data segment (heap and private mappings) to `bytes`: a read without a
/// bound fails fast instead of taking the machine's memory.
fn limit_data(cmd: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit(2),
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether `devices --json --software` lists an OpenCL device (with the cache in `cache`).
fn opencl_found(cache: &Path) -> bool {
    let out = command(
        cache,
        &["devices", "--json", "--software", "--backend", "opencl"],
    )
    .output()
    .unwrap();
    let found = out.status.success()
        && serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .is_some_and(|a| a.iter().any(|d| d["backend"] == "opencl"));
    common::gpu_available("opencl", found)
}

/// Discovery with the cache replaced by something that is not a regular file: it ends, the
/// device is listed on its default variant, and the one warning names the cache and why.
fn cache_not_a_file(name: &str, make: impl FnOnce(&Path)) {
    let dir = Scratch::new(name);
    if !opencl_found(dir.path()) {
        return;
    }
    let cache = dir.path().join("curlpow/tune.json");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    make(&cache);
    let mut cmd = command(
        dir.path(),
        &["devices", "--json", "--software", "--backend", "opencl"],
    );
    limit_data(&mut cmd, 3 << 30);
    let out = finish(cmd.spawn().unwrap(), Duration::from_secs(120), name);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {:?}\n{err}", out.status);
    assert!(
        err.contains(&format!("tune cache {}", cache.display()))
            && err.contains("not a regular file"),
        "{name}: {err}"
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = list
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["backend"] == "opencl")
        .expect("the OpenCL device is listed");
    assert_eq!(d["details"]["kernel_source"], "default", "{d}");
}

#[test]
fn a_fifo_as_the_tune_cache_does_not_block_discovery() {
    cache_not_a_file("tune-cache-fifo", mkfifo);
}

#[test]
fn a_link_to_dev_zero_as_the_tune_cache_is_not_read() {
    cache_not_a_file("tune-cache-zero", |p| {
        std::os::unix::fs::symlink("/dev/zero", p).unwrap()
    });
}

/// A cache over its size cap is refused without being read whole.
#[test]
fn an_oversized_tune_cache_is_refused() {
    let dir = Scratch::new("tune-cache-big");
    if !opencl_found(dir.path()) {
        return;
    }
    let cache = dir.path().join("curlpow/tune.json");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    // Valid JSON (spaces) past the cap: only the size check refuses it.
    let f = std::fs::File::create(&cache).unwrap();
    f.set_len((1 << 20) + 1).unwrap();
    drop(f);
    let out = command(
        dir.path(),
        &["devices", "--json", "--software", "--backend", "opencl"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
}

/// An OpenCL vendor folder whose `.icd` file is a FIFO: the ICD loader blocks in discovery
/// opening it, as a hung driver would.
fn hanging_discovery(dir: &Path) -> PathBuf {
    let vendors = dir.join("vendors");
    std::fs::create_dir_all(&vendors).unwrap();
    mkfifo(&vendors.join("hang.icd"));
    vendors
}

/// SIGTERM while the service is in device discovery (hung in the ICD loader): the process
/// ends at once, saying so, with exit 0 (as after a graceful stop).
fn sigterm_during_discovery(name: &str, args: &[&str]) {
    let dir = Scratch::new(name);
    if !opencl_found(dir.path()) {
        return;
    }
    let vendors = hanging_discovery(dir.path());
    let mut cmd = command(dir.path(), args);
    cmd.env("OCL_ICD_VENDORS", &vendors);
    let child = cmd.spawn().unwrap();
    // Long enough to be in discovery (nothing else before it takes a second).
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill(2) on our own child with a valid signal number.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let out = finish(child, Duration::from_secs(20), name);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{name}: {err}");
    assert!(err.contains("SIGTERM while starting"), "{name}: {err}");
    assert!(!err.contains("listening on"), "{name}: {err}");
}

#[test]
fn serve_stops_on_sigterm_during_discovery() {
    sigterm_during_discovery(
        "serve-sigterm-discovery",
        &["serve", "--listen", "127.0.0.1:0", "--software"],
    );
}

#[test]
fn worker_stops_on_sigterm_during_discovery() {
    sigterm_during_discovery(
        "worker-sigterm-discovery",
        &[
            "worker",
            "--broker",
            "amqp://guest:guest@127.0.0.1:1/%2f",
            "--software",
        ],
    );
}

/// `tune` whose choice cannot be written (`XDG_CACHE_HOME` is a regular file): exit 1, the
/// message naming the path, after the trials are printed.
#[test]
fn tune_fails_when_its_cache_cannot_be_written() {
    let dir = Scratch::new("tune-unwritable");
    if !opencl_found(dir.path()) {
        return;
    }
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let out = command(
        &file,
        &[
            "tune",
            "--software",
            "--backend",
            "opencl",
            "--seconds",
            "0.5",
        ],
    )
    // PoCL keeps its kernel cache under XDG_CACHE_HOME too, and finds no device without one.
    .env("POCL_CACHE_DIR", dir.path().join("pocl"))
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&file.join("curlpow").display().to_string())
            && err.contains("could not be written"),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("chosen"),
        "the trials are still printed: {out:?}"
    );
}
