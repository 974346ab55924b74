//! The process-wide engine behind the C API, and the calls in flight on it.
//!
//! One [`Engine`] per process (one thread pool, one device registry), created by an init call
//! and dropped by a destroy call, behind one `parking_lot` mutex taken only when a call starts
//! and ends — never during a search. Each call in flight is listed with its own
//! [`CancelToken`], so that an interrupt cancels exactly the searches running at that moment
//! (a later call is not affected) and destroy can cancel them and wait for them to return
//! before it drops the engine.

use parking_lot::{const_mutex, Condvar, Mutex};

use curlpow::{CancelToken, Engine};

use crate::boundary::Failure;

/// Which API a call came through: interrupts are per API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    Dcurl,
    Ccurl,
    Jni,
    Native,
}

struct Call {
    id: u64,
    /// The engine the call runs on (bumped by every init that builds one).
    generation: u64,
    api: Api,
    cancel: CancelToken,
}

struct State {
    engine: Option<Engine>,
    generation: u64,
    next_id: u64,
    calls: Vec<Call>,
}

static STATE: Mutex<State> = const_mutex(State {
    engine: None,
    generation: 0,
    next_id: 0,
    calls: Vec::new(),
});

/// Signalled whenever a call ends (destroy waits on it).
static CALL_ENDED: Condvar = Condvar::new();

/// How to build the engine when a call finds none.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Config {
    /// CPU pool size (None: `CURLPOW_THREADS`, else every core).
    pub(crate) threads: Option<usize>,
}

fn build(st: &mut State, config: Config) -> Result<(), Failure> {
    // Devices are discovered once per process: an init after destroy reuses them (a warm init
    // takes milliseconds and loads no driver again).
    let mut b = Engine::builder().reuse_discovery(true);
    if let Some(n) = config.threads {
        b = b.threads(n);
    }
    let engine = b.build().map_err(Failure::init)?;
    st.generation += 1;
    st.engine = Some(engine);
    Ok(())
}

/// Build the engine unless there is one (a second init is harmless: the first one's settings
/// stand until destroy).
pub(crate) fn init(config: Config) -> Result<(), Failure> {
    let mut st = STATE.lock();
    if st.engine.is_none() {
        build(&mut st, config)?;
    }
    Ok(())
}

/// Whether an engine exists.
pub(crate) fn initialized() -> bool {
    STATE.lock().engine.is_some()
}

/// Cancel the calls in flight on the engine, wait until they have returned, then drop it.
/// Nothing to do without an engine.
pub(crate) fn destroy() {
    let mut st = STATE.lock();
    let Some(engine) = st.engine.take() else {
        return;
    };
    let generation = st.generation;
    for c in st.calls.iter().filter(|c| c.generation == generation) {
        c.cancel.cancel();
    }
    // A cancelled search stops within a batch (well under a millisecond on the CPU); calls of
    // a newer engine (an init during this wait) are not waited for.
    while st.calls.iter().any(|c| c.generation == generation) {
        CALL_ENDED.wait(&mut st);
    }
    drop(st);
    // The last handle: the pool and host threads go here, outside the lock.
    drop(engine);
}

/// Cancel every call of `api` in flight now.
pub(crate) fn interrupt(api: Api) {
    let st = STATE.lock();
    for c in st.calls.iter().filter(|c| c.api == api) {
        c.cancel.cancel();
    }
}

/// The engine, if any, for a short look (devices, statistics).
pub(crate) fn engine() -> Option<Engine> {
    STATE.lock().engine.clone()
}

/// A call in flight: holds an engine handle and its cancel token; leaves the list when dropped.
pub(crate) struct InFlight {
    id: u64,
    engine: Option<Engine>,
    cancel: CancelToken,
}

impl InFlight {
    pub(crate) fn engine(&self) -> &Engine {
        self.engine.as_ref().expect("present until drop")
    }

    /// The token that interrupt and destroy cancel: pass it to the search.
    pub(crate) fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // The engine handle first, so that destroy, woken below, holds the last one.
        self.engine.take();
        let mut st = STATE.lock();
        st.calls.retain(|c| c.id != self.id);
        drop(st);
        CALL_ENDED.notify_all();
    }
}

/// Start a call: `Err` without an engine unless `lazy` builds one with `lazy_config`.
pub(crate) fn begin(api: Api, lazy: Option<Config>, init_name: &str) -> Result<InFlight, Failure> {
    let mut st = STATE.lock();
    if st.engine.is_none() {
        match lazy {
            Some(config) => build(&mut st, config)?,
            None => return Err(Failure::not_initialized(init_name)),
        }
    }
    let engine = st.engine.clone().expect("built above");
    let id = st.next_id;
    st.next_id += 1;
    let cancel = CancelToken::new();
    let generation = st.generation;
    st.calls.push(Call {
        id,
        generation,
        api,
        cancel: cancel.clone(),
    });
    Ok(InFlight {
        id,
        engine: Some(engine),
        cancel,
    })
}
