//! `GET /status`: a page for operators that shows at a glance what the devices are doing, how
//! fast, and how full the queue is, and plots the search rate and the attach latency over the last
//! minutes, updating itself every second. `GET /status.json` is what it polls. Both need the
//! API's credentials when auth is on (a browser asks for them: the 401 carries
//! `WWW-Authenticate: Basic`).
//!
//! The page is one file of plain HTML, CSS and JavaScript (`status.html`), compiled into the
//! binary; it loads nothing from elsewhere (its `Content-Security-Policy` forbids it).
//!
//! A sampler task reads the counters once a second into a bounded history ([`HISTORY`] samples:
//! five minutes) from which the rates and the plot come. The totals are read when the request
//! comes, from the same counters as `/metrics`, so the two agree.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

use super::errors::ApiError;
use super::App;
use crate::engine::registry::DeviceReport;

/// The page.
const PAGE: &str = include_str!("status.html");

/// How often the sampler reads the counters.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// Samples kept: five minutes.
pub(crate) const HISTORY: usize = 300;
/// The span the current rates (nonces/s, attaches/s, latency, busy share) are measured over.
pub(crate) const WINDOW: Duration = Duration::from_secs(5);

/// `Content-Security-Policy` of the page: its own inline script and style, requests to its own
/// origin only, nothing loaded from elsewhere, never framed.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                   connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; \
                   base-uri 'none'; form-action 'none'";

/// The counters at one moment.
#[derive(Debug, Clone)]
struct Sample {
    at: Instant,
    unix_ms: u64,
    attaches: u64,
    attach_seconds: f64,
    transactions: u64,
    waiting: usize,
    running: usize,
    /// Per device, in the engine's order: nonces tried, busy seconds.
    devices: Vec<(u64, f64)>,
}

/// The last [`HISTORY`] samples, oldest first.
#[derive(Debug, Default)]
pub(crate) struct History {
    samples: parking_lot::Mutex<VecDeque<Sample>>,
}

impl History {
    fn push(&self, s: Sample) {
        let mut q = self.samples.lock();
        if q.len() == HISTORY {
            q.pop_front();
        }
        q.push_back(s);
    }

    fn snapshot(&self) -> Vec<Sample> {
        self.samples.lock().iter().cloned().collect()
    }
}

/// The rates between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rates {
    seconds: f64,
    nonces_per_second: f64,
    attaches_per_second: f64,
    /// Mean latency of the attaches that finished in between (ms); `None` when none did.
    latency_ms: Option<f64>,
}

fn rates(a: &Sample, b: &Sample) -> Rates {
    let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
    let nonces: u64 = b
        .devices
        .iter()
        .zip(&a.devices)
        .map(|(nb, na)| nb.0.saturating_sub(na.0))
        .sum();
    let attaches = b.attaches.saturating_sub(a.attaches);
    let per = |n: f64| if seconds > 0.0 { n / seconds } else { 0.0 };
    Rates {
        seconds,
        nonces_per_second: per(nonces as f64),
        attaches_per_second: per(attaches as f64),
        latency_ms: (attaches > 0)
            .then(|| (b.attach_seconds - a.attach_seconds).max(0.0) / attaches as f64 * 1e3),
    }
}

/// Read the counters now.
fn read(app: &App) -> (Sample, Vec<DeviceReport>) {
    let reports = app.engine.device_report();
    let totals = app.metrics.attach_totals();
    let depth = app.admission.depth();
    let sample = Sample {
        at: Instant::now(),
        unix_ms: crate::engine::attach::unix_millis(),
        attaches: totals.count,
        attach_seconds: totals.seconds,
        transactions: totals.transactions,
        waiting: depth.waiting,
        running: depth.active,
        devices: reports
            .iter()
            .map(|r| (r.stats.nonces, r.stats.busy_seconds))
            .collect(),
    };
    (sample, reports)
}

/// Sample the counters every [`SAMPLE_EVERY`] until the server is gone.
pub(crate) async fn sampler(app: Weak<App>) {
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(app) = app.upgrade() else { return };
        let (s, _) = read(&app);
        app.status.push(s);
        if app
            .trim_wanted
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            // Large bodies were read and freed since the last tick: hand the memory back.
            let _ = tokio::task::spawn_blocking(super::trim::release_free_memory).await;
        }
    }
}

/// The oldest sample at most [`WINDOW`] before `now` (the newest, when all are older).
fn window_start<'a>(history: &'a [Sample], now: &Sample) -> Option<&'a Sample> {
    let newest_old_enough = history
        .iter()
        .rev()
        .find(|s| now.at.saturating_duration_since(s.at) >= WINDOW);
    newest_old_enough.or_else(|| history.first())
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::from)
}

/// What `/status.json` answers.
fn figures(app: &App) -> Value {
    let history = app.status.snapshot();
    let (now, reports) = read(app);
    let start = window_start(&history, &now);
    let current = start.map(|s| rates(s, &now));
    let span = current.map_or(0.0, |r| r.seconds);
    let limits = app.admission.limits();
    let devices: Vec<Value> = reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let before = start.and_then(|s| s.devices.get(i));
            let (rate, busy) = match before {
                Some(&(n0, b0)) if span > 0.0 => (
                    Some(r.stats.nonces.saturating_sub(n0) as f64 / span),
                    Some(((r.stats.busy_seconds - b0) / span).clamp(0.0, 1.0)),
                ),
                _ => (None, None),
            };
            json!({
                "id": r.info.id,
                "name": r.info.name,
                "backend": r.info.backend.name(),
                "kind": r.info.kind,
                "software": r.info.software,
                "healthy": r.stats.healthy,
                "searching": r.stats.searching,
                "busyShare": opt(busy),
                "noncesPerSecond": opt(rate),
                "nonces": r.stats.nonces,
                "searches": r.stats.searches,
                "faults": r.stats.errors,
                "busySeconds": r.stats.busy_seconds,
                "lastFault": r.stats.last_fault,
            })
        })
        .collect();
    let plot: Vec<Value> = history
        .windows(2)
        .map(|w| {
            let r = rates(&w[0], &w[1]);
            json!({
                "time": w[1].unix_ms,
                "noncesPerSecond": r.nonces_per_second,
                "attachesPerSecond": r.attaches_per_second,
                "latencyMs": opt(r.latency_ms),
                "waiting": w[1].waiting,
            })
        })
        .collect();
    let mean_ms = (now.attaches > 0).then(|| now.attach_seconds / now.attaches as f64 * 1e3);
    json!({
        "time": now.unix_ms,
        "uptimeSeconds": app.started.elapsed().as_secs(),
        "version": env!("CARGO_PKG_VERSION"),
        "windowSeconds": span,
        "sampleSeconds": SAMPLE_EVERY.as_secs_f64(),
        "historySeconds": SAMPLE_EVERY.as_secs_f64() * HISTORY as f64,
        "noncesPerSecond": opt(current.map(|r| r.nonces_per_second)),
        "nonces": now.devices.iter().map(|d| d.0).sum::<u64>(),
        "devices": devices,
        "attaches": {
            "perSecond": opt(current.map(|r| r.attaches_per_second)),
            "latencyMs": opt(current.and_then(|r| r.latency_ms)),
            "total": now.attaches,
            "seconds": now.attach_seconds,
            "meanLatencyMs": opt(mean_ms),
            "transactions": now.transactions,
        },
        "queue": {
            "waiting": now.waiting,
            "limit": limits.queue,
            "running": now.running,
            "concurrency": limits.concurrency,
        },
        "history": plot,
    })
}

/// The answer to a request without the API's credentials, when auth is on.
fn refused(app: &App, headers: &HeaderMap) -> Option<Response> {
    let creds = app.config.auth.as_ref()?;
    let given = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    match creds.check(given) {
        Some(_) => None,
        None => Some(ApiError::Unauthorized.into_response_since(Instant::now())),
    }
}

fn no_store(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// `GET /status`: the page.
async fn page(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &headers) {
        return r;
    }
    no_store(
        (
            StatusCode::OK,
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/html; charset=utf-8"),
                ),
                (
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(CSP),
                ),
            ],
            PAGE,
        )
            .into_response(),
    )
}

/// `GET /status.json`: the figures.
async fn figures_json(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(r) = refused(&app, &headers) {
        return r;
    }
    let body = serde_json::to_vec(&figures(&app)).unwrap_or_else(|_| b"{}".to_vec());
    no_store(
        (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
    )
}

/// The two routes; any other method on these paths is IRI's API, as on every path.
pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/status", get(page).fallback(super::routes::iri))
        .route(
            "/status.json",
            get(figures_json).fallback(super::routes::iri),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: Instant, attaches: u64, seconds: f64, nonces: &[u64]) -> Sample {
        Sample {
            at,
            unix_ms: 0,
            attaches,
            attach_seconds: seconds,
            transactions: attaches,
            waiting: 0,
            running: 0,
            devices: nonces.iter().map(|&n| (n, 0.0)).collect(),
        }
    }

    #[test]
    fn rates_are_deltas_over_time() {
        let t0 = Instant::now();
        let a = sample(t0, 10, 2.0, &[1000, 50]);
        let b = sample(t0 + Duration::from_secs(2), 14, 2.4, &[5000, 1050]);
        let r = rates(&a, &b);
        assert_eq!(r.seconds, 2.0);
        assert_eq!(r.nonces_per_second, 2500.0);
        assert_eq!(r.attaches_per_second, 2.0);
        let ms = r.latency_ms.unwrap();
        assert!((ms - 100.0).abs() < 1e-9, "{ms}");
        // No attach in between: no latency, not a zero one.
        let c = sample(t0 + Duration::from_secs(3), 14, 2.4, &[5000, 1050]);
        assert_eq!(rates(&b, &c).latency_ms, None);
        // The same instant: no division by zero.
        assert_eq!(rates(&b, &b).nonces_per_second, 0.0);
    }

    #[test]
    fn history_is_bounded() {
        let h = History::default();
        let t0 = Instant::now();
        for i in 0..(HISTORY as u64 + 10) {
            h.push(sample(t0 + Duration::from_secs(i), i, 0.0, &[i]));
        }
        let s = h.snapshot();
        assert_eq!(s.len(), HISTORY);
        assert_eq!(s[0].attaches, 10);
    }

    #[test]
    fn the_window_starts_about_five_seconds_back() {
        let t0 = Instant::now();
        let hist: Vec<Sample> = (0..10)
            .map(|i| sample(t0 + Duration::from_secs(i), i, 0.0, &[]))
            .collect();
        let now = sample(t0 + Duration::from_millis(9500), 10, 0.0, &[]);
        // 4.5 s back is too recent; the newest at least 5 s old is the one at 4 s.
        assert_eq!(window_start(&hist, &now).unwrap().attaches, 4);
        // A young server: the oldest sample.
        let now = sample(t0 + Duration::from_millis(2500), 3, 0.0, &[]);
        assert_eq!(window_start(&hist[..3], &now).unwrap().attaches, 0);
        assert!(window_start(&[], &now).is_none());
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let lower = PAGE.to_ascii_lowercase();
        for bad in [
            "src=\"http",
            "href=\"http",
            "@import",
            "url(http",
            "<script src",
        ] {
            assert!(!lower.contains(bad), "the page has {bad:?}");
        }
        assert!(PAGE.contains("status.json"));
    }
}
