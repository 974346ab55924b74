//! `curlpow serve`, one test binary: the real binary on a loopback port with a real HTTP client
//! (`server`), the in-process load test (`server_load`), iota.js against it (`compat`) and the
//! status page in headless Chromium (`status_page`). `cargo test --test server compat::` runs
//! one of them.

#[path = "../attach_check/mod.rs"]
mod attach_check;
#[path = "../common/mod.rs"]
mod common;

mod compat;
mod server;
mod server_load;
mod status_page;
