//! `curlpow`: Curl-P-81 proof-of-work from the command line.
//!
//! Each subcommand lives in `commands/`; the options every device-using command shares and the
//! engine they build are in `engine_args.rs`; option values in `values.rs`; input reading in
//! `input.rs` and `line_reader.rs`; standard output in `output.rs`; exit codes in `exit.rs`.

mod commands;
mod engine_args;
mod exit;
mod expected_time;
mod headless;
mod input;
mod line_reader;
mod output;
mod progress;
mod values;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// IOTA Curl-P-81 proof-of-work on CPU SIMD, OpenCL and wgpu devices.
#[derive(Parser)]
#[command(name = "curlpow", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Find nonces: one 2673-tryte transaction per line in, the same with the nonce set out.
    Pow(commands::pow::PowArgs),
    /// Curl-P-81 hash of each line (a multiple of 81 trytes), 81 trytes per line out.
    Hash(input::InputArg),
    /// Print each transaction's trailing zero trits; exit 1 if any is below --mwm.
    Verify(commands::hash::VerifyArgs),
    /// Nonces tried per second on one device, with an unreachable target.
    Bench(commands::bench::BenchArgs),
    /// List every device of every compiled backend.
    Devices(commands::devices::DevicesArgs),
    /// The GPU kernel variants (`--list`), their build options and the devices they are the
    /// default for.
    Tune(commands::tune::TuneArgs),
    /// IRI's attachToTangle offline: chain a bundle (one transaction a line) to two tips.
    Attach(commands::attach::AttachArgs),
    /// Serve IRI's attachToTangle API over HTTP (remote PoW for wallets and nodes).
    Serve(commands::serve::ServeArgs),
    /// Do PoW for a RabbitMQ queue in dcurl's remote protocol (scale-out behind `serve --broker`).
    Worker(commands::worker::WorkerArgs),
}

fn main() -> ExitCode {
    headless::quiet_headless_vulkan();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Pow(a) => commands::pow::run(a),
        Cmd::Hash(a) => commands::hash::run_hash(a),
        Cmd::Verify(a) => commands::hash::run_verify(a),
        Cmd::Bench(a) => commands::bench::run(a),
        Cmd::Devices(a) => commands::devices::run(a),
        Cmd::Tune(a) => commands::tune::run(a),
        Cmd::Attach(a) => commands::attach::run(a),
        Cmd::Serve(a) => commands::serve::run(a),
        Cmd::Worker(a) => commands::worker::run(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if !exit::is_quiet(&e) {
                output::errln!("curlpow: {e:#}");
            }
            exit::code_of(&e)
        }
    }
}
