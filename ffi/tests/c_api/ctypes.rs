//! The library from Python's ctypes (`python/test_ctypes.py`), as the peers' Python users load
//! it; every PoW the script prints is checked again here with the scalar reference. Skips
//! visibly without python3; fails instead under `CURLPOW_REQUIRE_PYTHON=1` (CI).

use crate::support;

use std::time::Duration;

/// The library this package builds (`dcurl` or `ccurl`): the name of its package directory.
fn library_name() -> &'static str {
    if env!("CARGO_PKG_NAME").ends_with("ccurl") {
        "ccurl"
    } else {
        "dcurl"
    }
}

#[test]
fn ctypes_loads_the_library_and_gets_valid_pow() {
    let Some(python) = support::python() else {
        return;
    };
    let name = library_name();
    let lib = support::library(name);
    let script = support::tests_dir().join("python/test_ctypes.py");
    let o = support::run(
        std::path::Path::new(&python),
        &[script.to_str().unwrap(), name, lib.to_str().unwrap()],
        false,
        Duration::from_secs(180),
    );
    let out = support::assert_success(&format!("test_ctypes.py {name}"), &o);
    assert!(out.contains(&format!("ok {name}")), "{out}");
    if let Some(l) = out.lines().find(|l| l.starts_with("interrupt:")) {
        eprintln!("{l}");
    }
    assert_eq!(support::check_results(&out), 10);
}
