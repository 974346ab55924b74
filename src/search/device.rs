//! The one interface every backend implements, and what a device says about itself: all a
//! device of your own needs ([`Device`], [`DeviceInfo`], the [`SearchJob`] it is given with its
//! [`CounterRange`] and [`SearchControl`], the [`Hit`] it returns; or, for a device that fills
//! the nonce its own way such as a remote worker, [`Device::search_nonce`] and [`Found`]).
//!
//! # The nonce layout
//! The nonce is trits 162..243 of the last 243-trit block. Every backend fills it the same way,
//! so a hit is fully described by a [`Hit`] (a counter and a lane):
//!
//! | block trits | what |
//! |---|---|
//! | 162..168 | the lane number `l` (0..729) as balanced ternary of `l - 364` |
//! | 168..210 | the 64-bit *counter* `n` as balanced ternary (42 trits) |
//! | 210..243 | zero |
//!
//! One transform of a `W`-lane kernel tries lanes `0..W` for one counter. A device is given a
//! [`CounterRange`] and gives each worker, work-item and launch its own counters out of it, so
//! ranges are disjoint by construction; different devices get disjoint ranges too.

use serde::Serialize;

use crate::base::error::Error;
pub(crate) use crate::base::kinds::{Backend, DeviceKind};
pub use crate::search::control::SearchControl;
pub use crate::search::launch_stats::{LaunchStats, SearchTiming};
pub use crate::search::nonce::{CounterRange, Found, Hit, NONCE_TRITS};
pub use crate::search::search_job::SearchJob;

/// A device as listed by `curlpow devices`: the facts the engine reads are typed fields;
/// `details` is for display only (the engine never reads it).
///
/// ```
/// use curlpow::device::DeviceInfo;
/// use curlpow::{Backend, DeviceKind};
/// let info = DeviceInfo::new("mydev:0", Backend::Cpu, "my accelerator", DeviceKind::Accelerator)
///     .with_lanes(64)
///     .with_declared_speed(5e7);
/// assert_eq!(info.declared_nonces_per_second, Some(5e7));
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// Stable id: `"cpu"`, `"opencl:P:D"`, `"wgpu:N"`.
    pub id: String,
    /// The backend.
    pub backend: Backend,
    /// The device's name as its driver reports it.
    pub name: String,
    /// The kind of hardware.
    pub kind: DeviceKind,
    /// A software driver of a GPU API running on the CPU (PoCL, lavapipe/llvmpipe): never
    /// picked unless asked for.
    pub software: bool,
    /// The PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel), where the driver says it.
    /// With the name it identifies the same GPU seen through two APIs.
    pub pci_vendor_id: Option<u32>,
    /// The PCI bus address (`"0000:19:00.0"`, lowercase hex), where the driver says it: the
    /// exact identity of a card.
    pub pci_bus_id: Option<String>,
    /// Nonces one transform of one work-item (or one CPU worker) tries.
    pub lanes: usize,
    /// The kernel variant (`avx512`, `u64x8`, `64-lane`, …).
    pub kernel: String,
    /// The backend's estimate of its speed in nonces per second, used to rank devices until
    /// they have been measured.
    pub declared_nonces_per_second: Option<f64>,
    /// Backend details for display (platform, driver, compute units, memory, tuning, …).
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl DeviceInfo {
    /// A description with no vendor id, one lane, no kernel name and no declared speed.
    pub fn new(
        id: impl Into<String>,
        backend: Backend,
        name: impl Into<String>,
        kind: DeviceKind,
    ) -> Self {
        DeviceInfo {
            id: id.into(),
            backend,
            name: name.into(),
            kind,
            software: false,
            pci_vendor_id: None,
            pci_bus_id: None,
            lanes: 1,
            kernel: String::new(),
            declared_nonces_per_second: None,
            details: serde_json::Map::new(),
        }
    }

    /// Mark it as a software driver of a GPU API.
    pub fn with_software(mut self, on: bool) -> Self {
        self.software = on;
        self
    }

    /// Set the PCI vendor id.
    pub fn with_pci_vendor_id(mut self, id: u32) -> Self {
        self.pci_vendor_id = Some(id);
        self
    }

    /// Set the PCI bus address (`"0000:19:00.0"`).
    pub fn with_pci_bus_id(mut self, id: impl Into<String>) -> Self {
        self.pci_bus_id = Some(id.into());
        self
    }

    /// Set the lanes per transform.
    pub fn with_lanes(mut self, lanes: usize) -> Self {
        self.lanes = lanes;
        self
    }

    /// Set the kernel name.
    pub fn with_kernel(mut self, kernel: impl Into<String>) -> Self {
        self.kernel = kernel.into();
        self
    }

    /// Set the declared speed in nonces per second.
    pub fn with_declared_speed(mut self, nonces_per_second: f64) -> Self {
        self.declared_nonces_per_second = Some(nonces_per_second);
        self
    }

    /// Add a display detail.
    pub fn with_detail(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }
}

/// The result of one device search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The hit, or `None` when the search stopped (found elsewhere, cancelled, deadline).
    pub hit: Option<Hit>,
    /// Nonces tried by this device in this search.
    pub nonces: u64,
}

/// The result of [`Device::search_nonce`]: [`SearchOutcome`] for a device whose answer may be
/// raw nonce trits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceOutcome {
    /// What the device found, or `None` when the search stopped (found elsewhere, cancelled,
    /// deadline).
    pub found: Option<Found>,
    /// Nonces tried by this device in this search (an estimate where the device cannot count
    /// them, such as a remote worker that does not say).
    pub nonces: u64,
}

impl From<SearchOutcome> for NonceOutcome {
    fn from(o: SearchOutcome) -> Self {
        NonceOutcome {
            found: o.hit.map(Found::Hit),
            nonces: o.nonces,
        }
    }
}

/// A device that can run the bit-sliced search. Implemented by every backend; public so that
/// tests and embedders can plug in their own (e.g. a device that fails on purpose).
pub trait Device: Send + Sync {
    /// What the device is.
    fn info(&self) -> &DeviceInfo;

    /// Search the counters of `range` (see [the nonce layout](crate::device#the-nonce-layout))
    /// until a hit, or until `ctl` says stop. The returned hit is checked by the caller on the
    /// host; the device need not verify it, and must not stop the search's other devices itself
    /// (the engine does that once the hit is verified). Must return promptly (milliseconds) once
    /// `ctl` says stop.
    fn search(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error>;

    /// [`search`](Self::search) for a device whose answer need not follow the crate's nonce
    /// layout (a remote worker returns whole nonces): the engine calls this one. The default
    /// calls `search`. What it returns is checked on the host like a hit; the same rules apply.
    fn search_nonce(
        &self,
        job: &SearchJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<NonceOutcome, Error> {
        self.search(job, range, ctl).map(NonceOutcome::from)
    }

    /// Nonces tried on this device over its life (summed on read from per-worker counters).
    fn nonces_tried(&self) -> u64;

    /// One-time setup (compile the kernel, open the session), done before the first search
    /// starts its clock, so it never counts as search time. Idempotent; the default does
    /// nothing.
    fn prepare(&self) -> Result<(), Error> {
        Ok(())
    }

    /// A GPU device's launch shape (adapted as it works), build facts and last search timing;
    /// `None` (the default) for devices without launches.
    fn launch_stats(&self) -> Option<crate::search::launch_stats::LaunchStats> {
        None
    }

    /// Whether the device runs the block PoW ([`search_block`](Self::search_block)); the
    /// engine gives block searches only to devices that say so. The default: no.
    fn supports_block_pow(&self) -> bool {
        false
    }

    /// Search a block PoW job ([`crate::search::block::BlockJob`], whose docs have the nonce layout)
    /// over the counters of `range`, with the same rules as [`search`](Self::search): the hit
    /// is checked on the host, and the search ends promptly once `ctl` says stop. The default
    /// says the device does not run it.
    fn search_block(
        &self,
        job: &crate::search::block::BlockJob,
        range: CounterRange,
        ctl: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        let _ = (job, range, ctl);
        let info = self.info();
        Err(Error::Backend {
            backend: info.backend,
            device: info.id.clone(),
            message: "this device does not run the block PoW".into(),
        })
    }
}
