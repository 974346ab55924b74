//! What every exported function does at the C boundary: catch panics, read C strings without
//! running past them, hand results back in memory from the C allocator, and keep the last error
//! message of the calling thread.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use curlpow::{Error, Transaction, TRANSACTION_TRYTES};

/// The status codes of the native API (`curlpow_status` in `include/curlpow.h`); the values
/// are part of the ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok = 0,
    NullPointer = 1,
    Trytes = 2,
    Mwm = 3,
    NotInitialized = 4,
    Cancelled = 5,
    Timeout = 6,
    NoDevice = 7,
    Device = 8,
    InvalidArgument = 9,
    Init = 10,
    Internal = 11,
}

impl Status {
    /// Every status, in value order.
    pub(crate) const ALL: [Status; 12] = [
        Status::Ok,
        Status::NullPointer,
        Status::Trytes,
        Status::Mwm,
        Status::NotInitialized,
        Status::Cancelled,
        Status::Timeout,
        Status::NoDevice,
        Status::Device,
        Status::InvalidArgument,
        Status::Init,
        Status::Internal,
    ];

    /// The code as C sees it.
    pub(crate) fn code(self) -> c_int {
        self as c_int
    }

    /// A fixed description, NUL-terminated for `curlpow_strerror`.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Status::Ok => "success\0",
            Status::NullPointer => "a required pointer argument is NULL\0",
            Status::Trytes => "the input is not 2673 trytes (9 or A-Z)\0",
            Status::Mwm => "the minimum weight magnitude is out of range (0..=243)\0",
            Status::NotInitialized => {
                "the library is not initialised (call the init function first)\0"
            }
            Status::Cancelled => "the search was cancelled\0",
            Status::Timeout => "the search ran past its timeout\0",
            Status::NoDevice => "no device matches the selection\0",
            Status::Device => "a device failed and no other allowed device was left\0",
            Status::InvalidArgument => "an argument or option is invalid\0",
            Status::Init => "the engine could not be built (thread pool or configuration)\0",
            Status::Internal => "internal error (a bug: please report it)\0",
        }
    }
}

/// Why a call failed: the status for the native API and a message naming what is wrong.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: Status,
    pub(crate) message: String,
    /// Nonces tried before a search stopped without a result (cancel, timeout).
    pub(crate) nonces: u64,
}

impl Failure {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
            nonces: 0,
        }
    }

    pub(crate) fn null(what: &str) -> Self {
        Failure::new(Status::NullPointer, format!("{what} is NULL"))
    }

    pub(crate) fn not_initialized(init: &str) -> Self {
        Failure::new(
            Status::NotInitialized,
            format!("not initialised: call {init} first (or again after destroy)"),
        )
    }

    /// An engine that could not be built.
    pub(crate) fn init(e: Error) -> Self {
        Failure::new(Status::Init, format!("engine: {e}"))
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let status = match &e {
            Error::Tryte(_) | Error::TritLength { .. } | Error::NotATrit { .. } => Status::Trytes,
            Error::InvalidMwm(_) => Status::Mwm,
            Error::Cancelled { .. } => Status::Cancelled,
            Error::Timeout { .. } => Status::Timeout,
            Error::NoDevice(_) => Status::NoDevice,
            Error::Internal(_) => Status::Internal,
            Error::InvalidNonce { .. }
            | Error::Backend { .. }
            | Error::UnsupportedKernel { .. } => Status::Device,
            Error::Pool(_) | Error::Config(_) => Status::Init,
            _ => Status::Internal,
        };
        let nonces = match &e {
            Error::Cancelled { nonces } | Error::Timeout { nonces, .. } => *nonces,
            _ => 0,
        };
        Failure {
            status,
            message: e.to_string(),
            nonces,
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: a call made while the thread's locals are being torn down keeps no message
    // rather than panicking.
    let _ = LAST_ERROR.try_with(|l| *l.borrow_mut() = c);
}

/// The calling thread's last error message ("" if none); valid until this thread's next call
/// into the library.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|l| l.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    format!("internal error (a bug: please report it): {what}")
}

/// Run `f` so that nothing unwinds into C: its failure (or panic) becomes the thread's last
/// error message and `on_failure` is returned.
pub(crate) fn guard<T>(on_failure: T, f: impl FnOnce() -> Result<T, Failure>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(fail)) => {
            set_last_error(&fail.message);
            on_failure
        }
        Err(panic) => {
            set_last_error(&panic_message(&*panic));
            on_failure
        }
    }
}

/// [`guard`] for the native API: the status code of `f`'s outcome.
pub(crate) fn guard_status(f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    guard(Status::Internal.code(), || match f() {
        Ok(()) => Ok(Status::Ok.code()),
        Err(fail) => {
            set_last_error(&fail.message);
            Ok(fail.status.code())
        }
    })
}

/// The bytes of a C string, at most `max` of them: the scan stops at the first NUL or after
/// `max` bytes, so a buffer of exactly `max` bytes without a terminator (dcurl's input) is
/// never read past.
///
/// # Safety
/// `p` is non-null and every byte up to its first NUL, or its first `max` bytes, are readable.
pub(crate) unsafe fn bounded_bytes<'a>(p: *const c_char, max: usize) -> &'a [u8] {
    // SAFETY: the caller guarantees the bytes up to the NUL or `max` are readable; strnlen
    // reads no further.
    let n = unsafe { libc::strnlen(p, max) };
    // SAFETY: those `n` bytes were just found readable and are not written during the call.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }
}

/// How the input's end is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputEnd {
    /// The first 2673 bytes are the transaction; what follows is not read (dcurl, ccurl).
    First2673,
    /// A NUL-terminated string of exactly 2673 trytes (the native API).
    Nul,
}

/// Read a transaction of 2673 ASCII trytes from C.
///
/// # Safety
/// `p` is NULL, or readable up to its first NUL or for 2673 bytes (2674 with [`InputEnd::Nul`]).
pub(crate) unsafe fn read_transaction(
    p: *const c_char,
    end: InputEnd,
) -> Result<Transaction, Failure> {
    if p.is_null() {
        return Err(Failure::null("trytes"));
    }
    let max = TRANSACTION_TRYTES + usize::from(end == InputEnd::Nul);
    // SAFETY: the caller's contract above.
    let bytes = unsafe { bounded_bytes(p, max) };
    parse_transaction(bytes)
}

/// Check and parse 2673 tryte bytes, naming the first thing wrong.
pub(crate) fn parse_transaction(bytes: &[u8]) -> Result<Transaction, Failure> {
    if bytes.len() < TRANSACTION_TRYTES {
        return Err(Failure::new(
            Status::Trytes,
            format!(
                "the input ends (NUL) after {} trytes, expected {TRANSACTION_TRYTES}",
                bytes.len()
            ),
        ));
    }
    if bytes.len() > TRANSACTION_TRYTES {
        return Err(Failure::new(
            Status::Trytes,
            format!("the input is longer than {TRANSACTION_TRYTES} trytes (no NUL after them)"),
        ));
    }
    if let Some(i) = bytes
        .iter()
        .position(|&b| !(b == b'9' || b.is_ascii_uppercase()))
    {
        let b = bytes[i];
        let shown = if b.is_ascii_graphic() {
            format!("{:?}", b as char)
        } else {
            format!("byte 0x{b:02x}")
        };
        return Err(Failure::new(
            Status::Trytes,
            format!(
                "column {}: {shown} is not a tryte (expected 9 or A-Z)",
                i + 1
            ),
        ));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|e| Failure::new(Status::Trytes, e.to_string()))?;
    Ok(Transaction::from_trytes(text)?)
}

/// A minimum weight magnitude from C: 0..=243, checked once here.
pub(crate) fn check_mwm(mwm: c_int) -> Result<curlpow::Mwm, Failure> {
    usize::try_from(mwm)
        .ok()
        .and_then(|m| curlpow::Mwm::try_from(m).ok())
        .ok_or_else(|| {
            Failure::new(
                Status::Mwm,
                format!("minimum weight magnitude {mwm} is out of range (0..=243)"),
            )
        })
}

/// `s` with a trailing NUL in a buffer from `malloc`, which the caller releases with `free`.
pub(crate) fn malloc_string(s: &str) -> Result<*mut c_char, Failure> {
    // SAFETY: malloc has no preconditions; the result is checked for NULL below.
    let p = unsafe { libc::malloc(s.len() + 1) }.cast::<u8>();
    if p.is_null() {
        return Err(Failure::new(
            Status::Internal,
            format!("out of memory ({} bytes)", s.len() + 1),
        ));
    }
    // SAFETY: `p` holds s.len() + 1 bytes and does not overlap `s`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        *p.add(s.len()) = 0;
    }
    Ok(p.cast::<c_char>())
}

/// Copy `s` into a fixed C buffer, truncated at a character boundary so that it always ends in
/// a NUL.
pub(crate) fn copy_to_buffer(s: &str, out: &mut [c_char]) {
    let Some(room) = out.len().checked_sub(1) else {
        return;
    };
    let mut n = s.len().min(room);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    for (o, &b) in out.iter_mut().zip(&s.as_bytes()[..n]) {
        *o = b as c_char;
    }
    out[n] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_fallback_and_a_message() {
        let v = guard(7, || -> Result<i32, Failure> { panic!("boom") });
        assert_eq!(v, 7);
        // SAFETY: last_error returns a NUL-terminated string owned by this thread.
        let msg = unsafe { std::ffi::CStr::from_ptr(last_error()) };
        assert!(msg.to_str().unwrap().contains("boom"), "{msg:?}");
    }

    #[test]
    fn input_errors_name_what_is_wrong() {
        let e = parse_transaction(b"ABC").unwrap_err();
        assert_eq!(e.status, Status::Trytes);
        assert!(e.message.contains("after 3 trytes"), "{}", e.message);
        let mut t = vec![b'9'; TRANSACTION_TRYTES];
        t[9] = b'a';
        let e = parse_transaction(&t).unwrap_err();
        assert!(
            e.message.contains("column 10") && e.message.contains("'a'"),
            "{}",
            e.message
        );
        t[9] = 0xC3;
        let e = parse_transaction(&t).unwrap_err();
        assert!(e.message.contains("0xc3"), "{}", e.message);
        t[9] = b'Z';
        assert!(parse_transaction(&t).is_ok());
    }

    #[test]
    fn mwm_range() {
        assert_eq!(check_mwm(0).unwrap().get(), 0);
        assert_eq!(check_mwm(243).unwrap(), curlpow::Mwm::MAX);
        assert_eq!(check_mwm(244).unwrap_err().status, Status::Mwm);
        assert_eq!(check_mwm(-1).unwrap_err().status, Status::Mwm);
    }

    #[test]
    fn buffers_always_end_in_nul() {
        let mut b = [1 as c_char; 4];
        copy_to_buffer("héllo", &mut b);
        // 'h' then a 2-byte 'é' fits in 3 bytes of room.
        assert_eq!(b, [b'h' as c_char, 0xC3u8 as c_char, 0xA9u8 as c_char, 0]);
        let mut b = [1 as c_char; 3];
        copy_to_buffer("héllo", &mut b);
        assert_eq!(b[..2], [b'h' as c_char, 0]);
    }

    #[test]
    fn status_values_are_dense_and_described() {
        for (i, s) in Status::ALL.iter().enumerate() {
            assert_eq!(s.code(), i as c_int);
            assert!(s.text().ends_with('\0'));
        }
    }
}
