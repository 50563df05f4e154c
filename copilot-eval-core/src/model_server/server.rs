//! The running server: binding `127.0.0.1`, the routes (the model turns' handlers are in `http`
//! and `websocket`, the state they share in `state`), and the account and catalog endpoints.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::conn::{ResetOnClose, ResettableListener};
use super::http::{chat_completions, json_response, responses_http};
use super::render;
use super::state::{MAX_BODY_BYTES, Shared};
use super::types::{ModelRequest, ReceivedRequest, ServerConfig, WireApi};
use super::websocket::responses_ws;

/// How long [`ModelServer::shutdown`] waits for open connections to finish before it aborts them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Port 9 (discard) on loopback: nothing listens there, so telemetry uploads fail fast.
const TELEMETRY_URL: &str = "http://127.0.0.1:9/telemetry";

/// A running loopback model server. Dropping it stops the server (the serve task is aborted,
/// open connections are told to close, hanging replies end); [`ModelServer::shutdown`] does the
/// same and waits for the connections.
#[derive(Debug)]
pub struct ModelServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown_tx: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Binds `127.0.0.1` on a port the OS chooses and starts serving in a background task.
    /// Must be called inside a Tokio runtime. Fails only when the socket cannot be bound.
    ///
    /// The future is boxed in this crate, so that a test crate awaiting it does not compile
    /// the server again (docs/performance.md, "The edit loop").
    pub fn start(config: ServerConfig) -> BoxFuture<'static, std::io::Result<ModelServer>> {
        Box::pin(Self::start_unboxed(config))
    }

    async fn start_unboxed(config: ServerConfig) -> std::io::Result<ModelServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let resets = Arc::new(AtomicUsize::new(0));
        let shared = Arc::new(Shared::new(
            config,
            format!("http://{addr}"),
            shutdown_rx.clone(),
            resets.clone(),
        ));
        let app = Router::new()
            .route("/copilot_internal/user", get(user))
            .route("/models", get(models))
            .route("/chat/completions", post(chat_completions))
            .route("/responses", post(responses_http).get(responses_ws))
            .fallback(not_found)
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(shared.clone());
        // Every request learns how to end its connection with a reset (`Reply::Disconnect`).
        let listener = ResettableListener { listener, resets };
        let app = app.into_make_service_with_connect_info::<ResetOnClose>();
        let mut signal = shutdown_rx;
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = signal.wait_for(|stop| *stop).await;
            });
            if let Err(err) = serve.await {
                tracing::warn!("copilot-eval model server stopped: {err}");
            }
        });
        Ok(ModelServer {
            shared,
            addr,
            shutdown_tx,
            task: Some(task),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT` (no trailing slash). Give it to the runtime as
    /// `COPILOT_API_URL` and `COPILOT_DEBUG_GITHUB_API_URL`.
    pub fn base_url(&self) -> String {
        self.shared.base_url().to_owned()
    }

    /// The bound socket address (always `127.0.0.1` and the OS-chosen port).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The catalog's model ids.
    pub fn models(&self) -> Vec<String> {
        self.shared.config.models()
    }

    /// The wire format the catalog advertises.
    pub fn wire_api(&self) -> WireApi {
        self.shared.config.wire_api
    }

    /// Every request received so far, in arrival order: user, catalog, model turns, 404s, the
    /// WebSocket upgrade, and each WebSocket message as its own entry.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.shared.requests()
    }

    /// The model-turn requests passed to the responder so far, in arrival order.
    pub fn model_requests(&self) -> Vec<ModelRequest> {
        self.shared.model_requests()
    }

    /// Connections the server has ended with a TCP reset (`RST`) so far: a
    /// [`Reply::Disconnect`](super::script::Reply::Disconnect) over HTTP, and a WebSocket connection after
    /// [`ServerConfig::reset_websocket_after_turns`]. Counted when the socket is closed.
    pub fn connections_reset(&self) -> usize {
        self.shared.resets()
    }

    /// Requests answered `404` so far (paths the server does not serve), in arrival order.
    pub fn unknown_requests(&self) -> Vec<ReceivedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.status == 404)
            .collect()
    }

    /// Stops accepting connections, ends hanging replies (HTTP: `503`) and open WebSockets, and
    /// waits up to 5 seconds for open connections to close before aborting them. The future
    /// is boxed in this crate (as [`ModelServer::start`]'s).
    pub fn shutdown(mut self) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let _ = self.shutdown_tx.send(true);
            if let Some(mut task) = self.task.take()
                && tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                    .await
                    .is_err()
            {
                task.abort();
            }
        })
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.shutdown_tx.send(true);
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Account and catalog endpoints
// ---------------------------------------------------------------------------------------------

async fn user(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = shared.record_http(&method, &uri, &headers, &body);
    let value = json!({
        "login": shared.config.login,
        "copilot_plan": "individual_pro",
        "access_type_sku": "copilot_pro",
        "chat_enabled": true,
        // The MCP entitlement: without it the runtime reports every configured MCP server
        // `not_configured` and never launches it.
        "is_mcp_enabled": true,
        "analytics_tracking_id": "copilot-eval-offline",
        "endpoints": {
            "api": shared.base_url(),
            "proxy": shared.base_url(),
            "telemetry": TELEMETRY_URL,
        },
    });
    shared.set_status(index, 200);
    json_response(200, &value)
}

/// One catalog entry. The limits are what the runtime sizes its context window from; the
/// billing multiplier 0 makes the runtime report cost 0.
fn catalog_entry(id: &str, wire: WireApi, vision: bool) -> Value {
    let mut entry = json!({
        "id": id,
        "name": id,
        "object": "model",
        "vendor": "copilot-eval",
        "version": id,
        "preview": false,
        "model_picker_enabled": true,
        "is_chat_default": false,
        "is_chat_fallback": false,
        "capabilities": {
            "type": "chat",
            "family": id,
            "object": "model_capabilities",
            "tokenizer": "o200k_base",
            "limits": {
                "max_context_window_tokens": 128_000,
                "max_prompt_tokens": 112_000,
                "max_output_tokens": 16_384,
            },
            "supports": {
                "streaming": true,
                "tool_calls": true,
                "parallel_tool_calls": true,
                "structured_outputs": true,
                "vision": vision,
                "reasoning_effort": ["low", "medium", "high", "xhigh"],
            },
        },
        "policy": {"state": "enabled", "terms": ""},
        "billing": {"is_premium": false, "multiplier": 0},
    });
    if let Some(endpoints) = wire.supported_endpoints() {
        entry["supported_endpoints"] = json!(endpoints);
    }
    entry
}

async fn models(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = shared.record_http(&method, &uri, &headers, &body);
    let data: Vec<Value> = shared
        .config
        .models()
        .iter()
        .map(|id| catalog_entry(id, shared.config.wire_api, shared.config.vision))
        .collect();
    shared.set_status(index, 200);
    json_response(200, &json!({"object": "list", "data": data}))
}

async fn not_found(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = shared.record_http(&method, &uri, &headers, &body);
    shared.set_status(index, 404);
    let message = format!(
        "copilot-eval model server does not serve {} {}",
        method,
        uri.path()
    );
    json_response(404, &render::error_body(404, &message))
}
