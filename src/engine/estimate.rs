//! How fast the engine's devices are expected to search: what `curlpow pow` uses to say how long
//! a search at a given MWM will take before it starts.

use super::Engine;
use crate::engine::registry::Selection;

impl Engine {
    /// The nonces per second the devices `sel` allows are expected to try together (as a batch
    /// or a latency-mode search uses them): each device's rate as the registry ranks it —
    /// measured as it works in this process, seeded by its backend's declared speed. Zero when
    /// the selection allows no device.
    ///
    /// The expected work of one search is [`Mwm::expected_work`](crate::Mwm::expected_work)
    /// nonces, so the expected time is `mwm.expected_work() / rate`.
    ///
    /// ```
    /// use curlpow::{Backend, Engine, Mwm, Selection};
    /// let engine = Engine::builder().threads(2).backends(&[Backend::Cpu]).build().unwrap();
    /// let rate = engine.expected_nonces_per_second(&Selection::default());
    /// assert!(rate > 0.0);
    /// let mwm14_seconds = Mwm::MAINNET.expected_work() / rate;
    /// # let _ = mwm14_seconds;
    /// ```
    pub fn expected_nonces_per_second(&self, sel: &Selection) -> f64 {
        let reg = &self.inner.registry;
        reg.rate_of(&reg.allowed(sel))
    }
}
