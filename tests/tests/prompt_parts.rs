//! Replays notice a change of what the user controls in the system prompt: a session is
//! recorded (through the recording stand-in, offline) and replayed through the real runtime
//! after the eval's instructions, the selected agent's prompt or a skill's description changed.
//! Each such replay ends in `replay_mismatch` naming the part; the unchanged eval replays (the
//! control), and a cassette without `prompt_parts` (recorded before they existed) still replays.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::cassette::{CassetteHeader, Recorder, ReplaySession};
use copilot_eval_core::eval::CopilotEvalBuilder;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::Redactor;
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};

const MODEL: &str = "claude-sonnet-4.5";
const PROMPT: &str = "Say hello.";

/// Records one answer of `eval` (given its working directory) in a fresh directory, and writes
/// the cassette into `store`; returns the cassette path and text.
async fn record(
    runtime: &Path,
    store: &Path,
    setup: fn(&Path, &str),
    variant: &str,
    eval: fn(&Path, &str) -> CopilotEvalBuilder,
) -> (PathBuf, String) {
    let work = tempfile::tempdir().unwrap();
    setup(work.path(), variant);
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("Hello!"))))
            .model(MODEL),
    )
    .await
    .unwrap();
    let recorder = Recorder::new();
    let eval = eval(work.path(), variant)
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        PROMPT,
        &RunOptions::offline(server.base_url())
            .runtime_path(runtime)
            .record(recorder.clone()),
    )
    .await;
    server.shutdown().await;
    assert!(result.success, "recording: {:?}", result.error);
    assert_no_runtime_left(&result);
    let cassette = recorder
        .cassette(CassetteHeader::default(), &Redactor::default())
        .unwrap();
    let path = store.join("recorded.yaml");
    cassette.write(&path, "").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

/// Replays `cassette` with `eval` (given its working directory and the variant) in a fresh
/// directory.
async fn replay(
    runtime: &Path,
    cassette: &Path,
    setup: fn(&Path, &str),
    variant: &str,
    eval: fn(&Path, &str) -> CopilotEvalBuilder,
) -> CopilotResult {
    let work = tempfile::tempdir().unwrap();
    setup(work.path(), variant);
    let replay = ReplaySession::start(cassette).await.unwrap();
    let eval = eval(work.path(), variant)
        .model(replay.model())
        .working_directory(work.path())
        .timeout_s(120.0)
        .build()
        .unwrap();
    let result = run_with(&eval, PROMPT, &replay.run_options().runtime_path(runtime)).await;
    replay.shutdown().await;
    assert_no_runtime_left(&result);
    result
}

fn no_setup(_: &Path, _: &str) {}

fn instructions_eval(_: &Path, variant: &str) -> CopilotEvalBuilder {
    CopilotEval::builder().instructions(format!("Answer {variant}."))
}

fn agent_eval(_: &Path, variant: &str) -> CopilotEvalBuilder {
    CopilotEval::builder()
        .custom_agent(
            CustomAgentConfig::new("greeter", format!("You greet people {variant}."))
                .with_description("Greets people"),
        )
        .active_agent("greeter")
}

fn skill_setup(dir: &Path, variant: &str) {
    let skill = dir.join("skills/greet");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: greet\ndescription: Greets the user {variant}.\n---\n\n# Greeting\n\nSay hello.\n"),
    )
    .unwrap();
}

fn skill_eval(dir: &Path, _: &str) -> CopilotEvalBuilder {
    CopilotEval::builder().skill_directory(dir.join("skills"))
}

/// Records with `before`, replays with `before` (must complete) and with `after` (must be a
/// `replay_mismatch` whose error names `part` and says how to accept the change).
async fn changed_part_is_a_mismatch(
    test: &str,
    setup: fn(&Path, &str),
    eval: fn(&Path, &str) -> CopilotEvalBuilder,
    part: &str,
    named: &str,
) {
    let Some(runtime) = runtime_for(test) else {
        return;
    };
    let store = tempfile::tempdir().unwrap();
    let (cassette, text) = record(&runtime.path, store.path(), setup, "briefly", eval).await;
    assert!(text.contains("prompt_parts:"), "{text}");
    assert!(text.contains(&format!("{part}: ")), "{text}");

    let same = replay(&runtime.path, &cassette, setup, "briefly", eval).await;
    assert_eq!(
        same.stop_reason,
        StopReason::Completed,
        "{test}: the unchanged eval must replay: {:?}\n{text}",
        same.error
    );

    let changed = replay(&runtime.path, &cassette, setup, "at length", eval).await;
    assert_eq!(
        changed.stop_reason,
        StopReason::ReplayMismatch,
        "{test}: {:?}",
        changed.error
    );
    let error = changed.error.unwrap_or_default();
    assert!(
        error.contains(&format!("{named} changed since recording")),
        "{test}: {error}"
    );
    assert!(error.contains(&format!("prompt parts: {part}")), "{error}");
    assert!(error.contains("--record=all"), "{error}");
}

#[tokio::test]
async fn edited_instructions_are_a_replay_mismatch_naming_them() {
    changed_part_is_a_mismatch(
        "edited_instructions_are_a_replay_mismatch_naming_them",
        no_setup,
        instructions_eval,
        "instructions",
        "the eval's instructions",
    )
    .await;
}

#[tokio::test]
async fn an_edited_agent_prompt_is_a_replay_mismatch_naming_it() {
    changed_part_is_a_mismatch(
        "an_edited_agent_prompt_is_a_replay_mismatch_naming_it",
        no_setup,
        agent_eval,
        "agent_prompt",
        "the agent prompt",
    )
    .await;
}

#[tokio::test]
async fn an_edited_skill_description_is_a_replay_mismatch_naming_the_skill_list() {
    changed_part_is_a_mismatch(
        "an_edited_skill_description_is_a_replay_mismatch_naming_the_skill_list",
        skill_setup,
        skill_eval,
        "skills",
        "the skill list",
    )
    .await;
}

/// A cassette written before `prompt_parts` existed (the same recording without them) replays
/// even after the instructions changed: there is nothing to compare them with.
#[tokio::test]
async fn a_cassette_without_prompt_parts_still_replays() {
    let test = "a_cassette_without_prompt_parts_still_replays";
    let Some(runtime) = runtime_for(test) else {
        return;
    };
    let store = tempfile::tempdir().unwrap();
    let (cassette, text) = record(
        &runtime.path,
        store.path(),
        no_setup,
        "briefly",
        instructions_eval,
    )
    .await;
    let old: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("prompt_parts:") && !l.contains("instructions: "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!old.contains("prompt_parts"), "{old}");
    std::fs::write(&cassette, &old).unwrap();
    let result = replay(
        &runtime.path,
        &cassette,
        no_setup,
        "at length",
        instructions_eval,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}\n{old}",
        result.error
    );
}
