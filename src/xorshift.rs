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

/// Endless pseudo-random tryte characters from `seed`: the same generator as [`trits`], each
/// state taken mod 27 into [`TRYTE_ALPHABET`](crate::TRYTE_ALPHABET).
pub fn trytes(seed: u64) -> impl Iterator<Item = u8> {
    let mut s = seed | 1;
    std::iter::repeat_with(move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        crate::TRYTE_ALPHABET[(s % 27) as usize]
    })
}
