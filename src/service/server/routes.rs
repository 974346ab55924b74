//! The HTTP layer: axum routes and middleware over [`api`] and the engine. Kept thin:
//! IRI's header, body and JSON checks, auth, admission, then one blocking call to
//! `Engine::attach_to_tangle`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{Map, Value};

use super::api::{self, Command, NodeInfo, ParseLimits};
use super::connections::ConnInfo;
use super::errors::{json_response, ApiError, INVALID_API_VERSION, NO_COMMAND, REQUEST_TOO_LONG};
use super::inflight::StopCause;
use super::limits::Admit;
use super::App;
use crate::base::error::Error;

/// Headers a browser wallet may send (IRI's list, with `Authorization` for auth).
const ALLOW_HEADERS: &str =
    "User-Agent, Origin, X-Requested-With, Content-Type, Accept, X-IOTA-API-Version, Authorization";

/// The routes and their middleware.
pub(super) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/health", get(health).fallback(iri))
        .route("/metrics", get(metrics).fallback(iri))
        .merge(super::status::routes())
        .fallback(iri)
        .layer(middleware::from_fn(cors))
        .layer(middleware::from_fn(in_progress))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_answer,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(app)
}

fn panic_answer(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::Internal("internal error (a handler panicked)".into())
        .into_response_since(Instant::now())
}

/// While a request is handled its connection has no time limit, and once its body is in it
/// cannot be displaced (see [`connections`](super::connections)); the body has its own limits
/// (`body_read_timeout`, `body_min_rate`).
async fn in_progress(req: Request, next: Next) -> Response {
    use axum::body::HttpBody;
    let reading_body = !req.body().is_end_stream();
    let guard = req
        .extensions()
        .get::<ConnectInfo<ConnInfo>>()
        .map(|c| c.0.conn.begin_request(reading_body));
    let resp = next.run(req).await;
    drop(guard);
    resp
}

/// CORS as IRI does it: `Access-Control-Allow-Origin: *` on every answer, and OPTIONS (a browser's
/// preflight) answered 200 on any path.
async fn cors(req: Request, next: Next) -> Response {
    let mut resp = if req.method() == Method::OPTIONS {
        let mut r = StatusCode::OK.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        h.insert(
            header::ALLOW,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        r
    } else {
        next.run(req).await
    };
    resp.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}

/// `GET /health`: 200 while at least one device is healthy, else 503.
async fn health(State(app): State<Arc<App>>) -> Response {
    let started = Instant::now();
    let reports = app.engine.device_report();
    let healthy = reports.iter().filter(|d| d.stats.healthy).count();
    let mut body = Map::new();
    body.insert(
        "status".into(),
        Value::from(if healthy > 0 { "ok" } else { "unhealthy" }),
    );
    body.insert("healthyDevices".into(), Value::from(healthy));
    body.insert("devices".into(), Value::from(reports.len()));
    let status = if healthy > 0 {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, body, started)
}

/// `GET /metrics`: Prometheus text format.
async fn metrics(State(app): State<Arc<App>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(super::metrics::CONTENT_TYPE),
        )],
        app.metrics.encode(),
    )
        .into_response()
}

/// Every other request: IRI's API.
pub(super) async fn iri(
    State(app): State<Arc<App>>,
    ConnectInfo(conn): ConnectInfo<ConnInfo>,
    req: Request,
) -> Response {
    let started = Instant::now();
    let (label, result) = match handle(&app, &conn, req, started).await {
        (label, Ok(resp)) => (label, resp),
        (label, Err(e)) => {
            if let ApiError::Internal(message) = &e {
                tracing::warn!(command = label, error = %message, "request failed");
            }
            (label, e.into_response_since(started))
        }
    };
    app.metrics.request(label, result.status().as_u16());
    result
}

/// The API, returning the metrics' command label with the answer.
async fn handle(
    app: &Arc<App>,
    conn: &ConnInfo,
    req: Request,
    started: Instant,
) -> (&'static str, Result<Response, ApiError>) {
    let peer = conn.peer.ip();
    let conn = &conn.conn;
    // Auth first, as IRI's security handler wraps its API.
    let user = match &app.config.auth {
        Some(creds) => {
            let h = req
                .headers()
                .get(header::AUTHORIZATION)
                .map(|v| v.as_bytes());
            match creds.check(h) {
                Some(u) => Some(u.to_string()),
                None => return ("none", Err(ApiError::Unauthorized)),
            }
        }
        None => None,
    };
    if !req.headers().contains_key("x-iota-api-version") {
        return ("none", Err(ApiError::bad(INVALID_API_VERSION)));
    }
    let limit = app.config.max_body_length;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > (limit as u64).saturating_add(DRAIN_BYTES as u64)) {
        // Too long to be worth reading: answer at once; the connection closes after it.
        return ("none", Err(ApiError::bad(REQUEST_TOO_LONG)));
    }
    let pace = BodyPace {
        started: tokio::time::Instant::now(),
        initial: app.config.header_read_timeout,
        total: app.config.body_read_timeout,
        min_rate: app.config.body_min_rate,
    };
    let body = read_body(req.into_body(), limit, pace).await;
    conn.body_done();
    let body = match body {
        Ok(b) => b,
        Err(e) => return ("none", Err(e.answer(&pace))),
    };
    // Straight from the bytes into bounded, typed fields; the body is freed before the request
    // waits for a slot.
    let fields = match api::read_fields(&body, app.config.max_requests_list) {
        Ok(f) => f,
        Err(e) => return ("none", Err(e)),
    };
    if body.len() >= TRIM_AFTER_BYTES {
        app.trim_wanted.store(true, Ordering::Relaxed);
    }
    drop(body);
    let cmd = match fields.command() {
        None => return ("none", Err(ApiError::bad(NO_COMMAND))),
        Some(Err(name)) => {
            return (
                "unknown",
                Err(ApiError::bad(format!("Command [{name}] is unknown"))),
            )
        }
        Some(Ok(cmd)) => cmd,
    };
    // The client, for admission and interrupts: its address, and its user when auth is on (one
    // set of credentials is often shared by every caller).
    let client = match &user {
        Some(u) => format!("user:{u}@{peer}"),
        None => format!("ip:{peer}"),
    };
    let r = match cmd {
        Command::AttachToTangle => attach(app, client, fields, started).await,
        Command::InterruptAttachingToTangle => {
            // The attaches this client started, not every client's.
            let n = app.inflight.stop(Some(&client), StopCause::Interrupted);
            tracing::info!(client = %client, interrupted = n, "interruptAttachingToTangle");
            Ok(json_response(StatusCode::OK, Map::new(), started))
        }
        Command::GetNodeInfo => Ok(node_info(app, started)),
    };
    (cmd.name(), r)
}

/// A body at least this long, once freed, asks for free memory to be handed back to the
/// system ([`App::trim_wanted`]).
const TRIM_AFTER_BYTES: usize = 64 << 10;

/// How many bytes past `--max-body-length` the server reads and throws away before it answers
/// "Request too long". A client that writes its whole body before reading (most do) then reads
/// the 400 instead of a reset connection; bodies longer still are refused unread.
const DRAIN_BYTES: usize = 8 << 20;
/// How long reading past the limit may take.
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// How fast a body must arrive: like Apache's `mod_reqtimeout` with `MinRate`, it has
/// `initial` to start, and one more second for every `min_rate` bytes received, never more than
/// `total` in all (0 B/s: `total` alone).
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyPace {
    pub(super) started: tokio::time::Instant,
    pub(super) initial: Duration,
    pub(super) total: Duration,
    pub(super) min_rate: u64,
}

impl BodyPace {
    /// When the body must be in, with `received` bytes in so far; true when that is the
    /// `total` limit rather than the rate's.
    fn deadline(&self, received: usize) -> (tokio::time::Instant, bool) {
        if self.min_rate == 0 {
            return (self.started + self.total, true);
        }
        let earned = Duration::from_secs_f64(received as f64 / self.min_rate as f64);
        let allowed = self.initial.saturating_add(earned);
        if allowed >= self.total {
            (self.started + self.total, true)
        } else {
            (self.started + allowed, false)
        }
    }
}

/// Why a body was not read whole.
#[derive(Debug)]
pub(super) enum BodyError {
    /// Over `--max-body-length`.
    TooLong,
    /// It ended before it was complete (fewer bytes than its `Content-Length`, a malformed or
    /// missing chunk), or the connection failed.
    Incomplete(String),
    /// Not in within `--body-read-timeout`.
    TimedOut,
    /// Slower than `--body-min-rate`.
    TooSlow {
        /// Bytes received.
        received: usize,
    },
}

impl BodyError {
    fn answer(&self, pace: &BodyPace) -> ApiError {
        match self {
            BodyError::TooLong => ApiError::bad(REQUEST_TOO_LONG),
            BodyError::Incomplete(why) => {
                ApiError::bad(format!("Invalid request body: {why}"))
            }
            BodyError::TimedOut => ApiError::BodyTimeout(format!(
                "Request timed out: the body did not arrive within {} ms (--body-read-timeout)",
                pace.total.as_millis()
            )),
            BodyError::TooSlow { received } => ApiError::BodyTimeout(format!(
                "Request timed out: the body arrived slower than {} bytes/s (--body-min-rate): {received} bytes in {} ms",
                pace.min_rate,
                pace.started.elapsed().as_millis()
            )),
        }
    }
}

/// A body error (hyper's) with its causes, one line.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// The body if it is whole and at most `limit` bytes, arriving at `pace`. Past the limit,
/// reads on and discards up to [`DRAIN_BYTES`] more for at most [`DRAIN_TIME`], then fails:
/// memory stays bounded by `limit`. A body that ends early (the client closed its side before
/// its `Content-Length`, or a chunk is malformed or missing) is an error, never a shorter body.
async fn read_body(
    mut body: axum::body::Body,
    limit: usize,
    pace: BodyPace,
) -> Result<Vec<u8>, BodyError> {
    use axum::body::{Bytes, HttpBody};
    use std::pin::Pin;
    /// The next data chunk; `None` at the end of the body.
    async fn next(body: &mut axum::body::Body) -> Result<Option<Bytes>, BodyError> {
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await;
            match frame {
                Some(Ok(f)) => match f.into_data() {
                    Ok(data) => return Ok(Some(data)),
                    Err(_) => continue, // trailers
                },
                Some(Err(e)) => {
                    let e: Box<dyn std::error::Error + Send + Sync> = e.into_inner();
                    return Err(BodyError::Incomplete(describe(&*e)));
                }
                None => return Ok(None),
            }
        }
    }
    let mut buf = Vec::new();
    loop {
        let (deadline, total) = pace.deadline(buf.len());
        let data = match tokio::time::timeout_at(deadline, next(&mut body)).await {
            Ok(Ok(Some(d))) => d,
            Ok(Ok(None)) => return Ok(buf),
            Ok(Err(e)) => return Err(e),
            Err(_) if total => return Err(BodyError::TimedOut),
            Err(_) => {
                return Err(BodyError::TooSlow {
                    received: buf.len(),
                })
            }
        };
        if buf.len() + data.len() > limit {
            let mut past = buf.len() + data.len() - limit;
            drop(buf);
            let drain = async {
                while past <= DRAIN_BYTES {
                    match next(&mut body).await {
                        Ok(Some(d)) => past += d.len(),
                        _ => return,
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
            return Err(BodyError::TooLong);
        }
        buf.extend_from_slice(&data);
    }
}

fn node_info(app: &App, started: Instant) -> Response {
    let depth = app.admission.depth();
    let limits = app.admission.limits();
    let info = NodeInfo {
        time: crate::engine::attach::unix_millis(),
        running: depth.active,
        waiting: depth.waiting,
        concurrency: limits.concurrency,
        queue: limits.queue,
        max_mwm: app.config.max_mwm,
        max_transactions: app.config.max_requests_list,
        max_body_length: app.config.max_body_length,
        uptime_seconds: app.started.elapsed().as_secs(),
    };
    let body = api::node_info_answer(&info, &app.engine.device_report());
    json_response(StatusCode::OK, body, started)
}

fn shutting_down() -> ApiError {
    ApiError::Unavailable("Server is shutting down".into())
}

fn timed_out(limit: Option<Duration>) -> ApiError {
    let ms = limit.map(|d| d.as_millis()).unwrap_or(0);
    ApiError::Unavailable(format!(
        "Request timed out: attachToTangle did not finish within {ms} ms (--request-timeout)"
    ))
}

async fn attach(
    app: &Arc<App>,
    client: String,
    fields: api::RequestFields,
    started: Instant,
) -> Result<Response, ApiError> {
    let req = api::parse_attach(
        fields,
        ParseLimits {
            max_mwm: app.config.max_mwm,
            max_transactions: app.config.max_requests_list,
        },
    )?;
    if app.shutting_down.load(Ordering::Relaxed) {
        return Err(shutting_down());
    }
    if req.transactions.is_empty() {
        return Ok(json_response(
            StatusCode::OK,
            api::attach_answer(Vec::new()),
            started,
        ));
    }
    let limit = app.config.request_timeout;
    let deadline = limit.and_then(|d| started.checked_add(d));
    let ticket = app.inflight.register(client.clone());
    let interrupted = |cause: StopCause| match cause {
        StopCause::Shutdown => Err(shutting_down()),
        _ => Ok(json_response(
            StatusCode::OK,
            api::attach_answer(Vec::new()),
            started,
        )),
    };

    // Admission: run now, wait in turn, or 503 at once.
    let permit = match app.admission.admit(&client) {
        Admit::Now(p) => p,
        Admit::Full {
            waiting,
            client_share,
        } => {
            let what = if client_share {
                "this client's share of the wait queue is full"
            } else {
                "the wait queue is full"
            };
            return Err(ApiError::Busy {
                message: format!("Server busy: {what} ({waiting} requests waiting); retry later"),
                retry_after: app.retry_after(waiting),
            });
        }
        Admit::Wait(mut waiting) => {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                p = waiting.permit() => match p {
                    Some(p) => p,
                    None => {
                        let waiting = app.admission.depth().waiting;
                        return Err(ApiError::Busy {
                            message: format!(
                                "Server busy: the wait queue is full and this client holds more of it than others; this request gave its place to another client's ({waiting} requests waiting); retry later"
                            ),
                            retry_after: app.retry_after(waiting),
                        });
                    }
                },
                _ = ticket.wake.notified() => return interrupted(ticket.cause()),
                _ = sleep => return Err(timed_out(limit)),
            }
        }
    };
    if ticket.cause() != StopCause::None {
        return interrupted(ticket.cause());
    }

    // PoW on a blocking thread: never on the runtime's workers. The permit travels with it, so
    // the slot stays taken until the search has really stopped.
    let mut opts = app
        .config
        .pow
        .clone()
        .min_weight(req.mwm)
        .cancel(ticket.cancel.clone());
    if let Some(d) = deadline {
        opts = opts.deadline(d);
    }
    let engine = app.engine.clone();
    let n = req.transactions.len();
    let job = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let txs = req
            .transactions
            .iter()
            .map(api::TxTrytes::transaction)
            .collect::<Result<Vec<_>, _>>()?;
        engine.attach_to_tangle(&req.trunk, &req.branch, &txs, &opts)
    });
    let result = match job.await {
        Ok(r) => r,
        Err(e) => return Err(ApiError::Internal(format!("the attach task failed: {e}"))),
    };
    match result {
        Ok(done) => {
            let elapsed = started.elapsed();
            app.observe_attach(elapsed);
            app.metrics
                .attached(elapsed.as_secs_f64(), n as u64, done.nonces());
            tracing::info!(
                client = %client,
                transactions = n,
                mwm = req.mwm.get(),
                nonces = done.nonces(),
                ms = elapsed.as_millis() as u64,
                "attached"
            );
            Ok(json_response(
                StatusCode::OK,
                api::attach_answer(done.trytes()),
                started,
            ))
        }
        Err(Error::Cancelled { .. }) => interrupted(ticket.cause()),
        Err(Error::Timeout { .. }) => Err(timed_out(limit)),
        Err(e) => Err(ApiError::Internal(e.to_string())),
    }
}
