//! The one place core reads a runtime event by its JSON keys. Every other reader takes an event's
//! data through the pinned SDK's (`github-copilot-sdk` 1.0.28) generated type of its kind
//! ([`RawEvent::read`], [`RawEvent::typed_data`]); `tests/one_place.rs` ("the typed-event rule")
//! refuses a camelCase key elsewhere. What is read here, and why the SDK's type does not give it:
//!
//! | field | event | why it is read here |
//! |---|---|---|
//! | `toolTelemetry` | `tool.execution_complete` | the SDK types it as a `HashMap<String, Value>`, which loses the order the runtime wrote it in; the evidence keeps it as sent ([`tool_telemetry`]) |
//! | `toolTelemetry.properties.largeOutputWrittenToFile`, `largeOutputOriginalSizeBytes` | `tool.execution_complete` | inside the untyped telemetry; runtime 1.0.102 writes both as strings ([`cut_for_model`]) |
//! | `toolTelemetry.properties.wasNamelessToolCall` (or `toolTelemetry.wasNamelessToolCall`) | `tool.execution_complete` | inside the untyped telemetry ([`was_nameless`]) |
//! | `totalPremiumRequests` | `session.shutdown`, `session.usage_checkpoint` | the SDK declares the field `pub(crate)` in both data types: not readable outside the SDK ([`total_premium_requests`]) |
//! | `toolCallId`, `newModel`, `errorType` lacking | `tool.execution_start`, `tool.execution_complete`, `assistant.message` tool requests, `session.model_change`, `session.error` | required in the SDK's types, so the typed data cannot say the event lacked them; the mapper tells a lacking field from an empty one (a capture error names a call without id) ([`lacks_tool_call_id`], [`lacks_new_model`], [`lacks_error_type`]) |
//! | `toolCount` lacking | `session.mcp_server_tools_loaded` | required in the SDK's type: a lacking count must not read as 0 tools ([`lacks_tool_count`]) |
//! | `status` of an MCP server, when the SDK's `McpServerStatus` does not know it | `session.mcp_server_status_changed`, `session.mcp_servers_loaded` `servers[]` | the SDK's enum reads an unknown status as `Unknown`, losing the runtime's text, which the evidence keeps ([`mcp_status`], [`loaded_server`]) |
//! | `requestId`, `permissionRequest.toolCallId`, `permissionRequest.kind`; `requestId`, `result.kind`, `result.feedback` | `permission.requested`; `permission.completed` | the SDK types the request and the result as untagged unions (12 and 10 kinds) without a default: a kind it does not know, or a partial request, fails the whole read, where the evidence still records the request and its answer ([`permission_request`], [`permission_answer`]) |
//! | `toolRequests` of a refused `assistant.message` | `assistant.message` | the SDK's type refuses the whole message when one request lacks a required field; each request is then read on its own, so the others still count and the bad one is a capture error ([`assistant_message`]) |

use github_copilot_sdk::session_events::{
    AssistantMessageData, AssistantMessageToolRequest, McpServerStatus,
};
use serde_json::Value;

use super::events::{Read, read_value};
use super::{CutForModel, RawEvent};

/// Whether the event read as `Read<T>` lacked its `toolCallId` (required in the SDK's types).
pub(crate) fn lacks_tool_call_id<T>(read: &Read<T>) -> bool {
    read.lacks("toolCallId")
}

/// Whether a `session.model_change` lacked its `newModel` (required in the SDK's type).
pub(crate) fn lacks_new_model<T>(read: &Read<T>) -> bool {
    read.lacks("newModel")
}

/// Whether a `session.error` lacked its `errorType` (required in the SDK's type).
pub(crate) fn lacks_error_type<T>(read: &Read<T>) -> bool {
    read.lacks("errorType")
}

/// Whether a `session.mcp_server_tools_loaded` lacked its `toolCount` (required in the SDK's
/// type).
pub(crate) fn lacks_tool_count<T>(read: &Read<T>) -> bool {
    read.lacks("toolCount")
}

/// An MCP server's status as text: the runtime's name of a status the SDK's `McpServerStatus`
/// knows (`connected`, `pending`, ...); for one it does not know, the text as sent in `sent`
/// (the event's data, or its `servers[]` entry); `None` when `sent` has no status text.
pub(crate) fn mcp_status(status: &McpServerStatus, sent: &Value) -> Option<String> {
    let sent = sent.get("status").and_then(Value::as_str);
    match status {
        McpServerStatus::Unknown => sent.map(str::to_owned),
        known => serde_json::to_value(known)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned)),
    }
}

/// The `i`th entry of a `session.mcp_servers_loaded`'s `servers`, as sent (`null` when absent).
pub(crate) fn loaded_server(event: &RawEvent, i: usize) -> &Value {
    event
        .data
        .get("servers")
        .and_then(|s| s.get(i))
        .unwrap_or(&NULL)
}

/// The `null` [`loaded_server`] answers for an absent entry.
static NULL: Value = Value::Null;

/// A `permission.requested`: the request's id, the tool call it is for, and its kind (`write`,
/// `shell`, ..., `hook`; empty when not sent). `None` without a request id or tool call id.
pub(crate) struct PermissionRequest {
    /// `requestId`.
    pub(crate) id: String,
    /// `permissionRequest.toolCallId`.
    pub(crate) call: String,
    /// `permissionRequest.kind`.
    pub(crate) kind: String,
}

/// The request of a `permission.requested` event ([`PermissionRequest`]).
pub(crate) fn permission_request(event: &RawEvent) -> Option<PermissionRequest> {
    let data = &event.data;
    let request = &data["permissionRequest"];
    Some(PermissionRequest {
        id: text(&data["requestId"])?,
        call: text(&request["toolCallId"])?,
        kind: text(&request["kind"]).unwrap_or_default(),
    })
}

/// The answer of a `permission.completed` event: its request id, its result's kind and
/// feedback.
pub(crate) struct PermissionAnswer {
    /// `requestId`.
    pub(crate) id: String,
    /// `result.kind` (`approved`, `denied-interactively-by-user`, ...).
    pub(crate) outcome: Option<String>,
    /// `result.feedback`.
    pub(crate) feedback: Option<String>,
}

/// The answer of a `permission.completed` event ([`PermissionAnswer`]); `None` without a
/// request id.
pub(crate) fn permission_answer(event: &RawEvent) -> Option<PermissionAnswer> {
    let data = &event.data;
    Some(PermissionAnswer {
        id: text(&data["requestId"])?,
        outcome: text(&data["result"]["kind"]),
        feedback: text(&data["result"]["feedback"]),
    })
}

/// `value` as a text, when it is one.
fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// An `assistant.message` through the SDK's type, and its tool requests each through
/// `AssistantMessageToolRequest` (the message's `tool_requests` taken out): when the SDK's type
/// refuses the message (one request lacks a required field), the message without its requests
/// and each request are read on their own ([`RawEvent::read`]).
pub(crate) fn assistant_message(
    event: &RawEvent,
) -> (AssistantMessageData, Vec<Read<AssistantMessageToolRequest>>) {
    if let Some(mut message) = event.typed_data::<AssistantMessageData>() {
        let requests = message.tool_requests.take().unwrap_or_default();
        return (message, requests.into_iter().map(Read::whole).collect());
    }
    let requests = event
        .data
        .get("toolRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(read_value)
        .collect();
    let mut rest = event.data.clone();
    if let Some(fields) = rest.as_object_mut() {
        fields.remove("toolRequests");
    }
    (read_value::<AssistantMessageData>(&rest).data, requests)
}

/// `toolTelemetry` of a `tool.execution_complete`, as the runtime sent it, its keys in the
/// runtime's order (`None` when absent or `null`).
pub(crate) fn tool_telemetry(event: &RawEvent) -> Option<Value> {
    event
        .data
        .get("toolTelemetry")
        .filter(|v| !v.is_null())
        .cloned()
}

/// What a completion's telemetry says about a result cut for the model: its
/// `properties.largeOutputWrittenToFile` is `"true"` (or `true`) with
/// `largeOutputOriginalSizeBytes` (a number or a numeric string; runtime 1.0.102); `model_text`
/// is what the model saw instead.
pub(crate) fn cut_for_model(telemetry: &Value, model_text: Option<&str>) -> Option<CutForModel> {
    let properties = telemetry.get("properties")?;
    let flag = properties.get("largeOutputWrittenToFile")?;
    if flag.as_str() != Some("true") && flag.as_bool() != Some(true) {
        return None;
    }
    let size = properties.get("largeOutputOriginalSizeBytes")?;
    let full_bytes = size
        .as_u64()
        .or_else(|| size.as_str().and_then(|s| s.trim().parse().ok()))?;
    Some(CutForModel {
        full_bytes,
        model_bytes: model_text.map_or(0, |t| t.len() as u64),
    })
}

/// Whether a completion's telemetry says the model sent the call without a name: its
/// `wasNamelessToolCall` (under `properties`, or at the top) is true, a string or a boolean.
pub(crate) fn was_nameless(telemetry: &Value) -> bool {
    let flag = telemetry
        .get("properties")
        .and_then(|p| p.get("wasNamelessToolCall"))
        .or_else(|| telemetry.get("wasNamelessToolCall"));
    matches!(flag, Some(Value::Bool(true))) || flag.and_then(Value::as_str) == Some("true")
}

/// `totalPremiumRequests` of a `session.shutdown` or `session.usage_checkpoint`.
pub(crate) fn total_premium_requests(event: &RawEvent) -> Option<f64> {
    event
        .data
        .get("totalPremiumRequests")
        .and_then(Value::as_f64)
}
