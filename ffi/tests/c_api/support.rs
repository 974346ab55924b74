//! Helpers for the tests that drive the built libraries from C, Python and Java: find the
//! `.so` cargo built next to this test, compile and run programs against it with a time limit,
//! skip visibly when a tool is missing (fail instead under its `CURLPOW_REQUIRE_*` variable),
//! and check every PoW result the program prints with curlpow's scalar reference.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use curlpow::{Transaction, TRANSACTION_TRYTES};

/// The package root (`ffi/dcurl` or `ffi/ccurl`).
pub fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository root.
pub fn repo_dir() -> PathBuf {
    package_dir().join("../..")
}

/// `ffi/tests/`.
pub fn tests_dir() -> PathBuf {
    package_dir().join("../tests")
}

/// The shared library `lib{name}.so` that cargo built for this test run: it sits beside the
/// test executable (`target/<profile>/deps/`).
pub fn library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps directory");
    let file = format!("lib{name}.so");
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let p = dir.join(&file);
        if p.exists() {
            return p;
        }
    }
    panic!(
        "{file} not found beside {} (cargo builds it with this package's tests)",
        exe.display()
    );
}

/// A scratch directory for this test binary's build products, reused by its next run
/// (`target/<profile>/deps/curlpow-ffi-<tag>-<test binary>/`).
pub fn scratch_dir(tag: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("test");
    let dir = exe
        .parent()
        .expect("deps directory")
        .join(format!("curlpow-ffi-{tag}-{stem}"));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// A missing tool: `SKIPPED:` on stderr and false, or a panic under `var=1`.
pub fn missing(tool: &str, var: &str, why: &str) -> bool {
    curlpow_testkit::skip::skip_unless_required(var, &format!("{tool} is unavailable ({why})"));
    false
}

fn runs(cmd: &str, arg: &str) -> Result<(), String> {
    match Command::new(cmd).arg(arg).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`{cmd} {arg}` exited with {}", o.status)),
        Err(e) => Err(format!("`{cmd}`: {e}")),
    }
}

/// The C compiler (`$CC`, else `cc`) if it runs; otherwise skips (or fails under
/// `CURLPOW_REQUIRE_CC`).
pub fn c_compiler() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    match runs(&cc, "--version") {
        Ok(()) => Some(cc),
        Err(why) => {
            missing("a C compiler", "CURLPOW_REQUIRE_CC", &why);
            None
        }
    }
}

/// `python3` if it runs; otherwise skips (or fails under `CURLPOW_REQUIRE_PYTHON`).
pub fn python() -> Option<String> {
    match runs("python3", "--version") {
        Ok(()) => Some("python3".into()),
        Err(why) => {
            missing("python3", "CURLPOW_REQUIRE_PYTHON", &why);
            None
        }
    }
}

/// `javac` and `java` if both run; otherwise skips (or fails under `CURLPOW_REQUIRE_JAVA`).
pub fn java() -> Option<(String, String)> {
    match runs("javac", "-version").and_then(|()| runs("java", "-version")) {
        Ok(()) => Some(("javac".into(), "java".into())),
        Err(why) => {
            missing("a JDK (javac, java)", "CURLPOW_REQUIRE_JAVA", &why);
            None
        }
    }
}

/// A folder where the built `lib{lib}.so` is also found by its soname (`lib{lib}.so.0`), as
/// `scripts/install-c.sh` lays it out: a program linked against it asks for the soname.
pub fn link_dir(lib: &str) -> PathBuf {
    let so = library(lib);
    let dir = scratch_dir(&format!("lib{lib}"));
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    for name in [format!("lib{lib}.so"), format!("lib{lib}.so.{major}")] {
        // A new link under a name of its own, renamed over the old one: tests may race here.
        let link = dir.join(&name);
        let tmp = dir.join(format!(
            ".{name}.{}.{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&so, &tmp)
            .and_then(|()| std::fs::rename(&tmp, &link))
            .unwrap_or_else(|e| panic!("linking {} to {}: {e}", link.display(), so.display()));
    }
    dir
}

/// Compile one C file of `ffi/tests/c/` against `lib{lib}.so` (headers from `include/`), with
/// warnings as errors; the executable finds the library through its run path.
pub fn compile_c(cc: &str, source: &str, lib: &str, out_dir: &Path) -> PathBuf {
    let lib_dir = &link_dir(lib);
    let src = tests_dir().join("c").join(source);
    let exe = out_dir.join(source.trim_end_matches(".c"));
    let mut cmd = Command::new(cc);
    cmd.args([
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        "-O1",
        "-g",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pthread",
    ])
    .arg("-I")
    .arg(repo_dir().join("include"))
    .arg(&src)
    .arg("-o")
    .arg(&exe)
    .arg(format!("-L{}", lib_dir.display()))
    .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
    .arg(format!("-l{lib}"));
    if let Ok(extra) = std::env::var("CURLPOW_C_TEST_CFLAGS") {
        cmd.args(extra.split_whitespace());
    }
    let o = cmd.output().expect("run the C compiler");
    assert!(
        o.status.success(),
        "compiling {}: {}\n{}",
        src.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// One C program per test binary, compiled once however many tests run it.
pub fn c_program(
    cell: &'static OnceLock<Option<PathBuf>>,
    source: &str,
    lib: &str,
) -> Option<PathBuf> {
    cell.get_or_init(|| {
        let cc = c_compiler()?;
        Some(compile_c(&cc, source, lib, &scratch_dir("c")))
    })
    .clone()
}

/// Run `program` to completion within `limit` (the process is killed past it), with
/// `CURLPOW_C_TEST_WRAPPER` (e.g. `valgrind --error-exitcode=99`) in front when `wrap`.
/// `LD_LIBRARY_PATH` is cleared (cargo points it at `target/<profile>/`, where a library from
/// another profile may sit); the programs find theirs by run path or by full path.
pub fn run(program: &Path, args: &[&str], wrap: bool, limit: Duration) -> Output {
    run_with_env(program, args, wrap, limit, &[])
}

/// [`run`] with extra environment variables.
pub fn run_with_env(
    program: &Path,
    args: &[&str],
    wrap: bool,
    limit: Duration,
    env: &[(&str, &Path)],
) -> Output {
    run_full(program, args, wrap, limit, env, &[])
}

/// [`run`] (unwrapped) without the environment variables `remove`.
pub fn run_with_env_removed(
    program: &Path,
    args: &[&str],
    limit: Duration,
    remove: &[&str],
) -> Output {
    run_full(program, args, false, limit, &[], remove)
}

fn run_full(
    program: &Path,
    args: &[&str],
    wrap: bool,
    limit: Duration,
    env: &[(&str, &Path)],
    remove: &[&str],
) -> Output {
    let wrapper: Vec<String> = if wrap {
        std::env::var("CURLPOW_C_TEST_WRAPPER")
            .map(|w| w.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let limit = if wrapper.is_empty() {
        limit
    } else {
        limit * 20
    };
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    };
    for var in remove {
        cmd.env_remove(var);
    }
    cmd.args(args)
        .env_remove("LD_LIBRARY_PATH")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    // Read both pipes on their own threads so that a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{} {args:?} ran past {limit:?} (killed); stderr so far:\n{}",
                program.display(),
                String::from_utf8_lossy(&err_t.join().unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    }
}

/// Assert a run succeeded, showing its output otherwise; returns stdout.
pub fn assert_success(what: &str, o: &Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{what}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        o.status
    );
    if !stderr.trim().is_empty() {
        eprintln!("{what} stderr:\n{stderr}");
    }
    stdout
}

/// Check every `RESULT <mwm> <input trytes> <output trytes>` line with the scalar reference:
/// the output keeps every tryte of the input but the nonce's 27, and its hash ends in at least
/// MWM zero trits. Returns how many lines were checked.
pub fn check_results(stdout: &str) -> usize {
    let mut n = 0;
    for line in stdout.lines().filter(|l| l.starts_with("RESULT ")) {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 4, "malformed result line: {line:.80}");
        let mwm: usize = f[1].parse().expect("mwm");
        let (input, output) = (f[2], f[3]);
        assert_eq!(input.len(), TRANSACTION_TRYTES, "input length");
        assert_eq!(output.len(), TRANSACTION_TRYTES, "output length");
        let keep = TRANSACTION_TRYTES - 27;
        assert_eq!(&input[..keep], &output[..keep], "only the nonce may change");
        let tx: Transaction = output.parse().expect("output trytes");
        assert!(
            tx.weight() >= mwm,
            "weight {} < mwm {mwm} for {}",
            tx.weight(),
            &output[keep..]
        );
        n += 1;
    }
    n
}

/// `count` distinct pseudo-random transactions (xorshift64), as trytes.
pub fn random_transactions(seed: u64, count: usize) -> Vec<String> {
    let mut trytes = curlpow::internal::xorshift::trytes(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..count)
        .map(|_| {
            (&mut trytes)
                .take(TRANSACTION_TRYTES)
                .map(char::from)
                .collect()
        })
        .collect()
}
