//! Continuing a tool call an earlier run left pending (the eval's `end_at_tool_call`) when the
//! session is resumed with `continue_pending_work(true)`: the calls still pending in the
//! resumed session's state ([`pending_calls`]) are run by the resumed eval's own handlers and
//! their results handed to the runtime by request id (the SDK's `handle_pending_tool_call`)
//! before the first prompt; the interrupted turn then goes on, and the run waits for it to end
//! ([`continue_calls`]).
//!
//! The runtime (1.0.102) does not send a pending call again to the client of a resumed
//! session: it waits for its result by request id, and the session does nothing else (a prompt
//! sent meanwhile is not answered) until it gets one.

use std::path::Path;
use std::sync::Arc;

use github_copilot_sdk::rpc::HandlePendingToolCallRequest;
use github_copilot_sdk::session::Session;
use github_copilot_sdk::session_events::{
    ExternalToolCompletedData, ExternalToolRequestedData, SessionEventType,
};
use github_copilot_sdk::{RequestId, SessionEvent, Tool, ToolInvocation, ToolResult};
use serde_json::Value;
use tokio::sync::watch;

use super::state::{Progress, RunState};

/// A tool call pending in a session's state: requested (`external_tool.requested`) and not
/// completed (`external_tool.completed`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PendingCall {
    /// The runtime's request id, the key of `handle_pending_tool_call`.
    pub(super) request_id: String,
    /// The model's tool call id (`call_1` ...).
    pub(super) tool_call_id: String,
    /// The tool's name.
    pub(super) tool_name: String,
    /// The call's arguments as the model gave them.
    pub(super) arguments: Value,
}

/// The tool calls pending in session `session_id`'s state under the runtime home `home`
/// (`session-state/<id>/events.jsonl`), in the order they were requested. Errors: the file
/// cannot be read (the text names it).
pub(super) fn pending_calls(home: &Path, session_id: &str) -> Result<Vec<PendingCall>, String> {
    let path = home
        .join("session-state")
        .join(session_id)
        .join("events.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "continuing pending work: the session's events ({}) cannot be read: {e}",
            path.display()
        )
    })?;
    Ok(pending_in(&text))
}

/// Whether the call with the runtime's request id `request_id` is pending in session
/// `session_id`'s state under `home` ([`pending_calls`]): the runtime has written its request
/// and no completion.
pub(super) fn is_pending(home: &Path, session_id: &str, request_id: &str) -> bool {
    pending_calls(home, session_id)
        .is_ok_and(|calls| calls.iter().any(|call| call.request_id == request_id))
}

/// The pending calls of an `events.jsonl` text, read through the SDK's event types (a line
/// that is not an event is skipped).
fn pending_in(events: &str) -> Vec<PendingCall> {
    let mut pending: Vec<PendingCall> = Vec::new();
    for event in events
        .lines()
        .filter_map(|line| serde_json::from_str::<SessionEvent>(line).ok())
    {
        match event.parsed_type() {
            SessionEventType::ExternalToolRequested => {
                if let Some(data) = event.typed_data::<ExternalToolRequestedData>() {
                    pending.push(PendingCall {
                        request_id: data.request_id.to_string(),
                        tool_call_id: data.tool_call_id,
                        tool_name: data.tool_name,
                        arguments: data.arguments.unwrap_or(Value::Null),
                    });
                }
            }
            SessionEventType::ExternalToolCompleted => {
                if let Some(data) = event.typed_data::<ExternalToolCompletedData>() {
                    let id = data.request_id.to_string();
                    pending.retain(|call| call.request_id != id);
                }
            }
            _ => {}
        }
    }
    pending
}

/// Run each pending call through the resumed eval's handler of its tool (`tools`: the run's
/// wrapped tools) and hand the result to the runtime; then wait for the interrupted turn the
/// results let go on to end (its `session.idle`).
///
/// Errors: the resumed eval has no handler for a pending call's tool (the text names the tool
/// and the fix), the runtime refused or failed a result, or the event stream closed first.
pub(super) async fn continue_calls(
    calls: &[PendingCall],
    tools: &[Tool],
    session: &Arc<Session>,
    run: &mut RunState,
    progress_rx: &watch::Receiver<Progress>,
) -> Result<(), String> {
    if calls.is_empty() {
        return Ok(());
    }
    run.prompt_sent = true;
    let idles_before = progress_rx.borrow().idles;
    for call in calls {
        let Some(handler) = tools
            .iter()
            .find(|t| t.name == call.tool_name)
            .and_then(|t| t.handler())
        else {
            return Err(format!(
                "continuing pending work: the earlier run left a call of the tool `{}` pending ({}), and the resumed eval has no handler for that tool; give the resumed eval the tool (tool(...)), or resume without continue_pending_work",
                call.tool_name, call.tool_call_id
            ));
        };
        let mut invocation = ToolInvocation::default();
        invocation.session_id = session.id().clone();
        invocation.tool_call_id = call.tool_call_id.clone();
        invocation.tool_name = call.tool_name.clone();
        invocation.arguments = call.arguments.clone();
        invocation.request_id = Some(RequestId::from(call.request_id.clone()));
        // A text result is a JSON string, an expanded one its object (the SDK's wire shape).
        let (result, error) = match handler.call(invocation).await {
            Ok(result) => (
                Some(serde_json::to_value::<ToolResult>(result).map_err(|e| e.to_string())?),
                None,
            ),
            Err(e) => (None, Some(e.to_string())),
        };
        let request = HandlePendingToolCallRequest {
            request_id: RequestId::from(call.request_id.clone()),
            result,
            error,
        };
        let handled = session
            .rpc()
            .tools()
            .handle_pending_tool_call(request)
            .await
            .map_err(|e| format!("continuing pending work: handing the result of `{}` ({}) to the runtime failed: {e}", call.tool_name, call.tool_call_id))?;
        if !handled.success {
            return Err(format!(
                "continuing pending work: the runtime refused the result of `{}` ({}): it no longer had that call pending",
                call.tool_name, call.tool_call_id
            ));
        }
    }
    super::turns::wait_until_done(progress_rx.clone(), idles_before).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A requested call is pending until a completion with its request id; a completion of
    /// another call does not settle it.
    #[test]
    fn a_call_is_pending_until_its_own_completion() {
        let event = |kind: &str, data: Value| {
            json!({"id": "e", "timestamp": "2026-12-07T00:00:00Z", "parentId": null, "type": kind, "data": data})
                .to_string()
        };
        let requested = |request: &str, call: &str, tool: &str, arguments: Value| {
            let data = json!({"requestId": request, "sessionId": "s", "toolCallId": call, "toolName": tool, "arguments": arguments});
            event("external_tool.requested", data)
        };
        let events = [
            event("session.start", json!({})),
            requested("r1", "call_1", "a", json!({"x": 1})),
            requested("r2", "call_2", "b", json!({})),
            event("external_tool.completed", json!({"requestId": "r1"})),
        ]
        .join("\n");
        let pending = pending_in(&format!("{events}\nnot json\n"));
        assert_eq!(
            pending,
            vec![PendingCall {
                request_id: "r2".into(),
                tool_call_id: "call_2".into(),
                tool_name: "b".into(),
                arguments: json!({}),
            }]
        );
    }
}
