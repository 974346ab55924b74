//! The block PoW beside its peers: `b1t6` and the score against iota-crypto 0.23.2 (its
//! `b1t6`, `Blake2b256` and `CurlP`, put together as TIP-12 says) and against iota-pow
//! 1.0.0-rc.2's `PowScorer`; the engine's nonces valid by that scorer, and that miner's nonces
//! valid by curlpow's.

use crypto::encoding::ternary::{b1t6 as peer_b1t6, Btrit, T1B1Buf, TritBuf};
use crypto::hashes::blake2b::Blake2b256;
use crypto::hashes::ternary::curl_p::CurlP;
use crypto::hashes::Digest;
use curlpow::block;
use iota_pow_rc::miner::MinerBuilder;
use iota_pow_rc::score::PowScorer;

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    curlpow::internal::xorshift::bytes(seed).take(len).collect()
}

fn trits_of(t: &TritBuf<T1B1Buf>) -> Vec<i8> {
    t.iter().map(i8::from).collect()
}

/// The PoW hash's trailing zeros from iota-crypto's parts.
fn peer_zeros(message: &[u8]) -> usize {
    let (head, nonce) = message.split_at(message.len() - 8);
    let digest = Blake2b256::digest(head);
    let mut block = peer_b1t6::encode::<T1B1Buf>(&digest);
    block.append(peer_b1t6::encode::<T1B1Buf>(nonce).as_slice());
    for _ in 0..3 {
        block.push(Btrit::Zero);
    }
    let hash = CurlP::new().digest(block.as_slice());
    trits_of(&hash)
        .iter()
        .rev()
        .take_while(|&&t| t == 0)
        .count()
}

#[test]
fn b1t6_matches_iota_crypto() {
    for seed in 0..50u64 {
        // At least one byte: iota-crypto 0.23.2's decode panics on no trits.
        let b = bytes(seed, 1 + (seed * 13 % 97) as usize);
        let ours = block::b1t6::encode(&b);
        let theirs = peer_b1t6::encode::<T1B1Buf>(&b);
        assert_eq!(ours, trits_of(&theirs));
        assert_eq!(peer_b1t6::decode(&theirs).unwrap(), b);
        assert_eq!(block::b1t6::decode(&ours).unwrap(), b);
    }
    let all: Vec<u8> = (0..=255).collect();
    assert_eq!(
        block::b1t6::encode(&all),
        trits_of(&peer_b1t6::encode::<T1B1Buf>(&all))
    );
}

#[test]
fn scores_match_iota_pow_and_iota_crypto() {
    let mut scorer = PowScorer::new();
    for seed in 0..300u64 {
        let len = 8 + (seed * 7919 % 3000) as usize;
        let m = bytes(seed, len);
        let z = block::pow_zeros(&m).unwrap();
        assert_eq!(z, peer_zeros(&m), "seed {seed}");
        assert_eq!(block::score(&m), scorer.score(&m), "seed {seed}");
    }
}

#[test]
fn zeros_needed_reaches_the_peer_miners_target() {
    // iota-pow's miner asks for ceil(ln(len · score) / ln 3) zeros: never fewer than needed.
    for len in [8usize, 21, 100, 300, 1000, 32768] {
        for target in [1u32, 100, 1500, 4000, 10_000, 1 << 20] {
            let ours = block::zeros_needed(f64::from(target), len).unwrap();
            let peer = ((len as f64 * f64::from(target)).ln() / 3f64.ln()).ceil() as usize;
            assert!(ours <= peer, "{len} {target}");
            assert!(block::score_of(ours, len) >= f64::from(target));
        }
    }
}

#[test]
fn engine_nonces_are_valid_by_the_peer_scorer() {
    let engine = curlpow::Engine::builder()
        .threads(2)
        .backends(&[curlpow::Backend::Cpu])
        .build()
        .unwrap();
    let mut scorer = PowScorer::new();
    for seed in 0..12u64 {
        let m = bytes(1000 + seed, 300);
        let r = engine.block_pow(&m, 4000.0).unwrap();
        assert!(scorer.score(&r.message) >= 4000.0, "seed {seed}");
        assert_eq!(
            peer_zeros(&r.message),
            block::pow_zeros(&r.message).unwrap()
        );
    }
}

#[test]
fn peer_miner_nonces_are_valid_by_curlpow() {
    let miner = MinerBuilder::new().with_num_workers(1).finish();
    for seed in 0..4u64 {
        let head = bytes(2000 + seed, 50);
        let nonce = miner.nonce(&head, 100).unwrap();
        let mut m = head.clone();
        m.extend_from_slice(&nonce.to_le_bytes());
        assert!(block::score(&m) >= 100.0, "seed {seed}");
    }
}
