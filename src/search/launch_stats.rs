//! What a GPU device reports about its launches: the launch size and length it adapted to, how
//! its kernel was built, and how its last search spent its time ([`Device::launch_stats`]).
//! `curlpow devices --json` shows it under `details.launch`, `curlpow bench --json` under
//! `launch`.
//!
//! [`Device::launch_stats`]: crate::search::device::Device::launch_stats

use serde::Serialize;

/// A GPU device's launch shape and build facts (see `docs/gpu-selection.md`, "GPU launches").
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LaunchStats {
    /// Work-items (invocations) of the next full launch.
    pub items: u64,
    /// Its length: transforms (counters) per state (`iters` in OpenCL, `transforms` in WGSL).
    pub transforms_per_item: u64,
    /// Work-items that share one state: 1, or the cooperating group of a `:coop` kernel.
    pub items_per_state: u64,
    /// Counters one full launch covers (`items / items_per_state × transforms_per_item`).
    pub counters_per_launch: u64,
    /// Nonces one full launch tries (counters × lanes).
    pub nonces_per_launch: u64,
    /// The estimated size of one full wave of the device (compute units × resident groups per
    /// unit × group size), where the sizing starts.
    pub wave_items: u64,
    /// The most work-items one launch may have.
    pub max_items: u64,
    /// The most transforms per state one launch may have (65,535 loop iterations cap it on
    /// llvmpipe).
    pub max_transforms_per_item: u64,
    /// Launches kept in flight (the pipeline depth).
    pub in_flight: u64,
    /// `growing` (doubling the size while nonces per second rise), `settled`, or `forced`
    /// (`CURLPOW_GPU_LAUNCH_ITEMS` and `CURLPOW_GPU_LAUNCH_ITERS` both set).
    pub sizing: String,
    /// How long one launch should run: the length is set to reach it; it bounds how late a
    /// cancel is noticed.
    pub target_launch_ms: f64,
    /// Full launches observed over the device's life.
    pub launches: u64,
    /// The best nonces per second a full launch reached.
    pub best_nonces_per_second: Option<f64>,
    /// Milliseconds to build the kernel (compile and link; the driver's cache may serve it).
    pub build_ms: Option<f64>,
    /// Milliseconds of the first (empty) launch, where drivers that compile lazily do it.
    pub first_launch_ms: Option<f64>,
    /// Estimated bytes of memory traffic per nonce tried, and where it goes (see
    /// `docs/benchmarks.md`, "GPU: what is modelled").
    pub bytes_per_nonce: Option<f64>,
    /// Where those bytes go: `private` (per-item state, in registers/L1 or spilled to device
    /// memory), `local` (on-chip shared memory) or `storage` (a storage buffer).
    pub traffic: Option<String>,
    /// What the compiler said, where the API tells: registers, spills, private and local
    /// memory per work-item, the build log (trimmed). For display.
    pub compiler: serde_json::Map<String, serde_json::Value>,
    /// How the device's last search spent its time.
    pub last_search: Option<SearchTiming>,
}

/// How one GPU search spent its time, measured by the search loop (host clock) and, where the
/// API has profiling, by the device (OpenCL events).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchTiming {
    /// Launches submitted.
    pub launches: u64,
    /// Milliseconds from the start of the search to its return.
    pub wall_ms: f64,
    /// Milliseconds from the start until the hit's result words were on the host.
    pub to_hit_ms: Option<f64>,
    /// Milliseconds after the hit (or the stop) was seen until the launches still in flight
    /// had finished.
    pub drain_ms: f64,
    /// Milliseconds the host spent submitting launches.
    pub submit_ms: f64,
    /// Milliseconds the host spent blocked waiting for results.
    pub wait_ms: f64,
    /// Milliseconds the device spent in the search kernel (OpenCL profiling; `None` where the
    /// API does not say).
    pub kernel_ms: Option<f64>,
    /// Milliseconds the device spent reading results back (OpenCL profiling).
    pub read_ms: Option<f64>,
    /// Milliseconds of device time up to and including the hit's launch (OpenCL profiling).
    pub kernel_to_hit_ms: Option<f64>,
}
