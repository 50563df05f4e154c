//! Warm runtimes ([`copilot_eval_core::pool`]), end to end through the real runtime: the same
//! scripted evals run on a private runtime and on a leased pooled one must give the same
//! evidence field by field (timings, session ids and working directories aside), with the
//! audit, the budget gate, subagents and the Responses WebSocket going through the run's own
//! request proxy behind the pool's router.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig, WireApi};
use copilot_eval_core::pool::{Pool, PoolSource};
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::{MODEL, comparable_evidence, runtime_for};
use serde_json::{Value, json};

/// One scripted case: its eval, prompts and script (given the working directory).
struct Case {
    name: &'static str,
    wire: WireApi,
    eval: fn(copilot_eval_core::eval::CopilotEvalBuilder, Arc<AtomicUsize>) -> CopilotEval,
    prompts: &'static [&'static str],
    script: fn(&std::path::Path) -> Script,
}

fn note_tool(calls: Arc<AtomicUsize>) -> copilot_eval_core::sdk::Tool {
    function_tool(
        "note",
        "Write down a note.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        move |args| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(format!("noted: {}", args["text"].as_str().unwrap_or("")))
            }
        },
    )
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "text",
            wire: WireApi::ChatCompletions,
            eval: |b, _| b.build().unwrap(),
            prompts: &["Greet Ferris."],
            script: |_| Script::new([]).turn(ScriptedTurn::text("Hello, Ferris!")),
        },
        Case {
            name: "tools-audited",
            wire: WireApi::ChatCompletions,
            eval: |b, calls| {
                b.tool(note_tool(calls))
                    .audit_requests(true)
                    .build()
                    .unwrap()
            },
            prompts: &["Write the plan.", "Take two notes."],
            script: |dir| {
                let file = dir.join("plan.txt");
                Script::new([])
                    .turn(ScriptedTurn::tool_call(
                        "create",
                        json!({"path": file.to_str().unwrap(), "file_text": "one\n"}),
                    ))
                    .turn(ScriptedTurn::text("Wrote plan.txt."))
                    .turn(
                        ScriptedTurn::tool_call("note", json!({"text": "a"}))
                            .with_tool_call("note", json!({"text": "b"})),
                    )
                    .turn(ScriptedTurn::text("Noted."))
            },
        },
        Case {
            name: "budget-stop",
            wire: WireApi::ChatCompletions,
            eval: |b, calls| b.tool(note_tool(calls)).max_tool_calls(1).build().unwrap(),
            prompts: &["Take three notes."],
            script: |_| {
                Script::new([])
                    .turn(
                        ScriptedTurn::tool_call("note", json!({"text": "a"}))
                            .with_tool_call("note", json!({"text": "b"}))
                            .with_tool_call("note", json!({"text": "c"})),
                    )
                    .turn(ScriptedTurn::text("noted"))
            },
        },
        Case {
            name: "subagent",
            wire: WireApi::ChatCompletions,
            eval: |b, _| {
                b.custom_agent(
                    CustomAgentConfig::new("writer", "You write reviews into files.")
                        .with_description("Writes reviews"),
                )
                .audit_requests(true)
                .build()
                .unwrap()
            },
            prompts: &["Have the writer write a review."],
            script: |dir| {
                let target = dir.join("review.txt");
                Script::new([])
                    .turn(ScriptedTurn::tool_call(
                        "task",
                        json!({"agent_type": "writer", "name": "writer", "prompt": "Write the review.", "description": "Write a review"}),
                    ))
                    .turn(ScriptedTurn::tool_call(
                        "create",
                        json!({"path": target.to_str().unwrap(), "file_text": "LGTM\n"}),
                    ))
                    .turn(ScriptedTurn::text("review written"))
                    .turn(ScriptedTurn::text("The writer wrote the review."))
            },
        },
        Case {
            name: "websocket-audited",
            wire: WireApi::Responses,
            eval: |b, calls| {
                b.tool(note_tool(calls))
                    .audit_requests(true)
                    .build()
                    .unwrap()
            },
            prompts: &["Take a note."],
            script: |_| {
                Script::new([])
                    .turn(ScriptedTurn::tool_call("note", json!({"text": "a"})))
                    .turn(ScriptedTurn::text("Noted."))
            },
        },
    ]
}

/// One run's evidence and where it ran.
struct Ran {
    result: CopilotResult,
    work: tempfile::TempDir,
    server: ModelServer,
    tool_calls: usize,
}

/// Run `case` once: on a lease of `pool` when given, else on a private runtime.
async fn run_case(
    case: &Case,
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    pool: Option<&Arc<Pool>>,
) -> Ran {
    let work = tempfile::tempdir().unwrap();
    let server = ModelServer::start(
        ServerConfig::new(Arc::new((case.script)(work.path())))
            .wire_api(case.wire)
            .model(MODEL),
    )
    .await
    .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let builder = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(90.0);
    let eval = (case.eval)(builder, calls.clone());
    let mut options = RunOptions::offline(server.base_url()).runtime_path(&runtime.path);
    if let Some(pool) = pool {
        options = options.pooled(PoolSource::Local(pool.clone()));
    }
    let result = run_turns(&eval, case.prompts.iter().copied(), &options).await;
    Ran {
        result,
        work,
        server,
        tool_calls: calls.load(Ordering::SeqCst),
    }
}

/// The evidence ([`comparable_evidence`]) less what differs between any two runs in different
/// working directories: the runtime's request ids, and the hash of instructions that name the
/// working directory (the model requests themselves are compared in [`model_requests`]).
fn comparable(result: &CopilotResult, workdir: &std::path::Path) -> Value {
    let mut value = comparable_evidence(result, workdir);
    // Where the session ran is asserted on its own (`pooled_runtime`).
    value.as_object_mut().unwrap().remove("pooled_runtime");
    if let Some(audit) = value.get_mut("audit").and_then(Value::as_array_mut) {
        for record in audit {
            record["request_id"] = json!("${request_id}");
            record["instructions_sha256"] = json!("${instructions}");
        }
    }
    value
}

/// The model requests the run's model server received: method, path and body of each, with
/// the working directory written as `${workdir}` (header values aside: they carry per-session
/// ids). The runtime's account, settings and catalog GETs are left out: a runtime asks them
/// once for its first sessions, so a reused pooled runtime does not ask again (the pool key
/// keeps runs with another catalog off it).
fn model_requests(ran: &Ran) -> Vec<Value> {
    let workdir = ran.work.path().display().to_string();
    ran.server
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| {
            let body = r
                .body
                .map(|b| b.to_string().replace(&workdir, "${workdir}"))
                .unwrap_or_default();
            // The session's folder (in the run's home, named by its session id) and the time.
            let body = mask(&body, "Session folder: ", "\\");
            let body = mask(&body, "<current_datetime>", "<");
            json!({"method": r.method, "path": r.path, "body": body})
        })
        .collect()
}

/// `text` with what follows each `marker` up to the next `end` written as `${masked}`.
fn mask(text: &str, marker: &str, end: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        out.push_str("${masked}");
        rest = tail.find(end).map_or("", |i| &tail[i..]);
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn pooled_runs_give_the_evidence_of_private_runs() {
    let Some(runtime) = runtime_for("pooled_runs_give_the_evidence_of_private_runs") else {
        return;
    };
    let pool = Pool::new(&runtime.path, 100);
    for case in cases() {
        let fresh = run_case(&case, &runtime, None).await;
        let pooled = run_case(&case, &runtime, Some(&pool)).await;
        let name = case.name;
        assert_ne!(
            fresh.result.stop_reason,
            StopReason::ExecutionError,
            "{name}: {:?}",
            fresh.result.error
        );
        assert_eq!(
            comparable(&fresh.result, fresh.work.path()),
            comparable(&pooled.result, pooled.work.path()),
            "{name}: a pooled run's evidence differs from a private run's"
        );
        assert_eq!(
            model_requests(&fresh),
            model_requests(&pooled),
            "{name}: the runtime asked the model something else on a pooled runtime"
        );
        assert_eq!(
            fresh.tool_calls, pooled.tool_calls,
            "{name}: tool handler calls"
        );
        assert!(
            pooled.result.runtime_pid.is_none() && pooled.result.pooled_runtime,
            "{name}: the pooled run started no runtime of its own"
        );
    }
    // One runtime per pool key (chat completions, responses) served every pooled run; the
    // budget stop's run did not end its turns, so its runtime was retired and replaced.
    assert_eq!(pool.started(), 3, "runtimes started");
    assert_eq!(pool.retired(), 1, "runtimes retired");
    pool.shutdown();
}
