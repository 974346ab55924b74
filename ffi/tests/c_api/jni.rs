//! The JNI methods from a JVM: `java/JniTest.java` calls `com.iota.iri.crypto.PearlDiver`'s
//! native methods (a stand-in for the IRI fork's class) bound to this package's `libdcurl.so`
//! by `System.loadLibrary("dcurl")`; every PoW it prints is checked again here. Skips visibly
//! without a JDK; fails instead under `CURLPOW_REQUIRE_JAVA=1`.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[test]
fn iri_fork_pearl_diver_gets_valid_pow_and_cancel_works() {
    let Some((javac, java)) = support::java() else {
        return;
    };
    let lib = support::library("dcurl");
    let lib_dir = lib.parent().expect("library directory");
    let src = support::tests_dir().join("java");
    let classes = support::scratch_dir("java");
    let o = Command::new(&javac)
        .arg("-d")
        .arg(&classes)
        .arg(src.join("JniTest.java"))
        .arg(src.join("com/iota/iri/crypto/PearlDiver.java"))
        .output()
        .expect("run javac");
    assert!(
        o.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = support::run(
        Path::new(&java),
        &[
            &format!("-Djava.library.path={}", lib_dir.display()),
            "-cp",
            classes.to_str().unwrap(),
            "JniTest",
        ],
        false,
        Duration::from_secs(180),
    );
    let out = support::assert_success("JniTest", &o);
    assert!(out.contains("ok jni"), "{out}");
    if let Some(l) = out.lines().find(|l| l.starts_with("cancel:")) {
        eprintln!("{l}");
    }
    assert_eq!(support::check_results(&out), 10);
}
