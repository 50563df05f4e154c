//! Tool calls the runtime changes, end to end through the real runtime and a scripted model
//! (docs/results.md, "runtime_substitution"): a call the model sends with an empty name is
//! renamed `invalid_tool_call` by runtime 1.0.102 and answered "Tool name is missing or
//! empty". The evidence keeps the model's empty name with the runtime's next to it, and the
//! run stops `runtime_substitution` (an infrastructure stop), also when the session is recorded
//! through the stand-in and replayed from its cassette. A failed call of a real but unknown name
//! stays model behaviour: the run completes and the test decides. (A cut MCP tool name:
//! tests/tests/mcp.rs.)

use std::sync::Arc;

use copilot_eval_core::cassette::{CassetteHeader, Recorder, ReplaySession};
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::{Redactor, RunRecord};
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{MODEL, Offline, assert_no_runtime_left, runtime_for};
use serde_json::json;

/// Turn 1 calls a tool with an empty name, turn 2 answers.
fn nameless_script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call("", json!({"path": "a.txt"})))
        .turn(ScriptedTurn::text("done"))
}

/// The run stopped `runtime_substitution` for its one nameless call, named in `error`, in the
/// result and in the JSON record.
fn assert_nameless_substitution(result: &CopilotResult, label: &str) {
    assert_eq!(
        result.stop_reason,
        StopReason::RuntimeSubstitution,
        "{label}: {:?} {:#?}",
        result.error,
        result.tool_calls
    );
    assert!(!result.success, "{label}");
    assert_eq!(
        result.tool_calls.len(),
        1,
        "{label}: {:#?}",
        result.tool_calls
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.name, "", "{label}: the name as the model called it");
    assert_eq!(
        call.runtime_name.as_deref(),
        Some("invalid_tool_call"),
        "{label}"
    );
    assert_eq!(call.success, Some(false), "{label}");
    let answer = call.error.clone().unwrap_or_default();
    assert!(
        answer.contains("Tool name is missing or empty"),
        "{label}: {answer}"
    );
    let error = result.error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "runtime substitution: tool call {} had no name; the runtime renamed it `invalid_tool_call`",
            call.id
        )),
        "{label}: {error}"
    );
    let record = RunRecord::from_result(result, "scripted");
    assert!(record.is_infrastructure_stop(), "{label}");
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(value["stop_reason"], "runtime_substitution", "{label}");
    assert_eq!(value["tool_calls"][0]["name"], "", "{label}");
    assert_eq!(
        value["tool_calls"][0]["runtime_name"], "invalid_tool_call",
        "{label}"
    );
}

#[tokio::test]
async fn a_nameless_tool_call_keeps_the_empty_name_and_stops_as_a_runtime_substitution() {
    let Some(runtime) = runtime_for(
        "a_nameless_tool_call_keeps_the_empty_name_and_stops_as_a_runtime_substitution",
    ) else {
        return;
    };
    let offline = Offline::start(&runtime, nameless_script()).await;
    let eval = offline.eval().build().unwrap();
    let result = offline.run(&eval, "Read a.txt.").await;
    assert_nameless_substitution(&result, "scripted");
    // The runtime's own history sent back to the model holds its name, not the model's.
    let requests = offline.server.model_requests();
    assert_eq!(requests.len(), 2, "the session went on after the call");
    let history = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(history.contains("invalid_tool_call"), "{history}");
}

#[tokio::test]
async fn a_failed_call_of_a_real_unknown_name_stays_the_models_and_completes() {
    let Some(runtime) =
        runtime_for("a_failed_call_of_a_real_unknown_name_stays_the_models_and_completes")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("no_such_tool", json!({})))
        .turn(ScriptedTurn::text("done"));
    let offline = Offline::start(&runtime, script).await;
    let eval = offline.eval().build().unwrap();
    let result = offline.run(&eval, "Go.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    let call = &result.tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.runtime_name.as_deref()),
        ("no_such_tool", None)
    );
    assert_eq!(call.success, Some(false), "{call:?}");
}

#[tokio::test]
async fn a_nameless_tool_call_recorded_then_replayed_stops_as_a_runtime_substitution_both_times() {
    let Some(runtime) = runtime_for(
        "a_nameless_tool_call_recorded_then_replayed_stops_as_a_runtime_substitution_both_times",
    ) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let recording_dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(ServerConfig::new(Arc::new(nameless_script())).model(MODEL))
        .await
        .unwrap();
    let recorder = Recorder::new();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(recording_dir.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let recorded = run_with(
        &eval,
        "Read a.txt.",
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert_no_runtime_left(&recorded);
    assert_nameless_substitution(&recorded, "recording");
    let cassette = recorder
        .cassette(CassetteHeader::default(), &Redactor::default())
        .unwrap();
    let path = scratch.path().join("nameless.yaml");
    cassette
        .write(&path, "recorded by the substitutions test")
        .unwrap();

    let replay_dir = tempfile::tempdir().unwrap();
    let session = ReplaySession::start(&path).await.unwrap();
    let eval = CopilotEval::builder()
        .model(session.model())
        .working_directory(replay_dir.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let replayed = run_with(
        &eval,
        "Read a.txt.",
        &session.run_options().runtime_path(&runtime.path),
    )
    .await;
    let unconsumed = session.unconsumed();
    session.shutdown().await;
    assert_no_runtime_left(&replayed);
    assert!(unconsumed.is_empty(), "{unconsumed:?}");
    assert_nameless_substitution(&replayed, "replay");
}
