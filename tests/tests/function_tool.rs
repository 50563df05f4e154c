//! `tools::function_tool` through the real runtime: a handler's `Err` reaches the model as the
//! Copilot SDKs report a failing handler (a fixed text, no internal detail) while the evidence
//! keeps the full error; `function_tool_showing_errors` lets the model read the error text. A
//! handler's `Err` is the tool's failure and the run completes; a handler's panic is a bug in the
//! test's own code and ends the run as `execution_error` naming the tool and the panic.
//! `function_tool_structured` returns the SDK's whole result: a failure whose text the model
//! reads, its error and its telemetry, all in the evidence and the JSON record.

use copilot_eval_core::StopReason;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::Tool;
use copilot_eval_core::sdk::ToolResultExpanded;
use copilot_eval_core::tools::{
    HIDDEN_TOOL_ERROR, function_tool, function_tool_showing_errors, function_tool_structured,
};
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
    // An `Err` is the tool's failure, for the model to handle: the run itself completes.
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert!(result.success, "{:?}", result.error);
    assert_eq!(result.final_response.as_deref(), Some("sorry"));
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

/// A handler that panics: the bug of the test's own code, never hidden behind a completed run.
async fn panics(_: Value) -> Result<String, String> {
    panic!("no forecast for station 5521")
}

/// A handler's panic stops the run at once: the model-request gate closes before the failure
/// result reaches the runtime, so the request that would carry it is held back, never
/// forwarded; the run ends as `execution_error`, not a success, with an error naming the tool
/// and the panic message. The panic stays in `tool_handler_failures` and the call is a failed
/// call in the evidence.
#[tokio::test]
async fn a_panicking_handler_ends_the_run_with_an_error_naming_it() {
    let Some(runtime) = runtime_for("a_panicking_handler_ends_the_run_with_an_error_naming_it")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("get_weather", json!({"key": "a"})))
        .turn(ScriptedTurn::text("It is sunny."));
    let offline = Offline::start(&runtime, script).await;
    let tool = function_tool("get_weather", "Get the weather.", params(), panics);
    let eval = offline.eval().tool(tool).build().unwrap();
    let result = offline.run(&eval, "What is the weather?").await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(!result.success);
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("the tool handler `get_weather` panicked: no forecast for station 5521"),
        "{error}"
    );
    assert_eq!(
        result.tool_handler_failures,
        ["tool handler get_weather panicked: no forecast for station 5521"]
    );
    // No model request after the panic was forwarded: the one carrying the result was held.
    assert_eq!(
        offline.server.model_requests().len(),
        1,
        "{:?}",
        result.error
    );
    assert_eq!(result.model_requests_held_back, 1);
    assert_ne!(result.final_response.as_deref(), Some("It is sunny."));
    let call = &result.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.success, Some(false), "{call:?}");
    assert!(call.completed, "{call:?}");
    assert!(result.evidence_complete, "{:?}", result.capture_errors);
}

#[tokio::test]
async fn a_structured_result_keeps_its_type_error_and_telemetry_in_the_evidence() {
    let Some(runtime) =
        runtime_for("a_structured_result_keeps_its_type_error_and_telemetry_in_the_evidence")
    else {
        return;
    };
    let tool = function_tool_structured("fetch", "Fetch a value.", params(), |args| async move {
        let key = args["key"].as_str().unwrap_or_default().to_owned();
        ToolResultExpanded::new(format!("no value under {key}; try key b"), "failure")
            .with_error(format!("missing key {key}"))
            .with_tool_telemetry(
                [(
                    "properties".to_owned(),
                    json!({"lookup_source": "fixture-table"}),
                )]
                .into(),
            )
    });
    let (seen_by_model, result) = run_failing(&runtime, tool).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert!(
        seen_by_model.contains("no value under a; try key b"),
        "the model reads the result's own text: {seen_by_model}"
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.success, Some(false), "{call:?}");
    assert!(
        call.error
            .as_deref()
            .is_some_and(|e| e.contains("missing key a")),
        "{call:?}"
    );
    assert_eq!(
        call.telemetry
            .as_ref()
            .and_then(|t| t.pointer("/properties/lookup_source")),
        Some(&json!("fixture-table")),
        "the runtime's toolTelemetry is in the evidence: {call:?}"
    );
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    let value = serde_json::to_value(&record).unwrap();
    // The JSON keeps the runtime's telemetry out: its measures change from run to run.
    assert!(
        value["tool_calls"][0].get("telemetry").is_none(),
        "{}",
        value["tool_calls"][0]
    );
    assert_eq!(value["tool_calls"][0]["success"], false);
}
