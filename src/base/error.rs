//! The crate's typed errors.

use std::time::Duration;

/// What is wrong with a tryte string. Every column is 1-based and counted in characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TryteError {
    /// A character outside `9A-Z` (lowercase letters included). The message names it, with its
    /// code point when it is invisible, not printable or not ASCII (a NUL, a no-break space, a
    /// byte order mark, a vertical tab, …).
    #[error("column {column}: {} is not a tryte (expected 9 or A-Z{})", describe_char(*.found), char_hint(*.found))]
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
    /// Bytes that are not UTF-8 text (met where a line of trytes is read from bytes).
    #[error("column {column}: byte 0x{byte:02X} is not UTF-8 text (expected 9 or A-Z)")]
    NotUtf8 {
        /// 1-based column of the bad byte, counted in the characters before it.
        column: usize,
        /// The first byte that is not part of a UTF-8 character.
        byte: u8,
    },
}

/// A character as an error message names it: `'a'` when it is printable ASCII, `'é' (U+00E9)`
/// when printable elsewhere, and `U+FEFF (byte order mark)` when it is invisible or a control.
fn describe_char(c: char) -> String {
    let code = c as u32;
    if let Some(name) = invisible_name(c) {
        return format!("U+{code:04X} ({name})");
    }
    if c.is_ascii_graphic() {
        format!("'{c}'")
    } else {
        format!("'{c}' (U+{code:04X})")
    }
}

/// The name of a character that prints as nothing (or as something it is not).
fn invisible_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\0' => "NUL",
        '\t' => "tab",
        '\n' => "line feed",
        '\u{b}' => "vertical tab",
        '\u{c}' => "form feed",
        '\r' => "carriage return",
        ' ' => "space",
        '\u{7f}' => "delete",
        '\u{a0}' => "no-break space",
        '\u{ad}' => "soft hyphen",
        '\u{200b}' => "zero-width space",
        '\u{200c}' => "zero-width non-joiner",
        '\u{200d}' => "zero-width joiner",
        '\u{200e}' | '\u{200f}' => "direction mark",
        '\u{2028}' => "line separator",
        '\u{2029}' => "paragraph separator",
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => "direction control",
        '\u{2060}' => "word joiner",
        '\u{feff}' => "byte order mark",
        '\u{fffd}' => "replacement character: the text was not valid where it came from",
        c if c.is_control() => "control character",
        c if c.is_whitespace() => "space character",
        '\u{2061}'..='\u{2064}' | '\u{206a}'..='\u{206f}' | '\u{fff9}'..='\u{fffb}' => {
            "invisible format character"
        }
        '\u{e0000}'..='\u{e007f}' => "tag character",
        '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' => "variation selector",
        _ => return None,
    })
}

/// A hint after "expected 9 or A-Z" for the characters people most often send by mistake.
fn char_hint(c: char) -> &'static str {
    match c {
        'a'..='z' => "; lowercase letters are not trytes",
        '0'..='8' => "; 9 is the only digit in the tryte alphabet",
        ' ' | '\t' => "; no spaces or tabs, at a line's edges either",
        '\n' | '\r' => "; one line end may follow the trytes, no more",
        _ => "",
    }
}

/// Every error the library returns.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// No device can run this: none matches the selection, none that does runs this kind of
    /// search, or every one that did is marked unhealthy after a fault.
    #[error("no device matches: {0}")]
    NoDevice(String),
    /// A failure inside the engine, not of a device or of the input: the message says which.
    #[error("internal error: {0}")]
    Internal(#[from] InternalError),
    /// A GPU backend failed (driver error, lost device, compile failure).
    #[error("{backend} device {device}: {message}")]
    Backend {
        /// The backend.
        backend: crate::base::kinds::Backend,
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
    /// A bad message or target of the block PoW ([`crate::search::block`]).
    #[error(transparent)]
    Block(#[from] BlockError),
}

/// Which internal failure happened ([`Error::Internal`]). None of these is expected: each is a
/// broken promise between the engine's own parts, reported instead of a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InternalError {
    /// A device thread of a latency-mode search ended (it panicked) without reporting its run.
    #[error("the device thread of {device} ended without a report")]
    DeviceThreadLost {
        /// The device's id.
        device: String,
    },
    /// A runner thread of [`Engine::pow_many`](crate::Engine::pow_many) ended (it panicked)
    /// without reporting its transaction's result.
    #[error("a pow_many runner thread ended without a report")]
    RunnerLost,
    /// The blocking task that ran a search ended without its result (it panicked or was
    /// cancelled by the runtime's shutdown).
    #[error("the search task failed: {message}")]
    TaskFailed {
        /// What the runtime said.
        message: String,
    },
    /// A device's search returned with no nonce, no fault and no stop reason (no cancel, no
    /// deadline): the device broke the search contract.
    #[error("device {device} ended a search without a nonce, a fault or a stop reason")]
    SearchEndedEmpty {
        /// The device's id.
        device: String,
    },
}

/// What is wrong with a message or target of the block PoW.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// The message has no room for its 8-byte nonce.
    #[error("message of {len} bytes is shorter than its 8-byte nonce")]
    TooShort {
        /// The message's length in bytes.
        len: usize,
    },
    /// A target score that is not a finite number ≥ 0.
    #[error("target score {0} is not a finite number >= 0")]
    InvalidScore(f64),
    /// A target no hash reaches on a message this long (it needs more than 243 zero trits).
    #[error("target score {target} is out of reach for a {len}-byte message (it needs more than 243 trailing zero trits)")]
    Unreachable {
        /// The target score.
        target: f64,
        /// The message's length in bytes.
        len: usize,
    },
    /// Bad `b1t6` trits.
    #[error(transparent)]
    B1t6(#[from] B1t6Error),
}

/// What is wrong with trits given to [`b1t6::decode`](crate::search::block::b1t6::decode).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum B1t6Error {
    /// The length is not a whole number of six-trit groups.
    #[error("length {0} trits is not a multiple of 6")]
    Length(usize),
    /// A value that is not -1, 0 or 1.
    #[error("trit {index} is {value}, expected -1, 0 or 1")]
    NotATrit {
        /// Index of the bad value.
        index: usize,
        /// The bad value.
        value: i8,
    },
    /// A group whose value is outside a signed byte's range.
    #[error("trits {start}..{} encode {value}, outside a signed byte's -128..=127", start + 6)]
    OutOfRange {
        /// Index of the group's first trit.
        start: usize,
        /// The value the group encodes.
        value: i16,
    },
}
