//! The C library's tests, one binary in each of its two packages (`curlpow-dcurl`,
//! `curlpow-ccurl`), which build the same code as libdcurl.so and libccurl.so: Python's ctypes
//! (`ctypes`) and the exported symbols (`exports`) in both; ccurl's API from C (`ccurl_c`) in
//! libccurl.so's; dcurl's API from C (`dcurl_c`), curlpow's own C API from C (`native_c`) and the
//! JNI methods from a JVM (`jni`) in libdcurl.so's. The build script sets `curlpow_ffi` to the
//! library's name. `cargo test -p curlpow-dcurl --test c_api jni::` runs one of them.

mod support;

#[cfg(curlpow_ffi = "ccurl")]
mod ccurl_c;
mod ctypes;
#[cfg(curlpow_ffi = "dcurl")]
mod dcurl_c;
mod exports;
#[cfg(curlpow_ffi = "dcurl")]
mod jni;
#[cfg(curlpow_ffi = "dcurl")]
mod native_c;
