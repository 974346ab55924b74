//! A deterministic pseudo-random trit stream (xorshift64), for the bench transaction and the
//! tests: not for anything that needs real randomness.

/// Endless xorshift64 states (shifts 13, 7, 17) from `seed`; the seed's lowest bit is forced to
/// 1 so that no seed gives the all-zero stream.
fn states(seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed | 1;
    std::iter::repeat_with(move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    })
}

/// Endless pseudo-random trits from `seed` (each state mod 3).
pub fn trits(seed: u64) -> impl Iterator<Item = i8> {
    states(seed).map(|s| (s % 3) as i8 - 1)
}

/// Endless pseudo-random tryte characters from `seed`: the same states as [`trits`], each
/// taken mod 27 into [`TRYTE_ALPHABET`](crate::ternary::trinary::TRYTE_ALPHABET).
pub fn trytes(seed: u64) -> impl Iterator<Item = u8> {
    states(seed).map(|s| crate::ternary::trinary::TRYTE_ALPHABET[(s % 27) as usize])
}

/// Endless pseudo-random bytes from `seed`: the same states as [`trits`], a byte of each.
pub fn bytes(seed: u64) -> impl Iterator<Item = u8> {
    states(seed).map(|s| (s >> 24) as u8)
}
