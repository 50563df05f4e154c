//! The plain evidence data of a run: the raw events as received, and what they map to (turns,
//! tool calls, usage). Built by [`map_events`](super::map_events); stored in
//! [`CopilotResult`](crate::CopilotResult).

use github_copilot_sdk::session_events::SessionEventType;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Denial;

/// Who wrote a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The prompt (`user.message`).
    User,
    /// The model (`assistant.message`).
    Assistant,
}

/// One message of the root agent's conversation, in event order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Turn {
    /// Who wrote it.
    pub role: Role,
    /// The text (`data.content`); empty for an assistant message that only requests tools.
    pub content: String,
    /// Ids of the tool calls this assistant message requested (`data.toolRequests[].toolCallId`).
    pub tool_call_ids: Vec<String>,
}

/// One tool call, from `assistant.message` tool requests, `tool.execution_start` and
/// `tool.execution_complete`, correlated by tool call id.
///
/// This type is also the tool call of the JSON report, wherever it holds one (the run record's
/// `tool_calls[]` and each subagent invocation's `tool_calls[]`): its serde attributes give the
/// report's shape. In JSON, `runtime_name`, `cut_for_model` (written as
/// `cut_for_model_full_bytes`) and `structured_content` are absent when `None`; the denial is
/// written as `denied` and `denial_kind`; `telemetry` is not written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The tool call id (`toolCallId`).
    pub id: String,
    /// The tool's name as the model called it (MCP tools are `server-tool`); empty when the
    /// model sent the call without a name.
    pub name: String,
    /// The name the runtime used instead of `name`, when it substituted one: for a call the
    /// model sent with an empty name, `invalid_tool_call` (runtime 1.0.102 renames the call and
    /// answers "Tool name is missing or empty"); for a call of an MCP tool by its full
    /// `<server>-<tool>` name that the runtime had cut to 64 characters, the cut name it gave
    /// the model (the call failed "does not exist"). `None` when the runtime took the model's
    /// name. A failed call with a runtime name ends the run `runtime_substitution`. Absent from
    /// JSON when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_name: Option<String>,
    /// Arguments as JSON (a string argument payload is parsed; invalid JSON is kept as a string).
    pub arguments: Value,
    /// The result text given back to the model (`result.content`), when completed successfully.
    pub result: Option<String>,
    /// `success` of `tool.execution_complete`; `None` until a completion was seen.
    pub success: Option<bool>,
    /// The error message (and code) of a failed call (`error.message`, `error.code`).
    pub error: Option<String>,
    /// The agent that made the call: `None` for the main agent, else the subagent's `agentId`.
    pub agent_id: Option<String>,
    /// Milliseconds from `tool.execution_start` to `tool.execution_complete` (host clock),
    /// when both were seen.
    pub duration_ms: Option<u64>,
    /// Whether `tool.execution_complete` was seen for this call.
    pub completed: bool,
    /// Why the run's pre-tool-use hook denied this call (a caller guard, the budget, or the
    /// stop), matched to the call by tool name and arguments; `None` when it was not denied.
    /// Written as `denied` (the reason) in JSON ([`denial::fields`](super::denial::fields)).
    #[serde(flatten, with = "super::denial::fields")]
    #[schemars(with = "super::denial::fields::DenialFields")]
    pub denied: Option<Denial>,
    /// The permission request the runtime made for this call and who answered it; `None` when
    /// the runtime asked no permission (a pre-tool guard answered `allow` in an eval without
    /// a permission layer, or the call was denied before). See [`Permission`].
    #[serde(default)]
    pub permission: Option<Permission>,
    /// Set when the model did not see the whole result: the runtime saved it to a temporary
    /// file and gave the model a pointer and a preview instead (runtime 1.0.102 does this above
    /// 20 KB). From the completion's `toolTelemetry` (`largeOutputWrittenToFile`,
    /// `largeOutputOriginalSizeBytes`); `None` when the model saw the result whole.
    ///
    /// In JSON it is `cut_for_model_full_bytes`, the result's full size (absent when `None`):
    /// the model's bytes are the length of `result`, so a tool call read back from JSON has
    /// `model_bytes` 0.
    #[serde(
        default,
        rename = "cut_for_model_full_bytes",
        skip_serializing_if = "Option::is_none",
        with = "cut_bytes"
    )]
    #[schemars(with = "Option<u64>")]
    pub cut_for_model: Option<CutForModel>,
    /// The structured content the tool returned beside its text, JSON as the tool gave it
    /// (`result.structuredContent` of `tool.execution_complete`: an MCP tool's
    /// `structuredContent`); `None` when it returned none (absent from JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool's telemetry as the runtime reported it (`toolTelemetry` of
    /// `tool.execution_complete`, e.g. `{"properties": {..}, "metrics": {..}}`: what a
    /// structured tool result set, plus the runtime's own measures); `None` when the runtime
    /// sent none. Not in the JSON report: the runtime's measures (`context_current_tokens`, ...)
    /// change from run to run with the machine and paths, so a replay or a shard would differ.
    #[serde(skip)]
    pub telemetry: Option<Value>,
}

impl ToolCall {
    /// A call as its `tool.execution_start` gives it: the id, the name, the arguments and the
    /// calling subagent's id (`None`: the main agent); nothing seen after the start yet
    /// (`completed: false`, every other field `None`).
    pub fn started(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        agent_id: Option<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            runtime_name: None,
            arguments,
            result: None,
            success: None,
            error: None,
            agent_id,
            duration_ms: None,
            completed: false,
            denied: None,
            permission: None,
            cut_for_model: None,
            structured_content: None,
            telemetry: None,
        }
    }
}

/// A permission request the runtime made for one tool call (`permission.requested`) and its
/// answer (`permission.completed`), correlated by tool call id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Permission {
    /// The request's kind as the runtime named it (`permissionRequest.kind`): `write`, `shell`,
    /// `read`, `url`, `mcp`, `custom-tool`, or `hook` when a pre-tool guard answered `ask`.
    pub kind: String,
    /// Who answered: `permission_handler` (the eval's own handler) or `auto_confirm` (the
    /// approve-all handler the eval installs when it has no handler and `auto_confirm` is on).
    pub by: String,
    /// The answer's kind as the runtime reported it (`result.kind`, e.g. `approved`,
    /// `denied-interactively-by-user`); `None` when no answer was seen.
    pub outcome: Option<String>,
    /// Whether the call was approved (`outcome` starts with `approved`).
    pub approved: bool,
    /// The feedback a rejecting handler gave (`result.feedback`).
    pub feedback: Option<String>,
}

/// How much of a tool result reached the model ([`ToolCall::cut_for_model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CutForModel {
    /// Bytes of the result the tool returned (`largeOutputOriginalSizeBytes`).
    pub full_bytes: u64,
    /// Bytes of the text the model saw instead (`result.content`: the pointer and preview). Not
    /// in the JSON report (it is the length of the call's `result`): 0 when read back from JSON.
    pub model_bytes: u64,
}

/// How [`ToolCall::cut_for_model`] is written in JSON (`#[serde(with = "...")]` on its
/// `Option<CutForModel>`): the result's full size in bytes, `full_bytes`, as a number. Read back,
/// `model_bytes` is 0: the JSON does not keep it (the model saw the call's `result`, whose
/// length it is).
mod cut_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::CutForModel;

    /// Write `cut`'s `full_bytes` (`null` for `None`, which the field skips).
    pub(super) fn serialize<S: Serializer>(
        cut: &Option<CutForModel>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match cut {
            Some(cut) => s.serialize_some(&cut.full_bytes),
            None => s.serialize_none(),
        }
    }

    /// Read `full_bytes` back (`model_bytes` 0: not in the JSON).
    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<CutForModel>, D::Error> {
        Ok(
            Option::<u64>::deserialize(d)?.map(|full_bytes| CutForModel {
                full_bytes,
                model_bytes: 0,
            }),
        )
    }
}

/// Token usage and cost of one model call (`assistant.usage`). Also the JSON report's entry of
/// `tests[].runs[].usage[]`, field for field; the run record writes every count as 0 when the
/// run's counts are not known (`totals.tokens` = `unknown`,
/// [`CopilotResult::usage_unknown`](crate::CopilotResult::usage_unknown)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// The model that served the call (`model`).
    pub model: Option<String>,
    /// Input tokens (`inputTokens`).
    pub input_tokens: u64,
    /// Output tokens (`outputTokens`).
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache (`cacheReadTokens`).
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache (`cacheWriteTokens`).
    pub cache_write_tokens: u64,
    /// Cost as the runtime reports it (`cost`; premium-request units for Copilot, absent or 0
    /// for BYOK).
    pub cost: Option<f64>,
    /// Duration of the call as the runtime measured it, ms (`duration`).
    pub duration_ms: Option<u64>,
    /// The agent that made the call: `None` for the main agent, else the subagent's `agentId`.
    pub agent_id: Option<String>,
}

/// One SDK event exactly as received from the live subscription. Unknown event types are kept
/// here, never dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawEvent {
    /// The event type string, e.g. `assistant.message`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The event id (UUID).
    pub id: String,
    /// ISO 8601 timestamp from the runtime.
    pub timestamp: String,
    /// The subagent instance id, `None` for the main agent and session events.
    pub agent_id: Option<String>,
    /// Whether the runtime marked it ephemeral (not persisted; seen only live).
    pub ephemeral: bool,
    /// The event's data as sent.
    pub data: Value,
}

impl RawEvent {
    /// The event's type as the pinned SDK names it ([`SessionEventType`], parsed from
    /// [`event_type`](Self::event_type) by the SDK's own serde names);
    /// [`SessionEventType::Unknown`] for a type the pinned SDK does not know (the event is still
    /// kept, raw). The one place an event's type text is turned into its kind: every reader of
    /// the log matches on this, never on the text.
    pub fn kind(&self) -> SessionEventType {
        kind_of(&self.event_type)
    }

    /// The event's data as the pinned SDK's generated type `T` of its kind
    /// (`ToolExecutionStartData`, ...), as the SDK's own `SessionEvent::typed_data` reads it;
    /// `None` when `T` refuses the data (a required field missing or of another type).
    pub fn typed_data<T: DeserializeOwned>(&self) -> Option<T> {
        T::deserialize(&self.data).ok()
    }

    /// The event's data as the pinned SDK's generated type `T`, tolerating a required field the
    /// event lacks: such a field takes `T`'s default (an empty text, `false`, 0) and is named in
    /// [`Read::lacks`], so that a partial event still maps as before and its reader can tell an
    /// absent field from an empty one. Data that `T` refuses for another reason (a field of
    /// another type) reads as `T`'s default with every required field lacking.
    pub(crate) fn read<T: Serialize + DeserializeOwned + Default>(&self) -> Read<T> {
        read_value(&self.data)
    }
}

/// An event's data read through the pinned SDK's generated type `T` ([`RawEvent::read`]), and
/// the required fields of `T` the event lacked.
pub(crate) struct Read<T> {
    /// The data; a lacking required field holds `T`'s default.
    pub(crate) data: T,
    /// The required fields (as the runtime spells them) the event lacked or sent `null`.
    missing: Vec<String>,
}

impl<T> Read<T> {
    /// Data the SDK's type took whole: nothing lacking.
    pub(crate) fn whole(data: T) -> Self {
        Read {
            data,
            missing: Vec::new(),
        }
    }

    /// Whether the event lacked the required field `wire_name` (as the runtime spells it).
    pub(crate) fn lacks(&self, wire_name: &str) -> bool {
        self.missing.iter().any(|m| m == wire_name)
    }
}

/// `value` read as `T` ([`RawEvent::read`]): whole when `T` takes it; else over `T`'s default
/// (whose serialization names `T`'s required fields, by the SDK's own serde names), each
/// required field `value` lacks named as missing.
pub(crate) fn read_value<T: Serialize + DeserializeOwned + Default>(value: &Value) -> Read<T> {
    if let Ok(data) = T::deserialize(value) {
        return Read::whole(data);
    }
    let Ok(Value::Object(mut base)) = serde_json::to_value(T::default()) else {
        return Read::whole(T::default());
    };
    let required: Vec<String> = base.keys().cloned().collect();
    let given = value.as_object();
    let missing = required
        .iter()
        .filter(|key| given.and_then(|g| g.get(*key)).is_none_or(Value::is_null))
        .cloned()
        .collect();
    for (key, field) in given.into_iter().flatten() {
        if !field.is_null() {
            base.insert(key.clone(), field.clone());
        }
    }
    match T::deserialize(&Value::Object(base)) {
        Ok(data) => Read { data, missing },
        Err(_) => Read {
            data: T::default(),
            missing: required,
        },
    }
}

/// The [`SessionEventType`] named by `event_type` (`assistant.message`, ...), as the SDK's
/// deserializer reads it; [`SessionEventType::Unknown`] for a name the pinned SDK does not know.
fn kind_of(event_type: &str) -> SessionEventType {
    use serde::Deserialize;
    use serde::de::IntoDeserializer;
    let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        event_type.into_deserializer();
    SessionEventType::deserialize(text).unwrap_or(SessionEventType::Unknown)
}
