//! A pooled runtime's side in the test process: the loopback endpoint the runner's router
//! forwards this run's model requests to ([`crate::run::pool::wire`]). Each request, HTTP or
//! WebSocket, is handed to the run's own [`RequestProxy`] — the same audit, budget gate, image
//! detail and tap as behind the SDK's handler — and forwarded to the eval's model server (the
//! request URL's origin is replaced with the server's).

use std::sync::Arc;

use async_trait::async_trait;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpResponse, CopilotRequestError, CopilotWebSocketMessage,
};
use tokio::sync::Mutex as AsyncMutex;

use super::proxy::{
    Downstream, ModelHttpRequest, ProxyContext, RequestProxy, is_connection_header,
};
use crate::run::pool::loopback::{sdk_response, serve_loopback};
use crate::run::pool::wire::{self, Frame, Payload, WireContext};

/// The lease of a warm runtime for this run, when it has a pool (given, or the runner's from
/// the environment) and may share a runtime ([`private_reason`] gives none): its pool key is
/// asked from the run's model server ([`crate::run::pool::pool_key`]). `Ok(None)`: the run
/// starts its private runtime; when a pool was offered, `run` notes why
/// (`private_runtime_reason`).
///
/// # Errors
/// The pool key could not be computed or the pool could not give a runtime; the text says
/// which (the run ends with `execution_error`).
pub(super) async fn lease(
    eval: &crate::CopilotEval,
    options: &super::RunOptions,
    run: &mut super::state::RunState,
) -> Result<Option<crate::run::pool::Lease>, crate::run::pool::PoolError> {
    let source = match &options.pool {
        Some(source) => source.clone(),
        None => match crate::run::pool::RunnerPool::from_env() {
            Some(runner) => crate::run::pool::PoolSource::Runner(runner),
            None => return Ok(None),
        },
    };
    if let Some(reason) = private_reason(eval, options) {
        run.note_private_runtime(reason.to_owned());
        return Ok(None);
    }
    let (super::Target::Offline { base_url }, Some(runtime_path)) =
        (&options.target, run.runtime_path.as_deref())
    else {
        return Ok(None);
    };
    let key = crate::run::pool::pool_key(runtime_path, eval.client_mode.as_str(), base_url).await?;
    // A pooled runtime reaches the model server through the pool's router, and the eval's MCP
    // mocks through the pool's MCP relay ([`relay_mocks`]), not by their ports.
    let relayed: Vec<u16> = std::iter::once(base_url.clone())
        .chain(eval.mcp_mocks.iter().filter_map(|mock| mock.url().ok()))
        .filter_map(|url| super::sandbox::url_port(&url))
        .collect();
    let sandbox = run.confine.clone().map(|policy| {
        relayed
            .iter()
            .fold(policy, |policy, port| policy.without_port(*port))
    });
    source.lease(&key, runtime_path, sandbox.as_ref()).await
}

/// Why `eval` may not run on a pooled runtime (see [`super::RunOptions::pooled`]), in words for
/// the result's `private_runtime_reason`; `None`: it may.
fn private_reason(eval: &crate::CopilotEval, options: &super::RunOptions) -> Option<&'static str> {
    if !matches!(options.target, super::Target::Offline { .. }) {
        return Some("the run is live or records: no pool serves live model traffic");
    }
    if eval.client_mode == crate::eval::ClientMode::Empty {
        return Some("the eval runs in empty client mode");
    }
    if eval.fresh_runtime {
        return Some("the eval sets fresh_runtime");
    }
    if eval.session_hatch.is_some() {
        return Some("the eval has a session hatch: its closure could reach the shared runtime");
    }
    if eval.end_at_tool_call.is_some() {
        return Some(
            "the eval ends at a tool call left pending: its runtime is stopped with the call pending",
        );
    }
    if options.resume.is_some() || options.home_seed.is_some() {
        return Some("the run resumes a session (or seeds its home)");
    }
    if eval.mcp_servers.is_empty() || options.faults.pool_mcp_servers {
        return None;
    }
    // MCP mocks are reached through the pool's MCP relay ([`relay_mocks`]).
    if eval.mcp_servers.len() == eval.mcp_mocks.len() {
        return None;
    }
    Some(
        "the eval configures MCP servers: a stdio server's process would be the pooled runtime's child, out of reach of the run's leftover sweep, and a pooled runtime's sandbox may not connect to an HTTP server's port",
    )
}

/// Register each MCP mock of `eval` with the pool's MCP relay for `lease`
/// ([`crate::run::pool::mcp_relay`]): per mock, its name and the URL the pooled runtime is
/// to use, the relay's URL for it followed by the mock's own path. The relay stops relaying them
/// when the lease ends.
///
/// # Errors
/// A mock is not running, or the pool did not relay it; the text names the mock.
pub(super) async fn relay_mocks(
    eval: &crate::CopilotEval,
    lease: &crate::run::pool::Lease,
) -> Result<Vec<(String, String)>, String> {
    let mut urls = Vec::new();
    for mock in &eval.mcp_mocks {
        let cannot = |e: &dyn std::fmt::Display| {
            format!(
                "cannot relay the MCP mock `{}` to the pooled runtime: {e}",
                mock.name()
            )
        };
        let url = mock.url().map_err(|e| cannot(&e))?;
        let parsed = reqwest::Url::parse(&url).map_err(|e| cannot(&e))?;
        let port = parsed
            .port_or_known_default()
            .ok_or_else(|| cannot(&format!("its URL {url} names no port")))?;
        let relay = lease.relay_mcp(port).await.map_err(|e| cannot(&e))?;
        urls.push((mock.name().to_owned(), format!("{relay}{}", parsed.path())));
    }
    Ok(urls)
}

/// The running endpoint; stops when dropped.
pub(crate) struct Endpoint {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Endpoint {
    /// The 127.0.0.1 port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[derive(Clone)]
struct EndpointState {
    proxy: Arc<RequestProxy>,
    /// The eval's model server (`http://127.0.0.1:<port>`).
    base_url: String,
    client: reqwest::Client,
}

/// Serve `proxy` on a fresh 127.0.0.1 port, forwarding to `base_url`.
///
/// # Errors
/// The port cannot be bound.
pub(crate) async fn serve(proxy: Arc<RequestProxy>, base_url: &str) -> std::io::Result<Endpoint> {
    let client = crate::run::pool::loopback::loopback_client()?;
    let state = EndpointState {
        proxy,
        base_url: base_url.trim_end_matches('/').to_owned(),
        client,
    };
    let app = axum::Router::new()
        .route(wire::HTTP_PATH, axum::routing::post(http))
        .route(wire::WS_PATH, axum::routing::get(websocket))
        .with_state(state);
    let (port, stop) = serve_loopback(app).await?;
    Ok(Endpoint {
        port,
        stop: Some(stop),
    })
}

/// `url` with its origin replaced by `base_url`'s (scheme kind kept: `ws`/`wss` stay
/// WebSocket).
pub(crate) fn rewrite_origin(url: &str, base_url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    let base_rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = base_rest.split('/').next().unwrap_or(base_rest);
    let scheme = match scheme {
        "wss" | "ws" => "ws",
        _ => "http",
    };
    format!("{scheme}://{authority}{path}")
}

/// An HTTP model request as it reached the endpoint.
struct PooledRequest {
    method: String,
    url: String,
    headers: HeaderMap,
    body: Vec<u8>,
    client: reqwest::Client,
}

#[async_trait]
impl ModelHttpRequest for PooledRequest {
    super::proxy::http_request_fields!();

    async fn cancelled(&self) {
        // The router drops its request when the runtime cancels; this handler is dropped with
        // it, which ends the wait.
        futures::future::pending::<()>().await;
    }

    async fn forward(self) -> Result<CopilotHttpResponse, CopilotRequestError> {
        let method = reqwest::Method::from_bytes(self.method.as_bytes())
            .map_err(|e| CopilotRequestError::InvalidState(format!("invalid HTTP method: {e}")))?;
        let mut headers = self.headers;
        strip_connection_headers(&mut headers);
        let mut builder = self.client.request(method, &self.url).headers(headers);
        if !self.body.is_empty() {
            builder = builder.body(self.body);
        }
        let response = builder
            .send()
            .await
            .map_err(|e| CopilotRequestError::Upstream(e.to_string()))?;
        Ok(sdk_response(response))
    }
}

fn strip_connection_headers(headers: &mut HeaderMap) {
    let names: Vec<HeaderName> = headers
        .keys()
        .filter(|n| is_connection_header(n.as_str()))
        .cloned()
        .collect();
    for name in names {
        headers.remove(&name);
    }
}

async fn http(State(state): State<EndpointState>, headers: HeaderMap, body: Bytes) -> Response {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let method = text(wire::METHOD);
    let url = rewrite_origin(&text(wire::URL), &state.base_url);
    let ctx = wire::take_context(&headers, url.clone());
    let mut request_headers = ctx.headers.clone();
    strip_connection_headers(&mut request_headers);
    let request = PooledRequest {
        method,
        url,
        headers: request_headers,
        body: body.to_vec(),
        client: state.client.clone(),
    };
    match state.proxy.http(request, &ctx).await {
        Ok(answer) => {
            let mut response = Response::builder().status(answer.status);
            for (name, value) in &answer.headers {
                if !is_connection_header(name.as_str()) {
                    response = response.header(name, value);
                }
            }
            let body = answer
                .body
                .map(|chunk| chunk.map_err(|e| std::io::Error::other(e.to_string())));
            response
                .body(Body::from_stream(body))
                .unwrap_or_else(|e| (StatusCode::BAD_GATEWAY, e.to_string()).into_response())
        }
        Err(e) => {
            let mut response = StatusCode::BAD_GATEWAY.into_response();
            response.headers_mut().insert(
                HeaderName::from_static(wire::ERROR),
                wire::header_value(&e.to_string()),
            );
            response
        }
    }
}

async fn websocket(State(state): State<EndpointState>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| pump(socket, state))
}

type Sink = futures::stream::SplitSink<WebSocket, Message>;

/// The router's side of a proxied WebSocket, as the proxy's downstream.
struct ToRouter(Arc<AsyncMutex<Sink>>);

impl ToRouter {
    async fn frame(&self, frame: &Frame) -> Result<(), String> {
        self.0
            .lock()
            .await
            .send(Message::Text(frame.text().into()))
            .await
            .map_err(|e| e.to_string())
    }
}

#[async_trait]
impl Downstream for ToRouter {
    async fn send_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError> {
        self.frame(&Frame::Message {
            ctx: None,
            payload: Payload::new(&message.data, message.binary),
        })
        .await
        .map_err(CopilotRequestError::Upstream)
    }

    async fn close(&self) {
        let _ = self.frame(&Frame::Close).await;
    }
}

fn context(ctx: WireContext, base_url: &str) -> ProxyContext {
    let mut ctx = ProxyContext::from(ctx);
    ctx.url = rewrite_origin(&ctx.url, base_url);
    ctx
}

async fn pump(socket: WebSocket, state: EndpointState) {
    let (sink, mut frames) = socket.split();
    let to_router = Arc::new(ToRouter(Arc::new(AsyncMutex::new(sink))));
    let next = |frame: Option<Result<Message, axum::Error>>| match frame {
        Some(Ok(Message::Text(text))) => Frame::parse(text.as_str()).ok(),
        _ => None,
    };
    let Some(Frame::Open { ctx }) = next(frames.next().await) else {
        return;
    };
    let ctx = context(ctx, &state.base_url);
    let socket = match state.proxy.websocket(&ctx, to_router.clone()).await {
        Ok(socket) => {
            let _ = to_router.frame(&Frame::Opened { error: None }).await;
            socket
        }
        Err(e) => {
            let _ = to_router
                .frame(&Frame::Opened {
                    error: Some(e.to_string()),
                })
                .await;
            return;
        }
    };
    while let Some(frame) = next(frames.next().await) {
        match frame {
            Frame::Message { ctx, payload } => {
                let ctx = ctx.map(|c| context(c, &state.base_url));
                let message = CopilotWebSocketMessage {
                    data: payload.bytes(),
                    binary: payload.binary,
                };
                let error = socket
                    .forward(message, ctx.as_ref())
                    .await
                    .err()
                    .map(|e| e.to_string());
                let _ = to_router.frame(&Frame::Ack { error }).await;
            }
            Frame::Close => break,
            _ => {}
        }
    }
    socket.close().await;
}

/// The client options of a run on a pooled runtime: connect to the leased runtime through
/// `relay` ([`crate::run::pool::relay`]; the SDK still wants the program it would have
/// started), with the lease's connection token and no handler (the runtime's one handler is
/// the pool's router).
pub(crate) fn client_options(
    runtime_path: &std::path::Path,
    lease: &crate::run::pool::Lease,
    relay: &crate::run::pool::relay::Relay,
) -> github_copilot_sdk::ClientOptions {
    github_copilot_sdk::ClientOptions::new()
        .with_program(github_copilot_sdk::CliProgram::Path(
            runtime_path.to_path_buf(),
        ))
        .with_transport(github_copilot_sdk::Transport::External {
            host: "127.0.0.1".into(),
            port: relay.port(),
            connection_token: Some(lease.token.clone()),
        })
}

#[cfg(test)]
mod tests {
    use super::{private_reason, rewrite_origin};
    use crate::CopilotEval;
    use crate::run::RunOptions;

    /// docs/performance.md, "Which evals run on a private runtime": an offline eval shares a
    /// runtime unless it asks for a fresh one, has a session hatch, runs in empty client mode,
    /// resumes a session, seeds its home or configures MCP servers other than mocks; a live run
    /// never does.
    /// Each refusal names why.
    #[test]
    fn which_evals_may_share_a_runtime() {
        let poolable =
            |eval: &CopilotEval, options: &RunOptions| private_reason(eval, options).is_none();
        let offline = || RunOptions::offline("http://127.0.0.1:9");
        let plain = CopilotEval::builder().build().unwrap();
        assert!(poolable(&plain, &offline()));
        assert!(!poolable(&plain, &RunOptions::live()));
        let fresh = CopilotEval::builder().fresh_runtime(true).build().unwrap();
        assert!(!poolable(&fresh, &offline()));
        let hatch = CopilotEval::builder()
            .session_hatch(|_, _| Box::pin(async { Ok(()) }))
            .build()
            .unwrap();
        assert!(!poolable(&hatch, &offline()));
        let empty = CopilotEval::builder().client_mode("empty").build().unwrap();
        assert!(!poolable(&empty, &offline()));
        assert!(!poolable(&plain, &offline().resume("session-1")));
        let seed = tempfile::tempdir().unwrap();
        assert!(!poolable(&plain, &offline().home_seed(seed.path())));
        let mcp = CopilotEval::builder()
            .mcp_server(
                "fixture",
                crate::sdk::McpServerConfig::Stdio(crate::sdk::McpStdioServerConfig {
                    command: "node".to_owned(),
                    ..Default::default()
                }),
            )
            .build()
            .unwrap();
        assert!(!poolable(&mcp, &offline()));
        assert!(
            private_reason(&mcp, &offline())
                .unwrap()
                .contains("stdio server's process")
        );
        // Mocks are relayed by the pool; a real server beside them keeps the eval private.
        let mock = crate::mcp::McpMock::new("weather");
        let mocked = CopilotEval::builder().mcp_mock(&mock).build().unwrap();
        assert!(poolable(&mocked, &offline()));
        let mixed = CopilotEval::builder()
            .mcp_mock(&mock)
            .mcp_server(
                "real",
                crate::sdk::McpServerConfig::Http(crate::sdk::McpHttpServerConfig {
                    url: "http://127.0.0.1:9/mcp".to_owned(),
                    ..Default::default()
                }),
            )
            .build()
            .unwrap();
        assert!(!poolable(&mixed, &offline()));
        assert_eq!(
            private_reason(&plain, &RunOptions::live()),
            Some("the run is live or records: no pool serves live model traffic")
        );
    }

    #[test]
    fn the_origin_becomes_the_model_servers() {
        assert_eq!(
            rewrite_origin(
                "http://127.0.0.1:9/chat/completions?x=1",
                "http://127.0.0.1:4000"
            ),
            "http://127.0.0.1:4000/chat/completions?x=1"
        );
        assert_eq!(
            rewrite_origin(
                "wss://api.githubcopilot.com/responses",
                "http://127.0.0.1:4000/"
            ),
            "ws://127.0.0.1:4000/responses"
        );
    }
}
