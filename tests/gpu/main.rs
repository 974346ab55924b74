//! The GPU backends on real drivers (PoCL and Mesa lavapipe on CI, any GPU where there is one),
//! one test binary: `opencl` (with the `opencl` feature) and `wgpu` (with `wgpu`). Without a
//! device a test skips visibly; `CURLPOW_REQUIRE_BACKENDS=opencl,wgpu` makes that a failure.

use curlpow_testkit::common;

mod block_gpu;
mod multi_gpu;
// These two run the `curlpow` binary (built with the `cli` feature).
#[cfg(all(feature = "cli", feature = "opencl"))]
mod gpu_static;
mod opencl;
#[cfg(feature = "cli")]
mod tune;
mod wgpu;
mod wgpu_block;
