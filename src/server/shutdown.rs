//! Graceful shutdown: SIGTERM or SIGINT stops the accept loop; attaches in flight get a grace
//! period to finish, then are cancelled (they answer 503); the process exits 0.

pub use crate::signals::Signals;
