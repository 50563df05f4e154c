//! What an offline session leaves out of the runtime's own machinery, end to end through the
//! real runtime, on a private and on a pooled runtime: the builtin GitHub MCP server (against
//! the loopback model server its endpoint answers 404, so it never offers a tool) and the
//! session telemetry (its endpoint is unreachable). Both cost the runtime CPU in every session
//! (`docs/performance.md`, "Where a run's CPU goes"). The runtime is the oracle for what the
//! change may not touch: the same eval with both turned back on through its extra session
//! config sends the model the same requests (system prompt, tools, conversation).
//!
//! Nothing waits on the clock: every run waits for its session's events, bounded by an ample
//! timeout.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::evidence::SessionEventType as Kind;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::pool::{Pool, PoolSource};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::{MODEL, runtime_for};
use serde_json::{Value, json};

const PROMPT: &str = "What is the weather in Paris?";
const ANSWER: &str = "It is sunny in Paris.";
/// The runtime's name for its builtin GitHub MCP server.
const BUILTIN_SERVER: &str = "github-mcp-server";

/// One tool call, then the answer.
fn script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "get_weather",
            json!({"city": "Paris"}),
        ))
        .turn(ScriptedTurn::text(ANSWER))
}

/// Which side of the comparison a run is.
#[derive(Clone, Copy, PartialEq)]
enum Settings {
    /// The offline defaults.
    Default,
    /// Both settings turned back on by the eval's extra session config.
    TurnedBackOn,
}

/// Run the scenario once in `work` (a private runtime, or a lease of `pool`); the result and
/// the model requests its loopback server received.
async fn run(
    runtime: &Path,
    pool: Option<&Arc<Pool>>,
    work: &Path,
    settings: Settings,
) -> (CopilotResult, Vec<Value>) {
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
        .await
        .unwrap();
    let mut builder = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work)
        .timeout_s(120.0)
        .tool(function_tool(
            "get_weather",
            "The current weather of a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            |_| async { Ok("sunny".to_owned()) },
        ));
    if settings == Settings::TurnedBackOn {
        builder = builder.extra_session_config(|config| {
            config
                .with_disabled_mcp_servers(Vec::<String>::new())
                .with_enable_session_telemetry(true)
        });
    }
    let eval = builder.build().unwrap();
    let mut options = RunOptions::offline(server.base_url()).runtime_path(runtime);
    if let Some(pool) = pool {
        options = options.pooled(PoolSource::Local(pool.clone()));
    }
    let result = run_turns(&eval, [PROMPT], &options).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(result.final_response.as_deref(), Some(ANSWER));
    assert_eq!(result.pooled_runtime, pool.is_some());
    let bodies = server
        .model_requests()
        .into_iter()
        .map(|request| request.body)
        .collect();
    (result, bodies)
}

/// The statuses the runtime reported for its builtin GitHub MCP server in `result`'s events.
fn builtin_server_statuses(result: &CopilotResult) -> Vec<String> {
    result
        .raw_events
        .iter()
        .filter(|event| event.kind() == Kind::SessionMcpServerStatusChanged)
        .filter(|event| event.data["serverName"] == BUILTIN_SERVER)
        .map(|event| event.data["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `bodies` as text with what differs between any two runs replaced: the run's working
/// directory, its session folder (under the runtime's home), ids and the prompt's timestamp.
fn normalized(bodies: &[Value], work: &Path, result: &CopilotResult) -> String {
    let mut text = serde_json::to_string_pretty(bodies).unwrap();
    text = text.replace(&work.display().to_string(), "<work>");
    if let Some(id) = &result.session_id {
        text = text.replace(id.as_str(), "<session>");
    }
    // The session folder's parent is the runtime's home: the line that names it.
    let lines: Vec<String> = text
        .split("\\n")
        .map(|line| {
            if line.starts_with("Session folder: ") {
                "Session folder: <home>/session-state/<session>".to_owned()
            } else if let Some(at) = line.find("<current_datetime>") {
                format!("{}<current_datetime>", &line[..at])
            } else {
                line.to_owned()
            }
        })
        .collect();
    lines.join("\\n")
}

/// Run both sides on a private runtime or on leases of one pool, and check each.
async fn both_sides(runtime: &Path, pool: Option<&Arc<Pool>>) {
    let default_work = tempfile::tempdir().unwrap();
    let (default, default_bodies) =
        run(runtime, pool, default_work.path(), Settings::Default).await;
    let on_work = tempfile::tempdir().unwrap();
    let (on, on_bodies) = run(runtime, pool, on_work.path(), Settings::TurnedBackOn).await;

    // By default the runtime never starts its GitHub MCP server; turned back on, it starts it
    // (and it fails against the loopback server).
    assert_eq!(builtin_server_statuses(&default), Vec::<String>::new());
    let statuses = builtin_server_statuses(&on);
    assert!(
        !statuses.is_empty(),
        "turned back on, the runtime reports its GitHub MCP server: {statuses:?}"
    );
    // The builtin server is never one of the eval's MCP servers.
    assert!(default.mcp_servers.is_empty() && on.mcp_servers.is_empty());
    // On a pooled runtime, a session after one that started the server does not get it.
    if let Some(pool) = pool {
        let idle = pool.idle_pids();
        assert_eq!(idle.len(), 1, "one runtime served both leases: {idle:?}");
        let after_work = tempfile::tempdir().unwrap();
        let (after, _) = run(runtime, Some(pool), after_work.path(), Settings::Default).await;
        assert_eq!(
            pool.idle_pids(),
            idle,
            "the same runtime served the third lease"
        );
        assert_eq!(builtin_server_statuses(&after), Vec::<String>::new());
    }

    // What reached the model is the same.
    assert_eq!(default_bodies.len(), 2);
    let default_text = normalized(&default_bodies, default_work.path(), &default);
    let on_text = normalized(&on_bodies, on_work.path(), &on);
    assert!(
        default_text == on_text,
        "the model requests differ:\n{}",
        first_difference(&default_text, &on_text)
    );
}

/// Where `a` and `b` first differ: 80 characters of each from a little before that point.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    // `at` is a character boundary in both (all before it is the same); back off to one.
    let window = |text: &str| -> String {
        let start = (0..=at.saturating_sub(20))
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text[start..].chars().take(80).collect()
    };
    format!("{:?}\n{:?}", window(a), window(b))
}

/// On a private runtime: the default offline session leaves out the builtin GitHub MCP server
/// and the session telemetry; turned back on, the model sees the same requests.
#[tokio::test]
async fn a_private_offline_session_leaves_out_the_builtin_github_mcp_server() {
    let Some(runtime) =
        runtime_for("a_private_offline_session_leaves_out_the_builtin_github_mcp_server")
    else {
        return;
    };
    both_sides(&runtime.path, None).await;
}

/// The same on leases of one pooled runtime, and a third lease after the one that turned the
/// server back on leaves it out again.
#[tokio::test]
async fn a_pooled_offline_session_leaves_out_the_builtin_github_mcp_server() {
    let Some(runtime) =
        runtime_for("a_pooled_offline_session_leaves_out_the_builtin_github_mcp_server")
    else {
        return;
    };
    let pool = Pool::new(&runtime.path, 100);
    both_sides(&runtime.path, Some(&pool)).await;
}
