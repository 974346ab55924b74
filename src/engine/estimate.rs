//! How fast the engine's devices are expected to search: what `curlpow pow` uses to say how long
//! a search at a given MWM will take before it starts.

use super::Engine;
use crate::cpu::CpuKernel;
use crate::device::{Backend, DeviceKind};
use crate::registry::{DeviceReport, Selection};

/// Nonces per second of one CPU thread by kernel: the 1-thread whole-PoW figures of
/// `docs/benchmarks.md` (2-vCPU AMD EPYC Zen 4), rounded down.
fn per_thread(kernel: CpuKernel) -> f64 {
    match kernel {
        CpuKernel::Avx512 => 11e6,
        CpuKernel::Avx2 => 8e6,
        _ => 1e6,
    }
}

impl Engine {
    /// The nonces per second the devices `sel` allows are expected to try together (as a batch
    /// or a latency-mode search uses them): for each device its measured rate once it has
    /// searched a little in this process, else the rate its backend declares, else an estimate
    /// (CPU: threads × a per-kernel figure; GPUs 1e9, software drivers of GPU APIs 1e6).
    /// Zero when the selection allows no device.
    ///
    /// The expected work of one search at MWM `m` is 3^m nonces, so the expected time is
    /// `3f64.powi(m) / rate`.
    ///
    /// ```
    /// use curlpow::{Backend, Engine, Selection};
    /// let engine = Engine::builder().threads(2).backends(&[Backend::Cpu]).build().unwrap();
    /// let rate = engine.expected_nonces_per_second(&Selection::default());
    /// assert!(rate > 0.0);
    /// let mwm14_seconds = 3f64.powi(14) / rate;
    /// # let _ = mwm14_seconds;
    /// ```
    pub fn expected_nonces_per_second(&self, sel: &Selection) -> f64 {
        self.device_report()
            .iter()
            .filter(|d| sel.allows(&d.info))
            .map(|d| self.device_rate(d))
            .sum()
    }

    fn device_rate(&self, d: &DeviceReport) -> f64 {
        let s = &d.stats;
        if s.busy_seconds > 0.05 && s.nonces > 0 {
            return s.nonces as f64 / s.busy_seconds;
        }
        if let Some(v) = d
            .info
            .details
            .get("declared_nonces_per_second")
            .and_then(|v| v.as_f64())
        {
            return v;
        }
        match (d.info.backend, d.info.kind) {
            (Backend::Cpu, _) => self.cpu().threads() as f64 * per_thread(self.cpu().kernel()),
            (_, DeviceKind::Gpu) => 1e9,
            (_, DeviceKind::Accelerator) => 1e8,
            _ => 1e6,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Backend, Engine, Selection};

    #[test]
    fn the_cpu_estimate_scales_with_threads_and_an_empty_selection_is_zero() {
        let one = Engine::builder()
            .threads(1)
            .backends(&[Backend::Cpu])
            .build()
            .unwrap();
        let two = Engine::builder()
            .threads(2)
            .backends(&[Backend::Cpu])
            .build()
            .unwrap();
        let all = Selection::default();
        let r1 = one.expected_nonces_per_second(&all);
        assert!(r1 >= 1e6, "{r1}");
        assert_eq!(two.expected_nonces_per_second(&all), 2.0 * r1);
        let none = Selection {
            devices: vec!["wgpu:9".into()],
            ..Selection::default()
        };
        assert_eq!(one.expected_nonces_per_second(&none), 0.0);
    }
}
