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
use github_copilot_sdk::{RequestId, Tool, ToolInvocation, ToolResult};
use serde_json::{Value, json};
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

/// The pending calls of an `events.jsonl` text (a line that is not an event is skipped).
fn pending_in(events: &str) -> Vec<PendingCall> {
    let mut pending: Vec<PendingCall> = Vec::new();
    for event in events
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
    {
        let data = &event["data"];
        let text = |key: &str| data[key].as_str().unwrap_or_default().to_owned();
        match event["type"].as_str() {
            Some("external_tool.requested") => pending.push(PendingCall {
                request_id: text("requestId"),
                tool_call_id: text("toolCallId"),
                tool_name: text("toolName"),
                arguments: data["arguments"].clone(),
            }),
            Some("external_tool.completed") => {
                let id = text("requestId");
                pending.retain(|call| call.request_id != id);
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
        let invocation: ToolInvocation = serde_json::from_value(json!({
            "sessionId": session.id().to_string(),
            "toolCallId": call.tool_call_id,
            "toolName": call.tool_name,
            "arguments": call.arguments,
            "requestId": call.request_id,
        }))
        .map_err(|e| format!("continuing pending work: the call cannot be built: {e}"))?;
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

    /// A requested call is pending until a completion with its request id; a completion of
    /// another call does not settle it.
    #[test]
    fn a_call_is_pending_until_its_own_completion() {
        let events = [
            json!({"type": "session.start", "data": {}}),
            json!({"type": "external_tool.requested", "data": {"requestId": "r1", "toolCallId": "call_1", "toolName": "a", "arguments": {"x": 1}}}),
            json!({"type": "external_tool.requested", "data": {"requestId": "r2", "toolCallId": "call_2", "toolName": "b", "arguments": {}}}),
            json!({"type": "external_tool.completed", "data": {"requestId": "r1"}}),
        ]
        .map(|e| e.to_string())
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
