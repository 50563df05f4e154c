//! The request audit's record: what actually went on the wire for one model request
//! ([`RequestAudit`]), as the run's request proxy (`run::proxy::audit`) inspected it. Stored in
//! the result (`request_audit`, written `audit` in the run record).
//!
//! What a record holds, per request: the runtime's request id, the transport, the API (Chat
//! Completions or Responses), the model, the advertised tool names, the reasoning effort, the
//! image count and each image part's `detail` as sent, the SHA-256 of the instructions, whether
//! it is a continuation (`previous_response_id`), and the agent that sent it (main agent or a
//! subagent, from the proxy's request context). It never holds message text, image bytes,
//! credentials, URLs or headers.
//!
//! The instructions hash is the lowercase hex SHA-256 of the UTF-8 text made of, in order:
//! - Responses: the `instructions` string, then the text of every `input` item whose role is
//!   `system` or `developer`;
//! - Chat Completions: the text of every message whose role is `system` or `developer`;
//!
//! where a message's text is its string `content`, or the `text` of its text parts concatenated
//! without separator, and the pieces are joined with `"\n\n"`. No instructions at all: `None`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::wire::{Api, Transport};

/// One audited model request. Holds no message text, image bytes, credentials, URLs or headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestAudit {
    /// The runtime's request id (from the seam's request context).
    pub request_id: String,
    /// HTTP or WebSocket (`http`, `web_socket`).
    pub transport: Transport,
    /// Chat Completions or Responses (`chat_completions`, `responses`).
    pub api: Api,
    /// The `model` field sent.
    pub model: String,
    /// The advertised tool names, in request order (function/custom tools by name, built-in
    /// provider tools by `type`).
    pub tools: Vec<String>,
    /// `reasoning_effort` (Chat Completions) or `reasoning.effort` (Responses), when sent.
    pub reasoning_effort: Option<String>,
    /// How many image parts the request carries.
    pub image_count: usize,
    /// Each image part's `detail` as sent (after any rewrite), in order; `None` when absent.
    pub image_details: Vec<Option<String>>,
    /// SHA-256 (lowercase hex) of the instructions, as defined in the module docs.
    pub instructions_sha256: Option<String>,
    /// Whether the request continues an earlier response (`previous_response_id`).
    pub continuation: bool,
    /// Whether a subagent sent it (the request context names a parent agent, or the interaction
    /// type is `conversation-subagent`); `false` for the main agent.
    pub subagent: bool,
    /// The runtime's id of the agent instance that sent it (the main agent has one too).
    pub agent_id: Option<String>,
    /// The parent agent's id for a subagent request.
    pub parent_agent_id: Option<String>,
    /// The interaction type the request declares: its `X-Interaction-Type` header (HTTP) or
    /// its `headers` member (WebSocket, sent with a connection's first message), e.g.
    /// `conversation-user` for the request that answers a prompt and `conversation-agent` for
    /// one that goes on after tool results; else the SDK request context's
    /// (`conversation-agent`, `conversation-subagent`), which runtime 1.0.102 gives every main
    /// request alike.
    pub interaction_type: Option<String>,
}
