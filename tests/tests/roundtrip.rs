//! A recording replays anywhere: each session is recorded (through the recording stand-in, a
//! scripted loopback model server, offline) in one temporary directory and replayed in another
//! one under a different parent folder, through the real runtime. The cassette must hold no
//! spelling of the recording's working directory and no runtime temp file name, and the replay
//! must complete with every recorded reply served.
//!
//! Each row is replayed twice: once as the test process runs, once with the runtime under
//! another `TMPDIR` (a wrapper script sets it for the runtime process only, so the other tests
//! of this binary, which run in parallel threads, are not affected).
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
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_turns};
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

fn small_dump_eval(_: &Path) -> CopilotEvalBuilder {
    CopilotEval::builder().tool(function_tool(
        "dump",
        "Dumps the log.",
        json!({"type": "object", "properties": {}}),
        |_| async { Ok("a short log\n".to_owned()) },
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

/// What a round trip saw: the cassette text, the recording's and the replays' results (the
/// last one under the other `TMPDIR` on Unix), and that `TMPDIR`.
struct Trip {
    text: String,
    recorded: CopilotResult,
    replays: Vec<CopilotResult>,
    other_tmp: Option<PathBuf>,
}

/// An executable that runs `runtime` with `TMPDIR=tmp` (and nothing else changed).
#[cfg(unix)]
fn runtime_with_tmpdir(runtime: &Path, tmp: &Path, dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("copilot-with-tmpdir");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nTMPDIR='{}' exec '{}' \"$@\"\n",
            tmp.display(),
            runtime.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Replays the cassette at `path` in a fresh directory under `root`, with `runtime`; asserts
/// it completed with every reply served. `wrapped`: when `runtime` is a wrapper, the `TMPDIR`
/// it gives the runtime and the real runtime it runs (declared to the sandbox: the session
/// writes that `TMPDIR` and reads the real runtime's install, which the wrapper's path does
/// not name).
async fn replay_in(
    row: &Row,
    path: &Path,
    root: &Path,
    runtime: &Path,
    wrapped: Option<(&Path, &Path)>,
    text: &str,
) -> CopilotResult {
    let test = format!("round_trip({})", row.name);
    let replay_dir = plain_dir(root);
    (row.setup)(&replay_dir);
    let replay = ReplaySession::start(path).await.unwrap();
    let mut builder = (row.eval)(&replay_dir)
        .model(replay.model())
        .working_directory(&replay_dir)
        .timeout_s(120.0);
    if let Some((tmp, real)) = wrapped {
        let install = (real.ancestors())
            .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
            .and_then(Path::parent)
            .unwrap_or_else(|| real.parent().unwrap());
        builder = builder.sandbox_allow_write(tmp).sandbox_allow_read(install);
    }
    let eval = builder.build().unwrap();
    let replayed = run_turns(
        &eval,
        &[row.prompt.to_owned()],
        &replay.run_options().runtime_path(runtime),
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
    replayed
}

/// Records `row` in a directory under the system temp folder, replays it in a directory under
/// another parent (the target's temp folder), then again with the runtime under another
/// `TMPDIR`; `None` when the runtime is missing and the test skips.
async fn round_trip(row: &Row) -> Option<Trip> {
    let test = format!("round_trip({})", row.name);
    let runtime = runtime_for(&test)?;

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
    let mut replays =
        vec![replay_in(row, &path, replay_root.path(), &runtime.path, None, &text).await];

    // 3. Again, with the runtime under another TMPDIR.
    #[cfg(not(unix))]
    let other_tmp = None;
    #[cfg(unix)]
    let other_tmp = {
        let other = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let tmp = other.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let wrapper = runtime_with_tmpdir(&runtime.path, &tmp, other.path());
        let root = other.path().join("root");
        replays.push(
            replay_in(
                row,
                &path,
                &root,
                &wrapper,
                Some((&tmp, &runtime.path)),
                &text,
            )
            .await,
        );
        Some(tmp)
    };
    Some(Trip {
        text,
        recorded,
        replays,
        other_tmp,
    })
}

#[tokio::test]
async fn a_large_tool_result_replays_in_another_directory() {
    let Some(trip) = round_trip(&Row {
        name: "large_tool_result",
        workdir: plain_dir,
        setup: nothing,
        eval: dump_eval,
        prompt: "Dump the log.",
        script: dump_script,
    })
    .await
    else {
        return;
    };
    let text = &trip.text;
    assert!(text.contains("Saved to: ${tool_output_file}"), "{text}");
    // The evidence of every run says the model saw only part of the result.
    let full = ("0123456789abcdef\n".len() * (DUMP_BYTES / 17)) as u64;
    for result in std::iter::once(&trip.recorded).chain(&trip.replays) {
        let call = result.tool_calls.iter().find(|c| c.name == "dump").unwrap();
        let cut = call
            .cut_for_model
            .unwrap_or_else(|| panic!("the dump result is not marked as cut: {call:?}"));
        assert_eq!(cut.full_bytes, full, "{call:?}");
        let seen = call.result.as_deref().unwrap_or_default();
        assert_eq!(cut.model_bytes, seen.len() as u64, "{call:?}");
        assert!(cut.model_bytes < full / 10, "{call:?}");
    }
    // Under the other TMPDIR the runtime saved the large result there: the pointer the model
    // saw really named another folder, and the replay still matched.
    if let Some(tmp) = &trip.other_tmp {
        let call = trip
            .replays
            .last()
            .unwrap()
            .tool_calls
            .iter()
            .find(|c| c.name == "dump");
        let seen = call.and_then(|c| c.result.as_deref()).unwrap_or_default();
        let pointer = format!("Saved to: {}/", tmp.display());
        assert!(seen.contains(&pointer), "{pointer} not in {seen}");
    }
}

/// A small tool result reaches the model whole: nothing is marked as cut.
#[tokio::test]
async fn a_small_tool_result_is_not_marked_as_cut() {
    let Some(trip) = round_trip(&Row {
        name: "small_tool_result",
        workdir: plain_dir,
        setup: nothing,
        eval: small_dump_eval,
        prompt: "Dump the log.",
        script: dump_script,
    })
    .await
    else {
        return;
    };
    for result in std::iter::once(&trip.recorded).chain(&trip.replays) {
        let call = result.tool_calls.iter().find(|c| c.name == "dump").unwrap();
        assert_eq!(call.result.as_deref(), Some("a short log\n"), "{call:?}");
        assert_eq!(call.cut_for_model, None, "{call:?}");
    }
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
    .await
    .map(|trip| trip.text)
    .unwrap_or_default();
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
    .await
    .map(|trip| trip.text)
    .unwrap_or_default();
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
    .await
    .map(|trip| trip.text)
    .unwrap_or_default();
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
    .await
    .map(|trip| trip.text)
    .unwrap_or_default();
    if text.is_empty() {
        return;
    }
    assert!(text.contains("${workdir}\n"), "{text}");
}
