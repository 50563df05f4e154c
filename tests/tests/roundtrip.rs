//! A recording replays anywhere: each session is recorded (through the recording stand-in, a
//! scripted loopback model server, offline) in one temporary directory and replayed in another
//! one under a different parent folder, through the real runtime. The cassette must hold no
//! spelling of the recording's working directory and no runtime temp file name, and the replay
//! must complete with every recorded reply served.
//!
//! Rows: a large tool result (the runtime's large-output pointer), `replace` system-message mode
//! with a relative `create`, `bash pwd`, `view` of an absolute path in the working directory, a
//! subagent dispatch, a skill load, and a working directory under a symbolic link.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::cassette::{CassetteHeader, Recorder, ReplaySession};
use copilot_eval_core::eval::CopilotEvalBuilder;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::Redactor;
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_turns};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";

/// Bytes the `dump` tool returns: over the runtime's large-output limit (measured on 1.0.102:
/// 61,200 bytes are saved to a temp file, the model sees a pointer and a 500-character preview).
const DUMP_BYTES: usize = 61_200;

/// One row: how to make the working directory under a root, the files the session needs in it,
/// the eval, the prompt, and the stand-in's script given the working directory.
struct Row {
    name: &'static str,
    workdir: fn(&Path) -> PathBuf,
    setup: fn(&Path),
    eval: fn(&Path) -> CopilotEvalBuilder,
    prompt: &'static str,
    script: fn(&Path) -> Script,
}

fn plain_dir(root: &Path) -> PathBuf {
    let dir = root.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `root/link/work`, where `link` is a symbolic link to `root/real`: the lexical path differs
/// from the canonical one, as every macOS temp dir does (`/var` -> `/private/var`).
#[cfg(unix)]
fn symlinked_dir(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join("real/work")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
    let dir = root.join("link/work");
    assert_ne!(std::fs::canonicalize(&dir).unwrap(), dir);
    dir
}

fn nothing(_: &Path) {}

fn notes(dir: &Path) {
    std::fs::write(dir.join("notes.txt"), "first note\nsecond note\n").unwrap();
}

fn skill(dir: &Path) {
    let skill = dir.join("skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: greet\ndescription: Greets the user with the team's marker.\n---\n\n# Greeting\n\nEvery greeting includes the marker `TEAM-MARKER-7`.\n",
    )
    .unwrap();
}

fn plain_eval(_: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder()
}

fn dump_eval(_: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder().tool(function_tool(
        "dump",
        "Dumps the log.",
        json!({"type": "object", "properties": {}}),
        |_| async { Ok("0123456789abcdef\n".repeat(DUMP_BYTES / 17)) },
    ))
}

fn replace_eval(_: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder()
        .instructions("You are a terse file assistant.")
        .system_message_mode("replace")
}

fn subagent_eval(_: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder().custom_agent(
        CustomAgentConfig::new("writer", "You write reviews into files.")
            .with_description("Writes reviews"),
    )
}

fn skill_eval(dir: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder().skill_directory(dir.join("skills"))
}

fn dump_script(_: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call("dump", json!({})))
        .turn(ScriptedTurn::text("The log is long."))
}

fn create_relative_script(_: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": "hello.txt", "file_text": "hello\n"}),
        ))
        .turn(ScriptedTurn::text("Created hello.txt."))
}

fn pwd_script(_: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "bash",
            json!({"command": "pwd", "description": "Where am I"}),
        ))
        .turn(ScriptedTurn::text("That is the working directory."))
}

fn view_script(dir: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "view",
            json!({"path": dir.join("notes.txt").to_str().unwrap()}),
        ))
        .turn(ScriptedTurn::text("Two notes."))
}

fn subagent_script(dir: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write the review.", "description": "Write a review"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": dir.join("review.txt").to_str().unwrap(), "file_text": "LGTM\n"}),
        ))
        .turn(ScriptedTurn::text("review written"))
        .turn(ScriptedTurn::text("The writer wrote the review."))
}

fn skill_script(_: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call("skill", json!({"skill": "greet"})))
        .turn(ScriptedTurn::text("Hello! TEAM-MARKER-7"))
}

/// Records `row` in a directory under the system temp folder, replays it in a directory under
/// another parent (the target's temp folder), and returns the cassette text (empty when the
/// runtime is missing and the test skips).
async fn round_trip(row: &Row) -> String {
    let test = format!("round_trip({})", row.name);
    let Some(runtime) = runtime_for(&test) else {
        return String::new();
    };

    // 1. Record.
    let record_root = tempfile::tempdir().unwrap();
    let record_dir = (row.workdir)(record_root.path());
    (row.setup)(&record_dir);
    let server =
        ModelServer::start(ServerConfig::new(Arc::new((row.script)(&record_dir))).model(MODEL))
            .await
            .unwrap();
    let recorder = Recorder::new();
    let eval = (row.eval)(&record_dir)
        .model(MODEL)
        .working_directory(&record_dir)
        .timeout_s(120.0)
        .build()
        .unwrap();
    let recorded = run_turns(
        &eval,
        &[row.prompt.to_owned()],
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert!(
        recorded.success,
        "{test}: recording: {}: {:?}",
        recorded.stop_reason, recorded.error
    );
    assert_no_runtime_left(&recorded);
    let cassette = recorder
        .cassette(CassetteHeader::default(), &Redactor::default())
        .unwrap_or_else(|e| panic!("{test}: {e}"));
    let store = tempfile::tempdir().unwrap();
    let path = store.path().join(format!("{}.yaml", row.name));
    cassette.write(&path, "").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let canonical = std::fs::canonicalize(&record_dir).unwrap();
    for spelling in [&record_dir, &canonical, record_root.path()] {
        assert!(
            !text.contains(&spelling.display().to_string()),
            "{test}: the cassette holds {}:\n{text}",
            spelling.display()
        );
    }
    assert!(
        !text.contains("-copilot-tool-output-"),
        "{test}: the cassette holds a runtime temp file:\n{text}"
    );
    drop(record_root);

    // 2. Replay in a plain directory under another parent folder.
    let replay_root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let replay_dir = plain_dir(replay_root.path());
    (row.setup)(&replay_dir);
    let replay = ReplaySession::start(&path).await.unwrap();
    let eval = (row.eval)(&replay_dir)
        .model(replay.model())
        .working_directory(&replay_dir)
        .timeout_s(120.0)
        .build()
        .unwrap();
    let replayed = run_turns(
        &eval,
        &[row.prompt.to_owned()],
        &replay.run_options().runtime_path(&runtime.path),
    )
    .await;
    let unconsumed = replay.unconsumed();
    replay.shutdown().await;
    assert_eq!(
        replayed.stop_reason,
        StopReason::Completed,
        "{test}: replay: {:?}\n{text}",
        replayed.error
    );
    assert!(unconsumed.is_empty(), "{test}: {unconsumed:?}");
    assert_no_runtime_left(&replayed);
    text
}

#[tokio::test]
async fn a_large_tool_result_replays_in_another_directory() {
    let text = round_trip(&Row {
        name: "large_tool_result",
        workdir: plain_dir,
        setup: nothing,
        eval: dump_eval,
        prompt: "Dump the log.",
        script: dump_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    assert!(text.contains("Saved to: ${tool_output_file}"), "{text}");
}

#[tokio::test]
async fn replace_mode_with_a_relative_create_replays_in_another_directory() {
    let text = round_trip(&Row {
        name: "replace_relative_create",
        workdir: plain_dir,
        setup: nothing,
        eval: replace_eval,
        prompt: "Create hello.txt saying hello.",
        script: create_relative_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    // The runtime's system prompt states no directory in this mode; the path is still there.
    assert!(text.contains("${workdir}/hello.txt"), "{text}");
}

#[tokio::test]
async fn bash_pwd_replays_in_another_directory() {
    let text = round_trip(&Row {
        name: "bash_pwd",
        workdir: plain_dir,
        setup: nothing,
        eval: plain_eval,
        prompt: "Where are we?",
        script: pwd_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    assert!(text.contains("${workdir}"), "{text}");
}

#[tokio::test]
async fn viewing_an_absolute_path_in_the_working_directory_replays_in_another_directory() {
    let text = round_trip(&Row {
        name: "view_absolute",
        workdir: plain_dir,
        setup: notes,
        eval: plain_eval,
        prompt: "Read notes.txt.",
        script: view_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    assert!(text.contains("${workdir}/notes.txt"), "{text}");
}

#[tokio::test]
async fn a_subagent_dispatch_replays_in_another_directory() {
    round_trip(&Row {
        name: "subagent",
        workdir: plain_dir,
        setup: nothing,
        eval: subagent_eval,
        prompt: "Have the writer write a review.",
        script: subagent_script,
    })
    .await;
}

#[tokio::test]
async fn a_skill_load_replays_in_another_directory() {
    round_trip(&Row {
        name: "skill",
        workdir: plain_dir,
        setup: skill,
        eval: skill_eval,
        prompt: "Greet me with the greet skill.",
        script: skill_script,
    })
    .await;
}

/// Recorded under a symbolic link (`bash pwd` prints the canonical path, the system prompt the
/// lexical one), replayed in a plain directory.
#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_working_directory_replays_in_a_plain_one() {
    let text = round_trip(&Row {
        name: "symlinked_pwd",
        workdir: symlinked_dir,
        setup: nothing,
        eval: plain_eval,
        prompt: "Where are we?",
        script: pwd_script,
    })
    .await;
    if text.is_empty() {
        return;
    }
    assert!(text.contains("${workdir}\n"), "{text}");
}
