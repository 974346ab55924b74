//! Limits the shared library's exports to the C API with a linker version script
//! (`exports.map`) and gives it a versioned soname (`-soname libdcurl.so.0` / `libccurl.so.0`,
//! the package's major version) where the linker takes both (GNU ld, gold, lld: Linux and the
//! BSDs). A program linked against it asks the loader for `libdcurl.so.0`;
//! `scripts/install-c.sh` installs that name beside the file and the plain `libdcurl.so` that
//! dcurl's users load by name.

use std::path::PathBuf;

fn main() {
    // The package is `curlpow-dcurl` or `curlpow-ccurl`; its library `dcurl` or `ccurl`. The
    // tests (`tests/c_api/`, shared by both packages) read it as `cfg(curlpow_ffi = "...")`.
    let pkg = std::env::var("CARGO_PKG_NAME").expect("set by cargo");
    let lib = pkg.strip_prefix("curlpow-").unwrap_or(&pkg).to_string();
    println!("cargo:rustc-check-cfg=cfg(curlpow_ffi, values(\"dcurl\", \"ccurl\"))");
    println!("cargo:rustc-cfg=curlpow_ffi=\"{lib}\"");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let script = manifest.join("..").join("exports.map");
    println!("cargo:rerun-if-changed={}", script.display());
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    ) {
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            script.display()
        );
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,lib{lib}.so.{major}");
    }
}
