//! MCP servers in offline runs, end to end through the real runtime. Over stdio the server is a
//! real process, the point of those tests (launching, a process that cannot start or never
//! answers, leftovers): `tests/fixtures/mcp/stdio-server.js`, node without packages; with
//! `MCP_FIXTURE_LOG` it logs its pid, the `initialize` request and each call it serves. Over
//! HTTP on 127.0.0.1 the server is an in-process mock (`McpMock`, `lookup_mock`) configured
//! as any HTTP server, whose `calls()` show what it served. Both have one tool, `lookup {key}`
//! → `value-of-<key>`; the runtime names it `<server>-lookup`.
//!
//! Shown: a scripted eval calls the tool and gets its answer, over stdio and over HTTP (and the
//! evidence lists the server `connected` with 1 tool, not the runtime's builtin
//! `github-mcp-server`, started there as live); the same session recorded through the stand-in replays from its
//! cassette (stdio; HTTP with the server on another port); `max_tool_calls = 0` denies the MCP
//! call before it reaches the server (stdio and HTTP); a stdio server that cannot start, or an
//! HTTP server that refuses connections, ends the run as `mcp_setup_error` naming it, before the
//! prompt is sent; a stdio server that never answers `initialize` ends the run at the eval's
//! timeout as `mcp_setup_error` naming it (not a bare timeout nor a cleanup error); the same
//! failing server added with `optional_mcp_server` is recorded `failed` and the run goes on. A
//! tool whose `<server>-<tool>` name is over 64 characters reaches the model cut to 64 (checked
//! against the model request's tool list): the evidence lists the tool's advertised and cut
//! names with a warning, a call of the full name stops the run `runtime_substitution`, a call of
//! the cut name is served. A connected server that gives the model no tool (its `tools` filter
//! matches none of its tools, or it lists none: checked against the model requests' tool lists)
//! stops the run as `mcp_setup_error` naming why, or, optional, is a warning. After every run,
//! neither the runtime nor a stdio server process is left.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::cassette::{CassetteHeader, Recorder, ReplaySession};
use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::evidence::denial::DenialKind;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::Redactor;
use copilot_eval_core::sdk::{McpHttpServerConfig, McpServerConfig, McpStdioServerConfig};
use copilot_eval_core::{CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{MODEL, Offline, assert_no_runtime_left, lookup_mock, runtime_for};
use serde_json::{Value, json};

/// The stdio fixture as an MCP server configuration: `node stdio-server.js ARGS`, logging to
/// `log`.
fn fixture_server(log: &Path, args: &[&str]) -> McpServerConfig {
    let mut config = fixture_server_with_tool(log, args, "lookup");
    if let McpServerConfig::Stdio(stdio) = &mut config {
        stdio.env.remove("MCP_FIXTURE_TOOL");
    }
    config
}

/// The stdio fixture with its one tool named `tool` (`MCP_FIXTURE_TOOL`).
fn fixture_server_with_tool(log: &Path, args: &[&str], tool: &str) -> McpServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/stdio-server.js");
    let mut all = vec![script.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    McpServerConfig::Stdio(McpStdioServerConfig {
        command: "node".to_owned(),
        args: all,
        env: [
            (
                "MCP_FIXTURE_LOG".to_owned(),
                log.to_string_lossy().into_owned(),
            ),
            ("MCP_FIXTURE_TOOL".to_owned(), tool.to_owned()),
        ]
        .into(),
        ..Default::default()
    })
}

/// Turn 1 calls `fixture-lookup {key: k1}`, turn 2 answers.
fn lookup_script() -> Script {
    lookup_script_on("fixture")
}

/// Turn 1 calls `<server>-lookup {key: k1}`, turn 2 answers.
fn lookup_script_on(server: &str) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            format!("{server}-lookup"),
            json!({"key": "k1"}),
        ))
        .turn(ScriptedTurn::text("done"))
}

/// The folder of a stdio fixture's log (`MCP_FIXTURE_LOG`), which its session must be let write
/// (docs/sandbox.md); the temporary folder for another server.
fn log_dir(config: &McpServerConfig) -> std::path::PathBuf {
    match config {
        McpServerConfig::Stdio(stdio) => stdio
            .env
            .get("MCP_FIXTURE_LOG")
            .and_then(|log| Path::new(log).parent().map(Path::to_path_buf))
            .unwrap_or_else(std::env::temp_dir),
        _ => std::env::temp_dir(),
    }
}

/// The fixture log's lines (empty when the server never started).
fn fixture_log(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every fixture process that logged its pid has exited (read from `/proc`, Linux).
fn assert_no_fixture_left(log: &Path) {
    for line in fixture_log(log) {
        if let Some(pid) = line.strip_prefix("pid ") {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next());
            assert!(
                matches!(state, None | Some('Z') | Some('X')),
                "MCP fixture process {pid} is still alive after the run: {stat}"
            );
        }
    }
}

/// The one call of `fixture-lookup` in `result`, answered by the fixture.
fn assert_lookup_answered(result: &CopilotResult, label: &str) {
    assert_answered_by(result, "fixture", label);
}

/// The one call of `<server>-lookup` in `result`, answered by the fixture named `server`, the
/// only configured server, `connected` with 1 tool.
fn assert_answered_by(result: &CopilotResult, server: &str, label: &str) {
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{label}: {:?}",
        result.error
    );
    assert!(result.success, "{label}");
    let tool = format!("{server}-lookup");
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == tool)
        .unwrap_or_else(|| panic!("{label}: no MCP call in {:#?}", result.tool_calls));
    assert_eq!(call.success, Some(true), "{label}: {call:?}");
    assert_eq!(call.result.as_deref(), Some("value-of-k1"), "{label}");
    assert_eq!(
        result.mcp_servers.len(),
        1,
        "{label}: {:?}",
        result.mcp_servers
    );
    let state = &result.mcp_servers[0];
    assert_eq!(
        (state.name.as_str(), state.status.as_str(), state.tool_count),
        (server, "connected", Some(1)),
        "{label}: {state:?}"
    );
}

#[tokio::test]
async fn an_offline_eval_calls_a_stdio_mcp_tool_and_gets_its_answer() {
    let Some(runtime) = runtime_for("an_offline_eval_calls_a_stdio_mcp_tool_and_gets_its_answer")
    else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    // The runtime's builtin GitHub server, which an offline session leaves out by default
    // (tests/tests/offline_settings.rs), is started here as in a live session: an eval that
    // sets `disabled_mcp_servers` itself gets it.
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server(&log, &[]))
        .sandbox_allow_write(log.parent().unwrap())
        .extra_session_config(|c| c.with_disabled_mcp_servers(Vec::<String>::new()))
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_lookup_answered(&result, "scripted");
    assert_eq!(
        fixture_log(&log)
            .iter()
            .filter(|l| l.starts_with("call "))
            .collect::<Vec<_>>(),
        ["call k1"],
        "the fixture served the call"
    );
    // The runtime's builtin GitHub server failed against the loopback server, and neither
    // failed the eval nor shows in the evidence.
    let builtin: Vec<&serde_json::Value> = result
        .raw_events
        .iter()
        .filter(|e| {
            e.kind() == SessionEventType::SessionMcpServerStatusChanged
                && e.data["serverName"] == "github-mcp-server"
        })
        .map(|e| &e.data["status"])
        .collect();
    assert_eq!(
        builtin.last().and_then(|s| s.as_str()),
        Some("failed"),
        "the runtime tried its builtin server and it failed: {builtin:?}"
    );
    // The JSON report carries the same.
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(
        value["mcp_servers"],
        json!([{"name": "fixture", "status": "connected", "tool_count": 1,
            "tools": [{"name": "lookup", "model_name": "fixture-lookup"}],
            "offered_tools": ["fixture-lookup"]}])
    );
    assert_no_fixture_left(&log);
}

#[tokio::test]
async fn a_zero_tool_budget_denies_the_mcp_call_before_it_reaches_the_server() {
    let Some(runtime) =
        runtime_for("a_zero_tool_budget_denies_the_mcp_call_before_it_reaches_the_server")
    else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server(&log, &[]))
        .sandbox_allow_write(log.parent().unwrap())
        .max_tool_calls(0)
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::ToolBudgetExceeded,
        "{:?}",
        result.error
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "fixture-lookup")
        .unwrap_or_else(|| panic!("no MCP call in {:#?}", result.tool_calls));
    assert!(
        call.denied
            .as_ref()
            .is_some_and(|d| d.kind == DenialKind::Budget),
        "{call:?}"
    );
    assert_ne!(call.success, Some(true), "{call:?}");
    let log_lines = fixture_log(&log);
    assert!(
        log_lines.iter().any(|l| l.starts_with("pid ")),
        "the server was started: {log_lines:?}"
    );
    assert!(
        !log_lines.iter().any(|l| l.starts_with("call ")),
        "the denied call reached the server: {log_lines:?}"
    );
    assert_no_fixture_left(&log);
}

#[tokio::test]
async fn a_server_that_cannot_start_ends_the_run_as_a_setup_error_naming_it() {
    let Some(runtime) =
        runtime_for("a_server_that_cannot_start_ends_the_run_as_a_setup_error_naming_it")
    else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server(&log, &[]))
        .mcp_server("broken", fixture_server(&log, &["--fail-start"]))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::McpSetupError,
        "{:?}",
        result.error
    );
    assert!(!result.success);
    let error = result.error.clone().unwrap();
    assert!(error.contains("`broken` is failed"), "{error}");
    assert!(!error.contains("`fixture`"), "{error}");
    let statuses: Vec<(&str, &str)> = result
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str()))
        .collect();
    assert_eq!(statuses, [("fixture", "connected"), ("broken", "failed")]);
    assert!(
        result.mcp_servers[1].error.is_some(),
        "{:?}",
        result.mcp_servers
    );
    assert!(
        result.mcp_servers.iter().all(|s| !s.optional),
        "servers are required by default"
    );
    // Stopped before the prompt: no turn, no model request.
    assert!(result.turns.is_empty(), "{:?}", result.turns);
    assert!(
        offline.server.model_requests().is_empty(),
        "a model request was made"
    );
    assert_no_fixture_left(&log);
}

/// Record a session calling `<server>-lookup` through the stand-in (the scripted server in place
/// of the model service) with the MCP server `record`, write its cassette, then replay it in a
/// fresh working directory with the MCP server `replay`. Both runs must call the tool and get its
/// answer from the server, with every recorded reply served.
async fn record_then_replay(
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    server_name: &str,
    record: McpServerConfig,
    replay: McpServerConfig,
) {
    let scratch = tempfile::tempdir().unwrap();
    let recording_dir = tempfile::tempdir().unwrap();
    let server =
        ModelServer::start(ServerConfig::new(Arc::new(lookup_script_on(server_name))).model(MODEL))
            .await
            .unwrap();
    let recorder = Recorder::new();
    let eval = copilot_eval_core::CopilotEval::builder()
        .model(MODEL)
        .working_directory(recording_dir.path())
        .mcp_server(server_name, record.clone())
        .sandbox_allow_write(log_dir(&record))
        .build()
        .unwrap();
    let recorded = run_with(
        &eval,
        "Look up k1.",
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert_no_runtime_left(&recorded);
    assert_answered_by(&recorded, server_name, "recording");
    let cassette = recorder
        .cassette(CassetteHeader::default(), &Redactor::default())
        .unwrap();
    let path = scratch.path().join("mcp.yaml");
    cassette.write(&path, "recorded by the mcp test").unwrap();

    // Replay in a fresh working directory: the runtime launches (or connects to) the server again.
    let replay_dir = tempfile::tempdir().unwrap();
    let session = ReplaySession::start(&path).await.unwrap();
    let eval = copilot_eval_core::CopilotEval::builder()
        .model(session.model())
        .working_directory(replay_dir.path())
        .mcp_server(server_name, replay.clone())
        .sandbox_allow_write(log_dir(&replay))
        .build()
        .unwrap();
    let replayed = run_with(
        &eval,
        "Look up k1.",
        &session.run_options().runtime_path(&runtime.path),
    )
    .await;
    let unconsumed = session.unconsumed();
    session.shutdown().await;
    assert_no_runtime_left(&replayed);
    assert!(unconsumed.is_empty(), "{unconsumed:?}");
    assert_answered_by(&replayed, server_name, "replay");
}

#[tokio::test]
async fn an_mcp_session_recorded_through_the_stand_in_replays_from_its_cassette() {
    let Some(runtime) =
        runtime_for("an_mcp_session_recorded_through_the_stand_in_replays_from_its_cassette")
    else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    record_then_replay(
        &runtime,
        "fixture",
        fixture_server(&log, &[]),
        fixture_server(&log, &[]),
    )
    .await;
    let calls = fixture_log(&log)
        .into_iter()
        .filter(|l| l.starts_with("call "))
        .count();
    assert_eq!(calls, 2, "one call per run reached the server");
    assert_no_fixture_left(&log);
}

#[tokio::test]
async fn an_http_mcp_session_recorded_through_the_stand_in_replays_with_another_port() {
    let Some(runtime) =
        runtime_for("an_http_mcp_session_recorded_through_the_stand_in_replays_with_another_port")
    else {
        return;
    };
    let (first, second) = (lookup_mock("web"), lookup_mock("web"));
    let (first_config, second_config) = (first.config().unwrap(), second.config().unwrap());
    assert_ne!(first.url().unwrap(), second.url().unwrap());
    record_then_replay(&runtime, "web", first_config, second_config).await;
    for (label, server) in [("recording", &first), ("replay", &second)] {
        let served: Vec<Value> = server.calls().into_iter().map(|c| c.arguments).collect();
        assert_eq!(
            served,
            [json!({"key": "k1"})],
            "{label}: one call reached its server"
        );
    }
}

#[tokio::test]
async fn a_server_that_never_finishes_starting_ends_the_run_at_the_timeout_naming_it() {
    let Some(runtime) =
        runtime_for("a_server_that_never_finishes_starting_ends_the_run_at_the_timeout_naming_it")
    else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    // The bound is the eval's timeout (60 s, from `Offline::eval`): ample for the runtime to
    // start and connect the working server; the stuck one never answers, however long.
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server(&log, &[]))
        .mcp_server("slow", fixture_server(&log, &["--never-initialize"]))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::McpSetupError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap();
    assert!(error.contains("`slow` is pending"), "{error}");
    assert!(error.contains("timeout_s (60s)"), "{error}");
    assert!(!error.contains("`fixture`"), "{error}");
    assert!(
        result.cleanup_errors.is_empty(),
        "{:?}",
        result.cleanup_errors
    );
    let statuses: Vec<(&str, &str)> = result
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str()))
        .collect();
    assert_eq!(statuses, [("fixture", "connected"), ("slow", "pending")]);
    assert!(
        fixture_log(&log).iter().any(|l| l == "initialize"),
        "the stuck server was started and asked to initialize: {:?}",
        fixture_log(&log)
    );
    assert!(result.turns.is_empty(), "{:?}", result.turns);
    assert!(
        offline.server.model_requests().is_empty(),
        "a model request was made"
    );
    assert_no_fixture_left(&log);
}

#[tokio::test]
async fn an_offline_eval_calls_an_http_mcp_tool_and_gets_its_answer() {
    let Some(runtime) = runtime_for("an_offline_eval_calls_an_http_mcp_tool_and_gets_its_answer")
    else {
        return;
    };
    let http = lookup_mock("web");
    let offline = Offline::start(&runtime, lookup_script_on("web")).await;
    let eval = offline
        .eval()
        .mcp_server("web", http.config().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_answered_by(&result, "web", "http");
    let served: Vec<Value> = http.calls().into_iter().map(|c| c.arguments).collect();
    assert_eq!(
        served,
        [json!({"key": "k1"})],
        "the HTTP server served the call"
    );
}

#[tokio::test]
async fn an_http_server_that_refuses_connections_ends_the_run_as_a_setup_error_naming_it() {
    let Some(runtime) = runtime_for(
        "an_http_server_that_refuses_connections_ends_the_run_as_a_setup_error_naming_it",
    ) else {
        return;
    };
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let offline = Offline::start(&runtime, lookup_script_on("web")).await;
    let config = McpServerConfig::Http(McpHttpServerConfig {
        url: format!("http://127.0.0.1:{port}/mcp"),
        ..Default::default()
    });
    let eval = offline.eval().mcp_server("web", config).build().unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::McpSetupError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap();
    assert!(error.contains("`web` is failed"), "{error}");
    assert!(
        offline.server.model_requests().is_empty(),
        "a model request was made"
    );
}

#[tokio::test]
async fn a_zero_tool_budget_denies_the_http_mcp_call_before_it_reaches_the_server() {
    let Some(runtime) =
        runtime_for("a_zero_tool_budget_denies_the_http_mcp_call_before_it_reaches_the_server")
    else {
        return;
    };
    let http = lookup_mock("web");
    let offline = Offline::start(&runtime, lookup_script_on("web")).await;
    let eval = offline
        .eval()
        .mcp_server("web", http.config().unwrap())
        .max_tool_calls(0)
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::ToolBudgetExceeded,
        "{:?}",
        result.error
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "web-lookup")
        .unwrap_or_else(|| panic!("no MCP call in {:#?}", result.tool_calls));
    assert!(
        call.denied
            .as_ref()
            .is_some_and(|d| d.kind == DenialKind::Budget),
        "{call:?}"
    );
    let state = &result.mcp_servers[0];
    assert_eq!(
        (state.status.as_str(), state.tool_count),
        ("connected", Some(1)),
        "the server was connected: {state:?}"
    );
    assert!(
        http.calls().is_empty(),
        "the denied call reached the server: {:?}",
        http.calls()
    );
}

/// A tool name the runtime cuts: `fixture-<tool>` is 71 characters.
const LONG_TOOL: &str = "look_up_the_value_stored_under_a_key_in_the_fixture_store_please";

#[tokio::test]
async fn a_tool_name_over_64_characters_is_shown_cut_and_a_full_name_call_is_a_runtime_substitution()
 {
    let Some(runtime) = runtime_for(
        "a_tool_name_over_64_characters_is_shown_cut_and_a_full_name_call_is_a_runtime_substitution",
    ) else {
        return;
    };
    let full = format!("fixture-{LONG_TOOL}");
    assert!(full.len() > 64);
    let seen: String = full.chars().take(64).collect();
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");

    // The model calls the full name (the rule `<server>-<tool>`): the call fails and the run
    // stops as the runtime's doing.
    let offline = Offline::start(
        &runtime,
        Script::new([])
            .turn(ScriptedTurn::tool_call(full.clone(), json!({"key": "k1"})))
            .turn(ScriptedTurn::text("done")),
    )
    .await;
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server_with_tool(&log, &[], LONG_TOOL))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    // The oracle: the name the runtime gave the model is the one the evidence derives.
    let offered = &offline.server.model_requests()[0].tool_names;
    assert!(offered.contains(&seen), "{offered:?}");
    assert!(!offered.contains(&full), "{offered:?}");
    let state = &result.mcp_servers[0];
    assert_eq!(state.status, "connected", "{state:?}");
    assert_eq!(state.tools.len(), 1, "{state:?}");
    assert_eq!(
        (
            state.tools[0].name.as_str(),
            state.tools[0].model_name.as_str()
        ),
        (LONG_TOOL, seen.as_str())
    );
    assert_eq!(state.warnings.len(), 1, "{state:?}");
    assert!(
        state.warnings[0].contains(&format!("the model sees it as `{seen}`")),
        "{}",
        state.warnings[0]
    );
    assert_eq!(
        result.stop_reason,
        StopReason::RuntimeSubstitution,
        "{:?} {:#?}",
        result.error,
        result.tool_calls
    );
    assert!(!result.success);
    let call = &result.tool_calls[0];
    assert_eq!(call.name, full, "the name as the model called it");
    assert_eq!(call.runtime_name.as_deref(), Some(seen.as_str()));
    assert!(
        call.error
            .as_deref()
            .unwrap_or("")
            .contains("does not exist"),
        "{call:?}"
    );
    let error = result.error.clone().unwrap();
    assert!(
        error.contains(&format!(
            "called `{full}`, the full name of MCP tool `{LONG_TOOL}` of server `fixture`"
        )),
        "{error}"
    );
    assert!(
        !fixture_log(&log).iter().any(|l| l.starts_with("call ")),
        "the call never reached the server"
    );
    // The JSON record and the HTML report carry the names and the warning.
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    assert!(record.is_infrastructure_stop());
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(
        value["mcp_servers"][0]["tools"][0]["model_name"],
        json!(seen)
    );
    assert_eq!(value["tool_calls"][0]["runtime_name"], json!(seen));
    assert!(value["mcp_servers"][0]["warnings"][0].is_string());

    // The model calls the name it was given: the server answers and the run completes.
    let offline = Offline::start(
        &runtime,
        Script::new([])
            .turn(ScriptedTurn::tool_call(seen.clone(), json!({"key": "k2"})))
            .turn(ScriptedTurn::text("done")),
    )
    .await;
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server_with_tool(&log, &[], LONG_TOOL))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k2.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    let call = &result.tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.runtime_name.as_deref()),
        (seen.as_str(), None)
    );
    assert_eq!(call.result.as_deref(), Some("value-of-k2"));
    assert_eq!(result.mcp_servers[0].warnings.len(), 1, "still warned");
    assert_no_fixture_left(&log);
}

#[tokio::test]
async fn an_optional_server_that_cannot_start_is_recorded_and_the_run_goes_on() {
    let Some(runtime) =
        runtime_for("an_optional_server_that_cannot_start_is_recorded_and_the_run_goes_on")
    else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    let eval = offline
        .eval()
        .mcp_server("fixture", fixture_server(&log, &[]))
        .optional_mcp_server("broken", fixture_server(&log, &["--fail-start"]))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.tool_calls_for("fixture-lookup")[0].result.as_deref(),
        Some("value-of-k1")
    );
    let statuses: Vec<(&str, &str, bool)> = result
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str(), s.optional))
        .collect();
    assert_eq!(
        statuses,
        [("fixture", "connected", false), ("broken", "failed", true)]
    );
    assert!(result.mcp_servers[1].error.is_some());
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(value["mcp_servers"][1]["optional"], json!(true));
    assert_eq!(value["mcp_servers"][0].get("optional"), None);
    assert_eq!(
        value["configuration"]["optional_mcp_servers"],
        json!(["broken"])
    );
    assert_no_fixture_left(&log);
}

/// An MCP tool that returns `structuredContent` beside its text: the evidence keeps it as JSON
/// on the call (`ToolCall::structured_content`), and the JSON record carries it.
#[tokio::test]
async fn an_mcp_tools_structured_content_is_in_the_evidence() {
    let Some(runtime) = runtime_for("an_mcp_tools_structured_content_is_in_the_evidence") else {
        return;
    };
    let offline = Offline::start(&runtime, lookup_script()).await;
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    let mut server = fixture_server(&log, &[]);
    if let McpServerConfig::Stdio(stdio) = &mut server {
        stdio
            .env
            .insert("MCP_FIXTURE_STRUCTURED".to_owned(), "1".to_owned());
    }
    let eval = offline
        .eval()
        .mcp_server("fixture", server)
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert!(
        result.success,
        "{:?}: {:?}",
        result.stop_reason, result.error
    );
    let call = result
        .tool_calls
        .iter()
        .find(|c| c.name == "fixture-lookup")
        .unwrap_or_else(|| panic!("no MCP call in {:#?}", result.tool_calls));
    assert_eq!(call.success, Some(true), "{call:?}");
    // Runtime 1.0.102 gives the model the text, then the structured content as JSON.
    assert_eq!(
        call.result.as_deref(),
        Some("value-of-k1\n\n{\"key\":\"k1\",\"value\":\"value-of-k1\"}"),
        "{call:?}"
    );
    assert_eq!(
        call.structured_content,
        Some(json!({"key": "k1", "value": "value-of-k1"})),
        "{call:?}"
    );
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(
        value["tool_calls"][0]["structured_content"]["value"], "value-of-k1",
        "{}",
        value["tool_calls"][0]
    );
    assert_no_fixture_left(&log);
}

/// The stdio fixture with the `tools` filter `filter` and, when `no_tools`, no tools at all
/// (`MCP_FIXTURE_NO_TOOLS=1`).
fn filtered_server(log: &Path, filter: Option<&[&str]>, no_tools: bool) -> McpServerConfig {
    let mut config = fixture_server(log, &[]);
    if let McpServerConfig::Stdio(stdio) = &mut config {
        stdio.tools = filter.map(|f| f.iter().map(|t| (*t).to_owned()).collect());
        if no_tools {
            stdio
                .env
                .insert("MCP_FIXTURE_NO_TOOLS".to_owned(), "1".to_owned());
        }
    }
    config
}

/// A connected server that gives the model no tool: its `tools` filter names the tool by its
/// model-side name (`fixture-lookup`; the filter takes the name the server lists, `lookup`), or
/// it lists no tools. The runtime reports it `connected` either way and the run would complete;
/// what the model requests carried (the oracle: the scripted server's record of them) shows the
/// model got nothing from it, so the run stops `mcp_setup_error` naming why, the server's
/// `offered_tools` is empty, and no call reached it. The filter that names the tool as listed
/// gives the model the tool and completes.
#[tokio::test]
async fn a_required_server_that_gives_the_model_no_tool_is_a_setup_error_naming_why() {
    let Some(runtime) =
        runtime_for("a_required_server_that_gives_the_model_no_tool_is_a_setup_error_naming_why")
    else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    for (filter, no_tools, why) in [
        (
            Some(&["fixture-lookup"][..]),
            false,
            "its `tools` filter [\"fixture-lookup\"] matches none of the tools it lists (`lookup`)",
        ),
        (None, true, "the server lists no tools"),
    ] {
        let offline = Offline::start(&runtime, lookup_script()).await;
        let eval = offline
            .eval()
            .mcp_server("fixture", filtered_server(&log, filter, no_tools))
            .sandbox_allow_write(log.parent().unwrap())
            .build()
            .unwrap();
        let result = offline.run(&eval, "Look up k1.").await;
        let offered = &offline.server.model_requests()[0].tool_names;
        assert!(
            !offered.iter().any(|t| t.starts_with("fixture-")),
            "{why}: the model was offered {offered:?}"
        );
        let state = &result.mcp_servers[0];
        assert_eq!(state.status, "connected", "{why}: {state:?}");
        assert_eq!(state.offered_tools, Some(vec![]), "{why}: {state:?}");
        assert_eq!(
            result.stop_reason,
            StopReason::McpSetupError,
            "{why}: {:?}",
            result.error
        );
        assert!(!result.success);
        let error = result.error.clone().unwrap();
        assert!(
            error.contains(
                "MCP server `fixture` gave the model no tool: the runtime reported it connected"
            ),
            "{error}"
        );
        assert!(error.contains(why), "{error}");
        assert!(
            !fixture_log(&log).iter().any(|l| l.starts_with("call ")),
            "{why}: a call reached the server"
        );
    }

    // The filter as the server lists the tool: the model gets it.
    let offline = Offline::start(&runtime, lookup_script()).await;
    let eval = offline
        .eval()
        .mcp_server("fixture", filtered_server(&log, Some(&["lookup"]), false))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_lookup_answered(&result, "filter `lookup`");
    assert_eq!(
        result.mcp_servers[0].offered_tools,
        Some(vec!["fixture-lookup".to_owned()])
    );
    assert_no_fixture_left(&log);
}

/// The same server added with `optional_mcp_server`: the run goes on (the model's call of the
/// tool it was never offered fails, its own doing), and the run and the server carry a warning
/// naming why; the JSON record has the empty `offered_tools`.
#[tokio::test]
async fn an_optional_server_that_gives_the_model_no_tool_is_a_warning() {
    let Some(runtime) = runtime_for("an_optional_server_that_gives_the_model_no_tool_is_a_warning")
    else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("fixture.log");
    let offline = Offline::start(&runtime, lookup_script()).await;
    let eval = offline
        .eval()
        .optional_mcp_server("fixture", filtered_server(&log, Some(&["nomatch"]), false))
        .sandbox_allow_write(log.parent().unwrap())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Look up k1.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    let call = &result.tool_calls_for("fixture-lookup")[0];
    assert!(
        call.error
            .as_deref()
            .unwrap_or_default()
            .contains("does not exist"),
        "{call:?}"
    );
    let warning = "MCP server `fixture` gave the model no tool: the runtime reported it connected with 1 tool, but no model request offered any of its tools; its `tools` filter [\"nomatch\"] matches none of the tools it lists (`lookup`)";
    assert!(
        result.warnings.iter().any(|w| w.starts_with(warning)),
        "{:#?}",
        result.warnings
    );
    let state = &result.mcp_servers[0];
    assert!(
        state.warnings.iter().any(|w| w.starts_with(warning)),
        "{state:?}"
    );
    let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(value["mcp_servers"][0]["offered_tools"], json!([]));
    assert_no_fixture_left(&log);
}
