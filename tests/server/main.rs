//! `curlpow serve`, one test binary: the real binary on a loopback port with a real HTTP client
//! (`server`), slow and idle connections (`server_connections`), shutdown under signals with
//! the drivers loaded (`serve_signals`), the in-process load test (`server_load`), iota.js
//! against it (`compat`) and the status page in headless Chromium (`status_page`).
//! `cargo test --test server compat::` runs one of them.

#[path = "../attach_check/mod.rs"]
mod attach_check;
#[path = "../common/mod.rs"]
mod common;
#[path = "../server_support/mod.rs"]
mod server_support;

mod compat;
mod serve_signals;
mod server;
mod server_connections;
mod server_load;
mod status_page;
