//! curlpow's own C API (`include/curlpow.h`): status codes instead of NULL, a message per
//! failure, timeouts, cancel tokens, device selection by id, and per-device statistics.
//!
//! ```c
//! curlpow_init(0);
//! char out[CURLPOW_TRYTES_BUFFER];
//! curlpow_options opts = CURLPOW_OPTIONS_INIT;
//! opts.timeout_ms = 10000;
//! int s = curlpow_pow(trytes, 14, &opts, out);
//! if (s != CURLPOW_OK) fprintf(stderr, "%s: %s\n", curlpow_strerror(s), curlpow_last_error());
//! curlpow_destroy();
//! ```

use std::ffi::{c_char, c_int, c_uint};
use std::mem::size_of;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use curlpow::{curl::HASH_LEN, CancelToken, PowOptions, Selection, TRANSACTION_TRYTES};

use crate::boundary::{
    self, bounded_bytes, check_mwm, copy_to_buffer, guard, guard_status, read_transaction, Failure,
    InputEnd, Status,
};
use crate::state::{self, Api, Config};

/// Options of one [`curlpow_pow`] call (`curlpow_options`); start from `CURLPOW_OPTIONS_INIT`.
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types)]
pub struct curlpow_options {
    /// `sizeof(curlpow_options)`, so that later versions can add fields.
    pub size: usize,
    /// Give up after this many milliseconds, waiting for a device included (0: no limit).
    pub timeout_ms: u64,
    /// At most this many CPU threads if the search runs on the CPU (0: the whole pool).
    pub threads: c_uint,
    /// Comma-separated device ids the search may use (`"cpu"`, `"wgpu:0"`, ...); NULL or
    /// empty: any device.
    pub devices: *const c_char,
    /// A token that cancels this call from another thread; NULL: none.
    pub cancel: *const curlpow_cancel_token,
    /// Filled when the call returns, success or not; NULL: not wanted.
    pub report: *mut curlpow_report,
}

/// What one [`curlpow_pow`] call did (`curlpow_report`).
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types)]
pub struct curlpow_report {
    /// Nonces tried.
    pub nonces: u64,
    /// Wall time of the call in microseconds.
    pub elapsed_us: u64,
    /// The id of the device that found the nonce ("" if none did).
    pub device: [c_char; 64],
}

/// A device and its statistics in this process (`curlpow_device`).
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types)]
pub struct curlpow_device {
    /// Stable id, the one [`curlpow_options::devices`] takes: `"cpu"`, `"wgpu:0"`, ...
    pub id: [c_char; 64],
    /// The name its driver reports (truncated to fit).
    pub name: [c_char; 128],
    /// `"cpu"`, `"wgpu"` or `"opencl"`.
    pub backend: [c_char; 16],
    /// Searches run.
    pub searches: u64,
    /// Nonces tried.
    pub nonces: u64,
    /// Searches that found a nonce the host check accepted.
    pub hits: u64,
    /// Faults: driver errors and nonces the host check rejected.
    pub errors: u64,
    /// Seconds spent searching.
    pub busy_seconds: f64,
    /// 1, or 0 while the device sits out after a fault.
    pub healthy: c_int,
}

/// A cancel token (`curlpow_cancel_token`, opaque in C): cancelling it stops every call that
/// holds it, now and later.
#[allow(non_camel_case_types)]
pub struct curlpow_cancel_token {
    inner: Mutex<TokenState>,
}

struct TokenState {
    cancelled: bool,
    next_id: u64,
    /// The engine-side tokens of the calls holding this one now.
    calls: Vec<(u64, CancelToken)>,
}

impl curlpow_cancel_token {
    fn cancel(&self) {
        let mut t = self.inner.lock();
        t.cancelled = true;
        for (_, c) in &t.calls {
            c.cancel();
        }
    }

    /// Tie a call's token to this one until the returned guard drops.
    fn attach(self: &Arc<Self>, call: CancelToken) -> Attached {
        let mut t = self.inner.lock();
        if t.cancelled {
            call.cancel();
        }
        let id = t.next_id;
        t.next_id += 1;
        t.calls.push((id, call));
        Attached {
            token: self.clone(),
            id,
        }
    }
}

struct Attached {
    token: Arc<curlpow_cancel_token>,
    id: u64,
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.token
            .inner
            .lock()
            .calls
            .retain(|(id, _)| *id != self.id);
    }
}

/// The longest `devices` string read.
const MAX_DEVICES_LEN: usize = 4096;

/// The options as Rust sees them.
#[derive(Default)]
struct Options {
    timeout: Option<Duration>,
    threads: usize,
    devices: Option<Vec<String>>,
    cancel: Option<Arc<curlpow_cancel_token>>,
    report: Option<*mut curlpow_report>,
}

/// # Safety
/// `p` is NULL or points to a `curlpow_options` whose pointers are NULL or valid.
unsafe fn read_options(p: *const curlpow_options) -> Result<Options, Failure> {
    if p.is_null() {
        return Ok(Options::default());
    }
    // SAFETY: `p` points to at least the size field.
    let size = unsafe { ptr::addr_of!((*p).size).read_unaligned() };
    if size < size_of::<curlpow_options>() {
        return Err(Failure::new(
            Status::InvalidArgument,
            format!(
                "options.size is {size}, expected {} (initialise with CURLPOW_OPTIONS_INIT)",
                size_of::<curlpow_options>()
            ),
        ));
    }
    // SAFETY: the caller says the struct is all there; its size field agrees.
    let o = unsafe { &*p };
    let devices = if o.devices.is_null() {
        None
    } else {
        // SAFETY: a non-NULL `devices` is a NUL-terminated string (the caller's contract).
        let b = unsafe { bounded_bytes(o.devices, MAX_DEVICES_LEN + 1) };
        if b.len() > MAX_DEVICES_LEN {
            return Err(Failure::new(
                Status::InvalidArgument,
                format!("options.devices is longer than {MAX_DEVICES_LEN} bytes"),
            ));
        }
        let s = std::str::from_utf8(b).map_err(|e| {
            Failure::new(
                Status::InvalidArgument,
                format!("options.devices is not UTF-8: {e}"),
            )
        })?;
        let ids: Vec<String> = s
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(String::from)
            .collect();
        (!ids.is_empty()).then_some(ids)
    };
    let cancel = if o.cancel.is_null() {
        None
    } else {
        // SAFETY: a non-NULL `cancel` came from curlpow_cancel_token_new and is not freed
        // before this call returns (the caller's contract); the count taken here keeps it
        // alive for the call even if it is freed meanwhile.
        Some(unsafe {
            Arc::increment_strong_count(o.cancel);
            Arc::from_raw(o.cancel)
        })
    };
    Ok(Options {
        timeout: (o.timeout_ms > 0).then(|| Duration::from_millis(o.timeout_ms)),
        threads: o.threads as usize,
        devices,
        cancel,
        report: (!o.report.is_null()).then_some(o.report),
    })
}

/// Build the process's engine with a CPU pool of `threads` (0: `CURLPOW_THREADS`, else every
/// core), at most [`curlpow::max_threads`] (4 per logical CPU, at least 64): more is
/// `CURLPOW_ERR_INIT` at once, the message naming the bound. `CURLPOW_OK` also when it already
/// exists (the first call's settings stand until [`curlpow_destroy`]).
#[no_mangle]
pub extern "C" fn curlpow_init(threads: c_uint) -> c_int {
    guard_status(|| {
        state::init(Config {
            threads: (threads > 0).then_some(threads as usize),
        })
    })
}

/// Cancel the calls in flight (they return `CURLPOW_ERR_CANCELLED`), wait for them, release
/// the engine. Harmless without one.
#[no_mangle]
pub extern "C" fn curlpow_destroy() {
    guard((), || {
        state::destroy();
        Ok(())
    })
}

/// Proof of work: `trytes` is a NUL-terminated string of exactly 2673 trytes; on success `out`
/// (2674 bytes) holds them with the nonce set, NUL-terminated; on failure `out` holds "" and
/// the status says why (`curlpow_last_error()` says more). `opts` may be NULL (no limits).
///
/// # Safety
/// `trytes` is NULL or a NUL-terminated string (only its first 2674 bytes are read); `out` is
/// NULL or writable for 2674 bytes; `opts` is NULL or a valid `curlpow_options`.
#[no_mangle]
pub unsafe extern "C" fn curlpow_pow(
    trytes: *const c_char,
    mwm: c_int,
    opts: *const curlpow_options,
    out: *mut c_char,
) -> c_int {
    guard_status(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: `out` is writable for 2674 bytes (the caller's contract).
        unsafe { *out = 0 };
        // SAFETY: the caller's contract above.
        let opts = unsafe { read_options(opts) }?;
        let started = Instant::now();
        let result = (|| -> Result<curlpow::PowResult, Failure> {
            // SAFETY: the caller's contract above.
            let tx = unsafe { read_transaction(trytes, InputEnd::Nul) }?;
            let mwm = check_mwm(mwm)?;
            let call = state::begin(Api::Native, None, "curlpow_init")?;
            let _attached = opts.cancel.as_ref().map(|t| t.attach(call.cancel_token()));
            let mut po = PowOptions::new(mwm)
                .cancel(call.cancel_token())
                .cpu_threads(opts.threads);
            if let Some(t) = opts.timeout {
                po = po.timeout(t);
            }
            if let Some(ids) = &opts.devices {
                let sel = Selection {
                    devices: ids.clone(),
                    ..Selection::default()
                };
                call.engine().check_selection(&sel)?;
                po = po.selection(sel);
            }
            Ok(call.engine().pow_with(&tx, &po)?)
        })();
        if let Some(r) = opts.report {
            // SAFETY: a non-NULL report is writable (the caller's contract).
            let r = unsafe { &mut *r };
            r.elapsed_us = started.elapsed().as_micros().try_into().unwrap_or(u64::MAX);
            match &result {
                Ok(done) => {
                    r.nonces = done.report.nonces;
                    copy_to_buffer(&done.report.device, &mut r.device);
                }
                Err(f) => {
                    r.nonces = f.nonces;
                    copy_to_buffer("", &mut r.device);
                }
            }
        }
        let trytes = result?.transaction.to_trytes();
        debug_assert_eq!(trytes.len(), TRANSACTION_TRYTES);
        // SAFETY: `out` is writable for 2674 bytes; `trytes` is 2673 bytes and does not overlap.
        unsafe {
            ptr::copy_nonoverlapping(trytes.as_ptr(), out.cast::<u8>(), TRANSACTION_TRYTES);
            *out.add(TRANSACTION_TRYTES) = 0;
        }
        Ok(())
    })
}

/// The Curl-P-81 hash of a transaction (scalar reference): `trytes` as for [`curlpow_pow`];
/// `out` (82 bytes) receives 81 trytes and a NUL ("" on failure). Needs no engine.
///
/// # Safety
/// `trytes` is NULL or a NUL-terminated string; `out` is NULL or writable for 82 bytes.
#[no_mangle]
pub unsafe extern "C" fn curlpow_digest(trytes: *const c_char, out: *mut c_char) -> c_int {
    guard_status(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: `out` is writable for 82 bytes.
        unsafe { *out = 0 };
        // SAFETY: the caller's contract above.
        let tx = unsafe { read_transaction(trytes, InputEnd::Nul) }?;
        let hash = tx.hash_trytes();
        let n = HASH_LEN / 3;
        // SAFETY: `out` is writable for 82 bytes; the hash is 81.
        unsafe {
            ptr::copy_nonoverlapping(hash.as_ptr(), out.cast::<u8>(), n);
            *out.add(n) = 0;
        }
        Ok(())
    })
}

/// A new cancel token; free it with [`curlpow_cancel_token_free`]. NULL only if out of memory.
#[no_mangle]
pub extern "C" fn curlpow_cancel_token_new() -> *mut curlpow_cancel_token {
    guard(ptr::null_mut(), || {
        let t = Arc::new(curlpow_cancel_token {
            inner: Mutex::new(TokenState {
                cancelled: false,
                next_id: 0,
                calls: Vec::new(),
            }),
        });
        Ok(Arc::into_raw(t).cast_mut())
    })
}

/// Cancel every call holding `token`, now and later (a token does not reset: make a new one).
/// NULL is ignored.
///
/// # Safety
/// `token` is NULL or from [`curlpow_cancel_token_new`] and not freed.
#[no_mangle]
pub unsafe extern "C" fn curlpow_cancel_token_cancel(token: *mut curlpow_cancel_token) {
    guard((), || {
        // SAFETY: the caller's contract above.
        if let Some(t) = unsafe { token.as_ref() } {
            t.cancel();
        }
        Ok(())
    })
}

/// Release a token. Calls still holding it keep it alive until they return. NULL is ignored.
///
/// # Safety
/// `token` is NULL or from [`curlpow_cancel_token_new`], freed once.
#[no_mangle]
pub unsafe extern "C" fn curlpow_cancel_token_free(token: *mut curlpow_cancel_token) {
    guard((), || {
        if !token.is_null() {
            // SAFETY: from Arc::into_raw in curlpow_cancel_token_new, released once.
            drop(unsafe { Arc::from_raw(token.cast_const()) });
        }
        Ok(())
    })
}

/// Devices of the engine (0 when not initialised).
#[no_mangle]
pub extern "C" fn curlpow_device_count() -> usize {
    guard(0, || Ok(state::engine().map_or(0, |e| e.devices().len())))
}

/// Device `index` (0 ..< [`curlpow_device_count`]) with its statistics for this process.
///
/// # Safety
/// `out` is NULL or writable for one `curlpow_device`.
#[no_mangle]
pub unsafe extern "C" fn curlpow_device_get(index: usize, out: *mut curlpow_device) -> c_int {
    guard_status(|| {
        // SAFETY: the caller's contract above.
        let out = unsafe { out.as_mut() }.ok_or_else(|| Failure::null("out"))?;
        let engine = state::engine().ok_or_else(|| Failure::not_initialized("curlpow_init"))?;
        let reports = engine.device_report();
        let d = reports.get(index).ok_or_else(|| {
            Failure::new(
                Status::InvalidArgument,
                format!("no device {index}: the engine has {}", reports.len()),
            )
        })?;
        copy_to_buffer(&d.info.id, &mut out.id);
        copy_to_buffer(&d.info.name, &mut out.name);
        copy_to_buffer(d.info.backend.name(), &mut out.backend);
        out.searches = d.stats.searches;
        out.nonces = d.stats.nonces;
        out.hits = d.stats.hits;
        out.errors = d.stats.errors;
        out.busy_seconds = d.stats.busy_seconds;
        out.healthy = c_int::from(d.stats.healthy);
        Ok(())
    })
}

/// A fixed description of a status code (never NULL).
#[no_mangle]
pub extern "C" fn curlpow_strerror(status: c_int) -> *const c_char {
    let text = usize::try_from(status)
        .ok()
        .and_then(|i| Status::ALL.get(i))
        .map_or("unknown status code\0", |s| s.text());
    text.as_ptr().cast()
}

/// The message of the calling thread's last failure through any of the library's APIs ("" if
/// none); valid until that thread's next call into the library.
#[no_mangle]
pub extern "C" fn curlpow_last_error() -> *const c_char {
    boundary::last_error()
}

/// The library's version, e.g. `"0.1.0"`.
#[no_mangle]
pub extern "C" fn curlpow_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Whether the engine exists (1) or not (0).
#[no_mangle]
pub extern "C" fn curlpow_initialized() -> c_int {
    guard(0, || Ok(c_int::from(state::initialized())))
}

/// The layouts `include/curlpow.h` declares (LP64); `tests/c/native_test.c` asserts the same
/// numbers on the C side.
#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<curlpow_options>(), 48);
        assert_eq!(offset_of!(curlpow_options, devices), 24);
        assert_eq!(offset_of!(curlpow_options, report), 40);
        assert_eq!(size_of::<curlpow_report>(), 80);
        assert_eq!(size_of::<curlpow_device>(), 256);
        assert_eq!(offset_of!(curlpow_device, searches), 208);
        assert_eq!(offset_of!(curlpow_device, healthy), 248);
    }
}
