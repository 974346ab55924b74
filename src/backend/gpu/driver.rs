//! The one GPU search loop ([`search`]). A backend's [`Launcher`] submits launches and waits
//! for their results; this loop asks the job's [`Sizer`] how many counters each launch covers,
//! keeps [`IN_FLIGHT`] launches queued ([`Ring`]) so the device never waits for the host, stops
//! on time, counts the nonces each launch really tried, and turns the kernel's result words into
//! a [`Hit`] ([`decode`]). Transaction and block PoW jobs run through it alike.
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

use std::time::{Duration, Instant};

use super::decode::decode;
use super::launcher::{GpuJob, Launcher, IN_FLIGHT, SKIPPED};
use super::ring::{PendingLaunch, Ring};
use super::sizer::Sizer;
use crate::base::error::Error;
use crate::search::control::{Counters, SearchControl};
use crate::search::device::{DeviceInfo, SearchOutcome};
use crate::search::launch_stats::SearchTiming;
use crate::search::nonce::{CounterRange, Hit};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Search `range` for `job` on a device: pipelined launches sized by the launcher's sizer for
/// the job ([`Launcher::sizer`], updated as the launches are measured, even when the search
/// fails) until a hit, the end of the range, or a stop condition (checked before each launch is
/// submitted). Nonces are counted per finished launch into slot 0 of `counters` (the device's
/// own; one search at a time runs on it). Returns how the search spent its time too.
pub(crate) fn search(
    launcher: &mut dyn Launcher,
    info: &DeviceInfo,
    job: GpuJob<'_>,
    range: CounterRange,
    ctl: &SearchControl,
    counters: &Counters,
) -> Result<(SearchOutcome, SearchTiming), Error> {
    let started = Instant::now();
    launcher.begin(job)?;
    // The launcher keeps the sizer; the launches borrow both.
    let mut sizer = launcher.sizer(job).clone();
    let r = launches(launcher, &mut sizer, info, range, ctl, counters, started);
    *launcher.sizer(job) = sizer;
    r
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
        while stopped_at.is_none() && ring.len() < depth && submitted < range.len {
            if ctl.should_stop() {
                stopped_at = Some(Instant::now());
                break;
            }
            let launch = sizer.plan(range.start + submitted, range.len - submitted);
            let slot = ring.next_slot();
            let t = Instant::now();
            launcher.submit(slot, &launch)?;
            submit_time += t.elapsed();
            ring.push(PendingLaunch {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::device::{Backend, DeviceKind};

    use super::super::sizer::tests::geometry;
    use crate::backend::gpu::launcher::{Launch, LaunchResult, RESULT_WORDS};
    use crate::search::block::BlockJob;
    use crate::search::search_job::SearchJob;

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
        /// The sizers of the search and block kernels.
        sizers: [Sizer; 2],
        /// Whether the last search began as a block PoW one.
        block: bool,
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
                sizers: [Sizer::new(geometry()), Sizer::new(geometry())],
                block: false,
            }
        }
    }

    impl Launcher for Fake {
        fn begin(&mut self, job: GpuJob<'_>) -> Result<(), Error> {
            assert_eq!(self.in_flight, 0, "a search began with launches in flight");
            self.flag = false;
            self.block = job.is_block();
            Ok(())
        }
        fn sizer(&mut self, job: GpuJob<'_>) -> &mut Sizer {
            &mut self.sizers[usize::from(job.is_block())]
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

    fn transaction() -> SearchJob {
        SearchJob::new(&"9".repeat(2673).parse().unwrap(), 1).unwrap()
    }

    fn run_job(
        fake: &mut Fake,
        job: GpuJob<'_>,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<(SearchOutcome, SearchTiming), Error> {
        let info = DeviceInfo::new("fake:0", Backend::Wgpu, "fake", DeviceKind::Gpu);
        let counters = Counters::new(1);
        let r = search(fake, &info, job, range, ctl, &counters);
        if let Ok((out, _)) = &r {
            assert_eq!(counters.sum(), out.nonces, "counted as reported");
        }
        r
    }

    fn run(fake: &mut Fake, range: CounterRange) -> Result<(SearchOutcome, SearchTiming), Error> {
        let job = transaction();
        let ctl = SearchControl::new(None, None);
        run_job(fake, GpuJob::Transaction(&job), range, &ctl)
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
        let job = transaction();
        let token = crate::search::control::CancelToken::new();
        token.cancel();
        let ctl = SearchControl::new(Some(token), None);
        let (out, _) = run_job(&mut f, GpuJob::Transaction(&job), CounterRange::ALL, &ctl).unwrap();
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
    }

    #[test]
    fn each_job_runs_on_its_own_kernel_and_keeps_its_sizer_across_searches() {
        let mut f = Fake::new(Some((5000, 1)));
        let block = BlockJob::new(&[7u8; 40], 1.0).unwrap();
        let ctl = SearchControl::new(None, None);
        let range = CounterRange {
            start: 0,
            len: 10_000,
        };
        let (out, _) = run_job(&mut f, GpuJob::Block(&block), range, &ctl).unwrap();
        assert!(f.block, "began on the block kernel");
        assert_eq!(out.hit.map(|h| h.counter), Some(5000));
        let launches = |f: &Fake| f.sizers.each_ref().map(|s| s.stats().launches);
        let [search, block_launches] = launches(&f);
        assert!(block_launches > 0, "the block sizer measured the launches");
        assert_eq!(search, 0, "the search's sizer untouched");
        let (out, _) = run(&mut f, range).unwrap();
        assert!(!f.block, "began on the search kernel");
        assert_eq!(out.hit.map(|h| h.counter), Some(5000));
        let [search, block] = launches(&f);
        assert!(search > 0, "kept after the search");
        assert_eq!(block, block_launches);
    }
}
