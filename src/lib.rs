//! # curlpow
//!
//! IOTA Curl-P-81 proof-of-work (the "Pearl Diver" nonce search) on every compute device a host
//! has: a bit-sliced SIMD search on one persistent CPU thread pool, and GPU kernels (wgpu,
//! OpenCL) where compiled in, behind a registry that gives each search a free device.
//!
//! ```
//! use curlpow::{Engine, PowOptions, Transaction};
//! use std::time::Duration;
//!
//! let engine = Engine::new()?;                       // pool built, devices found: once
//! let tx: Transaction = "9".repeat(2673).parse()?;   // 2673 trytes
//! let done = engine.pow(&tx, 9)?;                    // MWM 9, on the best free device
//! assert!(done.transaction.weight() >= 9);           // checked on the host already
//! println!("{} nonces on {}", done.report.nonces, done.report.device);
//!
//! // With a time limit; `pow_many` spreads a batch over every device.
//! let opts = PowOptions::mwm(9).timeout(Duration::from_secs(30));
//! let results = engine.pow_many(&[tx.clone(), tx], &opts);
//! assert!(results.iter().all(|r| r.is_ok()));
//! # Ok::<(), curlpow::Error>(())
//! ```
//!
//! Every nonce a device returns is re-checked on the host before it is returned: one transform
//! of the last block from the host's own mid-state, with the host's fast single-state
//! transform (tested against the scalar reference [`curl::transform`] and the public vectors).
//! [`hash_many`] hashes many transactions at once, bit-sliced on the CPU kernels.
//! [`block`] is the Chrysalis/Stardust PoW (binary messages and blocks, scored by
//! `3^zeros ÷ length`), searched on the same kernels and devices by [`Engine::block_pow`].
//!
//! The public surface: at the root, [`Engine`] and its [`EngineBuilder`], [`PowOptions`] and the
//! checked minimum weight [`Mwm`], the results ([`PowResult`], [`PowReport`],
//! [`DeviceReport`]), [`Transaction`], [`hash`] and the batch hashers, the typed [`Error`] (with
//! [`InternalError`] naming an internal failure). Each module holds one subject: [`attach`]
//! (IRI's `attachToTangle`), [`block`] (the block PoW), [`curl`] (the sponge), [`trits`]
//! (trinary helpers), [`bench`](mod@bench) and [`tune`] (measuring and tuning devices), [`device`] (what a
//! device of your own implements: [`device::Device`], see `examples/custom_device.rs`; add it
//! with [`EngineBuilder::add_device`]), and with their features `server`, `broker` and
//! `signals` (the HTTP server, the RabbitMQ worker, stop signals). The crate's own binary,
//! tests and benchmarks reach a few internals through a hidden module, which is not a stable
//! API.
#![warn(missing_docs)]
#![warn(unreachable_pub)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

// # Layout
//
// Six layers, bottom to top; a layer imports only the layers below it (checked by the test
// `layers` in tests/engine), and the top-level modules of a layer form no cycle:
//
// - `base`: errors, backend and device-kind names, small containers. Imports nothing.
// - `ternary`: trits and trytes, the transaction, the Curl-P-81 sponge.
// - `search`: the device contract (`Device`, jobs, hits, stop control, nonce layouts).
// - `backend`: the devices: `cpu`, `gpu` (the GPU launch driver), `opencl`, `wgpu`, `remote`
//   (RabbitMQ workers), `fault` (tests).
// - `engine`: `Engine` and its builder, the device registry, `attach`, batch hashing.
// - `service`: the HTTP server, the broker worker, signal handling.
//
// The binary (`src/bin/curlpow`) and the C libraries (`ffi/`) use only the public API below
// and, for what they need of the internals, `curlpow::internal`. ARCHITECTURE.md has the map
// and the walk of a PoW from the edge to a device and back.
mod backend;
mod base;
mod engine;
mod search;
mod service;
mod ternary;

#[cfg(feature = "fault-injection")]
#[doc(inline)]
pub use backend::fault;
#[doc(inline)]
pub use base::env;
#[doc(inline)]
pub use engine::attach;
#[doc(inline)]
pub use search::block;
#[doc(inline)]
pub use search::device;
#[cfg(feature = "broker")]
#[doc(inline)]
pub use service::broker;
#[cfg(feature = "server")]
#[doc(inline)]
pub use service::server;
#[cfg(any(feature = "server", feature = "broker"))]
#[doc(inline)]
pub use service::signals;

pub use backend::cpu::{max_threads, CpuKernel};
pub use base::error::{Error, InternalError, TryteError};
pub use base::kinds::{Backend, DeviceKind};
pub use engine::hash_batch::{hash_many, hash_many_trits, hash_many_trytes, verify_many};
pub use engine::registry::{DeviceReport, DeviceStats, Selection};
pub use engine::{
    BlockPowResult, BuiltFor, Engine, EngineBuilder, PowOptions, PowReport, PowResult,
};
pub use search::control::CancelToken;
pub use search::search_job::Mwm;
pub use ternary::curl::hash;
pub use ternary::transaction::{Field, Transaction, TRANSACTION_TRITS, TRANSACTION_TRYTES};
pub use ternary::trinary::Trit;

/// Timing a device: [`Engine::bench`] and [`bench::bench_transaction`], and what they report.
pub mod bench {
    pub use crate::engine::{bench_transaction, BenchResult, LatencyReport, Spread};
}

/// The Curl-P-81 sponge: [`Curl`](curl::Curl), the scalar reference permutation
/// [`transform`](curl::transform) and its sizes. [`hash`] hashes whole messages.
pub mod curl {
    pub use crate::ternary::curl::{transform, Curl, HASH_LEN, ROUNDS, STATE_LEN};
}

/// Trinary helpers: trits and trytes, balanced numbers, trailing zeros.
pub mod trits {
    pub use crate::ternary::trinary::{
        check_trits, is_trytes, read_balanced, trailing_zeros, trits_to_trytes, tryte_char,
        tryte_value, tryte_value_to_trits, trytes_to_trits, write_balanced, TRYTE_ALPHABET,
    };
}

/// Tuning GPU kernel variants: [`Engine::tune_device`] and what it reports.
pub mod tune {
    pub use crate::engine::{
        tune_variants, TuneReport, TuneTrial, TuneVariant, DEFAULT_TUNE_BUDGET,
    };
}

/// The crate's internals, public only for its own binary, tests and benchmarks: **not a stable
/// API**; anything here may change in any release. Each item is listed by name: what the binary,
/// `tests/`, `benches/`, `ffi/` and `testkit/` use, and nothing else.
#[doc(hidden)]
pub mod internal {
    pub use crate::backend::cpu::KernelHooks;
    pub use crate::search::control::{Counters, Worker};
    pub use crate::search::discovery::{DiscoverOptions, Discovery};
    pub use crate::ternary::curl::{fast_transform, PlanesKernel};

    /// The engine's CPU device (its pool size and kernel).
    pub fn engine_cpu(engine: &crate::Engine) -> &cpu::CpuDevice {
        engine.cpu()
    }

    /// Searches waiting for a free device right now.
    pub fn queued_searches(engine: &crate::Engine) -> usize {
        engine.queued_searches()
    }

    /// The CPU device on a pool of its own, and the pool's sizing.
    pub mod cpu {
        pub use crate::backend::cpu::{cpu_name, default_threads, CpuDevice, PoolConfig};
    }

    /// The OpenCL backend's discovery and device.
    #[cfg(feature = "opencl")]
    pub mod opencl {
        pub use crate::backend::opencl::{
            discover, discover_opencl, KernelConfig, OpenClDevice, OpenClDiscovery,
        };
    }

    /// The wgpu backend's discovery, device and tuning.
    #[cfg(feature = "wgpu")]
    pub mod wgpu {
        pub use crate::backend::wgpu::{
            discover, discover_wgpu, Tuning, WgpuDevice, WgpuDiscovery,
            LOOP_ITERATIONS_PER_TRANSFORM, SOFTWARE_LOOP_CAP,
        };
    }

    /// Where the GPU tuning cache is and whether it is read.
    #[cfg(any(feature = "opencl", feature = "wgpu"))]
    pub mod tune_cache {
        pub use crate::backend::gpu::tune_cache::{enabled, path};
    }

    /// The CLI's bounded line splitting.
    pub mod line_reader {
        pub use crate::base::line_reader::{text, Line, LineReader};
    }

    /// Deterministic pseudo-random trits, trytes and bytes for tests and benchmarks.
    pub mod xorshift {
        pub use crate::ternary::xorshift::{bytes, trits, trytes};
    }

    /// The nonce layout of a block PoW search.
    pub mod block_layout {
        pub use crate::search::block::block_job::{nonce_of, COUNTERS, COUNTER_TRITS, LANE_TRITS};
    }

    /// The nonce layout of a transaction search.
    pub mod search {
        pub use crate::search::nonce::{COUNTER_TRITS, LANE_TRITS, LAST_BLOCK};
    }
}

// The README's Rust examples compile and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
