//! The running server: binding `127.0.0.1`, the routes, the shared state (request log,
//! conversation store, id counters), model-turn dispatch to the responder, and the account and
//! catalog endpoints.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::conn::{ResetOnClose, ResettableListener};
use super::convert;
use super::http::{chat_completions, json_response, responses_http};
use super::render::{self, IssuedCall, TurnRender};
use super::script::{Reply, ScriptedTurn};
use super::types::{ModelRequest, Outcome, ReceivedRequest, ServerConfig, Transport, WireApi};
use super::websocket::responses_ws;

/// Largest request body (HTTP) or WebSocket message the server accepts, in bytes (64 MiB);
/// long conversations resend their whole history every turn.
pub(super) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long [`ModelServer::shutdown`] waits for open connections to finish before it aborts them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Error code for an unknown `previous_response_id`. Over WebSocket the runtime recovers from it
/// by reconnecting and resending the whole conversation without `previous_response_id`.
pub(super) const PREVIOUS_NOT_FOUND: &str = "previous_response_not_found";

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

pub(super) struct Shared {
    pub(super) config: ServerConfig,
    base_url: String,
    log: Mutex<Vec<ReceivedRequest>>,
    model_log: Mutex<Vec<ModelRequest>>,
    /// Response id -> the full conversation of that response as Responses API items (input
    /// items of every turn so far plus the response's output items).
    conversations: Mutex<HashMap<String, Vec<Value>>>,
    next_call: AtomicU64,
    next_id: AtomicU64,
    shutdown: watch::Receiver<bool>,
    /// Connections closed with a TCP reset so far.
    resets: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ModelServer {
    /// Binds `127.0.0.1` on a port the OS chooses and starts serving in a background task.
    /// Must be called inside a Tokio runtime. Fails only when the socket cannot be bound.
    pub async fn start(config: ServerConfig) -> std::io::Result<ModelServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let resets = Arc::new(AtomicUsize::new(0));
        let first_call_id = config.first_call_id;
        let shared = Arc::new(Shared {
            config,
            base_url: format!("http://{addr}"),
            log: Mutex::new(Vec::new()),
            model_log: Mutex::new(Vec::new()),
            conversations: Mutex::new(HashMap::new()),
            next_call: AtomicU64::new(first_call_id),
            next_id: AtomicU64::new(1),
            shutdown: shutdown_rx.clone(),
            resets: resets.clone(),
        });
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
        self.shared.base_url.clone()
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
        lock(&self.shared.log).clone()
    }

    /// The model-turn requests passed to the responder so far, in arrival order.
    pub fn model_requests(&self) -> Vec<ModelRequest> {
        lock(&self.shared.model_log).clone()
    }

    /// Connections the server has ended with a TCP reset (`RST`) so far: a
    /// [`Reply::Disconnect`] over HTTP, and a WebSocket connection after
    /// [`ServerConfig::reset_websocket_after_turns`]. Counted when the socket is closed.
    pub fn connections_reset(&self) -> usize {
        self.shared.resets.load(Ordering::SeqCst)
    }

    /// Requests answered `404` so far (paths the server does not serve), in arrival order.
    pub fn unknown_requests(&self) -> Vec<ReceivedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.status == 404)
            .collect()
    }

    /// Stops accepting connections, ends hanging replies (HTTP: `503`) and open WebSockets, and
    /// waits up to 5 seconds for open connections to close before aborting them.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown_tx.send(true);
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
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
// Request log
// ---------------------------------------------------------------------------------------------

pub(super) fn parse_body(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Some(value),
        Err(_) => Some(Value::String(String::from_utf8_lossy(bytes).into_owned())),
    }
}

/// Header pairs for the request log, credentials redacted.
pub(super) fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if matches!(
                name.as_str(),
                "authorization" | "cookie" | "proxy-authorization"
            ) {
                "<redacted>".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

pub(super) fn header_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl Shared {
    /// Appends a log entry (status 0 until answered) and returns its index.
    pub(super) fn record(
        &self,
        method: &str,
        uri: &Uri,
        transport: Transport,
        headers: Vec<(String, String)>,
        body: Option<Value>,
    ) -> usize {
        let mut log = lock(&self.log);
        log.push(ReceivedRequest {
            method: method.to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            transport,
            headers,
            body,
            status: 0,
        });
        log.len() - 1
    }

    pub(super) fn record_http(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &[u8],
    ) -> usize {
        self.record(
            method.as_str(),
            uri,
            Transport::Http,
            header_pairs(headers),
            parse_body(body),
        )
    }

    pub(super) fn set_status(&self, index: usize, status: u16) {
        if let Some(entry) = lock(&self.log).get_mut(index) {
            entry.status = status;
        }
    }

    /// Resolves when the server is shutting down.
    pub(super) async fn stopped(&self) {
        let mut rx = self.shutdown.clone();
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
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
            "api": shared.base_url,
            "proxy": shared.base_url,
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

// ---------------------------------------------------------------------------------------------
// Model turns
// ---------------------------------------------------------------------------------------------

impl Shared {
    /// Logs the model request, asks the responder, and issues ids for a successful turn.
    pub(super) async fn run_turn(&self, request: ModelRequest) -> Outcome {
        lock(&self.model_log).push(request.clone());
        match self.config.responder.respond(&request).await {
            Reply::Message(turn) => Outcome::Answer {
                calls: self.issue_calls(&turn, &request),
                n: self.next_id.fetch_add(1, Ordering::Relaxed),
                turn,
            },
            Reply::Error { status, message } => Outcome::Error {
                status,
                message,
                retry: false,
            },
            Reply::RetryableError { status, message } => Outcome::Error {
                status,
                message,
                retry: true,
            },
            Reply::Hang => Outcome::Hang,
            Reply::Disconnect => Outcome::Disconnect,
            Reply::Stall => Outcome::Stall,
            fault => Outcome::Fault(fault),
        }
    }

    /// Issues server-unique ids for the turn's tool calls. A call of a tool the request declares
    /// as freeform (`"type": "custom"`) is rendered as a custom tool call whose input is the
    /// scripted string (or the `input` member of a scripted object).
    fn issue_calls(&self, turn: &ScriptedTurn, request: &ModelRequest) -> Vec<IssuedCall> {
        let custom_tools = convert::custom_tool_names(request_tools_body(request));
        turn.tool_calls()
            .iter()
            .map(|call| {
                let n = self.next_call.fetch_add(1, Ordering::Relaxed);
                let custom = custom_tools.contains(&call.name);
                let arguments = match (&call.arguments, custom) {
                    (Value::String(s), _) => s.clone(),
                    (Value::Object(map), true)
                        if map.len() == 1 && map.get("input").is_some_and(Value::is_string) =>
                    {
                        map["input"].as_str().unwrap_or_default().to_owned()
                    }
                    (other, _) => other.to_string(),
                };
                IssuedCall {
                    id: format!("call_{n}"),
                    item_id: format!("{}_{n}", if custom { "ctc" } else { "fc" }),
                    name: call.name.clone(),
                    arguments,
                    custom,
                }
            })
            .collect()
    }

    /// Builds the normalised request of a Responses body (HTTP or WebSocket), reconstructing the
    /// conversation from `previous_response_id`. Returns the request and the full item list, or
    /// an error message when the previous response is unknown.
    pub(super) fn responses_request(
        &self,
        body: &Value,
        wire: WireApi,
        streaming: bool,
    ) -> Result<(ModelRequest, Vec<Value>), String> {
        let previous = body
            .get("previous_response_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut items = match &previous {
            Some(id) => match lock(&self.conversations).get(id) {
                Some(items) => items.clone(),
                None => {
                    return Err(format!(
                        "previous_response_id {id:?} is not a response this copilot-eval model server sent"
                    ));
                }
            },
            None => Vec::new(),
        };
        items.extend(convert::input_items(body));
        let instructions = body.get("instructions").and_then(Value::as_str);
        let request = ModelRequest {
            wire,
            streaming,
            model: string_member(body, "model"),
            messages: convert::responses_items_to_messages(instructions, &items),
            tool_names: convert::tool_names(body),
            previous_response_id: previous,
            initiator: None,
            interaction_type: None,
            body: body.clone(),
        };
        Ok((request, items))
    }

    pub(super) fn store_conversation(&self, id: &str, mut items: Vec<Value>, output: Vec<Value>) {
        items.extend(output);
        lock(&self.conversations).insert(id.to_owned(), items);
    }

    /// The render context of a successful turn: the model name echoed from the request (else the
    /// first catalog model) and ids `{id_prefix}{n}` / `msg_{n}`.
    pub(super) fn render_context<'a>(
        &self,
        request_model: Option<String>,
        turn: &'a ScriptedTurn,
        calls: Vec<IssuedCall>,
        n: u64,
        id_prefix: &str,
    ) -> TurnRender<'a> {
        TurnRender {
            turn,
            model: request_model.unwrap_or_else(|| self.config.models()[0].clone()),
            id: format!("{id_prefix}{n}"),
            message_item_id: format!("msg_{n}"),
            calls,
            created: now_secs(),
        }
    }
}

pub(super) fn string_member(body: &Value, name: &str) -> Option<String> {
    body.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// The object holding the request's `tools` (WebSocket messages may nest it under `response`).
fn request_tools_body(request: &ModelRequest) -> &Value {
    match request.body.get("response") {
        Some(inner) if inner.get("tools").is_some() => inner,
        _ => &request.body,
    }
}
