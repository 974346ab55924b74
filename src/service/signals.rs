//! The signals that end a long-running service (the server, the broker worker): SIGTERM and
//! SIGINT.
//!
//! A signal handler is process-wide and the last one installed wins. GPU drivers install their
//! own when they load: PoCL (and the LLVM inside it, as in Mesa's lavapipe) catches SIGTERM and
//! SIGINT to clean up, then re-raises the signal with the default action, which kills the
//! process in the middle of a drain. A handler registered before the driver loads is replaced;
//! one registered after is replaced by the next driver that loads late.
//!
//! What holds whatever a driver does: [`block_stop_signals`] blocks both signals in the first
//! thread, before any other thread or driver exists, so every thread inherits the mask and no
//! handler ever runs for them; the signal stays pending until [`Signals::wait`] takes it with
//! `sigwait(2)`. Without that (a library user that did not call it), [`Signals`] falls back to
//! tokio's handlers, which a driver loaded later can replace.

use std::io;

/// Block SIGTERM and SIGINT in the calling thread, so that every thread it starts afterwards
/// (thread pools, driver threads) inherits the mask; [`Signals::register`] then waits for them
/// with `sigwait(2)` instead of handlers. Call it first thing in `main`, before any thread is
/// started or any driver is loaded: a thread started before keeps its own mask, and a signal
/// the kernel delivers to it runs whatever handler is installed.
///
/// Child processes inherit the mask; a service that starts one should unblock the signals in
/// it. Elsewhere than Unix this does nothing.
pub fn block_stop_signals() -> io::Result<()> {
    #[cfg(unix)]
    {
        let set = stop_set()?;
        // SAFETY: `set` is an initialised sigset_t; a null old-set pointer is allowed.
        let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
    }
    Ok(())
}

/// Whether SIGTERM and SIGINT are both blocked in the calling thread.
#[cfg(unix)]
fn stop_signals_blocked() -> bool {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it, pthread_sigmask with a null
    // new set only reads the current mask into it.
    unsafe {
        let mut cur: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut cur);
        if libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur) != 0 {
            return false;
        }
        libc::sigismember(&cur, libc::SIGTERM) == 1 && libc::sigismember(&cur, libc::SIGINT) == 1
    }
}

/// The set {SIGTERM, SIGINT}.
#[cfg(unix)]
fn stop_set() -> io::Result<libc::sigset_t> {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before any other use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::sigemptyset(&mut set) != 0
            || libc::sigaddset(&mut set, libc::SIGTERM) != 0
            || libc::sigaddset(&mut set, libc::SIGINT) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(set)
    }
}

/// SIGTERM and SIGINT, registered once at start (a signal that arrives before registration
/// would kill the process instead of stopping it gracefully): what stops `curlpow serve` and
/// drains `curlpow worker`.
pub struct Signals {
    how: How,
}

enum How {
    /// The signals are blocked ([`block_stop_signals`]): taken with sigwait.
    #[cfg(unix)]
    Blocked(libc::sigset_t),
    /// tokio's handlers.
    #[cfg(unix)]
    Handlers {
        term: tokio::signal::unix::Signal,
        int: tokio::signal::unix::Signal,
    },
    #[cfg(not(unix))]
    CtrlC,
}

impl Signals {
    /// Register SIGTERM and SIGINT (Ctrl-C elsewhere). Must run inside the runtime. When the
    /// calling thread has them blocked ([`block_stop_signals`]), no handler is installed: they
    /// are waited for with sigwait.
    pub fn register() -> io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            if stop_signals_blocked() {
                return Ok(Signals {
                    how: How::Blocked(stop_set()?),
                });
            }
            Ok(Signals {
                how: How::Handlers {
                    term: signal(SignalKind::terminate())?,
                    int: signal(SignalKind::interrupt())?,
                },
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals { how: How::CtrlC })
        }
    }

    /// Whether the signals are taken with sigwait (blocked in every thread) rather than by
    /// handlers a driver could replace.
    pub fn blocked(&self) -> bool {
        #[cfg(unix)]
        {
            matches!(self.how, How::Blocked(_))
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// Block the calling thread until the first of them; returns its name. With handlers the
    /// wait runs on `rt`; with the signals blocked it is a `sigwait` on the calling thread,
    /// which must have them blocked too (any thread started after [`block_stop_signals`]).
    pub fn wait(&mut self, rt: &tokio::runtime::Runtime) -> &'static str {
        match &mut self.how {
            #[cfg(unix)]
            How::Blocked(set) => loop {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` is an initialised sigset_t and `sig` a valid out-pointer.
                let r = unsafe { libc::sigwait(&*set, &mut sig) };
                if r == 0 {
                    return if sig == libc::SIGINT {
                        "SIGINT"
                    } else {
                        "SIGTERM"
                    };
                }
                // EINTR (other platforms) or EINVAL (never, with this set): wait again, without
                // spinning.
                std::thread::sleep(std::time::Duration::from_millis(50));
            },
            #[cfg(unix)]
            How::Handlers { term, int } => rt.block_on(async {
                tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                }
            }),
            #[cfg(not(unix))]
            How::CtrlC => {
                let _ = rt.block_on(tokio::signal::ctrl_c());
                "Ctrl-C"
            }
        }
    }
}
