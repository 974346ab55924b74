//! IRI's answer shapes: `{"error": …}` (400: the request is wrong), `{"exception": …}` (500: the
//! server failed), 401 and 503, each with `duration` in milliseconds like every other answer.
//!
//! The words are IRI's where a client reads them: Trinity probes a PoW node with a bare
//! `attachToTangle` and looks for "Invalid parameters"; PyOTA reads `error` on a 400 and
//! `exception` on a 500; iota.js shows either.

use std::time::{Duration, Instant};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// IRI's message for a missing field.
pub(crate) const INVALID_PARAMETERS: &str = "Invalid parameters";
/// IRI's message when the `command` field is missing.
pub(crate) const NO_COMMAND: &str = "COMMAND parameter has not been specified in the request.";
/// IRI's message for a missing `X-IOTA-API-Version` header.
pub(crate) const INVALID_API_VERSION: &str = "Invalid API Version";
/// IRI's message for a body over the limit.
pub(crate) const REQUEST_TOO_LONG: &str = "Request too long";

/// An IRI API failure: what the handler answers instead of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// 400 `{"error": …}`: the request is wrong.
    BadRequest(String),
    /// 401 with `WWW-Authenticate: Basic`: credentials missing or wrong.
    Unauthorized,
    /// 503 `{"error": …}` with `Retry-After` seconds: the wait queue is full, come back later.
    Busy {
        /// What is full.
        message: String,
        /// Seconds to wait before retrying.
        retry_after: u64,
    },
    /// 408 `{"error": …}`: the body did not arrive within the body read timeout; the
    /// connection closes after the answer.
    BodyTimeout(String),
    /// 503 `{"error": …}` without `Retry-After`: the request ran past its time limit, or the
    /// server is shutting down.
    Unavailable(String),
    /// 500 `{"exception": …}`: the server failed (no device left, a device fault).
    Internal(String),
}

impl ApiError {
    /// A 400 with this message.
    pub(crate) fn bad(msg: impl Into<String>) -> Self {
        ApiError::BadRequest(msg.into())
    }

    /// The HTTP status.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Busy { .. } | ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The answer, with `duration` counted from `started`.
    pub(crate) fn into_response_since(self, started: Instant) -> Response {
        let status = self.status();
        let (key, msg, retry) = match self {
            ApiError::BadRequest(m) | ApiError::BodyTimeout(m) | ApiError::Unavailable(m) => {
                ("error", m, None)
            }
            ApiError::Unauthorized => ("error", "Unauthorized".to_string(), None),
            ApiError::Busy {
                message,
                retry_after,
            } => ("error", message, Some(retry_after)),
            ApiError::Internal(m) => ("exception", m, None),
        };
        let mut body = Map::new();
        body.insert(key.into(), Value::String(msg));
        let mut resp = json_response(status, body, started);
        let h = resp.headers_mut();
        if let Some(s) = retry {
            h.insert(header::RETRY_AFTER, HeaderValue::from(s.max(1)));
        }
        if status == StatusCode::REQUEST_TIMEOUT {
            h.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if status == StatusCode::UNAUTHORIZED {
            h.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"curlpow\""),
            );
        }
        resp
    }
}

/// Milliseconds since `started`, as IRI's `duration`.
pub(crate) fn millis_since(started: Instant) -> u64 {
    duration_ms(started.elapsed())
}

fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// A JSON answer with `duration` added (IRI puts it in every answer).
pub(crate) fn json_response(
    status: StatusCode,
    mut body: Map<String, Value>,
    started: Instant,
) -> Response {
    body.insert("duration".into(), json!(millis_since(started)));
    let bytes = serde_json::to_vec(&Value::Object(body)).unwrap_or_else(|_| b"{}".to_vec());
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}
