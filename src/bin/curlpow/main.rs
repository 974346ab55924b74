//! `curlpow`: Curl-P-81 proof-of-work from the command line.
//!
//! Each subcommand lives in `commands/`; the options every device-using command shares and the
//! engine they build are in `engine_args.rs`; option values in `values.rs`; input reading in
//! `input.rs` and the library's `curlpow::internal::line_reader`; standard output in `output.rs`; exit codes in `exit.rs`.

mod commands;
mod doctor;
mod engine_args;
mod exit;
mod expected_time;
mod headless;
mod hex_message;
mod input;
mod log_lines;
mod output;
mod progress;
mod recheck;
mod sd_notify;
mod values;

use std::process::ExitCode;

// At the crate root, where the commands name it (`crate::line_reader`).
use curlpow::internal::line_reader;

use clap::{CommandFactory, Parser, Subcommand};

/// IOTA Curl-P-81 proof-of-work on CPU SIMD, OpenCL and wgpu devices.
#[derive(Parser)]
#[command(name = "curlpow", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

// Parsed once at start and moved once: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Cmd {
    /// Find nonces: one 2673-tryte transaction per line in, the same with the nonce set out.
    Pow(commands::pow::PowArgs),
    /// Find block PoW nonces (Chrysalis/Stardust): one hex message a line in, its 8 nonce bytes
    /// included, the same with the nonce set out.
    BlockPow(commands::block_pow::BlockPowArgs),
    /// The block PoW score of each hex message (its 8 nonce bytes included), one a line.
    BlockScore(input::InputArg),
    /// Curl-P-81 hash of each line (a multiple of 81 trytes), 81 trytes per line out.
    Hash(input::InputArg),
    /// Print each transaction's trailing zero trits; exit 1 if any is below --mwm.
    // The usage line as --help prints it, also in errors (clap would print a given FILE there
    // as `<FILE>`, as if it were required).
    #[command(override_usage = "curlpow verify --mwm <MWM> [FILE]")]
    Verify(commands::verify::VerifyArgs),
    /// Nonces tried per second on one device, with an unreachable target.
    Bench(commands::bench::BenchArgs),
    /// List every device of every compiled backend (-v: with each one's details).
    Devices(commands::devices::DevicesArgs),
    /// Why a GPU is or is not used: device nodes, drivers, backends, the CPU kernel, each with
    /// its fix (exit 1: a GPU is here but cannot be used).
    Doctor(commands::doctor::DoctorArgs),
    /// Time each GPU device's kernel variants and keep the fastest for later runs (`--list`:
    /// the variants, their build options and the devices they are the default for).
    Tune(commands::tune::TuneArgs),
    /// IRI's attachToTangle offline: chain a bundle (one transaction a line) to two tips.
    #[command(
        override_usage = "curlpow attach [OPTIONS] --trunk <TRUNK> --branch <BRANCH> [FILE]"
    )]
    Attach(commands::attach::AttachArgs),
    /// Serve IRI's attachToTangle API over HTTP (remote PoW for wallets and nodes).
    Serve(commands::serve::ServeArgs),
    /// Do PoW for a RabbitMQ queue in dcurl's remote protocol (scale-out behind `serve --broker`).
    Worker(commands::worker::WorkerArgs),
    /// Write the man pages and shell completions into a folder (for packages).
    #[command(hide = true)]
    GenerateDocs(commands::generate_docs::GenerateDocsArgs),
}

fn main() -> ExitCode {
    headless::quiet_headless_vulkan();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Pow(a) => commands::pow::run(a),
        Cmd::BlockPow(a) => commands::block_pow::run(a),
        Cmd::BlockScore(a) => commands::block_score::run(a),
        Cmd::Hash(a) => commands::hash::run_hash(a),
        Cmd::Verify(a) => commands::verify::run_verify(a),
        Cmd::Bench(a) => commands::bench::run(a),
        Cmd::Devices(a) => commands::devices::run(a),
        Cmd::Doctor(a) => commands::doctor::run(a),
        Cmd::Tune(a) => commands::tune::run(a),
        Cmd::Attach(a) => commands::attach::run(a),
        Cmd::Serve(a) => commands::serve::run(a),
        Cmd::Worker(a) => commands::worker::run(a),
        Cmd::GenerateDocs(a) => commands::generate_docs::run(a, Cli::command()),
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
