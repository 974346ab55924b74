//! Graceful shutdown, the whole sequence in one place: SIGTERM or SIGINT (or
//! [`Server::shutdown`]) stops the accept loop; attaches in flight get
//! [`Config::shutdown_grace`](super::Config::shutdown_grace) to finish, then are cancelled (they
//! answer 503); connections still open 10 s after the cancel are closed, and the runtime is
//! given 5 s more. Dropping a [`Server`] skips the grace period. The signals are taken as
//! [`crate::service::signals`] says (blocked and waited for with sigwait when the process blocked
//! them first, so that no driver's handler can kill it).

use std::future::IntoFuture;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::connections::{CappedListener, ConnInfo};
use super::inflight::StopCause;
use super::{io_err, App, Server, ServerError};

pub(super) use crate::service::signals::Signals;

/// Serve until `stop` fires; then stop accepting, give attaches in flight the grace period, cancel
/// what is left, and return when every connection is closed.
pub(super) async fn serve_until_stopped(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let (began_tx, began_rx) = oneshot::channel::<()>();
    let router = super::routes::router(app.clone());
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

impl Server {
    /// Graceful shutdown: stop accepting, let attaches in flight finish within
    /// [`Config::shutdown_grace`](super::Config::shutdown_grace), then cancel the rest (they
    /// answer 503), and return once every connection is closed.
    pub fn shutdown(mut self) -> Result<(), ServerError> {
        self.stop_and_wait()
    }

    fn stop_and_wait(&mut self) -> Result<(), ServerError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(rt) = self.runtime.take() else {
            return Ok(());
        };
        let r = match self.task.take() {
            Some(task) => match rt.block_on(task) {
                Ok(r) => r.map_err(io_err("serving")),
                Err(e) => Err(ServerError::Io {
                    what: "the server task".into(),
                    source: std::io::Error::other(e.to_string()),
                }),
            },
            None => Ok(()),
        };
        // Cancelled searches stop within milliseconds; don't hang on one that does not.
        self.app.inflight.stop(None, StopCause::Shutdown);
        rt.shutdown_timeout(Duration::from_secs(5));
        r
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.runtime.is_some() {
            self.app.shutting_down.store(true, Ordering::Relaxed);
            self.app.inflight.stop(None, StopCause::Shutdown);
            let _ = self.stop_and_wait();
        }
    }
}
