//! How a model request travels, classified once and shared by everything that reads it: the
//! request audit ([`crate::run::proxy::audit`]), the run's request proxy and the cassette's tap
//! ([`crate::run::ExchangeTap`]), and the loopback model server ([`crate::model_server`]).
//!
//! - [`Api`]: the request's schema, OpenAI Chat Completions or Responses;
//! - [`Transport`]: an HTTP request, or one message on a WebSocket;
//! - [`WireApi`]: the wire format a model catalog advertises, which decides both;
//! - [`Route`]: what an HTTP request of the runtime is, from its method and path (the model
//!   catalog, a model request of an API, or anything else);
//! - [`Role`]: who wrote a chat message of a request (`system`, `user`, `assistant`, `tool`).
//!
//! A leaf: it imports no other module of the crate.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API schema of a model request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// OpenAI Chat Completions (`messages`; `POST …/chat/completions`).
    ChatCompletions,
    /// OpenAI Responses (`input`; `POST …/responses`, or a `response.create` WebSocket message).
    Responses,
}

/// How a request travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// An HTTP request (a plain JSON or an SSE answer; for the model server also the
    /// `GET /responses` WebSocket upgrade request itself). Written `http`.
    Http,
    /// One text message on an open WebSocket connection. Written `web_socket`.
    WebSocket,
}

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

    /// The format of a request of `api` that arrived over `transport`: a Responses request on a
    /// WebSocket is [`WireApi::WebSocketResponses`]; Chat Completions has no WebSocket form, so
    /// it is [`WireApi::ChatCompletions`] whatever the transport.
    pub fn of(api: Api, transport: Transport) -> Self {
        match (api, transport) {
            (Api::ChatCompletions, _) => WireApi::ChatCompletions,
            (Api::Responses, Transport::Http) => WireApi::Responses,
            (Api::Responses, Transport::WebSocket) => WireApi::WebSocketResponses,
        }
    }

    /// The API of this format's requests.
    pub fn api(self) -> Api {
        match self {
            WireApi::ChatCompletions => Api::ChatCompletions,
            WireApi::Responses | WireApi::WebSocketResponses => Api::Responses,
        }
    }

    /// How this format's model turns travel.
    pub fn transport(self) -> Transport {
        match self {
            WireApi::ChatCompletions | WireApi::Responses => Transport::Http,
            WireApi::WebSocketResponses => Transport::WebSocket,
        }
    }
}

/// What one HTTP request of the runtime is ([`Route::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET …/models`: the model catalog.
    Catalog,
    /// `POST …/chat/completions` or `POST …/responses`: a model request of this API.
    Model(Api),
    /// Anything else (another method or path).
    Other,
}

impl Route {
    /// Classify a request by its `method` (any case) and URL `path` (without the query; a
    /// trailing `/` is ignored).
    pub fn of(method: &str, path: &str) -> Self {
        let path = path.trim_end_matches('/');
        if method.eq_ignore_ascii_case("GET") && path.ends_with("/models") {
            Route::Catalog
        } else if !method.eq_ignore_ascii_case("POST") {
            Route::Other
        } else if path.ends_with("/chat/completions") {
            Route::Model(Api::ChatCompletions)
        } else if path.ends_with("/responses") {
            Route::Model(Api::Responses)
        } else {
            Route::Other
        }
    }
}

/// The interaction type a WebSocket `response.create` message declares: the
/// `x-interaction-type` entry (any case) of its `headers` member, which the runtime sends with a
/// connection's first message.
pub fn declared_interaction_type(message: &serde_json::Value) -> Option<String> {
    message
        .get("headers")?
        .as_object()?
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("x-interaction-type"))?
        .1
        .as_str()
        .map(str::to_owned)
}

/// Who wrote a chat message: the roles a cassette holds (written in lower case, as in Chat
/// Completions), and the roles a replay diagnosis names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt (normally `${system}`).
    System,
    /// A user message: the prompt, or context the runtime adds as a user message (skills).
    User,
    /// A model reply: text and/or tool calls.
    Assistant,
    /// A tool result, answering the tool call `tool_call_id`.
    Tool,
}

impl Role {
    /// The role as written in cassettes and in Chat Completions: `system`, `user`, `assistant`,
    /// `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role a Chat Completions message names (`"system"`, ...); `None` for any other text
    /// (`developer`, ...), which no cassette holds.
    pub fn from_name(name: &str) -> Option<Role> {
        Some(match name {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_formats() {
        assert_eq!(Route::of("GET", "/models/"), Route::Catalog);
        assert_eq!(Route::of("get", "/v1/models"), Route::Catalog);
        assert_eq!(Route::of("GET", "/copilot_internal/user"), Route::Other);
        assert_eq!(Route::of("GET", "/responses"), Route::Other);
        assert_eq!(
            Route::of("POST", "/chat/completions"),
            Route::Model(Api::ChatCompletions)
        );
        assert_eq!(
            Route::of("post", "/v1/responses/"),
            Route::Model(Api::Responses)
        );
        assert_eq!(Route::of("POST", "/v1/messages"), Route::Other);
        assert_eq!(Route::of("PUT", "/responses"), Route::Other);
        for wire in [
            WireApi::ChatCompletions,
            WireApi::Responses,
            WireApi::WebSocketResponses,
        ] {
            assert_eq!(WireApi::of(wire.api(), wire.transport()), wire);
        }
        assert_eq!(
            serde_json::to_value([Transport::Http, Transport::WebSocket]).unwrap(),
            serde_json::json!(["http", "web_socket"])
        );
        assert_eq!(
            serde_json::to_value([Api::ChatCompletions, Api::Responses]).unwrap(),
            serde_json::json!(["chat_completions", "responses"])
        );
    }
}
