//! Tool-call budgets, caller guards and the drain, end to end through the real runtime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use copilot_eval_core::evidence::denial::DenialKind;
use copilot_eval_core::guard_fn;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::sdk::Tool;
use copilot_eval_core::sdk::hooks::PreToolUseOutput;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{Offline, after_the_session, assert_no_runtime_left, runtime_for};
use serde_json::json;

/// A `note` tool whose handler counts its calls.
fn note_tool(calls: Arc<AtomicUsize>) -> Tool {
    function_tool(
        "note",
        "Write down a note.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        move |_| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok("ok".to_owned())
            }
        },
    )
}

/// Turn 1 asks for three `note` calls in parallel, turn 2 for one more, turn 3 answers.
fn notes_script() -> Script {
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
    result: CopilotResult,
    handler_calls: usize,
    model_requests: usize,
}

async fn run_budget(
    budget: Option<u32>,
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
) -> Outcome {
    let offline = Offline::start(runtime, notes_script()).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut builder = offline.eval().tool(note_tool(calls.clone()));
    if let Some(budget) = budget {
        builder = builder.max_tool_calls(budget);
    }
    let result = offline
        .run(&builder.build().unwrap(), "Take the notes.")
        .await;
    Outcome {
        handler_calls: calls.load(Ordering::SeqCst),
        model_requests: offline.server.model_requests().len(),
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
        let Outcome {
            result,
            handler_calls,
            model_requests,
        } = run_budget(Some(budget), &runtime).await;
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
        // The request that would carry the results back was made, and held at the gate.
        assert_eq!(result.model_requests_held_back, 1, "{label}");
        let error = result.error.clone().unwrap();
        assert!(
            error.contains(&format!("max_tool_calls = {budget}")),
            "{label}: {error}"
        );
        // The call past the budget is in the evidence, marked as denied by the budget.
        let by_budget: Vec<_> = result
            .tool_calls
            .iter()
            .filter(|c| {
                c.denied
                    .as_ref()
                    .is_some_and(|d| d.kind == DenialKind::Budget)
            })
            .collect();
        assert_eq!(by_budget.len(), 1, "{label}: {:#?}", result.tool_calls);
        assert_ne!(by_budget[0].success, Some(true), "{label}");
        // The denial and the run's error word the budget stop the same way.
        let denial = by_budget[0].denied.as_ref().unwrap();
        assert!(
            error.contains(&denial.reason),
            "{label}: {error} / {denial}"
        );
        // Every other call either ran (admitted) or was denied because the eval had stopped.
        for call in &result.tool_calls {
            let kind = call.denied.as_ref().map(|d| d.kind);
            assert!(
                call.success == Some(true)
                    || matches!(kind, Some(DenialKind::Budget | DenialKind::Stopped))
                    || !call.completed,
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
        // After the session's creation (the runtime's start does not count): well before the
        // timeout.
        let after = after_the_session(&result);
        assert!(
            after < Duration::from_secs(30),
            "{label}: the stop is prompt: {after:?}"
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
    } = run_budget(None, &runtime).await;
    assert!(result.success, "{:?}", result.error);
    assert_eq!(result.tool_calls_admitted, 4);
    assert_eq!(handler_calls, 4);
    assert_eq!(model_requests, 3);
    assert_eq!(result.final_response.as_deref(), Some("noted"));
}

fn decision(decision: &str, reason: Option<&str>) -> Option<PreToolUseOutput> {
    Some(PreToolUseOutput {
        permission_decision: Some(decision.into()),
        permission_decision_reason: reason.map(str::to_owned),
        ..Default::default()
    })
}

#[tokio::test]
async fn a_guard_deny_reaches_the_model_and_the_session_goes_on() {
    let Some(runtime) = runtime_for("a_guard_deny_reaches_the_model_and_the_session_goes_on")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "secret"})))
        .turn(ScriptedTurn::text("could not note"));
    let offline = Offline::start(&runtime, script).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let eval = offline
        .eval()
        .max_tool_calls(5)
        .tool(note_tool(calls.clone()))
        .pre_tool_guard(guard_fn(|input| {
            Ok(if input.tool_args["text"] == "secret" {
                decision("deny", Some("no secrets"))
            } else {
                None
            })
        }))
        .pre_tool_guard(guard_fn(|_| Ok(decision("allow", None))))
        .build()
        .unwrap();
    let result = offline.run(&eval, "Note the secret.").await;
    assert!(result.success, "{:?}", result.error);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a later allow cannot override the deny"
    );
    assert_eq!(
        result.tool_calls_admitted, 0,
        "a denied call consumes no budget"
    );
    assert_eq!(result.tool_calls[0].success, Some(false));
    assert_eq!(
        result.tool_calls[0]
            .denied
            .as_ref()
            .map(|d| (d.kind, d.reason.as_str())),
        Some((DenialKind::Guard, "no secrets"))
    );
    // The model saw the denial in the next request.
    let second = &offline.server.model_requests()[1];
    let tool_message = second
        .messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the denied result goes back to the model");
    assert!(
        tool_message.to_string().contains("no secrets"),
        "{tool_message}"
    );
}

#[tokio::test]
async fn a_panicking_guard_is_an_execution_error() {
    let Some(runtime) = runtime_for("a_panicking_guard_is_an_execution_error") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "x"})))
        .turn(ScriptedTurn::text("done"));
    let offline = Offline::start(&runtime, script).await;
    let eval = offline
        .eval()
        .tool(note_tool(Arc::default()))
        .pre_tool_guard(guard_fn(|_| panic!("guard bug")))
        .build()
        .unwrap();
    let result = offline.run(&eval, "Note x.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(result.error.as_deref().unwrap().contains("guard bug"));
    assert_eq!(result.tool_calls_admitted, 0);
}

/// The eval's timeout, counted from the session's creation (a [`SessionClock`], so the runtime's
/// start does not count): ample for the first tool call on a loaded machine. The handler does
/// not race it: it runs until [`PAST_THE_DEADLINE`] after the deadline it reads from the clock,
/// so the timeout always falls while the handler is running.
const SLOW_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the slow handler outlives the eval's deadline.
const PAST_THE_DEADLINE: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_slow_handler_is_drained_before_run_returns() {
    let Some(runtime) = runtime_for("a_slow_handler_is_drained_before_run_returns") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("slow", json!({})))
        .turn(ScriptedTurn::text("done"));
    let offline = Offline::start(&runtime, script).await;
    let entered: Arc<Mutex<Option<Instant>>> = Arc::default();
    let finished: Arc<Mutex<Option<Instant>>> = Arc::default();
    let (enter, mark) = (entered.clone(), finished.clone());
    let clock = SessionClock::default();
    let handler_clock = clock.clone();
    let eval = offline
        .eval()
        .timeout_s(SLOW_TIMEOUT.as_secs_f64())
        .tool(function_tool(
            "slow",
            "Takes a while.",
            json!({"type": "object", "properties": {}}),
            move |_| {
                let (enter, mark) = (enter.clone(), mark.clone());
                let clock = handler_clock.clone();
                async move {
                    *enter.lock().unwrap() = Some(Instant::now());
                    let deadline = clock
                        .started()
                        .expect("the clock started before any tool call")
                        + SLOW_TIMEOUT;
                    let until = deadline + PAST_THE_DEADLINE;
                    tokio::time::sleep_until(until.into()).await;
                    *mark.lock().unwrap() = Some(Instant::now());
                    Ok("finally".to_owned())
                }
            },
        ))
        .build()
        .unwrap();
    let options = RunOptions::offline(offline.server.base_url())
        .runtime_path(&runtime.path)
        .test_faults(TestFaults {
            clock_starts_at_session: Some(clock.clone()),
            ..TestFaults::default()
        });
    let result = run_with(&eval, "Do the slow thing.", &options).await;
    let returned = Instant::now();
    assert_no_runtime_left(&result);
    let entered = entered.lock().unwrap().expect(
        "the handler was called before the timeout (the runtime took over 20 s from the session's creation to call the tool?)",
    );
    assert!(
        entered < clock.started().unwrap() + SLOW_TIMEOUT,
        "the handler was entered before the deadline"
    );
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
        "cleanup waited for the handler, {PAST_THE_DEADLINE:?} past the deadline: {:?}",
        result.timings
    );
    assert!(
        result.tool_handler_failures.is_empty(),
        "{:?}",
        result.tool_handler_failures
    );
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
    let offline = Offline::start(&runtime, script).await;
    let eval = offline
        .eval()
        .working_directory(work.path())
        .max_tool_calls(1)
        .build()
        .unwrap();
    let result = offline.run(&eval, "Create two files.").await;
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
    assert_eq!(offline.server.model_requests().len(), 2);
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
    let offline = Offline::start(&runtime, script).await;
    let eval = offline
        .eval()
        .working_directory(work.path())
        .max_tool_calls(1)
        .custom_agent(
            copilot_eval_core::sdk::CustomAgentConfig::new("writer", "You write files.")
                .with_description("Writes files"),
        )
        .build()
        .unwrap();
    let result = offline.run(&eval, "Have the writer write child.txt.").await;
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
            .as_ref()
            .is_some_and(|d| d.kind == DenialKind::Budget),
        "{denied:?}"
    );
}
