//! The library as `scripts/install-c.sh` installs it: run into a temporary prefix with this
//! package's built library, the installed files and links checked, then a C program built with
//! `pkg-config --cflags --libs` against the prefix alone and run on it (dcurl: the program in
//! docs/c-api.md; ccurl: `c/ccurl_test.c`), its PoW checked with the scalar reference. A module
//! of the `exports` test binary (the library as the loader and the system see it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::name;
use crate::support;

/// `pkg-config` if it runs; otherwise skips (or fails under `CURLPOW_REQUIRE_CC`).
fn pkg_config() -> Option<()> {
    match Command::new("pkg-config").arg("--version").output() {
        Ok(o) if o.status.success() => Some(()),
        Ok(o) => {
            support::missing("pkg-config", "CURLPOW_REQUIRE_CC", &o.status.to_string());
            None
        }
        Err(e) => {
            support::missing("pkg-config", "CURLPOW_REQUIRE_CC", &e.to_string());
            None
        }
    }
}

/// Run a command, assert it succeeded, return its stdout.
fn ok(what: &str, cmd: &mut Command) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        o.status.success(),
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The C program of docs/c-api.md that is built with pkg-config (the block starting `/* pow.c:`).
fn docs_program() -> String {
    let doc = std::fs::read_to_string(support::repo_dir().join("docs/c-api.md")).unwrap();
    let start = doc
        .find("```c\n/* pow.c:")
        .expect("docs/c-api.md has the pkg-config program")
        + "```c\n".len();
    let len = doc[start..].find("```").expect("the block ends");
    doc[start..start + len].to_string()
}

fn link_target(p: &Path) -> PathBuf {
    std::fs::read_link(p).unwrap_or_else(|e| panic!("{} is not a link: {e}", p.display()))
}

#[test]
fn installs_into_a_prefix_and_a_program_builds_with_pkg_config() {
    let Some(cc) = support::c_compiler() else {
        return;
    };
    let Some(()) = pkg_config() else {
        return;
    };
    let lib = name();
    let built = support::library(lib);
    let dir = support::scratch_dir("install");
    let prefix = dir.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    let out = ok(
        "scripts/install-c.sh",
        Command::new("bash")
            .arg(support::repo_dir().join("scripts/install-c.sh"))
            .arg("--prefix")
            .arg(&prefix)
            .arg("--from")
            .arg(built.parent().unwrap())
            .args(["--only", lib])
            .env_remove("DESTDIR"),
    );
    eprintln!("{out}");

    // The files and links, as a C library installs them.
    let version = env!("CARGO_PKG_VERSION");
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    let libdir = prefix.join("lib");
    let real = libdir.join(format!("lib{lib}.so.{version}"));
    assert!(std::fs::symlink_metadata(&real).unwrap().is_file());
    assert_eq!(
        std::fs::read(&real).unwrap(),
        std::fs::read(&built).unwrap()
    );
    let soname = format!("lib{lib}.so.{major}");
    assert_eq!(
        link_target(&libdir.join(&soname)),
        PathBuf::from(format!("lib{lib}.so.{version}"))
    );
    assert_eq!(
        link_target(&libdir.join(format!("lib{lib}.so"))),
        PathBuf::from(&soname)
    );
    for h in [format!("{lib}.h"), "curlpow.h".into()] {
        assert_eq!(
            std::fs::read(prefix.join("include").join(&h)).unwrap(),
            std::fs::read(support::repo_dir().join("include").join(&h)).unwrap(),
            "{h}"
        );
    }
    let pcdir = libdir.join("pkgconfig");
    let pcs: &[&str] = if lib == "dcurl" {
        &["dcurl", "curlpow"]
    } else {
        &["ccurl"]
    };
    for pc in pcs {
        let query = |what: &str| {
            ok(
                &format!("pkg-config {what} {pc}"),
                Command::new("pkg-config")
                    .args([what, pc])
                    .env("PKG_CONFIG_PATH", &pcdir),
            )
        };
        assert_eq!(query("--modversion").trim(), version, "{pc}");
        let libs = query("--libs");
        assert!(libs.contains(&format!("-l{lib}")), "{pc}: {libs}");
    }

    // A program built with pkg-config against the prefix alone, run on it.
    let flags = ok(
        "pkg-config --cflags --libs",
        Command::new("pkg-config")
            .args(["--cflags", "--libs", lib])
            .env("PKG_CONFIG_PATH", &pcdir),
    );
    let (source, args): (PathBuf, &[&str]) = if lib == "dcurl" {
        let p = dir.join("pow.c");
        std::fs::write(&p, docs_program()).unwrap();
        (p, &["9"])
    } else {
        (support::tests_dir().join("c/ccurl_test.c"), &["lazy"])
    };
    let exe = dir.join(format!("{lib}_installed"));
    ok(
        "cc with pkg-config's flags",
        Command::new(&cc)
            .args([
                "-std=c11",
                "-D_POSIX_C_SOURCE=200809L",
                "-Wall",
                "-Werror",
                "-pthread",
            ])
            .arg(&source)
            .args(flags.split_whitespace())
            .arg("-o")
            .arg(&exe),
    );
    if let Some(needed) = Command::new("readelf")
        .args(["-d", "-W"])
        .arg(&exe)
        .output()
        .ok()
        .filter(|o| o.status.success())
    {
        let needed = String::from_utf8_lossy(&needed.stdout);
        assert!(
            needed.contains(&format!("Shared library: [{soname}]")),
            "{needed}"
        );
    }
    let tx = support::random_transactions(26, 1).remove(0);
    let input = dir.join("transaction.trytes");
    std::fs::write(&input, format!("{tx}\n")).unwrap();
    // The program reads its standard input (dcurl) or ignores it (ccurl).
    let script = "exec \"$0\" \"$@\" < \"$TX\"";
    let sh: Vec<&str> = [&["-c", script, exe.to_str().unwrap()][..], args].concat();
    let o = support::run_with_env(
        Path::new("/bin/sh"),
        &sh,
        false,
        Duration::from_secs(120),
        &[
            ("LD_LIBRARY_PATH", libdir.as_path()),
            ("TX", input.as_path()),
        ],
    );
    let out = support::assert_success("the program built with pkg-config", &o);
    if lib == "dcurl" {
        let line = out.trim_end();
        assert_eq!(support::check_results(&format!("RESULT 9 {tx} {line}")), 1);
    } else {
        assert_eq!(support::check_results(&out), 2);
    }
}

/// A prefix or libdir that a `.pc` file cannot carry through `cc $(pkg-config ...)` (a space is
/// split on, a `#` starts a pkg-config comment) is refused with exit 2 and a message naming the
/// path and why, before anything is written.
#[test]
fn a_prefix_pkg_config_cannot_carry_is_refused() {
    let lib = name();
    let built = support::library(lib);
    let dir = support::scratch_dir("install-refused");
    for (flag, sub) in [
        ("--prefix", "with space"),
        ("--prefix", "with#hash"),
        ("--libdir", "lib dir"),
        ("--prefix", "quote'd"),
    ] {
        let target = dir.join(sub);
        let _ = std::fs::remove_dir_all(&target);
        let mut cmd = Command::new("bash");
        cmd.arg(support::repo_dir().join("scripts/install-c.sh"));
        if flag == "--libdir" {
            cmd.arg("--prefix").arg(dir.join("prefix-ok"));
        }
        let o = cmd
            .arg(flag)
            .arg(&target)
            .arg("--from")
            .arg(built.parent().unwrap())
            .args(["--only", lib])
            .env_remove("DESTDIR")
            .output()
            .expect("bash runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {sub}: {err}");
        assert!(
            err.contains(&format!("{flag} '{}'", target.display())) && err.contains("pkg-config"),
            "{flag} {sub}: {err}"
        );
        assert!(!target.exists(), "{flag} {sub}: something was written");
    }
}
