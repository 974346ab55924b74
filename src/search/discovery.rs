//! What a backend's discovery is asked and what it returns: the GPU backends' `discover`
//! functions and the engine's builder share these (not part of the device contract).

use crate::search::device::Device;

/// What GPU discovery may return.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscoverOptions {
    /// Also list software and CPU devices of GPU APIs (PoCL, lavapipe/llvmpipe). Off by default:
    /// on a GPU host they are never picked unless asked for; tests turn this on.
    pub include_software: bool,
}

/// What a backend's discovery found: its devices, and what went wrong on the way (a driver that
/// failed to answer, a device that could not be opened) as readable warnings, never a panic.
#[derive(Default)]
pub struct Discovery {
    /// Usable devices, best first.
    pub devices: Vec<std::sync::Arc<dyn Device>>,
    /// Problems met while probing.
    pub warnings: Vec<String>,
}
