//! The same physical GPU seen through OpenCL and through wgpu: keep one.

use std::sync::Arc;

use super::speed::declared_speed;
use crate::search::device::{Backend, Device, DeviceInfo, DeviceKind};

/// Two GPUs match when both drivers give a PCI bus address and the addresses are equal; where
/// either lacks one, when their PCI vendor ids are equal and their names are equal ignoring case
/// and spaces, the k-th OpenCL match pairing with the k-th wgpu match (drivers enumerate in bus
/// order). Of a pair the faster declared backend stays, OpenCL on a tie; the other is dropped and
/// named in a note. Software drivers and devices without a vendor id are never merged.
pub(crate) fn dedupe(devices: Vec<Arc<dyn Device>>) -> (Vec<Arc<dyn Device>>, Vec<String>) {
    let mut drop = vec![false; devices.len()];
    let mut notes = Vec::new();
    let of = |b: Backend| -> Vec<usize> {
        (0..devices.len())
            .filter(|&i| devices[i].info().backend == b)
            .collect()
    };
    let (ocl, wg) = (of(Backend::Opencl), of(Backend::Wgpu));
    let mut used = vec![false; devices.len()];
    for &o in &ocl {
        let Some(ko) = key(devices[o].info()) else {
            continue;
        };
        let oi = devices[o].info();
        let Some(&w) = wg.iter().find(|&&w| {
            let wi = devices[w].info();
            !used[w]
                && match (&oi.pci_bus_id, &wi.pci_bus_id) {
                    (Some(a), Some(b)) => a.eq_ignore_ascii_case(b) && key(wi).is_some(),
                    _ => key(wi).as_ref() == Some(&ko),
                }
        }) else {
            continue;
        };
        used[w] = true;
        let (so, sw) = (
            declared_speed(devices[o].info()),
            declared_speed(devices[w].info()),
        );
        let (keep, gone) = if sw > so { (w, o) } else { (o, w) };
        drop[gone] = true;
        notes.push(format!(
            "{} and {} are the same GPU; using {}",
            devices[o].info().id,
            devices[w].info().id,
            devices[keep].info().id
        ));
    }
    let kept = devices
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(dev, _)| dev)
        .collect();
    (kept, notes)
}

/// What identifies a physical GPU across APIs.
fn key(info: &DeviceInfo) -> Option<(u32, String)> {
    if info.kind != DeviceKind::Gpu || info.software {
        return None;
    }
    let vendor = info.pci_vendor_id?;
    let name: String = info
        .name
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    Some((vendor, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::Error;
    use crate::search::control::SearchControl;
    use crate::search::device::SearchOutcome;
    use crate::search::nonce::CounterRange;
    use crate::search::search_job::SearchJob;

    struct Named(DeviceInfo);
    impl Device for Named {
        fn info(&self) -> &DeviceInfo {
            &self.0
        }
        fn search(
            &self,
            _: &SearchJob,
            _: CounterRange,
            _: &SearchControl,
        ) -> Result<SearchOutcome, Error> {
            Ok(SearchOutcome {
                hit: None,
                nonces: 0,
            })
        }
        fn nonces_tried(&self) -> u64 {
            0
        }
    }

    fn dev(info: DeviceInfo) -> Arc<dyn Device> {
        Arc::new(Named(info))
    }

    fn ids(devs: &[Arc<dyn Device>]) -> Vec<String> {
        devs.iter().map(|d| d.info().id.clone()).collect()
    }

    fn gpu(id: &str, backend: Backend, name: &str, vendor: u32) -> DeviceInfo {
        DeviceInfo::new(id, backend, name, DeviceKind::Gpu).with_pci_vendor_id(vendor)
    }

    #[test]
    fn identical_cards_pair_in_order_by_vendor_and_name() {
        let devices = vec![
            dev(gpu("opencl:0:0", Backend::Opencl, "NVIDIA H200", 0x10de)),
            dev(gpu("opencl:0:1", Backend::Opencl, "NVIDIA H200", 0x10de)),
            dev(gpu("wgpu:0", Backend::Wgpu, "NVIDIA  h200", 0x10de)),
            dev(gpu("wgpu:1", Backend::Wgpu, "NVIDIA H200", 0x10de)),
            // Another vendor's GPU of the same name is a different card.
            dev(gpu("wgpu:2", Backend::Wgpu, "NVIDIA H200", 0x1002)),
            // Software devices are never merged.
            dev(
                DeviceInfo::new("opencl:1:0", Backend::Opencl, "cpu", DeviceKind::Cpu)
                    .with_software(true),
            ),
            dev(
                DeviceInfo::new("wgpu:3", Backend::Wgpu, "llvmpipe", DeviceKind::Cpu)
                    .with_software(true)
                    .with_pci_vendor_id(0x10005),
            ),
        ];
        let (kept, notes) = dedupe(devices);
        assert_eq!(
            ids(&kept),
            ["opencl:0:0", "opencl:0:1", "wgpu:2", "opencl:1:0", "wgpu:3"]
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("opencl:0:0") && notes[0].contains("wgpu:0"));
    }

    #[test]
    fn bus_addresses_decide_where_both_drivers_give_them() {
        // Enumerated in different orders: the bus address pairs them right.
        let devices = vec![
            dev(gpu("opencl:0:0", Backend::Opencl, "GPU X", 7).with_pci_bus_id("0000:41:00.0")),
            dev(gpu("opencl:0:1", Backend::Opencl, "GPU X", 7).with_pci_bus_id("0000:19:00.0")),
            dev(gpu("wgpu:0", Backend::Wgpu, "GPU X", 7)
                .with_pci_bus_id("0000:19:00.0")
                .with_declared_speed(9e9)),
            dev(gpu("wgpu:1", Backend::Wgpu, "GPU X", 7)
                .with_pci_bus_id("0000:41:00.0")
                .with_declared_speed(1.0)),
        ];
        let (kept, _) = dedupe(devices);
        // opencl:0:0 (bus 41) pairs with wgpu:1 and stays (faster); opencl:0:1 (bus 19) pairs
        // with wgpu:0, which is declared faster and stays.
        assert_eq!(ids(&kept), ["opencl:0:0", "wgpu:0"]);
    }

    #[test]
    fn the_faster_declared_backend_stays() {
        let devices = vec![
            dev(gpu("opencl:0:0", Backend::Opencl, "GPU X", 7).with_declared_speed(1e9)),
            dev(gpu("wgpu:0", Backend::Wgpu, "GPU X", 7).with_declared_speed(5e9)),
        ];
        let (kept, _) = dedupe(devices);
        assert_eq!(ids(&kept), ["wgpu:0"]);
    }

    /// The shapes the two backends really produce for the same card merge into one device.
    #[cfg(all(feature = "opencl", feature = "wgpu"))]
    #[test]
    fn real_backend_shapes_of_one_gpu_merge() {
        let devices = vec![
            dev(crate::backend::opencl::nvidia_h200_for_tests(0)),
            dev(crate::backend::opencl::nvidia_h200_for_tests(1)),
            dev(crate::backend::wgpu::nvidia_h200_for_tests(0)),
            dev(crate::backend::wgpu::nvidia_h200_for_tests(1)),
        ];
        let (kept, notes) = dedupe(devices);
        assert_eq!(kept.len(), 2, "{notes:?}");
        assert_eq!(notes.len(), 2);
        // Different cards (different bus addresses) are never merged.
        let devices = vec![
            dev(crate::backend::opencl::nvidia_h200_for_tests(0)),
            dev(crate::backend::wgpu::nvidia_h200_for_tests(1)),
        ];
        assert_eq!(dedupe(devices).0.len(), 2);
    }
}
