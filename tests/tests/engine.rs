//! The engine end to end: real runtime, loopback model server, every wire format.

use std::sync::{Arc, Mutex};

use copilot_eval_core::model_server::{
    ModelServer, Script, ScriptedTurn, ScriptedUsage, ServerConfig, WireApi,
};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::{Value, json};

/// The catalog model id. The runtime picks its built-in tool set by model family: `claude-*`
/// models get `create`/`edit`/`view`; some other ids get `apply_patch` (docs/model-server.md).
const MODEL: &str = "claude-sonnet-4.5";

const USAGE: [ScriptedUsage; 3] = [
    ScriptedUsage {
        input_tokens: 1200,
        output_tokens: 31,
        cache_read_tokens: 400,
        cache_write_tokens: 0,
    },
    ScriptedUsage {
        input_tokens: 1350,
        output_tokens: 57,
        cache_read_tokens: 1024,
        cache_write_tokens: 0,
    },
    ScriptedUsage {
        input_tokens: 1500,
        output_tokens: 12,
        cache_read_tokens: 1300,
        cache_write_tokens: 0,
    },
];

/// The scripted conversation: a custom tool, the built-in file creation tool, then an answer.
fn tool_then_file_script(file: &std::path::Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call("lookup_code", json!({"name": "alpha"})).with_usage(USAGE[0]))
        .turn(
            ScriptedTurn::tool_call(
                "create",
                json!({"path": file.to_str().unwrap(), "file_text": "code=ALPHA-42\n"}),
            )
            .with_usage(USAGE[1]),
        )
        .turn(ScriptedTurn::text("Wrote the code to out.txt.").with_usage(USAGE[2]))
}

async fn tool_then_file(wire: WireApi, streaming: bool) {
    let test = format!("tool_then_file({wire:?}, streaming={streaming})");
    let Some(runtime) = runtime_for(&test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("out.txt");
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(tool_then_file_script(&file)))
            .wire_api(wire)
            .model(MODEL),
    )
    .await
    .unwrap();

    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen_by_handler = seen.clone();
    let lookup = function_tool(
        "lookup_code",
        "Look up the code of a named item.",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        move |args| {
            let seen = seen_by_handler.clone();
            async move {
                seen.lock().unwrap().push(args);
                Ok("ALPHA-42".to_owned())
            }
        },
    );
    let eval = CopilotEval::builder()
        .name("tool-then-file")
        .model(MODEL)
        .working_directory(work.path())
        .streaming(streaming)
        .timeout_s(60.0)
        .tool(lookup)
        .build()
        .unwrap();

    let result = run_with(
        &eval,
        "Look up the code of alpha and write it to out.txt.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;

    assert!(
        result.success,
        "{test}: {:?} {:?}",
        result.stop_reason, result.error
    );
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);
    // Independent checks: the file on disk and what our handler observed.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "code=ALPHA-42\n");
    assert_eq!(result.file("out.txt").unwrap(), "code=ALPHA-42\n");
    assert_eq!(*seen.lock().unwrap(), vec![json!({"name": "alpha"})]);
    // The recorded trace.
    let names: Vec<&str> = result.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["lookup_code", "create"]);
    assert!(result.tool_was_called_with("lookup_code", &json!({"name": "alpha"})));
    assert!(result.tool_was_called_with("create", &json!({"file_text": "code=ALPHA-42\n"})));
    assert_eq!(result.tool_calls[0].result.as_deref(), Some("ALPHA-42"));
    assert!(
        result
            .tool_calls
            .iter()
            .all(|c| c.completed && c.success == Some(true))
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("Wrote the code to out.txt.")
    );
    let usage: Vec<_> = result
        .usage
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
            )
        })
        .collect();
    let scripted: Vec<_> = USAGE
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
            )
        })
        .collect();
    assert_eq!(usage, scripted, "usage per model call equals the script");
    assert_eq!(result.model_used.as_deref(), Some(MODEL));
    // Every model request went to the loopback server, in the expected format.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.wire == wire));
    // Over HTTP the body's `stream` flag follows the session; WebSocket turns always stream.
    let expected_streaming = streaming || wire == WireApi::WebSocketResponses;
    let flags: Vec<bool> = requests.iter().map(|r| r.streaming).collect();
    assert_eq!(
        flags, [expected_streaming; 3],
        "{test}: stream flag per request"
    );
    if wire == WireApi::WebSocketResponses {
        assert_continuations(&requests);
    } else {
        let previous: Vec<_> = requests.iter().map(|r| &r.previous_response_id).collect();
        assert_eq!(
            previous,
            [&None, &None, &None],
            "{test}: HTTP turns resend everything"
        );
    }
    assert_no_runtime_left(&result);
}

/// Each WebSocket turn after the first continues the response before it: it names that
/// response in `previous_response_id` and sends only the new input items (the tool output), not
/// the user's prompt again; the server rebuilds the whole conversation from the stored response.
fn assert_continuations(requests: &[copilot_eval_core::model_server::ModelRequest]) {
    assert_eq!(
        requests[0].previous_response_id, None,
        "the first turn starts fresh"
    );
    // The server names its responses `resp_<turn>` (model_server/websocket.rs), so turn n+1
    // continues `resp_n`.
    for (n, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(
            request.previous_response_id.as_deref(),
            Some(format!("resp_{n}").as_str()),
            "turn {} continues the response before it",
            n + 1
        );
        let input = request.body["input"].as_array().expect("input items");
        let kinds: Vec<&str> = input
            .iter()
            .filter_map(|item| item["type"].as_str())
            .collect();
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| k.ends_with("_output")),
            "turn {} sends only the tool output as new input: {input:?}",
            n + 1
        );
        // The rebuilt conversation still holds the prompt and the earlier tool calls.
        assert!(
            request
                .last_user_text()
                .is_some_and(|t| t.contains("Look up the code of alpha")),
            "turn {}: {:?}",
            n + 1,
            request.messages
        );
        assert_eq!(request.tool_results().len(), n, "turn {}", n + 1);
    }
}

#[tokio::test]
async fn chat_completions_json() {
    tool_then_file(WireApi::ChatCompletions, false).await;
}

#[tokio::test]
async fn chat_completions_sse() {
    tool_then_file(WireApi::ChatCompletions, true).await;
}

#[tokio::test]
async fn responses_json() {
    tool_then_file(WireApi::Responses, false).await;
}

#[tokio::test]
async fn responses_sse() {
    tool_then_file(WireApi::Responses, true).await;
}

#[tokio::test]
async fn websocket_responses_continuations() {
    tool_then_file(WireApi::WebSocketResponses, false).await;
}
