//! The bytes the host and the WGSL kernel exchange: the parameters uniform, the bit-sliced
//! mid-state, the scratch layout and where the transform leaves each trit.

use crate::search::bitslice::Planes;
use crate::search::search_job::SearchJob;
use crate::ternary::curl::{ROUNDS, STATE_LEN};

/// Bytes of the `Params` uniform.
pub(super) const PARAMS_SIZE: u64 = 32;
/// Bytes of the `Found` result: `[found, lane, counter_lo, counter_hi, skipped, 0, 0, 0]`.
pub(super) const RESULT_SIZE: u64 = 32;
/// Bytes of the `Flag` (one `atomic<u32>`, padded).
pub(super) const FLAG_SIZE: u64 = 16;

/// Scratch slots per invocation: the state and the side copies of the fused passes (21 at
/// most, for 5 fused rounds). The kernel's `SLOTS` constant must match.
pub(crate) const SLOTS: usize = STATE_LEN + 21;

/// The multiplier of the kernel's in-place transform with `fuse` rounds per pass (1, 3 or 5):
/// logical trit `i` ends in slot `(final_multiplier(fuse) * i) % 729`. One round multiplies
/// it by 364, a fused pass of three by 91 (= -1/8 mod 729), one of five by 205 (= -1/32); five
/// fused rounds run 15 passes of 5 and 2 of 3.
pub(crate) const fn final_multiplier(fuse: u32) -> usize {
    let mut m = 1;
    let mut r = 0;
    while r < ROUNDS {
        let (step, rounds) = match fuse {
            5 if r < 75 => (205, 5),
            3 | 5 => (91, 3),
            _ => (364, 1),
        };
        m = m * step % STATE_LEN;
        r += rounds;
    }
    m
}

/// Estimated bytes of storage-buffer traffic per nonce of the kernel with `fuse` rounds per
/// pass (1, 3 or 5), whatever the lane width (a state of `w`-byte words serves `8 w` nonces):
/// every pass loads and stores each trit's `vec2` once and copies its side slots; each
/// transform also copies the mid-state in (read and write) and writes the counter trits.
pub(crate) fn bytes_per_nonce(fuse: u32) -> f64 {
    let len = STATE_LEN as f64;
    // Bytes per pass of one state, in units of one word (w bytes): 2 halves × (load + store).
    let pass = |side: f64| 2.0 * 2.0 * (len + side);
    let passes = match fuse {
        1 => 81.0 * pass(0.0),
        5 => 15.0 * pass(21.0) + 2.0 * pass(5.0),
        _ => 27.0 * pass(5.0),
    };
    let setup = 2.0 * 2.0 * len + 2.0 * 42.0;
    // w bytes per word, 8 w nonces per state: divide by 8.
    (passes + setup) / 8.0
}

/// The lane-width prelude of the kernel.
pub(super) fn prelude(lanes64: bool) -> &'static str {
    if lanes64 {
        "alias W = u64;\n\
         fn lowest_lane(m: W) -> u32 {\n\
             let lo = u32(m & W(0xffffffffu));\n\
             if lo != 0u { return countTrailingZeros(lo); }\n\
             return 32u + countTrailingZeros(u32(m >> 32u));\n\
         }\n"
    } else {
        "alias W = u32;\n\
         fn lowest_lane(m: W) -> u32 { return countTrailingZeros(m); }\n"
    }
}

/// The `Params` uniform.
pub(super) fn params_bytes(
    base: u64,
    stride: u32,
    remaining: u32,
    mwm: u32,
    transforms: u32,
) -> [u8; PARAMS_SIZE as usize] {
    let v: [u32; 8] = [
        base as u32,
        (base >> 32) as u32,
        stride,
        remaining,
        mwm,
        transforms,
        0,
        0,
    ];
    let mut out = [0u8; PARAMS_SIZE as usize];
    out.copy_from_slice(bytemuck::cast_slice(&v));
    out
}

/// Words as little-endian bytes of `word` (4 or 8) bytes each.
pub(super) fn to_bytes(words: &[u64], word: usize) -> Vec<u8> {
    if word == 8 {
        bytemuck::cast_slice(words).to_vec()
    } else {
        let v: Vec<u32> = words.iter().map(|&w| w as u32).collect();
        bytemuck::cast_slice(&v).to_vec()
    }
}

/// The inverse of [`to_bytes`].
pub(super) fn from_bytes(bytes: &[u8], word: usize) -> Vec<u64> {
    bytes
        .chunks_exact(word)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..word].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// `(lo, hi)` pairs of trit-major planes interleaved as the kernel's `vec2<W>` array: element
/// `i * words + w` of the result is `(lo, hi)` of trit `i`, word `w`.
pub(super) fn interleave(p: &Planes) -> Vec<u64> {
    p.lo.iter().zip(&p.hi).flat_map(|(&l, &h)| [l, h]).collect()
}

/// The inverse of [`interleave`].
pub(super) fn deinterleave(words: &[u64], len: usize, n: usize, bits: u32) -> Planes {
    let mut p = Planes::zeros(len, n, bits);
    for (k, pair) in words.chunks_exact(2).enumerate().take(len * n) {
        p.lo[k] = pair[0];
        p.hi[k] = pair[1];
    }
    p
}

/// The bit-sliced mid-state: every trit broadcast to all lanes, lane trits 162..168 set to
/// each lane's number, counter trits zero (the kernel writes them).
pub(super) fn mid_state_bytes(job: &SearchJob, lanes: u32) -> Vec<u8> {
    let mut p = Planes::broadcast(job.state(), 1, lanes);
    p.set_lane_numbers();
    to_bytes(&interleave(&p), lanes as usize / 8)
}

/// The bit-sliced mid-state of a block PoW job: each lane's two nonce bytes in its lane trits
/// (block trits 192..204), the counter trits zero.
pub(super) fn block_mid_state_bytes(job: &crate::search::block::BlockJob, lanes: u32) -> Vec<u8> {
    let mut p = Planes::broadcast(job.state(), 1, lanes);
    let start = crate::search::block::LANE_TRITS.start;
    for lane in 0..lanes as usize {
        for (j, &t) in crate::search::block::lane_trits(lane).iter().enumerate() {
            p.set(start + j, lane, t);
        }
    }
    to_bytes(&interleave(&p), lanes as usize / 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ternary::curl::HASH_LEN;

    #[test]
    fn final_multiplier_is_the_walk() {
        // One round multiplies the slot multiplier by 364, a fused pass of three by
        // alpha_0 = -1/8 = 91; every hash trit must end in a slot of its own.
        let mut m = 1usize;
        for _ in 0..ROUNDS {
            m = m * 364 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(1));
        assert_eq!(91 * 8 % STATE_LEN, STATE_LEN - 1, "91 = -1/8 mod 729");
        let mut m = 1usize;
        for _ in 0..ROUNDS / 3 {
            m = m * 91 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(3));
        assert_eq!(205 * 32 % STATE_LEN, STATE_LEN - 1, "205 = -1/32 mod 729");
        let mut m = 1usize;
        for _ in 0..15 {
            m = m * 205 % STATE_LEN;
        }
        for _ in 0..2 {
            m = m * 91 % STATE_LEN;
        }
        assert_eq!(m, final_multiplier(5));
        for fuse in [1, 3, 5] {
            let fm = final_multiplier(fuse);
            let mut slots: Vec<usize> = (0..HASH_LEN).map(|i| fm * i % STATE_LEN).collect();
            slots.sort_unstable();
            slots.dedup();
            assert_eq!(slots.len(), HASH_LEN);
        }
    }

    #[test]
    fn the_kernel_slot_count_matches() {
        let src = include_str!("../../../kernels/curl_pow_interface.wgsl");
        assert!(
            src.contains(&format!("const SLOTS: u32 = {SLOTS}u;")),
            "kernels/curl_pow_interface.wgsl's SLOTS differs from the host's {SLOTS}"
        );
    }

    #[test]
    fn params_layout() {
        let b = params_bytes(0x1_0000_0002, 64, 7, 9, 3);
        let v: &[u32] = bytemuck::cast_slice(&b);
        assert_eq!(&v[..6], &[2, 1, 64, 7, 9, 3]);
    }

    #[test]
    fn word_bytes_round_trip() {
        let w = [1u64, 0xffff_ffff, 0x8000_0001];
        assert_eq!(from_bytes(&to_bytes(&w, 4), 4), w);
        let w = [u64::MAX, 3];
        assert_eq!(from_bytes(&to_bytes(&w, 8), 8), w);
    }

    #[test]
    fn interleaving_round_trips() {
        let states: Vec<[i8; 9]> = (0..40)
            .map(|k| std::array::from_fn(|i| ((k + i) % 3) as i8 - 1))
            .collect();
        let p = Planes::from_states(&states, 2, 32);
        let q = deinterleave(&interleave(&p), 9, 2, 32);
        assert_eq!(p, q);
    }
}
