//! Product paths that only run when something fails, end to end through the real runtime: tool
//! handlers that return an error or panic, and what `excluded_tools` hides from the model.

use std::sync::Arc;
use std::time::Duration;

use copilot_eval_core::StopReason;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::tool::ToolHandler;
use copilot_eval_core::sdk::{Error, Tool, ToolInvocation, ToolResult};
use copilot_eval_e2e::{Offline, runtime_for, runtime_processes};
use serde_json::json;
use tokio::sync::Notify;

/// A tool handler that fails the way an SDK handler can: an `Err` or a panic. `started` orders
/// the two of one turn: the erring handler says it started, and the panicking one panics only
/// then. The runtime runs a turn's tool calls concurrently, and a panic closes the handlers
/// (one that has not started by then refuses to start), so without the order the `Err` would
/// be recorded only when its call happened to arrive first.
struct Failing {
    panic: bool,
    started: Arc<Notify>,
}

#[async_trait::async_trait]
impl ToolHandler for Failing {
    async fn call(&self, _: ToolInvocation) -> Result<ToolResult, Error> {
        if self.panic {
            // Wait for the event; the bound only keeps a broken runtime from hanging the test.
            let _ = tokio::time::timeout(Duration::from_secs(120), self.started.notified()).await;
            panic!("kaboom 9921");
        }
        self.started.notify_one();
        Err(Error::from(std::io::Error::other("db down 4417")))
    }
}

fn failing_tool(name: &str, panic: bool, started: &Arc<Notify>) -> Tool {
    Tool::new(name)
        .with_description("Fails.")
        .with_parameters(json!({"type": "object", "properties": {}}))
        .with_handler(Arc::new(Failing {
            panic,
            started: started.clone(),
        }))
}

/// Two calls in one turn, one handler returning an error and one panicking: both failures are
/// recorded in full and both calls are failed calls in the evidence. The panic (a bug in the
/// test's own code) ends the run as `execution_error` naming the tool, and the model request
/// carrying the results is held back (see `function_tool.rs` for an `Err` alone, which the model
/// reads and the run completes).
#[tokio::test]
async fn handlers_that_error_or_panic_are_recorded_and_the_panic_ends_the_run() {
    let Some(runtime) =
        runtime_for("handlers_that_error_or_panic_are_recorded_and_the_panic_ends_the_run")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("broken", json!({})).with_tool_call("boom", json!({})))
        .turn(ScriptedTurn::text("both failed"));
    let offline = Offline::start(&runtime, script).await;
    let started = Arc::new(Notify::new());
    let eval = offline
        .eval()
        .tool(failing_tool("broken", false, &started))
        .tool(failing_tool("boom", true, &started))
        .build()
        .unwrap();
    let result = offline.run(&eval, "Call both tools.").await;
    // The panic fails the run, naming the tool and the message.
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("the tool handler `boom` panicked: kaboom 9921"),
        "{error}"
    );
    // Both failures are recorded, in full, for the test.
    let failures = &result.tool_handler_failures;
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures.contains(&"tool handler broken failed: db down 4417".to_owned()),
        "{failures:?}"
    );
    assert!(
        failures.contains(&"tool handler boom panicked: kaboom 9921".to_owned()),
        "{failures:?}"
    );
    // Each call is a failed call in the evidence.
    for (name, text) in [("broken", "db down 4417"), ("boom", "kaboom 9921")] {
        let call = result
            .tool_calls
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} is in the evidence: {:#?}", result.tool_calls));
        assert_eq!(call.success, Some(false), "{call:?}");
        assert!(call.completed, "{call:?}");
        assert!(
            call.error.as_deref().is_some_and(|e| e.contains(text)),
            "{call:?}"
        );
    }
    // The model request carrying the results was not forwarded.
    assert_eq!(offline.server.model_requests().len(), 1);
    assert_ne!(result.final_response.as_deref(), Some("both failed"));
}

#[tokio::test]
async fn excluded_tools_are_not_offered_to_the_model() {
    let Some(runtime) = runtime_for("excluded_tools_are_not_offered_to_the_model") else {
        return;
    };
    for excluded in [false, true] {
        let offline =
            Offline::start(&runtime, Script::new([]).turn(ScriptedTurn::text("hi"))).await;
        let mut builder = offline.eval();
        if excluded {
            builder = builder.excluded_tools(["create"]);
        }
        let result = offline.run(&builder.build().unwrap(), "Hello.").await;
        assert!(result.success, "{:?}", result.error);
        let first = &offline.server.model_requests()[0];
        assert!(
            first.has_tool("view"),
            "the other built-in tools stay offered"
        );
        assert_eq!(
            first.has_tool("create"),
            !excluded,
            "excluded_tools {excluded}: create offered = {}",
            first.has_tool("create")
        );
    }
}

/// A runtime that stops answering (frozen with SIGSTOP by a tool handler, as a hung process
/// would be) after the eval's timeout: the abort is given up after its bound, the graceful stop
/// too, and the runtime is killed; both are cleanup errors and no process is left.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_runtime_that_hangs_is_given_up_on_and_killed() {
    let Some(runtime) = runtime_for("a_runtime_that_hangs_is_given_up_on_and_killed") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("freeze", json!({})))
        .turn(ScriptedTurn::text("never"));
    let offline = Offline::start(&runtime, script).await;
    let frozen: Arc<std::sync::Mutex<Vec<u32>>> = Arc::default();
    let record = frozen.clone();
    let workdir = offline.work.path().to_path_buf();
    let eval = offline
        .eval()
        // From the session's creation (the runtime's start does not count): ample for the
        // first tool call on a loaded machine.
        .timeout_s(30.0)
        .tool(copilot_eval_core::tools::function_tool(
            "freeze",
            "Freezes the runtime.",
            json!({"type": "object", "properties": {}}),
            move |_| {
                let record = record.clone();
                let workdir = workdir.clone();
                async move {
                    let pids = runtime_processes(&workdir);
                    for pid in &pids {
                        let status = std::process::Command::new("kill")
                            .args(["-STOP", &pid.to_string()])
                            .status()
                            .map_err(|e| e.to_string())?;
                        assert!(status.success(), "kill -STOP {pid}");
                    }
                    *record.lock().unwrap() = pids;
                    Ok("frozen".to_owned())
                }
            },
        ))
        .build()
        .unwrap();
    let faults = copilot_eval_core::run::TestFaults {
        clock_starts_at_session: Some(copilot_eval_core::run::SessionClock::default()),
        ..Default::default()
    };
    let result = copilot_eval_core::run_with(
        &eval,
        "Freeze.",
        &copilot_eval_core::RunOptions::offline(offline.server.base_url())
            .runtime_path(&runtime.path)
            .test_faults(faults),
    )
    .await;
    let frozen = frozen.lock().unwrap().clone();
    assert!(
        !frozen.is_empty(),
        "the handler found the runtime to freeze"
    );
    assert_eq!(
        result.stop_reason,
        StopReason::CleanupError,
        "{:?}",
        result.error
    );
    let errors = &result.cleanup_errors;
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("session abort took longer than")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("the runtime did not stop within")
                && e.ends_with("it was killed")),
        "{errors:?}"
    );
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("timeout")),
        "the timeout is reported too: {:?}",
        result.error
    );
    for pid in frozen {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        assert!(
            matches!(state, None | Some('Z') | Some('X')),
            "runtime process {pid} is still alive: {stat}"
        );
    }
}
