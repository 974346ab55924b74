//! `GET /metrics`: Prometheus text format (0.0.4), through `prometheus-client` (the Prometheus
//! project's own Rust client: typed metric families, no global registry, no HTTP server of its
//! own, few dependencies).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `curlpow_requests_total` | counter | `command`, `status` (HTTP code) |
//! | `curlpow_attach_duration_seconds` | histogram | — (successful attaches, queue wait included) |
//! | `curlpow_attach_transactions_total` | counter | — (transactions attached) |
//! | `curlpow_attach_nonces_total` | counter | — (nonces tried by attaches) |
//! | `curlpow_queue_depth` | gauge | — (requests waiting for a slot) |
//! | `curlpow_attaches_running` | gauge | — |
//! | `curlpow_device_busy_seconds_total` | counter | `device` |
//! | `curlpow_device_faults_total` | counter | `device` |
//! | `curlpow_device_searches_total` | counter | `device` |
//! | `curlpow_device_nonces_total` | counter | `device` |
//! | `curlpow_device_healthy` | gauge | `device` (1 healthy, 0 sitting out after a fault) |
//! | `curlpow_connections_open` | gauge | — |
//! | `curlpow_connections_closed_total` | counter | `reason`: `refused`, `evicted`, `header_timeout`, `idle_timeout` |

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use super::connections::Connections;
use super::limits::Admission;
use crate::engine::Engine;

/// The `Content-Type` of the answer.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

type RequestLabels = [(&'static str, String); 2];

/// The server's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    attach_seconds: Histogram,
    transactions: Counter,
    nonces: Counter,
    /// The histogram's count and sum, kept beside it for the status page (the client library
    /// reads neither back).
    attach_totals: parking_lot::Mutex<AttachTotals>,
}

/// Successful attaches so far: how many, their summed seconds, their transactions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct AttachTotals {
    /// Attaches (the histogram's `_count`).
    pub count: u64,
    /// Their seconds, queue wait included (the histogram's `_sum`).
    pub seconds: f64,
    /// Transactions attached (`curlpow_attach_transactions_total`).
    pub transactions: u64,
}

impl Metrics {
    /// Metrics for a server over `engine` with this admission controller and connections.
    pub(crate) fn new(
        engine: Engine,
        admission: Arc<Admission>,
        connections: Arc<Connections>,
    ) -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "curlpow_requests",
            "API requests answered, by command and HTTP status",
            requests.clone(),
        );
        // 0.5 ms .. ~65 s.
        let attach_seconds = Histogram::new(exponential_buckets(0.0005, 2.0, 18));
        registry.register(
            "curlpow_attach_duration_seconds",
            "Wall time of successful attachToTangle requests, queue wait included",
            attach_seconds.clone(),
        );
        let transactions = Counter::default();
        registry.register(
            "curlpow_attach_transactions",
            "Transactions attached (nonce found and verified)",
            transactions.clone(),
        );
        let nonces = Counter::default();
        registry.register(
            "curlpow_attach_nonces",
            "Nonces tried by attachToTangle requests",
            nonces.clone(),
        );
        registry.register_collector(Box::new(Live {
            engine,
            admission,
            connections,
        }));
        Metrics {
            registry,
            requests,
            attach_seconds,
            transactions,
            nonces,
            attach_totals: parking_lot::Mutex::new(AttachTotals::default()),
        }
    }

    /// Count an answered request.
    pub(crate) fn request(&self, command: &str, status: u16) {
        self.requests
            .get_or_create(&[
                ("command", command.to_string()),
                ("status", status.to_string()),
            ])
            .inc();
    }

    /// Count a successful attach.
    pub(crate) fn attached(&self, seconds: f64, transactions: u64, nonces: u64) {
        let mut t = self.attach_totals.lock();
        self.attach_seconds.observe(seconds);
        self.transactions.inc_by(transactions);
        self.nonces.inc_by(nonces);
        t.count += 1;
        t.seconds += seconds;
        t.transactions += transactions;
    }

    /// The successful attaches so far, as `/metrics` shows them.
    pub(crate) fn attach_totals(&self) -> AttachTotals {
        *self.attach_totals.lock()
    }

    /// The text exposition.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    Seconds,
    Faults,
    Searches,
    Nonces,
    Healthy,
}

/// What is read at scrape time: the queue, the connections and the engine's per-device
/// statistics.
struct Live {
    engine: Engine,
    admission: Arc<Admission>,
    connections: Arc<Connections>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

impl Collector for Live {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let depth = self.admission.depth();
        for (name, help, v) in [
            (
                "curlpow_queue_depth",
                "Requests waiting for an attach slot",
                depth.waiting,
            ),
            (
                "curlpow_attaches_running",
                "attachToTangle requests running",
                depth.active,
            ),
            (
                "curlpow_connections_open",
                "HTTP connections open",
                self.connections.open(),
            ),
        ] {
            let g = ConstGauge::new(v as i64);
            g.encode(enc.encode_descriptor(name, help, None, g.metric_type())?)?;
        }
        {
            let c = &self.connections.counts;
            let mut family = enc.encode_descriptor(
                "curlpow_connections_closed",
                "HTTP connections the server closed: refused at a cap with none idle, displaced while idle by a newcomer, headers too slow, idle too long",
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            for (reason, n) in [
                ("refused", &c.refused),
                ("evicted", &c.evicted),
                ("header_timeout", &c.header_timeouts),
                ("idle_timeout", &c.idle_timeouts),
            ] {
                let labels = [("reason", reason)];
                ConstCounter::new(n.load(std::sync::atomic::Ordering::Relaxed))
                    .encode(family.encode_family(&labels)?)?;
            }
        }
        let reports = self.engine.device_report();
        let kinds = [
            (
                "curlpow_device_busy_seconds",
                "Seconds each device spent searching",
                Value::Seconds,
            ),
            (
                "curlpow_device_faults",
                "Device faults (driver errors, nonces the host check rejected)",
                Value::Faults,
            ),
            (
                "curlpow_device_searches",
                "Searches run on each device",
                Value::Searches,
            ),
            (
                "curlpow_device_nonces",
                "Nonces tried on each device",
                Value::Nonces,
            ),
            (
                "curlpow_device_healthy",
                "1 while the device is healthy, 0 while it sits out after a fault",
                Value::Healthy,
            ),
        ];
        for (name, help, which) in kinds {
            let kind = if which == Value::Healthy {
                ConstGauge::new(0i64).metric_type()
            } else {
                ConstCounter::new(0u64).metric_type()
            };
            let mut family = enc.encode_descriptor(name, help, None, kind)?;
            for r in &reports {
                let labels = [("device", r.info.id.clone())];
                let m = family.encode_family(&labels)?;
                let s = &r.stats;
                match which {
                    Value::Seconds => ConstCounter::new(s.busy_seconds).encode(m)?,
                    Value::Faults => ConstCounter::new(s.errors).encode(m)?,
                    Value::Searches => ConstCounter::new(s.searches).encode(m)?,
                    Value::Nonces => ConstCounter::new(s.nonces).encode(m)?,
                    Value::Healthy => ConstGauge::new(i64::from(s.healthy)).encode(m)?,
                }
            }
        }
        Ok(())
    }
}
