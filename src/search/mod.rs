//! The search contract between the engine and every device: the [`Device`](device::Device)
//! trait and what a device says about itself, the jobs it is given (a transaction's mid-state
//! and nonce layout in `job`, the block PoW in `block`), how a search is stopped and counted
//! (`control`), the bit-sliced lane layout the kernels fill (`bitslice`, `layout`), and what a
//! GPU reports about its launches (`launch_stats`); what a backend's discovery is asked and
//! returns (`discovery`). Every hit a device returns is checked here,
//! on the host, before the engine uses it.
//!
//! It may import `base` and `ternary`.

pub(crate) mod bitslice;
pub mod block;
pub(crate) mod control;
pub mod device;
pub(crate) mod discovery;
pub(crate) mod launch_stats;
pub(crate) mod layout;
pub(crate) mod nonce;
pub(crate) mod search_job;
