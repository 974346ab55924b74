//! [`Selection`]: which devices a search may use.

use crate::search::device::{Backend, DeviceInfo};

/// Which devices a search may use. Empty lists mean "no restriction".
///
/// ```
/// use curlpow::{Backend, Selection};
/// let gpus_but_one = Selection {
///     backends: vec![Backend::Opencl, Backend::Wgpu],
///     exclude: vec!["wgpu:1".into()],
///     ..Default::default()
/// };
/// # let _ = gpus_but_one;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only these backends.
    pub backends: Vec<Backend>,
    /// Only these device ids.
    pub devices: Vec<String>,
    /// Never these device ids.
    pub exclude: Vec<String>,
}

impl Selection {
    /// Whether a device passes the selection.
    pub fn allows(&self, info: &DeviceInfo) -> bool {
        (self.backends.is_empty() || self.backends.contains(&info.backend))
            && (self.devices.is_empty() || self.devices.iter().any(|d| d == &info.id))
            && !self.exclude.iter().any(|d| d == &info.id)
    }
}
