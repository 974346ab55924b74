//! The HTTP layer: axum routes and middleware over [`api`] and the engine. Kept thin:
//! IRI's header, body and JSON checks, auth, admission, then one blocking call to
//! `Engine::attach_to_tangle`.

use std::future::IntoFuture;
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
use tokio::sync::oneshot;

use super::api::{self, Command, NodeInfo, ParseLimits};
use super::connections::{CappedListener, ConnInfo};
use super::errors::{json_response, ApiError, INVALID_API_VERSION, NO_COMMAND, REQUEST_TOO_LONG};
use super::inflight::StopCause;
use super::limits::Admit;
use super::App;
use crate::base::error::Error;

/// Headers a browser wallet may send (IRI's list, with `Authorization` for auth).
const ALLOW_HEADERS: &str =
    "User-Agent, Origin, X-Requested-With, Content-Type, Accept, X-IOTA-API-Version, Authorization";

/// Serve until `stop` fires; then stop accepting, give attaches in flight the grace period, cancel
/// what is left, and return when every connection is closed.
pub(crate) async fn serve(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let (began_tx, began_rx) = oneshot::channel::<()>();
    let router = router(app.clone());
    let app2 = app.clone();
    let listener = CappedListener::new(listener, app.connections.clone());
    let serving = axum::serve(
        listener,
        router.into_make_service_with_connect_info::<ConnInfo>(),
    )
    .with_graceful_shutdown(async move {
        let _ = stop.await;
        app2.shutting_down.store(true, Ordering::Relaxed);
        tracing::info!(
            in_flight = app2.inflight.len(),
            "shutting down: no new connections; attaches in flight may finish"
        );
        let _ = began_tx.send(());
    });
    let mut serving = std::pin::pin!(serving.into_future());
    tokio::select! {
        r = &mut serving => return r,
        _ = began_rx => {}
    }
    let grace = app.config.shutdown_grace;
    if let Ok(r) = tokio::time::timeout(grace, &mut serving).await {
        return r;
    }
    let n = app.inflight.stop(None, StopCause::Shutdown);
    tracing::warn!(
        cancelled = n,
        grace_s = grace.as_secs_f64(),
        "grace period over: cancelling attaches in flight"
    );
    match tokio::time::timeout(Duration::from_secs(10), &mut serving).await {
        Ok(r) => r,
        Err(_) => {
            tracing::warn!("connections still open 10 s after the cancel; closing them");
            Ok(())
        }
    }
}

fn router(app: Arc<App>) -> Router {
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

/// While a request is handled its connection has no time limit and cannot be displaced (see
/// [`connections`](super::connections)); the body has its own limit (`body_read_timeout`).
async fn in_progress(req: Request, next: Next) -> Response {
    let guard = req
        .extensions()
        .get::<ConnectInfo<ConnInfo>>()
        .map(|c| c.0.conn.begin_request());
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
    let (label, result) = match handle(&app, conn.peer.ip(), req, started).await {
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
    peer: std::net::IpAddr,
    req: Request,
    started: Instant,
) -> (&'static str, Result<Response, ApiError>) {
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
    let body_limit = app.config.body_read_timeout;
    let body = match tokio::time::timeout(body_limit, read_body(req.into_body(), limit)).await {
        Ok(Ok(b)) => b,
        Ok(Err(())) => return ("none", Err(ApiError::bad(REQUEST_TOO_LONG))),
        Err(_) => {
            return (
                "none",
                Err(ApiError::BodyTimeout(format!(
                    "Request timed out: the body did not arrive within {} ms (--body-read-timeout)",
                    body_limit.as_millis()
                ))),
            )
        }
    };
    let json: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return (
                "none",
                Err(ApiError::bad(format!("Invalid JSON syntax: {e}"))),
            )
        }
    };
    let Value::Object(obj) = json else {
        return (
            "none",
            Err(ApiError::bad(
                "Invalid request payload: expected a JSON object with a command",
            )),
        );
    };
    let Some(name) = obj.get("command").and_then(Value::as_str) else {
        return ("none", Err(ApiError::bad(NO_COMMAND)));
    };
    let Some(cmd) = Command::from_name(name) else {
        return (
            "unknown",
            Err(ApiError::bad(format!("Command [{name}] is unknown"))),
        );
    };
    // The client, for admission and interrupts: its address, and its user when auth is on (one
    // set of credentials is often shared by every caller).
    let client = match &user {
        Some(u) => format!("user:{u}@{peer}"),
        None => format!("ip:{peer}"),
    };
    let r = match cmd {
        Command::AttachToTangle => attach(app, client, &obj, started).await,
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

/// How many bytes past `--max-body-length` the server reads and throws away before it answers
/// "Request too long". A client that writes its whole body before reading (most do) then reads
/// the 400 instead of a reset connection; bodies longer still are refused unread.
const DRAIN_BYTES: usize = 8 << 20;
/// How long reading past the limit may take.
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// The body if it is at most `limit` bytes. Past the limit, reads on and discards up to
/// [`DRAIN_BYTES`] more for at most [`DRAIN_TIME`], then `Err`: memory stays bounded by `limit`.
async fn read_body(mut body: axum::body::Body, limit: usize) -> Result<Vec<u8>, ()> {
    use axum::body::{Bytes, HttpBody};
    use std::pin::Pin;
    /// The next data chunk; `None` at the end of the body or when the client went away.
    async fn next(body: &mut axum::body::Body) -> Option<Bytes> {
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await;
            match frame {
                Some(Ok(f)) => match f.into_data() {
                    Ok(data) => return Some(data),
                    Err(_) => continue, // trailers
                },
                _ => return None,
            }
        }
    }
    let mut buf = Vec::new();
    while let Some(data) = next(&mut body).await {
        if buf.len() + data.len() > limit {
            let mut past = buf.len() + data.len() - limit;
            let drain = async {
                while past <= DRAIN_BYTES {
                    match next(&mut body).await {
                        Some(d) => past += d.len(),
                        None => return,
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
            return Err(());
        }
        buf.extend_from_slice(&data);
    }
    Ok(buf)
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
    obj: &Map<String, Value>,
    started: Instant,
) -> Result<Response, ApiError> {
    let req = api::parse_attach(
        obj,
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
                    None => return Err(ApiError::Internal("the wait queue lost a request".into())),
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
        engine.attach_to_tangle(&req.trunk, &req.branch, &req.transactions, &opts)
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
