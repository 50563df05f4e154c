//! The pool's MCP relay: how a pooled runtime reaches a run's MCP mocks
//! ([`crate::mcp::McpMock`], an HTTP MCP server in the test process on a fresh 127.0.0.1 port).
//!
//! A pooled runtime's sandbox, fixed when the pool started it, may connect only to the ports
//! of its policy, and a mock's port is chosen later, by the run. So each pool listens on one
//! 127.0.0.1 port of its own for MCP traffic, started with the pool and in the policy of every
//! runtime it starts ([`super::Pool::with_sandbox`]), sandboxed or not. A run on a pooled
//! runtime registers each mock's port for its lease ([`super::Lease::relay_mcp`]) and gets a
//! path on the relay under an unguessable token, `http://127.0.0.1:<relay>/mcp/<token>`; its
//! session configuration names that URL (followed by the mock's own path) instead of the mock's.
//! The relay forwards each HTTP request under a registered token to
//! `http://127.0.0.1:<mock port>/<rest of the path>`: method, headers (the MCP session headers
//! among them) and body unchanged but for the connection's own headers, and the answer's status,
//! headers and body back as they stream (SSE included). When the lease ends its tokens are
//! revoked: the relay answers `404` to them, as to any unknown token, and ends the streams it
//! was relaying for them, so a runtime cannot use the relay to reach any other loopback port.
//!
//! The relay serves on a thread of its own (a tokio runtime of its own, as a mock's server does)
//! so that it lives as long as its pool, whichever tokio runtime made the pool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use crate::run::proxy::is_connection_header;

/// The path prefix of the relay's URLs: `/mcp/<token>/<the mock's path>`.
const PREFIX: &str = "/mcp/";

/// The tokens in force: token -> the mock's port, and the sender whose drop ends the streams
/// relayed for it.
type Routes = Mutex<HashMap<String, (u16, tokio::sync::watch::Sender<()>)>>;

/// A running relay; stops (and ends every relayed stream) when dropped.
pub(crate) struct McpRelay {
    port: u16,
    routes: Arc<Routes>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for McpRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRelay")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl McpRelay {
    /// Bind 127.0.0.1 on a port the OS chooses and serve the relay on a thread of its own.
    ///
    /// # Errors
    /// The port cannot be bound, or the thread or its tokio runtime cannot start.
    pub(crate) fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let routes = Arc::new(Routes::default());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = routes.clone();
        let thread = std::thread::Builder::new()
            .name("pool-mcp-relay".to_owned())
            .spawn(move || {
                runtime.block_on(serve(listener, served, stopped));
                runtime.shutdown_timeout(std::time::Duration::from_secs(2));
            })?;
        Ok(Self {
            port,
            routes,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The 127.0.0.1 port it listens on (in every pooled runtime's sandbox policy).
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Relay to the mock on `127.0.0.1:port` under a new token: the token, and the relay's URL
    /// for it (`http://127.0.0.1:<relay>/mcp/<token>`, to which the mock's own path is added).
    pub(crate) fn register(&self, port: u16) -> (String, String) {
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let (ends, _) = tokio::sync::watch::channel(());
        self.routes
            .lock()
            .expect("relay lock")
            .insert(token.clone(), (port, ends));
        let url = format!("http://127.0.0.1:{}{PREFIX}{token}", self.port);
        (token, url)
    }

    /// Stop relaying `token`: later requests under it get `404`, and its streams end.
    pub(crate) fn revoke(&self, token: &str) {
        self.routes.lock().expect("relay lock").remove(token);
    }
}

impl Drop for McpRelay {
    fn drop(&mut self) {
        self.routes.lock().expect("relay lock").clear();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Clone)]
struct Relaying {
    routes: Arc<Routes>,
    client: reqwest::Client,
}

/// Serve the relay on `listener` until `stopped` fires.
async fn serve(
    listener: std::net::TcpListener,
    routes: Arc<Routes>,
    stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    // No proxy from the environment (the mock is on loopback), no redirect, no timeout (a
    // server-sent event stream lasts as long as the MCP session).
    let Ok(client) = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return;
    };
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(Relaying { routes, client });
    tokio::select! {
        _ = axum::serve(listener, app) => {}
        _ = stopped => {}
    }
}

/// The token and the rest of the path of a relay path `/mcp/<token>[/<rest>]`.
fn split(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    Some(match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    })
}

/// Forward one request under a registered token to its mock; `404` for any other path.
async fn forward(
    State(relaying): State<Relaying>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let route = split(uri.path()).and_then(|(token, rest)| {
        let routes = relaying.routes.lock().expect("relay lock");
        let (port, ends) = routes.get(token)?;
        Some((*port, rest.to_owned(), ends.subscribe()))
    });
    let Some((port, rest, mut ends)) = route else {
        return (StatusCode::NOT_FOUND, "no such MCP relay token").into_response();
    };
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    let target = format!("http://127.0.0.1:{port}{rest}{query}");
    let mut upstream_headers = HeaderMap::new();
    for (name, value) in &headers {
        if !is_connection_header(name.as_str()) {
            upstream_headers.append(name.clone(), value.clone());
        }
    }
    let mut request = relaying
        .client
        .request(method, &target)
        .headers(upstream_headers);
    if !body.is_empty() {
        request = request.body(body);
    }
    let answer = match request.send().await {
        Ok(answer) => answer,
        Err(e) => {
            return (
                StatusCode::BAD_GATEWAY,
                format!("the MCP mock on 127.0.0.1:{port} did not answer: {e}"),
            )
                .into_response();
        }
    };
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        if !is_connection_header(name.as_str()) {
            response = response.header(name, value);
        }
    }
    // The stream ends when the token is revoked (its sender dropped) or the mock ends it.
    let revoked = async move { while ends.changed().await.is_ok() {} };
    let stream = answer
        .bytes_stream()
        .take_until(revoked)
        .map(|chunk| chunk.map_err(std::io::Error::other));
    response
        .body(Body::from_stream(stream))
        .unwrap_or_else(|e| (StatusCode::BAD_GATEWAY, e.to_string()).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An HTTP server on 127.0.0.1 that echoes the request's method, path, query, session
    /// header and body, and streams two events on `GET /events`, the second once `next` fires.
    async fn echo_server() -> (
        u16,
        tokio::sync::oneshot::Sender<()>,
        Arc<tokio::sync::Notify>,
    ) {
        let next = Arc::new(tokio::sync::Notify::new());
        let notify = next.clone();
        let echo = |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| async move {
            let session = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            let host = headers
                .get("host")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            (
                [("mcp-session-id", "s-2")],
                format!(
                    "{method} {uri} {session} {host} {}",
                    String::from_utf8_lossy(&body)
                ),
            )
        };
        let events = move || async move {
            let stream = futures::stream::once(async { Ok::<_, std::io::Error>("data: 1\n\n") })
                .chain(futures::stream::once(async move {
                    notify.notified().await;
                    Ok("data: 2\n\n")
                }))
                .chain(futures::stream::pending());
            (
                [("content-type", "text/event-stream")],
                Body::from_stream(stream),
            )
        };
        let app = axum::Router::new()
            .route("/events", axum::routing::get(events))
            .fallback(echo);
        let (port, stop) = crate::run::pool::loopback::serve_loopback(app)
            .await
            .unwrap();
        (port, stop, next)
    }

    /// A request under a registered token reaches the mock's port with its method, path,
    /// query, session header and body, and the mock's headers come back; a streamed answer
    /// passes chunk by chunk; an unknown token and a revoked one get 404, and revoking ends a
    /// stream in flight.
    #[tokio::test]
    async fn relays_registered_tokens_only_and_ends_their_streams_when_revoked() {
        let (port, _stop, next) = echo_server().await;
        let relay = McpRelay::start().unwrap();
        let (token, url) = relay.register(port);
        assert_eq!(
            url,
            format!("http://127.0.0.1:{}/mcp/{token}", relay.port())
        );
        let client = reqwest::Client::builder().no_proxy().build().unwrap();

        let answer = client
            .post(format!("{url}/mcp?x=1"))
            .header("mcp-session-id", "s-1")
            .body("{\"jsonrpc\":\"2.0\"}")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["mcp-session-id"], "s-2");
        assert_eq!(
            answer.text().await.unwrap(),
            format!("POST /mcp?x=1 s-1 127.0.0.1:{port} {{\"jsonrpc\":\"2.0\"}}")
        );

        let mut events = client.get(format!("{url}/events")).send().await.unwrap();
        assert_eq!(events.headers()["content-type"], "text/event-stream");
        assert_eq!(events.chunk().await.unwrap().unwrap(), "data: 1\n\n");
        next.notify_one();
        assert_eq!(events.chunk().await.unwrap().unwrap(), "data: 2\n\n");

        let unknown = format!(
            "http://127.0.0.1:{}/mcp/{}/mcp",
            relay.port(),
            "0".repeat(64)
        );
        assert_eq!(client.post(&unknown).send().await.unwrap().status(), 404);
        let bare = format!("http://127.0.0.1:{}/mcp", relay.port());
        assert_eq!(client.get(&bare).send().await.unwrap().status(), 404);

        relay.revoke(&token);
        // The stream in flight ends (no third event ever comes) ...
        let end = tokio::time::timeout(std::time::Duration::from_secs(30), events.chunk()).await;
        assert!(
            matches!(end, Ok(Ok(None)) | Ok(Err(_))),
            "the stream did not end: {end:?}"
        );
        // ... and the token is refused.
        let refused = client.post(format!("{url}/mcp")).send().await.unwrap();
        assert_eq!(refused.status(), 404);
    }

    #[test]
    fn a_relay_path_names_its_token_and_rest() {
        assert_eq!(split("/mcp/abc/mcp"), Some(("abc", "/mcp")));
        assert_eq!(split("/mcp/abc"), Some(("abc", "/")));
        assert_eq!(split("/other/abc"), None);
    }
}
