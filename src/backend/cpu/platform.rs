//! CPU kernel choice: detected once, overridable by the API or `CURLPOW_CPU_KERNEL`.
//!
//! Every kernel has the same signature as [`portable::search`](super::portable::search). The
//! SIMD kernels are the generic loop ([`kernel`], [`hooks`]) run
//! with an instruction-set token, which only a CPU with those instructions gives out
//! (`Avx2::new()`, `Avx512::new()`), so this file has no `unsafe`. The kernels' unchecked state
//! accesses are `unsafe` blocks of their own, in the passes (`passes.rs`), each with its
//! `SAFETY` comment.

use super::messages::Messages;
#[cfg(target_arch = "x86_64")]
use super::{avx2::Avx2, avx512::Avx512, hooks, kernel};
use crate::base::error::Error;
use crate::search::control::Worker;
use crate::search::layout::KernelJob;
use crate::search::nonce::{CounterRange, Hit};
use crate::search::search_job::SearchJob;

/// A CPU search kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CpuKernel {
    /// 64 lanes in `u64`; runs everywhere; the reference.
    Portable,
    /// 256 lanes in `__m256i` (x86-64 with AVX2), three rounds fused per pass.
    Avx2,
    /// 512 lanes in `__m512i` (x86-64 with AVX-512F), `vpternlogq` S-box, five rounds fused
    /// per pass.
    Avx512,
}

impl CpuKernel {
    /// Every kernel, slowest first.
    pub const ALL: &'static [CpuKernel] =
        &[CpuKernel::Portable, CpuKernel::Avx2, CpuKernel::Avx512];

    /// The fastest kernel this CPU supports.
    pub fn detect() -> CpuKernel {
        *Self::ALL
            .iter()
            .rev()
            .find(|k| k.is_supported())
            .unwrap_or(&CpuKernel::Portable)
    }

    /// Whether this CPU can run the kernel. (`is_x86_feature_detected!` runs CPUID once per
    /// process and caches the answer in a static; later calls are one load.)
    pub fn is_supported(self) -> bool {
        match self {
            CpuKernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The kernel's name (`portable`, `avx2`, `avx512`).
    pub fn name(self) -> &'static str {
        match self {
            CpuKernel::Portable => "portable",
            CpuKernel::Avx2 => "avx2",
            CpuKernel::Avx512 => "avx512",
        }
    }

    /// Nonces per transform.
    pub fn lanes(self) -> usize {
        match self {
            CpuKernel::Portable => super::portable::LANES,
            CpuKernel::Avx2 => 256,
            CpuKernel::Avx512 => 512,
        }
    }

    /// Nonces per second one thread reaches, roughly: the registry's estimate before the CPU
    /// has worked, replaced by the measured rate as it works. Set near the per-thread rates in
    /// `docs/benchmarks.md` ("CPU search"); only their order of magnitude matters.
    pub(crate) fn estimated_rate_per_thread(self) -> f64 {
        match self {
            CpuKernel::Portable => 8e5,
            CpuKernel::Avx2 => 8e6,
            CpuKernel::Avx512 => 2e7,
        }
    }

    /// Nanoseconds of one transform (all lanes) on one core, set from `docs/benchmarks.md`
    /// ("CPU search", "Per-call latency"); only its ratio to the single-state transform's
    /// ([`PlanesKernel::transform_ns`](crate::internal::PlanesKernel)) is used, to choose between them.
    pub(crate) fn transform_ns(self) -> u64 {
        match self {
            CpuKernel::Portable => 80_000,
            CpuKernel::Avx2 => 26_000,
            CpuKernel::Avx512 => 42_000,
        }
    }

    /// Parse a kernel name; an unknown name or one this CPU cannot run is an error.
    pub fn from_name(name: &str) -> Result<CpuKernel, Error> {
        let k = Self::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| Error::UnsupportedKernel {
                kernel: name.to_string(),
                reason: format!(
                    "unknown kernel (known: {})",
                    Self::ALL
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        k.check()?;
        Ok(k)
    }

    /// An error if this CPU cannot run the kernel.
    pub fn check(self) -> Result<(), Error> {
        if self.is_supported() {
            Ok(())
        } else {
            Err(Error::UnsupportedKernel {
                kernel: self.name().to_string(),
                reason: "this CPU lacks the instructions it needs".to_string(),
            })
        }
    }

    /// The kernel named by `CURLPOW_CPU_KERNEL`, if set.
    pub fn from_env() -> Result<Option<CpuKernel>, Error> {
        match crate::base::env::get(crate::base::env::CPU_KERNEL).map_err(Error::Config)? {
            Some(v) => Self::from_name(&v).map(Some),
            None => Ok(None),
        }
    }

    /// Run the kernel on one worker's range. A kernel this CPU lacks finds nothing (the device
    /// checks support when it is built, so this does not happen).
    pub(crate) fn search(
        self,
        job: &KernelJob<'_>,
        range: CounterRange,
        w: &mut Worker<'_>,
    ) -> Option<Hit> {
        match self {
            CpuKernel::Portable => super::portable::search(job, range, w),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 => Avx2::new().and_then(|s| kernel::search(s, job, range, w)),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 => Avx512::new().and_then(|s| kernel::search(s, job, range, w)),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }

    /// Batch hashing: absorb every message (equal lengths, at least one whole 243-trit block,
    /// valid digits; trits or trytes) bit-sliced across messages with this kernel's transform,
    /// `lanes()` messages per pass, and write the first `out_len` trits (1..=729) of each final
    /// state to `out`, message after message. A kernel this CPU lacks falls back to the
    /// portable one.
    pub(crate) fn absorb_many(self, msgs: Messages<'_>, out_len: usize, out: &mut [i8]) {
        assert!(out_len > 0 && out.len() == msgs.len() * out_len);
        match self {
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 if let Some(s) = Avx2::new() => {
                for_each_chunk(msgs, 256, out_len, out, |c, o| {
                    hooks::absorb_lanes(s, c, out_len, o)
                })
            }
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 if let Some(s) = Avx512::new() => {
                for_each_chunk(msgs, 512, out_len, out, |c, o| {
                    hooks::absorb_lanes(s, c, out_len, o)
                })
            }
            _ => for_each_chunk(msgs, super::portable::LANES, out_len, out, |c, o| {
                super::portable::absorb_lanes(c, out_len, o)
            }),
        }
    }
}

/// Run `f` on each `lanes` messages and their part of `out`.
fn for_each_chunk(
    msgs: Messages<'_>,
    lanes: usize,
    out_len: usize,
    out: &mut [i8],
    mut f: impl FnMut(Messages<'_>, &mut [i8]),
) {
    for (i, o) in out.chunks_mut(lanes * out_len).enumerate() {
        let end = msgs.len().min(lanes * (i + 1));
        f(msgs.slice(lanes * i..end), o);
    }
}

/// A kernel that computed a `(0, 0)` pair: a bug, reported as an error of the CPU device.
fn bad_trit(b: crate::search::bitslice::BadTrit) -> Error {
    Error::Backend {
        backend: crate::search::device::Backend::Cpu,
        device: "cpu".into(),
        message: format!("the kernel computed an invalid trit encoding: {b}"),
    }
}

/// The CPU kernels' test and bench hooks, for the crate's own tests and benchmarks
/// (`curlpow::internal::KernelHooks`): not a stable API.
pub trait KernelHooks {
    /// Bench hook: run the kernel on one worker's range with the caller's [`Worker`] (for
    /// experiments with custom threads and counters; the engine uses its pool instead).
    fn search_range(
        self,
        job: &SearchJob,
        range: CounterRange,
        w: &mut Worker<'_>,
    ) -> Result<Option<Hit>, Error>;

    /// Test hook: [`search_range`](Self::search_range) for a block PoW search (the nonce
    /// layout of [`crate::search::block::BlockJob`]); a hit is not checked here.
    fn search_block_range(
        self,
        job: &crate::search::block::BlockJob,
        range: CounterRange,
        w: &mut Worker<'_>,
    ) -> Result<Option<Hit>, Error>;

    /// Test hook: run this kernel's 81-round transform on each state in place (lane `k` of a
    /// batch = `states[k]`), so it can be compared with [`crate::curl::transform`].
    fn transform_states(
        self,
        states: &mut [[i8; crate::ternary::curl::STATE_LEN]],
    ) -> Result<(), Error>;

    /// Test hook: the nonce trits (block trits 162..243) this kernel puts into each lane of its
    /// pre-transform states for the first `transforms` counters of `range`, lane by lane.
    fn placed_nonces(
        self,
        job: &SearchJob,
        range: CounterRange,
        transforms: usize,
    ) -> Result<Vec<[i8; 81]>, Error>;

    /// Bench hook: `n` bare transforms of `job`'s template (no counter, zero test or stop
    /// check), to measure what the search loop adds.
    fn bare_transforms(self, job: &SearchJob, n: usize) -> Result<u64, Error>;
}

impl KernelHooks for CpuKernel {
    fn search_range(
        self,
        job: &SearchJob,
        range: CounterRange,
        w: &mut Worker<'_>,
    ) -> Result<Option<Hit>, Error> {
        self.check()?;
        Ok(self.search(&job.kernel_job(), range, w))
    }

    fn search_block_range(
        self,
        job: &crate::search::block::BlockJob,
        range: CounterRange,
        w: &mut Worker<'_>,
    ) -> Result<Option<Hit>, Error> {
        self.check()?;
        Ok(self.search(&crate::search::layout::block_kernel_job(job), range, w))
    }

    fn transform_states(
        self,
        states: &mut [[i8; crate::ternary::curl::STATE_LEN]],
    ) -> Result<(), Error> {
        self.check()?;
        match self {
            CpuKernel::Portable => super::portable::transform_states(states),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 => Avx2::new().map_or(Ok(()), |s| hooks::transform_states(s, states)),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 => {
                Avx512::new().map_or(Ok(()), |s| hooks::transform_states(s, states))
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => Ok(()),
        }
        .map_err(bad_trit)
    }

    fn placed_nonces(
        self,
        job: &SearchJob,
        range: CounterRange,
        transforms: usize,
    ) -> Result<Vec<[i8; 81]>, Error> {
        self.check()?;
        let job = &job.kernel_job();
        match self {
            CpuKernel::Portable => super::portable::placed_nonces(job, range, transforms),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 => Avx2::new().map_or(Ok(Vec::new()), |s| {
                hooks::placed_nonces(s, job, range, transforms)
            }),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 => Avx512::new().map_or(Ok(Vec::new()), |s| {
                hooks::placed_nonces(s, job, range, transforms)
            }),
            #[cfg(not(target_arch = "x86_64"))]
            _ => Ok(Vec::new()),
        }
        .map_err(bad_trit)
    }

    fn bare_transforms(self, job: &SearchJob, n: usize) -> Result<u64, Error> {
        self.check()?;
        let job = &job.kernel_job();
        Ok(match self {
            CpuKernel::Portable => super::portable::bare_transforms(job, n),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx2 => Avx2::new().map_or(0, |s| hooks::bare_transforms(s, job, n)),
            #[cfg(target_arch = "x86_64")]
            CpuKernel::Avx512 => Avx512::new().map_or(0, |s| hooks::bare_transforms(s, job, n)),
            #[cfg(not(target_arch = "x86_64"))]
            _ => 0,
        })
    }
}

impl std::fmt::Display for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
