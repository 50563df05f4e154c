//! The state every handler of the server shares: the configuration, the request log, the
//! conversation store (`previous_response_id`), the id counters and the model-turn dispatch to
//! the responder; and what each handler uses to read a request (its body, its headers).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, Method, Uri};
use serde_json::Value;
use tokio::sync::watch;

use super::convert;
use super::render::{IssuedCall, TurnRender};
use super::script::{Reply, ScriptedTurn};
use super::types::{ModelRequest, Outcome, ReceivedRequest, ServerConfig, Transport, WireApi};

/// Largest request body (HTTP) or WebSocket message the server accepts, in bytes (64 MiB);
/// long conversations resend their whole history every turn.
pub(super) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Error code for an unknown `previous_response_id`. Over WebSocket the runtime recovers from it
/// by reconnecting and resending the whole conversation without `previous_response_id`.
pub(super) const PREVIOUS_NOT_FOUND: &str = "previous_response_not_found";

/// The state every handler shares (behind an `Arc`, axum's router state).
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

impl Shared {
    /// The state of a server serving `base_url`, told to stop through `shutdown`, counting the
    /// connections it resets in `resets`.
    pub(super) fn new(
        config: ServerConfig,
        base_url: String,
        shutdown: watch::Receiver<bool>,
        resets: Arc<AtomicUsize>,
    ) -> Shared {
        let first_call_id = config.first_call_id;
        Shared {
            config,
            base_url,
            log: Mutex::new(Vec::new()),
            model_log: Mutex::new(Vec::new()),
            conversations: Mutex::new(HashMap::new()),
            next_call: AtomicU64::new(first_call_id),
            next_id: AtomicU64::new(1),
            shutdown,
            resets,
        }
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Every request received so far, in arrival order.
    pub(super) fn requests(&self) -> Vec<ReceivedRequest> {
        lock(&self.log).clone()
    }

    /// The model-turn requests passed to the responder so far, in arrival order.
    pub(super) fn model_requests(&self) -> Vec<ModelRequest> {
        lock(&self.model_log).clone()
    }

    /// Connections closed with a TCP reset so far.
    pub(super) fn resets(&self) -> usize {
        self.resets.load(Ordering::SeqCst)
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
