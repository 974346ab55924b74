//! The properties the fuzz targets check, one function per target (`fuzz/fuzz_targets/`).
//! `tests/cli/cli_parsers_random.rs` feeds the same functions pseudo-random inputs in the regular
//! test run.

use std::io::BufReader;

use curlpow::{Error, Transaction, TryteError};

use curlpow::internal::line_reader::{self, Line, LineReader};

fn is_tryte(c: char) -> bool {
    u8::try_from(c)
        .ok()
        .and_then(curlpow::trits::tryte_value)
        .is_some()
}

/// A bad-character message: its column, and a code point for anything not printable ASCII.
fn check_bad_char(s: &str, column: usize, found: char, msg: &str) {
    assert!(column >= 1);
    assert_eq!(
        s.chars().nth(column - 1),
        Some(found),
        "column {column} of {s:?}"
    );
    assert!(s.chars().take(column - 1).all(is_tryte));
    assert!(!is_tryte(found));
    assert!(msg.starts_with(&format!("column {column}: ")), "{msg}");
    if !found.is_ascii_graphic() {
        assert!(msg.contains(&format!("U+{:04X}", found as u32)), "{msg}");
    }
}

/// `trytes_to_trits` / `trits_to_trytes`: a round trip, or the first bad character named.
pub fn trytes(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match curlpow::trits::trytes_to_trits(s) {
        Ok(t) => {
            assert_eq!(t.len(), 3 * s.len());
            assert_eq!(curlpow::trits::trits_to_trytes(&t).unwrap(), s);
        }
        Err(Error::Tryte(TryteError::BadChar { column, found })) => {
            let msg = curlpow::trits::trytes_to_trits(s).unwrap_err().to_string();
            check_bad_char(s, column, found, &msg);
        }
        Err(e) => panic!("{s:?}: unexpected error {e}"),
    }
    // Any bytes as trits: whole trytes of -1, 0, 1 convert, anything else is named.
    let trits: Vec<i8> = data.iter().map(|&b| b as i8).collect();
    match curlpow::trits::trits_to_trytes(&trits) {
        Ok(t) => assert_eq!(t.len() * 3, trits.len()),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// `Transaction::from_str`: 2673 trytes and at most one line end, or an error that says which
/// character or which length is wrong. The input is also spliced into a valid transaction, so
/// that most inputs reach the checks past the length.
pub fn transaction(data: &[u8]) {
    parse_transaction(data);
    if data.len() >= 2 {
        let base = "9".repeat(2673);
        let at = usize::from(u16::from_le_bytes([data[0], data[1]])) % 2674;
        let rest = &data[2..];
        let mut spliced = base.as_bytes()[..at].to_vec();
        spliced.extend_from_slice(rest);
        let keep = (at + rest.len()).min(2673);
        spliced.extend_from_slice(&base.as_bytes()[keep..]);
        parse_transaction(&spliced);
    }
}

fn parse_transaction(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let body = s
        .strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s);
    match s.parse::<Transaction>() {
        Ok(tx) => {
            // (No hash here: the sponge is checked against the vectors elsewhere, and 33
            // transforms a run would slow the fuzzer a hundredfold.)
            assert_eq!(tx.to_trytes(), body);
        }
        Err(Error::Tryte(TryteError::BadChar { column, found })) => {
            let msg = s.parse::<Transaction>().unwrap_err().to_string();
            check_bad_char(body, column, found, &msg);
        }
        Err(Error::Tryte(TryteError::Length { found, .. })) => {
            assert!(body.chars().all(is_tryte));
            assert_eq!(found, body.len());
            assert_ne!(found, 2673);
        }
        Err(e) => panic!("{s:?}: unexpected error {e}"),
    }
}

/// The CLI's line reader: the same lines as a plain split (LF, one CR before it dropped, empty
/// lines skipped, 1-based numbers), long lines measured instead of kept, read through buffers
/// of every size; and `line_reader::text` agreeing with `std::str::from_utf8`.
pub fn lines(data: &[u8]) {
    let Some((&knobs, input)) = data.split_first() else {
        return;
    };
    let max = usize::from(knobs & 0x3f) + 1;
    let capacity = usize::from(knobs >> 6) * 5 + 1;
    let mut expected = Vec::new();
    for (i, raw) in input.split(|&b| b == b'\n').enumerate() {
        let l = raw.strip_suffix(b"\r").unwrap_or(raw);
        if !l.is_empty() {
            expected.push((i + 1, l, raw.len()));
        }
    }
    let mut reader = LineReader::new(BufReader::with_capacity(capacity, input), max);
    let mut k = 0;
    while let Some(line) = reader.next_line().unwrap() {
        let (number, want, raw_len) = expected[k];
        match line {
            Line::Text { number: n, bytes } => {
                assert_eq!((n, bytes), (number, want));
                assert!(raw_len <= max);
                match (line_reader::text(bytes), std::str::from_utf8(bytes)) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b),
                    (Err(TryteError::NotUtf8 { column, byte }), Err(e)) => {
                        let ok = e.valid_up_to();
                        assert_eq!(byte, bytes[ok]);
                        let before = std::str::from_utf8(&bytes[..ok]).unwrap();
                        assert_eq!(column, before.chars().count() + 1);
                    }
                    (a, b) => panic!("{a:?} vs {b:?}"),
                }
            }
            Line::TooLong {
                number: n,
                bytes,
                chars,
            } => {
                assert_eq!(n, number);
                assert!(raw_len > max);
                assert_eq!(bytes, want.len() as u64);
                let lead = want.iter().filter(|&&b| b & 0xC0 != 0x80).count();
                assert_eq!(chars, lead as u64);
            }
        }
        k += 1;
    }
    assert_eq!(k, expected.len());
}
