//! The model server's types: the wire formats, the request records, the configuration, and the
//! outcome of a model turn before it is rendered.

use std::sync::Arc;

use serde_json::Value;

use super::render::IssuedCall;
use super::script::{Reply, Responder, ScriptedTurn};

/// Id of the single catalog model a [`ServerConfig`] advertises when no model was added.
pub const DEFAULT_MODEL: &str = "copilot-eval-test";

pub use crate::wire::{Transport, WireApi};

/// One request the server received, as recorded in [`ModelServer::requests`](super::ModelServer::requests).
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    /// HTTP method (`GET`, `POST`, ...). WebSocket messages are recorded with the method `WS`.
    pub method: String,
    /// Request path without the query string, e.g. `/copilot_internal/managed_settings`. For
    /// WebSocket messages: the path of the upgrade request (`/responses`).
    pub path: String,
    /// Query string without the `?`, when the request had one.
    pub query: Option<String>,
    /// Whether this was an HTTP request (the `GET /responses` WebSocket upgrade request
    /// included) or a WebSocket message.
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
    /// `0` means no answer was sent (yet): a [`Reply::Hang`](super::Reply::Hang), or a request still being handled.
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
/// [`ModelServer::model_requests`](super::ModelServer::model_requests) and handed to the [`Responder`].
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

    /// Whether a subagent (a custom agent the `task` tool dispatched) made this request: its
    /// interaction type is `conversation-subagent`.
    pub fn is_subagent(&self) -> bool {
        self.interaction_type.as_deref() == Some("conversation-subagent")
    }

    /// Whether `text` appears anywhere in the conversation the request carried (every message's
    /// content, tool calls and tool results, as JSON text; the system prompt included). Use it to
    /// check that something, such as a canary string, did or did not reach the model.
    pub fn mentions(&self, text: &str) -> bool {
        self.messages.iter().any(|m| {
            let mut found = false;
            visit_strings(m, &mut |s| found |= s.contains(text));
            found
        })
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

/// Calls `f` on every string inside `value` (object keys excluded).
fn visit_strings(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => map.values().for_each(|v| visit_strings(v, f)),
        _ => {}
    }
}

/// Configuration of a [`ModelServer`](super::ModelServer) (builder).
#[derive(Clone)]
pub struct ServerConfig {
    pub(super) responder: Arc<dyn Responder>,
    pub(super) wire_api: WireApi,
    models: Vec<String>,
    pub(super) login: String,
    pub(super) vision: bool,
    pub(super) refuse_websocket: bool,
    pub(super) reset_websocket_after: Option<usize>,
    pub(super) first_call_id: u64,
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
            reset_websocket_after: None,
            first_call_id: 1,
        }
    }

    /// Number the tool calls this server issues from `call_{first}` on (default `call_1`). A
    /// server answering a resumed session starts after the ids of the earlier sessions' calls,
    /// which the session carries as history, so that no id is issued twice in one
    /// conversation. `0` counts as 1.
    pub fn first_call_id(mut self, first: u64) -> Self {
        self.first_call_id = first.max(1);
        self
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

    /// End every WebSocket connection with a TCP reset (`RST`, no close frame) right after the
    /// last event of its `turns`-th answered turn (an upstream that goes away between two
    /// messages of the runtime). Unset: connections stay open.
    pub fn reset_websocket_after_turns(mut self, turns: usize) -> Self {
        self.reset_websocket_after = Some(turns);
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

/// What the server answers one model request with, before wire rendering.
pub(super) enum Outcome {
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
    /// A fault reply that each transport renders itself (`RateLimited`, `MalformedSse`,
    /// `KeepAliveStall`, `WebSocketClose`, `BinaryFrame`).
    Fault(Reply),
}
