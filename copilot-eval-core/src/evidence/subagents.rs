//! Custom-agent dispatch evidence: one [`SubagentInvocation`] per subagent the session started,
//! built from the event log by [`map_subagents`] (pure; called by
//! [`map_events`](super::map_events)).
//!
//! How a dispatch shows in the events (runtime 1.0.102): the model calls the built-in `task` tool
//! (`{agent_type, name, prompt, description}`); the runtime emits `subagent.started`
//! (`toolCallId` = the `task` call, `agentName`, `agentDisplayName`, `agentType`, `model`),
//! `subagent.selected`, `subagent.configured`, then the subagent's own turn, whose events carry
//! the subagent's `agentId` (its messages and tool calls also carry `parentToolCallId`), then
//! `subagent.completed` (`durationMs`, `totalToolCalls`, `totalTokens`, and `cancelled: true`
//! when it was torn down, e.g. by the run's abort after a timeout) or `subagent.failed`
//! (`error`). Every `subagent.*` event carries the subagent's `agentId` too; that id ties the
//! subagent's evidence to its invocation.
//!
//! The `task` call's own completion is the runtime's verdict on the dispatch: a subagent that
//! ended without a response gets `subagent.completed`, then its `task` call fails ("Agent
//! completed but produced no response."); such an invocation is `failed` with that error, not
//! `completed` ([`SubagentStatus::Failed`]), and the run warns of every subagent that ended
//! without a response ([`ended_without_response`]).
//!
//! Incomplete evidence is reported, never left as a silent gap: a subagent that started and
//! never completed nor failed, a `subagent.*` event without an agent id, a name or terminal state
//! that changes, and a `task` call that completed successfully with no subagent event are all
//! `capture_errors` (so `evidence_complete` is `false`). A `task` call that failed before any
//! subagent started (an unknown agent, a denied call) is an invocation with status `failed`, no
//! agent id, and the call's error.

use std::collections::HashMap;
use std::time::Instant;

use github_copilot_sdk::session_events::{
    SubagentCompletedData, SubagentConfiguredData, SubagentFailedData, SubagentSelectedData,
    SubagentStartedData,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggedEvent, RawEvent, SessionEventType as Kind, ToolCall, untyped};

/// The name of the runtime's built-in dispatch tool.
pub const DISPATCH_TOOL: &str = "task";

/// How far a dispatch got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentStatus {
    /// `subagent.selected` only.
    Selected,
    /// `subagent.started` seen, no end yet.
    Started,
    /// `subagent.completed`, and its `task` call did not fail.
    Completed,
    /// `subagent.failed`; or the `task` call failed, before a subagent started or after its
    /// `subagent.completed` (runtime 1.0.102 fails the dispatch of a subagent that completed
    /// without a response).
    Failed,
}

impl SubagentStatus {
    fn rank(self) -> u8 {
        match self {
            Self::Selected => 0,
            Self::Started => 1,
            Self::Completed | Self::Failed => 2,
        }
    }

    /// Whether the dispatch ended (completed or failed).
    pub fn is_terminal(self) -> bool {
        self.rank() == 2
    }
}

/// One subagent dispatch and the subagent's own evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentInvocation {
    /// The subagent's instance id (`agentId` of its events); `None` for a `task` call that
    /// failed before a subagent started.
    pub agent_id: Option<String>,
    /// The agent's name (`agentName`; for a failed `task` call, its `agent_type` argument).
    pub name: String,
    /// Its display name (`agentDisplayName`).
    pub display_name: Option<String>,
    /// The agent type the dispatch asked for (`agentType`).
    pub agent_type: Option<String>,
    /// How far it got.
    pub status: SubagentStatus,
    /// `true` when the runtime reported the completion as a cancellation (`cancelled` of
    /// `subagent.completed`: the subagent was torn down, e.g. by the run's abort, instead of
    /// finishing its work). Its status is still `completed`, as the runtime reports it.
    pub cancelled: bool,
    /// The `task` tool call that dispatched it (`toolCallId`).
    pub dispatch_tool_call_id: Option<String>,
    /// The agent that dispatched it: `None` for the main agent, else its `agentId`.
    pub parent_agent_id: Option<String>,
    /// The prompt given to it (the `task` call's `prompt` argument).
    pub prompt: Option<String>,
    /// Wall-clock duration in ms: the runtime's `durationMs` when reported, else the host's
    /// time from `subagent.started` to its end; `None` while it has not ended.
    pub duration_ms: Option<u64>,
    /// The model it ran with (`model` of its start, configuration or completion).
    pub model: Option<String>,
    /// Why it failed (`subagent.failed` `error`, or the `task` call's error).
    pub error: Option<String>,
    /// Tool calls it reported making (`totalToolCalls` of its completion).
    pub total_tool_calls: Option<u64>,
    /// Tokens it reported using (`totalTokens` of its completion).
    pub total_tokens: Option<u64>,
    /// Its own tool calls (events carrying its agent id), in request order.
    pub tool_calls: Vec<ToolCall>,
    /// Its final answer: the text of its last `assistant.message` when that message requested no
    /// tools (the `task` call's result carries the same text to the parent).
    pub final_response: Option<String>,
    /// The tool names the runtime announced for it when it selected the agent (`tools` of
    /// `subagent.selected`): runtime 1.0.102 announces the agent's `tools` list as configured
    /// (a pattern such as `fixture/*` stays a pattern, and a name that matches no tool is
    /// announced all the same), so this is what the agent asked for, not what its model got
    /// (`offered_tools` is). `None` when the runtime announced all tools (`null`) or sent no
    /// `subagent.selected`.
    pub announced_tools: Option<Vec<String>>,
    /// The tool names its own model requests offered (those carrying its agent id, as the
    /// run's request proxy forwarded them; each name once). Empty: its model was offered no
    /// tool. `None` when the run saw none of its model requests, or did not keep them (an
    /// eval without custom agents or MCP servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_tools: Option<Vec<String>>,
}

impl SubagentInvocation {
    pub(crate) fn new(agent_id: Option<String>, name: String) -> Self {
        Self {
            agent_id,
            name,
            display_name: None,
            agent_type: None,
            status: SubagentStatus::Selected,
            cancelled: false,
            dispatch_tool_call_id: None,
            parent_agent_id: None,
            prompt: None,
            duration_ms: None,
            model: None,
            error: None,
            total_tool_calls: None,
            total_tokens: None,
            tool_calls: Vec::new(),
            final_response: None,
            announced_tools: None,
            offered_tools: None,
        }
    }

    /// Whether the subagent called a tool of this name.
    pub fn tool_was_called(&self, name: &str) -> bool {
        self.tool_calls.iter().any(|c| c.name == name)
    }
}

/// Fill each started invocation's `offered_tools` from the run's model requests (`offers`).
pub(crate) fn attach_offers(
    invocations: &mut [SubagentInvocation],
    offers: &[super::offered::ModelOffer],
) {
    for invocation in invocations {
        if let Some(id) = &invocation.agent_id {
            invocation.offered_tools = super::offered::subagent_tools(offers, id);
        }
    }
}

/// One warning per subagent that started and ended without a response (no final answer):
/// completed with no text, failed, or failed by its `task` call. A subagent the run's own stop
/// tore down (`cancelled`) is left out: the stop says why. Pure.
pub fn ended_without_response(invocations: &[SubagentInvocation]) -> Vec<String> {
    invocations
        .iter()
        .filter(|i| {
            i.agent_id.is_some()
                && i.status.is_terminal()
                && !i.cancelled
                && i.final_response.is_none()
        })
        .map(|i| {
            format!(
                "subagent `{}`{} ended without a response ({}): the agent that dispatched it got no answer from it",
                i.name,
                i.dispatch_tool_call_id
                    .as_deref()
                    .map(|c| format!(" (task call {c})"))
                    .unwrap_or_default(),
                match (&i.status, &i.error) {
                    (_, Some(error)) => format!("the runtime: {error}"),
                    (SubagentStatus::Failed, None) => "the runtime failed it".to_owned(),
                    _ => "its last message had no text".to_owned(),
                }
            )
        })
        .collect()
}

/// Replace each invocation's copies of its tool calls with the calls of `tool_calls` that have
/// the same id: the run adds denials, permissions and runtime names to the session's tool calls
/// after [`map_subagents`] copied them, and a subagent's calls must say the same.
pub(crate) fn refresh_tool_calls(invocations: &mut [SubagentInvocation], tool_calls: &[ToolCall]) {
    for invocation in invocations {
        for call in &mut invocation.tool_calls {
            if let Some(updated) = tool_calls.iter().find(|c| c.id == call.id) {
                call.clone_from(updated);
            }
        }
    }
}

/// Build the invocations from the event log and the already-mapped tool calls. Returns the
/// invocations, in the order their `task` calls were requested, and the capture errors. Pure.
pub fn map_subagents(
    log: &[LoggedEvent],
    tool_calls: &[ToolCall],
) -> (Vec<SubagentInvocation>, Vec<String>) {
    let mut seen = SubagentEvents::default();
    for logged in log {
        seen.read(logged);
    }
    let SubagentEvents {
        mut out,
        mut errors,
        last_message,
        ..
    } = seen;
    for invocation in &mut out {
        attach_calls(invocation, tool_calls, &last_message, &mut errors);
    }
    add_failed_dispatches(&mut out, tool_calls, &mut errors);
    let position = |i: &SubagentInvocation| {
        i.dispatch_tool_call_id
            .as_deref()
            .and_then(|d| tool_calls.iter().position(|c| c.id == d))
            .unwrap_or(usize::MAX)
    };
    out.sort_by_key(position);
    (out, errors)
}

/// What the `subagent.*` events (and the subagents' own messages) said, read in log order by
/// [`map_subagents`].
#[derive(Default)]
struct SubagentEvents {
    /// One invocation per agent id, in the order the ids first appeared.
    out: Vec<SubagentInvocation>,
    /// Capture errors.
    errors: Vec<String>,
    /// Agent id -> its position in `out`.
    index: HashMap<String, usize>,
    /// Position in `out` -> when its `subagent.started` arrived.
    started_at: HashMap<usize, Instant>,
    /// Last assistant message per agent id: (text, requested tools?).
    last_message: HashMap<String, (String, bool)>,
}

impl SubagentEvents {
    /// Take in one logged event: a subagent's message, or a `subagent.*` event.
    fn read(&mut self, logged: &LoggedEvent) {
        let event = &logged.event;
        let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
        let kind = event.kind();
        if kind == Kind::AssistantMessage {
            if let Some(id) = &agent_id {
                let (message, requests) = untyped::assistant_message(event);
                self.last_message
                    .insert(id.clone(), (message.content, !requests.is_empty()));
            }
            return;
        }
        if !matches!(
            kind,
            Kind::SubagentStarted
                | Kind::SubagentSelected
                | Kind::SubagentConfigured
                | Kind::SubagentCompleted
                | Kind::SubagentFailed
        ) {
            return;
        }
        let Some(id) = agent_id else {
            // The main agent selecting a custom agent for itself is no dispatch.
            if kind != Kind::SubagentSelected {
                self.errors.push(format!(
                    "{} has no agent id; it cannot be attributed",
                    event.event_type
                ));
            }
            return;
        };
        let i = self.invocation_of(&id, Identity::of(event, &kind));
        let invocation = &mut self.out[i];
        match kind {
            Kind::SubagentStarted => {
                let started = event.read::<SubagentStartedData>().data;
                if let Some(agent_type) = started.agent_type.and_then(present) {
                    invocation.agent_type = Some(agent_type);
                }
                advance(invocation, SubagentStatus::Started);
                self.started_at.entry(i).or_insert(logged.received);
            }
            Kind::SubagentSelected | Kind::SubagentConfigured => {
                if kind == Kind::SubagentSelected
                    && let Some(tools) = event.read::<SubagentSelectedData>().data.tools
                {
                    invocation.announced_tools = Some(tools);
                }
                advance(invocation, SubagentStatus::Selected);
            }
            _ => self.end(i, &id, kind, logged),
        }
    }

    /// The position in `out` of the invocation of agent `id` (added when new), with the
    /// identifying fields every `subagent.*` event may carry copied in; a changed name is a
    /// capture error.
    fn invocation_of(&mut self, id: &str, identity: Identity) -> usize {
        let name = present(identity.name);
        let out = &mut self.out;
        let i = *self.index.entry(id.to_owned()).or_insert_with(|| {
            out.push(SubagentInvocation::new(
                Some(id.to_owned()),
                name.clone().unwrap_or_default(),
            ));
            out.len() - 1
        });
        let invocation = &mut out[i];
        if let Some(name) = &name {
            if invocation.name.is_empty() {
                invocation.name = name.clone();
            } else if &invocation.name != name {
                self.errors.push(format!(
                    "subagent {id} changed name from {} to {name}",
                    invocation.name
                ));
            }
        }
        if let Some(display) = present(identity.display_name) {
            invocation.display_name = Some(display);
        }
        if let Some(model) = identity.model.and_then(present) {
            invocation.model = Some(model);
        }
        if let Some(call) = present(identity.tool_call_id) {
            invocation.dispatch_tool_call_id.get_or_insert(call);
        }
        i
    }

    /// A `subagent.completed` or `subagent.failed` for the invocation at `i` (agent `id`): its
    /// terminal state and figures; a second, different ending is a capture error.
    fn end(&mut self, i: usize, id: &str, kind: Kind, logged: &LoggedEvent) {
        let ending = Ending::of(&logged.event, &kind);
        let invocation = &mut self.out[i];
        let status = if kind == Kind::SubagentCompleted {
            SubagentStatus::Completed
        } else {
            SubagentStatus::Failed
        };
        if invocation.status.is_terminal() && invocation.status != status {
            self.errors.push(format!(
                "subagent {} ({id}) ended twice with conflicting states",
                invocation.name
            ));
        }
        invocation.status = status;
        if status == SubagentStatus::Failed {
            invocation.error = ending.error.and_then(present);
        }
        invocation.cancelled = ending.cancelled.unwrap_or(false);
        invocation.duration_ms = count(ending.duration_ms).or_else(|| {
            self.started_at.get(&i).map(|start| {
                logged
                    .received
                    .saturating_duration_since(*start)
                    .as_millis() as u64
            })
        });
        invocation.total_tool_calls = count(ending.total_tool_calls);
        invocation.total_tokens = count(ending.total_tokens);
    }
}

/// The identifying fields a `subagent.*` event carries, from the SDK's type of its kind (an
/// empty text is absent).
#[derive(Default)]
struct Identity {
    /// `agent_name`.
    name: String,
    /// `agent_display_name`.
    display_name: String,
    /// `model`.
    model: Option<String>,
    /// `tool_call_id`: the dispatching `task` call.
    tool_call_id: String,
}

impl Identity {
    /// The identity `event` (of `kind`, a `subagent.*` kind) carries.
    fn of(event: &RawEvent, kind: &Kind) -> Identity {
        match kind {
            Kind::SubagentStarted => {
                let d = event.read::<SubagentStartedData>().data;
                Identity {
                    name: d.agent_name,
                    display_name: d.agent_display_name,
                    model: d.model,
                    tool_call_id: d.tool_call_id,
                }
            }
            Kind::SubagentSelected => {
                let d = event.read::<SubagentSelectedData>().data;
                Identity {
                    name: d.agent_name,
                    display_name: d.agent_display_name,
                    ..Identity::default()
                }
            }
            Kind::SubagentConfigured => Identity {
                model: Some(event.read::<SubagentConfiguredData>().data.model),
                ..Identity::default()
            },
            Kind::SubagentCompleted => {
                let d = event.read::<SubagentCompletedData>().data;
                Identity {
                    name: d.agent_name,
                    display_name: d.agent_display_name,
                    model: d.model,
                    tool_call_id: d.tool_call_id,
                }
            }
            Kind::SubagentFailed => {
                let d = event.read::<SubagentFailedData>().data;
                Identity {
                    name: d.agent_name,
                    display_name: d.agent_display_name,
                    model: d.model,
                    tool_call_id: d.tool_call_id,
                }
            }
            _ => Identity::default(),
        }
    }
}

/// What a `subagent.completed` or `subagent.failed` says of the end, from the SDK's type of its
/// kind.
#[derive(Default)]
struct Ending {
    /// `error` (`subagent.failed` only).
    error: Option<String>,
    /// `cancelled` (`subagent.completed` only).
    cancelled: Option<bool>,
    /// `duration_ms`.
    duration_ms: Option<i64>,
    /// `total_tool_calls`.
    total_tool_calls: Option<i64>,
    /// `total_tokens`.
    total_tokens: Option<i64>,
}

impl Ending {
    /// The ending `event` (of `kind`) reports.
    fn of(event: &RawEvent, kind: &Kind) -> Ending {
        match kind {
            Kind::SubagentCompleted => {
                let d = event.read::<SubagentCompletedData>().data;
                Ending {
                    error: None,
                    cancelled: d.cancelled,
                    duration_ms: d.duration_ms,
                    total_tool_calls: d.total_tool_calls,
                    total_tokens: d.total_tokens,
                }
            }
            Kind::SubagentFailed => {
                let d = event.read::<SubagentFailedData>().data;
                Ending {
                    error: Some(d.error),
                    cancelled: None,
                    duration_ms: d.duration_ms,
                    total_tool_calls: d.total_tool_calls,
                    total_tokens: d.total_tokens,
                }
            }
            _ => Ending::default(),
        }
    }
}

/// `text` unless it is empty.
fn present(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// A count the SDK types as `i64`, as the evidence's `u64`; `None` when absent or negative.
fn count(n: Option<i64>) -> Option<u64> {
    n.and_then(|n| u64::try_from(n).ok())
}

/// Raise `invocation`'s status to `status` unless it already got further.
fn advance(invocation: &mut SubagentInvocation, status: SubagentStatus) {
    if status.rank() > invocation.status.rank() {
        invocation.status = status;
    }
}

/// Give an invocation seen in the events its own tool calls, final response, parent and prompt
/// (from its `task` call), and the `task` call's verdict; an invocation that never ended is a
/// capture error.
fn attach_calls(
    invocation: &mut SubagentInvocation,
    tool_calls: &[ToolCall],
    last_message: &HashMap<String, (String, bool)>,
    errors: &mut Vec<String>,
) {
    let Some(id) = invocation.agent_id.clone() else {
        return;
    };
    invocation.tool_calls = tool_calls
        .iter()
        .filter(|c| c.agent_id.as_deref() == Some(id.as_str()))
        .cloned()
        .collect();
    invocation.final_response = match last_message.get(&id) {
        Some((text, false)) if !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    if let Some(call) = invocation
        .dispatch_tool_call_id
        .as_deref()
        .and_then(|d| tool_calls.iter().find(|c| c.id == d))
    {
        invocation.parent_agent_id = call.agent_id.clone();
        invocation.prompt = call
            .arguments
            .get("prompt")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // The runtime failed the dispatch after the subagent completed (runtime 1.0.102:
        // "Agent completed but produced no response."): its verdict is the call's.
        if invocation.status == SubagentStatus::Completed && call.success == Some(false) {
            invocation.status = SubagentStatus::Failed;
            invocation.error = call
                .error
                .clone()
                .or_else(|| Some("the task call failed after the subagent completed".into()));
        }
    }
    if !invocation.status.is_terminal() {
        errors.push(format!(
            "subagent {} ({id}){} never reported completion or failure",
            invocation.name,
            invocation
                .dispatch_tool_call_id
                .as_deref()
                .map(|c| format!(", dispatched by tool call {c},"))
                .unwrap_or_default()
        ));
    }
}

/// The `task` calls that no subagent event names: a failed one is a `failed` invocation without
/// an agent id (added to `out`); a successful one is a capture error.
fn add_failed_dispatches(
    out: &mut Vec<SubagentInvocation>,
    tool_calls: &[ToolCall],
    errors: &mut Vec<String>,
) {
    for call in tool_calls.iter().filter(|c| c.name == DISPATCH_TOOL) {
        if out
            .iter()
            .any(|i| i.dispatch_tool_call_id.as_deref() == Some(call.id.as_str()))
        {
            continue;
        }
        match call.success {
            Some(false) => {
                let argument = |key: &str| {
                    call.arguments
                        .get(key)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                let mut invocation = SubagentInvocation::new(
                    None,
                    argument("agent_type")
                        .or_else(|| argument("name"))
                        .unwrap_or_default(),
                );
                invocation.agent_type = argument("agent_type");
                invocation.status = SubagentStatus::Failed;
                invocation.dispatch_tool_call_id = Some(call.id.clone());
                invocation.parent_agent_id = call.agent_id.clone();
                invocation.prompt = argument("prompt");
                invocation.error = call
                    .error
                    .clone()
                    .or_else(|| Some("the task call failed before a subagent started".into()));
                invocation.duration_ms = call.duration_ms;
                out.push(invocation);
            }
            Some(true) => errors.push(format!(
                "task call {} completed, but no subagent event names it",
                call.id
            )),
            // An incomplete call is already a capture error of the tool calls.
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
