//! A deterministic pseudo-random trit stream (xorshift64), for the bench transaction and the
//! tests: not for anything that needs real randomness.

/// Endless pseudo-random trits from `seed` (xorshift64 with shifts 13, 7, 17; the seed's lowest
/// bit is forced to 1 so that no seed gives the all-zero stream).
pub fn trits(seed: u64) -> impl Iterator<Item = i8> {
    let mut s = seed | 1;
    std::iter::repeat_with(move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % 3) as i8 - 1
    })
}
