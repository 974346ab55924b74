//! CPU kernel choice: detected once, overridable by the API or `CURLPOW_CPU_KERNEL`.

use crate::control::Worker;
use crate::error::Error;
use crate::search::{CounterRange, Hit, SearchJob};

/// A CPU search kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CpuKernel {
    /// 64 lanes in `u64`; runs everywhere; the reference.
    Portable,
}

impl CpuKernel {
    /// Every kernel, slowest first.
    pub const ALL: &'static [CpuKernel] = &[CpuKernel::Portable];

    /// The fastest kernel this CPU supports.
    pub fn detect() -> CpuKernel {
        *Self::ALL
            .iter()
            .rev()
            .find(|k| k.is_supported())
            .unwrap_or(&CpuKernel::Portable)
    }

    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            CpuKernel::Portable => true,
        }
    }

    /// The kernel's name (`portable`, `avx2`, `avx512`).
    pub fn name(self) -> &'static str {
        match self {
            CpuKernel::Portable => "portable",
        }
    }

    /// Nonces per transform.
    pub fn lanes(self) -> usize {
        match self {
            CpuKernel::Portable => super::portable::LANES,
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
                    Self::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
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
        match std::env::var("CURLPOW_CPU_KERNEL") {
            Ok(v) if !v.trim().is_empty() => Self::from_name(&v).map(Some),
            _ => Ok(None),
        }
    }

    /// Run the kernel on one worker's range.
    pub(crate) fn search(self, job: &SearchJob, range: CounterRange, w: &mut Worker<'_>) -> Option<Hit> {
        match self {
            CpuKernel::Portable => super::portable::search(job, range, w),
        }
    }
}

impl std::fmt::Display for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
