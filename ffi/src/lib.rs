//! The C ABI of curlpow: one library built under two names, `libdcurl.so` and `libccurl.so`,
//! so that programs written for dcurl or ccurl load it in their place (headers in `include/`).
//!
//! - [`dcurl`]: dcurl v0.6's `dcurl_init`, `dcurl_entry`, `dcurl_destroy` (`include/dcurl.h`).
//! - [`ccurl`]: ccurl's `ccurl_pow` family and `ccurl_digest_transaction` (`include/ccurl.h`).
//! - [`native`]: `curlpow_*` for new C users: status codes, error messages, timeouts, cancel
//!   tokens, device selection and statistics (`include/curlpow.h`).
//! - [`jni`]: the native methods of the IRI fork's `com.iota.iri.crypto.PearlDiver`, which
//!   loads `libdcurl.so` through JNI.
//!
//! All of them share one process-wide [`curlpow::Engine`] (`state.rs`): one thread pool, one
//! device registry, so concurrent callers each get a device lease and never a thread of their
//! own. Every exported function catches panics and checks its pointers (`boundary.rs`): a bad
//! call returns NULL or a status code, never a crash or a hang. `docs/c-api.md` describes the
//! semantics where they differ from the peers.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod boundary;
pub mod ccurl;
pub mod dcurl;
pub mod jni;
pub mod native;
mod remote;
mod state;
