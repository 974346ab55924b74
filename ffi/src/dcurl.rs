//! dcurl v0.6's C API (`include/dcurl.h`): `dcurl_init`, `dcurl_entry`, `dcurl_destroy`.
//!
//! Differences from dcurl (see `docs/c-api.md`): the result of [`dcurl_entry`] is followed by a
//! NUL (dcurl's is not; cgo's `C.GoString` and ctypes' `c_char_p` need one), the input and MWM
//! are checked (dcurl searches forever at MWM 244), [`dcurl_destroy`] cancels the searches in
//! flight and waits for them, and `broker_host` (dcurl's remote PoW over RabbitMQ) is ignored:
//! the search runs in this process.

use std::ffi::{c_char, c_int};
use std::ptr;

use curlpow::PowOptions;

use crate::boundary::{check_mwm, guard, malloc_string, read_transaction, InputEnd};
use crate::state::{self, Api, Config};

/// dcurl's configuration (`dcurl_config` in `include/dcurl.h`).
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types)]
pub struct dcurl_config {
    /// dcurl's RabbitMQ broker for remote PoW. Not read: curlpow searches in this process.
    pub broker_host: *mut c_char,
}

/// Build the process's engine (thread pool, devices). `config` may be NULL (defaults); its
/// `broker_host` is ignored. True when at least one device works (the CPU always does, unless
/// the thread pool cannot be built). A second call is harmless; a call after
/// [`dcurl_destroy`] builds a new engine.
#[no_mangle]
pub extern "C" fn dcurl_init(config: *mut dcurl_config) -> bool {
    let _ = config;
    guard(false, || {
        state::init(Config::default())?;
        Ok(true)
    })
}

/// Cancel the searches in flight (their [`dcurl_entry`] returns NULL), wait for them to return,
/// and release the engine. Harmless without an engine.
#[no_mangle]
pub extern "C" fn dcurl_destroy() {
    guard((), || {
        state::destroy();
        Ok(())
    })
}

/// Proof of work on one transaction: reads the first 2673 bytes of `trytes` (ASCII trytes,
/// `9A-Z`; a NUL before them is an error, nothing after them is read) and returns a buffer
/// from `malloc` holding the 2673 trytes with the nonce set and a trailing NUL; the caller
/// `free`s it. `threads` caps the CPU threads of this call (0 or negative: the whole pool, as
/// dcurl's default; more than the pool: the whole pool). NULL on any failure: not
/// initialised, NULL or bad input, `mwm` outside 0..=243, cancelled by [`dcurl_destroy`]; the
/// reason is in
/// `curlpow_last_error()`. Safe to call from many threads at once: each call waits for a free
/// device.
///
/// # Safety
/// `trytes` is NULL, or readable for 2673 bytes or up to a NUL before them.
#[no_mangle]
pub unsafe extern "C" fn dcurl_entry(trytes: *mut i8, mwm: c_int, threads: c_int) -> *mut i8 {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller's contract above.
        let tx = unsafe { read_transaction(trytes.cast_const().cast(), InputEnd::First2673) }?;
        let mwm = check_mwm(mwm)?;
        // dcurl: threads <= 0 is the default (every thread).
        let threads = usize::try_from(threads).unwrap_or(0);
        let call = state::begin(Api::Dcurl, None, "dcurl_init")?;
        let opts = PowOptions::mwm(mwm)
            .cancel(call.cancel_token())
            .cpu_threads(threads);
        let done = call.engine().pow_with(&tx, &opts)?;
        Ok(malloc_string(&done.transaction.to_trytes())?.cast::<i8>())
    })
}
