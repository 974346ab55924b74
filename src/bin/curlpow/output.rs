//! The one way results reach standard output, and messages reach standard error.
//!
//! A result that cannot be written is a failure, never exit 0:
//! - standard output closed when the process starts (`curlpow pow >&-`): exit 1 before any work;
//! - the reader went away (`curlpow pow | head -1`, EPIPE): a quiet exit 141, what a shell
//!   reports for a program killed by SIGPIPE, so `set -o pipefail` scripts see the loss;
//! - any other write error (a full disk, `>/dev/full`, an I/O error): exit 1 with the error.

use std::fmt;
use std::io::{self, BufWriter, Write};

/// A line on standard error; a stderr that cannot be written is ignored (never a panic).
macro_rules! errln {
    ($($arg:tt)*) => {{
        let _ = ::std::io::Write::write_fmt(
            &mut ::std::io::stderr(),
            format_args!("{}\n", format_args!($($arg)*)),
        );
    }};
}
pub(crate) use errln;

/// Why results could not be written.
#[derive(Debug)]
pub enum OutputError {
    /// Standard output was closed before the process started.
    ClosedAtStart,
    /// The reader of the pipe went away (EPIPE).
    BrokenPipe,
    /// Any other write error.
    Failed(io::Error),
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::ClosedAtStart => f.write_str(
                "standard output is closed: results would be lost (redirect it to a file, \
                 or to /dev/null to discard them)",
            ),
            OutputError::BrokenPipe => f.write_str("standard output: the reader went away"),
            OutputError::Failed(e) => write!(f, "cannot write standard output: {e}"),
        }
    }
}

impl std::error::Error for OutputError {}

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            OutputError::BrokenPipe
        } else {
            OutputError::Failed(e)
        }
    }
}

/// Buffered standard output; every write error is an [`OutputError`], and nothing counts as
/// written until [`Stdout::finish`] has flushed it.
pub struct Stdout {
    w: BufWriter<io::StdoutLock<'static>>,
}

impl Stdout {
    /// Standard output, or an error if it was closed when the process started.
    pub fn open() -> Result<Stdout, OutputError> {
        check_open()?;
        Ok(Stdout {
            w: BufWriter::with_capacity(64 * 1024, io::stdout().lock()),
        })
    }

    /// Write one line.
    pub fn line(&mut self, s: impl fmt::Display) -> Result<(), OutputError> {
        writeln!(self.w, "{s}")?;
        Ok(())
    }

    /// Write raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> Result<(), OutputError> {
        self.w.write_all(b)?;
        Ok(())
    }

    /// Flush everything; only then is the output written.
    pub fn finish(mut self) -> Result<(), OutputError> {
        self.w.flush()?;
        Ok(())
    }
}

/// An error if standard output was closed when the process started. Rust's runtime puts
/// /dev/null on a closed standard descriptor before `main`, where writes would "succeed" and
/// the results vanish; a probe that runs before the runtime's start-up looks first.
pub fn check_open() -> Result<(), OutputError> {
    if closed_at_start::stdout_was_closed() {
        Err(OutputError::ClosedAtStart)
    } else {
        Ok(())
    }
}

/// Whether standard input was closed when the process started (`curlpow pow <&-`): Rust's
/// runtime would show it as an empty /dev/null.
pub fn stdin_was_closed() -> bool {
    closed_at_start::stdin_was_closed()
}

#[cfg(target_os = "linux")]
mod closed_at_start {
    use std::sync::atomic::{AtomicBool, Ordering};

    static CLOSED: AtomicBool = AtomicBool::new(false);
    static STDIN_CLOSED: AtomicBool = AtomicBool::new(false);

    /// Runs from `.init_array`, before Rust's runtime start-up reopens closed standard
    /// descriptors on /dev/null.
    extern "C" fn probe() {
        // SAFETY: fcntl(F_GETFD) only reads the descriptor table; on a closed descriptor it
        // returns -1 (EBADF) and changes nothing.
        let (out, inp) = unsafe {
            (
                libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD),
                libc::fcntl(libc::STDIN_FILENO, libc::F_GETFD),
            )
        };
        CLOSED.store(out == -1, Ordering::Relaxed);
        STDIN_CLOSED.store(inp == -1, Ordering::Relaxed);
    }

    #[used]
    #[link_section = ".init_array"]
    static PROBE: extern "C" fn() = probe;

    pub fn stdout_was_closed() -> bool {
        CLOSED.load(Ordering::Relaxed)
    }

    pub fn stdin_was_closed() -> bool {
        STDIN_CLOSED.load(Ordering::Relaxed)
    }
}

/// Elsewhere the probe is not wired in: a closed standard output reads as open.
#[cfg(not(target_os = "linux"))]
mod closed_at_start {
    pub fn stdout_was_closed() -> bool {
        false
    }

    pub fn stdin_was_closed() -> bool {
        false
    }
}
