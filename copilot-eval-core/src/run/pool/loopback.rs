//! The loopback HTTP that both sides of a pooled runtime share: serving on 127.0.0.1 with
//! `TCP_NODELAY` (the router's API front and the runner's control endpoint in the pool, a run's
//! endpoint in `run::pooled`), and a `reqwest` answer as the SDK's streamed response
//! (the router forwarding to an endpoint, an endpoint forwarding to its model server).

use futures::StreamExt;
use github_copilot_sdk::copilot_request_handler::{CopilotHttpResponse, CopilotRequestError};

/// Serve `app` on 127.0.0.1 (a port the OS chooses, [`no_delay`]) until the returned sender is
/// dropped or sent to: the port and that sender.
///
/// # Errors
/// The port cannot be bound.
pub(crate) async fn serve_loopback(
    app: axum::Router,
) -> std::io::Result<(u16, tokio::sync::oneshot::Sender<()>)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(no_delay(listener), app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    Ok((port, stop))
}

/// The HTTP client of a run's loopback requests (the runner's pool control endpoint, the pool
/// key's two questions to the run's model server, the run's endpoint forwarding to it): one
/// per process, built once and cloned (building a `reqwest` client sets up its TLS context,
/// 15-140 ms each in a test binary of the dev profile on a busy 2-core machine, three times per
/// pooled run before). It follows no redirect (none of those servers sends one) and keeps no
/// idle connection, so no connection outlives the tokio runtime that opened it.
///
/// # Errors
/// The client cannot be built (its TLS backend did not start); the text says why.
pub(crate) fn loopback_client() -> std::io::Result<reqwest::Client> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .pool_max_idle_per_host(0)
                .build()
                .map_err(|e| format!("cannot build the loopback HTTP client: {e}"))
        })
        .clone()
        .map_err(std::io::Error::other)
}

/// A `reqwest` answer as the SDK's streamed response (status, reason, headers, body chunks).
pub(crate) fn sdk_response(response: reqwest::Response) -> CopilotHttpResponse {
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .bytes_stream()
        .map(|item| item.map_err(|e| CopilotRequestError::Upstream(e.to_string())));
    CopilotHttpResponse::new(
        status.as_u16(),
        status.canonical_reason().map(str::to_owned),
        headers,
        Box::pin(body),
    )
}

/// `listener` with `TCP_NODELAY` on every accepted connection: the small frames between the
/// router and a run's endpoint (SSE chunks, acks) go out at once instead of waiting for the
/// peer's delayed ACK.
fn no_delay(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = std::net::SocketAddr> {
    use axum::serve::ListenerExt;
    listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    })
}
