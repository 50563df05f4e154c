//! What the runtime substituted for what the model asked: tool calls whose failure is the
//! runtime's doing, not the model's ([`runtime_substitutions`]).
//!
//! Runtime 1.0.102, seen offline with a scripted model (tests/tests/substitutions.rs and
//! tests/tests/mcp.rs):
//! - a tool call the model sent with an empty name is renamed [`NAMELESS_CALL`] in every event
//!   (`assistant.message.toolRequests[].name`, `tool.execution_start.toolName`), its completion
//!   fails "Tool name is missing or empty" and carries the telemetry flag
//!   `wasNamelessToolCall`; the runtime's own history then differs from what the model sent;
//! - an MCP tool reaches the model as `<server>-<tool>` cut to 64 characters
//!   ([`crate::customization::mcp_names::model_tool_name`]); a call with the full name fails "Tool '...' does not exist".
//!
//! Decision: both are the runtime's doing, so such a failed call ends the run with the stop
//! reason `runtime_substitution` (an infrastructure stop, never `completed`). The cut name
//! counts because the full name is the name the server advertises and the one a reader of the
//! server's (or our) documentation would use; the model did not invent it. A failed call with
//! any other unknown name is what the model really asked: it stays model behaviour, for the
//! test to judge.

use github_copilot_sdk::session_events::ToolExecutionCompleteData;

use super::mcp::McpServerState;
use super::{RawEvent, SessionEventType, ToolCall, untyped};

/// The name runtime 1.0.102 gives a tool call the model sent with an empty name.
pub const NAMELESS_CALL: &str = "invalid_tool_call";

/// Set [`ToolCall::runtime_name`] on each call where the runtime used another name than the
/// model's (restoring the model's empty name of a nameless call), and return one line for each
/// such call that failed: the causes of a `runtime_substitution` stop. `events` is the run's
/// event log, `servers` the configured MCP servers with the tools the check before the prompt
/// listed.
pub fn runtime_substitutions<'a>(
    calls: &mut [ToolCall],
    events: impl IntoIterator<Item = &'a RawEvent>,
    servers: &[McpServerState],
) -> Vec<String> {
    let nameless: Vec<String> = events
        .into_iter()
        .filter(|e| e.kind() == SessionEventType::ToolExecutionComplete)
        .filter(|e| untyped::tool_telemetry(e).is_some_and(|t| untyped::was_nameless(&t)))
        .map(|e| e.read::<ToolExecutionCompleteData>())
        .filter(|done| !untyped::lacks_tool_call_id(done))
        .map(|done| done.data.tool_call_id)
        .collect();
    let mut causes = Vec::new();
    for call in calls.iter_mut() {
        if call.name == NAMELESS_CALL && nameless.contains(&call.id) {
            call.name = String::new();
            call.runtime_name = Some(NAMELESS_CALL.to_owned());
            if call.success != Some(true) {
                causes.push(format!(
                    "runtime substitution: tool call {} had no name; the runtime renamed it `{NAMELESS_CALL}` and answered the model: {}",
                    call.id,
                    call.error.as_deref().unwrap_or("(no answer)")
                ));
            }
            continue;
        }
        let cut = servers.iter().find_map(|server| {
            server
                .tools
                .iter()
                .find(|t| t.model_name != call.name && t.full_name(&server.name) == call.name)
                .map(|t| (server, t))
        });
        if let Some((server, tool)) = cut {
            call.runtime_name = Some(tool.model_name.clone());
            if call.success != Some(true) {
                causes.push(format!(
                    "runtime substitution: tool call {} called `{}`, the full name of MCP tool `{}` of server `{}`; the runtime gave the model that tool as `{}` (cut to 64 characters) and answered: {}",
                    call.id,
                    call.name,
                    tool.name,
                    server.name,
                    tool.model_name,
                    call.error.as_deref().unwrap_or("(no answer)")
                ));
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::evidence::mcp::McpTool;

    fn call(id: &str, name: &str, success: bool) -> ToolCall {
        ToolCall {
            success: Some(success),
            error: (!success).then(|| "failed".to_owned()),
            completed: true,
            ..ToolCall::started(id, name, Value::Null, None)
        }
    }

    fn completion(id: &str, nameless: bool) -> RawEvent {
        RawEvent {
            event_type: "tool.execution_complete".into(),
            id: String::new(),
            timestamp: String::new(),
            agent_id: None,
            ephemeral: false,
            data: json!({"toolCallId": id, "success": false,
                "toolTelemetry": {"properties": {"wasNamelessToolCall": nameless.to_string()}}}),
        }
    }

    #[test]
    fn nameless_and_cut_calls_are_the_runtimes_and_other_unknown_names_the_models() {
        let long = "t".repeat(60);
        let server = McpServerState {
            name: "fixture".into(),
            status: "connected".into(),
            tool_count: Some(1),
            error: None,
            optional: false,
            tools: vec![
                McpTool::new("fixture", &long),
                McpTool::new("fixture", "lookup"),
            ],
            warnings: vec![],
            offered_tools: None,
            received_calls: None,
        };
        let cut = server.tools[0].model_name.clone();
        let mut calls = vec![
            call("c1", NAMELESS_CALL, false),
            call("c2", &format!("fixture-{long}"), false),
            call("c3", "no_such_tool", false),
            call("c4", NAMELESS_CALL, false),
            call("c5", &cut, true),
            call("c6", "fixture-lookup", false),
        ];
        let events = [completion("c1", true), completion("c4", false)];
        let causes = runtime_substitutions(&mut calls, &events, &[server]);
        let names: Vec<(&str, Option<&str>)> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.runtime_name.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("", Some(NAMELESS_CALL)),
                (format!("fixture-{long}").as_str(), Some(cut.as_str())),
                ("no_such_tool", None),
                (NAMELESS_CALL, None),
                (cut.as_str(), None),
                ("fixture-lookup", None),
            ],
            "a call really named invalid_tool_call (no telemetry flag) keeps its name"
        );
        assert_eq!(causes.len(), 2, "{causes:#?}");
        assert!(
            causes[0].contains("tool call c1 had no name"),
            "{}",
            causes[0]
        );
        assert!(causes[1].contains(&format!("the runtime gave the model that tool as `{cut}`")));
    }
}
