//! `b1t6`: bytes as trits, six balanced trits a byte. Each byte is read as a signed 8-bit
//! number (`-128..=127`) and written as its six-trit balanced-ternary value, least significant
//! trit first (two trytes: `v = t0 + 27·t1`). The encoding the Chrysalis and Stardust PoW
//! uses for the message digest and the nonce.

use crate::ternary::trinary::Trit;

/// Trits per byte.
pub const TRITS_PER_BYTE: usize = 6;

pub use crate::base::error::B1t6Error;

/// The six trits of one byte.
#[inline]
pub fn encode_byte(b: u8) -> [Trit; TRITS_PER_BYTE] {
    let mut v = i16::from(b as i8);
    let mut out = [0; TRITS_PER_BYTE];
    for t in out.iter_mut() {
        let r = v.rem_euclid(3);
        let trit = if r == 2 { -1 } else { r };
        *t = trit as Trit;
        v = (v - trit) / 3;
    }
    out
}

/// Write the trits of `bytes` into `out`, which must hold exactly `6 × bytes.len()` trits.
///
/// # Panics
/// When `out` has another length (a caller's bug, never input-dependent).
pub fn encode_into(bytes: &[u8], out: &mut [Trit]) {
    assert_eq!(
        out.len(),
        bytes.len() * TRITS_PER_BYTE,
        "b1t6 output length"
    );
    for (&b, group) in bytes.iter().zip(out.chunks_exact_mut(TRITS_PER_BYTE)) {
        group.copy_from_slice(&encode_byte(b));
    }
}

/// The trits of `bytes`: six per byte.
///
/// ```
/// use curlpow::block::b1t6;
/// assert_eq!(b1t6::encode(&[1]), [1, 0, 0, 0, 0, 0]);
/// assert_eq!(b1t6::encode(&[255]), [-1, 0, 0, 0, 0, 0]); // 255 is -1 as a signed byte
/// ```
pub fn encode(bytes: &[u8]) -> Vec<Trit> {
    let mut out = vec![0; bytes.len() * TRITS_PER_BYTE];
    encode_into(bytes, &mut out);
    out
}

/// The bytes these trits encode: the inverse of [`encode`].
///
/// ```
/// use curlpow::block::b1t6;
/// let t = b1t6::encode(b"IOTA");
/// assert_eq!(b1t6::decode(&t).unwrap(), b"IOTA");
/// assert!(b1t6::decode(&[1, 1, 1, 1, 1, 1]).is_err()); // 364 is no byte
/// ```
pub fn decode(trits: &[Trit]) -> Result<Vec<u8>, B1t6Error> {
    if !trits.len().is_multiple_of(TRITS_PER_BYTE) {
        return Err(B1t6Error::Length(trits.len()));
    }
    if let Some(index) = trits.iter().position(|t| !(-1..=1).contains(t)) {
        return Err(B1t6Error::NotATrit {
            index,
            value: trits[index],
        });
    }
    trits
        .chunks_exact(TRITS_PER_BYTE)
        .enumerate()
        .map(|(k, group)| {
            let value = group
                .iter()
                .rev()
                .fold(0i16, |acc, &t| acc * 3 + i16::from(t));
            i8::try_from(value)
                .map(|v| v as u8)
                .map_err(|_| B1t6Error::OutOfRange {
                    start: k * TRITS_PER_BYTE,
                    value,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trytes of trits, three at a time (the tryte alphabet), for the published vectors.
    fn trytes(trits: &[Trit]) -> String {
        crate::ternary::trinary::trits_to_trytes(trits).unwrap()
    }

    /// bee-ternary's b1t6 tests (iotaledger/bee, `bee-ternary/tests/b1t6.rs`), which
    /// iota-crypto's `encoding::ternary::b1t6` carries on.
    #[test]
    fn bee_ternary_vectors() {
        let cases: [(&[u8], &str); 6] = [
            (&[1], "A9"),
            (&[127], "SE"),
            (&[128], "GV"),
            (&[255], "Z9"),
            (&[0, 1], "99A9"),
            (
                &[0x00, 0x01, 0x02, 0x7e, 0x7f, 0x80, 0x81, 0xfd, 0xfe, 0xff],
                "99A9B9RESEGVHVX9Y9Z9",
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(trytes(&encode(bytes)), want, "{bytes:02x?}");
            assert_eq!(decode(&encode(bytes)).unwrap(), bytes);
        }
        let digest = [
            0x9b, 0xa0, 0x6c, 0x78, 0x55, 0x27, 0x76, 0xa5, 0x96, 0xdf, 0xe3, 0x60, 0xcc, 0x2b,
            0x5b, 0xf6, 0x44, 0xc0, 0xf9, 0xd3, 0x43, 0xa1, 0x0e, 0x2e, 0x71, 0xde, 0xbe, 0xcd,
            0x30, 0x73, 0x0d, 0x03,
        ];
        assert_eq!(
            trytes(&encode(&digest)),
            "GWLW9DLDDCLAJDQXBWUZYZODBYPBJCQ9NCQYT9IYMBMWNASBEDTZOYCYUBGDM9C9"
        );
    }

    #[test]
    fn every_byte_round_trips_and_is_its_signed_value() {
        for b in 0..=255u8 {
            let t = encode_byte(b);
            assert_eq!(
                crate::ternary::trinary::read_balanced(&t),
                i128::from(b as i8)
            );
            assert_eq!(decode(&t).unwrap(), [b]);
        }
    }

    #[test]
    fn bad_input_is_named() {
        assert_eq!(decode(&[0; 7]), Err(B1t6Error::Length(7)));
        assert_eq!(
            decode(&[0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0]),
            Err(B1t6Error::NotATrit { index: 7, value: 2 })
        );
        // 1 + 3 + 9 + 27 + 81 + 243 = 364; -128 - 1 = -129 also out of range.
        assert_eq!(
            decode(&[0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]),
            Err(B1t6Error::OutOfRange {
                start: 6,
                value: 364
            })
        );
        let mut t = [0i8; 6];
        assert!(crate::ternary::trinary::write_balanced(-129, &mut t));
        assert!(matches!(
            decode(&t),
            Err(B1t6Error::OutOfRange { value: -129, .. })
        ));
        assert_eq!(decode(&[]).unwrap(), Vec::<u8>::new());
    }
}
