//! The event mapper: [`map_events`], from the recorded event log to [`Evidence`].

use std::collections::HashMap;
use std::time::Instant;

use github_copilot_sdk::session_events::{
    AssistantUsageData, SessionErrorData, SessionModelChangeData, SessionStartData,
    ToolExecutionCompleteData, ToolExecutionStartData, UserMessageData,
};
use serde_json::Value;

use super::skills::{SkillInvocation, skill_invocations};
use super::subagents::{SubagentInvocation, map_subagents};
use super::untyped;
use super::{RawEvent, Role, SessionEventType as Kind, ToolCall, Turn, Usage};

/// One recorded event with the host's receive time, for tool-call durations.
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    /// The event as received.
    pub event: RawEvent,
    /// When the host received it (monotonic).
    pub received: Instant,
}

/// What the event log shows, before the run adds its own stop information.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The root agent's conversation.
    pub turns: Vec<Turn>,
    /// Every tool call, in request order.
    pub tool_calls: Vec<ToolCall>,
    /// The root agent's final answer, when there is one (see [`CopilotResult::final_response`](crate::CopilotResult::final_response)).
    pub final_response: Option<String>,
    /// One entry per `assistant.usage` event.
    pub usage: Vec<Usage>,
    /// The model of the last usage event, else the session's selected model.
    pub model_used: Option<String>,
    /// `errorType: message` of each `session.error`, in order.
    pub session_errors: Vec<String>,
    /// Whether the root agent's `session.idle` was seen.
    pub idle: bool,
    /// Contract problems: a completion for an unknown call, a started call with no completion,
    /// a call whose identity changed.
    pub capture_errors: Vec<String>,
    /// Every `skill.invoked` event ([`skill_invocations`]).
    pub skill_invocations: Vec<SkillInvocation>,
    /// Subagent dispatches with their own evidence ([`map_subagents`]).
    pub subagent_invocations: Vec<SubagentInvocation>,
}

impl Evidence {
    /// `true` when no capture error was found.
    pub fn complete(&self) -> bool {
        self.capture_errors.is_empty()
    }
}

/// Map an event log to evidence. Pure; never fails.
pub fn map_events(log: &[LoggedEvent]) -> Evidence {
    let mut mapper = Mapper::default();
    for logged in log {
        mapper.read(logged);
    }
    let Mapper {
        mut ev,
        selected_model,
        last_root_message,
        ..
    } = mapper;
    for call in &ev.tool_calls {
        if !call.completed {
            ev.capture_errors.push(format!(
                "tool call {} ({}) has no completion",
                call.id, call.name
            ));
        }
    }
    ev.final_response = match last_root_message {
        Some((content, false)) if !content.is_empty() => Some(content),
        _ => None,
    };
    ev.skill_invocations = skill_invocations(log);
    let (subagents, subagent_errors) = map_subagents(log, &ev.tool_calls);
    ev.subagent_invocations = subagents;
    ev.capture_errors.extend(subagent_errors);
    if ev.model_used.is_none() {
        ev.model_used = selected_model;
    }
    ev
}

/// The evidence built so far while [`map_events`] reads the log in order, and what it needs to
/// remember between events.
#[derive(Default)]
struct Mapper {
    /// The evidence so far.
    ev: Evidence,
    /// Tool call id -> its position in `ev.tool_calls`.
    index: HashMap<String, usize>,
    /// Tool call id -> when its `tool.execution_start` arrived.
    started_at: HashMap<String, Instant>,
    /// The session's selected model (its start, or its last model change).
    selected_model: Option<String>,
    /// The last root assistant message: (content, requested tools?).
    last_root_message: Option<(String, bool)>,
}

impl Mapper {
    /// Take in one logged event.
    fn read(&mut self, logged: &LoggedEvent) {
        let event = &logged.event;
        let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
        match event.kind() {
            Kind::UserMessage if agent_id.is_none() => {
                self.ev.turns.push(Turn {
                    role: Role::User,
                    content: event.read::<UserMessageData>().data.content,
                    tool_call_ids: vec![],
                });
            }
            Kind::AssistantMessage => self.assistant_message(event, agent_id),
            Kind::ToolExecutionStart => {
                let start = event.read::<ToolExecutionStartData>();
                if untyped::lacks_tool_call_id(&start) {
                    self.ev
                        .capture_errors
                        .push("tool.execution_start without toolCallId".into());
                    return;
                }
                let start = start.data;
                let arguments = parse_arguments(start.arguments.as_ref());
                track(
                    &mut self.ev,
                    &mut self.index,
                    &start.tool_call_id,
                    &start.tool_name,
                    arguments,
                    agent_id,
                );
                self.started_at
                    .entry(start.tool_call_id)
                    .or_insert(logged.received);
            }
            Kind::ToolExecutionComplete => self.tool_complete(logged),
            Kind::AssistantUsage => {
                let usage = event.read::<AssistantUsageData>();
                let model = (!usage.lacks("model")).then(|| usage.data.model.clone());
                if model.is_some() {
                    self.ev.model_used = model.clone();
                }
                let usage = usage.data;
                self.ev.usage.push(Usage {
                    model,
                    input_tokens: count(usage.input_tokens).unwrap_or(0),
                    output_tokens: count(usage.output_tokens).unwrap_or(0),
                    cache_read_tokens: count(usage.cache_read_tokens).unwrap_or(0),
                    cache_write_tokens: count(usage.cache_write_tokens).unwrap_or(0),
                    cost: usage.cost,
                    duration_ms: count(usage.duration),
                    agent_id,
                });
            }
            Kind::SessionStart => {
                if let Some(model) = event.read::<SessionStartData>().data.selected_model {
                    self.selected_model = Some(model);
                }
            }
            Kind::SessionModelChange => {
                let change = event.read::<SessionModelChangeData>();
                if !untyped::lacks_new_model(&change) {
                    self.selected_model = Some(change.data.new_model);
                }
            }
            Kind::SessionError => {
                let error = event.read::<SessionErrorData>();
                let lacks_type = untyped::lacks_error_type(&error);
                let SessionErrorData {
                    error_type,
                    message,
                    ..
                } = error.data;
                self.ev.session_errors.push(if lacks_type {
                    message
                } else {
                    format!("{error_type}: {message}")
                });
            }
            Kind::SessionIdle if agent_id.is_none() => self.ev.idle = true,
            _ => {}
        }
    }

    /// An `assistant.message`: its tool requests are tracked; a root agent's message is a turn.
    fn assistant_message(&mut self, event: &RawEvent, agent_id: Option<String>) {
        let (message, requests) = untyped::assistant_message(event);
        let content = message.content;
        let mut ids = Vec::new();
        for request in requests {
            if untyped::lacks_tool_call_id(&request) {
                self.ev
                    .capture_errors
                    .push("assistant.message has a tool request without toolCallId".into());
                continue;
            }
            let request = request.data;
            let arguments = parse_arguments(request.arguments.as_ref());
            track(
                &mut self.ev,
                &mut self.index,
                &request.tool_call_id,
                &request.name,
                arguments,
                agent_id.clone(),
            );
            ids.push(request.tool_call_id);
        }
        if agent_id.is_none() {
            self.last_root_message = Some((content.clone(), !ids.is_empty()));
            self.ev.turns.push(Turn {
                role: Role::Assistant,
                content,
                tool_call_ids: ids,
            });
        }
    }

    /// A `tool.execution_complete`: the known call's outcome, result and duration; an unknown
    /// or twice-completed call is a capture error.
    fn tool_complete(&mut self, logged: &LoggedEvent) {
        let done = logged.event.read::<ToolExecutionCompleteData>();
        let ev = &mut self.ev;
        if untyped::lacks_tool_call_id(&done) {
            ev.capture_errors
                .push("tool.execution_complete without toolCallId".into());
            return;
        }
        let lacks_success = done.lacks("success");
        let done = done.data;
        let id = done.tool_call_id;
        let Some(&i) = self.index.get(&id) else {
            ev.capture_errors
                .push(format!("completion for unknown tool call {id}"));
            return;
        };
        let call = &mut ev.tool_calls[i];
        if call.completed {
            ev.capture_errors
                .push(format!("tool call {id} completed twice"));
            return;
        }
        call.completed = true;
        call.success = (!lacks_success).then_some(done.success);
        if call.success.is_none() {
            ev.capture_errors
                .push(format!("tool call {id} completion has no success flag"));
        }
        let (result, structured) = match done.result {
            Some(result) => (Some(result.content), result.structured_content),
            None => (None, None),
        };
        call.result = result;
        call.structured_content = structured.filter(|v| !v.is_null());
        call.telemetry = untyped::tool_telemetry(&logged.event);
        call.cut_for_model = call
            .telemetry
            .as_ref()
            .and_then(|t| untyped::cut_for_model(t, call.result.as_deref()));
        call.error = done.error.map(|e| match e.code {
            Some(code) => format!("{} ({code})", e.message),
            None => e.message,
        });
        if let Some(start) = self.started_at.get(&id) {
            call.duration_ms = Some(
                logged
                    .received
                    .saturating_duration_since(*start)
                    .as_millis() as u64,
            );
        }
    }
}

/// Register a tool call, or check a known one keeps its identity.
fn track(
    ev: &mut Evidence,
    index: &mut HashMap<String, usize>,
    id: &str,
    name: &str,
    arguments: Value,
    agent_id: Option<String>,
) {
    match index.get(id) {
        Some(&i) => {
            let call = &mut ev.tool_calls[i];
            if call.name.is_empty() {
                call.name = name.to_owned();
            } else if !name.is_empty() && call.name != name {
                ev.capture_errors.push(format!(
                    "tool call {id} changed name from {} to {name}",
                    call.name
                ));
            }
            if call.arguments.is_null() {
                call.arguments = arguments;
            }
            if call.agent_id.is_none() {
                call.agent_id = agent_id;
            }
        }
        None => {
            index.insert(id.to_owned(), ev.tool_calls.len());
            ev.tool_calls
                .push(ToolCall::started(id, name, arguments, agent_id));
        }
    }
}

/// A count the SDK types as `i64`, as the evidence's `u64`; `None` when absent or negative.
fn count(n: Option<i64>) -> Option<u64> {
    n.and_then(|n| u64::try_from(n).ok())
}

/// Tool arguments arrive as an object or as a JSON string; invalid JSON stays a string.
fn parse_arguments(value: Option<&Value>) -> Value {
    match value {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(events: &[(&str, Option<&str>, Value)]) -> Vec<LoggedEvent> {
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
                received: Instant::now(),
            })
            .collect()
    }

    #[test]
    fn maps_a_tool_turn_then_an_answer() {
        let ev = map_events(&log(&[
            ("session.start", None, json!({"selectedModel": "m0"})),
            ("user.message", None, json!({"content": "do it"})),
            (
                "assistant.message",
                None,
                json!({"content": "", "toolRequests": [{"toolCallId": "c1", "name": "echo", "arguments": "{\"x\":1}"}]}),
            ),
            (
                "tool.execution_start",
                None,
                json!({"toolCallId": "c1", "toolName": "echo", "arguments": {"x": 1}}),
            ),
            (
                "tool.execution_complete",
                None,
                json!({"toolCallId": "c1", "success": true, "result": {"content": "ok"}}),
            ),
            (
                "assistant.usage",
                None,
                json!({"model": "m1", "inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 3, "cacheWriteTokens": 4, "cost": 1.0, "duration": 5}),
            ),
            ("model.call_finished", None, json!({"whatever": true})),
            ("assistant.message", None, json!({"content": "done"})),
            ("session.idle", None, json!({})),
        ]));
        assert!(ev.complete(), "{:?}", ev.capture_errors);
        assert!(ev.idle);
        assert_eq!(ev.final_response.as_deref(), Some("done"));
        assert_eq!(ev.model_used.as_deref(), Some("m1"));
        assert_eq!(ev.turns.len(), 3);
        assert_eq!(ev.turns[1].tool_call_ids, ["c1"]);
        let call = &ev.tool_calls[0];
        assert_eq!(call.arguments, json!({"x": 1}));
        assert_eq!(call.result.as_deref(), Some("ok"));
        assert_eq!(call.success, Some(true));
        assert_eq!(ev.usage[0].cache_write_tokens, 4);
        assert_eq!(ev.usage[0].duration_ms, Some(5));
    }

    #[test]
    fn incomplete_and_uncorrelated_calls_are_capture_errors() {
        let ev = map_events(&log(&[
            (
                "assistant.message",
                None,
                json!({"content": "", "toolRequests": [{"toolCallId": "c1", "name": "echo", "arguments": {}}]}),
            ),
            (
                "tool.execution_complete",
                None,
                json!({"toolCallId": "zz", "success": true}),
            ),
        ]));
        assert!(!ev.complete());
        assert_eq!(
            ev.final_response, None,
            "a session ending on tool requests has no answer"
        );
        assert!(
            ev.capture_errors
                .iter()
                .any(|e| e.contains("unknown tool call zz"))
        );
        assert!(
            ev.capture_errors
                .iter()
                .any(|e| e.contains("c1 (echo) has no completion"))
        );
    }

    #[test]
    fn subagent_calls_keep_their_agent_and_stay_out_of_root_turns() {
        let ev = map_events(&log(&[
            (
                "assistant.message",
                Some("agent-7"),
                json!({"content": "sub", "toolRequests": [{"toolCallId": "s1", "name": "view", "arguments": {}}]}),
            ),
            (
                "tool.execution_complete",
                Some("agent-7"),
                json!({"toolCallId": "s1", "success": false, "error": {"message": "denied", "code": "denied"}}),
            ),
            (
                "session.error",
                None,
                json!({"errorType": "model", "message": "boom"}),
            ),
        ]));
        assert!(ev.turns.is_empty());
        assert_eq!(ev.tool_calls[0].agent_id.as_deref(), Some("agent-7"));
        assert_eq!(ev.tool_calls[0].error.as_deref(), Some("denied (denied)"));
        assert_eq!(ev.session_errors, ["model: boom"]);
    }

    /// An event the SDK's type refuses (a required field lacking) still maps as before: a call
    /// without id or success flag is a named capture error, the other requests of a message
    /// still count, a lacking model, new model or error type reads as absent; a whole event
    /// reads through the SDK's type, the telemetry kept in the runtime's key order.
    #[test]
    fn partial_events_map_as_before_and_whole_ones_through_the_sdk_types() {
        let ev = map_events(&log(&[
            ("session.start", None, json!({"selectedModel": "m0"})),
            ("session.model_change", None, json!({"previousModel": "m0"})),
            (
                "assistant.message",
                None,
                json!({"content": "", "messageId": "m1", "toolRequests": [
                    {"toolCallId": "c1", "name": "echo", "arguments": {"x": 1}},
                    {"name": "lost"},
                    {"toolCallId": "c2", "name": "view"}
                ]}),
            ),
            ("tool.execution_start", None, json!({"toolName": "echo"})),
            (
                "tool.execution_complete",
                None,
                json!({"toolCallId": "c1", "result": {"content": "ok"},
                    "toolTelemetry": {"zeta": 1, "alpha": 2}}),
            ),
            (
                "tool.execution_complete",
                None,
                json!({"toolCallId": "c2", "success": false, "error": {"message": "no", "code": "denied"}}),
            ),
            ("tool.execution_complete", None, json!({"success": true})),
            ("assistant.usage", None, json!({"inputTokens": 7})),
            ("session.error", None, json!({"message": "boom"})),
        ]));
        assert_eq!(
            ev.capture_errors,
            [
                "assistant.message has a tool request without toolCallId",
                "tool.execution_start without toolCallId",
                "tool call c1 completion has no success flag",
                "tool.execution_complete without toolCallId",
            ]
        );
        assert_eq!(ev.turns[0].tool_call_ids, ["c1", "c2"]);
        let c1 = &ev.tool_calls[0];
        assert_eq!((c1.success, c1.result.as_deref()), (None, Some("ok")));
        let telemetry = serde_json::to_string(c1.telemetry.as_ref().unwrap()).unwrap();
        assert_eq!(
            telemetry, r#"{"zeta":1,"alpha":2}"#,
            "the runtime's key order"
        );
        assert_eq!(ev.tool_calls[1].error.as_deref(), Some("no (denied)"));
        assert_eq!(ev.tool_calls[1].success, Some(false));
        assert_eq!(
            (ev.usage[0].model.as_deref(), ev.usage[0].input_tokens),
            (None, 7)
        );
        assert_eq!(
            ev.model_used.as_deref(),
            Some("m0"),
            "no new model: still m0"
        );
        assert_eq!(ev.session_errors, ["boom"]);
    }
}
