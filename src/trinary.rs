//! Balanced trits and trytes: parsing with precise errors, conversions.
//!
//! A trit is `-1`, `0` or `1` (stored as `i8`). A tryte is three trits, little-endian, written with
//! the alphabet `9ABCDEFGHIJKLMNOPQRSTUVWXYZ`: `9` = 0, `A`..`M` = 1..13, `N`..`Z` = -13..-1.

use crate::error::{Error, TryteError};

/// One balanced trit: `-1`, `0` or `1`.
pub type Trit = i8;

/// The tryte alphabet, indexed by tryte value mod 27 (`9` = 0, `A` = 1, …, `Z` = 26 ≙ -1).
pub const TRYTE_ALPHABET: &[u8; 27] = b"9ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The value (-13..=13) of a tryte character, or `None` if it is not in the alphabet.
/// Lowercase letters are not trytes.
#[inline]
pub fn tryte_value(c: u8) -> Option<i8> {
    match c {
        b'9' => Some(0),
        b'A'..=b'M' => Some((c - b'A') as i8 + 1),
        b'N'..=b'Z' => Some((c - b'N') as i8 - 13),
        _ => None,
    }
}

/// The character of a tryte value in -13..=13.
///
/// # Panics
/// Panics in debug builds if `v` is outside -13..=13.
#[inline]
pub fn tryte_char(v: i8) -> u8 {
    debug_assert!((-13..=13).contains(&v));
    TRYTE_ALPHABET[v.rem_euclid(27) as usize]
}

/// The three little-endian trits of a tryte value in -13..=13.
#[inline]
pub fn tryte_value_to_trits(v: i8) -> [Trit; 3] {
    let mut v = v as i32;
    let mut out = [0i8; 3];
    for t in out.iter_mut() {
        let r = v.rem_euclid(3);
        let trit = if r == 2 { -1 } else { r };
        *t = trit as i8;
        v = (v - trit) / 3;
    }
    out
}

/// The three trits of every byte that is a tryte character, with a fourth entry 1; all zero for
/// every other byte. One look-up per tryte instead of a division loop.
const TRYTE_TRITS: [[Trit; 4]; 256] = {
    let mut t = [[0i8; 4]; 256];
    let mut i = 0;
    while i < 27 {
        // Tryte value v = i for i <= 13, i - 27 above (the alphabet is indexed mod 27).
        let v = if i <= 13 { i as i32 } else { i as i32 - 27 };
        let mut e = [0i8; 4];
        let mut rest = v;
        let mut k = 0;
        while k < 3 {
            let r = rest.rem_euclid(3);
            let trit = if r == 2 { -1 } else { r };
            e[k] = trit as i8;
            rest = (rest - trit) / 3;
            k += 1;
        }
        e[3] = 1;
        t[TRYTE_ALPHABET[i] as usize] = e;
        i += 1;
    }
    t
};

/// Parse a string of trytes into trits. The error names the first bad character and its
/// column (1-based, in characters).
///
/// ```
/// let trits = curlpow::trytes_to_trits("9AZ").unwrap();
/// assert_eq!(trits, vec![0, 0, 0, 1, 0, 0, -1, 0, 0]);
/// assert!(curlpow::trytes_to_trits("9a").is_err());
/// ```
pub fn trytes_to_trits(trytes: &str) -> Result<Vec<Trit>, Error> {
    let bytes = trytes.as_bytes();
    let mut out = vec![0i8; bytes.len() * 3];
    for (i, (o, &b)) in out.chunks_exact_mut(3).zip(bytes).enumerate() {
        let e = TRYTE_TRITS[b as usize];
        if e[3] == 0 {
            // Every tryte is one ASCII byte, so the first bad byte starts a character.
            return Err(TryteError::BadChar {
                column: trytes[..i].chars().count() + 1,
                found: trytes[i..].chars().next().expect("a character starts here"),
            }
            .into());
        }
        o.copy_from_slice(&e[..3]);
    }
    Ok(out)
}

/// Write trits as trytes. The length must be a multiple of 3 and every value a trit.
///
/// ```
/// assert_eq!(curlpow::trits_to_trytes(&[0, 0, 0, 1, 0, 0, -1, 0, 0]).unwrap(), "9AZ");
/// ```
pub fn trits_to_trytes(trits: &[Trit]) -> Result<String, Error> {
    if !trits.len().is_multiple_of(3) {
        return Err(Error::TritLength {
            found: trits.len(),
            expected: "a multiple of 3",
        });
    }
    let mut s = String::with_capacity(trits.len() / 3);
    for (i, c) in trits.chunks_exact(3).enumerate() {
        if let Some(pos) = c.iter().position(|t| !(-1..=1).contains(t)) {
            return Err(Error::NotATrit {
                index: i * 3 + pos,
                value: c[pos],
            });
        }
        s.push(tryte_char(c[0] + 3 * c[1] + 9 * c[2]) as char);
    }
    Ok(s)
}

/// Write `value` in balanced ternary into `out`, least significant trit first.
/// Returns `false` if it does not fit.
pub fn write_balanced(mut value: i128, out: &mut [Trit]) -> bool {
    for t in out.iter_mut() {
        let r = value.rem_euclid(3);
        let trit = if r == 2 { -1 } else { r };
        *t = trit as i8;
        value = (value - trit) / 3;
    }
    value == 0
}

/// Read a balanced-ternary number, least significant trit first.
pub fn read_balanced(trits: &[Trit]) -> i128 {
    trits
        .iter()
        .rev()
        .fold(0i128, |acc, &t| acc * 3 + t as i128)
}

/// Number of zero trits at the end of `trits` (the PoW weight of a hash).
pub fn trailing_zeros(trits: &[Trit]) -> usize {
    trits.iter().rev().take_while(|&&t| t == 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tryte_round_trips() {
        for (i, &c) in TRYTE_ALPHABET.iter().enumerate() {
            let v = tryte_value(c).unwrap();
            assert_eq!(v.rem_euclid(27) as usize, i);
            let t = tryte_value_to_trits(v);
            assert_eq!(t[0] + 3 * t[1] + 9 * t[2], v);
            assert_eq!(tryte_char(v), c);
        }
        assert_eq!(tryte_value(b'a'), None);
        assert_eq!(tryte_value(b'0'), None);
    }

    #[test]
    fn the_tryte_table_matches_the_values() {
        for b in 0..=255u8 {
            let e = TRYTE_TRITS[b as usize];
            match tryte_value(b) {
                Some(v) => assert_eq!(e, {
                    let t = tryte_value_to_trits(v);
                    [t[0], t[1], t[2], 1]
                }),
                None => assert_eq!(e, [0; 4], "{b}"),
            }
        }
        let s: String = TRYTE_ALPHABET.iter().map(|&c| c as char).collect();
        let trits = trytes_to_trits(&s).unwrap();
        assert_eq!(trits_to_trytes(&trits).unwrap(), s);
    }

    #[test]
    fn bad_char_has_column() {
        match trytes_to_trits("99é9") {
            Err(Error::Tryte(TryteError::BadChar { column, found })) => {
                assert_eq!(column, 3);
                assert_eq!(found, 'é');
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn balanced_round_trip() {
        let mut buf = [0i8; 8];
        for v in -3280i128..=3280 {
            assert!(write_balanced(v, &mut buf));
            assert_eq!(read_balanced(&buf), v);
        }
        assert!(!write_balanced(3281, &mut buf));
    }

    #[test]
    fn trailing_zero_count() {
        assert_eq!(trailing_zeros(&[1, 0, 0]), 2);
        assert_eq!(trailing_zeros(&[0, 0, 0]), 3);
        assert_eq!(trailing_zeros(&[0, 0, -1]), 0);
    }
}
