//! The progress line on stderr while searches run (only when stderr is a terminal).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::Engine;

pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Progress {
    pub fn start(engine: Engine, total: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            let start = Instant::now();
            let base = engine.nonces_tried();
            let hits = || -> u64 { engine.device_report().iter().map(|d| d.stats.hits).sum() };
            let base_hits = hits();
            while !s.load(Ordering::Relaxed) {
                let n = engine.nonces_tried().saturating_sub(base);
                let rate = n as f64 / start.elapsed().as_secs_f64().max(1e-3);
                // Each transaction's search ends with one verified hit; never more than the total.
                let done = hits().saturating_sub(base_hits).min(total as u64);
                bar.set_message(format!(
                    "{done}/{total} transaction{} done: {n} nonces tried, {:.2} M nonces/s",
                    if total == 1 { "" } else { "s" },
                    rate / 1e6
                ));
                bar.tick();
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Progress { stop, thread }
    }

    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}
