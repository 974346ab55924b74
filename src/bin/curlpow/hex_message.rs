//! One line of `block-pow` and `block-score`: a message in hex, its 8 nonce bytes included.

use curlpow::block::NONCE_BYTES;

use crate::line_reader;

/// Lines longer than this are measured, not read: 1 MiB of hex, a 512 KiB message (a Chrysalis
/// message or a Stardust block is at most 32 KiB).
pub const MAX_HEX_LINE: usize = 1 << 20;
/// What a line must hold, for the too-long message.
pub const EXPECTED: &str = "an even number of hex digits, at least 16 and at most 1048576";

/// The message a line holds, or what is wrong with it (the column is 1-based, in characters).
pub fn parse(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let s = line_reader::text(bytes).map_err(|e| match e {
        curlpow::TryteError::NotUtf8 { column, byte } => format!(
            "column {column}: byte 0x{byte:02X} is not UTF-8 text (expected 0-9, a-f or A-F)"
        ),
        e => e.to_string(),
    })?;
    if let Some((k, c)) = s.chars().enumerate().find(|(_, c)| !c.is_ascii_hexdigit()) {
        let shown = if c.is_ascii_graphic() {
            format!("'{c}'")
        } else {
            format!("U+{:04X}", c as u32)
        };
        return Err(format!(
            "column {}: {shown} is not a hex digit (expected 0-9, a-f or A-F)",
            k + 1
        ));
    }
    // Every character is an ASCII hex digit now: bytes are digits.
    if s.len() % 2 == 1 {
        return Err(format!(
            "length {} hex digits is odd: expected two digits a byte",
            s.len()
        ));
    }
    if s.len() < 2 * NONCE_BYTES {
        return Err(format!(
            "length {} bytes is shorter than the {NONCE_BYTES}-byte nonce the message ends \
             with (expected at least {} hex digits)",
            s.len() / 2,
            2 * NONCE_BYTES
        ));
    }
    let digit = |b: u8| (b as char).to_digit(16).expect("checked") as u8;
    Ok(s.as_bytes()
        .chunks_exact(2)
        .map(|p| (digit(p[0]) << 4) | digit(p[1]))
        .collect())
}

/// A nonce as the last 16 hex digits of a message (its little-endian bytes, lowercase).
pub fn nonce_hex(nonce: u64) -> String {
    nonce
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            parse(b"00010203040506ff").unwrap(),
            [0, 1, 2, 3, 4, 5, 6, 255]
        );
        assert_eq!(parse(b"ABCDEFabcdef0123").unwrap()[..3], [0xab, 0xcd, 0xef]);
        assert!(parse(b"0001020304050g07")
            .unwrap_err()
            .contains("column 14: 'g'"));
        assert!(parse(b"000102030405060").unwrap_err().contains("odd"));
        assert!(parse(b"00010203040506").unwrap_err().contains("shorter"));
        assert!(parse(b"0001 02030405060708")
            .unwrap_err()
            .contains("U+0020"));
        let e = parse(b"00\xff01020304050607").unwrap_err();
        assert!(
            e.contains("column 3: byte 0xFF is not UTF-8 text (expected 0-9, a-f or A-F)"),
            "{e}"
        );
        assert!(!e.contains("9 or A-Z"), "{e}");
        assert_eq!(nonce_hex(0xaaaa_aaaa_aaaa_e65e), "5ee6aaaaaaaaaaaa");
    }
}
