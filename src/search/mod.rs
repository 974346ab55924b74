//! The search contract between the engine and every device: the [`Device`](device::Device)
//! trait and what a device says about itself, the jobs it is given (a transaction's mid-state
//! and nonce layout in `job`, the block PoW in `block`), how a search is stopped and counted
//! (`control`), the bit-sliced lane layout the kernels fill (`bitslice`, `layout`), and what a
//! GPU reports about its launches (`launch_stats`). Every hit a device returns is checked here,
//! on the host, before the engine uses it.
//!
//! It may import `base` and `ternary`.

pub mod bitslice;
pub mod block;
pub mod control;
pub mod device;
pub mod job;
pub mod launch_stats;
pub mod layout;
pub mod nonce;
