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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggedEvent, SessionEventType as Kind, ToolCall};

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
    let mut out: Vec<SubagentInvocation> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut started_at: HashMap<usize, Instant> = HashMap::new();
    // Last assistant message per agent id: (text, requested tools?).
    let mut last_message: HashMap<String, (String, bool)> = HashMap::new();

    for logged in log {
        let event = &logged.event;
        let data = &event.data;
        let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
        let kind = event.kind();
        if kind == Kind::AssistantMessage {
            if let Some(id) = &agent_id {
                let text = str_field(data, "content").unwrap_or_default();
                let tools = data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .is_some_and(|r| !r.is_empty());
                last_message.insert(id.clone(), (text, tools));
            }
            continue;
        }
        if !matches!(
            kind,
            Kind::SubagentStarted
                | Kind::SubagentSelected
                | Kind::SubagentConfigured
                | Kind::SubagentCompleted
                | Kind::SubagentFailed
        ) {
            continue;
        }
        let Some(id) = agent_id else {
            // The main agent selecting a custom agent for itself is no dispatch.
            if kind != Kind::SubagentSelected {
                errors.push(format!(
                    "{} has no agent id; it cannot be attributed",
                    event.event_type
                ));
            }
            continue;
        };
        let name = str_field(data, "agentName");
        let i = *index.entry(id.clone()).or_insert_with(|| {
            out.push(SubagentInvocation::new(
                Some(id.clone()),
                name.clone().unwrap_or_default(),
            ));
            out.len() - 1
        });
        let invocation = &mut out[i];
        if let Some(name) = &name {
            if invocation.name.is_empty() {
                invocation.name = name.clone();
            } else if &invocation.name != name {
                errors.push(format!(
                    "subagent {id} changed name from {} to {name}",
                    invocation.name
                ));
            }
        }
        if let Some(display) = str_field(data, "agentDisplayName") {
            invocation.display_name = Some(display);
        }
        if let Some(model) = str_field(data, "model") {
            invocation.model = Some(model);
        }
        if let Some(call) = str_field(data, "toolCallId") {
            invocation.dispatch_tool_call_id.get_or_insert(call);
        }
        let advance = |invocation: &mut SubagentInvocation, status: SubagentStatus| {
            if status.rank() > invocation.status.rank() {
                invocation.status = status;
            }
        };
        match kind {
            Kind::SubagentStarted => {
                if let Some(agent_type) = str_field(data, "agentType") {
                    invocation.agent_type = Some(agent_type);
                }
                advance(invocation, SubagentStatus::Started);
                started_at.entry(i).or_insert(logged.received);
            }
            Kind::SubagentSelected | Kind::SubagentConfigured => {
                if kind == Kind::SubagentSelected
                    && let Some(tools) = data.get("tools").and_then(Value::as_array)
                {
                    invocation.announced_tools = Some(
                        tools
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                    );
                }
                advance(invocation, SubagentStatus::Selected);
            }
            _ => {
                let status = if kind == Kind::SubagentCompleted {
                    SubagentStatus::Completed
                } else {
                    SubagentStatus::Failed
                };
                if invocation.status.is_terminal() && invocation.status != status {
                    errors.push(format!(
                        "subagent {} ({id}) ended twice with conflicting states",
                        invocation.name
                    ));
                }
                invocation.status = status;
                if status == SubagentStatus::Failed {
                    invocation.error = str_field(data, "error");
                }
                invocation.cancelled = data
                    .get("cancelled")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                invocation.duration_ms =
                    data.get("durationMs").and_then(Value::as_u64).or_else(|| {
                        started_at.get(&i).map(|start| {
                            logged
                                .received
                                .saturating_duration_since(*start)
                                .as_millis() as u64
                        })
                    });
                invocation.total_tool_calls = data.get("totalToolCalls").and_then(Value::as_u64);
                invocation.total_tokens = data.get("totalTokens").and_then(Value::as_u64);
            }
        }
    }

    for invocation in &mut out {
        let Some(id) = invocation.agent_id.clone() else {
            continue;
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

    // `task` calls that no subagent event names.
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

    let position = |i: &SubagentInvocation| {
        i.dispatch_tool_call_id
            .as_deref()
            .and_then(|d| tool_calls.iter().position(|c| c.id == d))
            .unwrap_or(usize::MAX)
    };
    out.sort_by_key(position);
    (out, errors)
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::evidence::{RawEvent, map_events};

    fn log(events: &[(&str, Option<&str>, Value)]) -> Vec<LoggedEvent> {
        let start = Instant::now();
        events
            .iter()
            .enumerate()
            .map(|(i, (kind, agent, data))| LoggedEvent {
                event: RawEvent {
                    event_type: (*kind).to_owned(),
                    id: format!("e{i}"),
                    timestamp: String::new(),
                    agent_id: agent.map(str::to_owned),
                    ephemeral: false,
                    data: data.clone(),
                },
                received: start + Duration::from_millis(10 * i as u64),
            })
            .collect()
    }

    fn dispatch(id: &str, agent_type: &str) -> [(&'static str, Option<&'static str>, Value); 2] {
        let args = json!({"agent_type": agent_type, "name": agent_type, "prompt": "Do it.", "description": "d"});
        [
            (
                "assistant.message",
                None,
                json!({"content": "", "toolRequests": [{"toolCallId": id, "name": "task", "arguments": args}]}),
            ),
            (
                "tool.execution_start",
                None,
                json!({"toolCallId": id, "toolName": "task", "arguments": args}),
            ),
        ]
    }

    #[test]
    fn a_completed_dispatch_carries_the_child_evidence() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.extend([
            ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "agentDisplayName": "Helper", "agentType": "helper", "model": "m"})),
            ("subagent.selected", Some("A"), json!({"agentName": "helper", "agentDisplayName": "Helper", "tools": null})),
            ("assistant.message", Some("A"), json!({"content": "", "toolRequests": [{"toolCallId": "c2", "name": "create", "arguments": {"path": "f"}}]})),
            ("tool.execution_start", Some("A"), json!({"toolCallId": "c2", "toolName": "create", "arguments": {"path": "f"}})),
            ("tool.execution_complete", Some("A"), json!({"toolCallId": "c2", "success": true, "result": {"content": "ok"}})),
            ("assistant.message", Some("A"), json!({"content": "child done", "toolRequests": []})),
            ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "agentDisplayName": "Helper", "durationMs": 135, "totalToolCalls": 1, "totalTokens": 240})),
            ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": true, "result": {"content": "child done"}})),
            ("assistant.message", None, json!({"content": "parent done"})),
            ("session.idle", None, json!({})),
        ]);
        let ev = map_events(&log(&events));
        assert!(ev.complete(), "{:?}", ev.capture_errors);
        assert_eq!(ev.subagent_invocations.len(), 1);
        let s = &ev.subagent_invocations[0];
        assert_eq!(s.agent_id.as_deref(), Some("A"));
        assert_eq!(s.name, "helper");
        assert_eq!(s.display_name.as_deref(), Some("Helper"));
        assert_eq!(s.agent_type.as_deref(), Some("helper"));
        assert_eq!(
            s.status,
            SubagentStatus::Completed,
            "started then selected stays past selected"
        );
        assert_eq!(s.dispatch_tool_call_id.as_deref(), Some("c1"));
        assert_eq!(s.parent_agent_id, None);
        assert_eq!(s.prompt.as_deref(), Some("Do it."));
        assert_eq!(s.duration_ms, Some(135));
        assert_eq!(s.model.as_deref(), Some("m"));
        assert_eq!((s.total_tool_calls, s.total_tokens), (Some(1), Some(240)));
        assert_eq!(s.tool_calls.len(), 1);
        assert_eq!(s.tool_calls[0].name, "create");
        assert!(s.tool_was_called("create"));
        assert_eq!(s.final_response.as_deref(), Some("child done"));
        assert_eq!(ev.final_response.as_deref(), Some("parent done"));
    }

    #[test]
    fn a_dispatch_that_never_ends_is_incomplete_evidence() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.push((
            "subagent.started",
            Some("A"),
            json!({"toolCallId": "c1", "agentName": "helper"}),
        ));
        let ev = map_events(&log(&events));
        let s = &ev.subagent_invocations[0];
        assert_eq!(s.status, SubagentStatus::Started);
        assert_eq!(s.duration_ms, None);
        assert!(
            ev.capture_errors.iter().any(|e| e == "subagent helper (A), dispatched by tool call c1, never reported completion or failure"),
            "{:?}",
            ev.capture_errors
        );
    }

    #[test]
    fn failures_conflicts_and_unattributed_events() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.extend(dispatch("c9", "ghost"));
        events.extend([
            ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "helper"})),
            ("subagent.failed", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "error": "model error"})),
            ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "renamed"})),
            ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": false, "error": {"message": "model error"}})),
            ("tool.execution_complete", None, json!({"toolCallId": "c9", "success": false, "error": {"message": "unknown agent ghost"}})),
            ("subagent.completed", None, json!({"toolCallId": "c1"})),
            ("subagent.selected", None, json!({"agentName": "active"})),
        ]);
        let ev = map_events(&log(&events));
        let names: Vec<(&str, SubagentStatus)> = ev
            .subagent_invocations
            .iter()
            .map(|s| (s.name.as_str(), s.status))
            .collect();
        // `helper` ended twice (a capture error below); its `task` call failed, which decides.
        assert_eq!(
            names,
            [
                ("helper", SubagentStatus::Failed),
                ("ghost", SubagentStatus::Failed)
            ]
        );
        let ghost = &ev.subagent_invocations[1];
        assert_eq!(ghost.agent_id, None);
        assert_eq!(ghost.error.as_deref(), Some("unknown agent ghost"));
        assert_eq!(ghost.dispatch_tool_call_id.as_deref(), Some("c9"));
        let errors = ev.capture_errors.join("\n");
        assert!(
            errors.contains("subagent A changed name from helper to renamed"),
            "{errors}"
        );
        assert!(
            errors.contains("ended twice with conflicting states"),
            "{errors}"
        );
        assert!(
            errors.contains("subagent.completed has no agent id"),
            "{errors}"
        );
        assert!(
            !errors.contains("selected"),
            "the main agent's own selection is no dispatch: {errors}"
        );
    }

    /// Runtime 1.0.102: a subagent whose last message has no text gets `subagent.completed`,
    /// then its `task` call fails; the dispatch is `failed` with the call's error, and the run
    /// warns that it ended without a response.
    #[test]
    fn a_completed_subagent_whose_task_call_failed_is_failed_and_warned_of() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "writer").into();
        events.extend([
            ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "writer"})),
            ("assistant.message", Some("A"), json!({"content": "", "toolRequests": []})),
            ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "writer", "durationMs": 5})),
            ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": false, "error": {"message": "Agent completed but produced no response.", "code": "failure"}})),
        ]);
        let ev = map_events(&log(&events));
        assert!(ev.complete(), "{:?}", ev.capture_errors);
        let s = &ev.subagent_invocations[0];
        assert_eq!(s.status, SubagentStatus::Failed);
        assert!(!s.cancelled);
        assert_eq!(s.final_response, None);
        let error = s.error.as_deref().unwrap();
        assert!(
            error.starts_with("Agent completed but produced no response."),
            "{error}"
        );
        assert_eq!(
            ended_without_response(&ev.subagent_invocations),
            [format!(
                "subagent `writer` (task call c1) ended without a response (the runtime: {error}): the agent that dispatched it got no answer from it"
            )]
        );
    }

    #[test]
    fn only_a_subagent_that_ended_without_an_answer_is_warned_of() {
        let mut answered = SubagentInvocation::new(Some("A".into()), "a".into());
        answered.status = SubagentStatus::Completed;
        answered.final_response = Some("done".into());
        let mut silent = SubagentInvocation::new(Some("B".into()), "b".into());
        silent.status = SubagentStatus::Completed;
        let mut cancelled = silent.clone();
        cancelled.cancelled = true;
        let mut running = silent.clone();
        running.status = SubagentStatus::Started;
        let mut never_started = SubagentInvocation::new(None, "c".into());
        never_started.status = SubagentStatus::Failed;
        let warnings =
            ended_without_response(&[answered, silent, cancelled, running, never_started]);
        assert_eq!(
            warnings,
            [
                "subagent `b` ended without a response (its last message had no text): the agent that dispatched it got no answer from it"
            ]
        );
    }

    #[test]
    fn a_successful_task_call_without_subagent_events_is_a_capture_error() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.push((
            "tool.execution_complete",
            None,
            json!({"toolCallId": "c1", "success": true, "result": {"content": "?"}}),
        ));
        let ev = map_events(&log(&events));
        assert!(ev.subagent_invocations.is_empty());
        assert_eq!(
            ev.capture_errors,
            ["task call c1 completed, but no subagent event names it"]
        );
    }

    #[test]
    fn the_duration_is_measured_when_the_runtime_gives_none() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.extend([
            (
                "subagent.started",
                Some("A"),
                json!({"toolCallId": "c1", "agentName": "helper"}),
            ),
            (
                "subagent.completed",
                Some("A"),
                json!({"toolCallId": "c1", "agentName": "helper"}),
            ),
        ]);
        let ev = map_events(&log(&events));
        assert_eq!(ev.subagent_invocations[0].duration_ms, Some(10));
        assert!(!ev.subagent_invocations[0].cancelled);
    }

    #[test]
    fn a_cancelled_completion_is_marked() {
        let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
        events.extend([
            (
                "subagent.started",
                Some("A"),
                json!({"toolCallId": "c1", "agentName": "helper"}),
            ),
            (
                "subagent.completed",
                Some("A"),
                json!({"toolCallId": "c1", "agentName": "helper", "cancelled": true}),
            ),
        ]);
        let ev = map_events(&log(&events));
        let s = &ev.subagent_invocations[0];
        assert_eq!((s.status, s.cancelled), (SubagentStatus::Completed, true));
    }

    #[test]
    fn skill_invocations_are_read_from_the_log() {
        let ev = map_events(&log(&[
            (
                "skill.invoked",
                None,
                json!({"name": "greet", "path": "/s/greet/SKILL.md", "content": "x", "source": "custom", "trigger": "agent-invoked"}),
            ),
            (
                "skill.invoked",
                Some("A"),
                json!({"name": "sdk-skill", "path": "", "content": "x"}),
            ),
        ]));
        let names: Vec<(&str, Option<&str>)> = ev
            .skill_invocations
            .iter()
            .map(|s| (s.name.as_str(), s.agent_id.as_deref()))
            .collect();
        assert_eq!(names, [("greet", None), ("sdk-skill", Some("A"))]);
        assert_eq!(
            ev.skill_invocations[0].trigger.as_deref(),
            Some("agent-invoked")
        );
        assert_eq!(ev.skill_invocations[0].source.as_deref(), Some("custom"));
        assert_eq!(ev.skill_invocations[1].path, None);
    }
}
