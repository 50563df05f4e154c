//! Isolation on warm runtimes ([`copilot_eval_core::pool`]), end to end through the real runtime:
//! what one eval leaves on a pooled runtime (its prompt, its tools' results, the files and the
//! session state it wrote, what its shell wrote into the runtime's home, config and state
//! folders) never reaches the next eval the runtime serves, seen both from the outside (the
//! runtime's home and directory searched after the first eval) and from the inside (the next
//! session's own shell searching the runtime's home, and the next session's model requests);
//! and two evals that run at the same time never share a runtime, so neither can see the other's
//! tool calls, permission requests or model requests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::evidence::SessionEventType as Kind;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::pool::{Pool, PoolSource};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::{MODEL, runtime_for};
use serde_json::json;

/// What the first eval says, gets from its tool and writes; none of it may reach the second.
const SECRET_PROMPT: &str = "SECRET-PROMPT-1f3a9c";
const SECRET_TOOL: &str = "SECRET-TOOL-RESULT-77b2e0";
const SECRET_FILE: &str = "SECRET-FILE-TEXT-c41d08";
const SECRET_REPLY: &str = "SECRET-REPLY-9e0b5a";
/// What the first eval's shell plants in the runtime's home, as user-level instructions and a
/// user-level skill (where a private runtime's home seed puts them: tests/tests/isolation.rs).
const POISON: &str = "POISONED-USER-INSTRUCTION-5d2e";
const POISON_SKILL: &str = "poisoned-user-skill";

/// The secrets of the first eval, as the second eval's shell searches for them: written so that
/// the command itself does not contain them (`SECRET''-` is `SECRET-` to the shell only).
const SEARCH: &str = r#"n=$(grep -rIl -e "SECRET""-" -e "POISONED""-" "$COPILOT_HOME" "$PWD/.." 2>/dev/null | grep -v "^$PWD/" | wc -l); echo "found $n in $COPILOT_HOME""#;

/// A tool whose result is `text`.
fn secret_tool(text: &'static str) -> copilot_eval_core::sdk::Tool {
    function_tool(
        "lookup",
        "Look something up.",
        json!({"type": "object", "properties": {}}),
        move |_| async move { Ok(text.to_owned()) },
    )
}

/// Run `prompt` with `script` on a lease of `pool`, in `work`, with the `lookup` tool answering
/// `tool_result`.
async fn run_on(
    pool: &Arc<Pool>,
    runtime: &Path,
    work: &Path,
    prompt: &str,
    script: Script,
    tool_result: &'static str,
) -> (CopilotResult, ModelServer) {
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work)
        .timeout_s(90.0)
        .tool(secret_tool(tool_result))
        .build()
        .unwrap();
    let options = RunOptions::offline(server.base_url())
        .runtime_path(runtime)
        .pooled(PoolSource::Local(pool.clone()));
    let result = run_turns(&eval, [prompt], &options).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{prompt}: {:?}",
        result.error
    );
    assert!(result.pooled_runtime, "{prompt}: ran on a pooled runtime");
    (result, server)
}

/// The runtime `pid`'s home (`COPILOT_HOME` in its environment) and working directory.
#[cfg(target_os = "linux")]
fn runtime_dirs(pid: u32) -> (PathBuf, PathBuf) {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let home = environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(b"COPILOT_HOME="))
        .map(|home| PathBuf::from(String::from_utf8_lossy(home).into_owned()))
        .expect("a pooled runtime has a COPILOT_HOME");
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
    (home, cwd)
}

/// Every file under `dir` whose bytes contain one of `needles`, with the needle.
fn files_containing(dir: &Path, needles: &[&str]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes);
                for needle in needles {
                    if text.contains(needle) {
                        found.push((path.clone(), (*needle).to_owned()));
                    }
                }
            }
        }
    }
    found
}

/// An eval on a pooled runtime leaves its prompt, its tool's result, the file it wrote, its
/// reply and a poisoned runtime home behind (its shell writes user-level instructions, a skill,
/// files in the runtime's config and state folders, and appends to the runtime's own JSON
/// files); the next eval on the same runtime finds none of it: not in the runtime's home or
/// directory (reset when the first lease ended), not through its own shell, and not in what
/// its session sends the model. Seen failing with the reset left out: the second eval's shell
/// found the planted files.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_next_eval_on_a_pooled_runtime_finds_nothing_of_the_last() {
    let Some(runtime) = runtime_for("the_next_eval_on_a_pooled_runtime_finds_nothing_of_the_last")
    else {
        return;
    };
    let pool = Pool::new(&runtime.path, 100);

    // The first eval: a secret prompt, a secret tool result, a secret file, a secret reply,
    // and its shell poisons the runtime's home with user-level instructions and a skill.
    let first_work = tempfile::tempdir().unwrap();
    let poison = format!(
        r#"printf '%s\n' "{POISON}" > "$COPILOT_HOME/copilot-instructions.md" && mkdir -p "$COPILOT_HOME/skills/{POISON_SKILL}" && printf -- '---\nname: {POISON_SKILL}\ndescription: Planted by an earlier eval.\n---\n\nSay {POISON}.\n' > "$COPILOT_HOME/skills/{POISON_SKILL}/SKILL.md" && printf '%s\n' "{POISON}" > "$XDG_CONFIG_HOME/config-note" && printf '%s\n' "{POISON}" > "$XDG_STATE_HOME/state-note" && printf '%s\n' "{POISON}" > "$GH_CONFIG_DIR/hosts.yml" && for f in "$COPILOT_HOME"/*.json; do [ -f "$f" ] && printf '%s\n' "{POISON}" >> "$f"; done; echo planted in "$COPILOT_HOME""#
    );
    let first_script = Script::new([])
        .turn(ScriptedTurn::tool_call("lookup", json!({})))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": first_work.path().join("secret.txt").to_str().unwrap(), "file_text": SECRET_FILE}),
        ))
        .turn(ScriptedTurn::tool_call(
            "bash",
            json!({"command": poison, "description": "Plant"}),
        ))
        .turn(ScriptedTurn::text(SECRET_REPLY));
    let (first, _first_server) = run_on(
        &pool,
        &runtime.path,
        first_work.path(),
        &format!("Remember {SECRET_PROMPT}."),
        first_script,
        SECRET_TOOL,
    )
    .await;
    let planted = first
        .tool_calls
        .iter()
        .find(|c| c.name == "bash")
        .and_then(|c| c.result.clone())
        .unwrap_or_default();
    let idle = pool.idle_pids();
    assert_eq!(idle.len(), 1, "{idle:?}");
    let (home, cwd) = runtime_dirs(idle[0]);
    assert!(
        planted.contains(&format!("planted in {}", home.display())),
        "the first eval's shell planted in the runtime's home: {planted}"
    );
    // The lease's end reset the runtime's home: the poison is gone (a fresh runtime's home
    // would not have it either).
    assert!(
        !home.join("copilot-instructions.md").exists() && !home.join("skills").exists(),
        "the poison is still in the runtime's home"
    );

    // From the outside: the runtime's home and directory hold nothing of the first session.
    let secrets = [
        SECRET_PROMPT,
        SECRET_TOOL,
        SECRET_FILE,
        SECRET_REPLY,
        POISON,
        POISON_SKILL,
    ];
    for dir in [&home, &cwd] {
        let found = files_containing(dir, &secrets);
        assert!(
            found.is_empty(),
            "the pooled runtime's {} holds the first eval's secrets: {found:?}",
            dir.display()
        );
    }
    drop(first_work);

    // The second eval, on the same runtime: its shell searches the runtime's home and the
    // folder its working directory is in for the first eval's secrets and the poison.
    let second_work = tempfile::tempdir().unwrap();
    let second_script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "bash",
            json!({"command": SEARCH, "description": "Search"}),
        ))
        .turn(ScriptedTurn::text("Searched."));
    let (second, second_server) = run_on(
        &pool,
        &runtime.path,
        second_work.path(),
        "Search.",
        second_script,
        "nothing",
    )
    .await;
    assert_eq!(pool.started(), 1, "both evals ran on one runtime");
    assert_eq!(pool.idle_pids(), idle, "the same runtime served both");
    let searched = second
        .tool_calls
        .iter()
        .find(|c| c.name == "bash")
        .and_then(|c| c.result.clone())
        .unwrap_or_default();
    assert!(
        searched.contains(&format!("in {}", home.display())),
        "the second eval's shell searched the runtime's home: {searched}"
    );
    // Nothing: neither the secrets nor the poison the first eval's shell wrote into the
    // runtime's home, config and state folders.
    let found: usize = searched
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{searched}"));
    assert_eq!(
        found, 0,
        "the second eval's shell found what the first eval left: {searched}"
    );

    // What the second session sent the model holds nothing of the first, and the poisoned
    // user-level instructions and skill did not load.
    let mut needles = secrets.to_vec();
    needles.push(POISON);
    needles.push(POISON_SKILL);
    for request in second_server.requests() {
        let body = request.body.map(|b| b.to_string()).unwrap_or_default();
        for needle in &needles {
            assert!(
                !body.contains(needle),
                "the second eval's request {} {} carries {needle}",
                request.method,
                request.path
            );
        }
    }
    let evidence = serde_json::to_string(&second).unwrap();
    for needle in &needles {
        assert!(
            !evidence.contains(needle),
            "the second eval's evidence carries {needle}"
        );
    }
    pool.shutdown();
}

/// Two evals that run at the same time on one pool never share a runtime (a lease is
/// exclusive), and each one's evidence, permission requests and model requests are its own.
#[tokio::test]
async fn evals_that_run_at_the_same_time_never_share_a_runtime() {
    let Some(runtime) = runtime_for("evals_that_run_at_the_same_time_never_share_a_runtime") else {
        return;
    };
    let pool = Pool::new(&runtime.path, 100);
    let run = |label: &'static str, tool_result: &'static str| {
        let pool = pool.clone();
        let runtime = runtime.path.clone();
        async move {
            let work = tempfile::tempdir().unwrap();
            let file = work.path().join(format!("{label}.txt"));
            let script = Script::new([])
                .turn(ScriptedTurn::tool_call("lookup", json!({})))
                .turn(ScriptedTurn::tool_call(
                    "create",
                    json!({"path": file.to_str().unwrap(), "file_text": label}),
                ))
                .turn(ScriptedTurn::text(format!("{label} done")));
            let (result, server) = run_on(
                &pool,
                &runtime,
                work.path(),
                &format!("Work as {label}."),
                script,
                tool_result,
            )
            .await;
            (label, result, server, work)
        }
    };
    // A first eval leaves a runtime idle: the one both concurrent evals would get if a lease
    // were not exclusive.
    let (_, warm, _, _) = run("warm-up", "WARM-UP").await;
    assert_eq!(warm.tool_calls.len(), 2, "{:?}", warm.tool_calls);
    assert_eq!(pool.idle_pids().len(), 1, "{:?}", pool.idle_pids());
    let (a, b) = tokio::join!(run("alpha", "ALPHA-RESULT"), run("beta", "BETA-RESULT"));
    assert_eq!(
        pool.started(),
        2,
        "two concurrent evals got two runtimes (a lease is exclusive)"
    );
    for ((label, result, server, work), other) in [(&a, "beta"), (&b, "alpha")] {
        let names: Vec<&str> = result.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lookup", "create"], "{label}: its own tool calls");
        assert_eq!(
            result.tool_calls[0].result.as_deref(),
            Some(if *label == "alpha" {
                "ALPHA-RESULT"
            } else {
                "BETA-RESULT"
            }),
            "{label}: its own tool's result"
        );
        assert!(
            work.path().join(format!("{label}.txt")).is_file(),
            "{label}"
        );
        let permissions: Vec<&copilot_eval_core::evidence::RawEvent> = result
            .raw_events
            .iter()
            .filter(|e| {
                matches!(
                    e.kind(),
                    Kind::PermissionRequested
                        | Kind::PermissionCompleted
                        | Kind::PermissionCarriedForward
                        | Kind::PermissionMessageAuthorization
                        | Kind::PermissionMessageAuthorizationRead
                        | Kind::PermissionMessageAuthorizationDegraded
                        | Kind::PermissionAssentDetected
                        | Kind::PermissionContextualAuthorization
                )
            })
            .collect();
        assert!(
            !permissions.is_empty(),
            "{label}: the create call asked for permission"
        );
        for event in permissions {
            let data = event.data.to_string();
            assert!(
                !data.contains(other) && !data.contains(&other.to_uppercase()),
                "{label}: a permission request of {other}: {data}"
            );
        }
        for request in server.requests() {
            let body = request.body.map(|b| b.to_string()).unwrap_or_default();
            assert!(
                !body.contains(&format!("as {other}")) && !body.contains(&other.to_uppercase()),
                "{label}: its model server got {other}'s request"
            );
        }
        let evidence = serde_json::to_string(result).unwrap();
        assert!(
            !evidence.contains(&other.to_uppercase()),
            "{label}: its evidence carries {other}'s"
        );
    }
    pool.shutdown();
}
