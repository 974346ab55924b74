//! The `curlpow` binary, one test binary: exit codes, input and output, injected faults, the
//! hostile-input campaign, the parsers on pseudo-random input, `curlpow attach`, `doctor`, the
//! systemd units and the README's tables against the code. Each module is one part;
//! `cargo test --test cli cli_hostile::` runs one of them.

use curlpow_testkit::{attach_check, common};

mod attach_cli;
mod cli;
mod cli_block;
mod cli_bounds;
mod cli_faults;
mod cli_hash;
mod cli_hostile;
mod cli_input;
mod cli_local_state;
mod cli_output;
mod cli_parsers_random;
mod cli_secrets;
mod cli_support;
mod doctor;
mod readme;
mod units;
