//! Tool-call budgets, caller guards and the drain, end to end through the real runtime.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use copilot_eval_core::controls::guard_fn;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::sdk::hooks::PreToolUseOutput;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";

/// Turn 1 asks for three `note` calls in parallel, turn 2 for one more, turn 3 answers.
fn script() -> Script {
    Script::new([])
        .turn(
            ScriptedTurn::tool_call("note", json!({"text": "a"}))
                .with_tool_call("note", json!({"text": "b"}))
                .with_tool_call("note", json!({"text": "c"})),
        )
        .turn(ScriptedTurn::tool_call("note", json!({"text": "d"})))
        .turn(ScriptedTurn::text("noted"))
}

struct Outcome {
    result: copilot_eval_core::CopilotResult,
    handler_calls: usize,
    model_requests: usize,
}

async fn run_budget(budget: Option<i64>, runtime: &std::path::Path) -> Outcome {
    let work = tempfile::tempdir().unwrap();
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
        .await
        .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let mut builder = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .tool(function_tool(
            "note",
            "Write down a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            move |_| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok("ok".to_owned())
                }
            },
        ));
    if let Some(budget) = budget {
        builder = builder.max_tool_calls(budget);
    }
    let result = run_with(
        &builder.build().unwrap(),
        "Take the notes.",
        &RunOptions::offline(server.base_url()).runtime_path(runtime),
    )
    .await;
    assert_no_runtime_left(&result);
    Outcome {
        handler_calls: calls.load(Ordering::SeqCst),
        model_requests: server.model_requests().len(),
        result,
    }
}

#[tokio::test]
async fn budgets_stop_the_session_and_model_traffic() {
    let Some(runtime) = runtime_for("budgets_stop_the_session_and_model_traffic") else {
        return;
    };
    // (budget, admitted, model requests made before the stop)
    for (budget, admitted, requests) in [(0, 0, 1), (1, 1, 1), (3, 3, 2)] {
        let started = Instant::now();
        let Outcome {
            result,
            handler_calls,
            model_requests,
        } = run_budget(Some(budget), &runtime.path).await;
        let label = format!("budget {budget}");
        assert_eq!(
            result.stop_reason,
            StopReason::ToolBudgetExceeded,
            "{label}: {:?}",
            result.error
        );
        assert!(!result.success, "{label}");
        assert_eq!(result.tool_calls_admitted, admitted, "{label}");
        assert_eq!(
            handler_calls, admitted as usize,
            "{label}: only admitted calls ran"
        );
        assert_eq!(
            model_requests, requests,
            "{label}: no model request reached the server after the budget stop"
        );
        let error = result.error.clone().unwrap();
        assert!(
            error.contains(&format!("max_tool_calls = {budget}")),
            "{label}: {error}"
        );
        // The denied call is in the evidence as a failed call.
        // The call past the budget is in the evidence, marked as denied by the budget.
        let by_budget: Vec<_> = result
            .tool_calls
            .iter()
            .filter(|c| c.denied.as_deref().is_some_and(|d| d.contains("budget")))
            .collect();
        assert_eq!(by_budget.len(), 1, "{label}: {:#?}", result.tool_calls);
        assert_ne!(by_budget[0].success, Some(true), "{label}");
        // Every other call either ran (admitted) or was denied because the eval had stopped.
        for call in &result.tool_calls {
            assert!(
                call.success == Some(true) || call.denied.is_some() || !call.completed,
                "{label}: {call:?}"
            );
        }
        // Calls the abort cut short are reported as incomplete evidence, not hidden.
        if result.tool_calls.iter().any(|c| !c.completed) {
            assert!(!result.evidence_complete, "{label}");
        }
        let ok = result
            .tool_calls
            .iter()
            .filter(|c| c.success == Some(true))
            .count();
        assert_eq!(ok, admitted as usize, "{label}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{label}: the stop is prompt"
        );
        assert_eq!(result.final_response, None, "{label}");
    }
}

#[tokio::test]
async fn without_a_budget_every_call_runs() {
    let Some(runtime) = runtime_for("without_a_budget_every_call_runs") else {
        return;
    };
    let Outcome {
        result,
        handler_calls,
        model_requests,
    } = run_budget(None, &runtime.path).await;
    assert!(result.success, "{:?}", result.error);
    assert_eq!(result.tool_calls_admitted, 4);
    assert_eq!(handler_calls, 4);
    assert_eq!(model_requests, 3);
    assert_eq!(result.final_response.as_deref(), Some("noted"));
}

#[tokio::test]
async fn a_guard_deny_reaches_the_model_and_the_session_goes_on() {
    let Some(runtime) = runtime_for("a_guard_deny_reaches_the_model_and_the_session_goes_on")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "secret"})))
        .turn(ScriptedTurn::text("could not note"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .max_tool_calls(5)
        .tool(function_tool(
            "note",
            "Write down a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            move |_| {
                let flag = flag.clone();
                async move {
                    flag.store(true, Ordering::SeqCst);
                    Ok("ok".to_owned())
                }
            },
        ))
        .pre_tool_guard(guard_fn(|input| {
            Ok(
                (input.tool_args["text"] == "secret").then(|| PreToolUseOutput {
                    permission_decision: Some("deny".into()),
                    permission_decision_reason: Some("no secrets".into()),
                    ..Default::default()
                }),
            )
        }))
        .pre_tool_guard(guard_fn(|_| {
            Ok(Some(PreToolUseOutput {
                permission_decision: Some("allow".into()),
                ..Default::default()
            }))
        }))
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Note the secret.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    assert!(
        !ran.load(Ordering::SeqCst),
        "a later allow cannot override the deny"
    );
    assert_eq!(
        result.tool_calls_admitted, 0,
        "a denied call consumes no budget"
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.success, Some(false));
    // The model saw the denial in the next request.
    let second = &server.model_requests()[1];
    let tool_message = second
        .messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the denied result goes back to the model");
    assert!(
        tool_message.to_string().contains("no secrets"),
        "{tool_message}"
    );
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn a_panicking_guard_is_an_execution_error() {
    let Some(runtime) = runtime_for("a_panicking_guard_is_an_execution_error") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "x"})))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .tool(function_tool(
            "note",
            "Write down a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            |_| async { Ok("ok".to_owned()) },
        ))
        .pre_tool_guard(guard_fn(|_| panic!("guard bug")))
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Note x.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(result.error.as_deref().unwrap().contains("guard bug"));
    assert_eq!(result.tool_calls_admitted, 0);
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn a_slow_handler_is_drained_before_run_returns() {
    let Some(runtime) = runtime_for("a_slow_handler_is_drained_before_run_returns") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("slow", json!({})))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let finished: Arc<Mutex<Option<Instant>>> = Arc::default();
    let mark = finished.clone();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(3.0)
        .tool(function_tool(
            "slow",
            "Takes a while.",
            json!({"type": "object", "properties": {}}),
            move |_| {
                let mark = mark.clone();
                async move {
                    tokio::time::sleep(Duration::from_secs(6)).await;
                    *mark.lock().unwrap() = Some(Instant::now());
                    Ok("finally".to_owned())
                }
            },
        ))
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Do the slow thing.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    let returned = Instant::now();
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "{:?}",
        result.error
    );
    let finished = finished
        .lock()
        .unwrap()
        .expect("the handler ran to its end");
    assert!(
        finished <= returned,
        "the handler finished before run returned"
    );
    assert!(
        result.timings.cleanup_ms >= 2000,
        "cleanup outlasted the timeout: {:?}",
        result.timings
    );
    assert!(
        result.tool_handler_failures.is_empty(),
        "{:?}",
        result.tool_handler_failures
    );
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn built_in_tools_count_against_the_budget() {
    let Some(runtime) = runtime_for("built_in_tools_count_against_the_budget") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let first = work.path().join("first.txt");
    let second = work.path().join("second.txt");
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": first.to_str().unwrap(), "file_text": "one"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": second.to_str().unwrap(), "file_text": "two"}),
        ))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .max_tool_calls(1)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Create two files.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ToolBudgetExceeded,
        "{:?}",
        result.error
    );
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        "one",
        "the admitted call ran"
    );
    assert!(!second.exists(), "the denied built-in call did not run");
    assert_eq!(result.tool_calls_admitted, 1);
    assert_eq!(server.model_requests().len(), 2);
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn a_subagents_tool_calls_pass_the_same_budget() {
    let Some(runtime) = runtime_for("a_subagents_tool_calls_pass_the_same_budget") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("child.txt");
    // The main agent dispatches a subagent (1 call); the subagent's `create` is the 2nd call.
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write child.txt.", "description": "Write a file"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "from the subagent"}),
        ))
        .turn(ScriptedTurn::text("written"))
        .turn(ScriptedTurn::text("done"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .max_tool_calls(1)
        .custom_agent(
            copilot_eval_core::sdk::CustomAgentConfig::new("writer", "You write files.")
                .with_description("Writes files"),
        )
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Have the writer write child.txt.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ToolBudgetExceeded,
        "{:?}",
        result.error
    );
    assert_eq!(result.tool_calls_admitted, 1, "the task dispatch");
    assert!(
        !target.exists(),
        "the subagent's call was denied by the budget"
    );
    let denied = result
        .tool_calls
        .iter()
        .find(|c| c.name == "create")
        .expect("the subagent's call is in the evidence");
    assert!(denied.agent_id.is_some(), "attributed to the subagent");
    assert!(
        denied
            .denied
            .as_deref()
            .is_some_and(|d| d.contains("budget")),
        "{denied:?}"
    );
    assert_no_runtime_left(&result);
}
