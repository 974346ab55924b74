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
//!
//! Between blocking the signals and registering the service's [`Signals`] lies the start-up:
//! device discovery, which may take long or hang in a driver. [`watch_stop_signals`] starts the
//! one thread that takes the signals with `sigwait` from then on: while the service is
//! starting, a stop signal ends the process at once (there is nothing to drain yet); once a
//! [`Signals`] is registered, it is handed to [`Signals::wait`].

use std::io;
#[cfg(unix)]
use std::sync::{Condvar, Mutex, OnceLock};

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

/// Where the watcher thread ([`watch_stop_signals`]) stands.
#[cfg(unix)]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No [`Signals`] registered yet: a stop signal ends the process.
    Starting,
    /// A [`Signals`] is registered: signals are handed to [`Signals::wait`].
    Serving,
    /// This signal arrived while serving and is not yet taken.
    Got(&'static str),
}

#[cfg(unix)]
struct Watch {
    phase: Mutex<Phase>,
    changed: Condvar,
}

/// The watcher's state; set once the watcher thread runs.
#[cfg(unix)]
static WATCH: OnceLock<Watch> = OnceLock::new();

/// The exit status of a process stopped by a signal while it was starting: 0, as after a
/// graceful stop (a service manager's `stop` during start-up is not a failure).
pub const EXIT_STOPPED_WHILE_STARTING: i32 = 0;

/// Block SIGTERM and SIGINT ([`block_stop_signals`]) and start the thread that takes them from
/// now on: until a [`Signals`] is registered (the service is up), the first one writes
/// `{prefix}: SIGTERM while starting: stopped` to standard error and ends the process at once
/// with [`EXIT_STOPPED_WHILE_STARTING`] (`_exit`: no atexit handler of a driver that may be in
/// the middle of discovery runs); afterwards each is handed to [`Signals::wait`]. Call it first
/// thing in `main`, before any other thread starts. A second call does nothing. Elsewhere than
/// Unix it does nothing.
pub fn watch_stop_signals(prefix: &'static str) -> io::Result<()> {
    block_stop_signals()?;
    #[cfg(unix)]
    {
        if WATCH.get().is_some() {
            return Ok(());
        }
        let set = stop_set()?;
        let _ = WATCH.set(Watch {
            phase: Mutex::new(Phase::Starting),
            changed: Condvar::new(),
        });
        std::thread::Builder::new()
            .name("curlpow-signals".into())
            .spawn(move || loop {
                let sig = sigwait_name(&set);
                let w = WATCH.get().expect("set before the thread starts");
                let mut phase = w.phase.lock().unwrap_or_else(|e| e.into_inner());
                if *phase == Phase::Starting {
                    let line = format!("{prefix}: {sig} while starting: stopped\n");
                    // SAFETY: write(2) of a valid buffer to fd 2, then _exit(2), which ends the
                    // process without running any handler, as the signal's default action would.
                    unsafe {
                        libc::write(2, line.as_ptr().cast(), line.len());
                        libc::_exit(EXIT_STOPPED_WHILE_STARTING);
                    }
                }
                *phase = Phase::Got(sig);
                w.changed.notify_all();
            })?;
    }
    #[cfg(not(unix))]
    let _ = prefix;
    Ok(())
}

/// Wait for SIGTERM or SIGINT with sigwait (they must be blocked in the calling thread);
/// returns its name.
#[cfg(unix)]
fn sigwait_name(set: &libc::sigset_t) -> &'static str {
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is an initialised sigset_t and `sig` a valid out-pointer.
        let r = unsafe { libc::sigwait(set, &mut sig) };
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
    }
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
    /// The watcher thread ([`watch_stop_signals`]) takes them and hands them over.
    #[cfg(unix)]
    Watched(&'static Watch),
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
            if let Some(w) = WATCH.get() {
                let mut phase = w.phase.lock().unwrap_or_else(|e| e.into_inner());
                if *phase == Phase::Starting {
                    *phase = Phase::Serving;
                }
                return Ok(Signals {
                    how: How::Watched(w),
                });
            }
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
            matches!(self.how, How::Blocked(_) | How::Watched(_))
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
            How::Watched(w) => {
                let mut phase = w.phase.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if let Phase::Got(sig) = *phase {
                        *phase = Phase::Serving;
                        return sig;
                    }
                    phase = w.changed.wait(phase).unwrap_or_else(|e| e.into_inner());
                }
            }
            #[cfg(unix)]
            How::Blocked(set) => sigwait_name(set),
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
