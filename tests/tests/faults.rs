//! The fault matrix (docs/faults.md): each fault injected through the loopback model server or
//! through the process, each test asserting the outcome (status and stop reason), the evidence
//! kept, the artifacts written (JSON checked against the committed schema, JUnit parsed back), no
//! process left and the time bound (an upper bound only: the run ended before its timeout plus an
//! ample cleanup margin; never a lower bound a slow machine could break).
//!
//! The in-process rows run one eval through `run_with` against a scripted model server and write
//! the run's record through the product's own report writers; the runner rows drive the real
//! `cargo copilot-eval` command on the fixture crate (`tests/fixture`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use copilot_eval_core::eval::CopilotEvalBuilder;
use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::harness::{EVIDENCE_FORMAT, EvidenceStatus, TestEvidence};
use copilot_eval_core::model_server::{Script, ScriptedTurn, ServerConfig, WireApi};
use copilot_eval_core::report::{
    ExitRecord, Outcome, Redactor, RunRecord, RuntimeInfo, SCHEMA_VERSION, SuiteReport,
    SuiteTotals, TestRecord, ToolInfo, write_json, write_junit,
};
use copilot_eval_core::run::TestFaults;
use copilot_eval_core::{CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{
    Offline, assert_no_runtime_left, processes_with_env, runtime_for, runtime_processes,
};
use serde_json::{Value, json};

mod support;

/// Time allowed past an eval's timeout for the run's cleanup (abort, graceful stop, kill): an
/// ample upper bound, far above what cleanup takes on an idle machine (about a second).
const CLEANUP_MARGIN: Duration = Duration::from_secs(45);

/// The timeout of rows that end on their own: ample for the runtime's start on a loaded machine.
const LONG_TIMEOUT_S: f64 = 90.0;

/// The timeout of rows that only the timeout ends (stalls, hangs), counted from the session's
/// creation ([`session_clock`], so the runtime's start does not count): ample for the first model
/// request on a loaded machine (each such row checks the request was made).
const STALL_TIMEOUT_S: f64 = 30.0;

/// Run options whose eval clock starts once the session was created (test-only), for the rows
/// that only the timeout ends; `stops.rs` `a_timeout_before_the_prompt_is_an_infrastructure_stop`
/// tests the real origin.
fn session_clock(options: RunOptions) -> RunOptions {
    options.test_faults(TestFaults {
        clock_starts_at_session: Some(copilot_eval_core::run::SessionClock::default()),
        ..TestFaults::default()
    })
}

/// Run `eval` (built from the offline setup's builder) against `offline`, print what happened
/// (the row's measured behaviour, for docs/faults.md), and check the time bound, that no runtime
/// process is left and that the artifacts hold the run.
async fn run_row(
    row: &str,
    offline: &Offline,
    eval: CopilotEvalBuilder,
    prompt: &str,
    runtime: &Path,
) -> CopilotResult {
    run_row_with(row, offline, eval, prompt, runtime, |options| options).await
}

/// [`run_row`] with the run options changed by `options` (e.g. test-only faults, a recorder).
async fn run_row_with(
    row: &str,
    offline: &Offline,
    eval: CopilotEvalBuilder,
    prompt: &str,
    runtime: &Path,
    options: impl FnOnce(RunOptions) -> RunOptions,
) -> CopilotResult {
    let eval = eval.build().unwrap();
    let timeout = Duration::from_secs_f64(eval.timeout_s());
    let started = Instant::now();
    let result = run_with(
        &eval,
        prompt,
        &options(RunOptions::offline(offline.server.base_url()).runtime_path(runtime)),
    )
    .await;
    // The runtime's start and the session's creation do not count: a loaded machine may make
    // them slow, and a row with a [`session_clock`] starts its timeout after them.
    let before_session = Duration::from_millis(
        result.timings.runtime_start_ms.unwrap_or(0)
            + result.timings.create_session_ms.unwrap_or(0),
    );
    let elapsed = started.elapsed();
    eprintln!(
        "FAULT {row}: stop={} success={} error={:?} requests={} statuses={:?} elapsed={elapsed:?} final={:?} cleanup={:?} capture={:?}",
        result.stop_reason.as_str(),
        result.success,
        result.error,
        offline.server.model_requests().len(),
        offline
            .server
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("completions") || r.path.ends_with("responses"))
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        result.final_response,
        result.cleanup_errors,
        result.capture_errors,
    );
    assert!(
        elapsed.saturating_sub(before_session) < timeout + CLEANUP_MARGIN,
        "{row}: the run took {elapsed:?} ({before_session:?} of it to start the runtime and create the session), past its timeout {timeout:?} plus the cleanup margin"
    );
    assert_no_runtime_left(&result);
    assert_artifacts(row, &result, prompt);
    result
}

/// The outcome a test that asserts `result.success` must get for a run that ended with `stop`:
/// fixed per stop reason here, independent of the product's code (`passed` for a completed run,
/// `error` for an infrastructure stop, `failed` for a stop that is the eval's own failure).
fn expected_outcome(stop: StopReason) -> Outcome {
    match stop {
        StopReason::Completed => Outcome::Passed,
        StopReason::Timeout => Outcome::Failed,
        StopReason::ExecutionError | StopReason::CleanupError | StopReason::RequestAuditError => {
            Outcome::Error
        }
        other => panic!(
            "no fixed expectation for a row ending in {}: add it here",
            other.as_str()
        ),
    }
}

/// Write `result` as a one-test suite through the product's JSON and JUnit writers, then read
/// both back. The test's outcome is the product's: the runner's `classify` of a test process
/// that asserted `result.success` (exit 0 with its evidence `passed`, else exit 101 with it
/// `failed`), holding this run. Read back, the JSON validates against the committed schema and
/// holds the run's stop reason and error; its outcome is the row's fixed expectation
/// ([`expected_outcome`]); the JUnit parses and the test's status there is the one the JSON's
/// outcome calls for.
fn assert_artifacts(row: &str, result: &CopilotResult, prompt: &str) {
    let run = RunRecord::from_result(result, "scripted");
    let failure = (!result.success).then(|| format!("the run failed: {:?}", result.error));
    let evidence = TestEvidence {
        provenance: None,
        format: EVIDENCE_FORMAT.to_owned(),
        test_id: format!("faults::{row}::__copilot_eval"),
        name: row.to_owned(),
        status: if result.success {
            EvidenceStatus::Passed
        } else {
            EvidenceStatus::Failed
        },
        pid: std::process::id(),
        deadline_unix_ms: 0,
        mode: "replay".to_owned(),
        properties: Vec::new(),
        runs: vec![run.clone()],
        running: None,
        failure: failure.clone(),
        setup_error: None,
        workdir: None,
        workdir_kept: false,
        cassette: String::new(),
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        model: None,
        trial_ask: None,
        expectations: Vec::new(),
        skill_eval: None,
        trigger_query: None,
    };
    let exit = ExitRecord {
        code: Some(if result.success { 0 } else { 101 }),
        signal: None,
        killed_by_runner: false,
    };
    let verdict = copilot_eval_core::suite::executor::classify(
        &exit,
        Some(&evidence),
        copilot_eval_core::suite::DEFAULT_CLEANUP_BOUND,
        false,
    );
    let test = TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        name: row.to_owned(),
        test_id: format!("faults::{row}::__copilot_eval"),
        binary: "faults".to_owned(),
        outcome: verdict.outcome,
        error_kind: verdict.error_kind,
        duration_ms: result.duration_ms,
        message: verdict.message,
        properties: Vec::new(),
        runs: vec![run],
        workdir: None,
        cassette: None,
        exit: Some(exit),
        output: None,
        cost: None,
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        skill_eval: None,
        trigger_query: None,
        ablated: Vec::new(),
        expectations: Vec::new(),
    };
    let tests = vec![test];
    let report = SuiteReport {
        provenance: None,
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
        skill_lift: None,
        discrimination: None,
        judge_labels: None,
        noise_floor: None,
        baseline: None,
        schema_version: SCHEMA_VERSION.to_owned(),
        tool: ToolInfo {
            name: "copilot-eval".to_owned(),
            version: "faults".to_owned(),
        },
        runtime: RuntimeInfo {
            version: None,
            path: None,
            error: None,
        },
        mode: "replay".to_owned(),
        requested_mode: None,
        started_at: "2026-01-01T00:00:00Z".to_owned(),
        duration_ms: result.duration_ms,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        tests,
    };
    let dir = tempfile::tempdir().unwrap();
    let (json_path, junit_path) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let redactor = Redactor::with_secrets(Vec::new());
    write_json(&json_path, &report, &redactor).unwrap();
    write_junit(&junit_path, &report, &redactor).unwrap();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap())
        .unwrap_or_else(|e| panic!("{row}: the JSON does not parse back: {e}"));
    let problems = support::schema_problems(&value);
    assert!(problems.is_empty(), "{row}: {problems:#?}");
    let written = &value["tests"][0]["runs"][0];
    assert_eq!(written["stop_reason"], result.stop_reason.as_str(), "{row}");
    assert_eq!(written["error"], json!(result.error), "{row}");
    // The record is the result itself: its prompt is the one sent, whatever stopped the run.
    assert_eq!(written["prompt"], prompt, "{row}");
    let outcome: Outcome = serde_json::from_value(value["tests"][0]["outcome"].clone())
        .unwrap_or_else(|e| panic!("{row}: the JSON outcome does not parse: {e}"));
    assert_eq!(
        outcome,
        expected_outcome(result.stop_reason),
        "{row}: the outcome of a run ending in {} ({:?})",
        result.stop_reason.as_str(),
        value["tests"][0]["message"]
    );
    let xml = std::fs::read_to_string(&junit_path).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml)
        .unwrap_or_else(|e| panic!("{row}: the JUnit does not parse back: {e}\n{xml}"));
    let case = &junit.test_suites[0].test_cases[0];
    let status_ok = matches!(
        (&case.status, outcome),
        (quick_junit::TestCaseStatus::Success { .. }, Outcome::Passed)
            | (
                quick_junit::TestCaseStatus::NonSuccess {
                    kind: quick_junit::NonSuccessKind::Failure,
                    ..
                },
                Outcome::Failed,
            )
            | (
                quick_junit::TestCaseStatus::NonSuccess {
                    kind: quick_junit::NonSuccessKind::Error,
                    ..
                },
                Outcome::Error,
            )
    );
    assert!(
        status_ok,
        "{row}: the JUnit status does not match the JSON outcome {outcome:?}\n{xml}"
    );
}

/// A server with `script`, the catalog model and `wire`.
async fn offline(
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    script: Script,
    wire: WireApi,
) -> Offline {
    Offline::with_config(runtime, ServerConfig::new(Arc::new(script)).wire_api(wire)).await
}

/// The statuses the server answered model requests with, in order.
fn model_statuses(offline: &Offline) -> Vec<u16> {
    offline
        .server
        .requests()
        .iter()
        .filter(|r| {
            r.path.ends_with("/chat/completions")
                || (r.path.ends_with("/responses") && r.method != "GET")
        })
        .map(|r| r.status)
        .collect()
}

/// Whether the raw events hold a `session.error`.
fn has_session_error(result: &CopilotResult) -> bool {
    result
        .raw_events
        .iter()
        .any(|e| e.kind() == SessionEventType::SessionError)
}

// ---------------------------------------------------------------------------------------------
// Model server faults
// ---------------------------------------------------------------------------------------------

/// HTTP 500 (not retried: `x-should-retry: false`): the turn fails once, the run ends at once
/// as an execution error carrying the status and the server's message.
#[tokio::test]
async fn http_500_is_an_execution_error() {
    let Some(runtime) = runtime_for("http_500_is_an_execution_error") else {
        return;
    };
    let offline = offline(
        &runtime,
        Script::new([]).error(500, "fault matrix 500 marker"),
        WireApi::ChatCompletions,
    )
    .await;
    let eval = offline.eval().timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("http_500", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.as_deref().unwrap();
    assert!(
        error.contains("500") && error.contains("fault matrix 500 marker"),
        "{error}"
    );
    assert!(has_session_error(result));
    assert_eq!(model_statuses(&offline), [500]);
    assert_eq!(result.final_response, None);
}

/// A 429 with `retry-after: 1`, retryable: the runtime waits, asks again (the next scripted
/// reply) and the run completes; the 429 is in the server's log.
#[tokio::test]
async fn http_429_with_retry_after_is_retried_and_recovers() {
    let Some(runtime) = runtime_for("http_429_with_retry_after_is_retried_and_recovers") else {
        return;
    };
    let script = Script::new([])
        .rate_limited(1, "fault matrix slow down")
        .turn(ScriptedTurn::text("recovered after 429"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let eval = offline.eval().timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("http_429", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("recovered after 429")
    );
    assert_eq!(model_statuses(&offline), [429, 200]);
    let first = &offline
        .server
        .requests()
        .into_iter()
        .find(|r| r.status == 429)
        .unwrap();
    assert!(first.path.ends_with("/chat/completions"), "{first:?}");
}

/// The connection reset mid-stream (status and first bytes sent, then a TCP reset; the unit test
/// `a_disconnect_resets_the_connection_mid_body` shows a client reads `ECONNRESET`): the runtime
/// treats it as a transient failure, asks again and the run completes.
#[tokio::test]
async fn connection_cut_mid_stream() {
    let Some(runtime) = runtime_for("connection_cut_mid_stream") else {
        return;
    };
    let script = Script::new([])
        .disconnect()
        .turn(ScriptedTurn::text("recovered after the cut"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let eval = offline.eval().streaming(true).timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("reset", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("recovered after the cut")
    );
    assert_eq!(model_statuses(&offline), [200, 200]);
    assert_eq!(
        offline.server.connections_reset(),
        1,
        "the cut connection was reset"
    );
}

/// An SSE stream whose frames are not JSON: the runtime treats the failed parse as a transient
/// failure, asks again (the next scripted reply) and the run completes.
#[tokio::test]
async fn malformed_sse() {
    let Some(runtime) = runtime_for("malformed_sse") else {
        return;
    };
    let script = Script::new([])
        .malformed_sse()
        .turn(ScriptedTurn::text("recovered after garbage"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let eval = offline.eval().streaming(true).timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("malformed_sse", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("recovered after garbage")
    );
    assert_eq!(model_statuses(&offline), [200, 200]);
}

/// One row that only the timeout ends: `script` over `wire` (a streaming session), the eval's
/// 30 s timeout; the run is a `timeout` with no final response, and the one model request was
/// made (the fault started before the timeout).
async fn timeout_row(
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    row: &str,
    script: Script,
    wire: WireApi,
) {
    let offline = offline(runtime, script, wire).await;
    let eval = offline.eval().streaming(true).timeout_s(STALL_TIMEOUT_S);
    let result = &run_row_with(
        row,
        &offline,
        eval,
        "Say hello.",
        &runtime.path,
        session_clock,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "{row}: {:?}",
        result.error
    );
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("timed out after 30s")),
        "{row}: {:?}",
        result.error
    );
    assert_eq!(
        offline.server.model_requests().len(),
        1,
        "{row}: the request was made"
    );
    assert_eq!(result.final_response, None, "{row}");
}

/// A stream kept alive by SSE comments (HTTP) or pings (WebSocket) and nothing else: only the
/// eval's timeout ends it, promptly, as a timeout.
#[tokio::test]
async fn a_stream_kept_alive_past_the_timeout_is_a_timeout() {
    let Some(runtime) = runtime_for("a_stream_kept_alive_past_the_timeout_is_a_timeout") else {
        return;
    };
    for wire in [WireApi::ChatCompletions, WireApi::WebSocketResponses] {
        let script = Script::new([]).keep_alive_stall(Duration::from_millis(200));
        timeout_row(
            &runtime,
            &format!("keep_alive_stall_{wire:?}"),
            script,
            wire,
        )
        .await;
    }
}

/// A stream that stalls after its first bytes, and a model that never answers at all: each a
/// timeout (the same rows as stops.rs, here with the artifacts and the bound checked too).
#[tokio::test]
async fn a_stream_that_stalls_or_never_answers_is_a_timeout() {
    let Some(runtime) = runtime_for("a_stream_that_stalls_or_never_answers_is_a_timeout") else {
        return;
    };
    for wire in [WireApi::ChatCompletions, WireApi::WebSocketResponses] {
        let row = format!("stall_{wire:?}");
        timeout_row(&runtime, &row, Script::new([]).stall(), wire).await;
    }
    let hang = Script::new([]).hang();
    timeout_row(&runtime, "hang", hang, WireApi::ChatCompletions).await;
}

/// A WebSocket closed with code 1011 (internal error) after the first event: the runtime asks
/// again (the next scripted reply) and the run completes.
#[tokio::test]
async fn websocket_close_with_an_error_code() {
    let Some(runtime) = runtime_for("websocket_close_with_an_error_code") else {
        return;
    };
    let script = Script::new([])
        .websocket_close(1011, "fault matrix close")
        .turn(ScriptedTurn::text("recovered after the close"));
    let offline = offline(&runtime, script, WireApi::WebSocketResponses).await;
    let eval = offline.eval().timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("ws_close_1011", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(offline.server.model_requests().len(), 2);
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("recovered after the close")
    );
}

/// A WebSocket binary frame instead of the text events: the runtime asks again (the next
/// scripted reply) and the run completes.
#[tokio::test]
async fn websocket_binary_frame() {
    let Some(runtime) = runtime_for("websocket_binary_frame") else {
        return;
    };
    let script = Script::new([])
        .binary_frame()
        .turn(ScriptedTurn::text("recovered after binary"));
    let offline = offline(&runtime, script, WireApi::WebSocketResponses).await;
    let eval = offline.eval().timeout_s(LONG_TIMEOUT_S);
    let result = &run_row("ws_binary", &offline, eval, "Say hello.", &runtime.path).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("recovered after binary")
    );
    assert_eq!(offline.server.model_requests().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Process faults
// ---------------------------------------------------------------------------------------------

/// The runtime killed (SIGKILL) mid-session, by a tool handler while its call is in flight: an
/// execution error ("the runtime closed the event stream"), no cleanup error (nothing is left to
/// abort or stop), the call made before the kill kept and marked incomplete.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn runtime_killed_mid_session() {
    let Some(runtime) = runtime_for("runtime_killed_mid_session") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("kill_runtime", json!({})))
        .turn(ScriptedTurn::text("never"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let killed: Arc<Mutex<Vec<u32>>> = Arc::default();
    let record = killed.clone();
    let killed_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let mark = killed_at.clone();
    let workdir = offline.work.path().to_path_buf();
    let eval =
        offline
            .eval()
            .timeout_s(LONG_TIMEOUT_S)
            .tool(copilot_eval_core::tools::function_tool(
                "kill_runtime",
                "Kills the runtime.",
                json!({"type": "object", "properties": {}}),
                move |_| {
                    let (record, workdir) = (record.clone(), workdir.clone());
                    let mark = mark.clone();
                    async move {
                        let pids = runtime_processes(&workdir);
                        for pid in &pids {
                            let status = Command::new("kill")
                                .args(["-KILL", &pid.to_string()])
                                .status()
                                .map_err(|e| e.to_string())?;
                            assert!(status.success(), "kill -KILL {pid}");
                        }
                        *mark.lock().unwrap() = Some(Instant::now());
                        *record.lock().unwrap() = pids;
                        Ok("killed".to_owned())
                    }
                },
            ));
    let result = &run_row("runtime_killed", &offline, eval, "Kill it.", &runtime.path).await;
    assert!(
        !killed.lock().unwrap().is_empty(),
        "the handler found the runtime"
    );
    // The run ends on the kill (an event), not at its 90 s timeout: within 30 s of the kill,
    // cleanup and the artifact checks included (docs/faults.md).
    let since_kill = killed_at
        .lock()
        .unwrap()
        .expect("the handler killed")
        .elapsed();
    assert!(
        since_kill < Duration::from_secs(30),
        "the run ended {since_kill:?} after the kill"
    );
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("the runtime closed the event stream before session.idle")),
        "{:?}",
        result.error
    );
    assert!(
        result.cleanup_errors.is_empty(),
        "{:?}",
        result.cleanup_errors
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "kill_runtime")
        .expect("the call made before the kill is kept");
    assert!(!call.completed, "{call:?}");
    assert!(
        result
            .capture_errors
            .iter()
            .any(|e| e.contains("kill_runtime") && e.contains("has no completion")),
        "{:?}",
        result.capture_errors
    );
}

/// The runtime missing: an execution error naming the path and the fix, no process started.
#[tokio::test]
async fn runtime_missing() {
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("no-such-copilot");
    let server = copilot_eval_core::model_server::ModelServer::start(ServerConfig::new(Arc::new(
        Script::new([]),
    )))
    .await
    .unwrap();
    let eval = copilot_eval_core::CopilotEval::builder()
        .working_directory(work.path())
        .timeout_s(LONG_TIMEOUT_S)
        .build()
        .unwrap();
    let started = Instant::now();
    let result = run_with(
        &eval,
        "Say hello.",
        &RunOptions::offline(server.base_url()).runtime_path(&missing),
    )
    .await;
    assert!(
        started.elapsed() < CLEANUP_MARGIN,
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.as_deref().unwrap();
    assert!(
        error.contains(&missing.display().to_string())
            && error.contains("cargo copilot-eval runtime install"),
        "{error}"
    );
    assert_eq!(result.runtime_pid, None);
    assert!(server.model_requests().is_empty());
    assert_no_runtime_left(&result);
    assert_artifacts("runtime_missing", &result, "Say hello.");
}

/// A tool handler that never returns: the timeout ends the run, cleanup waits for the handler
/// (bounded), then reports it as a cleanup error naming it; the call is recorded as not completed
/// and `run_with` returns within its bound (the handler is not waited for forever).
#[tokio::test]
async fn a_tool_handler_that_hangs() {
    let Some(runtime) = runtime_for("a_tool_handler_that_hangs") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("hang", json!({})))
        .turn(ScriptedTurn::text("never"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let enter = entered.clone();
    let eval =
        offline
            .eval()
            .timeout_s(STALL_TIMEOUT_S)
            .tool(copilot_eval_core::tools::function_tool(
                "hang",
                "Never returns.",
                json!({"type": "object", "properties": {}}),
                move |_| {
                    let enter = enter.clone();
                    async move {
                        enter.store(true, std::sync::atomic::Ordering::SeqCst);
                        std::future::pending::<()>().await;
                        Ok("unreachable".to_owned())
                    }
                },
            ));
    let result = &run_row_with(
        "tool_hangs",
        &offline,
        eval,
        "Hang.",
        &runtime.path,
        session_clock,
    )
    .await;
    assert!(
        entered.load(std::sync::atomic::Ordering::SeqCst),
        "the handler was called before the timeout"
    );
    assert_eq!(
        result.stop_reason,
        StopReason::CleanupError,
        "{:?}",
        result.error
    );
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("timed out after 30s (eval timeout_s) in the tool handler of `hang`")
            && error.contains("tool handler hang still running 20s after the stop"),
        "{error}"
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "hang")
        .expect("the hanging call is in the evidence");
    assert!(!call.completed, "{call:?}");
}

// ---------------------------------------------------------------------------------------------
// Faults inside the run: test-only knobs (`RunOptions::test_faults`) reach the moments a real
// runtime and a scripted model cannot force
// ---------------------------------------------------------------------------------------------

/// A tool that returns once `ready` holds (checked every 20 ms, at most 60 s; then it fails).
fn tool_waiting_for(
    name: &'static str,
    ready: impl Fn() -> bool + Send + Sync + 'static,
) -> copilot_eval_core::sdk::Tool {
    let ready = Arc::new(ready);
    copilot_eval_core::tools::function_tool(
        name,
        "Returns once the test is ready.",
        json!({"type": "object", "properties": {}}),
        move |_| {
            let ready = ready.clone();
            async move {
                let deadline = Instant::now() + Duration::from_secs(60);
                while !ready() {
                    if Instant::now() > deadline {
                        return Err("the test never became ready".into());
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok("ready".to_owned())
            }
        },
    )
}

/// The event subscription lags: it holds 16 events and the recorder reads nothing until the
/// tool handler runs, by which time the runtime has sent more (about 35). The run reports
/// the loss (a capture error with the number of events lost, `evidence_complete` false) instead
/// of silently missing evidence, and otherwise goes on: the turn ends and the answer is kept.
#[tokio::test]
async fn event_stream_lag_is_reported() {
    let Some(runtime) = runtime_for("event_stream_lag_is_reported") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("release", json!({})))
        .turn(ScriptedTurn::text("done after the lag"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let hold = Arc::new(tokio::sync::Notify::new());
    let release = hold.clone();
    let eval = offline
        .eval()
        .timeout_s(LONG_TIMEOUT_S)
        .tool(tool_waiting_for("release", move || {
            release.notify_one();
            true
        }));
    let faults = TestFaults {
        event_buffer: Some(16),
        hold_event_recorder: Some(hold),
        ..TestFaults::default()
    };
    let result = &run_row_with(
        "event_stream_lag",
        &offline,
        eval,
        "Release.",
        &runtime.path,
        |options| options.test_faults(faults),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(result.final_response.as_deref(), Some("done after the lag"));
    let lost: u64 = result
        .capture_errors
        .iter()
        .filter_map(|e| e.strip_prefix("the event subscription lagged: "))
        .map(|rest| rest.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(lost > 0, "the lag is reported: {:?}", result.capture_errors);
    assert!(!result.evidence_complete);
}

/// The event recorder does not end after the runtime stopped (it hangs after the turn's
/// `session.idle`): cleanup stops it after 2 s and the run reports that events may be missing
/// (a capture error, `evidence_complete` false). The turn itself completed; a cassette recorded
/// in the same run is whole (it is built from the model exchanges, not from the events).
#[tokio::test]
async fn an_event_recorder_that_does_not_end_is_stopped_and_reported() {
    let Some(runtime) = runtime_for("an_event_recorder_that_does_not_end_is_stopped_and_reported")
    else {
        return;
    };
    let script = Script::new([]).turn(ScriptedTurn::text("done before the hang"));
    let offline = offline(&runtime, script, WireApi::ChatCompletions).await;
    let eval = offline.eval().timeout_s(LONG_TIMEOUT_S);
    let recorder = copilot_eval_core::cassette::Recorder::new();
    let tap = recorder.clone();
    let faults = TestFaults {
        event_recorder_hangs_after_idle: true,
        ..TestFaults::default()
    };
    let result = &run_row_with(
        "event_recorder_hangs",
        &offline,
        eval,
        "Say it.",
        &runtime.path,
        |options| options.record(tap).test_faults(faults),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("done before the hang")
    );
    assert!(
        result.capture_errors.iter().any(|e| e.starts_with(
            "the event recorder had not reached the end of the event stream 2s after the runtime stopped"
        )),
        "{:?}",
        result.capture_errors
    );
    assert!(!result.evidence_complete);
    assert_eq!(recorder.model_requests(), 1);
    let cassette = recorder
        .cassette(Default::default(), &Redactor::default())
        .expect("the recorded exchanges make a cassette");
    let text = cassette.to_text("recorded by the faults test").unwrap();
    assert!(text.contains("done before the hang"), "{text}");
}

/// A send to the upstream WebSocket that fails: the server resets the connection after its first
/// turn (a tool call); the tool returns once the reset happened, and the proxy's reader (test-only
/// knob) reads the upstream again only after the runtime's next message was sent, so that the
/// send is what meets the broken connection. The audit fails the run (`request_audit_error`,
/// `WebSocket transport send failed`), nothing reaches the server after the reset, the tool call
/// is kept as completed and no process is left.
#[tokio::test]
async fn a_websocket_send_that_fails_fails_the_audit() {
    let Some(runtime) = runtime_for("a_websocket_send_that_fails_fails_the_audit") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("after_reset", json!({})))
        .turn(ScriptedTurn::text("never"));
    let offline = Arc::new(
        Offline::with_config(
            &runtime,
            ServerConfig::new(Arc::new(script))
                .wire_api(WireApi::WebSocketResponses)
                .reset_websocket_after_turns(1),
        )
        .await,
    );
    let watched = offline.clone();
    let eval = offline
        .eval()
        .audit_requests(true)
        .timeout_s(LONG_TIMEOUT_S)
        .tool(tool_waiting_for("after_reset", move || {
            watched.server.connections_reset() >= 1
        }));
    let faults = TestFaults {
        websocket_reader_waits_for_send: true,
        ..TestFaults::default()
    };
    let result = &run_row_with(
        "websocket_send_failed",
        &offline,
        eval,
        "Go.",
        &runtime.path,
        |options| options.test_faults(faults),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::RequestAuditError,
        "{:?}",
        result.error
    );
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("request audit: WebSocket transport send failed"),
        "{error}"
    );
    assert_eq!(
        offline.server.model_requests().len(),
        1,
        "nothing reached the server after the reset"
    );
    assert_eq!(offline.server.connections_reset(), 1);
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "after_reset")
        .expect("the call is in the evidence");
    assert!(call.completed, "{call:?}");
    assert!(
        result.final_response.is_none(),
        "{:?}",
        result.final_response
    );
}

// ---------------------------------------------------------------------------------------------
// Runner faults: the real command on the fixture crate
// ---------------------------------------------------------------------------------------------

/// How long the runner may take to exit after a signal: it kills the running tests (SIGKILL to
/// their process groups), waits for them and writes the artifacts. Ample.
const SIGNAL_BOUND: Duration = Duration::from_secs(60);

/// The runner's exit: status and stderr, with its artifacts' paths in `scratch`.
struct RunnerExit {
    status: Option<i32>,
    stderr: String,
}

/// Wait for `child` to exit (its stderr read on a thread), at most `bound`; a runner still
/// running then is killed and the test fails.
fn wait_for_exit(mut child: std::process::Child, bound: Duration) -> RunnerExit {
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let deadline = Instant::now() + bound;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the runner did not exit within {bound:?}: {}",
                reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    RunnerExit {
        status: status.code(),
        stderr: reader.join().unwrap(),
    }
}

/// The runner's results and JUnit in `scratch`, read back: the JSON validated against the
/// committed schema, the JUnit parsed.
fn read_artifacts(scratch: &Path) -> (SuiteReport, quick_junit::Report) {
    let text = std::fs::read_to_string(scratch.join("results.json")).expect("JSON written");
    let value: Value = serde_json::from_str(&text).unwrap();
    let problems = support::schema_problems(&value);
    assert!(problems.is_empty(), "{problems:#?}");
    let xml = std::fs::read_to_string(scratch.join("junit.xml")).expect("JUnit written");
    let junit = quick_junit::Report::deserialize_from_str(&xml)
        .unwrap_or_else(|e| panic!("JUnit does not parse back: {e}\n{xml}"));
    (serde_json::from_value(value).unwrap(), junit)
}

/// Assert no process carries the marker of the suite run by the runner `runner` (the runner
/// gives every test process `COPILOT_EVAL_SUITE_PROCESS=<runner pid>-...`, inherited by the
/// runtimes the test starts).
fn assert_no_suite_process_left(runner: u32, row: &str) {
    let marker = format!(
        "{}={runner}-",
        copilot_eval_core::suite::executor::ENV_SUITE_PROCESS
    );
    let left = processes_with_env(&marker);
    assert!(left.is_empty(), "{row}: processes left: {left:?}");
}

/// SIGINT or SIGTERM to the runner while an eval is in flight: the fixture's
/// `hangs_in_a_tool_handler` finishes one run and records a property, then in a second run (the
/// stdio MCP fixture attached) sits in a tool handler that started a child process and never
/// returns (the eval's timeout and the cleanup bound are 600 s, so only the signal ends it). The
/// signal is sent once its evidence names the held processes (an event, not a delay), after
/// checking that the test process, its runtime, the MCP server and the tool child each carry
/// the suite's marker. The runner kills the test, writes both artifacts with the test as `error`
/// ("interrupted") and the run and property it recorded, exits 3, and leaves none of those
/// processes nor any other with its marker.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_to_the_runner_with_an_eval_in_flight() {
    if runtime_for("a_signal_to_the_runner_with_an_eval_in_flight").is_none() {
        return;
    }
    for signal in ["INT", "TERM"] {
        let scratch = tempfile::tempdir().unwrap();
        let child = support::spawn_fixture_runner(
            scratch.path(),
            &["--cleanup-bound-s", "600", "hangs_in_a_tool_handler"],
            Stdio::piped(),
        );
        let runner = child.id();
        // The event: the tool handler recorded the processes it holds.
        let tmp = scratch.path().join("tmp");
        let held = support::held_processes(&tmp, Duration::from_secs(600));
        let marked = processes_with_env(&format!(
            "{}={runner}-",
            copilot_eval_core::suite::executor::ENV_SUITE_PROCESS
        ));
        for (what, pid) in held.named() {
            assert!(
                marked.contains(&pid),
                "SIG{signal}: the {what} ({pid}: {}) carries the marker before the signal: {held:?}, marked {marked:?}",
                support::command_line(pid)
            );
        }
        let sent = Instant::now();
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &runner.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = wait_for_exit(child, SIGNAL_BOUND);
        eprintln!(
            "FAULT SIG{signal}: status={:?} after {:?}\n{}",
            exit.status,
            sent.elapsed(),
            exit.stderr
        );
        assert_eq!(exit.status, Some(3), "SIG{signal}: {}", exit.stderr);
        // stderr says which signal stopped the suite (docs/faults.md).
        let says = match signal {
            "TERM" => "terminated (SIGTERM): killing the running tests",
            _ => "interrupted: killing the running tests",
        };
        assert!(exit.stderr.contains(says), "SIG{signal}: {}", exit.stderr);
        let (report, junit) = read_artifacts(scratch.path());
        assert_eq!(report.tests.len(), 1, "SIG{signal}");
        let test = &report.tests[0];
        assert_eq!(test.outcome, Outcome::Error, "SIG{signal}: {test:#?}");
        let message = test.message.as_deref().unwrap_or_default();
        assert!(message.starts_with("interrupted"), "SIG{signal}: {message}");
        assert!(
            test.properties
                .iter()
                .any(|p| p.name == "first_run_success" && p.value == json!(true)),
            "SIG{signal}: the property recorded before the signal is kept: {:?}",
            test.properties
        );
        assert_eq!(test.runs.len(), 1, "SIG{signal}: the finished run is kept");
        assert_eq!(junit.tests, 1);
        assert!(
            matches!(
                junit.test_suites[0].test_cases[0].status,
                quick_junit::TestCaseStatus::NonSuccess {
                    kind: quick_junit::NonSuccessKind::Error,
                    ..
                }
            ),
            "SIG{signal}"
        );
        assert_no_suite_process_left(runner, &format!("SIG{signal}"));
        // And each held process is gone (a process being killed can lose its environment before
        // it ends, so the marker alone cannot say it ended): bounded, an event per check.
        let deadline = Instant::now() + SIGNAL_BOUND;
        let alive = || -> Vec<(&str, u32)> {
            held.named()
                .into_iter()
                .filter(|(_, pid)| copilot_eval_core::runtime::process_alive(*pid))
                .collect()
        };
        while !alive().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            alive().is_empty(),
            "SIG{signal}: still running: {:?}",
            alive()
        );
    }
}

/// An artifact folder that cannot be written (its parent is a regular file) after an eval ran:
/// the other artifact is still written and holds the eval, the error names the file, exit 5.
#[test]
fn an_unwritable_artifact_folder_loses_only_that_artifact() {
    if runtime_for("an_unwritable_artifact_folder_loses_only_that_artifact").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let blocker = scratch.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let json_path = blocker.join("results.json");
    let started = Instant::now();
    let child = Command::new(support::command_path())
        .args([
            "copilot-eval",
            "--replay",
            "--plain",
            "-p",
            support::FIXTURE,
        ])
        .arg("--json")
        .arg(&json_path)
        .arg("--junit")
        .arg(scratch.path().join("junit.xml"))
        .args(["--exact", "passes"])
        .current_dir(support::workspace_root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let runner = child.id();
    let exit = wait_for_exit(child, Duration::from_secs(600));
    assert_no_suite_process_left(runner, "artifact row");
    eprintln!(
        "FAULT unwritable: {:?} {:?}",
        exit.status,
        started.elapsed()
    );
    assert_eq!(exit.status, Some(5), "{}", exit.stderr);
    assert!(
        exit.stderr.contains(&json_path.display().to_string()),
        "{}",
        exit.stderr
    );
    assert!(!json_path.exists());
    let xml = std::fs::read_to_string(scratch.path().join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let case = &junit.test_suites[0].test_cases[0];
    assert_eq!(case.name.as_str(), "passes");
    assert!(matches!(
        case.status,
        quick_junit::TestCaseStatus::Success { .. }
    ));
}

/// A full disk: the JSON results go to a 64 KiB tmpfs already filled to the last byte (mounted
/// for the test; needs root: without it the test is skipped through the tests' skip writer, and
/// fails under `COPILOT_EVAL_REQUIRE_RUNTIME=1`). Writing them fails with "No space left on device", the error names
/// the file, no partial or temporary file is left there, the JUnit (elsewhere) holds the eval,
/// exit 5.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_loses_only_the_artifact_on_it() {
    if runtime_for("a_full_disk_loses_only_the_artifact_on_it").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let full = scratch.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&full)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        let root = std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
        assert!(!root, "running as root, yet a tmpfs could not be mounted");
        copilot_eval_e2e::skip(
            "a_full_disk_loses_only_the_artifact_on_it",
            "mounting a tmpfs needs root (CI runs as root)",
        );
        return;
    }
    /// Unmounts the tmpfs however the test ends.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&full);
    // Fill it: write until the file system refuses.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(full.join("filler")).unwrap();
        let block = [0u8; 4096];
        while filler.write_all(&block).is_ok() {}
        let _ = filler.write_all(&[0u8]);
    }
    let json_path = full.join("results.json");
    let child = Command::new(support::command_path())
        .args([
            "copilot-eval",
            "--replay",
            "--plain",
            "-p",
            support::FIXTURE,
        ])
        .arg("--json")
        .arg(&json_path)
        .arg("--junit")
        .arg(scratch.path().join("junit.xml"))
        .args(["--exact", "passes"])
        .current_dir(support::workspace_root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let runner = child.id();
    let exit = wait_for_exit(child, Duration::from_secs(600));
    assert_no_suite_process_left(runner, "artifact row");
    eprintln!("FAULT disk full: {:?}\n{}", exit.status, exit.stderr);
    assert_eq!(exit.status, Some(5), "{}", exit.stderr);
    assert!(
        exit.stderr.contains(&json_path.display().to_string())
            && exit.stderr.contains("No space left on device"),
        "{}",
        exit.stderr
    );
    let left: Vec<String> = std::fs::read_dir(&full)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["filler"], "no partial or temporary artifact is left");
    let xml = std::fs::read_to_string(scratch.path().join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(junit.test_suites[0].test_cases[0].name.as_str(), "passes");
}

/// A runtime of another version: the suite asks for runtime `9.9.9`, which is not installed. The
/// eval's run fails before any process starts with an error naming the version and the install
/// command; the runner reports the eval as `error` (an infrastructure stop, exit 3) and the
/// suite's runtime error, in both artifacts.
#[test]
fn a_runtime_of_another_version() {
    if runtime_for("a_runtime_of_another_version").is_none() {
        return;
    }
    let started = Instant::now();
    let run = support::fixture(
        &["--exact", "passes"],
        &[("COPILOT_EVAL_RUNTIME_VERSION", "9.9.9")],
    );
    eprintln!(
        "FAULT other version: status={} {:?}\n{}\n{:#?}",
        run.status,
        started.elapsed(),
        run.stderr,
        run.report.tests
    );
    let fix = "cargo copilot-eval runtime install --version 9.9.9";
    let runtime_error = run.report.runtime.error.as_deref().unwrap_or_default();
    assert!(runtime_error.contains(fix), "{runtime_error}");
    assert_eq!(run.status, 3, "an infrastructure error: {}", run.stderr);
    let test = run.test("passes");
    assert_eq!(test.outcome, Outcome::Error, "{test:#?}");
    let message = test.message.as_deref().unwrap_or_default();
    assert!(message.contains(fix), "{message}");
    assert!(run.junit_message("passes").contains(fix));
    assert_eq!(test.runs.len(), 1, "{test:#?}");
    assert_eq!(test.runs[0].stop_reason, StopReason::ExecutionError);
    // Before any process starts: the run never started a runtime (no start, no session)...
    assert_eq!(test.runs[0].timings.runtime_start_ms, None, "{test:#?}");
    assert_eq!(test.runs[0].timings.create_session_ms, None, "{test:#?}");
    // ...and once the runner exited, no process of this suite is left: each carried the
    // version it was given (the runner's marker needs its pid, which `support::fixture` hides).
    let left = processes_with_env("COPILOT_EVAL_RUNTIME_VERSION=9.9.9");
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// The evidence side file cannot be written: the fixture's `passes`, run by `cargo
/// copilot-eval`, puts a folder where the runner asked for its evidence file
/// (`COPILOT_EVAL_FIXTURE_BLOCK_EVIDENCE`), so every later write of it fails. The test process
/// says so on stderr naming the file and goes on: its own assertions pass and it exits 0. The
/// runner, finding no evidence after exit 0, reports the test `error` (`missing_evidence`) and
/// keeps the test's stderr; all of it read from the runner's own JSON and JUnit.
#[test]
fn an_unwritable_evidence_file() {
    if runtime_for("an_unwritable_evidence_file").is_none() {
        return;
    }
    let started = Instant::now();
    let run = support::fixture(
        &["--exact", "passes"],
        &[("COPILOT_EVAL_FIXTURE_BLOCK_EVIDENCE", "1")],
    );
    eprintln!(
        "FAULT evidence unwritable: status={} {:?}\n{}",
        run.status,
        started.elapsed(),
        run.stderr
    );
    assert_eq!(run.status, 3, "an infrastructure error: {}", run.stderr);
    let test = run.test("passes");
    assert_eq!(test.outcome, Outcome::Error, "{test:#?}");
    assert_eq!(
        test.error_kind,
        Some(copilot_eval_core::report::ErrorKind::MissingEvidence),
        "{test:#?}"
    );
    let message = test.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("exited with status 0 without writing its evidence"),
        "{message}"
    );
    let exit = test.exit.as_ref().expect("the exit is recorded");
    assert_eq!(exit.code, Some(0), "the test's own assertions passed");
    let stderr = &test.output.as_ref().expect("stderr is kept").stderr;
    assert!(
        stderr.contains("copilot-eval: cannot write the evidence file")
            && stderr.contains("0.evidence.json"),
        "{stderr}"
    );
    assert!(test.runs.is_empty(), "the evidence was lost: {test:#?}");
    assert_eq!(run.junit_kind("passes"), "error", "{}", run.junit_xml);
    assert!(
        run.junit_message("passes")
            .contains("without writing its evidence")
    );
}

/// Sends one `POST /chat/completions` with `"stream": true` to `server` over a raw connection
/// and reads the answer until `enough` says the bytes so far suffice (or the connection ends).
async fn raw_turn(
    server: &copilot_eval_core::model_server::ModelServer,
    enough: impl Fn(&str) -> bool,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let request = format!(
        "POST /chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut buffer))
            .await
            .expect("the server answers within 60 s")
            .unwrap_or(0);
        if read == 0 {
            break;
        }
        seen.extend_from_slice(&buffer[..read]);
        if enough(&String::from_utf8_lossy(&seen)) {
            break;
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// What each new fault reply puts on the wire over HTTP (no runtime involved): the rows above
/// show what the runtime makes of it, this shows the fault was really injected.
#[tokio::test]
async fn the_fault_replies_on_the_wire() {
    let server = copilot_eval_core::model_server::ModelServer::start(ServerConfig::new(Arc::new(
        Script::new([])
            .rate_limited(7, "slow down")
            .malformed_sse()
            .keep_alive_stall(Duration::from_millis(10))
            .binary_frame(),
    )))
    .await
    .unwrap();
    let head_end = |t: &str| t.contains("\r\n\r\n");
    let limited = raw_turn(&server, |t| t.contains("slow down"))
        .await
        .to_lowercase();
    assert!(limited.starts_with("http/1.1 429"), "{limited}");
    assert!(limited.contains("\r\nretry-after: 7\r\n"), "{limited}");
    assert!(!limited.contains("x-should-retry"), "{limited}");
    let malformed = raw_turn(&server, |t| t.contains("[DONE]")).await;
    assert!(malformed.starts_with("HTTP/1.1 200"), "{malformed}");
    assert!(malformed.contains("text/event-stream"), "{malformed}");
    let frames: Vec<&str> = malformed
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .collect();
    assert!(!frames.is_empty(), "{malformed}");
    assert!(
        frames
            .iter()
            .all(|d| serde_json::from_str::<Value>(d).is_err()),
        "every data frame is not JSON: {frames:?}"
    );
    // Three keep-alives arrive (an event: the bytes, not a delay), and no data frame.
    let kept = raw_turn(&server, |t| t.matches(": keep-alive").count() >= 3).await;
    assert!(kept.matches(": keep-alive").count() >= 3, "{kept}");
    assert!(!kept.contains("data:"), "{kept}");
    let binary = raw_turn(&server, head_end).await;
    assert!(binary.contains("application/octet-stream"), "{binary}");
    server.shutdown().await;
}
