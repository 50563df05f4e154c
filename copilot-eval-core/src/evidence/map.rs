//! The event mapper: [`map_events`], from the recorded event log to [`Evidence`].

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;

use super::skills::{SkillInvocation, skill_invocations};
use super::subagents::{SubagentInvocation, map_subagents};
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
        let data = &event.data;
        let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
        match event.kind() {
            Kind::UserMessage if agent_id.is_none() => {
                self.ev.turns.push(Turn {
                    role: Role::User,
                    content: str_field(data, "content").unwrap_or_default(),
                    tool_call_ids: vec![],
                });
            }
            Kind::AssistantMessage => self.assistant_message(data, agent_id),
            Kind::ToolExecutionStart => {
                let Some(id) = str_field(data, "toolCallId") else {
                    self.ev
                        .capture_errors
                        .push("tool.execution_start without toolCallId".into());
                    return;
                };
                let name = str_field(data, "toolName").unwrap_or_default();
                let arguments = parse_arguments(data.get("arguments"));
                track(
                    &mut self.ev,
                    &mut self.index,
                    &id,
                    &name,
                    arguments,
                    agent_id,
                );
                self.started_at.entry(id).or_insert(logged.received);
            }
            Kind::ToolExecutionComplete => self.tool_complete(logged),
            Kind::AssistantUsage => {
                let model = str_field(data, "model");
                if model.is_some() {
                    self.ev.model_used = model.clone();
                }
                self.ev.usage.push(Usage {
                    model,
                    input_tokens: u64_field(data, "inputTokens"),
                    output_tokens: u64_field(data, "outputTokens"),
                    cache_read_tokens: u64_field(data, "cacheReadTokens"),
                    cache_write_tokens: u64_field(data, "cacheWriteTokens"),
                    cost: data.get("cost").and_then(Value::as_f64),
                    duration_ms: data.get("duration").and_then(Value::as_u64),
                    agent_id,
                });
            }
            Kind::SessionStart => {
                if let Some(model) = str_field(data, "selectedModel") {
                    self.selected_model = Some(model);
                }
            }
            Kind::SessionModelChange => {
                if let Some(model) = str_field(data, "newModel") {
                    self.selected_model = Some(model);
                }
            }
            Kind::SessionError => {
                let message = str_field(data, "message").unwrap_or_default();
                self.ev
                    .session_errors
                    .push(match str_field(data, "errorType") {
                        Some(kind) => format!("{kind}: {message}"),
                        None => message,
                    });
            }
            Kind::SessionIdle if agent_id.is_none() => self.ev.idle = true,
            _ => {}
        }
    }

    /// An `assistant.message`: its tool requests are tracked; a root agent's message is a turn.
    fn assistant_message(&mut self, data: &Value, agent_id: Option<String>) {
        let content = str_field(data, "content").unwrap_or_default();
        let mut ids = Vec::new();
        for request in data
            .get("toolRequests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(id) = str_field(request, "toolCallId") else {
                self.ev
                    .capture_errors
                    .push("assistant.message has a tool request without toolCallId".into());
                continue;
            };
            let name = str_field(request, "name").unwrap_or_default();
            let arguments = parse_arguments(request.get("arguments"));
            track(
                &mut self.ev,
                &mut self.index,
                &id,
                &name,
                arguments,
                agent_id.clone(),
            );
            ids.push(id);
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
        let data = &logged.event.data;
        let ev = &mut self.ev;
        let Some(id) = str_field(data, "toolCallId") else {
            ev.capture_errors
                .push("tool.execution_complete without toolCallId".into());
            return;
        };
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
        call.success = data.get("success").and_then(Value::as_bool);
        if call.success.is_none() {
            ev.capture_errors
                .push(format!("tool call {id} completion has no success flag"));
        }
        call.result = data
            .get("result")
            .and_then(|r| r.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        call.cut_for_model = cut_for_model(data, call.result.as_deref());
        call.structured_content = data
            .get("result")
            .and_then(|r| r.get("structuredContent"))
            .filter(|v| !v.is_null())
            .cloned();
        call.telemetry = data.get("toolTelemetry").filter(|v| !v.is_null()).cloned();
        call.error = data.get("error").and_then(|e| {
            let message = str_field(e, "message")?;
            Some(match str_field(e, "code") {
                Some(code) => format!("{message} ({code})"),
                None => message,
            })
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

fn str_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn u64_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
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

/// What the completion `data` says about a result cut for the model: its telemetry's
/// `largeOutputWrittenToFile` is `"true"` with `largeOutputOriginalSizeBytes` (runtime
/// 1.0.102); `model_text` is what the model saw.
fn cut_for_model(data: &Value, model_text: Option<&str>) -> Option<super::events::CutForModel> {
    let properties = data.get("toolTelemetry")?.get("properties")?;
    let flag = properties.get("largeOutputWrittenToFile")?;
    if flag.as_str() != Some("true") && flag.as_bool() != Some(true) {
        return None;
    }
    let size = properties.get("largeOutputOriginalSizeBytes")?;
    let full_bytes = size
        .as_u64()
        .or_else(|| size.as_str().and_then(|s| s.trim().parse().ok()))?;
    Some(super::events::CutForModel {
        full_bytes,
        model_bytes: model_text.map_or(0, |t| t.len() as u64),
    })
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
}
