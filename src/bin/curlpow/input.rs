//! Reading the input of `pow`, `attach`, `hash` and `verify` in bounded memory.
//!
//! The input is read more than once instead of being kept: pass 1 checks every line and names
//! the bad ones on stderr as it meets them (at most [`NAMED_BAD_LINES`], the rest counted); only
//! when every line is good do the later passes compute and write. A file (or a standard input
//! redirected from one) is read again from its start; a stream (a pipe, a FIFO, a terminal) is
//! copied as it is read, into memory up to [`SPOOL_IN_MEMORY`] bytes and past that into an
//! unlinked temporary file. The copy holds the line bound: once a stream line is longer than
//! the command reads, the copy is dropped (that line fails the run, so no later pass needs it)
//! and the line is only measured, up to [`MAX_STREAM_LINE`]; past that the command ends at once
//! (exit 2), so an endless line (`curlpow pow /dev/zero`) cannot fill the temporary folder.

use std::fmt::Display;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use curlpow::Transaction;

use crate::exit::UsageError;
use crate::line_reader::{self, Line, LineReader};
use crate::output::errln;

/// How many bad lines are named on stderr; the others are counted.
pub const NAMED_BAD_LINES: u64 = 100;
/// Lines of transactions longer than this are measured, not read (a transaction is 2673
/// bytes): `pow`, `attach` and `verify`.
pub const MAX_TX_LINE: usize = 16 << 10;
/// A streamed input is kept in memory up to this size, then in a temporary file.
pub const SPOOL_IN_MEMORY: usize = 1 << 20;
/// The longest line of a stream that is measured (at least twice the command's line bound): a
/// stream may never end, a file does.
pub const MAX_STREAM_LINE: usize = 8 << 20;
const READ_BUFFER: usize = 64 << 10;

#[derive(Args)]
pub struct InputArg {
    /// Input file; `-` or nothing for standard input.
    pub file: Option<PathBuf>,
}

/// A re-readable input.
pub struct Input {
    source: Source,
}

enum Source {
    /// A regular file, read again from `start` on every pass.
    File { file: File, start: u64 },
    /// A stream (a pipe, a terminal, a FIFO, a device), not read yet.
    Stream(Option<Box<dyn Read>>),
    /// A stream read once, its bytes kept.
    Spooled(Spool),
}

impl Input {
    /// Open the input; a file that cannot be opened is a usage error.
    pub fn open(arg: &InputArg) -> Result<Input> {
        let source = match &arg.file {
            Some(p) if p.as_os_str() != "-" => {
                let bad = |e: io::Error| UsageError(format!("cannot read {}: {e}", p.display()));
                let file = File::open(p).map_err(bad)?;
                let meta = file.metadata().map_err(bad)?;
                if meta.is_dir() {
                    let e = UsageError(format!("cannot read {}: it is a folder", p.display()));
                    return Err(e.into());
                }
                if meta.is_file() {
                    Source::File { file, start: 0 }
                } else {
                    // A FIFO, `<(command)`, /dev/stdin: read once, like a pipe.
                    Source::Stream(Some(Box::new(file)))
                }
            }
            _ => stdin_source()?,
        };
        Ok(Input { source })
    }

    /// Pass 1: every line given to `check`, each bad one named as it is found (a line over
    /// `max_bytes` as too long, `expected` saying what fits). Err when any line was bad, else
    /// the number of lines.
    pub fn check_lines(
        &mut self,
        max_bytes: usize,
        expected: &str,
        mut check: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<usize> {
        let mut bad = BadLines::default();
        let mut lines = 0;
        self.for_each_line(max_bytes, |line| {
            lines += 1;
            match line {
                Line::Text { number, bytes } => {
                    if let Err(msg) = check(bytes) {
                        bad.report(number, msg);
                    }
                }
                Line::TooLong {
                    number,
                    bytes,
                    chars,
                } => bad.report(number, too_long(chars, bytes, expected)),
            }
            Ok(())
        })?;
        bad.finish()?;
        Ok(lines)
    }

    /// Call `f` on every non-empty line, lines over `max_bytes` measured instead of kept.
    pub fn for_each_line(
        &mut self,
        max_bytes: usize,
        mut f: impl FnMut(Line<'_>) -> Result<()>,
    ) -> Result<()> {
        let buffered = |r| BufReader::with_capacity(READ_BUFFER, r);
        match &mut self.source {
            Source::File { file, start } => {
                file.seek(SeekFrom::Start(*start))
                    .context("rewinding the input")?;
                read_lines(buffered(&*file), max_bytes, &mut f).context("reading the input")
            }
            Source::Stream(from) => {
                let from = from.take().context("the input was already read")?;
                let mut spool = Spool::default();
                let mut ends = LineEnds::new(max_bytes);
                let tee = Tee {
                    from,
                    to: &mut spool,
                    ends: &mut ends,
                };
                let r = read_lines(
                    BufReader::with_capacity(READ_BUFFER, tee),
                    max_bytes,
                    &mut f,
                );
                if let Some((number, limit)) = ends.too_long {
                    return Err(UsageError(format!(
                        "line {number}: more than {limit} bytes without a line end: a stream \
                         (a pipe, a FIFO, a device) is not read past a line that long; nothing \
                         written"
                    ))
                    .into());
                }
                r.context("reading the input")?;
                self.source = Source::Spooled(spool);
                Ok(())
            }
            Source::Spooled(spool) if spool.dropped => Err(anyhow::anyhow!(
                "the copy of the input was dropped at a line over {max_bytes} bytes"
            )),
            Source::Spooled(spool) => match &mut spool.file {
                Some(file) => {
                    file.seek(SeekFrom::Start(0))
                        .context("rewinding the copy of the input")?;
                    read_lines(buffered(&*file), max_bytes, &mut f)
                        .context("reading the copy of the input")
                }
                None => read_lines(&spool.memory[..], max_bytes, &mut f),
            },
        }
    }
}

/// Standard input: a regular file is read again from where it stood; anything else (a pipe, a
/// terminal) is a stream. Closed, or a folder: a usage error, as a FILE that cannot be read.
fn stdin_source() -> Result<Source, UsageError> {
    if crate::output::stdin_was_closed() {
        return Err(UsageError(
            "cannot read standard input: it is closed (give a FILE, or </dev/null for no input)"
                .into(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() {
            let mut file = File::from(fd);
            match file.metadata() {
                Ok(m) if m.is_dir() => {
                    return Err(UsageError(
                        "cannot read standard input: it is a folder".into(),
                    ))
                }
                Ok(m) if m.is_file() => {
                    if let Ok(start) = file.stream_position() {
                        return Ok(Source::File { file, start });
                    }
                }
                _ => {}
            }
        }
    }
    Ok(Source::Stream(Some(Box::new(io::stdin().lock()))))
}

fn read_lines(
    r: impl io::BufRead,
    max_bytes: usize,
    f: &mut impl FnMut(Line<'_>) -> Result<()>,
) -> Result<()> {
    let mut lines = LineReader::new(r, max_bytes);
    while let Some(line) = lines.next_line()? {
        f(line)?;
    }
    Ok(())
}

/// The bytes of a streamed input: in memory, then in a temporary file once they outgrow
/// [`SPOOL_IN_MEMORY`] (or in memory still, when no temporary file can be made).
#[derive(Default)]
struct Spool {
    memory: Vec<u8>,
    file: Option<File>,
    no_file: bool,
    /// A line outgrew the bound: nothing is kept (no later pass reads this input).
    dropped: bool,
}

impl Spool {
    fn drop_copy(&mut self) {
        self.dropped = true;
        self.memory = Vec::new();
        self.file = None;
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.dropped {
            return Ok(buf.len());
        }
        if self.file.is_none() && !self.no_file && self.memory.len() + buf.len() > SPOOL_IN_MEMORY {
            match temp_file() {
                Ok(mut f) => {
                    f.write_all(&self.memory)?;
                    self.memory = Vec::new();
                    self.file = Some(f);
                }
                Err(e) => {
                    errln!(
                        "curlpow: note: no temporary file for the input ({e}): keeping it \
                         in memory"
                    );
                    self.no_file = true;
                }
            }
        }
        match &mut self.file {
            Some(f) => f.write_all(buf)?,
            None => self.memory.extend_from_slice(buf),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

/// A new file in the temporary folder, readable by this user only, unlinked at once (it lives
/// as long as the handle).
fn temp_file() -> io::Result<File> {
    let dir = std::env::temp_dir();
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    for k in 0..100u32 {
        let path = dir.join(format!("curlpow-stdin-{}-{k}", std::process::id()));
        match opts.open(&path) {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

/// Reads `from`, copying every byte read into `to` until a line outgrows the command's bound,
/// and failing once one outgrows [`MAX_STREAM_LINE`].
struct Tee<'a, R> {
    from: R,
    to: &'a mut Spool,
    ends: &'a mut LineEnds,
}

impl<R: Read> Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.from.read(buf)?;
        match self.ends.see(&buf[..n]) {
            Seen::Fits => {}
            Seen::OverBound => self.to.drop_copy(),
            Seen::Endless => return Err(io::Error::other("a line without an end")),
        }
        self.to
            .write_all(&buf[..n])
            .map_err(|e| io::Error::new(e.kind(), format!("keeping a copy of the input: {e}")))?;
        Ok(n)
    }
}

/// What [`LineEnds::see`] found.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    /// Every line so far within the command's bound.
    Fits,
    /// A line over the command's bound (the copy is no longer needed).
    OverBound,
    /// A line over [`MAX_STREAM_LINE`]: stop reading.
    Endless,
}

/// The length of the line being read, over the bytes of a stream as they come.
struct LineEnds {
    /// The command's longest line, its CR included.
    bound: usize,
    /// The longest line measured.
    limit: usize,
    /// Bytes since the last LF.
    run: usize,
    /// LFs seen.
    lines: usize,
    /// Whether a line outgrew `bound`.
    over: bool,
    /// The number of the line that outgrew `limit`, and `limit`.
    too_long: Option<(usize, usize)>,
}

impl LineEnds {
    fn new(max_bytes: usize) -> Self {
        LineEnds {
            bound: max_bytes.saturating_add(1),
            limit: MAX_STREAM_LINE.max(max_bytes.saturating_mul(2)),
            run: 0,
            lines: 0,
            over: false,
            too_long: None,
        }
    }

    /// Account for `bytes`.
    fn see(&mut self, bytes: &[u8]) -> Seen {
        let mut start = 0;
        let mut longest = 0;
        for lf in memchr::memchr_iter(b'\n', bytes) {
            let line = self.run.saturating_add(lf - start);
            if line > self.limit {
                self.too_long = Some((self.lines + 1, self.limit));
                return Seen::Endless;
            }
            longest = longest.max(line);
            self.lines += 1;
            self.run = 0;
            start = lf + 1;
        }
        self.run = self.run.saturating_add(bytes.len() - start);
        if self.run > self.limit {
            self.too_long = Some((self.lines + 1, self.limit));
            return Seen::Endless;
        }
        if longest.max(self.run) > self.bound {
            self.over = true;
        }
        if self.over {
            Seen::OverBound
        } else {
            Seen::Fits
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_lines_are_measured_across_reads() {
        let mut e = LineEnds::new(4);
        assert_eq!(e.see(b"abcd\nab"), Seen::Fits);
        assert_eq!(e.see(b"c"), Seen::Fits);
        assert_eq!(
            e.see(b"def\n"),
            Seen::OverBound,
            "abcdef: 6 bytes, over 4 + a CR"
        );
        assert_eq!(e.see(b"a\n"), Seen::OverBound, "the copy stays dropped");
        let mut e = LineEnds::new(4);
        let chunk = vec![0u8; 1 << 20];
        let mut seen = Seen::Fits;
        for _ in 0..=MAX_STREAM_LINE >> 20 {
            seen = e.see(&chunk);
        }
        assert_eq!(seen, Seen::Endless);
        assert_eq!(e.too_long, Some((1, MAX_STREAM_LINE)));
    }
}

/// The bad lines of pass 1: each named on stderr as it is found, up to [`NAMED_BAD_LINES`],
/// the rest counted; nothing is kept.
#[derive(Default)]
pub struct BadLines {
    total: u64,
}

impl BadLines {
    /// Report line `number`.
    pub fn report(&mut self, number: usize, what: impl Display) {
        self.total += 1;
        if self.total <= NAMED_BAD_LINES {
            errln!("curlpow: line {number}: {what}");
        }
    }

    /// Ok when no line was bad; else the usage error that ends the command (exit 2).
    pub fn finish(self) -> Result<(), UsageError> {
        let n = self.total;
        if n == 0 {
            return Ok(());
        }
        let unnamed = if n > NAMED_BAD_LINES {
            format!(" (the first {NAMED_BAD_LINES} named above)")
        } else {
            String::new()
        };
        Err(UsageError(format!(
            "{n} bad input line{}{unnamed}; nothing written",
            if n == 1 { "" } else { "s" }
        )))
    }
}

/// One line as a transaction, or what is wrong with it.
pub fn parse_tx(bytes: &[u8]) -> Result<Transaction, String> {
    let s = line_reader::text(bytes).map_err(|e| e.to_string())?;
    s.parse::<Transaction>().map_err(|e| line_error(s, &e))
}

/// The error of a later pass that finds a line pass 1 accepted no longer there or no longer
/// good.
pub fn changed() -> anyhow::Error {
    anyhow::anyhow!("the input changed while it was read (a file written to during the run?)")
}

/// The error of a search pass that searched another number of lines (`noun`s) than pass 1
/// checked: the input changed while it was read.
pub fn searched_all(count: usize, searched: usize, noun: &str) -> anyhow::Result<()> {
    if searched != count {
        return Err(anyhow::anyhow!(
            "the input changed while it was read: {count} {noun}s checked, {searched} searched"
        ));
    }
    Ok(())
}

/// The message for a line longer than a command reads.
pub fn too_long(chars: u64, bytes: u64, expected: &str) -> String {
    format!("length {chars} characters ({bytes} bytes), expected {expected}")
}

/// The message for a line that failed to parse: the parser's error, and how many more
/// characters of the line are not trytes when the error is a bad character.
pub fn line_error(line: &str, e: &curlpow::Error) -> String {
    let mut msg = e.to_string();
    if let curlpow::Error::Tryte(curlpow::TryteError::BadChar { column, .. }) = e {
        let more = line
            .chars()
            .skip(*column)
            .filter(|&c| {
                u8::try_from(c)
                    .ok()
                    .and_then(curlpow::trits::tryte_value)
                    .is_none()
            })
            .count();
        if more > 0 {
            msg += &format!(
                "; {more} more character{} on this line {} not trytes",
                if more == 1 { "" } else { "s" },
                if more == 1 { "is" } else { "are" }
            );
        }
    }
    msg
}
