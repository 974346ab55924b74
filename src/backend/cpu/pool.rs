//! The engine's one persistent rayon pool: built once, never rayon's global pool, never a thread
//! per search.

use crate::base::env;
use crate::base::error::Error;

/// Pool settings.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Worker threads.
    pub threads: usize,
    /// Pin worker `i` to core `i mod cores` in the pool's start handler.
    pub pin: bool,
}

/// The most CPU worker threads a pool may have: 4 per logical CPU, and at least 64. Each is a
/// full search worker; past the cores they only add start-up time and memory (5,000 threads
/// took 10 s and 178 MB to start, for nothing).
pub fn max_threads() -> usize {
    (4 * logical_cpus()).max(64)
}

fn logical_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `n` threads, or the error naming `what` (where the number came from: `threads `,
/// `CURLPOW_THREADS=`) and the bound.
pub(crate) fn check_threads(what: &str, n: usize) -> Result<usize, Error> {
    let max = max_threads();
    if n == 0 {
        Err(Error::Config(format!(
            "{what}0: at least 1 thread is needed"
        )))
    } else if n > max {
        Err(Error::Config(format!(
            "{what}{n} is more than this host's limit of {max} threads (4 per logical CPU, {} \
             here, and at least 64)",
            logical_cpus()
        )))
    } else {
        Ok(n)
    }
}

/// The default pool size: `CURLPOW_THREADS` if set (1 to [`max_threads`]), else the available
/// parallelism.
pub fn default_threads() -> Result<usize, Error> {
    match env::get(env::THREADS).map_err(Error::Config)? {
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => check_threads("CURLPOW_THREADS=", n),
            _ => Err(Error::Config(format!(
                "CURLPOW_THREADS={v:?} is not a positive whole number"
            ))),
        },
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)),
    }
}

/// Build the pool.
pub(crate) fn build(cfg: PoolConfig) -> Result<rayon::ThreadPool, Error> {
    let cores = if cfg.pin {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .thread_name(|i| format!("curlpow-cpu-{i}"))
        .start_handler(move |i| {
            if let Some(core) = cores.get(i % cores.len().max(1)) {
                // Pinning is best effort: on failure the thread runs unpinned.
                let _ = core_affinity::set_for_current(*core);
            }
        })
        .build()
        .map_err(|e| Error::Pool(e.to_string()))
}
