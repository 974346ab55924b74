//! Graceful shutdown: SIGTERM or SIGINT stops the accept loop; attaches in flight get a grace
//! period to finish, then are cancelled (they answer 503); the process exits 0. The signals are
//! taken as [`crate::service::signals`] says (blocked and waited for with sigwait when the process
//! blocked them first, so that no driver's handler can kill it).

pub use crate::service::signals::Signals;
