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
//! transform (tested against the scalar reference [`transform`] and the public vectors).
//! [`hash_many`] hashes many transactions at once, bit-sliced on the CPU kernels.
//! [`block`] is the Chrysalis/Stardust PoW (binary messages and blocks, scored by
//! `3^zeros ÷ length`), searched on the same kernels and devices by [`Engine::block_pow`].
//!
//! The public surface: [`Engine`] and its [`EngineBuilder`], [`PowOptions`], the results
//! ([`PowResult`], [`PowReport`], [`BenchResult`], [`DeviceReport`]), [`Transaction`] and the
//! trinary helpers, the sponge ([`Curl`], [`hash`]), the typed [`Error`]. To plug in a device of
//! your own, implement [`device::Device`] (see `examples/custom_device.rs`) and add it with
//! [`EngineBuilder::add_device`]. Everything under [`internal`] exists for the crate's own
//! tests and benchmarks and is not a stable API.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod attach;
#[doc(hidden)]
pub mod bitslice;
pub mod block;
#[cfg(feature = "broker")]
pub mod broker;
mod control;
pub mod cpu;
mod curl;
pub mod device;
mod engine;
mod error;
#[cfg(feature = "fault-injection")]
pub mod fault;
#[cfg(any(feature = "opencl", feature = "wgpu"))]
mod gpu;
mod hash_batch;
mod host_threads;
mod launch_stats;
mod layout;
#[doc(hidden)]
pub mod lazy_deque;
#[cfg(feature = "opencl")]
#[doc(hidden)]
pub mod opencl;
mod registry;
#[doc(hidden)]
pub mod search;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "broker"))]
pub mod signals;
mod transaction;
mod trinary;
#[cfg(feature = "wgpu")]
#[doc(hidden)]
pub mod wgpu;
#[doc(hidden)]
pub mod xorshift;

pub use attach::{Attached, Hash, MAX_TIMESTAMP};
pub use control::CancelToken;
pub use cpu::{max_threads, CpuKernel};
pub use curl::{hash, transform, Curl, HASH_LEN, ROUNDS, STATE_LEN};
pub use device::{Backend, DeviceInfo, DeviceKind};
pub use engine::{
    bench_transaction, tune_variants, BenchResult, BlockPowResult, Engine, EngineBuilder,
    LatencyReport, PowOptions, PowReport, PowResult, Spread, TuneReport, TuneTrial, TuneVariant,
    DEFAULT_TUNE_BUDGET, MAINNET_MWM,
};
pub use error::{Error, TryteError};
pub use hash_batch::{hash_many, hash_many_trits, verify_many};
pub use launch_stats::{LaunchStats, SearchTiming};
pub use registry::{DeviceReport, DeviceStats, Selection};
pub use search::check_mwm;
pub use transaction::{Field, Transaction, TRANSACTION_TRITS, TRANSACTION_TRYTES};
pub use trinary::{
    check_trits, trailing_zeros, trits_to_trytes, trytes_to_trits, Trit, TRYTE_ALPHABET,
};

/// Low-level trinary helpers.
pub mod trits {
    pub use crate::trinary::{
        is_trytes, read_balanced, tryte_char, tryte_value, tryte_value_to_trits, write_balanced,
    };
}

/// The crate's internals, public only for its own tests and benchmarks: **not a stable API**;
/// anything here may change in any release. (The modules are also reachable, hidden, at the
/// crate root; use them through this path.)
#[doc(hidden)]
pub mod internal {
    pub use crate::bitslice;
    pub use crate::control::{Counters, StopReason, Worker};
    pub use crate::curl::{fast_transform, fast_transform_repeat, PlanesKernel};
    #[cfg(any(feature = "opencl", feature = "wgpu"))]
    pub use crate::gpu::tune_cache;
    pub use crate::lazy_deque;
    #[cfg(feature = "opencl")]
    pub use crate::opencl;
    pub use crate::search;
    #[cfg(feature = "wgpu")]
    pub use crate::wgpu;
    pub use crate::xorshift;
}

// The README's Rust examples compile and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
