//! # curlpow
//!
//! IOTA Curl-P-81 proof-of-work (the "Pearl Diver" nonce search) on every compute device a host
//! has: a bit-sliced SIMD search on one persistent CPU thread pool, and GPU kernels (wgpu,
//! OpenCL) where compiled in.
//!
//! ```
//! use curlpow::{Engine, Transaction};
//!
//! let engine = Engine::new()?;                       // builds the pool once
//! let tx: Transaction = "9".repeat(2673).parse()?;   // 2673 trytes
//! let done = engine.pow(&tx, 9)?;                    // MWM 9
//! assert!(done.transaction.weight() >= 9);           // checked on the host already
//! println!("{} nonces on {}", done.report.nonces, done.report.device);
//! # Ok::<(), curlpow::Error>(())
//! ```
//!
//! Every nonce a device returns is re-checked on the host before it is returned: one transform
//! of the last block from the host's own mid-state, with the host's fast single-state
//! transform (tested against the scalar reference [`transform`] and the public vectors).
//! [`hash_many`] hashes many transactions at once, bit-sliced on the CPU kernels. The
//! lower-level pieces ([`search`], [`control`], [`device`]) are public for backends and tests.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod control;
pub mod cpu;
mod curl;
pub mod device;
mod engine;
mod error;
mod hash_batch;
mod host_threads;
#[doc(hidden)]
pub mod lazy_deque;
#[cfg(feature = "opencl")]
pub mod opencl;
mod registry;
pub mod search;
mod transaction;
mod trinary;
#[cfg(feature = "wgpu")]
pub mod webgpu;

pub use control::CancelToken;
pub use cpu::CpuKernel;
#[doc(hidden)]
pub use curl::{fast_transform, fast_transform_repeat, PlanesKernel};
pub use curl::{hash, transform, Curl, HASH_LEN, ROUNDS, STATE_LEN};
pub use device::{Backend, DeviceInfo, DeviceKind};
pub use engine::{
    bench_transaction, BenchResult, Engine, EngineBuilder, PowOptions, PowReport, PowResult,
    MAINNET_MWM,
};
pub use error::{Error, TryteError};
pub use hash_batch::{hash_many, hash_many_trits, verify_many};
pub use registry::{DeviceReport, DeviceStats, Selection};
pub use transaction::{Field, Transaction, TRANSACTION_TRITS, TRANSACTION_TRYTES};
pub use trinary::{trailing_zeros, trits_to_trytes, trytes_to_trits, Trit, TRYTE_ALPHABET};

/// Low-level trinary helpers.
pub mod trits {
    pub use crate::trinary::{
        read_balanced, tryte_char, tryte_value, tryte_value_to_trits, write_balanced,
    };
}
