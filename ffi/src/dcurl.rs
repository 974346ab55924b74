//! dcurl v0.6's C API (`include/dcurl.h`): `dcurl_init`, `dcurl_entry`, `dcurl_destroy`.
//!
//! Differences from dcurl (see `docs/c-api.md`): the result of [`dcurl_entry`] is followed by a
//! NUL (dcurl's is not; cgo's `C.GoString` and ctypes' `c_char_p` need one), the input and MWM
//! are checked (dcurl searches forever at MWM 244), and [`dcurl_destroy`] cancels the searches
//! in flight and waits for them. `broker_host` sends the PoW to workers over RabbitMQ as dcurl
//! does (`remote.rs`), each answer checked on the host.

use std::ffi::{c_char, c_int};
use std::ptr;

use curlpow::PowOptions;

use crate::boundary::{
    self, bounded_bytes, check_mwm, guard, malloc_string, read_transaction, Failure, InputEnd,
};
use crate::remote;
use crate::state::{self, Api, Config};

/// The longest `broker_host` read (a host name, or an `amqp://` URL).
const MAX_BROKER_HOST: usize = 4096;

/// dcurl's configuration (`dcurl_config` in `include/dcurl.h`).
#[repr(C)]
#[derive(Debug)]
#[allow(non_camel_case_types)]
pub struct dcurl_config {
    /// dcurl's RabbitMQ broker for remote PoW: NULL or "" for none (search in this process),
    /// else a host (`localhost`, `10.0.0.5`, `host:5672`: RabbitMQ's guest account, vhost `/`)
    /// or an `amqp://user:password@host:port/vhost` URL.
    pub broker_host: *mut c_char,
}

/// Build the process's engine (thread pool, devices). `config` may be NULL (defaults). With a
/// `broker_host`, [`dcurl_entry`] sends each PoW to the workers on that broker's
/// `incoming_queue` (dcurl's remote protocol; `CURLPOW_BROKER_QUEUE` names another queue),
/// checks every answer on the host, and searches on this host when none comes within 10 s.
/// True when at least one device works (the CPU always does, unless the thread pool cannot be
/// built); false for a `broker_host` that is not a host or URL. A second call is harmless (the
/// first one's settings stand); a call after [`dcurl_destroy`] builds a new engine.
///
/// # Safety
/// `config` is NULL or points to a `dcurl_config` whose `broker_host` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn dcurl_init(config: *mut dcurl_config) -> bool {
    guard(false, || {
        // SAFETY: the caller's contract above: NULL or a readable dcurl_config.
        let host = unsafe { config.as_ref() }
            .map(|c| c.broker_host)
            .unwrap_or(ptr::null_mut());
        if !host.is_null() {
            // SAFETY: broker_host is a NUL-terminated string; at most MAX_BROKER_HOST bytes
            // of it are read.
            let bytes = unsafe { bounded_bytes(host.cast_const(), MAX_BROKER_HOST) };
            let host = std::str::from_utf8(bytes).map_err(|_| {
                Failure::new(
                    boundary::Status::InvalidArgument,
                    "broker_host is not UTF-8 text",
                )
            })?;
            if !host.trim().is_empty() {
                remote::configure(host)?;
            }
        }
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
        remote::destroy();
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
        let opts = PowOptions::new(mwm)
            .cancel(call.cancel_token())
            .cpu_threads(threads);
        let done = remote::pow(call.engine(), &tx, opts)?;
        Ok(malloc_string(&done.transaction.to_trytes())?.cast::<i8>())
    })
}
