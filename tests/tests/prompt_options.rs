//! Per-prompt options through the real runtime (scripted loopback model): what the runtime puts
//! in the model request for each attachment and for plan mode, what the result and run record
//! say, a missing attachment refused before the runtime starts, and a recording of a prompt
//! with attachments that replays in another working directory.
//!
//! What runtime 1.0.102 sends (seen in the model requests these tests check): a file or folder
//! attachment is listed by absolute path in `<tagged_files>` with its line or item count (the
//! content is not inlined: the model reads it with a tool); a selection's text is inlined in
//! `<ide_selection>` with the file's path relative to the working directory and the lines; a
//! GitHub reference is a line in `<github_references>`; a prompt sent in plan mode carries a
//! `<mode_changed_notice>` with the `<plan_mode>` instructions in its user message.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::cassette::{CassetteHeader, Recorder, ReplaySession};
use copilot_eval_core::eval::{Attachment, GitHubReference, GitHubReferenceKind};
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::{Redactor, RunRecord};
use copilot_eval_core::{
    AgentMode, CopilotEval, Prompt, RunOptions, StopReason, run_turns, run_with,
};
use copilot_eval_e2e::{MODEL, Offline, assert_no_runtime_left, runtime_for};
use serde_json::json;

/// The files the prompts attach, written into `dir`.
fn write_files(dir: &Path) {
    std::fs::write(dir.join("notes.md"), "FILE-MARKER-77 alpha\nline two\n").unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "fn a() {}\nfn selected_marker() {}\nfn c() {}\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/x.md"), "in the folder\n").unwrap();
}

fn issue() -> GitHubReference {
    GitHubReference {
        kind: GitHubReferenceKind::Issue,
        number: 4242,
        title: "ISSUE-TITLE-MARKER".into(),
        state: "open".into(),
        url: "https://github.com/o/r/issues/4242".into(),
    }
}

/// The two prompts: every attachment kind, then a follow-up in plan mode.
fn prompts() -> [Prompt; 2] {
    [
        Prompt::new("Read the attachments.")
            .attach_file("notes.md")
            .attach_selection("lib.rs", 2, 2)
            .attach_directory("docs")
            .attach_github_reference(issue()),
        Prompt::new("Plan it.").mode(AgentMode::Plan),
    ]
}

fn script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::text("Read them."))
        .turn(ScriptedTurn::text("Planned."))
}

/// The last user message of a model request.
fn last_user_message(messages: &[serde_json::Value]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn attachments_and_plan_mode_reach_the_model_request() {
    let Some(runtime) = runtime_for("attachments_and_plan_mode_reach_the_model_request") else {
        return;
    };
    let offline = Offline::start(&runtime, script()).await;
    let work = offline.work.path();
    write_files(work);
    let eval = offline.eval().build().unwrap();
    let result = run_turns(
        &eval,
        prompts(),
        &RunOptions::offline(offline.server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_no_runtime_left(&result);
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );

    let requests = offline.server.model_requests();
    assert_eq!(requests.len(), 2);
    let first = last_user_message(&requests[0].messages);
    let second = last_user_message(&requests[1].messages);
    // The file and the folder: listed by absolute path in the working directory.
    let tagged = format!(
        "<tagged_files>\n* {} (3 lines)\n* {} (1 items)\n</tagged_files>",
        work.join("notes.md").display(),
        work.join("docs").display()
    );
    assert!(first.contains(&tagged), "{first}");
    // The selection: its text inlined, with the file and line.
    assert!(
        first.contains("File: lib.rs (line 2)\n```\nfn selected_marker() {}\n```"),
        "{first}"
    );
    assert!(first.contains(
        "<github_references>\n#4242 - ISSUE-TITLE-MARKER [issue] [open] (https://github.com/o/r/issues/4242)\n</github_references>"
    ), "{first}");
    assert!(first.contains("Read the attachments."));
    // Plan mode: only the prompt sent in it carries the notice.
    assert!(!first.contains("<plan_mode>"), "{first}");
    assert!(
        second.contains("<mode_changed_notice>") && second.contains("<plan_mode>"),
        "{second}"
    );
    assert!(second.ends_with("Plan it."), "{second}");

    // The evidence: the prompts as sent, the selection's text read from the file.
    assert_eq!(result.prompts.len(), 2);
    assert_eq!(
        result.prompts[0].attachments[1],
        Attachment::Selection {
            path: "lib.rs".into(),
            start_line: 2,
            end_line: 2,
            text: Some("fn selected_marker() {}".into())
        }
    );
    assert_eq!(result.prompts[1].mode, Some(AgentMode::Plan));
    let record = RunRecord::from_result(&result, "scripted");
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["prompt_options"][0]["prompt"], 1);
    assert_eq!(
        json["prompt_options"][0]["attachments"][0],
        json!({"type": "file", "path": "notes.md"})
    );
    assert_eq!(
        json["prompt_options"][0]["attachments"][3],
        json!({"type": "github_reference", "kind": "issue", "number": 4242,
               "title": "ISSUE-TITLE-MARKER", "state": "open",
               "url": "https://github.com/o/r/issues/4242"})
    );
    assert_eq!(
        json["prompt_options"][1],
        json!({"prompt": 2, "mode": "plan"})
    );
}

#[tokio::test]
async fn a_missing_attachment_fails_before_the_runtime_starts() {
    // No runtime is needed: the check comes before the runtime is resolved.
    let work = tempfile::tempdir().unwrap();
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .working_directory(work.path())
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        Prompt::new("Read it.").attach_file("missing/notes.md"),
        &RunOptions::offline(server.base_url()).runtime_path("/nonexistent/copilot"),
    )
    .await;
    assert_eq!(result.stop_reason, StopReason::ExecutionError);
    let error = result.error.unwrap_or_default();
    let path = work.path().join("missing/notes.md");
    assert!(
        error.contains(&format!(
            "prompt 1, attachment 1 (missing/notes.md): {} is not a file",
            path.display()
        )),
        "{error}"
    );
    assert_eq!(result.runtime_pid, None, "nothing was started");
    assert!(server.model_requests().is_empty());
    assert_eq!(
        result.prompts.len(),
        1,
        "the prompt is still in the evidence"
    );
}

#[tokio::test]
async fn a_prompt_with_attachments_records_and_replays_elsewhere() {
    let Some(runtime) = runtime_for("a_prompt_with_attachments_records_and_replays_elsewhere")
    else {
        return;
    };
    // Record.
    let record_dir = tempfile::tempdir().unwrap();
    write_files(record_dir.path());
    let server = ModelServer::start(ServerConfig::new(Arc::new(script())).model(MODEL))
        .await
        .unwrap();
    let recorder = Recorder::new();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(record_dir.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let recorded = run_turns(
        &eval,
        prompts(),
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert_no_runtime_left(&recorded);
    assert!(recorded.success, "{:?}", recorded.error);
    let cassette = recorder
        .cassette(CassetteHeader::default(), &Redactor::default())
        .unwrap();
    let store = tempfile::tempdir().unwrap();
    let path = store.path().join("attachments.yaml");
    cassette.write(&path, "").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // The attachments' absolute paths are normalised like the working directory.
    assert!(text.contains("notes.md"), "{text}");
    let spelling = record_dir.path().display().to_string();
    assert!(
        !text.contains(&spelling),
        "the cassette holds {spelling}:\n{text}"
    );
    assert!(
        !text.contains("copilot-eval-home-"),
        "the cassette holds the run's home:\n{text}"
    );

    // Replay in another directory under another parent.
    let replay_root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    write_files(replay_root.path());
    let replay = ReplaySession::start(&path).await.unwrap();
    let eval = CopilotEval::builder()
        .model(replay.model())
        .working_directory(replay_root.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let replayed = run_turns(
        &eval,
        prompts(),
        &replay.run_options().runtime_path(&runtime.path),
    )
    .await;
    let unconsumed = replay.unconsumed();
    replay.shutdown().await;
    assert_no_runtime_left(&replayed);
    assert_eq!(
        replayed.stop_reason,
        StopReason::Completed,
        "{:?}\n{text}",
        replayed.error
    );
    assert!(unconsumed.is_empty(), "{unconsumed:?}");
    assert_eq!(replayed.final_response.as_deref(), Some("Planned."));
}
