//! libccurl.so's tests, one binary: ccurl's API from C (`ccurl_c`), Python's ctypes (`ctypes`),
//! and the exported symbols (`exports`). `cargo test -p curlpow-ccurl --test c_api ctypes::`
//! runs one of them.

#[path = "../support/mod.rs"]
mod support;

#[path = "../ccurl_c.rs"]
mod ccurl_c;
#[path = "../ctypes.rs"]
mod ctypes;
#[path = "../exports.rs"]
mod exports;
