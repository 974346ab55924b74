//! The signals that end a long-running service (the server, the broker worker).

use std::io;

/// SIGTERM and SIGINT, registered once at start (a signal that arrives before registration
/// would kill the process instead of stopping it gracefully): what stops `curlpow serve` and
/// drains `curlpow worker`.
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// Register SIGTERM and SIGINT (Ctrl-C elsewhere). Must run inside the runtime.
    pub fn register() -> io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals {})
        }
    }

    /// Wait for the first of them; returns its name.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
