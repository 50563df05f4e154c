//! The session's sandbox (docs/sandbox.md), through the real runtime with a scripted model and
//! default settings: the agent's `bash` cannot read a file planted outside the eval's folders,
//! cannot create a file outside its working directory, and cannot connect to a loopback port
//! the session does not use (the test's own listener sees no connection); with
//! `sandbox = false` it does all three. On a private runtime and on one leased from a pool.
//! Without Landlock (the kernel check's test double), `sandbox = "required"` fails before any
//! session and the default warns on the result. Under the runner, pooled and `--fresh-runtime`
//! alike (the fixture's `probes_the_sandbox`).

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use copilot_eval_core::evidence::sandbox::SandboxState;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::pool::{Pool, PoolSource};
use copilot_eval_core::run::TestFaults;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::runtime_for;
use serde_json::json;

mod support;

const MODEL: &str = "claude-sonnet-4.5";
const SECRET: &str = "PLANTED-SECRET-5b1e";

/// A loopback listener that counts the connections it accepts, on a thread of its own.
struct Listener {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stream.is_ok() {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Listener { port, accepted }
    }

    /// The connections accepted, once `expected` arrived or 10 s passed.
    fn accepted(&self, expected: usize) -> usize {
        let began = Instant::now();
        while self.accepted.load(Ordering::SeqCst) < expected
            && began.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.accepted.load(Ordering::SeqCst)
    }
}

/// The folder outside every folder a session may touch: neither the temporary folder (a pool's
/// runtimes write there) nor the workspace (a pool's runtimes read it) nor the user's home.
fn outside() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("copilot-eval-sandbox-probe-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// The agent's four `bash` calls: read the planted secret, create a file beside it, connect to
/// the listener's port, and (allowed everywhere) write a file in its working directory.
fn script(secret: &Path, created: &Path, port: u16) -> Script {
    let bash = |command: String| {
        ScriptedTurn::tool_call("bash", json!({"command": command, "description": "Probe"}))
    };
    Script::new([])
        .turn(bash(format!("cat {}", secret.display())))
        .turn(bash(format!("touch {} && echo created", created.display())))
        .turn(bash(format!(
            "timeout 10 bash -c 'echo probe > /dev/tcp/127.0.0.1/{port}' && echo connected"
        )))
        .turn(bash("echo inside > inside.txt && echo wrote".to_owned()))
        .turn(ScriptedTurn::text("Done."))
}

struct Probed {
    result: CopilotResult,
    read: String,
    created: bool,
    connections: usize,
    wrote_inside: bool,
}

async fn probe(runtime: &Path, sandbox: bool, pool: Option<&Arc<Pool>>) -> Probed {
    let outside = outside();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, SECRET).unwrap();
    let created = outside.path().join("created.txt");
    let listener = Listener::start();
    let work = tempfile::tempdir().unwrap();
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(script(&secret, &created, listener.port))).model(MODEL),
    )
    .await
    .unwrap();
    let mut eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(120.0);
    if !sandbox {
        eval = eval.sandbox(false);
    }
    let eval = eval.build().unwrap();
    let mut options = RunOptions::offline(server.base_url()).runtime_path(runtime);
    if let Some(pool) = pool {
        options = options.pooled(PoolSource::Local(pool.clone()));
    }
    let result = run_turns(&eval, ["Probe."], &options).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "sandbox {sandbox}: {:?} {:?}",
        result.error,
        result.tool_calls
    );
    assert_eq!(result.tool_calls.len(), 4, "{:?}", result.tool_calls);
    let read = result.tool_calls[0].result.clone().unwrap_or_default()
        + result.tool_calls[0].error.as_deref().unwrap_or_default();
    Probed {
        read,
        created: created.exists(),
        connections: listener.accepted(usize::from(!sandbox)),
        wrote_inside: work.path().join("inside.txt").exists(),
        result,
    }
}

fn assert_confined(probed: &Probed, label: &str) {
    let sandbox = probed.result.sandbox.as_ref().expect("a sandbox record");
    assert_eq!(sandbox.state, SandboxState::Confined, "{label}");
    assert!(
        !probed.read.contains(SECRET),
        "{label}: read {}",
        probed.read
    );
    assert!(
        probed.read.contains("Permission denied"),
        "{label}: {}",
        probed.read
    );
    assert!(
        !probed.created,
        "{label}: created a file outside its working directory"
    );
    assert_eq!(
        probed.connections, 0,
        "{label}: the listener saw a connection"
    );
    assert!(
        probed.wrote_inside,
        "{label}: its own working directory is writable"
    );
    // The refusals the tool output shows: the first three calls, in order.
    let ids: Vec<&str> = probed.result.tool_calls[..3]
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let refused: Vec<&str> = sandbox
        .refusals
        .iter()
        .map(|r| r.tool_call_id.as_str())
        .collect();
    assert_eq!(refused, ids, "{label}: {:?}", sandbox.refusals);
    assert!(
        probed
            .result
            .warnings
            .iter()
            .all(|w| !w.starts_with("unsandboxed"))
    );
}

fn assert_free(probed: &Probed, label: &str) {
    let sandbox = probed.result.sandbox.as_ref().expect("a sandbox record");
    assert_eq!(sandbox.state, SandboxState::Off, "{label}");
    assert!(
        probed.read.contains(SECRET),
        "{label}: read {}",
        probed.read
    );
    assert!(probed.created, "{label}: created nothing");
    assert_eq!(
        probed.connections, 1,
        "{label}: the listener saw no connection"
    );
    assert!(sandbox.refusals.is_empty());
    assert_eq!(probed.result.configuration.sandbox.as_str(), "off");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_agents_shell_is_confined_by_default_on_a_private_runtime() {
    let Some(runtime) = runtime_for("the_agents_shell_is_confined_by_default_on_a_private_runtime")
    else {
        return;
    };
    let confined = probe(&runtime.path, true, None).await;
    assert_confined(&confined, "private");
    assert!(!confined.result.pooled_runtime);
    let free = probe(&runtime.path, false, None).await;
    assert_free(&free, "private, sandbox = false");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_agents_shell_is_confined_by_default_on_a_pooled_runtime() {
    let Some(runtime) = runtime_for("the_agents_shell_is_confined_by_default_on_a_pooled_runtime")
    else {
        return;
    };
    let pool = Pool::new(&runtime.path, 10);
    assert!(
        pool.sandbox().is_some(),
        "the pool confines where the kernel can"
    );
    let confined = probe(&runtime.path, true, Some(&pool)).await;
    assert!(
        confined.result.pooled_runtime,
        "the confined run leased a pooled runtime"
    );
    assert_confined(&confined, "pooled");
    // A second lease of the same runtime is confined as well.
    let again = probe(&runtime.path, true, Some(&pool)).await;
    assert!(again.result.pooled_runtime);
    assert_confined(&again, "pooled, second lease");
    assert_eq!(pool.started(), 1);
    // `sandbox = false` never runs on a confined pool's runtime: it starts its own.
    let free = probe(&runtime.path, false, Some(&pool)).await;
    assert!(!free.result.pooled_runtime);
    assert_free(&free, "pool, sandbox = false");
    pool.shutdown();
}

/// The kernel check's test double says "no Landlock": `sandbox = "required"` fails before any
/// session (no runtime started, no model request); the default runs, unconfined, with the
/// warning.
#[tokio::test]
async fn without_landlock_required_fails_before_the_session_and_on_warns() {
    let Some(runtime) =
        runtime_for("without_landlock_required_fails_before_the_session_and_on_warns")
    else {
        return;
    };
    let no_landlock = TestFaults {
        landlock_abi: Some(0),
        ..TestFaults::default()
    };
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("hi")))).model(MODEL),
    )
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let options = RunOptions::offline(server.base_url())
        .runtime_path(&runtime.path)
        .test_faults(no_landlock);
    let eval = |mode: &str| {
        CopilotEval::builder()
            .model(MODEL)
            .working_directory(work.path())
            .sandbox(mode)
            .timeout_s(60.0)
            .build()
            .unwrap()
    };
    let required = run_turns(&eval("required"), ["Say hi."], &options).await;
    assert_eq!(required.stop_reason, StopReason::ExecutionError);
    let error = required.error.clone().unwrap_or_default();
    assert!(
        error.contains("the sandbox is required") && error.contains("no Landlock"),
        "{error}"
    );
    assert!(required.runtime_pid.is_none() && required.session_id.is_none());
    assert!(required.timings.runtime_start_ms.is_none());
    assert!(server.requests().is_empty(), "no model request");

    let on = run_turns(&eval("on"), ["Say hi."], &options).await;
    assert_eq!(on.stop_reason, StopReason::Completed, "{:?}", on.error);
    let sandbox = on.sandbox.as_ref().unwrap();
    assert_eq!(sandbox.state, SandboxState::Unsandboxed);
    assert!(
        on.warnings
            .iter()
            .any(|w| w.starts_with("unsandboxed: the kernel has no Landlock")),
        "{:?}",
        on.warnings
    );
}

/// Under the runner (`cargo copilot-eval`), default settings: the fixture's probe cannot read
/// the planted secret nor create a file beside it, whether its runtime is leased from the
/// runner's pool (the default) or started for it (`--fresh-runtime`); with `--no-sandbox` it
/// does both (the probe works). The record's `sandbox` section says which, with the refusals.
#[test]
fn under_the_runner_pooled_and_fresh_runtimes_are_confined_and_no_sandbox_is_not() {
    if runtime_for("under_the_runner_pooled_and_fresh_runtimes_are_confined_and_no_sandbox_is_not")
        .is_none()
    {
        return;
    }
    for (extra, confined) in [
        (&[][..], true),
        (&["--fresh-runtime"][..], true),
        (&["--no-sandbox"][..], false),
    ] {
        let label = format!("{extra:?}");
        let outside = outside();
        std::fs::write(outside.path().join("secret.txt"), SECRET).unwrap();
        let dir = outside.path().to_str().unwrap();
        let args = [&["--exact", "probes_the_sandbox"][..], extra].concat();
        let run = support::fixture(&args, &[("COPILOT_EVAL_FIXTURE_PROBE_DIR", dir)]);
        assert_eq!(run.status, 0, "{label}: {}", run.stderr);
        let test = &run.report.tests[0];
        let record = &test.runs[0].result;
        if confined {
            assert_eq!(
                record.pooled_runtime,
                extra.is_empty(),
                "{label}: pooled unless --fresh-runtime"
            );
        }
        let read = test
            .properties
            .iter()
            .find(|p| p.name == "read")
            .map(|p| p.value.as_str().unwrap_or_default().to_owned())
            .expect("the probe recorded what it read");
        let created = outside.path().join("created.txt").exists();
        let sandbox = record.sandbox.as_ref().expect("a sandbox record");
        if confined {
            assert_eq!(sandbox.state, SandboxState::Confined, "{label}");
            assert!(
                !read.contains(SECRET) && read.contains("Permission denied"),
                "{label}: {read}"
            );
            assert!(
                !created,
                "{label}: created a file outside its working directory"
            );
            let refused: Vec<&str> = sandbox
                .refusals
                .iter()
                .map(|r| r.tool_call_id.as_str())
                .collect();
            let ids: Vec<&str> = record.tool_calls[..2]
                .iter()
                .map(|c| c.id.as_str())
                .collect();
            assert_eq!(refused, ids, "{label}: {:?}", sandbox.refusals);
        } else {
            assert_eq!(sandbox.state, SandboxState::Off, "{label}");
            assert!(read.contains(SECRET), "{label}: {read}");
            assert!(created, "{label}: created nothing");
        }
    }
}

/// A runtime path that is a wrapper script running the runtime from its own install (which the
/// wrapper's path does not name): under the sandbox it cannot start, and the error says what the
/// sandbox let it read and how to allow the install; allowed with `sandbox_allow_read`, it runs.
#[tokio::test]
async fn a_wrapper_runtime_path_names_the_fix_and_runs_once_its_install_is_allowed() {
    let Some(runtime) =
        runtime_for("a_wrapper_runtime_path_names_the_fix_and_runs_once_its_install_is_allowed")
    else {
        return;
    };
    let bin = outside();
    let wrapper = bin.path().join("copilot-wrapper");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", runtime.path.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let install = (runtime.path.ancestors())
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .and_then(Path::parent)
        .unwrap_or_else(|| runtime.path.parent().unwrap())
        .to_path_buf();
    let work = tempfile::tempdir().unwrap();
    for allowed in [false, true] {
        let server = ModelServer::start(
            ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("hi"))))
                .model(MODEL),
        )
        .await
        .unwrap();
        let mut eval = CopilotEval::builder()
            .model(MODEL)
            .working_directory(work.path())
            .timeout_s(60.0);
        if allowed {
            eval = eval.sandbox_allow_read(&install);
        }
        let options = RunOptions::offline(server.base_url()).runtime_path(&wrapper);
        let result = run_turns(&eval.build().unwrap(), ["Say hi."], &options).await;
        if allowed {
            assert_eq!(
                result.stop_reason,
                StopReason::Completed,
                "{:?}",
                result.error
            );
        } else {
            assert_eq!(result.stop_reason, StopReason::ExecutionError);
            let error = result.error.unwrap_or_default();
            let names = format!("its install, {},", bin.path().display());
            assert!(
                error.contains("starting the runtime failed under the sandbox")
                    && error.contains(&names)
                    && error.contains("`sandbox_allow_read`"),
                "{error}"
            );
            assert!(server.requests().is_empty(), "no model request");
        }
    }
}
