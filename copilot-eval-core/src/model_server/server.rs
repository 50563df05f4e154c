//! The running server: configuration, routes, request log, conversation store.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::convert;
use super::render::{self, IssuedCall, TurnRender};
use super::script::{Reply, Responder, ScriptedTurn};

/// Id of the single catalog model a [`ServerConfig`] advertises when no model was added.
pub const DEFAULT_MODEL: &str = "copilot-eval-test";

/// Largest request body (HTTP) or WebSocket message the server accepts, in bytes (64 MiB);
/// long conversations resend their whole history every turn.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long [`ModelServer::shutdown`] waits for open connections to finish before it aborts them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Response header (and WebSocket error-event `headers` member) the runtime honours to decide
/// whether to retry a failed model call.
const SHOULD_RETRY: &str = "x-should-retry";

/// Error code for an unknown `previous_response_id`. Over WebSocket the runtime recovers from it
/// by reconnecting and resending the whole conversation without `previous_response_id`.
const PREVIOUS_NOT_FOUND: &str = "previous_response_not_found";

/// Port 9 (discard) on loopback: nothing listens there, so telemetry uploads fail fast.
const TELEMETRY_URL: &str = "http://127.0.0.1:9/telemetry";

/// The wire format the catalog advertises for its models, which decides how the runtime sends
/// model turns.
///
/// The runtime picks the format from the catalog entry's `supported_endpoints` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WireApi {
    /// No `supported_endpoints`: the runtime sends `POST /chat/completions`, answered as a plain
    /// JSON `chat.completion` or, when the request has `"stream": true` (sessions with streaming
    /// on), as SSE chunks.
    #[default]
    ChatCompletions,
    /// `supported_endpoints: ["/responses"]`: the runtime sends `POST /responses`. Streaming
    /// sessions send `"stream": true` and read Responses API events over SSE; other sessions
    /// send no `stream` field and read the final `response` object as JSON.
    Responses,
    /// `supported_endpoints: ["/responses", "ws:/responses"]`: the runtime opens a WebSocket at
    /// `GET /responses` and sends one `{"type":"response.create", ...}` text message per turn.
    WebSocketResponses,
}

impl WireApi {
    /// The catalog's `supported_endpoints` value for this format (`None`: field left out).
    pub fn supported_endpoints(self) -> Option<Vec<&'static str>> {
        match self {
            WireApi::ChatCompletions => None,
            WireApi::Responses => Some(vec!["/responses"]),
            WireApi::WebSocketResponses => Some(vec!["/responses", "ws:/responses"]),
        }
    }
}

/// How a request reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// An HTTP request (including the `GET /responses` WebSocket upgrade request itself).
    Http,
    /// One text message received on an open WebSocket connection.
    WebSocket,
}

/// One request the server received, as recorded in [`ModelServer::requests`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    /// HTTP method (`GET`, `POST`, ...). WebSocket messages are recorded with the method `WS`.
    pub method: String,
    /// Request path without the query string, e.g. `/copilot_internal/managed_settings`. For
    /// WebSocket messages: the path of the upgrade request (`/responses`).
    pub path: String,
    /// Query string without the `?`, when the request had one.
    pub query: Option<String>,
    /// Whether this was an HTTP request or a WebSocket message.
    pub transport: Transport,
    /// HTTP request headers as `(lower-case name, value)` pairs in the order received, with the
    /// values of `authorization`, `cookie` and `proxy-authorization` replaced by `<redacted>`.
    /// For WebSocket messages: the headers of the upgrade request.
    pub headers: Vec<(String, String)>,
    /// The request body: parsed JSON when it parses, else the text as a JSON string; `None` for
    /// an empty body.
    pub body: Option<Value>,
    /// Status the server answered with: the HTTP status (`101` for a WebSocket upgrade); for a
    /// WebSocket message `200` for a completed response, else the status of the error event.
    /// `0` means no answer was sent (yet): a [`Reply::Hang`], or a request still being handled.
    pub status: u16,
}

impl ReceivedRequest {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One model-turn request, normalised across wire formats, as recorded in
/// [`ModelServer::model_requests`] and handed to the [`Responder`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The wire format the request arrived in. A session whose catalog says
    /// [`WireApi::WebSocketResponses`] can fall back to [`WireApi::Responses`] over HTTP after a
    /// WebSocket failure; this field says what actually arrived.
    pub wire: WireApi,
    /// Whether the answer is streamed: the body's `"stream": true` over HTTP; always `true` for
    /// WebSocket turns.
    pub streaming: bool,
    /// The `model` field of the request.
    pub model: Option<String>,
    /// The full conversation in Chat Completions message shape (`{role, content, tool_calls?,
    /// tool_call_id?}`). Chat Completions: the request's `messages` as sent. Responses: the
    /// `instructions` as a leading `system` message, then the input items converted (function
    /// and custom tool calls become assistant `tool_calls`, their outputs become `tool`
    /// messages). With a `previous_response_id`, the stored conversation of that response comes
    /// first, so this is always the whole conversation.
    pub messages: Vec<Value>,
    /// Names of the tools the request offers the model, in request order (function tools and
    /// freeform `custom` tools such as the built-in `apply_patch`).
    pub tool_names: Vec<String>,
    /// `previous_response_id` of a Responses request (WebSocket continuations carry one).
    pub previous_response_id: Option<String>,
    /// Who started the call, from the `X-Initiator` header or the WebSocket message's
    /// `initiator` member: `user` for the first call after a user message, `agent` for calls
    /// that continue after tool results.
    pub initiator: Option<String>,
    /// The interaction type, from the `X-Interaction-Type` header (HTTP) or the message's
    /// `headers` member (WebSocket, first turn of a connection only), e.g. `conversation-user`
    /// or `conversation-subagent`.
    pub interaction_type: Option<String>,
    /// The request body exactly as received (for WebSocket: the parsed text message).
    pub body: Value,
}

impl ModelRequest {
    /// The text of the last `user` message, if it has text (string content or text parts,
    /// joined with newlines). The runtime prefixes the prompt with a `<current_datetime>` tag.
    pub fn last_user_text(&self) -> Option<String> {
        let message = self
            .messages
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
        match message.get("content")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        }
    }

    /// Whether the request offers a tool named `name`.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tool_names.iter().any(|t| t == name)
    }

    /// The `tool` messages of the conversation (tool results), in order.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .collect()
    }
}

/// Configuration of a [`ModelServer`] (builder).
#[derive(Clone)]
pub struct ServerConfig {
    responder: Arc<dyn Responder>,
    wire_api: WireApi,
    models: Vec<String>,
    login: String,
    vision: bool,
    refuse_websocket: bool,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("wire_api", &self.wire_api)
            .field("models", &self.models())
            .field("login", &self.login)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// A configuration answering model turns with `responder`, advertising the Chat
    /// Completions format and the single model [`DEFAULT_MODEL`].
    pub fn new(responder: Arc<dyn Responder>) -> Self {
        Self {
            responder,
            wire_api: WireApi::default(),
            models: Vec::new(),
            login: "copilot-eval".to_owned(),
            vision: false,
            refuse_websocket: false,
        }
    }

    /// Advertise vision support for every catalog model (default off). With it on, the runtime
    /// sends images (e.g. image tool results) to the model as image parts.
    pub fn vision(mut self, vision: bool) -> Self {
        self.vision = vision;
        self
    }

    /// Refuse every WebSocket upgrade with `503` (the model requests of a WebSocket catalog then
    /// meet an upstream that refuses the connection).
    pub fn refuse_websocket(mut self) -> Self {
        self.refuse_websocket = true;
        self
    }

    /// Sets the wire format every catalog model advertises.
    pub fn wire_api(mut self, wire_api: WireApi) -> Self {
        self.wire_api = wire_api;
        self
    }

    /// Adds a model id to the catalog (`GET /models`), in order. The first call replaces the
    /// default model [`DEFAULT_MODEL`]; the session must ask for one of these ids.
    pub fn model(mut self, id: impl Into<String>) -> Self {
        self.models.push(id.into());
        self
    }

    /// Sets the `login` the user endpoint reports (default `copilot-eval`).
    pub fn login(mut self, login: impl Into<String>) -> Self {
        self.login = login.into();
        self
    }

    /// The catalog's model ids, in order.
    pub fn models(&self) -> Vec<String> {
        if self.models.is_empty() {
            vec![DEFAULT_MODEL.to_owned()]
        } else {
            self.models.clone()
        }
    }

    /// The configured wire format.
    pub fn wire(&self) -> WireApi {
        self.wire_api
    }
}

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

struct Shared {
    config: ServerConfig,
    base_url: String,
    log: Mutex<Vec<ReceivedRequest>>,
    model_log: Mutex<Vec<ModelRequest>>,
    /// Response id -> the full conversation of that response as Responses API items (input
    /// items of every turn so far plus the response's output items).
    conversations: Mutex<HashMap<String, Vec<Value>>>,
    next_call: AtomicU64,
    next_id: AtomicU64,
    shutdown: watch::Receiver<bool>,
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
        let shared = Arc::new(Shared {
            config,
            base_url: format!("http://{addr}"),
            log: Mutex::new(Vec::new()),
            model_log: Mutex::new(Vec::new()),
            conversations: Mutex::new(HashMap::new()),
            next_call: AtomicU64::new(1),
            next_id: AtomicU64::new(1),
            shutdown: shutdown_rx.clone(),
        });
        let app = Router::new()
            .route("/copilot_internal/user", get(user))
            .route("/models", get(models))
            .route("/chat/completions", post(chat_completions))
            .route("/responses", post(responses_http).get(responses_ws))
            .fallback(not_found)
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(shared.clone());
        // A turn is many small SSE / WebSocket writes: without TCP_NODELAY, Nagle's algorithm
        // and delayed ACKs add about 40 ms to every WebSocket turn.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
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

fn parse_body(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Some(value),
        Err(_) => Some(Value::String(String::from_utf8_lossy(bytes).into_owned())),
    }
}

/// Header pairs for the request log, credentials redacted.
fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
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

fn header_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl Shared {
    /// Appends a log entry (status 0 until answered) and returns its index.
    fn record(
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

    fn record_http(&self, method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> usize {
        self.record(
            method.as_str(),
            uri,
            Transport::Http,
            header_pairs(headers),
            parse_body(body),
        )
    }

    fn set_status(&self, index: usize, status: u16) {
        if let Some(entry) = lock(&self.log).get_mut(index) {
            entry.status = status;
        }
    }

    /// Resolves when the server is shutting down.
    async fn stopped(&self) {
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

fn json_response(status: u16, value: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        value.to_string(),
    )
        .into_response()
}

/// An error answer; `retry: false` adds `x-should-retry: false` so the runtime does not retry.
fn error_response(status: u16, message: &str, retry: bool) -> Response {
    let mut response = json_response(status, &render::error_body(status, message));
    if !retry {
        response.headers_mut().insert(
            HeaderName::from_static(SHOULD_RETRY),
            HeaderValue::from_static("false"),
        );
    }
    response
}

fn sse_response(body: String) -> Response {
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from(body),
    )
        .into_response()
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

/// What the server answers one model request with, before wire rendering.
enum Outcome {
    /// A successful turn with the ids the server issued for it.
    Answer {
        turn: ScriptedTurn,
        calls: Vec<IssuedCall>,
        /// Counter shared by the response id and the message item id.
        n: u64,
    },
    Error {
        status: u16,
        message: String,
        retry: bool,
    },
    Hang,
    Disconnect,
    Stall,
}

impl Shared {
    /// Logs the model request, asks the responder, and issues ids for a successful turn.
    async fn run_turn(&self, request: ModelRequest) -> Outcome {
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
    fn responses_request(
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

    fn store_conversation(&self, id: &str, mut items: Vec<Value>, output: Vec<Value>) {
        items.extend(output);
        lock(&self.conversations).insert(id.to_owned(), items);
    }

    /// The render context of a successful turn: the model name echoed from the request (else the
    /// first catalog model) and ids `{id_prefix}{n}` / `msg_{n}`.
    fn render_context<'a>(
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

fn string_member(body: &Value, name: &str) -> Option<String> {
    body.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// The object holding the request's `tools` (WebSocket messages may nest it under `response`).
fn request_tools_body(request: &ModelRequest) -> &Value {
    match request.body.get("response") {
        Some(inner) if inner.get("tools").is_some() => inner,
        _ => &request.body,
    }
}

/// Waits for shutdown, then answers 503 (the runtime normally gave up long before).
async fn hang(shared: &Shared) -> Response {
    shared.stopped().await;
    error_response(503, "copilot-eval model server shut down", false)
}

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = shared.record_http(&method, &uri, &headers, &body);
    let Some(body @ Value::Object(_)) = parse_body(&body) else {
        shared.set_status(index, 400);
        return error_response(400, "request body is not a JSON object", false);
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let request = ModelRequest {
        wire: WireApi::ChatCompletions,
        streaming,
        model: string_member(&body, "model"),
        messages: body
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        tool_names: convert::tool_names(&body),
        previous_response_id: None,
        initiator: header_value(&headers, "x-initiator"),
        interaction_type: header_value(&headers, "x-interaction-type"),
        body: body.clone(),
    };
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, "chatcmpl-");
            shared.set_status(index, 200);
            if streaming {
                let text: String = render::chat_completion_chunks(&render)
                    .iter()
                    .map(|chunk| render::sse_frame(None, chunk))
                    .collect();
                sse_response(text)
            } else {
                json_response(200, &render::chat_completion_json(&render))
            }
        }
        Outcome::Error {
            status,
            message,
            retry,
        } => {
            shared.set_status(index, status);
            error_response(status, &message, retry)
        }
        Outcome::Hang => hang(&shared).await,
        Outcome::Disconnect => cut_response(),
        Outcome::Stall => stalled_response(shared.clone()),
    }
}

/// Internal marker among a WebSocket turn's events: send the events before it, then stall.
const STALL_MARKER: &str = "copilot-eval.stall";

/// A `200` SSE response that sends its first bytes, then nothing until the server shuts down.
fn stalled_response(shared: Arc<Shared>) -> Response {
    let first = futures::stream::once(async {
        Ok::<Bytes, std::io::Error>(Bytes::from_static(b": copilot-eval stalled stream\n\n"))
    });
    let rest = futures::stream::once(async move {
        shared.stopped().await;
        Err::<Bytes, std::io::Error>(std::io::Error::other("copilot-eval model server shut down"))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(futures::StreamExt::chain(
            first, rest,
        )))
        .expect("a static response builds")
}

/// A `200` whose body breaks off after its first bytes: the connection is cut mid-response.
fn cut_response() -> Response {
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(b"data: {\"id\":\"cut\"")),
        Err(std::io::Error::other(
            "copilot-eval model server cut the response",
        )),
    ];
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(futures::stream::iter(chunks)))
        .expect("a static response builds")
}

async fn responses_http(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = shared.record_http(&method, &uri, &headers, &body);
    let Some(body @ Value::Object(_)) = parse_body(&body) else {
        shared.set_status(index, 400);
        return error_response(400, "request body is not a JSON object", false);
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let (mut request, items) = match shared.responses_request(&body, WireApi::Responses, streaming)
    {
        Ok(found) => found,
        Err(message) => {
            shared.set_status(index, 400);
            let mut body = render::error_body(400, &message);
            body["error"]["code"] = json!(PREVIOUS_NOT_FOUND);
            return json_response(400, &body);
        }
    };
    request.initiator = header_value(&headers, "x-initiator");
    request.interaction_type = header_value(&headers, "x-interaction-type");
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, "resp_");
            shared.store_conversation(&render.id, items, render::responses_output_items(&render));
            shared.set_status(index, 200);
            if streaming {
                let text: String = render::responses_events(&render)
                    .iter()
                    .map(|event| {
                        let kind = event.get("type").and_then(Value::as_str);
                        render::sse_frame(kind, &event.to_string())
                    })
                    .collect();
                sse_response(text)
            } else {
                json_response(200, &render::responses_final_object(&render))
            }
        }
        Outcome::Error {
            status,
            message,
            retry,
        } => {
            shared.set_status(index, status);
            error_response(status, &message, retry)
        }
        Outcome::Hang => hang(&shared).await,
        Outcome::Disconnect => cut_response(),
        Outcome::Stall => stalled_response(shared.clone()),
    }
}

async fn responses_ws(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let pairs = header_pairs(&headers);
    let index = shared.record(method.as_str(), &uri, Transport::Http, pairs.clone(), None);
    if shared.config.refuse_websocket {
        shared.set_status(index, 503);
        return error_response(
            503,
            "copilot-eval model server refuses WebSocket connections",
            false,
        );
    }
    match upgrade {
        Ok(upgrade) => {
            shared.set_status(index, 101);
            upgrade
                .max_message_size(MAX_BODY_BYTES)
                .on_upgrade(move |socket| websocket_session(shared, socket, uri, pairs))
        }
        Err(rejection) => {
            let response = rejection.into_response();
            shared.set_status(index, response.status().as_u16());
            response
        }
    }
}

/// Serves one WebSocket connection: each text message is one turn, answered in order.
async fn websocket_session(
    shared: Arc<Shared>,
    mut socket: WebSocket,
    uri: Uri,
    headers: Vec<(String, String)>,
) {
    loop {
        let message = tokio::select! {
            message = socket.recv() => message,
            () = shared.stopped() => break,
        };
        let text = match message {
            Some(Ok(Message::Text(text))) => text.to_string(),
            Some(Ok(Message::Binary(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
            Some(Ok(_)) => continue,
        };
        let parsed = parse_body(text.as_bytes());
        let index = shared.record(
            "WS",
            &uri,
            Transport::WebSocket,
            headers.clone(),
            parsed.clone(),
        );
        let events = tokio::select! {
            events = websocket_turn(&shared, parsed, index) => events,
            () = shared.stopped() => break,
        };
        let Some(events) = events else {
            // Disconnect: the first event, then drop the socket without a close frame.
            let created = json!({"type": "response.created", "response": {"id": "resp_cut", "object": "response", "status": "in_progress", "output": []}});
            let _ = socket.send(Message::Text(created.to_string().into())).await;
            return;
        };
        let stalls = events.iter().any(|e| e["type"] == STALL_MARKER);
        for event in events.into_iter().filter(|e| e["type"] != STALL_MARKER) {
            if socket
                .send(Message::Text(event.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        if stalls {
            // A stalled stream: nothing more until the server shuts down.
            shared.stopped().await;
            break;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

/// Handles one WebSocket message and returns the events to send back. Never returns for a
/// [`Reply::Hang`] (the caller's select on shutdown ends it).
async fn websocket_turn(
    shared: &Shared,
    parsed: Option<Value>,
    index: usize,
) -> Option<Vec<Value>> {
    let fail = |status: u16, message: &str, retry: bool| -> Option<Vec<Value>> {
        shared.set_status(index, status);
        Some(vec![render::websocket_error_event(status, message, retry)])
    };
    let Some(message @ Value::Object(_)) = parsed else {
        return fail(400, "WebSocket message is not a JSON object", false);
    };
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    if kind != "response.create" {
        let text =
            format!("unsupported WebSocket message type {kind:?} (expected \"response.create\")");
        return fail(400, &text, false);
    }
    // Accept both the flat form the runtime sends and a nested `response` object.
    let body = match message.get("response") {
        Some(inner @ Value::Object(_)) => inner,
        _ => &message,
    };
    let (mut request, items) =
        match shared.responses_request(body, WireApi::WebSocketResponses, true) {
            Ok(found) => found,
            Err(text) => {
                shared.set_status(index, 400);
                let mut event = render::websocket_error_event(400, &text, true);
                event["error"]["code"] = json!(PREVIOUS_NOT_FOUND);
                return Some(vec![event]);
            }
        };
    request.initiator = string_member(&message, "initiator");
    request.interaction_type = message
        .get("headers")
        .and_then(Value::as_object)
        .and_then(|h| {
            h.iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("x-interaction-type"))
        })
        .and_then(|(_, value)| value.as_str())
        .map(str::to_owned);
    request.body = message.clone();
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, "resp_");
            shared.store_conversation(&render.id, items, render::responses_output_items(&render));
            shared.set_status(index, 200);
            Some(render::responses_events(&render))
        }
        Outcome::Error {
            status,
            message,
            retry,
        } => fail(status, &message, retry),
        Outcome::Hang => std::future::pending().await,
        Outcome::Disconnect => None,
        Outcome::Stall => {
            shared.set_status(index, 200);
            Some(vec![
                json!({"type": "response.created", "response": {"id": "resp_stalled", "object": "response", "status": "in_progress", "output": []}}),
                json!({"type": STALL_MARKER}),
            ])
        }
    }
}
