//! The services' log lines (`serve`, `worker`), each bounded: whatever a message or a library
//! puts in an event, a line is at most [`MAX_LOG_LINE`] bytes.

use std::io::{self, Write};

/// The longest log line written, in bytes; a longer event is cut and says how much was cut.
pub const MAX_LOG_LINE: usize = 2048;

/// The filter directives added to every log filter: lapin logs each message the broker returns
/// (a reply whose queue is gone) with its whole body at `warn`; the worker logs those itself,
/// in one short line.
pub const QUIET_LIBRARIES: &[&str] = &["lapin::returned_messages=error"];

/// Standard error, one event a write (as tracing-subscriber's formatter writes), each cut to
/// [`MAX_LOG_LINE`].
pub struct BoundedStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BoundedStderr {
    type Writer = BoundedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        BoundedStderr
    }
}

impl Write for BoundedStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut err = io::stderr().lock();
        match bounded(buf) {
            None => err.write_all(buf)?,
            Some((head, cut)) => {
                err.write_all(head)?;
                writeln!(err, " ... [{cut} bytes cut]")?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// `None` when `buf` fits; else the part kept (cut at a UTF-8 character boundary, without
/// its line end) and the number of bytes cut.
fn bounded(buf: &[u8]) -> Option<(&[u8], usize)> {
    if buf.len() <= MAX_LOG_LINE {
        return None;
    }
    let mut end = MAX_LOG_LINE;
    // Back to the start of a character: UTF-8 continuation bytes are 0b10xx_xxxx.
    while end > 0 && buf[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    Some((&buf[..end], buf.len() - end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_pass_long_ones_are_cut_at_a_character() {
        assert_eq!(bounded(b"hello\n"), None);
        let long = "é".repeat(MAX_LOG_LINE);
        let (head, cut) = bounded(long.as_bytes()).unwrap();
        assert!(head.len() <= MAX_LOG_LINE && head.len() >= MAX_LOG_LINE - 1);
        assert!(std::str::from_utf8(head).is_ok());
        assert_eq!(head.len() + cut, long.len());
    }
}
