//! Splitting input into lines in bounded memory: one reused buffer of at most `max_bytes`,
//! whatever the input holds (a 1 GB line without a line end is measured, never kept).
//!
//! The rules, the same for `pow`, `hash` and `verify`:
//! - a line ends at `\n`; one `\r` before it (a CRLF line end) is not part of the line;
//! - empty lines are skipped; nothing else is: spaces, tabs and every other character stay in
//!   the line, where the parser names them;
//! - line numbers are 1-based and count every line, skipped ones included;
//! - columns in messages are 1-based and counted in characters ([`text`] for bad UTF-8).
//!
//! The CLI's reader (`curlpow::internal::line_reader`), here in the library so that the fuzz
//! targets and the tests (`curlpow_testkit::checks`) run the same code.

use std::io::{self, BufRead};

use crate::base::error::TryteError;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A non-empty line without its line end.
    Text {
        /// 1-based line number.
        number: usize,
        /// The line's bytes.
        bytes: &'a [u8],
    },
    /// A line longer than the reader's limit: measured, not kept.
    TooLong {
        /// 1-based line number.
        number: usize,
        /// Its length in bytes, without the line end.
        bytes: u64,
        /// Its length in characters (UTF-8 lead bytes; each stray byte counts as one).
        chars: u64,
    },
}

/// Reads lines of at most `max_bytes` bytes each from a buffered reader.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    max_bytes: usize,
    number: usize,
    eof: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader keeping lines of up to `max_bytes` bytes (CR included).
    pub fn new(inner: R, max_bytes: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            max_bytes,
            number: 0,
            eof: false,
        }
    }

    /// The next non-empty line, `None` at the end of the input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            if self.eof {
                return Ok(None);
            }
            self.number += 1;
            self.buf.clear();
            let mut len = 0u64;
            let mut chars = 0u64;
            let mut too_long = false;
            let mut last = None;
            loop {
                let avail = match self.inner.fill_buf() {
                    Ok(b) => b,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if avail.is_empty() {
                    self.eof = true;
                    break;
                }
                let (part, line_end) = match memchr::memchr(b'\n', avail) {
                    Some(i) => (&avail[..i], true),
                    None => (avail, false),
                };
                if let Some(&b) = part.last() {
                    last = Some(b);
                }
                len += part.len() as u64;
                if !too_long && self.buf.len() + part.len() > self.max_bytes {
                    too_long = true;
                    chars = count_chars(&self.buf);
                    self.buf.clear();
                }
                if too_long {
                    chars += count_chars(part);
                } else {
                    self.buf.extend_from_slice(part);
                }
                let used = part.len() + usize::from(line_end);
                self.inner.consume(used);
                if line_end {
                    break;
                }
            }
            let cr = u64::from(last == Some(b'\r'));
            if too_long {
                return Ok(Some(Line::TooLong {
                    number: self.number,
                    bytes: len - cr,
                    chars: chars - cr,
                }));
            }
            if cr == 1 {
                self.buf.pop();
            }
            if !self.buf.is_empty() {
                return Ok(Some(Line::Text {
                    number: self.number,
                    bytes: &self.buf,
                }));
            }
        }
    }
}

/// Characters in UTF-8 bytes: every byte that does not continue a character.
fn count_chars(b: &[u8]) -> u64 {
    b.iter().filter(|&&x| x & 0xC0 != 0x80).count() as u64
}

/// A line's bytes as text, or where (1-based column, in characters) it stops being UTF-8.
pub fn text(bytes: &[u8]) -> Result<&str, TryteError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let ok = e.valid_up_to();
        let before = std::str::from_utf8(&bytes[..ok]).map_or(ok, |s| s.chars().count());
        TryteError::NotUtf8 {
            column: before + 1,
            byte: bytes[ok],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as the tests see it: its number, and its bytes or (bytes, chars) when too long.
    type Got = (usize, Result<Vec<u8>, (u64, u64)>);

    fn all(input: &[u8], max: usize, chunk: usize) -> Vec<Got> {
        let mut r = LineReader::new(io::BufReader::with_capacity(chunk, input), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(match l {
                Line::Text { number, bytes } => (number, Ok(bytes.to_vec())),
                Line::TooLong {
                    number,
                    bytes,
                    chars,
                } => (number, Err((bytes, chars))),
            });
        }
        out
    }

    #[test]
    fn blank_lines_are_skipped_and_counted() {
        for chunk in [1, 2, 3, 64] {
            let got = all(b"\nAB\r\n\r\n  \nCD", 10, chunk);
            assert_eq!(
                got,
                vec![
                    (2, Ok(b"AB".to_vec())),
                    (4, Ok(b"  ".to_vec())),
                    (5, Ok(b"CD".to_vec())),
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn long_lines_are_measured_not_kept() {
        for chunk in [1, 4, 64] {
            let got = all("éééé\r\nABCD\n12345\n".as_bytes(), 4, chunk);
            assert_eq!(
                got,
                vec![
                    (1, Err((8, 4))),
                    (2, Ok(b"ABCD".to_vec())),
                    (3, Err((5, 5)))
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn bad_utf8_has_a_character_column() {
        let e = text(b"\xc3\xa9A\xff").unwrap_err();
        assert_eq!(
            e,
            TryteError::NotUtf8 {
                column: 3,
                byte: 0xff
            }
        );
        assert_eq!(
            e.to_string(),
            "column 3: byte 0xFF is not UTF-8 text (expected 9 or A-Z)"
        );
        assert_eq!(text(b"AB").unwrap(), "AB");
    }
}
