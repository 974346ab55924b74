//! Exit codes: 0 done, 1 a failure (a device fault, results that could not be written, a check
//! that did not pass), 2 bad usage or input, 3 stopped by a timeout or a cancel, 141 the reader
//! of standard output went away (EPIPE; the code a shell shows for a program killed by SIGPIPE).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use curlpow::Error;

use crate::output::OutputError;

/// A usage or input error: exit 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The work stopped at the deadline (or a cancel): exit 3, with one message saying what was
/// done.
#[derive(Debug)]
pub struct Stopped(pub String);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stopped {}

/// The error that ended the search pass of a batch command (`pow`, `block-pow`): a timeout
/// becomes [`Stopped`], saying how many of the `count` lines (`noun`s) were done and that
/// nothing was written; any other error is passed on as it is.
pub fn batch_stopped(
    e: anyhow::Error,
    started: Instant,
    timeout: Option<Duration>,
    (done, count): (usize, usize),
    noun: &str,
) -> anyhow::Error {
    match e.downcast::<Error>() {
        Ok(Error::Timeout { .. }) => Stopped(format!(
            "timed out after {:.2?} (--timeout {} s): {done} of {count} {noun}{} done, \
             nothing written",
            started.elapsed(),
            timeout.unwrap_or_default().as_secs_f64(),
            if count == 1 { "" } else { "s" }
        ))
        .into(),
        Ok(e) => e.into(),
        Err(e) => e,
    }
}

/// Exit 141 for a broken pipe.
pub const BROKEN_PIPE: u8 = 141;

/// The exit code for an error that ended a command.
pub fn code_of(e: &anyhow::Error) -> ExitCode {
    let code = if e.downcast_ref::<UsageError>().is_some() {
        2
    } else if e.downcast_ref::<Stopped>().is_some() {
        3
    } else if let Some(o) = e.downcast_ref::<OutputError>() {
        match o {
            OutputError::BrokenPipe => BROKEN_PIPE,
            _ => 1,
        }
    } else {
        match e.downcast_ref::<Error>() {
            Some(Error::Timeout { .. } | Error::Cancelled { .. }) => 3,
            Some(Error::InvalidMwm(_) | Error::UnsupportedKernel { .. } | Error::Config(_)) => 2,
            _ => 1,
        }
    };
    ExitCode::from(code)
}

/// Whether the error is printed: a reader that went away needs no message (like any program
/// ended by SIGPIPE).
pub fn is_quiet(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<OutputError>(),
        Some(OutputError::BrokenPipe)
    )
}
