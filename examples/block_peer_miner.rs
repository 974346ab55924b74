//! The block PoW's peer, timed: iota-pow 1.0.0-rc.2's `Miner` on pseudo-random messages, every
//! nonce checked by its own `PowScorer`. `docs/block-pow.md` compares it with
//! `curlpow block-pow` on the same messages.
//!
//! ```text
//! cargo run --release --example block_peer_miner -- [MESSAGES] [LEN] [SCORE] [WORKERS] [OUT]
//! cargo run --release --example block_peer_miner -- check SCORE FILE
//! ```
//! Defaults: 100 messages of 300 bytes, score 4000, 2 workers. With `OUT`, the messages (their
//! 8 nonce bytes zero) are written there one hex line each, for `curlpow block-pow` to read.
//! `check` scores each hex line of FILE (`curlpow block-pow`'s output) with the peer's
//! `PowScorer` and fails unless every one reaches SCORE.
//! The nonces each miner tried are counted from where its workers start: worker `i` of `w`
//! starts at `i · (2^64 / w)` and steps through its range, so the winner's offset from its
//! start is its count, and the others ran as long.

use std::time::Instant;

use iota_pow_rc::miner::MinerBuilder;
use iota_pow_rc::score::PowScorer;

/// Score every hex line of `path` with the peer's scorer; exit 1 unless all reach `score`.
fn check(score: f64, path: &str) {
    let text = std::fs::read_to_string(path).expect("read the file");
    let mut scorer = PowScorer::new();
    let (mut lines, mut valid, mut lowest) = (0, 0, f64::INFINITY);
    for line in text.lines().filter(|l| !l.is_empty()) {
        let bytes: Vec<u8> = (0..line.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&line[i..i + 2], 16).expect("hex"))
            .collect();
        let s = scorer.score(&bytes);
        lines += 1;
        valid += usize::from(s >= score);
        lowest = lowest.min(s);
    }
    println!(
        "{valid} of {lines} lines reach score {score} by iota-pow's PowScorer (lowest {lowest:.1})"
    );
    if valid != lines || lines == 0 {
        std::process::exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("check") {
        let score = args
            .get(1)
            .and_then(|s| s.parse().ok())
            .expect("check SCORE FILE");
        check(score, args.get(2).expect("check SCORE FILE"));
        return;
    }
    let arg = |i: usize, d: u64| args.get(i).map_or(d, |s| s.parse().expect("a number"));
    let (count, len, score, workers) = (arg(0, 100), arg(1, 300), arg(2, 4000), arg(3, 2));
    let out = args.get(4);
    let messages: Vec<Vec<u8>> = (0..count)
        .map(|k| {
            let mut m: Vec<u8> = random_bytes(0x5EED_0000 + k)
                .take(len as usize - 8)
                .collect();
            m.extend_from_slice(&[0; 8]);
            m
        })
        .collect();
    if let Some(path) = out {
        let hex: String = messages
            .iter()
            .map(|m| m.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
            .collect();
        std::fs::write(path, hex).expect("write the messages");
    }
    let miner = MinerBuilder::new()
        .with_num_workers(workers as usize)
        .finish();
    let width = u64::MAX / workers;
    let mut scorer = PowScorer::new();
    let mut tried = 0u128;
    let t0 = Instant::now();
    for m in &messages {
        let head = &m[..m.len() - 8];
        let nonce = miner.nonce(head, score as u32).expect("a nonce");
        let mut done = head.to_vec();
        done.extend_from_slice(&nonce.to_le_bytes());
        assert!(scorer.score(&done) >= score as f64, "an invalid nonce");
        // 64 hashes a batch: the winner's batches, on every worker.
        tried += u128::from(workers) * (u128::from(nonce % width) / 64 + 1) * 64;
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "iota-pow 1.0.0-rc.2 Miner, {workers} workers: {count} messages of {len} bytes at score \
         {score} in {secs:.2} s ({:.3} s each), {tried} nonces, {:.3} M nonces/s, {:.3} M/s per \
         worker; every nonce valid by its PowScorer",
        secs / count as f64,
        tried as f64 / secs / 1e6,
        tried as f64 / secs / 1e6 / workers as f64,
    );
}

/// A deterministic byte stream (xorshift64), so every run mines the same messages.
fn random_bytes(seed: u64) -> impl Iterator<Item = u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::from_fn(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        Some((x >> 32) as u8)
    })
}
