//! The launch-size policy ([`Sizer`]), kept per device and kernel across searches.
//!
//! On a GPU a launch's time does not grow with its size until the grid fills one wave of the
//! device (compute units × resident groups per unit), so sizing by time alone can stay far
//! below one wave. The [`Sizer`] starts at the backend's estimate of one wave, doubles the size
//! while nonces per second rise by at least [`GAIN`] (two launches per size, the better one
//! counts), and settles on the best size when they stop rising. The length — transforms per
//! state — is then set from the measured rate so that one launch takes about the target
//! time (at most doubling or halving per launch). `CURLPOW_GPU_LAUNCH_ITEMS` and
//! `CURLPOW_GPU_LAUNCH_ITERS` force either (for the sweep in `scripts/gpu-check.sh`).

use std::time::Duration;

use super::geometry::{Geometry, MAX_COUNTERS_PER_LAUNCH, MAX_FORCED_WAVES};
use super::launcher::{Launch, IN_FLIGHT};
use crate::search::launch_stats::LaunchStats;

/// A doubling of the launch size counts as a gain when nonces per second rise by this factor.
pub(crate) const GAIN: f64 = 1.05;

/// While growing, launches shorter than this share of the target keep doubling even without a
/// measured gain: they are mostly launch overhead, and their rates mostly noise.
const TINY: f64 = 0.25;

/// Full launches per measurement window (the rate of a window: its counters over its time).
const SAMPLES: u32 = 2;

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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::backend::gpu) fn geometry() -> Geometry {
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
}
