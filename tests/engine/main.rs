//! The library's engine, one test binary: the core (trinary, the scalar Curl-P-81 reference, the
//! CPU search), every CPU kernel, the per-call paths, where a request enters (`request`), device
//! selection and `attach_to_tangle`.
//! Each module is one part; `cargo test --test engine core::` runs one of them.

use curlpow_testkit::{attach_check, common};

mod attach;
mod block;
mod block_peer;
mod core;
mod cpu_kernels;
mod layers;
mod per_call;
mod request;
mod selection;
