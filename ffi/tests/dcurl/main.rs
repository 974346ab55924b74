//! libdcurl.so's tests, one binary: dcurl's API from C (`dcurl_c`), curlpow's own C API from C
//! (`native_c`), Python's ctypes (`ctypes`), the JNI methods from a JVM (`jni`), and the exported
//! symbols (`exports`). `cargo test -p curlpow-dcurl --test c_api jni::` runs one of them.

#[path = "../support/mod.rs"]
mod support;

#[path = "../ctypes.rs"]
mod ctypes;
#[path = "../dcurl_c.rs"]
mod dcurl_c;
#[path = "../exports.rs"]
mod exports;
#[path = "../jni.rs"]
mod jni;
#[path = "../native_c.rs"]
mod native_c;
