//! The services' log lines (`serve`, `worker`), each bounded: whatever a message or a library
//! puts in an event, a line is at most [`MAX_LOG_LINE`] bytes.

use std::io::{self, Write};

/// The longest log line written, in bytes; a longer event is cut and says how much was cut.
pub const MAX_LOG_LINE: usize = 2048;

/// The filter directives added to every log filter: lapin logs each message the broker returns
/// (a reply whose queue is gone) with its whole body at `warn`; the worker logs those itself,
/// in one short line.
pub const QUIET_LIBRARIES: &[&str] = &["lapin::returned_messages=error"];

/// The targets of the AMQP client (lapin and its amq-protocol crates). At `trace` they log
/// every frame (the connection's StartOk, whose response holds the broker password, as bytes)
/// and the broker URI with its password; [`wire_level_capped`] keeps them at `debug` at most,
/// whatever `--log` or RUST_LOG say.
pub const WIRE_TARGETS: &[&str] = &["lapin", "amq_protocol"];

/// Whether an event or span is kept by the cap on [`WIRE_TARGETS`]: everything but their
/// `trace` level (their `debug` and above carry no frame and no URI).
pub fn wire_level_capped(meta: &tracing::Metadata<'_>) -> bool {
    *meta.level() < tracing::Level::TRACE
        || !WIRE_TARGETS.iter().any(|t| {
            meta.target().strip_prefix(t).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(':') || rest.starts_with('_')
            })
        })
}

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
    fn the_amqp_client_is_capped_at_debug() {
        use tracing::{Level, Metadata};
        struct Site;
        impl tracing::Callsite for Site {
            fn set_interest(&self, _: tracing::subscriber::Interest) {}
            fn metadata(&self) -> &Metadata<'_> {
                unreachable!("only its identity is used")
            }
        }
        static SITE: Site = Site;
        fn at(target: &'static str, level: Level) -> bool {
            let m = Metadata::new(
                "x",
                target,
                level,
                None,
                None,
                None,
                tracing::field::FieldSet::new(&[], tracing::callsite::Identifier(&SITE)),
                tracing::metadata::Kind::EVENT,
            );
            wire_level_capped(&m)
        }
        for t in [
            "lapin",
            "lapin::io_loop",
            "amq_protocol_tcp",
            "amq_protocol::frame",
        ] {
            assert!(!at(t, Level::TRACE), "{t}");
            assert!(at(t, Level::DEBUG), "{t}");
        }
        assert!(at("curlpow::broker", Level::TRACE));
        assert!(at("lapinx", Level::TRACE));
    }

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
