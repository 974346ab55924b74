//! What curlpow's integration tests, benchmarks, fuzz targets and the C library's tests share,
//! in one place, used through ordinary paths (`use curlpow_testkit::common;`):
//!
//! - [`common`]: the public vectors (`tests/vectors/`), pseudo-random transactions and states,
//!   the checks of a PoW result and of a device's search, the CPU kernels this machine runs, and
//!   the rule for GPU tests that find no device (`CURLPOW_REQUIRE_BACKENDS`);
//! - [`skip`]: skipping a test visibly (`SKIPPED:` on standard error and in `CURLPOW_SKIP_LOG`),
//!   or failing instead under a `CURLPOW_REQUIRE_*` variable;
//! - [`attach_check`]: what `attachToTangle` must return for a bundle, and the iota.js vector;
//! - [`checks`]: the parser properties the fuzz targets check (and `tests/cli` on
//!   pseudo-random input);
//! - `server_support` (feature `server`): `curlpow serve` on a loopback port, with an HTTP
//!   client and raw sockets;
//! - `broker_client` (feature `broker`): a blocking AMQP client for the broker tests and
//!   benchmark.
//!
//! What needs the `curlpow` binary takes its path as an argument: only the package's own
//! integration tests and benchmarks know it (`env!("CARGO_BIN_EXE_curlpow")`).

pub mod attach_check;
#[cfg(feature = "broker")]
pub mod broker_client;
pub mod checks;
pub mod common;
#[cfg(feature = "server")]
pub mod server_support;
pub mod skip;
