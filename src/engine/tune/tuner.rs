//! The tuner: time a GPU device's kernel variants × launch sizes for a bounded time and keep
//! the fastest whose nonces verify on the host.
//!
//! Each variant is opened as a device of its own (the same hardware, a second context), built,
//! checked (a search at MWM 6 whose nonce must pass the host check) and timed at an
//! unreachable weight. The budget is spent in two rounds so that a short one still samples
//! every variant it can build:
//!
//! 1. **probe**: every variant in turn (the device's current one first), each timed for an
//!    equal share of [`PROBE_SHARE`] of the budget;
//! 2. **refine**: the [`REFINED`] fastest verified variants again, each with the adaptive
//!    launch sizing and with the launch size fixed at half and twice what the sizing settled
//!    on, the rest of the budget shared equally.
//!
//! Then the **block** round, in the last [`BLOCK_SHARE`] of the budget: each block-search
//! variant of the backend (reusing a device already open with it where there is one) is
//! checked on a block PoW whose nonce must pass the host check and timed at an unreachable
//! target, each for an equal share.
//!
//! No trial starts after the budget is spent; the one under way may still finish its build
//! (a kernel compile is not interruptible) and its share. For each proof of work the fastest
//! verified trial wins and is recorded in the cache under that proof of work; its device,
//! already built, is returned for the engine to switch to (block searches to the block
//! choice's).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::search::block::BlockJob;
use crate::search::device::{Backend, Device, DeviceInfo};
use crate::search::discovery::DiscoverOptions;
use crate::search::nonce::CounterRange;
use crate::search::search_job::SearchJob;
use crate::ternary::transaction::Transaction;

use crate::backend::gpu::tune_cache;
use crate::engine::{TuneReport, TuneTrial, TuneVariant};

/// The share of the budget the probe round gets (the rest refines).
pub(crate) const PROBE_SHARE: f64 = 0.4;
/// The share of the budget the block round gets, at the end (the transaction rounds take the
/// rest).
pub(crate) const BLOCK_SHARE: f64 = 0.25;
/// How many of the fastest variants the refine round times again.
pub(crate) const REFINED: usize = 2;
/// The least time one trial is timed for (shorter measures mostly the launch sizing's ramp).
const MIN_SHARE: Duration = Duration::from_millis(30);

/// Every variant of every compiled GPU backend, transaction search first, then block search.
pub(crate) fn variants() -> Vec<TuneVariant> {
    let mut v = transaction_variants();
    v.extend(block_variants());
    v
}

/// The transaction-search variants of every compiled GPU backend (the ones the tuner times).
fn transaction_variants() -> Vec<TuneVariant> {
    pow_variants(false)
}

/// The block-search variants of every compiled GPU backend.
fn block_variants() -> Vec<TuneVariant> {
    pow_variants(true)
}

/// The variants of every compiled GPU backend with their search of one proof of work (`block`).
#[allow(unused_variables)]
fn pow_variants(block: bool) -> Vec<TuneVariant> {
    #[allow(unused_mut)]
    let mut v = Vec::new();
    #[cfg(feature = "opencl")]
    v.extend(opencl_variants(block));
    #[cfg(feature = "wgpu")]
    v.extend(wgpu_variants(block));
    v
}

/// The OpenCL variants, each with its search of this proof of work (`block`): one program per
/// variant holds both searches (`curl_search`, `block_search`).
#[cfg(feature = "opencl")]
fn opencl_variants(block: bool) -> Vec<TuneVariant> {
    use crate::backend::opencl::KernelConfig;
    let (kernel, entry) = if block {
        KernelConfig::BLOCK_KERNEL
    } else {
        KernelConfig::SEARCH_KERNEL
    };
    KernelConfig::candidates()
        .into_iter()
        .map(|k| TuneVariant {
            pow: if block { "block" } else { "transaction" },
            backend: "opencl",
            variant: k.name(),
            build_options: k.reference_build_options(),
            nvidia_options: k.nvidia_options(),
            default_for: k.default_labels(),
            kernel,
            entry,
        })
        .collect()
}

/// The wgpu variants, each with its search of this proof of work (`block`).
#[cfg(feature = "wgpu")]
fn wgpu_variants(block: bool) -> Vec<TuneVariant> {
    crate::backend::wgpu::Tuning::variants()
        .into_iter()
        .map(|(name, t, default_for)| {
            let (kernel, entry) = t.kernel_entry(block);
            TuneVariant {
                pow: if block { "block" } else { "transaction" },
                backend: "wgpu",
                variant: name.into(),
                build_options: format!("fuse={},coop={}", t.fuse, t.coop),
                nvidia_options: String::new(),
                default_for,
                kernel,
                entry,
            }
        })
        .collect()
}

/// One variant opened on the device, with the hooks the tuner needs.
enum Candidate {
    #[cfg(feature = "opencl")]
    Opencl(Arc<crate::backend::opencl::OpenClDevice>),
    #[cfg(feature = "wgpu")]
    Wgpu(Arc<crate::backend::wgpu::WgpuDevice>),
}

impl Candidate {
    fn device(&self) -> Arc<dyn Device> {
        match self {
            #[cfg(feature = "opencl")]
            Candidate::Opencl(d) => d.clone(),
            #[cfg(feature = "wgpu")]
            Candidate::Wgpu(d) => d.clone(),
        }
    }

    /// Work-items of the next full launch (where the adaptive sizing stands).
    fn launch_items(&self) -> usize {
        match self {
            #[cfg(feature = "opencl")]
            Candidate::Opencl(d) => d.launch_items(),
            #[cfg(feature = "wgpu")]
            Candidate::Wgpu(d) => d.dispatch_invocations() as usize,
        }
    }

    /// Fix the launch size (`None`: adaptive again).
    fn force_items(&self, items: Option<usize>) {
        match self {
            #[cfg(feature = "opencl")]
            Candidate::Opencl(d) => d.force_launch(items, None),
            #[cfg(feature = "wgpu")]
            Candidate::Wgpu(d) => d.force_launch(items, None),
        }
    }
}

/// The transaction variants of `info`'s backend, the device's current one first.
fn names(info: &DeviceInfo) -> Vec<String> {
    let current = info
        .details
        .get("variant")
        .and_then(|v| v.as_str())
        .unwrap_or(info.kernel.as_str())
        .to_string();
    let mut v: Vec<String> = transaction_variants()
        .into_iter()
        .filter(|v| v.backend == info.backend.name())
        .map(|v| v.variant)
        .collect();
    if let Some(i) = v.iter().position(|n| *n == current) {
        let c = v.remove(i);
        v.insert(0, c);
    }
    v
}

/// The block variants of `info`'s backend.
fn block_names(info: &DeviceInfo) -> Vec<String> {
    block_variants()
        .into_iter()
        .filter(|v| v.backend == info.backend.name())
        .map(|v| v.variant)
        .collect()
}

/// Open the device `info` describes with the variant `name` (a second context on the same
/// hardware).
fn open(info: &DeviceInfo, name: &str) -> Result<Candidate, String> {
    let opts = DiscoverOptions {
        include_software: info.software,
    };
    let missing = || format!("{} did not open with this variant", info.id);
    let _ = (&opts, name);
    match info.backend {
        #[cfg(feature = "opencl")]
        Backend::Opencl => {
            let k =
                crate::backend::opencl::KernelConfig::parse(name).ok_or("not a kernel variant")?;
            crate::backend::opencl::discover_with(&opts, Some(k), false)
                .devices
                .into_iter()
                .find(|d| d.info().id == info.id && d.info().name == info.name)
                .map(Candidate::Opencl)
                .ok_or_else(missing)
        }
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => {
            let (_, t, _) = crate::backend::wgpu::Tuning::variants()
                .into_iter()
                .find(|v| v.0 == name)
                .ok_or("not a wgpu variant")?;
            crate::backend::wgpu::discover_with(&opts, Some(t), false, false)
                .devices
                .into_iter()
                .find(|d| d.info().id == info.id && d.info().name == info.name)
                .map(Candidate::Wgpu)
                .ok_or_else(missing)
        }
        _ => Err(format!("{}: not a GPU backend the tuner knows", info.id)),
    }
}

/// The transaction every trial searches.
fn transaction() -> Transaction {
    crate::engine::bench_transaction()
}

/// Build the variant and check it: a search at MWM 6 whose nonce must pass the host check.
fn verify(dev: &dyn Device, until: Instant) -> Result<(), String> {
    use crate::search::control::SearchControl;
    dev.prepare().map_err(|e| e.to_string())?;
    let job = SearchJob::new(&transaction(), 6).map_err(|e| e.to_string())?;
    // At least a second for the check itself: 729 nonces are expected, one launch finds one.
    let ctl = SearchControl::new(
        None,
        Some(until.max(Instant::now() + Duration::from_secs(1))),
    );
    let out = dev
        .search(&job, CounterRange::ALL, &ctl)
        .map_err(|e| e.to_string())?;
    let hit = out.hit.ok_or("no nonce before the time was up")?;
    job.verify(hit).ok_or("its nonce failed the host check")?;
    Ok(())
}

/// The block every block trial searches: a fixed 300-byte message at `zeros` trailing zeros.
fn block_job(zeros: usize) -> Result<BlockJob, String> {
    let message: Vec<u8> = crate::ternary::xorshift::bytes(0xB10C_0000_0000_0300)
        .take(300)
        .collect();
    let target = crate::search::block::score_of(zeros, message.len());
    BlockJob::new(&message, target).map_err(|e| e.to_string())
}

/// Build the device's block search and check it: a block PoW of 6 trailing zeros whose nonce
/// must pass the host check.
fn verify_block(dev: &dyn Device, until: Instant) -> Result<(), String> {
    use crate::search::control::SearchControl;
    if !dev.supports_block_pow() {
        return Err("this variant runs no block PoW".into());
    }
    dev.prepare().map_err(|e| e.to_string())?;
    let job = block_job(6)?;
    let ctl = SearchControl::new(
        None,
        Some(until.max(Instant::now() + Duration::from_secs(1))),
    );
    let out = dev
        .search_block(&job, crate::search::block::COUNTERS, &ctl)
        .map_err(|e| e.to_string())?;
    let hit = out.hit.ok_or("no nonce before the time was up")?;
    job.verify(hit).ok_or("its nonce failed the host check")?;
    Ok(())
}

/// Block nonces per second at an unreachable target for `share`.
fn rate_block(dev: &dyn Device, share: Duration) -> Result<f64, String> {
    use crate::search::control::SearchControl;
    let job = block_job(243)?;
    let t = Instant::now();
    let ctl = SearchControl::new(None, Some(t + share));
    let out = dev
        .search_block(&job, crate::search::block::COUNTERS, &ctl)
        .map_err(|e| e.to_string())?;
    Ok(out.nonces as f64 / t.elapsed().as_secs_f64().max(1e-9))
}

/// Nonces per second at an unreachable weight for `share`.
fn rate(dev: &dyn Device, share: Duration) -> Result<f64, String> {
    use crate::search::control::SearchControl;
    let job = SearchJob::new(&transaction(), 243).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let ctl = SearchControl::new(None, Some(t + share));
    let out = dev
        .search(&job, CounterRange::ALL, &ctl)
        .map_err(|e| e.to_string())?;
    Ok(out.nonces as f64 / t.elapsed().as_secs_f64().max(1e-9))
}

/// The outcome of [`tune`]: the report, and the chosen variants' devices, built, for the
/// engine to switch to (the transaction search's, and the block search's).
pub(crate) struct Tuned {
    pub report: TuneReport,
    pub device: Option<Arc<dyn Device>>,
    pub block_device: Option<Arc<dyn Device>>,
}

/// Tune the device `info` describes for about `budget`, recording the choice in the cache.
/// `keep_going` is asked before every trial; `false` ends the tuning at once (the engine was
/// dropped) without a choice.
pub(crate) fn tune(info: &DeviceInfo, budget: Duration, keep_going: &dyn Fn() -> bool) -> Tuned {
    let started = Instant::now();
    let end = started + budget;
    // The transaction rounds stop where the block round's share starts.
    let block_names = block_names(info);
    let deadline = if block_names.is_empty() {
        end
    } else {
        started + budget.mul_f64(1.0 - BLOCK_SHARE)
    };
    let budget = deadline - started;
    let trial = |pow, variant: &str, phase, launch_items| TuneTrial {
        pow,
        device_id: info.id.clone(),
        device: info.name.clone(),
        variant: variant.to_string(),
        phase,
        launch_items,
        nonces_per_second: 0.0,
        verified: false,
        chosen: false,
        error: None,
    };
    let names = names(info);
    let n = names.len().max(1) as u32;
    let probe_share = budget.mul_f64(PROBE_SHARE) / n;
    let mut trials: Vec<TuneTrial> = Vec::new();
    // The verified candidates, fastest first, at most REFINED of them kept open.
    let mut kept: Vec<(f64, String, Candidate)> = Vec::new();
    let mut stopped = false;
    for name in &names {
        if Instant::now() >= deadline {
            break;
        }
        if !keep_going() {
            stopped = true;
            break;
        }
        let mut t = trial(tune_cache::TRANSACTION, name, "probe", None);
        let measured = open(info, name).and_then(|c| {
            verify(&*c.device(), deadline)?;
            let left = deadline.saturating_duration_since(Instant::now());
            let r = rate(&*c.device(), probe_share.min(left).max(MIN_SHARE))?;
            Ok((r, c))
        });
        match measured {
            Ok((r, c)) => {
                t.verified = true;
                t.nonces_per_second = r;
                kept.push((r, name.clone(), c));
                kept.sort_by(|a, b| b.0.total_cmp(&a.0));
                // Dropping the slower ones frees their device memory at once.
                kept.truncate(REFINED);
            }
            Err(e) => t.error = Some(e),
        }
        trials.push(t);
    }
    // Refine: each kept variant adaptive, then at half and twice where its sizing settled.
    let mut plan: Vec<(usize, Option<usize>)> = Vec::new();
    for (k, (_, _, c)) in kept.iter().enumerate() {
        let settled = c.launch_items().max(1);
        plan.push((k, None));
        plan.push((k, Some((settled / 2).max(1))));
        plan.push((k, Some(settled.saturating_mul(2))));
    }
    let mut left_trials = plan.len() as u32;
    for (k, items) in plan {
        let now = Instant::now();
        if now >= deadline || stopped {
            break;
        }
        if !keep_going() {
            stopped = true;
            break;
        }
        let share = ((deadline - now) / left_trials.max(1)).max(MIN_SHARE);
        left_trials = left_trials.saturating_sub(1);
        let (_, name, c) = &kept[k];
        c.force_items(items);
        let mut t = trial(tune_cache::TRANSACTION, name, "refine", items);
        match rate(&*c.device(), share) {
            Ok(r) => {
                t.verified = true;
                t.nonces_per_second = r;
            }
            Err(e) => t.error = Some(e),
        }
        trials.push(t);
    }
    let mut report = TuneReport {
        device_id: info.id.clone(),
        trials,
        variant: None,
        nonces_per_second: 0.0,
        block_variant: None,
        block_nonces_per_second: 0.0,
        cache: None,
        cache_error: None,
        seconds: 0.0,
    };
    let mut device = None;
    let best = report
        .trials
        .iter_mut()
        .filter(|t| t.verified && t.nonces_per_second > 0.0)
        .max_by(|x, y| x.nonces_per_second.total_cmp(&y.nonces_per_second));
    if let (Some(b), false) = (best, stopped) {
        b.chosen = true;
        let (variant, rate, items) = (b.variant.clone(), b.nonces_per_second, b.launch_items);
        if let Some((_, _, c)) = kept.iter().find(|(_, n, _)| *n == variant) {
            c.force_items(items);
            device = Some(c.device());
        }
        record(
            &mut report,
            tune_cache::TRANSACTION,
            info,
            &variant,
            rate,
            items,
        );
        report.variant = Some(variant);
        report.nonces_per_second = rate;
    }
    let mut block_device = None;
    if !stopped && !block_names.is_empty() {
        let (trials, best) = block_round(info, &block_names, &kept, end, keep_going, &trial);
        report.trials.extend(trials);
        if let Some((variant, rate, dev)) = best {
            record(&mut report, tune_cache::BLOCK, info, &variant, rate, None);
            report.block_variant = Some(variant);
            report.block_nonces_per_second = rate;
            block_device = Some(dev);
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Tuned {
        report,
        device,
        block_device,
    }
}

/// Record the choice for `pow` in the cache, noting where (or why not) in the report.
fn record(
    report: &mut TuneReport,
    pow: &str,
    info: &DeviceInfo,
    variant: &str,
    rate: f64,
    launch_items: Option<usize>,
) {
    match tune_cache::store(
        &tune_cache::key_of(pow, info),
        tune_cache::Tuned {
            variant: variant.to_string(),
            nonces_per_second: rate,
            launch_items,
        },
    ) {
        Ok(p) => report.cache = Some(p),
        Err(e) => report.cache_error = Some(e),
    }
}

/// A new trial's record: proof of work, variant, phase, fixed launch size.
type NewTrial<'a> = dyn Fn(&'static str, &str, &'static str, Option<usize>) -> TuneTrial + 'a;

/// The fastest verified variant of a round: its name, rate and device.
type Best = (String, f64, Arc<dyn Device>);

/// The block round: each of `names` checked and timed until `end`, each for an equal share; the
/// trials, and the fastest verified variant with its rate and device. A device already open
/// with the variant (`kept`) is reused.
fn block_round(
    info: &DeviceInfo,
    names: &[String],
    kept: &[(f64, String, Candidate)],
    end: Instant,
    keep_going: &dyn Fn() -> bool,
    trial: &NewTrial<'_>,
) -> (Vec<TuneTrial>, Option<Best>) {
    let mut trials = Vec::new();
    let mut best: Option<Best> = None;
    for (k, name) in names.iter().enumerate() {
        let now = Instant::now();
        if now >= end || !keep_going() {
            break;
        }
        let share = ((end - now) / (names.len() - k) as u32).max(MIN_SHARE);
        let mut t = trial(tune_cache::BLOCK, name, "block", None);
        let reuse = kept
            .iter()
            .find(|(_, n, _)| n == name)
            .map(|(_, _, c)| c.device());
        let opened = match reuse {
            Some(d) => Ok(d),
            None => open(info, name).map(|c| c.device()),
        };
        let measured = opened.and_then(|d| {
            verify_block(&*d, end)?;
            let left = end.saturating_duration_since(Instant::now());
            Ok((rate_block(&*d, share.min(left).max(MIN_SHARE))?, d))
        });
        match measured {
            Ok((r, d)) => {
                t.verified = true;
                t.nonces_per_second = r;
                if best.as_ref().is_none_or(|b| r > b.1) {
                    best = Some((name.clone(), r, d));
                }
            }
            Err(e) => t.error = Some(e),
        }
        trials.push(t);
    }
    if let Some((name, _, _)) = &best {
        if let Some(t) = trials
            .iter_mut()
            .filter(|t| t.verified && t.variant == *name)
            .max_by(|x, y| x.nonces_per_second.total_cmp(&y.nonces_per_second))
        {
            t.chosen = true;
        }
    }
    (trials, best)
}

/// The description of a device switched to its tuned variant: the variant's own, marked as
/// the tuner's choice.
pub(crate) fn tuned_info(dev: &dyn Device, report: &TuneReport) -> DeviceInfo {
    let mut info = dev.info().clone();
    info.details.insert("kernel_source".into(), "tuned".into());
    info.details.insert(
        "tuned_nonces_per_second".into(),
        report.nonces_per_second.into(),
    );
    if let Some(v) = &report.variant {
        info.details.insert("variant".into(), v.clone().into());
    }
    if let Some(v) = &report.block_variant {
        info.details
            .insert("block_variant".into(), v.clone().into());
    }
    info
}

/// Whether the engine tunes this device on its first search: an OpenCL or wgpu device whose
/// variant is its untuned default (not the cache's, not the environment's), software drivers
/// only when `software` is set.
pub(crate) fn wants_tuning(info: &DeviceInfo, software: bool) -> bool {
    matches!(info.backend, Backend::Opencl | Backend::Wgpu)
        && (software || !info.software)
        && info.details.get("kernel_source").and_then(|v| v.as_str()) == Some("default")
}
