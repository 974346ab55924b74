//! The native methods of `com.iota.iri.crypto.PearlDiver`, the class through which the
//! DLTcollab IRI fork loads `libdcurl.so` (`System.loadLibrary("dcurl")`): `exlibInit`,
//! `exlibSearch`, `exlibCancel`, `exlibDestroy`, all static.
//!
//! `exlibSearch(byte[] trits, int mwm, int threads)` takes the transaction as 8019 trits (one
//! byte each, -1, 0 or 1) and writes the trits with the nonce set back into the array. Unlike
//! dcurl's, `exlibCancel` really cancels the searches in flight (they return false).
//! `exlibInit` is declared without arguments in older forks and with the broker host
//! (`byte[]`, `int`) in newer ones; both calling conventions JNI uses leave unread trailing
//! arguments harmless, and the broker is not used, so one definition serves both.
#![allow(non_snake_case)]

use jni_sys::{jboolean, jbyteArray, jclass, jint, JNIEnv, JNI_FALSE, JNI_TRUE};

use curlpow::{PowOptions, Transaction, TRANSACTION_TRITS};

use crate::boundary::{check_mwm, guard, Failure, Status};
use crate::state::{self, Api, Config};

/// `static native boolean exlibInit()`: build the engine (harmless when it exists).
/// Neither argument is used.
#[no_mangle]
pub extern "system" fn Java_com_iota_iri_crypto_PearlDiver_exlibInit(
    env: *mut JNIEnv,
    class: jclass,
) -> jboolean {
    let _ = (env, class);
    guard(JNI_FALSE, || {
        state::init(Config::default())?;
        Ok(JNI_TRUE)
    })
}

/// `static native boolean exlibSearch(byte[] trits, int mwm, int threads)`: PoW on 8019 trits,
/// written back in place. False (the array untouched) on any failure: not initialised, a NULL
/// or wrong-length array, a value that is not a trit, MWM out of range, negative `threads`,
/// cancelled.
///
/// # Safety
/// Called by the JVM with a valid `env` and a local reference (or null) in `trits`.
#[no_mangle]
pub unsafe extern "system" fn Java_com_iota_iri_crypto_PearlDiver_exlibSearch(
    env: *mut JNIEnv,
    class: jclass,
    trits: jbyteArray,
    mwm: jint,
    threads: jint,
) -> jboolean {
    let _ = class;
    guard(JNI_FALSE, || {
        if env.is_null() || trits.is_null() {
            return Err(Failure::null("the trits array"));
        }
        // SAFETY: a JVM-provided env points to its function table.
        let table = unsafe { &**env };
        let missing = || Failure::new(Status::Internal, "the JNI function table lacks a function");
        let length = table.GetArrayLength.ok_or_else(missing)?;
        let get = table.GetByteArrayRegion.ok_or_else(missing)?;
        let set = table.SetByteArrayRegion.ok_or_else(missing)?;
        // SAFETY: `trits` is a live non-null array reference from the JVM.
        let n = unsafe { length(env, trits) };
        if usize::try_from(n).ok() != Some(TRANSACTION_TRITS) {
            return Err(Failure::new(
                Status::Trytes,
                format!("the trits array has {n} elements, expected {TRANSACTION_TRITS}"),
            ));
        }
        let mut buf = vec![0i8; TRANSACTION_TRITS];
        // SAFETY: the region 0..8019 lies inside the array (length checked above) and `buf`
        // holds 8019 bytes.
        unsafe { get(env, trits, 0, n, buf.as_mut_ptr()) };
        let tx = Transaction::from_trits(&buf)?;
        let mwm = check_mwm(mwm)?;
        let threads = usize::try_from(threads).map_err(|_| {
            Failure::new(
                Status::InvalidArgument,
                format!("threads {threads} is negative (0 = the default)"),
            )
        })?;
        let call = state::begin(Api::Jni, None, "exlibInit")?;
        let opts = PowOptions::new(mwm)
            .cancel(call.cancel_token())
            .cpu_threads(threads);
        let done = call.engine().pow_with(&tx, &opts)?;
        // SAFETY: as for the read; the source holds 8019 trits.
        unsafe { set(env, trits, 0, n, done.transaction.trits().as_ptr()) };
        Ok(JNI_TRUE)
    })
}

/// `static native void exlibCancel()`: cancel the `exlibSearch` calls in flight.
/// Neither argument is used.
#[no_mangle]
pub extern "system" fn Java_com_iota_iri_crypto_PearlDiver_exlibCancel(
    env: *mut JNIEnv,
    class: jclass,
) {
    let _ = (env, class);
    guard((), || {
        state::interrupt(Api::Jni);
        Ok(())
    })
}

/// `static native void exlibDestroy()`: cancel the searches in flight, wait, release the engine.
/// Neither argument is used.
#[no_mangle]
pub extern "system" fn Java_com_iota_iri_crypto_PearlDiver_exlibDestroy(
    env: *mut JNIEnv,
    class: jclass,
) {
    let _ = (env, class);
    guard((), || {
        state::destroy();
        Ok(())
    })
}
