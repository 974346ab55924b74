//! ccurl's C API (`include/ccurl.h`): `ccurl_pow_init`, `ccurl_pow`, `ccurl_pow_interrupt`,
//! `ccurl_pow_finalize`, `ccurl_pow_set_loop_count`, `ccurl_pow_set_offset`,
//! `ccurl_digest_transaction`.
//!
//! Differences from ccurl (see `docs/c-api.md`): [`ccurl_pow`] builds the engine on first use
//! when [`ccurl_pow_init`] was never called (PyOTA's `pyota[pow]` never calls it), checks its
//! input and MWM, and never returns an unchecked nonce; [`ccurl_pow_interrupt`] really cancels
//! the searches in flight; the loop count and offset (ccurl's OpenCL tuning) are accepted and
//! have no effect.

use std::ffi::{c_char, c_int};
use std::ptr;

use curlpow::PowOptions;

use crate::boundary::{check_mwm, guard, malloc_string, read_transaction, InputEnd};
use crate::state::{self, Api, Config};

/// Build the process's engine if there is none. 0 when ready (ccurl's success value), -1 when
/// the engine cannot be built (the reason is in `curlpow_last_error()`).
#[no_mangle]
pub extern "C" fn ccurl_pow_init() -> c_int {
    guard(-1, || {
        state::init(Config::default())?;
        Ok(0)
    })
}

/// Cancel the searches in flight, wait for them to return, and release the engine (the same
/// engine as dcurl's API: one per process). A later [`ccurl_pow`] builds a new one.
#[no_mangle]
pub extern "C" fn ccurl_pow_finalize() {
    guard((), || {
        state::destroy();
        Ok(())
    })
}

/// Cancel every [`ccurl_pow`] in flight now: each returns NULL promptly. A call that starts
/// afterwards is not affected.
#[no_mangle]
pub extern "C" fn ccurl_pow_interrupt() {
    guard((), || {
        state::interrupt(Api::Ccurl);
        Ok(())
    })
}

/// Accepted for compatibility (ccurl's OpenCL loop count); no effect.
#[no_mangle]
pub extern "C" fn ccurl_pow_set_loop_count(count: usize) {
    let _ = count;
}

/// Accepted for compatibility (ccurl's OpenCL nonce offset); no effect.
#[no_mangle]
pub extern "C" fn ccurl_pow_set_offset(offset: usize) {
    let _ = offset;
}

/// Proof of work on one transaction: the first 2673 bytes of `trytes` (ASCII trytes) in, a
/// `malloc`'d NUL-terminated copy with the nonce set out (the caller `free`s it). NULL on any
/// failure: NULL or bad input, `mwm` outside 0..=243, interrupted, finalized meanwhile; the
/// reason is in `curlpow_last_error()`. Builds the engine on first use.
///
/// # Safety
/// `trytes` is NULL, or readable for 2673 bytes or up to a NUL before them.
#[no_mangle]
pub unsafe extern "C" fn ccurl_pow(trytes: *mut c_char, mwm: c_int) -> *mut c_char {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller's contract above.
        let tx = unsafe { read_transaction(trytes.cast_const(), InputEnd::First2673) }?;
        let mwm = check_mwm(mwm)?;
        let call = state::begin(Api::Ccurl, Some(Config::default()), "ccurl_pow_init")?;
        let opts = PowOptions::new(mwm).cancel(call.cancel_token());
        let done = call.engine().pow_with(&tx, &opts)?;
        malloc_string(&done.transaction.to_trytes())
    })
}

/// The transaction's hash: 81 trytes and a NUL in a `malloc`'d buffer (the caller `free`s
/// it), computed with curlpow's scalar Curl-P-81 reference. The input is read like
/// [`ccurl_pow`]'s; NULL on NULL or bad input. Needs no engine.
///
/// # Safety
/// `trytes` is NULL, or readable for 2673 bytes or up to a NUL before them.
#[no_mangle]
pub unsafe extern "C" fn ccurl_digest_transaction(trytes: *mut c_char) -> *mut c_char {
    guard(ptr::null_mut(), || {
        // SAFETY: the caller's contract above.
        let tx = unsafe { read_transaction(trytes.cast_const(), InputEnd::First2673) }?;
        malloc_string(&tx.hash_trytes())
    })
}
