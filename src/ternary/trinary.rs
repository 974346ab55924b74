//! Balanced trits and trytes: parsing with precise errors, conversions.
//!
//! A trit is `-1`, `0` or `1` (stored as `i8`). A tryte is three trits, little-endian, written with
//! the alphabet `9ABCDEFGHIJKLMNOPQRSTUVWXYZ`: `9` = 0, `A`..`M` = 1..13, `N`..`Z` = -13..-1.

use crate::base::error::{Error, TryteError};

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
/// column (1-based, in characters), with its code point when it is invisible or not ASCII.
///
/// ```
/// let trits = curlpow::trits::trytes_to_trits("9AZ").unwrap();
/// assert_eq!(trits, vec![0, 0, 0, 1, 0, 0, -1, 0, 0]);
/// let e = curlpow::trits::trytes_to_trits("9A\u{feff}").unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "column 3: U+FEFF (byte order mark) is not a tryte (expected 9 or A-Z)"
/// );
/// assert!(curlpow::trits::trytes_to_trits("9a").is_err());
/// ```
pub fn trytes_to_trits(trytes: &str) -> Result<Vec<Trit>, Error> {
    let bytes = trytes.as_bytes();
    let n = bytes.len() * 3;
    // One spare trit: each tryte writes its whole 4-byte table entry (one store, no branch),
    // and the next tryte overwrites the fourth byte. The spare is cut off at the end.
    let mut out = vec![0i8; n + 1];
    let mut valid = 1i8;
    for (i, &b) in bytes.iter().enumerate() {
        let e = TRYTE_TRITS[b as usize];
        valid &= e[3];
        out[3 * i..3 * i + 4].copy_from_slice(&e);
    }
    if valid == 0 {
        // check_trytes names the first bad byte (column, code point).
        check_trytes(trytes)?;
    }
    out.truncate(n);
    Ok(out)
}

/// Whether every byte is a tryte character (`9`, `A`–`Z`): a fast check before parsing.
///
/// ```
/// assert!(curlpow::trits::is_trytes(b"9ABZ"));
/// assert!(!curlpow::trits::is_trytes(b"9AbZ"));
/// assert!(curlpow::trits::is_trytes(b""));
/// ```
pub fn is_trytes(bytes: &[u8]) -> bool {
    // Chunks without a branch per byte (they vectorise); stop at the first bad chunk.
    bytes.chunks(64).all(|c| {
        c.iter().fold(true, |ok, &b| {
            ok & ((b == b'9') | (b.wrapping_sub(b'A') < 26))
        })
    })
}

/// The index of the first byte that is not a tryte character, if any (the fast check first).
pub(crate) fn first_non_tryte(bytes: &[u8]) -> Option<usize> {
    if is_trytes(bytes) {
        return None;
    }
    bytes.iter().position(|&b| tryte_value(b).is_none())
}

/// The number of trytes in `s`, or the first character that is not one. Every character before
/// the first bad one is an ASCII tryte, so its byte index is its character index.
pub(crate) fn check_trytes(s: &str) -> Result<usize, TryteError> {
    match first_non_tryte(s.as_bytes()) {
        None => Ok(s.len()),
        Some(i) => Err(TryteError::BadChar {
            column: i + 1,
            found: s[i..].chars().next().unwrap_or('\u{fffd}'),
        }),
    }
}

/// Write trits as trytes. The length must be a multiple of 3 and every value a trit.
///
/// ```
/// assert_eq!(curlpow::trits::trits_to_trytes(&[0, 0, 0, 1, 0, 0, -1, 0, 0]).unwrap(), "9AZ");
/// ```
pub fn trits_to_trytes(trits: &[Trit]) -> Result<String, Error> {
    if !trits.len().is_multiple_of(3) {
        return Err(Error::TritLength {
            found: trits.len(),
            expected: "a multiple of 3",
        });
    }
    let mut s = String::with_capacity(trits.len() / 3);
    check_trits(trits)?;
    for c in trits.chunks_exact(3) {
        s.push(tryte_char(c[0] + 3 * c[1] + 9 * c[2]) as char);
    }
    Ok(s)
}

/// An error naming the first value that is not -1, 0 or 1 (its index in `trits`).
pub fn check_trits(trits: &[Trit]) -> Result<(), Error> {
    // Chunks without a branch per trit (they vectorise); the position only on failure.
    let bad = |t: &Trit| !(-1..=1).contains(t);
    if !trits
        .chunks(64)
        .any(|c| c.iter().fold(false, |acc, t| acc | bad(t)))
    {
        return Ok(());
    }
    let index = trits.iter().position(bad).unwrap_or(0);
    Err(Error::NotATrit {
        index,
        value: trits[index],
    })
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
    fn the_fast_checks_agree_with_the_values_at_every_position() {
        for b in 0..=255u8 {
            assert_eq!(is_trytes(&[b]), tryte_value(b).is_some(), "{b}");
        }
        // One bad byte at every position of a string longer than a few 64-byte chunks: the
        // check, the parser's error column and the trits before it.
        let good: String = (0..200)
            .map(|i| TRYTE_ALPHABET[i * 7 % 27] as char)
            .collect();
        assert!(is_trytes(good.as_bytes()));
        let trits = trytes_to_trits(&good).unwrap();
        assert_eq!(trits.len(), 600);
        for (i, &c) in good.as_bytes().iter().enumerate() {
            assert_eq!(
                &trits[3 * i..3 * i + 3],
                &tryte_value_to_trits(tryte_value(c).unwrap())
            );
        }
        for at in 0..good.len() {
            for bad in [b'a', b'0', b'@', b'[', b'\n', 0x80] {
                let mut v = good.clone().into_bytes();
                v[at] = bad;
                assert!(!is_trytes(&v), "{at} {bad}");
                let Ok(text) = std::str::from_utf8(&v) else {
                    continue;
                };
                match trytes_to_trits(text) {
                    Err(Error::Tryte(TryteError::BadChar { column, .. })) => {
                        assert_eq!(column, at + 1)
                    }
                    other => panic!("{at} {bad}: {other:?}"),
                }
                assert!(check_trytes(text).is_err());
            }
        }
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
    fn invisible_characters_are_named_with_their_code_point() {
        for (input, column, named) in [
            ("\u{0}", 1, "U+0000 (NUL)"),
            ("99\u{a0}", 3, "U+00A0 (no-break space)"),
            ("\u{feff}9", 1, "U+FEFF (byte order mark)"),
            ("9\u{b}", 2, "U+000B (vertical tab)"),
            ("9 ", 2, "U+0020 (space)"),
            ("9\t", 2, "U+0009 (tab)"),
            ("9\u{200b}", 2, "U+200B (zero-width space)"),
            ("9\u{1}", 2, "U+0001 (control character)"),
            ("9\u{3000}", 2, "U+3000 (space character)"),
            ("9é", 2, "'é' (U+00E9)"),
            ("9a", 2, "'a'"),
        ] {
            let e = trytes_to_trits(input).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("column {column}: {named} is not a tryte")),
                "{input:?}: {e}"
            );
        }
        let e = trytes_to_trits("9a").unwrap_err().to_string();
        assert!(e.contains("lowercase"), "{e}");
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
