//! Dispatch decisions, checked on the registry alone with devices that never search: which
//! device a waiter is granted, and when it waits instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Policy, Registry, WaitSpec};
use crate::base::error::Error;
use crate::search::control::SearchControl;
use crate::search::device::{Backend, CounterRange, Device, DeviceInfo, DeviceKind, SearchOutcome};
use crate::search::search_job::SearchJob;

struct Idle(DeviceInfo);

impl Device for Idle {
    fn info(&self) -> &DeviceInfo {
        &self.0
    }
    fn search(
        &self,
        _: &SearchJob,
        _: CounterRange,
        _: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        unreachable!("dispatch tests never search")
    }
    fn nonces_tried(&self) -> u64 {
        0
    }
}

fn gpu(id: &str) -> Arc<dyn Device> {
    Arc::new(Idle(DeviceInfo::new(
        id,
        Backend::Custom,
        id,
        DeviceKind::Gpu,
    )))
}

fn cpu_pool() -> Arc<dyn Device> {
    Arc::new(Idle(DeviceInfo::new(
        "cpu",
        Backend::Cpu,
        "cpu",
        DeviceKind::Cpu,
    )))
}

fn software(id: &str) -> Arc<dyn Device> {
    Arc::new(Idle(
        DeviceInfo::new(id, Backend::Opencl, id, DeviceKind::Cpu).with_software(true),
    ))
}

/// A registry whose waiters would wait a long time for a faster busy device.
fn registry(devices: Vec<Arc<dyn Device>>) -> Registry {
    Registry::new(
        devices,
        Policy {
            wait_limit: Duration::from_secs(10),
            ..Policy::default()
        },
    )
}

fn spec(allowed: &[usize], within: Duration) -> WaitSpec<'static> {
    WaitSpec {
        allowed: allowed.to_vec(),
        work: 729.0,
        all: false,
        deadline: Some(Instant::now() + within),
        cancel: None,
        cpu_fallback: true,
    }
}

/// Two GPUs measured at 20 ms per search, one 1% faster: while the faster one has just started
/// a search, the next waiter takes the free one at once (waiting would mean the rest of that
/// search and then its own).
#[test]
fn a_free_device_beats_waiting_for_a_slightly_faster_busy_one() {
    let reg = registry(vec![gpu("a"), gpu("b")]);
    reg.record(0, Duration::from_micros(19_800), 20_000_000, true);
    reg.record(1, Duration::from_millis(20), 20_000_000, true);
    let first = reg.acquire(spec(&[0, 1], Duration::from_secs(1))).unwrap();
    assert_eq!(first.indices, [0], "the faster device first");
    let t0 = Instant::now();
    let second = reg
        .acquire(spec(&[0, 1], Duration::from_secs(1)))
        .expect("the free device, not a timeout");
    assert_eq!(second.indices, [1]);
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
}

/// A software driver runs on the CPU pool's cores: while the pool is healthy it serves no
/// search the pool may take, busy pool or not; when the pool has faulted it is the fallback.
#[test]
fn a_software_driver_only_stands_in_for_the_cpu_pool() {
    let reg = registry(vec![cpu_pool(), software("pocl")]);
    let held = reg.acquire(spec(&[0, 1], Duration::from_secs(1))).unwrap();
    assert_eq!(held.indices, [0]);
    match reg.acquire(spec(&[0, 1], Duration::from_millis(100))) {
        Err(Error::Timeout { .. }) => {}
        Err(e) => panic!("{e}"),
        Ok(l) => panic!("granted {:?} beside the busy pool", l.indices),
    }
    drop(held);
    reg.fault(0, Duration::ZERO, 0, &Error::NoDevice("test fault".into()));
    let l = reg.acquire(spec(&[0, 1], Duration::from_secs(1))).unwrap();
    assert_eq!(
        l.indices,
        [1],
        "the software driver once the pool is unhealthy"
    );
}

/// Of two software drivers (the CPU pool not selected), only the one expected to finish
/// first serves; a GPU beside them still serves too.
#[test]
fn of_two_software_drivers_only_the_quicker_serves() {
    let reg = registry(vec![software("pocl"), software("lavapipe"), gpu("g")]);
    reg.record(0, Duration::from_millis(2), 1_000_000, true);
    reg.record(1, Duration::from_millis(300), 1_000_000, true);
    let a = reg.acquire(spec(&[0, 1], Duration::from_secs(1))).unwrap();
    assert_eq!(a.indices, [0]);
    assert!(matches!(
        reg.acquire(spec(&[0, 1], Duration::from_millis(100))),
        Err(Error::Timeout { .. })
    ));
    let g = reg
        .acquire(spec(&[0, 1, 2], Duration::from_secs(1)))
        .unwrap();
    assert_eq!(g.indices, [2]);
}
