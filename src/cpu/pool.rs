//! The engine's one persistent rayon pool: built once, never rayon's global pool, never a thread
//! per search.

use crate::error::Error;

/// Pool settings.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Worker threads.
    pub threads: usize,
    /// Pin worker `i` to core `i mod cores` in the pool's start handler.
    pub pin: bool,
}

/// The default pool size: `CURLPOW_THREADS` if set, else the available parallelism.
pub fn default_threads() -> Result<usize, Error> {
    match std::env::var("CURLPOW_THREADS") {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::Config(format!(
                "CURLPOW_THREADS={v:?} is not a positive whole number"
            ))),
        },
        _ => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)),
    }
}

/// Build the pool.
pub fn build(cfg: PoolConfig) -> Result<rayon::ThreadPool, Error> {
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
