//! Resuming a session in a fresh runtime process, through the real runtime and a scripted
//! loopback model: in the engine (`RunOptions::home` + `home_seed` + `resume`), the resumed
//! run's model request carries the earlier turns as history; in a test's context
//! (`ctx.resume`, `ctx.resume_turns`, `ctx.resume_with` and its `continue_pending_work`), the result and the run record say what was resumed,
//! and a resumed conversation's tool-call ids follow the earlier ones. A session that cannot
//! be resumed is a named failure. Nothing waits on the clock: every run waits for its
//! session's events, bounded by an ample timeout.

use std::sync::Arc;

use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::harness::{EvalContext, ResumeOptions, TestConfig};
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::ResumedFrom;
use copilot_eval_core::sdk::session_events::SessionResumeData;
use copilot_eval_core::sdk::{McpServerConfig, McpStdioServerConfig};
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";
/// Ample for a runtime start and two turns on a loaded machine.
const TIMEOUT_S: f64 = 120.0;

fn eval(work: &std::path::Path) -> CopilotEval {
    CopilotEval::builder()
        .model(MODEL)
        .working_directory(work)
        .timeout_s(TIMEOUT_S)
        .build()
        .unwrap()
}

/// The text of a Chat Completions message (a string, or the text parts of a list).
fn text(message: &serde_json::Value) -> String {
    match &message["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[tokio::test]
async fn a_resumed_session_sends_the_earlier_turns_as_history() {
    let Some(runtime) = runtime_for("a_resumed_session_sends_the_earlier_turns_as_history") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let homes = tempfile::tempdir().unwrap();
    let (first_home, second_home) = (homes.path().join("first"), homes.path().join("second"));
    let script = Script::new([])
        .turn(ScriptedTurn::text("Noted."))
        .turn(ScriptedTurn::text("The code word is PLUM."));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let options = || RunOptions::offline(server.base_url()).runtime_path(&runtime.path);
    let eval = eval(work.path());

    let first = run_with(
        &eval,
        "Remember this: the code word is PLUM.",
        &options().home(&first_home),
    )
    .await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );
    assert_no_runtime_left(&first);
    let session_id = first.session_id.clone().expect("the created session's id");
    assert!(!first.resumed);
    assert!(first_home.is_dir(), "a home given to the run is kept");
    // Where runtime 1.0.102 keeps the session: `session-state/<id>/events.jsonl`.
    assert!(
        first_home
            .join("session-state")
            .join(&session_id)
            .join("events.jsonl")
            .is_file()
    );

    let second = run_with(
        &eval,
        "What is the code word?",
        &options()
            .home(&second_home)
            .home_seed(&first_home)
            .resume(session_id.clone()),
    )
    .await;
    assert_eq!(
        second.stop_reason,
        StopReason::Completed,
        "{:?}",
        second.error
    );
    assert_no_runtime_left(&second);
    assert_eq!(second.session_id.as_deref(), Some(session_id.as_str()));
    assert!(second.resumed);
    assert_eq!(
        second.final_response.as_deref(),
        Some("The code word is PLUM.")
    );
    // The runtime resumed (its first event), and the result holds only this run's turns.
    assert_eq!(second.raw_events[0].event_type, "session.resume");
    let turns: Vec<&str> = second.turns.iter().map(|t| t.content.as_str()).collect();
    assert_eq!(turns, ["What is the code word?", "The code word is PLUM."]);

    // The resumed run's model request: the earlier prompt and answer, then the new prompt.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 2, "one model request per run");
    let conversation: Vec<(String, String)> = requests[1]
        .messages
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| (m["role"].as_str().unwrap_or("").to_owned(), text(m)))
        .collect();
    let roles: Vec<&str> = conversation.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{conversation:?}");
    assert!(
        conversation[0]
            .1
            .contains("Remember this: the code word is PLUM."),
        "{conversation:?}"
    );
    assert_eq!(conversation[1].1, "Noted.");
    assert!(
        conversation[2].1.contains("What is the code word?"),
        "{conversation:?}"
    );
    // The first request had no history.
    assert_eq!(
        requests[0]
            .messages
            .iter()
            .filter(|m| m["role"] != "system")
            .count(),
        1
    );
}

#[tokio::test]
async fn a_session_the_runtime_cannot_find_is_a_named_execution_error() {
    let Some(runtime) = runtime_for("a_session_the_runtime_cannot_find_is_a_named_execution_error")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("Hi.")))).model(MODEL),
    )
    .await
    .unwrap();
    let result = run_with(
        &eval(work.path()),
        "Hello?",
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .home(home.path())
            .resume("00000000-0000-4000-8000-000000000000"),
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap();
    assert!(
        error.contains("resuming the session failed: the runtime could not resume session 00000000-0000-4000-8000-000000000000"),
        "{error}"
    );
    assert!(!result.resumed);
    assert!(server.model_requests().is_empty(), "no prompt was sent");
    assert_no_runtime_left(&result);
}

#[tokio::test]
async fn ctx_resume_continues_an_earlier_run_of_the_same_test() {
    let Some(_runtime) = runtime_for("ctx_resume_continues_an_earlier_run_of_the_same_test") else {
        return;
    };
    let ctx = EvalContext::new(TestConfig::new(
        "ctx_resume_continues_an_earlier_run_of_the_same_test",
        "resume::ctx_resume_continues_an_earlier_run_of_the_same_test",
        env!("CARGO_MANIFEST_DIR"),
    ));
    // Run 1 writes the code word into a file with a tool call (`call_1`); the resumed run
    // reads it back (its server issues `call_2`: the history already holds `call_1`), then
    // answers; run 3 resumes run 1 again, in two turns.
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": ctx.workdir().join("word.txt"), "file_text": "PLUM"}),
            ))
            .turn(ScriptedTurn::text("Saved the code word."))
            .turn(ScriptedTurn::tool_call(
                "view",
                json!({"path": ctx.workdir().join("word.txt")}),
            ))
            .turn(ScriptedTurn::text("The code word is PLUM."))
            .turn(ScriptedTurn::text("PLUM."))
            .turn(ScriptedTurn::text("Still PLUM.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .build()
        .unwrap();
    let first = ctx
        .run(&eval, "The code word is PLUM: save it in word.txt.")
        .await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );
    assert_eq!(first.tool_calls[0].id, "call_1");

    let second = ctx.resume(&eval, &first, "What is the code word?").await;
    assert_eq!(
        second.stop_reason,
        StopReason::Completed,
        "{:?}",
        second.error
    );
    assert!(second.resumed);
    assert_eq!(second.session_id, first.session_id);
    assert_eq!(
        second.final_response.as_deref(),
        Some("The code word is PLUM.")
    );
    assert_eq!(second.tool_calls.len(), 1, "{:?}", second.tool_calls);
    assert_eq!(
        second.tool_calls[0].id, "call_2",
        "after the history's call_1"
    );
    assert_eq!(
        second.tool_calls[0]
            .result
            .as_deref()
            .map(|r| r.contains("PLUM")),
        Some(true)
    );

    let third = ctx
        .resume_turns(&eval, &first, ["And the code word?", "Sure?"])
        .await;
    assert_eq!(
        third.stop_reason,
        StopReason::Completed,
        "{:?}",
        third.error
    );
    assert!(third.resumed);
    assert_eq!(third.final_response.as_deref(), Some("Still PLUM."));

    let session_id = first.session_id.clone().unwrap();
    let runs = ctx.evidence().runs;
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].resumed_from, None);
    assert_eq!(runs[0].session_id.as_deref(), Some(session_id.as_str()));
    let from_first = Some(ResumedFrom {
        run: 1,
        session_id: session_id.clone(),
    });
    assert_eq!(runs[1].resumed_from, from_first);
    assert_eq!(runs[2].resumed_from, from_first);
    let texts: Vec<&str> = runs[2].prompts.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["And the code word?", "Sure?"]);
}

/// `ctx.resume_with` with `continue_pending_work`: the runtime is given the SDK's resume
/// option (its `session.resume` event, the resumed run's first raw event, says so), and a plain
/// `ctx.resume` does not give it. The option without a resume is a named execution error
/// before the runtime starts.
#[tokio::test]
async fn ctx_resume_with_continue_pending_work_tells_the_runtime() {
    let Some(runtime) = runtime_for("ctx_resume_with_continue_pending_work_tells_the_runtime")
    else {
        return;
    };
    let ctx = EvalContext::new(TestConfig::new(
        "ctx_resume_with_continue_pending_work_tells_the_runtime",
        "resume::ctx_resume_with_continue_pending_work_tells_the_runtime",
        env!("CARGO_MANIFEST_DIR"),
    ));
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::text("Noted."))
            .turn(ScriptedTurn::text("Continued."))
            .turn(ScriptedTurn::text("Resumed plainly.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .build()
        .unwrap();
    let first = ctx.run(&eval, "Remember PLUM.").await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );
    /// The `session.resume` event's `continuePendingWork` (the resumed run's first event).
    fn continue_pending(result: &copilot_eval_core::CopilotResult) -> Option<bool> {
        let event = &result.raw_events[0];
        assert_eq!(event.kind(), SessionEventType::SessionResume);
        event
            .typed_data::<SessionResumeData>()
            .expect("the session.resume data")
            .continue_pending_work
    }

    let options = ResumeOptions::default().continue_pending_work(true);
    let continued = ctx.resume_with(&eval, &first, ["Go on."], options).await;
    assert_eq!(
        continued.stop_reason,
        StopReason::Completed,
        "{:?}",
        continued.error
    );
    assert!(continued.resumed);
    assert_eq!(continued.final_response.as_deref(), Some("Continued."));
    assert_eq!(continue_pending(&continued), Some(true));

    let plain = ctx.resume(&eval, &first, "Go on.").await;
    assert_eq!(
        plain.stop_reason,
        StopReason::Completed,
        "{:?}",
        plain.error
    );
    assert_ne!(continue_pending(&plain), Some(true));

    let work = tempfile::tempdir().unwrap();
    let refused = run_with(
        &eval
            .to_builder()
            .working_directory(work.path())
            .build()
            .unwrap(),
        "Go on.",
        &RunOptions::offline("http://127.0.0.1:9")
            .runtime_path(&runtime.path)
            .continue_pending_work(true),
    )
    .await;
    assert_eq!(refused.stop_reason, StopReason::ExecutionError);
    assert!(
        refused.error.as_deref().is_some_and(|e| e.starts_with(
            "RunOptions::continue_pending_work is set, but the run resumes no session"
        )),
        "{:?}",
        refused.error
    );
    assert_eq!(refused.runtime_pid, None, "the runtime never started");
}

/// A result of another test cannot be resumed: the resume panics (the test's setup error)
/// naming the fix, and no run is made.
#[tokio::test]
async fn ctx_resume_of_another_tests_result_is_a_setup_error() {
    let Some(_runtime) = runtime_for("ctx_resume_of_another_tests_result_is_a_setup_error") else {
        return;
    };
    let config = |function: &'static str, path: &'static str| {
        TestConfig::new(function, path, env!("CARGO_MANIFEST_DIR"))
    };
    let earlier_test = EvalContext::new(config("earlier", "resume::earlier"));
    earlier_test.offline(Script::new([]).turn(ScriptedTurn::text("Noted.")));
    let eval = earlier_test
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .build()
        .unwrap();
    let first = earlier_test.run(&eval, "The code word is PLUM.").await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );

    let later_test = EvalContext::new(config("later", "resume::later"));
    later_test.offline(Script::new([]).turn(ScriptedTurn::text("PLUM.")));
    let resuming = later_test.clone();
    let outcome = tokio::spawn(async move {
        resuming
            .resume(&eval, &first, "What is the code word?")
            .await
    })
    .await;
    let panic = outcome.expect_err("the resume is refused").into_panic();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message
            .contains("ctx.resume: the earlier result comes from run 1 of another test (earlier)"),
        "{message}"
    );
    assert!(
        message.contains("run the earlier prompt in this test"),
        "{message}"
    );
    let evidence = later_test.evidence();
    assert!(evidence.runs.is_empty());
    assert_eq!(
        evidence.setup_error.as_deref(),
        Some(message.trim_start_matches("copilot-eval setup error: "))
    );
}

/// An MCP server that fails when a session is resumed: the resumed run's `mcp_servers` say what
/// this run's runtime reported (the server `failed`, no tool count), not the tool count of the
/// first run, and the run ends `mcp_setup_error` naming it.
#[tokio::test]
async fn a_resume_whose_mcp_server_fails_reports_this_runs_state_not_the_first_runs() {
    let Some(runtime) =
        runtime_for("a_resume_whose_mcp_server_fails_reports_this_runs_state_not_the_first_runs")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let homes = tempfile::tempdir().unwrap();
    let (first_home, second_home) = (homes.path().join("first"), homes.path().join("second"));
    let fixture = |args: &[&str]| {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/stdio-server.js");
        let mut all = vec![script.to_string_lossy().into_owned()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        McpServerConfig::Stdio(McpStdioServerConfig {
            command: "node".to_owned(),
            args: all,
            ..Default::default()
        })
    };
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("Noted."))))
            .model(MODEL),
    )
    .await
    .unwrap();
    let options = || RunOptions::offline(server.base_url()).runtime_path(&runtime.path);
    let eval = eval(work.path())
        .to_builder()
        .mcp_server("fixture", fixture(&[]))
        .build()
        .unwrap();
    let first = run_with(&eval, "Remember PLUM.", &options().home(&first_home)).await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );
    assert_eq!(first.mcp_servers[0].tool_count, Some(1));

    let broken = eval
        .to_builder()
        .mcp_server("fixture", fixture(&["--fail-start"]))
        .build()
        .unwrap();
    let second = run_with(
        &broken,
        "What is the code word?",
        &options()
            .home(&second_home)
            .home_seed(&first_home)
            .resume(first.session_id.clone().unwrap()),
    )
    .await;
    assert_no_runtime_left(&second);
    assert_eq!(
        second.stop_reason,
        StopReason::McpSetupError,
        "{:?}",
        second.error
    );
    let state = &second.mcp_servers[0];
    assert_eq!(state.status, "failed", "{state:?}");
    assert_eq!(state.tool_count, None, "no stale count: {state:?}");
    assert!(state.tools.is_empty(), "{state:?}");
    assert_eq!(
        server.model_requests().len(),
        1,
        "no prompt was sent on resume"
    );
}

/// A setting the old fixed list of resumed fields left out reaches the model in the resumed run
/// too: the default agent's excluded tools (SDK `DefaultAgentConfig`) keep `view` out of the
/// tool list of the first run's model request and of the resumed run's.
#[tokio::test]
async fn a_resumed_session_keeps_the_default_agent_settings() {
    let Some(runtime) = runtime_for("a_resumed_session_keeps_the_default_agent_settings") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let homes = tempfile::tempdir().unwrap();
    let (first_home, second_home) = (homes.path().join("first"), homes.path().join("second"));
    let script = Script::new([])
        .turn(ScriptedTurn::text("Noted."))
        .turn(ScriptedTurn::text("Still noted."));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let options = || RunOptions::offline(server.base_url()).runtime_path(&runtime.path);
    let eval = eval(work.path())
        .to_builder()
        .default_agent_excluded_tools(["view"])
        .build()
        .unwrap();

    let first = run_with(&eval, "Remember PLUM.", &options().home(&first_home)).await;
    assert_eq!(
        first.stop_reason,
        StopReason::Completed,
        "{:?}",
        first.error
    );
    let session_id = first.session_id.clone().expect("the created session's id");
    let second = run_with(
        &eval,
        "What was it?",
        &options()
            .home(&second_home)
            .home_seed(&first_home)
            .resume(session_id),
    )
    .await;
    assert_eq!(
        second.stop_reason,
        StopReason::Completed,
        "{:?}",
        second.error
    );
    assert!(second.resumed);
    assert_no_runtime_left(&second);

    let requests = server.model_requests();
    assert_eq!(requests.len(), 2, "one model request per run");
    for (run, request) in ["first", "resumed"].iter().zip(&requests) {
        assert!(
            !request.tool_names.is_empty(),
            "the {run} run offers tools: {:?}",
            request.tool_names
        );
        assert!(
            !request.tool_names.iter().any(|t| t == "view"),
            "the {run} run's model request offers `view`, which the default agent excludes: {:?}",
            request.tool_names
        );
    }
}
