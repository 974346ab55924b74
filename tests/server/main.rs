//! `curlpow serve`, one test binary: the real binary on a loopback port with a real HTTP client
//! (`server`), slow and idle connections (`server_connections`), lying and large bodies
//! (`server_bodies`), clients sharing a full queue (`server_fairness`), shutdown under signals with
//! the drivers loaded (`serve_signals`), the in-process load test (`server_load`), iota.js
//! against it (`compat`) and the status page in headless Chromium (`status_page`).
//! `cargo test --test server compat::` runs one of them.

use curlpow_testkit::{attach_check, common, server_support};

/// The `curlpow` binary under test.
const BIN: &str = env!("CARGO_BIN_EXE_curlpow");

mod compat;
mod serve_signals;
mod server;
mod server_bodies;
mod server_connections;
mod server_fairness;
mod server_load;
mod status_page;
