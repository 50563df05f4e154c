//! `tools::function_tool` through the real runtime: a handler's `Err` reaches the model as the
//! Copilot SDKs report a failing handler (a fixed text, no internal detail) while the evidence
//! keeps the full error; `function_tool_showing_errors` lets the model read the error text.

use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::Tool;
use copilot_eval_core::tools::{HIDDEN_TOOL_ERROR, function_tool, function_tool_showing_errors};
use copilot_eval_e2e::{Offline, runtime_for};
use serde_json::{Value, json};

const INTERNAL: &str = "connection to db-7.internal:5432 refused (password authentication failed)";

fn params() -> Value {
    json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]})
}

/// Run one scripted call of `tool` (named `fetch`) then a text answer; return the tool message
/// the model read in its second request and the result.
async fn run_failing(
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    tool: Tool,
) -> (String, copilot_eval_core::CopilotResult) {
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("fetch", json!({"key": "a"})))
        .turn(ScriptedTurn::text("sorry"));
    let offline = Offline::start(runtime, script).await;
    let eval = offline.eval().tool(tool).build().unwrap();
    let result = offline.run(&eval, "Fetch a.").await;
    let requests = offline.server.model_requests();
    assert_eq!(requests.len(), 2, "{:?}", result.error);
    let tool_message = requests[1]
        .messages
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message in {:#?}", requests[1].messages));
    let content = match &tool_message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    (content, result)
}

#[tokio::test]
async fn a_handler_error_reaches_the_model_without_its_internal_text() {
    let Some(runtime) = runtime_for("a_handler_error_reaches_the_model_without_its_internal_text")
    else {
        return;
    };
    let tool = function_tool("fetch", "Fetch a value.", params(), |_| async {
        Err(INTERNAL.to_owned())
    });
    let (seen_by_model, result) = run_failing(&runtime, tool).await;
    assert!(
        seen_by_model.contains(HIDDEN_TOOL_ERROR),
        "the model read: {seen_by_model}"
    );
    assert!(
        !seen_by_model.contains("db-7.internal"),
        "internal text reached the model: {seen_by_model}"
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.success, Some(false), "{call:?}");
    assert!(
        call.error.as_deref().is_some_and(|e| e.contains(INTERNAL)),
        "the evidence keeps the full error: {call:?}"
    );
}

#[tokio::test]
async fn a_tool_showing_errors_lets_the_model_read_the_error_text() {
    let Some(runtime) = runtime_for("a_tool_showing_errors_lets_the_model_read_the_error_text")
    else {
        return;
    };
    let tool = function_tool_showing_errors("fetch", "Fetch a value.", params(), |_| async {
        Err("key `a` is not allowed; use one of b, c".to_owned())
    });
    let (seen_by_model, result) = run_failing(&runtime, tool).await;
    assert!(
        seen_by_model.contains("key `a` is not allowed"),
        "the model read: {seen_by_model}"
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.success, Some(false), "{call:?}");
    assert!(
        call.error
            .as_deref()
            .is_some_and(|e| e.contains("is not allowed")),
        "{call:?}"
    );
}
