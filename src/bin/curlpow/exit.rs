//! Exit codes: 0 done, 1 a failure (or a check that did not pass), 2 bad usage or input,
//! 3 stopped by a timeout or a cancel.

use std::process::ExitCode;

use curlpow::Error;

/// A usage or input error: exit 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code for an error that ended a command.
pub fn code_of(e: &anyhow::Error) -> ExitCode {
    let code = if e.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        match e.downcast_ref::<Error>() {
            Some(Error::Timeout { .. } | Error::Cancelled { .. }) => 3,
            Some(Error::InvalidMwm(_) | Error::UnsupportedKernel { .. } | Error::Config(_)) => 2,
            _ => 1,
        }
    };
    ExitCode::from(code)
}
