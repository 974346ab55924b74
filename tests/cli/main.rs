//! The `curlpow` binary, one test binary: exit codes, input and output, injected faults, the
//! hostile-input campaign, the parsers on pseudo-random input, and `curlpow attach`. Each module
//! is one former test file; `cargo test --test cli cli_hostile::` runs one of them.

#[path = "../attach_check/mod.rs"]
mod attach_check;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../common/mod.rs"]
mod common;
// At the root, where `fuzz/checks.rs` (in `cli_parsers_random`) finds it, as in the fuzz crate.
#[path = "../../src/bin/curlpow/line_reader.rs"]
#[allow(dead_code)]
mod line_reader;

mod attach_cli;
mod cli;
mod cli_block;
mod cli_bounds;
mod cli_faults;
mod cli_hostile;
mod cli_input;
mod cli_output;
mod cli_parsers_random;
