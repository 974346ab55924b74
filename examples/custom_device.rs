//! A device of your own beside the built-in ones: here a "remote" device that searches with a
//! plain scalar loop (a stand-in for an FPGA, a remote worker or a new API). The engine gives it
//! leases like any device, verifies every nonce it returns on the host, and retries elsewhere if
//! it fails.
//!
//! `cargo run --release --example custom_device`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use curlpow::device::{CounterRange, Device, Hit, SearchControl, SearchJob, SearchOutcome};
use curlpow::{device::DeviceInfo, Backend, DeviceKind, Engine, Error, Selection};

/// Tries one lane per counter with the scalar reference transform: slow, and obviously right.
struct ScalarDevice {
    info: DeviceInfo,
    nonces: AtomicU64,
}

impl Device for ScalarDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let mut tried = 0;
        for counter in range.start..range.start.saturating_add(range.len) {
            if ctl.should_stop() {
                break;
            }
            // Lane 0 of this counter: the nonce layout is the same for every device.
            let hit = Hit { counter, lane: 0 };
            tried += 1;
            if job.verify(hit).is_some() {
                self.nonces.fetch_add(tried, Ordering::Relaxed);
                return Ok(SearchOutcome {
                    hit: Some(hit),
                    nonces: tried,
                });
            }
        }
        self.nonces.fetch_add(tried, Ordering::Relaxed);
        Ok(SearchOutcome {
            hit: None,
            nonces: tried,
        })
    }

    fn nonces_tried(&self) -> u64 {
        self.nonces.load(Ordering::Relaxed)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mine = Arc::new(ScalarDevice {
        info: DeviceInfo::new(
            "scalar:0",
            Backend::Custom,
            "scalar loop",
            DeviceKind::Other,
        )
        .with_lanes(1)
        .with_kernel("reference")
        .with_declared_speed(2e4),
        nonces: AtomicU64::new(0),
    });
    let engine = Engine::builder().add_device(mine).build()?;
    let tx: curlpow::Transaction = "9".repeat(2673).parse()?;
    let only_mine = Selection {
        devices: vec!["scalar:0".into()],
        ..Default::default()
    };
    let done = engine.pow_with(&tx, &curlpow::PowOptions::mwm(6).selection(only_mine))?;
    println!(
        "MWM 6 on {} after {} nonces: weight {}",
        done.report.device,
        done.report.nonces,
        done.transaction.weight()
    );
    Ok(())
}
