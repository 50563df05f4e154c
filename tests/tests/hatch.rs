//! The session hatch (`CopilotEvalBuilder::session_hatch`) through the real runtime and a
//! scripted loopback model: the eval's closure gets the run's SDK session before the first
//! prompt, between prompts and before shutdown, reaches what copilot-eval does not wrap (the
//! session's workspace files and its SQL todos, through the session's RPC), and the run keeps
//! its evidence (events, turns, tool calls) and its request audit. A hatch that fails or
//! panics ends the run with `execution_error` naming the point, and no further prompt is sent;
//! one that never returns is cut short by the timeout, which names its point. Nothing else
//! waits on the clock: every run waits for its session's events, bounded by an ample timeout.

use std::sync::{Arc, Mutex};

use copilot_eval_core::StopReason;
use copilot_eval_core::eval::{HatchError, HatchPoint};
use copilot_eval_core::evidence::{Role, SessionEventType};
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::sdk::rpc::WorkspacesCreateFileRequest;
use copilot_eval_e2e::{MODEL, Offline, runtime_for};
use serde_json::json;

/// Ample for a runtime start and two turns on a loaded machine.
const TIMEOUT_S: f64 = 120.0;

const ADD_TODOS: &str = "INSERT INTO todos (id, title, status) VALUES ('alpha', 'First todo', 'pending'); \
INSERT INTO todos (id, title, status) VALUES ('beta', 'Second todo', 'done');";

/// What the hatch saw at one point: the workspace files and the todo ids.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    at: HatchPoint,
    files: Vec<String>,
    todos: Vec<String>,
}

#[tokio::test]
async fn the_hatch_lists_workspace_files_and_reads_todos_with_evidence_and_audit_intact() {
    let Some(runtime) = runtime_for(
        "the_hatch_lists_workspace_files_and_reads_todos_with_evidence_and_audit_intact",
    ) else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "sql",
            json!({"description": "Add two todos", "query": ADD_TODOS}),
        ))
        .turn(ScriptedTurn::text("Added two todos."))
        .turn(ScriptedTurn::text("Nothing else to do."));
    let off = Offline::start(&runtime, script).await;
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let eval = off
        .eval()
        .timeout_s(TIMEOUT_S)
        .audit_requests(true)
        .session_hatch(move |at, session| {
            let log = log.clone();
            Box::pin(async move {
                let workspaces = session.rpc().workspaces();
                if at == HatchPoint::BeforeFirstPrompt {
                    workspaces
                        .create_file(WorkspacesCreateFileRequest {
                            path: "notes/plan.md".into(),
                            content: "# Plan\n".into(),
                        })
                        .await?;
                }
                let mut files = workspaces.list_files().await?.files;
                files.sort();
                let rows = session.rpc().plan().read_sql_todos().await?.rows;
                let mut todos: Vec<String> = rows.into_iter().filter_map(|row| row.id).collect();
                todos.sort();
                log.lock().unwrap().push(Seen { at, files, todos });
                Ok(())
            })
        })
        .build()
        .unwrap();

    let prompts = ["Add two todos: alpha and beta.", "Anything else?"];
    let result = off.run_turns(&eval, &prompts, TestFaults::default()).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );

    // The hatch ran at each point, in order, and read what the session holds at that point.
    let files = vec!["notes/plan.md".to_owned()];
    let both = vec!["alpha".to_owned(), "beta".to_owned()];
    assert_eq!(
        *seen.lock().unwrap(),
        [
            Seen {
                at: HatchPoint::BeforeFirstPrompt,
                files: files.clone(),
                todos: vec![],
            },
            Seen {
                at: HatchPoint::BetweenPrompts { after_turn: 1 },
                files: files.clone(),
                todos: both.clone(),
            },
            Seen {
                at: HatchPoint::BeforeShutdown,
                files,
                todos: both,
            },
        ]
    );

    // The evidence: both turns, the model's `sql` call (completed), the runtime's todos event.
    let prompts: Vec<&str> = result
        .turns
        .iter()
        .filter(|t| t.role == Role::User)
        .map(|t| t.content.as_str())
        .collect();
    assert_eq!(
        prompts,
        ["Add two todos: alpha and beta.", "Anything else?"]
    );
    let sql: Vec<_> = result
        .tool_calls
        .iter()
        .filter(|c| c.name == "sql")
        .collect();
    assert_eq!(sql.len(), 1, "{:?}", result.tool_calls);
    assert_eq!(sql[0].success, Some(true), "{:?}", sql[0]);
    assert_eq!(
        result.final_response.as_deref(),
        Some("Nothing else to do.")
    );
    assert!(
        result
            .raw_events
            .iter()
            .any(|e| e.kind() == SessionEventType::SessionTodosChanged),
        "the runtime's todos event is recorded"
    );
    // The audit: one record per model request the runtime sent, each for the eval's model.
    let requests = off.server.model_requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(result.request_audit.len(), requests.len());
    assert!(result.request_audit.iter().all(|a| a.model == MODEL));
    // The run record says the eval used the hatch.
    assert!(result.configuration.session_hatch);
}

#[tokio::test]
async fn a_failing_hatch_ends_the_run_naming_the_point_and_sends_no_further_prompt() {
    let Some(runtime) =
        runtime_for("a_failing_hatch_ends_the_run_naming_the_point_and_sends_no_further_prompt")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::text("First."))
        .turn(ScriptedTurn::text("Second."));
    let off = Offline::start(&runtime, script).await;
    let eval = off
        .eval()
        .timeout_s(TIMEOUT_S)
        .session_hatch(|at, _session| {
            Box::pin(async move {
                match at {
                    HatchPoint::BetweenPrompts { .. } => {
                        Err(HatchError::Failed("the plan is missing".into()))
                    }
                    _ => Ok(()),
                }
            })
        })
        .build()
        .unwrap();
    let result = off
        .run_turns(&eval, &["One.", "Two."], TestFaults::default())
        .await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    assert_eq!(
        result.error.as_deref(),
        Some("the session hatch failed after turn 1: the plan is missing")
    );
    assert_eq!(
        off.server.model_requests().len(),
        1,
        "the second prompt is not sent"
    );
    assert_eq!(result.final_response.as_deref(), Some("First."));
}

#[tokio::test]
async fn a_panicking_hatch_ends_the_run_before_the_first_prompt() {
    let Some(runtime) = runtime_for("a_panicking_hatch_ends_the_run_before_the_first_prompt")
    else {
        return;
    };
    let script = Script::new([]).turn(ScriptedTurn::text("Never sent."));
    let off = Offline::start(&runtime, script).await;
    let eval = off
        .eval()
        .timeout_s(TIMEOUT_S)
        .session_hatch(|_at, _session| panic!("the hatch broke"))
        .build()
        .unwrap();
    let result = off.run_turns(&eval, &["One."], TestFaults::default()).await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    assert_eq!(
        result.error.as_deref(),
        Some("the session hatch panicked before the first prompt: the hatch broke")
    );
    assert!(off.server.model_requests().is_empty(), "no prompt was sent");
}

/// A hatch that never returns is cut short by the eval's timeout, which names the hatch's point.
/// The clock starts when the session is created (a test fault), so the timeout falls in the
/// hatch however long the runtime's start takes.
#[tokio::test]
async fn a_hatch_that_never_returns_is_cut_short_by_the_timeout_naming_its_point() {
    let Some(runtime) =
        runtime_for("a_hatch_that_never_returns_is_cut_short_by_the_timeout_naming_its_point")
    else {
        return;
    };
    let script = Script::new([]).turn(ScriptedTurn::text("Never sent."));
    let off = Offline::start(&runtime, script).await;
    let eval = off
        .eval()
        .timeout_s(3.0)
        .session_hatch(|_at, _session| Box::pin(std::future::pending()))
        .build()
        .unwrap();
    let faults = TestFaults {
        clock_starts_at_session: Some(SessionClock::default()),
        ..TestFaults::default()
    };
    let result = off.run_turns(&eval, &["One."], faults).await;
    // Before the first prompt: the agent was not tested, an infrastructure stop.
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with(
            "timed out after 3s (eval timeout_s) in the session hatch before the first prompt (still running)"
        ),
        "{error}"
    );
    assert!(off.server.model_requests().is_empty(), "no prompt was sent");
}
