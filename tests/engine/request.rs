//! Where a PoW request enters the engine: the minimum weight checked once ([`Mwm`], or a plain
//! number that fails the call), the pre-checks every entry shares (a cancelled token or a
//! deadline already past costs no search), the builder's selection policy
//! ([`EngineBuilder::build_for`], [`EngineBuilder::local_devices`]), and an internal failure
//! that says which one it was ([`InternalError`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use curlpow::device::{CounterRange, Device, SearchControl, SearchJob, SearchOutcome};
use curlpow::{
    attach::Hash, device::DeviceInfo, Backend, CancelToken, DeviceKind, Engine, Error,
    InternalError, Mwm, PowOptions, Selection,
};

use crate::common;

fn cpu_engine() -> Engine {
    Engine::builder()
        .threads(2)
        .backends(&[Backend::Cpu])
        .build()
        .unwrap()
}

#[test]
fn a_checked_mwm_and_a_plain_number_search_alike() {
    let e = cpu_engine();
    let tx = common::random_tx(31);
    let typed = e
        .pow_with(&tx, &PowOptions::new(Mwm::new(6).unwrap()))
        .unwrap();
    assert!(typed.transaction.weight() >= 6);
    let plain = e.pow_with(&tx, &PowOptions::mwm(6)).unwrap();
    assert!(plain.transaction.weight() >= 6);
    let opts = PowOptions::mwm(300).min_weight(Mwm::TESTNET);
    assert_eq!(opts.min_weight_magnitude(), 9);
    assert_eq!(opts.checked_mwm().unwrap(), Mwm::TESTNET);
}

#[test]
fn an_mwm_out_of_range_fails_every_entry_with_its_number() {
    let e = cpu_engine();
    let tx = common::random_tx(32);
    let opts = PowOptions::mwm(244);
    assert_eq!(opts.min_weight_magnitude(), 244);
    assert!(matches!(
        e.pow_with(&tx, &opts),
        Err(Error::InvalidMwm(244))
    ));
    let many = e.pow_many(&[tx.clone(), tx.clone(), tx.clone()], &opts);
    assert_eq!(many.len(), 3);
    assert!(many
        .iter()
        .all(|r| matches!(r, Err(Error::InvalidMwm(244)))));
    let r = e.attach_to_tangle(&Hash::NULL, &Hash::NULL, std::slice::from_ref(&tx), &opts);
    assert!(matches!(r, Err(Error::InvalidMwm(244))), "{r:?}");
    // A valid number set later replaces the bad one.
    assert!(e.pow_with(&tx, &opts.with_mwm(3)).is_ok());
    assert!(matches!(
        Mwm::try_from(usize::MAX),
        Err(Error::InvalidMwm(usize::MAX))
    ));
}

#[test]
fn a_request_past_its_deadline_or_cancelled_never_searches() {
    let e = cpu_engine();
    let txs: Vec<_> = (0..4).map(common::random_tx).collect();
    let before = e.nonces_tried();
    let past = PowOptions::mwm(60).deadline(Instant::now() - Duration::from_millis(1));
    assert!(matches!(
        e.pow_with(&txs[0], &past),
        Err(Error::Timeout { nonces: 0, .. })
    ));
    assert!(e
        .pow_many(&txs, &past)
        .iter()
        .all(|r| matches!(r, Err(Error::Timeout { nonces: 0, .. }))));
    let r = e.attach_to_tangle(&Hash::NULL, &Hash::NULL, &txs[..1], &past);
    assert!(matches!(r, Err(Error::Timeout { nonces: 0, .. })), "{r:?}");
    let cancel = CancelToken::new();
    cancel.cancel();
    let cancelled = PowOptions::mwm(60).cancel(cancel);
    assert!(matches!(
        e.pow_with(&txs[0], &cancelled),
        Err(Error::Cancelled { nonces: 0 })
    ));
    assert!(e
        .pow_many(&txs, &cancelled)
        .iter()
        .all(|r| matches!(r, Err(Error::Cancelled { .. }))));
    assert_eq!(e.nonces_tried(), before, "no search ran");
}

#[test]
fn a_batch_shares_one_deadline() {
    let e = cpu_engine();
    let txs: Vec<_> = (40..44).map(common::random_tx).collect();
    let t0 = Instant::now();
    let opts = PowOptions::mwm(60).timeout(Duration::from_millis(300));
    let rs = e.pow_many(&txs, &opts);
    let took = t0.elapsed();
    assert!(rs.iter().all(|r| matches!(r, Err(Error::Timeout { .. }))));
    // Four searches of one batch end by the batch's deadline, not one after another.
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A device that breaks the search contract: it returns at once, without a hit, while the
/// search has no reason to stop.
struct GivesUp {
    info: DeviceInfo,
    nonces: AtomicU64,
}

impl Device for GivesUp {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn search(
        &self,
        _: &SearchJob,
        _: CounterRange,
        _: &SearchControl,
    ) -> Result<SearchOutcome, Error> {
        self.nonces.fetch_add(1, Ordering::Relaxed);
        Ok(SearchOutcome {
            hit: None,
            nonces: 1,
        })
    }

    fn nonces_tried(&self) -> u64 {
        self.nonces.load(Ordering::Relaxed)
    }
}

#[test]
fn a_device_that_ends_without_a_reason_is_an_internal_error_naming_it() {
    let d = Arc::new(GivesUp {
        info: DeviceInfo::new("gives-up:0", Backend::Custom, "gives up", DeviceKind::Other),
        nonces: AtomicU64::new(0),
    });
    let e = Engine::builder()
        .threads(1)
        .backends(&[Backend::Cpu])
        .add_device(d)
        .build()
        .unwrap();
    let only = Selection {
        devices: vec!["gives-up:0".into()],
        ..Default::default()
    };
    let r = e.pow_with(&common::random_tx(50), &PowOptions::mwm(9).selection(only));
    match r {
        Err(Error::Internal(InternalError::SearchEndedEmpty { device })) => {
            assert_eq!(device, "gives-up:0")
        }
        other => panic!("{other:?}"),
    }
    let msg = Error::from(InternalError::RunnerLost).to_string();
    assert!(msg.starts_with("internal error: "), "{msg}");
}

#[test]
fn build_for_a_cpu_selection_finds_only_the_cpu() {
    let sel = Selection {
        devices: vec!["cpu".into()],
        ..Default::default()
    };
    let built = Engine::builder().threads(2).build_for(&sel).unwrap();
    assert!(!built.software_fallback);
    let ids: Vec<String> = built.engine.devices().into_iter().map(|d| d.id).collect();
    assert_eq!(ids, ["cpu"]);
    assert!(built.engine.check_selection(&sel).is_ok());
    let none = Selection {
        devices: vec!["wgpu:9".into()],
        ..Default::default()
    };
    assert!(matches!(
        built.engine.check_selection(&none),
        Err(Error::NoDevice(_))
    ));
}

#[test]
fn an_engine_of_added_devices_only_leaves_the_cpu_out() {
    let e = Engine::builder()
        .threads(1)
        .local_devices(false)
        .build()
        .unwrap();
    assert!(e.devices().is_empty());
    assert!(matches!(
        e.pow(&common::random_tx(51), 3),
        Err(Error::NoDevice(_))
    ));
}
