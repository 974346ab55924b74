//! The bottom layer: the vocabulary every other layer shares and imports nothing of the crate's
//! own: the typed errors ([`Error`](error::Error), [`TryteError`](error::TryteError), the block
//! PoW's [`BlockError`](error::BlockError)), the names of backends and device kinds, and a queue
//! that keeps its memory through bursts, and the table of environment variables with their one
//! reader ([`env`](mod@env)).

pub mod env;
pub(crate) mod error;
pub(crate) mod kinds;
pub(crate) mod lazy_deque;
pub(crate) mod line_reader;
