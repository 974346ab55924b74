//! The one GPU search loop. A backend's [`Launcher`] runs launches; this file decides how many
//! counters each launch covers, stops on time, counts nonces, and turns the kernel's result
//! words into a [`Hit`] after checking that the hit lies inside its launch.

use std::time::{Duration, Instant};

use crate::control::{Counters, SearchControl};
use crate::device::{DeviceInfo, SearchOutcome};
use crate::error::Error;
use crate::search::{CounterRange, Hit, SearchJob};

/// Result words of a launch: `[found, lane, counter_lo, counter_hi]`.
pub(crate) type ResultWords = [u32; 4];

/// The shape of a backend's launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Work-items per group: every launch is a multiple of it.
    pub group: usize,
    /// Counters one work-item covers per launch (transforms per work-item).
    pub per_item: u64,
    /// Nonces per counter (lanes of one work-item's state).
    pub lanes: u64,
    /// Work-items of the first launch.
    pub initial_items: usize,
    /// The most work-items one launch may have.
    pub max_items: usize,
    /// How long one launch should run: it bounds how late a cancel or another device's hit is
    /// noticed.
    pub target: Duration,
}

/// A backend's side of a GPU search: the long-lived session of one device.
pub(crate) trait Launcher {
    /// Upload a search: its mid-state and MWM; clear the result.
    fn begin(&mut self, job: &SearchJob) -> Result<(), Error>;

    /// Run one launch of `items` work-items (a multiple of the group size) over the counters
    /// `base .. base + limit` (`limit <= items * per_item`; work-items past `limit` try
    /// nothing), wait for it, and return its result words.
    fn launch(&mut self, base: u64, items: usize, limit: u64) -> Result<ResultWords, Error>;
}

/// The launch-size policy, kept per device across searches: full launches are scaled toward the
/// target duration, at most doubling or halving per launch (one slow launch, say a preempted
/// one, must not collapse the size), always a whole number of groups within the limits.
#[derive(Debug, Clone)]
pub(crate) struct Sizer {
    geometry: Geometry,
    items: usize,
}

impl Sizer {
    pub(crate) fn new(geometry: Geometry) -> Self {
        let mut s = Sizer {
            geometry,
            items: geometry.initial_items,
        };
        s.items = s.round(s.items as f64);
        s
    }

    /// Work-items of the next full launch.
    pub(crate) fn items(&self) -> usize {
        self.items
    }

    /// The geometry the sizer works in.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// A full launch of the current size took `took`.
    pub(crate) fn observe(&mut self, took: Duration) {
        let ratio =
            (self.geometry.target.as_secs_f64() / took.as_secs_f64().max(1e-6)).clamp(0.5, 2.0);
        self.items = self.round(self.items as f64 * ratio);
    }

    fn round(&self, items: f64) -> usize {
        let g = self.geometry.group.max(1);
        let max_groups = (self.geometry.max_items / g).max(1);
        let groups = (items / g as f64).round().clamp(1.0, max_groups as f64) as usize;
        groups * g
    }
}

/// Search `range` on a device: launches sized by `sizer` until a hit, the end of the range, or
/// a stop condition (checked between launches). Nonces are counted per launch into slot 0 of
/// `counters` (the device's own; one search at a time runs on it).
pub(crate) fn search(
    launcher: &mut dyn Launcher,
    sizer: &mut Sizer,
    info: &DeviceInfo,
    job: &SearchJob,
    range: CounterRange,
    ctl: &SearchControl,
    counters: &Counters,
) -> Result<SearchOutcome, Error> {
    launcher.begin(job)?;
    let geometry = *sizer.geometry();
    let mut done = 0u64;
    let mut nonces = 0u64;
    while done < range.len && !ctl.should_stop() {
        let items = sizer.items();
        let full = items as u64 * geometry.per_item;
        let limit = full.min(range.len - done);
        // A short last block needs only the groups that cover it.
        let items = if limit < full {
            (limit.div_ceil(geometry.per_item) as usize).div_ceil(geometry.group) * geometry.group
        } else {
            items
        };
        let base = range.start + done;
        let t0 = Instant::now();
        let words = launcher.launch(base, items, limit)?;
        let took = t0.elapsed();
        done += limit;
        nonces += limit * geometry.lanes;
        counters.add(0, limit * geometry.lanes);
        if let Some(hit) = decode(words, base, limit, geometry.lanes, info)? {
            return Ok(SearchOutcome {
                hit: Some(hit),
                nonces,
            });
        }
        if limit == full {
            sizer.observe(took);
        }
    }
    Ok(SearchOutcome { hit: None, nonces })
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
    use crate::device::{Backend, DeviceKind};

    fn geometry() -> Geometry {
        Geometry {
            group: 64,
            per_item: 2,
            lanes: 32,
            initial_items: 100,
            max_items: 6400,
            target: Duration::from_millis(8),
        }
    }

    #[test]
    fn sizes_are_whole_groups_scaled_toward_the_target() {
        let ms = Duration::from_millis;
        let mut s = Sizer::new(geometry());
        assert_eq!(s.items(), 128, "rounded to whole groups");
        s.observe(ms(2));
        assert_eq!(s.items(), 256, "at most doubled");
        s.observe(ms(10));
        assert_eq!(s.items(), 192, "scaled by 8/10, rounded");
        s.observe(ms(1000));
        assert_eq!(s.items(), 128, "at most halved");
        for _ in 0..20 {
            s.observe(ms(1));
        }
        assert_eq!(s.items(), 6400, "capped");
        for _ in 0..20 {
            s.observe(ms(100));
        }
        assert_eq!(s.items(), 64, "at least one group");
    }

    /// A launcher that hits at a given counter and lane, or reports a bogus hit.
    struct Fake {
        hit_at: Option<(u64, u32)>,
        launches: Vec<(u64, usize, u64)>,
    }

    impl Launcher for Fake {
        fn begin(&mut self, _: &SearchJob) -> Result<(), Error> {
            Ok(())
        }
        fn launch(&mut self, base: u64, items: usize, limit: u64) -> Result<ResultWords, Error> {
            self.launches.push((base, items, limit));
            Ok(match self.hit_at {
                Some((c, lane)) if c >= base && c < base + limit || c == u64::MAX => {
                    [1, lane, c as u32, (c >> 32) as u32]
                }
                _ => [0; 4],
            })
        }
    }

    fn run(fake: &mut Fake, range: CounterRange) -> Result<SearchOutcome, Error> {
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let job = SearchJob::new(&"9".repeat(2673).parse().unwrap(), 1).unwrap();
        let ctl = SearchControl::new(None, None);
        let counters = Counters::new(1);
        let mut sizer = Sizer::new(geometry());
        search(fake, &mut sizer, &info, &job, range, &ctl, &counters)
    }

    #[test]
    fn launches_tile_the_range_and_the_hit_is_decoded() {
        let mut f = Fake {
            hit_at: Some((1000 + 300, 5)),
            launches: Vec::new(),
        };
        let out = run(
            &mut f,
            CounterRange {
                start: 1000,
                len: 10_000,
            },
        )
        .unwrap();
        assert_eq!(
            out.hit,
            Some(Hit {
                counter: 1300,
                lane: 5
            })
        );
        let mut next = 1000;
        for &(base, items, limit) in &f.launches {
            assert_eq!(base, next, "contiguous");
            assert_eq!(items % 64, 0);
            assert!(limit <= items as u64 * 2);
            next += limit;
        }
        assert_eq!(out.nonces, (next - 1000) * 32);
    }

    #[test]
    fn a_short_range_ends_with_a_partial_launch() {
        let mut f = Fake {
            hit_at: None,
            launches: Vec::new(),
        };
        let out = run(&mut f, CounterRange { start: 0, len: 300 }).unwrap();
        assert_eq!(out.hit, None);
        assert_eq!(f.launches, vec![(0, 128, 256), (256, 64, 44)]);
        assert_eq!(out.nonces, 300 * 32);
    }

    #[test]
    fn a_hit_outside_its_launch_is_a_fault() {
        let mut f = Fake {
            hit_at: Some((u64::MAX, 3)),
            launches: Vec::new(),
        };
        match run(&mut f, CounterRange { start: 0, len: 100 }) {
            Err(Error::Backend { message, .. }) => assert!(message.contains("outside")),
            other => panic!("{other:?}"),
        }
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        assert!(
            decode([1, 40, 5, 0], 0, 10, 32, &info).is_err(),
            "lane out of range"
        );
    }
}
