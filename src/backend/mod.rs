//! The devices: each backend implements [`Device`](crate::search::device::Device) and nothing
//! else of the engine. `cpu` (the SIMD search on one persistent pool), `gpu` (the launch driver
//! the GPU backends share), `opencl` and `wgpu` (their kernels are `kernels/curl_pow.cl`,
//! `kernels/curl_pow*.wgsl` and `kernels/block_pow.*`), `remote` (workers behind a RabbitMQ
//! queue, and the AMQP plumbing and message format they share with the broker worker), `fault`
//! (a device that fails on purpose, for tests).
//!
//! It may import `base`, `ternary` and `search`, never `engine` or `service`.

pub(crate) mod cpu;
#[cfg(feature = "fault-injection")]
pub mod fault;
#[cfg(any(feature = "opencl", feature = "wgpu"))]
pub(crate) mod gpu;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;
#[cfg(feature = "broker")]
pub(crate) mod remote;
#[cfg(feature = "wgpu")]
pub(crate) mod wgpu;
