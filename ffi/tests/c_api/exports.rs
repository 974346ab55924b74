//! The shared library as a loader sees it: exactly the C API in its dynamic symbol table, the
//! version node dcurl's own library defines, its own versioned soname; and (libdcurl.so) a binary linked
//! against a dcurl-like library runs unchanged with curlpow's in its place.

mod install;
use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const API: &[&str] = &[
    "Java_com_iota_iri_crypto_PearlDiver_exlibCancel",
    "Java_com_iota_iri_crypto_PearlDiver_exlibDestroy",
    "Java_com_iota_iri_crypto_PearlDiver_exlibInit",
    "Java_com_iota_iri_crypto_PearlDiver_exlibSearch",
    "ccurl_digest_transaction",
    "ccurl_pow",
    "ccurl_pow_finalize",
    "ccurl_pow_init",
    "ccurl_pow_interrupt",
    "ccurl_pow_set_loop_count",
    "ccurl_pow_set_offset",
    "curlpow_cancel_token_cancel",
    "curlpow_cancel_token_free",
    "curlpow_cancel_token_new",
    "curlpow_destroy",
    "curlpow_device_count",
    "curlpow_device_get",
    "curlpow_digest",
    "curlpow_init",
    "curlpow_initialized",
    "curlpow_last_error",
    "curlpow_pow",
    "curlpow_strerror",
    "curlpow_version",
    "dcurl_destroy",
    "dcurl_entry",
    "dcurl_init",
];

fn name() -> &'static str {
    if env!("CARGO_PKG_NAME").ends_with("ccurl") {
        "ccurl"
    } else {
        "dcurl"
    }
}

/// `tool args...`'s stdout, or None (skipped) when binutils are missing.
fn tool(tool: &str, args: &[&str], lib: &Path) -> Option<String> {
    match Command::new(tool).args(args).arg(lib).output() {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => panic!("{tool}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            support::missing(tool, "CURLPOW_REQUIRE_CC", &e.to_string());
            None
        }
    }
}

#[test]
fn exports_exactly_the_c_api() {
    let lib = support::library(name());
    let Some(nm) = tool("nm", &["-D", "--defined-only"], &lib) else {
        return;
    };
    let exported: BTreeSet<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap_or(s))
        .filter(|s| !s.is_empty())
        .collect();
    let expected: BTreeSet<&str> = API.iter().copied().collect();
    assert_eq!(exported, expected, "nm -D --defined-only {}", lib.display());
}

#[test]
fn defines_dcurls_version_node_and_its_soname() {
    let lib = support::library(name());
    let Some(versions) = tool("readelf", &["-V", "-W"], &lib) else {
        return;
    };
    assert!(versions.contains("CODEABI_1.0"), "{versions}");
    let Some(dynamic) = tool("readelf", &["-d", "-W"], &lib) else {
        return;
    };
    assert!(
        dynamic.contains(&format!(
            "Library soname: [lib{}.so.{}]",
            name(),
            env!("CARGO_PKG_VERSION_MAJOR")
        )),
        "{dynamic}"
    );
}

#[test]
fn a_binary_linked_against_dcurl_runs_on_curlpow() {
    if name() != "dcurl" {
        eprintln!("(a dcurl binary loads libdcurl.so: run by the curlpow-dcurl package)");
        return;
    }
    let Some(cc) = support::c_compiler() else {
        return;
    };
    let ours = support::library("dcurl");
    let dir = support::scratch_dir("dropin");
    let stub_dir = dir.join("dcurl");
    std::fs::create_dir_all(&stub_dir).unwrap();
    let map = dir.join("dcurl.version");
    std::fs::write(
        &map,
        "CODEABI_1.0 {\n    global: dcurl_*; ccurl_*;\n    local: *;\n};\n",
    )
    .unwrap();
    let c = support::tests_dir().join("c");
    let include = support::repo_dir().join("include");
    let cc_ok = |args: &[&std::ffi::OsStr]| {
        let o = Command::new(&cc).args(args).output().expect("run cc");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // The stand-in for dcurl's library, then the program linked against it (no run path).
    let stub = stub_dir.join("libdcurl.so");
    cc_ok(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-I".as_ref(),
        include.as_os_str(),
        c.join("dcurl_stub.c").as_os_str(),
        format!("-Wl,--version-script={}", map.display()).as_ref(),
        "-o".as_ref(),
        stub.as_os_str(),
    ]);
    let exe = dir.join("dcurl_dropin");
    cc_ok(&[
        "-std=c11".as_ref(),
        "-pthread".as_ref(),
        "-I".as_ref(),
        include.as_os_str(),
        c.join("dcurl_dropin.c").as_os_str(),
        format!("-L{}", stub_dir.display()).as_ref(),
        "-ldcurl".as_ref(),
        "-o".as_ref(),
        exe.as_os_str(),
    ]);
    if let Some(needs) = tool("readelf", &["-V", "-W"], &exe) {
        assert!(
            needs.contains("CODEABI_1.0"),
            "the program asks for dcurl's version node: {needs}"
        );
    }
    // Swap the library: the same binary, curlpow's libdcurl.so found first.
    let o = support::run_with_env(
        &exe,
        &[],
        true,
        Duration::from_secs(120),
        &[("LD_LIBRARY_PATH", ours.parent().unwrap())],
    );
    let out = support::assert_success("dcurl_dropin on curlpow's libdcurl.so", &o);
    assert_eq!(support::check_results(&out), 10);
}
