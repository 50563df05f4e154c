//! How runs end when something goes wrong: each ends in its documented stop reason and error,
//! promptly, with no runtime process left behind.

use std::sync::Arc;
use std::time::{Duration, Instant};

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{after_the_session, assert_no_runtime_left, runtime_for};

const MODEL: &str = "claude-sonnet-4.5";

async fn server(script: Script) -> ModelServer {
    ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap()
}

/// Offline options against `base_url` whose eval clock starts once the session was created
/// (the returned clock says when), so a slow runtime start on a loaded machine cannot use up a
/// timeout row's timeout before the model request; `a_timeout_before_the_prompt_is_an_infrastructure_stop`
/// tests the real origin.
fn clocked(base_url: String, runtime: &std::path::Path) -> (RunOptions, SessionClock) {
    let clock = SessionClock::default();
    let options = RunOptions::offline(base_url)
        .runtime_path(runtime)
        .test_faults(TestFaults {
            clock_starts_at_session: Some(clock.clone()),
            ..TestFaults::default()
        });
    (options, clock)
}

fn eval(work: &std::path::Path, timeout_s: f64) -> CopilotEval {
    CopilotEval::builder()
        .model(MODEL)
        .working_directory(work)
        .timeout_s(timeout_s)
        .build()
        .unwrap()
}

#[tokio::test]
async fn scripted_model_error_is_an_execution_error() {
    let Some(runtime) = runtime_for("scripted_model_error_is_an_execution_error") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let server = server(Script::new([]).error(400, "scripted bad request")).await;
    let result = run_with(
        &eval(work.path(), 60.0),
        "Say hello.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert!(!result.success);
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap();
    assert!(error.contains("session.error"), "{error}");
    assert_eq!(result.final_response, None);
    // After the session's creation (the runtime's start does not count): well before the 60 s
    // timeout.
    let after = after_the_session(&result);
    assert!(
        after < Duration::from_secs(30),
        "a model error ends the run promptly, not at the timeout: {after:?}"
    );
    assert_no_runtime_left(&result);
}

/// From the session's creation ([`clocked`]): ample for the prompt to reach the model on a
/// loaded machine, so the model request is always made before the timeout (the test checks it
/// was).
const NEVER_ANSWERS_TIMEOUT_S: f64 = 20.0;
/// Bound on cleanup after the timeout (abort, graceful stop, kill and the leftover check).
const CLEANUP_BOUND: Duration = Duration::from_secs(40);

#[tokio::test]
async fn model_that_never_answers_times_out() {
    let Some(runtime) = runtime_for("model_that_never_answers_times_out") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let server = server(Script::new([]).hang()).await;
    let (options, clock) = clocked(server.base_url(), &runtime.path);
    let result = run_with(
        &eval(work.path(), NEVER_ANSWERS_TIMEOUT_S),
        "Say hello.",
        &options,
    )
    .await;
    let elapsed = clock.started().expect("the session was created").elapsed();
    assert!(!result.success);
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "{:?}",
        result.error
    );
    assert!(
        result
            .error
            .as_deref()
            .unwrap()
            .contains("timed out after 20s")
    );
    assert!(elapsed >= Duration::from_secs(20), "{elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(20) + CLEANUP_BOUND,
        "cleanup is bounded: {elapsed:?}"
    );
    assert_eq!(
        server.model_requests().len(),
        1,
        "the request was made and never answered"
    );
    // The server's log holds it with status 0: never answered (docs/faults.md).
    let statuses: Vec<u16> = server
        .requests()
        .iter()
        .filter(|r| {
            r.path.ends_with("/chat/completions")
                || (r.path.ends_with("/responses") && r.method != "GET")
        })
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [0], "{:?}", server.requests());
    assert_no_runtime_left(&result);
}

/// The clock starts before the runtime does, and a timeout that strikes before the prompt was
/// sent (here while the runtime is still starting) is an infrastructure stop, never the agent's
/// `timeout`: the agent was not tested.
#[tokio::test]
async fn a_timeout_before_the_prompt_is_an_infrastructure_stop() {
    let Some(runtime) = runtime_for("a_timeout_before_the_prompt_is_an_infrastructure_stop") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let server = server(Script::new([]).turn(ScriptedTurn::text("hi"))).await;
    // Far too short to even start the runtime.
    let result = run_with(
        &eval(work.path(), 0.05),
        "Say hello.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(result.stop_reason.is_infrastructure());
    let error = result.error.clone().unwrap();
    assert!(
        error.starts_with("timed out after 0.05s (eval timeout_s) during runtime start"),
        "{error}"
    );
    assert!(error.contains("the prompt was never sent"), "{error}");
    assert!(result.turns.is_empty(), "{:?}", result.turns);
    assert!(server.model_requests().is_empty());
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn missing_runtime_is_an_execution_error_naming_the_fix() {
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("no-such-copilot");
    let result = run_with(
        &eval(work.path(), 30.0),
        "Say hello.",
        &RunOptions::offline("http://127.0.0.1:9").runtime_path(&missing),
    )
    .await;
    assert!(!result.success);
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.unwrap();
    assert!(
        error.contains(&format!("no Copilot runtime at {}", missing.display()))
            && error.contains("cargo copilot-eval runtime install"),
        "the error names the path and the fix: {error}"
    );
    assert!(result.raw_events.is_empty());
    assert_eq!(result.runtime_pid, None);
}

#[tokio::test]
async fn invalid_field_fails_at_build_and_starts_nothing() {
    let Some(runtime) = runtime_for("invalid_field_fails_at_build_and_starts_nothing") else {
        return;
    };
    let err = CopilotEval::builder()
        .model(MODEL)
        .reasoning_effort("extreme")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "reasoning_effort");
    assert!(err.to_string().contains("low, medium, high, xhigh, max"));

    // A session-time rejection (the escape hatch overriding a mapped field) is an execution
    // error before any runtime process starts.
    let work = tempfile::tempdir().unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .extra_session_config(|c| c.with_model("other"))
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Say hello.",
        &RunOptions::offline("http://127.0.0.1:9").runtime_path(&runtime.path),
    )
    .await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    assert!(result.error.unwrap().contains("extra_session_config"));
    assert_eq!(result.runtime_pid, None, "no runtime was started");
}

#[tokio::test]
async fn a_process_that_outlives_the_runtime_is_killed_and_is_a_cleanup_error() {
    let Some(runtime) =
        runtime_for("a_process_that_outlives_the_runtime_is_killed_and_is_a_cleanup_error")
    else {
        return;
    };
    // A runtime wrapper that leaves a detached child behind, carrying the run's environment.
    let work = tempfile::tempdir().unwrap();
    let wrapper = work.path().join("copilot-with-straggler");
    let pid_file = work.path().join("straggler.pid");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nsetsid sleep 300 </dev/null >/dev/null 2>&1 &\necho $! > '{}'\nexec '{}' \"$@\"\n",
            pid_file.display(),
            runtime.path.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    let server = server(Script::new([]).turn(ScriptedTurn::text("hi"))).await;
    // The wrapper runs the runtime from its own install, which the wrapper's path does not
    // name: the sandbox is told to let the session read it.
    let install = (runtime.path.ancestors())
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .and_then(std::path::Path::parent)
        .unwrap_or_else(|| runtime.path.parent().unwrap());
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(60.0)
        .sandbox_allow_read(install)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Say hi.",
        &RunOptions::offline(server.base_url()).runtime_path(&wrapper),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::CleanupError,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("hi"),
        "the session itself completed"
    );
    let error = result.error.unwrap();
    assert!(
        error.contains("outlived the stop and were killed"),
        "{error}"
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The kill was sent before run returned; wait for the kernel to carry it out (an event, with
    // an ample bound), not for a fixed time.
    let gone = |stat: &str| stat.is_empty() || stat.contains(") Z");
    let bound = Instant::now() + Duration::from_secs(30);
    let mut stat = String::new();
    while Instant::now() < bound {
        stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if gone(&stat) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone(&stat), "the straggler {pid} was killed: {stat}");
}

#[tokio::test]
async fn a_slow_model_stream_past_the_timeout_is_a_timeout() {
    let Some(runtime) = runtime_for("a_slow_model_stream_past_the_timeout_is_a_timeout") else {
        return;
    };
    for wire in [
        copilot_eval_core::model_server::WireApi::ChatCompletions,
        copilot_eval_core::model_server::WireApi::WebSocketResponses,
    ] {
        let work = tempfile::tempdir().unwrap();
        let server = ModelServer::start(
            ServerConfig::new(Arc::new(Script::new([]).stall()))
                .model(MODEL)
                .wire_api(wire),
        )
        .await
        .unwrap();
        let eval = CopilotEval::builder()
            .model(MODEL)
            .working_directory(work.path())
            .streaming(true)
            // From the session's creation ([`clocked`]): ample for the prompt to reach the model
            // on a loaded machine: the stream must start (checked below) before the timeout.
            .timeout_s(20.0)
            .build()
            .unwrap();
        let (options, clock) = clocked(server.base_url(), &runtime.path);
        let result = run_with(&eval, "Say hello.", &options).await;
        assert_eq!(
            result.stop_reason,
            StopReason::Timeout,
            "{wire:?}: {:?}",
            result.error
        );
        assert_eq!(
            server.model_requests().len(),
            1,
            "{wire:?}: the stream started and stalled"
        );
        let elapsed = clock.started().expect("the session was created").elapsed();
        assert!(
            elapsed < Duration::from_secs(20) + CLEANUP_BOUND,
            "{wire:?}: {elapsed:?}"
        );
        assert_no_runtime_left(&result);
    }
}
