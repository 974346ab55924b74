//! PoW on the example transaction with a time limit, then the devices' statistics.
//!
//! `cargo run --release --example pow [MWM]`

use std::time::Duration;

use curlpow::{Engine, PowOptions, Transaction};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mwm: usize = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => 14,
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/transaction.trytes");
    let tx: Transaction = std::fs::read_to_string(path)?.parse()?;

    let engine = Engine::new()?;
    let opts = PowOptions::mwm(mwm).timeout(Duration::from_secs(60));
    let done = engine.pow_with(&tx, &opts)?;
    println!("{}", done.transaction.to_trytes());
    eprintln!(
        "weight {} after {} nonces on {} in {:.1?} ({:.1} M nonces/s)",
        done.transaction.weight(),
        done.report.nonces,
        done.report.device,
        done.report.elapsed,
        done.report.nonces_per_second() / 1e6
    );
    for d in engine.device_report() {
        eprintln!(
            "{:<12} {} searches, {} hits, {:.3} s busy",
            d.info.id, d.stats.searches, d.stats.hits, d.stats.busy_seconds
        );
    }
    Ok(())
}
