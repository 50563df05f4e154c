//! One tool call of a run as the JSON report keeps it (`tests[].runs[].tool_calls[]`), from the
//! evidence's [`ToolCall`](crate::evidence::ToolCall). Its denial is the evidence's own
//! [`Denial`], not a copy of its fields: what a denial records reaches the JSON as it is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::Denial;

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRecord {
    /// The tool call id.
    pub id: String,
    /// The tool's name as the model called it (MCP tools are `server-tool`; empty when the
    /// model sent no name).
    pub name: String,
    /// The name the runtime used instead, when it substituted one: `invalid_tool_call` for a
    /// nameless call, or the 64-character name it gave an MCP tool the model called by its
    /// full name (see the stop reason `runtime_substitution`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_name: Option<String>,
    /// Arguments as JSON.
    pub arguments: Value,
    /// The result text given back to the model.
    pub result: Option<String>,
    /// Whether the call succeeded; `None` when no completion was seen.
    pub success: Option<bool>,
    /// The error of a failed call.
    pub error: Option<String>,
    /// `None` for the main agent, else the subagent's id.
    pub agent_id: Option<String>,
    /// Start to completion, milliseconds.
    pub duration_ms: Option<u64>,
    /// Whether a completion was seen.
    pub completed: bool,
    /// Why the call was denied, when it was: the evidence's own [`Denial`], written as its
    /// fields ([`denial::fields`](crate::evidence::denial::fields): `denied`, the reason).
    #[serde(flatten, with = "crate::evidence::denial::fields")]
    #[schemars(with = "crate::evidence::denial::fields::DenialFields")]
    pub denied: Option<Denial>,
    /// The permission request the runtime made for the call and who answered it.
    #[serde(default)]
    pub permission: Option<PermissionRecord>,
    /// Bytes of the result the tool returned, when the model saw only a pointer and a preview
    /// (the runtime saved the result to a temporary file); absent when the model saw it whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_for_model_full_bytes: Option<u64>,
    /// The structured content the tool returned beside its text, JSON as the tool gave it
    /// (`result.structuredContent` of `tool.execution_complete`: an MCP tool's
    /// `structuredContent`); absent when it returned none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

/// A permission request for one tool call and its answer (see `ToolCall::permission`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRecord {
    /// The request's kind (`write`, `shell`, `custom-tool`, `hook` for a guard's `ask`, ...).
    pub kind: String,
    /// Who answered: `permission_handler` or `auto_confirm`.
    pub by: String,
    /// The answer's kind as the runtime reported it (`approved`, ...).
    pub outcome: Option<String>,
    /// Whether the call was approved.
    pub approved: bool,
    /// A rejecting handler's feedback.
    pub feedback: Option<String>,
}
