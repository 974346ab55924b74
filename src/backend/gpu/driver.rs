//! The one GPU search loop. A backend's [`Launcher`] submits launches and waits for their
//! results; this file decides how many counters each launch covers ([`Sizer`]), keeps
//! [`IN_FLIGHT`] launches queued so the device never waits for the host, stops on time, counts
//! the nonces each launch really tried, and turns the kernel's result words into a [`Hit`]
//! after checking that the hit lies inside its launch.
//!
//! # Pipelining
//! Launch `k + 1` is queued before the host waits for launch `k`'s result, so the device starts
//! it the moment `k` ends (both backends run one queue in order). A hit in launch `k` sets a
//! found flag in device memory that every launch of the search reads before each transform, so
//! launch `k + 1` ends early; its work-items that stopped early add the counters they did not
//! try to their launch's `skipped` word, and the host counts `limit - skipped`. Counter blocks
//! of the launches in flight are consecutive and disjoint, all inside the search's range. The
//! search returns once every launch it submitted has finished (the device is idle for the next
//! search), so a cancel or deadline is noticed within the launch in flight.
//!
//! # Launch sizing
//! On a GPU a launch's time does not grow with its size until the grid fills one wave of the
//! device (compute units × resident groups per unit), so sizing by time alone can stay far
//! below one wave. The [`Sizer`] starts at the backend's estimate of one wave, doubles the size
//! while nonces per second rise by at least [`GAIN`] (two launches per size, the better one
//! counts), and settles on the best size when they stop rising. The length — transforms per
//! state — is then set from the measured rate so that one launch takes about the target
//! time (at most doubling or halving per launch). `CURLPOW_GPU_LAUNCH_ITEMS` and
//! `CURLPOW_GPU_LAUNCH_ITERS` force either (for the sweep in `scripts/gpu-check.sh`).

use std::time::{Duration, Instant};

use crate::base::error::Error;
use crate::search::block::BlockJob;
use crate::search::control::{Counters, SearchControl};
use crate::search::device::{DeviceInfo, SearchOutcome};
use crate::search::job::{CounterRange, Hit, SearchJob};
use crate::search::launch_stats::{LaunchStats, SearchTiming};

/// Words of a launch's result: `[found, lane, counter_lo, counter_hi, skipped, 0, 0, 0]`.
pub(crate) const RESULT_WORDS: usize = 8;
/// Result words of a launch.
pub(crate) type ResultWords = [u32; RESULT_WORDS];
/// Index of the `skipped` word: counters of the launch its work-items did not try because a
/// hit had been found.
pub(crate) const SKIPPED: usize = 4;

/// Launches kept in flight.
pub(crate) const IN_FLIGHT: usize = 2;

/// The most counters one launch covers: the kernels count offsets and skipped counters in 32
/// bits.
pub(crate) const MAX_COUNTERS_PER_LAUNCH: u64 = 1 << 31;

/// A doubling of the launch size counts as a gain when nonces per second rise by this factor.
pub(crate) const GAIN: f64 = 1.05;

/// While growing, launches shorter than this share of the target keep doubling even without a
/// measured gain: they are mostly launch overhead, and their rates mostly noise.
const TINY: f64 = 0.25;

/// Full launches per measurement window (the rate of a window: its counters over its time).
const SAMPLES: u32 = 2;

/// A forced launch size is clamped to this many estimated waves of the device: a launch is not
/// interrupted, so one far past a wave would hold a search past its deadline or cancel (PoCL
/// with 10^8 work-items forced: 24 s a launch).
pub(crate) const MAX_FORCED_WAVES: usize = 16;

/// Environment variable: work-items of every launch (rounded to whole groups, clamped to the
/// device's maximum and to [`MAX_FORCED_WAVES`] waves).
pub(crate) const ITEMS_ENV: &str = "CURLPOW_GPU_LAUNCH_ITEMS";
/// Environment variable: transforms per state of every launch (clamped to the backend's
/// maximum, 7 on llvmpipe).
pub(crate) const ITERS_ENV: &str = "CURLPOW_GPU_LAUNCH_ITERS";

/// The shape of a backend's launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Work-items per group: every launch is a multiple of it.
    pub group: usize,
    /// Work-items that share one state (1; a cooperative kernel's group per state).
    pub items_per_state: usize,
    /// Nonces per counter (lanes of one state).
    pub lanes: u64,
    /// The estimated size of one full wave: where the sizing starts.
    pub wave_items: usize,
    /// The most work-items one launch may have.
    pub max_items: usize,
    /// The most transforms per state one launch may have.
    pub max_per_item: u64,
    /// How long one launch should run: it bounds how late a cancel or another device's hit is
    /// noticed.
    pub target: Duration,
    /// A launch size forced by the environment or a test.
    pub forced_items: Option<usize>,
    /// A launch length forced by the environment or a test.
    pub forced_per_item: Option<u64>,
}

impl Geometry {
    /// `forced_items` / `forced_per_item` from `CURLPOW_GPU_LAUNCH_ITEMS` /
    /// `CURLPOW_GPU_LAUNCH_ITERS`; a value that does not parse is a warning.
    pub(crate) fn with_env(mut self, warnings: &mut Vec<String>) -> Self {
        let positive = |v: &str| v.parse::<u64>().ok().filter(|&n| n > 0);
        match super::discover::env_setting(ITEMS_ENV, "a positive number of work-items", positive) {
            Ok(v) => self.forced_items = v.map(|n| n.min(usize::MAX as u64) as usize),
            Err(w) => warnings.push(w),
        }
        match super::discover::env_setting(ITERS_ENV, "a positive number of transforms", positive) {
            Ok(v) => self.forced_per_item = v,
            Err(w) => warnings.push(w),
        }
        self
    }
}

/// One launch: `items` work-items over the counters `base .. base + limit`, `per_item`
/// consecutive transforms per state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launch {
    pub base: u64,
    pub items: usize,
    pub per_item: u64,
    pub limit: u64,
}

/// What a finished launch returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LaunchResult {
    pub words: ResultWords,
    /// Device nanoseconds of the kernel, where the API profiles.
    pub kernel_ns: Option<u64>,
    /// Device nanoseconds of the result read, where the API profiles.
    pub read_ns: Option<u64>,
}

/// A backend's side of a GPU search: the long-lived session of one device, with
/// [`Launcher::slots`] result slots so that that many launches can be in flight.
pub(crate) trait Launcher {
    /// Result slots (launches that can be in flight at once).
    fn slots(&self) -> usize {
        IN_FLIGHT
    }

    /// Upload a search: its mid-state and MWM; clear the found flag. Waits for anything a
    /// failed search left in flight.
    fn begin(&mut self, job: &SearchJob) -> Result<(), Error>;

    /// [`begin`](Self::begin) for a block PoW search: the launches that follow run the
    /// backend's block kernel (the nonce layout of [`BlockJob`]) until the next `begin`. The
    /// default: the backend has none.
    fn begin_block(&mut self, job: &BlockJob) -> Result<(), Error> {
        let _ = job;
        Err(Error::Config(
            "this GPU backend has no block PoW kernel".into(),
        ))
    }

    /// Queue a launch on `slot` (not in flight) without waiting for it: clear the slot's result,
    /// run the kernel, start reading the result back.
    fn submit(&mut self, slot: usize, launch: &Launch) -> Result<(), Error>;

    /// Wait for the launch on `slot` and return its result.
    fn wait(&mut self, slot: usize) -> Result<LaunchResult, Error>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Growing,
    Settled,
}

/// The launch-size policy, kept per device across searches (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Sizer {
    geometry: Geometry,
    items: usize,
    per_item: u64,
    phase: Phase,
    /// Best rate (counters per second) and the size that reached it.
    best: Option<(f64, usize)>,
    /// Full launches measured in the current window (at the current shape): their counters
    /// and seconds. Rates are taken over a window (total counters over total time), so one
    /// launch whose completion the host saw late or early does not skew them.
    samples: u32,
    window_counters: u64,
    window_secs: f64,
    launches: u64,
}

impl Sizer {
    pub(crate) fn new(geometry: Geometry) -> Self {
        let mut s = Sizer {
            geometry,
            items: 0,
            per_item: 1,
            phase: if geometry.forced_items.is_some() {
                Phase::Settled
            } else {
                Phase::Growing
            },
            best: None,
            samples: 0,
            window_counters: 0,
            window_secs: 0.0,
            launches: 0,
        };
        let forced_cap = geometry
            .wave_items
            .max(geometry.group)
            .saturating_mul(MAX_FORCED_WAVES);
        let items = match geometry.forced_items {
            Some(n) => n.min(forced_cap),
            None => geometry.wave_items,
        };
        s.items = s.round(items as f64);
        s.per_item = s.clamp_length(geometry.forced_per_item.unwrap_or(1));
        s
    }

    /// The geometry the sizer works in.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Work-items of the next full launch.
    pub(crate) fn items(&self) -> usize {
        self.items
    }

    /// Transforms per state of the next launch.
    pub(crate) fn per_item(&self) -> u64 {
        self.per_item
    }

    /// Counters of a full launch.
    pub(crate) fn counters(&self) -> u64 {
        self.states(self.items) * self.per_item
    }

    fn states(&self, items: usize) -> u64 {
        (items / self.geometry.items_per_state.max(1)) as u64
    }

    fn forced(&self) -> bool {
        self.geometry.forced_items.is_some() && self.geometry.forced_per_item.is_some()
    }

    /// The next launch over at most `left` counters from `base`: a full one, or a short last
    /// block with only the groups that cover it.
    pub(crate) fn plan(&self, base: u64, left: u64) -> Launch {
        let g = &self.geometry;
        let full = self.counters();
        if left >= full {
            return Launch {
                base,
                items: self.items,
                per_item: self.per_item,
                limit: full,
            };
        }
        let states = left.div_ceil(self.per_item) as usize;
        let items = (states * g.items_per_state.max(1)).div_ceil(g.group) * g.group;
        Launch {
            base,
            items,
            per_item: self.per_item,
            limit: left,
        }
    }

    /// A full launch of `counters` counters took `took` of device time.
    pub(crate) fn observe(&mut self, counters: u64, took: Duration) {
        self.launches += 1;
        let secs = took.as_secs_f64().max(1e-6);
        let target = self.geometry.target.as_secs_f64();
        self.samples += 1;
        self.window_counters += counters;
        self.window_secs += secs;
        // A launch far past the target ends the window (and the growth) at once: latency
        // bounds the size.
        let too_long = secs > 4.0 * target;
        if self.samples < SAMPLES && !too_long {
            // While growing the length only shrinks, so a launch stays near the target.
            if self.phase == Phase::Growing
                && secs > 2.0 * target
                && self.geometry.forced_per_item.is_none()
            {
                self.per_item = self.clamp_length(self.per_item / 2);
            }
            return;
        }
        let rate = self.window_counters as f64 / self.window_secs;
        let mean_secs = self.window_secs / f64::from(self.samples);
        self.samples = 0;
        self.window_counters = 0;
        self.window_secs = 0.0;
        if self.forced() {
            self.record_best(rate);
            return;
        }
        if self.phase == Phase::Growing {
            let max = self.round(f64::INFINITY);
            match self.best {
                Some((best, _)) if rate < best * GAIN => {
                    // No measured gain. Launches this short are mostly overhead and noise:
                    // prefer this larger size unless it was clearly slower, and keep doubling
                    // (latency is no concern yet; the length sets it later).
                    let tiny = mean_secs < TINY * target && !too_long;
                    if tiny && rate >= best / GAIN {
                        self.best = Some((best.max(rate), self.items));
                    }
                    if tiny && self.items < max {
                        self.items = self.round(self.items as f64 * 2.0);
                    } else {
                        // The device was already full at the best size (a larger launch would
                        // only add latency).
                        self.items = self.best.map_or(self.items, |b| b.1);
                        self.phase = Phase::Settled;
                    }
                }
                _ => {
                    self.best = Some((rate, self.items));
                    if self.items >= max || too_long {
                        self.phase = Phase::Settled;
                    } else {
                        self.items = self.round(self.items as f64 * 2.0);
                    }
                }
            }
        } else {
            self.record_best(rate);
        }
        if self.phase == Phase::Settled && self.geometry.forced_per_item.is_none() {
            // Length from the measured rate: counters per launch = rate × target.
            let states = self.states(self.items).max(1) as f64;
            let want = (rate * target / states).round().max(1.0) as u64;
            let want = want.clamp(self.per_item / 2, self.per_item.saturating_mul(2));
            self.per_item = self.clamp_length(want);
        }
    }

    fn record_best(&mut self, rate: f64) {
        if self.best.is_none_or(|(b, _)| rate > b) {
            self.best = Some((rate, self.items));
        }
    }

    /// Whole groups, at least one, within the device's maximum and the counter cap.
    fn round(&self, items: f64) -> usize {
        let g = self.geometry.group.max(1);
        let per_state = self.geometry.items_per_state.max(1);
        let cap_states = MAX_COUNTERS_PER_LAUNCH / self.per_item.max(1);
        let cap_items = (cap_states as usize).saturating_mul(per_state);
        let max_groups = (self.geometry.max_items.min(cap_items) / g).max(1);
        let groups = (items / g as f64).round().clamp(1.0, max_groups as f64) as usize;
        groups * g
    }

    /// A length within `1..=max_per_item` whose launches stay under the counter cap.
    fn clamp_length(&self, per_item: u64) -> u64 {
        let states = self.states(self.items.max(self.geometry.group)).max(1);
        per_item
            .clamp(1, self.geometry.max_per_item.max(1))
            .min((MAX_COUNTERS_PER_LAUNCH / states).max(1))
    }

    /// The sizing part of a device's [`LaunchStats`].
    pub(crate) fn stats(&self) -> LaunchStats {
        let g = &self.geometry;
        LaunchStats {
            items: self.items as u64,
            transforms_per_item: self.per_item,
            items_per_state: g.items_per_state as u64,
            counters_per_launch: self.counters(),
            nonces_per_launch: self.counters() * g.lanes,
            wave_items: g.wave_items as u64,
            max_items: g.max_items as u64,
            max_transforms_per_item: g.max_per_item,
            in_flight: IN_FLIGHT as u64,
            sizing: if self.forced() {
                "forced"
            } else if self.phase == Phase::Growing {
                "growing"
            } else {
                "settled"
            }
            .into(),
            target_launch_ms: g.target.as_secs_f64() * 1e3,
            launches: self.launches,
            best_nonces_per_second: self.best.map(|(r, _)| r * g.lanes as f64),
            ..LaunchStats::default()
        }
    }
}

/// A launch in flight.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    slot: usize,
    launch: Launch,
    full: bool,
    submitted: Instant,
}

/// The launches in flight, oldest first, in a fixed ring (nothing allocated per search).
struct Ring {
    items: [Option<InFlight>; IN_FLIGHT],
    head: usize,
    len: usize,
}

impl Ring {
    fn new() -> Self {
        Ring {
            items: [None; IN_FLIGHT],
            head: 0,
            len: 0,
        }
    }

    /// The slot the next launch goes to.
    fn next_slot(&self) -> usize {
        (self.head + self.len) % IN_FLIGHT
    }

    fn push(&mut self, f: InFlight) {
        debug_assert!(self.len < IN_FLIGHT);
        self.items[f.slot] = Some(f);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<InFlight> {
        if self.len == 0 {
            return None;
        }
        let f = self.items[self.head].take();
        self.head = (self.head + 1) % IN_FLIGHT;
        self.len -= 1;
        f
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Search `range` on a device: pipelined launches sized by `sizer` until a hit, the end of the
/// range, or a stop condition (checked before each launch is submitted). Nonces are counted per
/// finished launch into slot 0 of `counters` (the device's own; one search at a time runs on
/// it). Returns how the search spent its time too.
pub(crate) fn search(
    launcher: &mut dyn Launcher,
    sizer: &mut Sizer,
    info: &DeviceInfo,
    job: &SearchJob,
    range: CounterRange,
    ctl: &SearchControl,
    counters: &Counters,
) -> Result<(SearchOutcome, SearchTiming), Error> {
    let started = Instant::now();
    launcher.begin(job)?;
    launches(launcher, sizer, info, range, ctl, counters, started)
}

/// [`search`] for a block PoW job, on the backend's block kernel
/// ([`Launcher::begin_block`]); `sizer` is the block kernel's.
pub(crate) fn search_block(
    launcher: &mut dyn Launcher,
    sizer: &mut Sizer,
    info: &DeviceInfo,
    job: &BlockJob,
    range: CounterRange,
    ctl: &SearchControl,
    counters: &Counters,
) -> Result<(SearchOutcome, SearchTiming), Error> {
    let started = Instant::now();
    launcher.begin_block(job)?;
    launches(launcher, sizer, info, range, ctl, counters, started)
}

/// The launches of a search the launcher has begun (see [`search`]).
fn launches(
    launcher: &mut dyn Launcher,
    sizer: &mut Sizer,
    info: &DeviceInfo,
    range: CounterRange,
    ctl: &SearchControl,
    counters: &Counters,
    started: Instant,
) -> Result<(SearchOutcome, SearchTiming), Error> {
    let lanes = sizer.geometry().lanes;
    let depth = launcher.slots().clamp(1, IN_FLIGHT);
    let mut timing = SearchTiming::default();
    let mut kernel_ns: Option<u64> = None;
    let mut read_ns: Option<u64> = None;
    let mut ring = Ring::new();
    let mut submitted = 0u64;
    let mut nonces = 0u64;
    let mut hit: Option<Hit> = None;
    let mut stopped_at: Option<Instant> = None;
    let mut last_done: Option<Instant> = None;
    let mut submit_time = Duration::ZERO;
    let mut wait_time = Duration::ZERO;
    loop {
        while stopped_at.is_none() && ring.len < depth && submitted < range.len {
            if ctl.should_stop() {
                stopped_at = Some(Instant::now());
                break;
            }
            let launch = sizer.plan(range.start + submitted, range.len - submitted);
            let slot = ring.next_slot();
            let t = Instant::now();
            launcher.submit(slot, &launch)?;
            submit_time += t.elapsed();
            ring.push(InFlight {
                slot,
                launch,
                full: launch.limit == sizer.counters(),
                submitted: t,
            });
            submitted += launch.limit;
            timing.launches += 1;
        }
        let Some(f) = ring.pop() else { break };
        let t = Instant::now();
        let r = launcher.wait(f.slot)?;
        let done = Instant::now();
        wait_time += done - t;
        if let Some(k) = r.kernel_ns {
            *kernel_ns.get_or_insert(0) += k;
        }
        if let Some(k) = r.read_ns {
            *read_ns.get_or_insert(0) += k;
        }
        let skipped = u64::from(r.words[SKIPPED]).min(f.launch.limit);
        let tried = f.launch.limit - skipped;
        nonces += tried * lanes;
        counters.add(0, tried * lanes);
        let found = decode(r.words, f.launch.base, f.launch.limit, lanes, info)?;
        if let Some(h) = found {
            if hit.is_none() {
                hit = Some(h);
                timing.to_hit_ms = Some(ms(done - started));
                timing.kernel_to_hit_ms = kernel_ns.map(|k| k as f64 * 1e-6);
                stopped_at.get_or_insert(done);
            }
        } else if f.full && skipped == 0 && hit.is_none() {
            // The device ran this launch from when it was submitted or the previous one ended,
            // whichever was later, until now.
            let from = last_done.map_or(f.submitted, |l| l.max(f.submitted));
            sizer.observe(f.launch.limit, done - from);
        }
        last_done = Some(done);
    }
    let end = Instant::now();
    timing.wall_ms = ms(end - started);
    timing.drain_ms = stopped_at.map_or(0.0, |s| ms(end.saturating_duration_since(s)));
    timing.submit_ms = ms(submit_time);
    timing.wait_ms = ms(wait_time);
    timing.kernel_ms = kernel_ns.map(|k| k as f64 * 1e-6);
    timing.read_ms = read_ns.map(|k| k as f64 * 1e-6);
    Ok((SearchOutcome { hit, nonces }, timing))
}

/// The hit in a launch's result words, checked to lie inside the launch.
pub(crate) fn decode(
    words: ResultWords,
    base: u64,
    limit: u64,
    lanes: u64,
    info: &DeviceInfo,
) -> Result<Option<Hit>, Error> {
    if words[0] == 0 {
        return Ok(None);
    }
    let lane = u64::from(words[1]);
    let counter = u64::from(words[2]) | (u64::from(words[3]) << 32);
    if lane >= lanes || counter < base || counter - base >= limit {
        return Err(Error::Backend {
            backend: info.backend,
            device: info.id.clone(),
            message: format!(
                "kernel reported counter {counter} lane {lane}, outside its launch \
                 (counters {base}..{}, {lanes} lanes)",
                base.saturating_add(limit)
            ),
        });
    }
    Ok(Some(Hit {
        counter,
        lane: lane as usize,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::device::{Backend, DeviceKind};

    fn geometry() -> Geometry {
        Geometry {
            group: 64,
            items_per_state: 1,
            lanes: 32,
            wave_items: 100,
            max_items: 6400,
            max_per_item: 16,
            target: Duration::from_millis(8),
            forced_items: None,
            forced_per_item: None,
        }
    }

    /// A GPU-like device: a launch takes `overhead` plus one transform time per wave of
    /// `wave` work-items (rounded up: below one wave the time does not shrink).
    fn model_time(items: usize, per_item: u64, wave: usize) -> Duration {
        let waves = items.div_ceil(wave) as u64;
        Duration::from_micros(20 + 500 * waves * per_item)
    }

    #[test]
    fn sizes_are_whole_groups_within_the_limits() {
        let s = Sizer::new(geometry());
        assert_eq!(s.items(), 128, "the wave estimate rounded to whole groups");
        assert_eq!(s.per_item(), 1);
        let mut g = geometry();
        g.wave_items = 10;
        assert_eq!(Sizer::new(g).items(), 64, "at least one group");
        g.wave_items = 1 << 40;
        assert_eq!(Sizer::new(g).items(), 6400, "at most the maximum");
        g.forced_items = Some(1000);
        g.forced_per_item = Some(100);
        let s = Sizer::new(g);
        assert_eq!((s.items(), s.per_item()), (1024, 16), "forced, clamped");
        assert_eq!(s.stats().sizing, "forced");
    }

    #[test]
    fn grows_to_fill_the_device_then_sets_the_length() {
        // The device holds 2048 work-items at once: the sizer must grow from its wave estimate
        // of 128 to 2048 and stop growing when more items only take longer.
        let mut s = Sizer::new(geometry());
        for _ in 0..40 {
            let t = model_time(s.items(), s.per_item(), 2048);
            s.observe(s.counters(), t);
        }
        let st = s.stats();
        assert_eq!(st.sizing, "settled");
        // 4096 (two waves of 1 ms launches, as fast) may win over 2048: both are full.
        assert!([2048, 4096].contains(&s.items()), "{}", s.items());
        // Length: one launch ~ the 8 ms target at 0.5 ms per transform and wave.
        let waves = s.items() as u64 / 2048;
        let launch_ms = waves * s.per_item() / 2;
        assert!(
            (6..=9).contains(&launch_ms),
            "{} x {}",
            s.items(),
            s.per_item()
        );
        assert!(st.best_nonces_per_second.unwrap() > 0.0);
    }

    #[test]
    fn a_device_already_full_at_the_start_stays_there() {
        let mut s = Sizer::new(geometry());
        for _ in 0..10 {
            let t = model_time(s.items(), s.per_item(), 64);
            s.observe(s.counters(), t);
        }
        assert_eq!(
            s.items(),
            128,
            "doubling gained nothing: back to the best size"
        );
        assert_eq!(s.stats().sizing, "settled");
    }

    #[test]
    fn tiny_launches_keep_growing_without_a_measured_gain() {
        // Time proportional to size (no gain from doubling) but launches of microseconds: the
        // size still grows, to the largest size whose launches stay tiny or the maximum.
        let mut s = Sizer::new(geometry());
        for _ in 0..40 {
            let t = Duration::from_nanos(100 * s.items() as u64 * s.per_item());
            s.observe(s.counters(), t);
        }
        assert_eq!(s.stats().sizing, "settled");
        assert_eq!(s.items(), 6400, "grown to the maximum");
    }

    #[test]
    fn slow_launches_shorten_while_growing() {
        let mut g = geometry();
        g.forced_per_item = None;
        let mut s = Sizer::new(g);
        s.per_item = 16;
        s.observe(s.counters(), Duration::from_millis(20));
        assert_eq!(s.per_item(), 8, "halved: more than twice the target");
        s.observe(s.counters(), Duration::from_millis(100));
        assert_eq!(
            s.stats().sizing,
            "settled",
            "far past the target: growth ends"
        );
    }

    #[test]
    fn a_forced_size_far_past_a_wave_is_clamped_so_a_deadline_holds() {
        let mut g = geometry();
        g.max_items = usize::MAX;
        g.forced_items = Some(100_000_000);
        let s = Sizer::new(g);
        assert_eq!(
            s.items(),
            100 * MAX_FORCED_WAVES,
            "16 waves of the estimate"
        );
        assert_eq!(s.stats().sizing, "settled");
    }

    #[test]
    fn forced_size_keeps_its_size_and_adapts_the_length() {
        let mut g = geometry();
        g.forced_items = Some(640);
        let mut s = Sizer::new(g);
        for _ in 0..10 {
            let t = model_time(s.items(), s.per_item(), 64000);
            s.observe(s.counters(), t);
        }
        assert_eq!(s.items(), 640);
        assert!(s.per_item() > 8, "{}", s.per_item());
    }

    #[test]
    fn cooperative_states_count_groups_of_items() {
        let mut g = geometry();
        g.group = 128;
        g.items_per_state = 32;
        g.wave_items = 1280;
        let s = Sizer::new(g);
        assert_eq!(s.items(), 1280);
        assert_eq!(
            s.counters(),
            40,
            "40 states of 32 items, one transform each"
        );
        let l = s.plan(7, 3);
        assert_eq!(
            (l.items, l.limit),
            (128, 3),
            "three states fit one group of four"
        );
        let l = s.plan(7, 5);
        assert_eq!((l.items, l.limit), (256, 5), "five need two groups");
    }

    /// A pipelined launcher: launches queue up; `wait` returns them in order. Hits at a given
    /// counter and lane (or a bogus counter); a launch submitted after the hit's launch ends
    /// early, reporting every counter skipped.
    struct Fake {
        hit_at: Option<(u64, u32)>,
        bogus: bool,
        launches: Vec<Launch>,
        queued: [Option<Launch>; IN_FLIGHT],
        in_flight: usize,
        max_in_flight: usize,
        flag: bool,
    }

    impl Fake {
        fn new(hit_at: Option<(u64, u32)>) -> Self {
            Fake {
                hit_at,
                bogus: false,
                launches: Vec::new(),
                queued: [None; IN_FLIGHT],
                in_flight: 0,
                max_in_flight: 0,
                flag: false,
            }
        }
    }

    impl Launcher for Fake {
        fn begin(&mut self, _: &SearchJob) -> Result<(), Error> {
            assert_eq!(self.in_flight, 0, "a search began with launches in flight");
            self.flag = false;
            Ok(())
        }
        fn submit(&mut self, slot: usize, l: &Launch) -> Result<(), Error> {
            assert!(
                self.queued[slot].is_none(),
                "slot {slot} reused while in flight"
            );
            self.queued[slot] = Some(*l);
            self.launches.push(*l);
            self.in_flight += 1;
            self.max_in_flight = self.max_in_flight.max(self.in_flight);
            Ok(())
        }
        fn wait(&mut self, slot: usize) -> Result<LaunchResult, Error> {
            let l = self.queued[slot].take().expect("waited on an empty slot");
            self.in_flight -= 1;
            let mut words = [0u32; RESULT_WORDS];
            if self.flag {
                words[SKIPPED] = l.limit as u32;
            } else if self.bogus {
                words[..4].copy_from_slice(&[1, 3, u32::MAX, u32::MAX]);
            } else if let Some((c, lane)) = self.hit_at {
                if c >= l.base && c < l.base + l.limit {
                    self.flag = true;
                    words[..4].copy_from_slice(&[1, lane, c as u32, (c >> 32) as u32]);
                    // Counters after the hit in this launch were skipped.
                    words[SKIPPED] = (l.base + l.limit - c - 1) as u32;
                }
            }
            Ok(LaunchResult {
                words,
                ..Default::default()
            })
        }
    }

    fn run(fake: &mut Fake, range: CounterRange) -> Result<(SearchOutcome, SearchTiming), Error> {
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let job = SearchJob::new(&"9".repeat(2673).parse().unwrap(), 1).unwrap();
        let ctl = SearchControl::new(None, None);
        let counters = Counters::new(1);
        let mut sizer = Sizer::new(geometry());
        let r = search(fake, &mut sizer, &info, &job, range, &ctl, &counters);
        if let Ok((out, _)) = &r {
            assert_eq!(counters.sum(), out.nonces, "counted as reported");
        }
        r
    }

    #[test]
    fn launches_tile_the_range_two_in_flight_and_the_hit_is_decoded() {
        let mut f = Fake::new(Some((1000 + 300, 5)));
        let range = CounterRange {
            start: 1000,
            len: 10_000,
        };
        let (out, timing) = run(&mut f, range).unwrap();
        assert_eq!(
            out.hit,
            Some(Hit {
                counter: 1300,
                lane: 5
            })
        );
        assert_eq!(f.max_in_flight, 2, "pipelined");
        assert_eq!(f.in_flight, 0, "drained before returning");
        let mut next = 1000;
        for l in &f.launches {
            assert_eq!(l.base, next, "contiguous and disjoint");
            assert_eq!(l.items % 64, 0);
            assert!(l.limit <= l.items as u64 * l.per_item);
            next += l.limit;
        }
        assert!(next <= range.start + range.len);
        // Tried: every counter up to and including the hit; the launch after it skipped all.
        assert_eq!(out.nonces, (1300 - 1000 + 1) * 32);
        assert_eq!(timing.launches, f.launches.len() as u64);
        assert!(timing.to_hit_ms.is_some());
    }

    #[test]
    fn a_short_range_ends_with_a_partial_launch() {
        let mut f = Fake::new(None);
        let (out, _) = run(&mut f, CounterRange { start: 0, len: 300 }).unwrap();
        assert_eq!(out.hit, None);
        assert_eq!(
            f.launches,
            vec![
                Launch {
                    base: 0,
                    items: 128,
                    per_item: 1,
                    limit: 128
                },
                Launch {
                    base: 128,
                    items: 128,
                    per_item: 1,
                    limit: 128
                },
                Launch {
                    base: 256,
                    items: 64,
                    per_item: 1,
                    limit: 44
                }
            ]
        );
        assert_eq!(out.nonces, 300 * 32);
    }

    #[test]
    fn a_stopped_search_drains_and_counts() {
        let mut f = Fake::new(None);
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let job = SearchJob::new(&"9".repeat(2673).parse().unwrap(), 1).unwrap();
        let token = crate::search::control::CancelToken::new();
        token.cancel();
        let ctl = SearchControl::new(Some(token), None);
        let counters = Counters::new(1);
        let mut sizer = Sizer::new(geometry());
        let (out, _) = search(
            &mut f,
            &mut sizer,
            &info,
            &job,
            CounterRange::ALL,
            &ctl,
            &counters,
        )
        .unwrap();
        assert_eq!(
            out,
            SearchOutcome {
                hit: None,
                nonces: 0
            }
        );
        assert!(f.launches.is_empty(), "stop is checked before each launch");
    }

    #[test]
    fn a_hit_outside_its_launch_is_a_fault() {
        let mut f = Fake::new(None);
        f.bogus = true;
        match run(&mut f, CounterRange { start: 0, len: 100 }) {
            Err(Error::Backend { message, .. }) => assert!(message.contains("outside")),
            other => panic!("{other:?}"),
        }
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let mut w = [0u32; RESULT_WORDS];
        w[..4].copy_from_slice(&[1, 40, 5, 0]);
        assert!(decode(w, 0, 10, 32, &info).is_err(), "lane out of range");
    }
}
