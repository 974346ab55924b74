//! The crate's typed errors.

use std::time::Duration;

/// What is wrong with a tryte string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TryteError {
    /// A character outside `9A-Z` (lowercase letters included).
    #[error("column {column}: {found:?} is not a tryte (expected 9 or A-Z)")]
    BadChar {
        /// 1-based column, counted in characters.
        column: usize,
        /// The offending character.
        found: char,
    },
    /// The string has the wrong number of trytes.
    #[error("length {found} trytes, expected {expected}")]
    Length {
        /// Trytes found.
        found: usize,
        /// What was expected, in words (e.g. "2673" or "a multiple of 81").
        expected: &'static str,
    },
}

/// Every error the library returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad tryte input.
    #[error(transparent)]
    Tryte(#[from] TryteError),
    /// A trit slice of the wrong length.
    #[error("length {found} trits, expected {expected}")]
    TritLength {
        /// Trits found.
        found: usize,
        /// What was expected, in words.
        expected: &'static str,
    },
    /// A value that is not -1, 0 or 1 where a trit was expected.
    #[error("trit {index} is {value}, expected -1, 0 or 1")]
    NotATrit {
        /// Index of the bad value.
        index: usize,
        /// The bad value.
        value: i8,
    },
    /// Minimum weight magnitude outside 0..=243.
    #[error("minimum weight magnitude {0} is out of range (0..=243)")]
    InvalidMwm(usize),
    /// The search was cancelled by its [`CancelToken`](crate::CancelToken).
    #[error("search cancelled after {nonces} nonces")]
    Cancelled {
        /// Nonces tried before it stopped.
        nonces: u64,
    },
    /// The search ran past its deadline.
    #[error("search timed out after {elapsed:?} ({nonces} nonces tried)")]
    Timeout {
        /// Time spent.
        elapsed: Duration,
        /// Nonces tried before it stopped.
        nonces: u64,
    },
    /// A device returned a nonce that the host check rejected.
    #[error("device {device} returned an invalid nonce (host check failed)")]
    InvalidNonce {
        /// The device's id.
        device: String,
    },
    /// The requested CPU kernel cannot run on this CPU or is unknown.
    #[error("CPU kernel {kernel:?} is not available: {reason}")]
    UnsupportedKernel {
        /// The kernel's name.
        kernel: String,
        /// Why it cannot run.
        reason: String,
    },
    /// No device matches the selection.
    #[error("no device matches: {0}")]
    NoDevice(String),
    /// A GPU backend failed (driver error, lost device, compile failure).
    #[error("{backend} device {device}: {message}")]
    Backend {
        /// `"opencl"` or `"wgpu"`.
        backend: &'static str,
        /// The device's id.
        device: String,
        /// What the driver said.
        message: String,
    },
    /// The thread pool could not be built.
    #[error("thread pool: {0}")]
    Pool(String),
    /// An invalid configuration value (e.g. an environment variable).
    #[error("configuration: {0}")]
    Config(String),
}

impl Error {
    /// True for the errors that end a search without a result on purpose
    /// (cancel or deadline), as opposed to faults.
    pub fn is_stop(&self) -> bool {
        matches!(self, Error::Cancelled { .. } | Error::Timeout { .. })
    }
}
