//! `system_message_mode("customize")` through the real runtime: the section ids we accept are
//! the pinned runtime's own (its bundled SDK's `SystemMessageSection` type), and each edit
//! (replace, append, remove) changes the system prompt the model receives.

use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::runtime::{self, PINNED_RUNTIME_VERSION};
use copilot_eval_core::{SYSTEM_PROMPT_SECTIONS, SectionAction, StopReason};
use copilot_eval_e2e::{Offline, runtime_for};
use serde_json::Value;

#[test]
fn the_sections_we_accept_are_the_runtimes_own() {
    let Some(pinned) = runtime_for("the_sections_we_accept_are_the_runtimes_own") else {
        return;
    };
    runtime::unpack::warm(&pinned.path).unwrap();
    let types = runtime::unpack::platform_dir()
        .join(PINNED_RUNTIME_VERSION)
        .join("copilot-sdk/types.d.ts");
    let text =
        std::fs::read_to_string(&types).unwrap_or_else(|e| panic!("{}: {e}", types.display()));
    let declaration = text
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("export type SystemMessageSection =")
        })
        .expect("the runtime's SDK declares SystemMessageSection");
    let theirs: Vec<&str> = declaration
        .trim_end_matches(';')
        .split('|')
        .map(|part| part.trim().trim_matches('"'))
        .collect();
    assert_eq!(theirs, SYSTEM_PROMPT_SECTIONS);
}

/// The system prompt of the first chat-completions request the server received.
fn system_prompt(server: &copilot_eval_core::model_server::ModelServer) -> String {
    let request = server
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("a model request");
    let body = request.body.expect("a body");
    let message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .expect("a system message")
        .clone();
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("system content {other}"),
    }
}

#[tokio::test]
async fn customize_edits_reach_the_system_prompt_the_model_receives() {
    let Some(runtime) = runtime_for("customize_edits_reach_the_system_prompt_the_model_receives")
    else {
        return;
    };
    let run = |builder: copilot_eval_core::eval::CopilotEvalBuilder| {
        let runtime = runtime.clone();
        async move {
            let offline =
                Offline::start(&runtime, Script::new([]).turn(ScriptedTurn::text("ok"))).await;
            let eval = builder
                .model(copilot_eval_e2e::MODEL)
                .working_directory(offline.work.path())
                .timeout_s(60.0)
                .build()
                .unwrap();
            let result = offline.run(&eval, "Who are you?").await;
            assert_eq!(
                result.stop_reason,
                StopReason::Completed,
                "{:?}",
                result.error
            );
            system_prompt(&offline.server)
        }
    };
    let plain = run(copilot_eval_core::CopilotEval::builder()).await;
    const IDENTITY: &str = "You are Botanica, a gardening assistant (identity marker 41).";
    const LAST: &str = "Answer in one line (last-instructions marker 42).";
    let edited = run(copilot_eval_core::CopilotEval::builder()
        .system_message_mode("customize")
        .system_message_section("identity", SectionAction::Replace(IDENTITY.into()))
        .system_message_section("last_instructions", SectionAction::Append(LAST.into())))
    .await;
    assert!(!plain.contains(IDENTITY) && !plain.contains(LAST));
    assert!(edited.contains(IDENTITY), "{edited}");
    assert!(edited.contains(LAST), "{edited}");
    // `identity` is a group holding `tone`: with it replaced, an edit of `tone` is lost.
    const TONE: &str = "Answer in one line (tone marker 43).";
    let grouped = run(copilot_eval_core::CopilotEval::builder()
        .system_message_mode("customize")
        .system_message_section("identity", SectionAction::Replace(IDENTITY.into()))
        .system_message_section("tone", SectionAction::Append(TONE.into())))
    .await;
    assert!(
        grouped.contains(IDENTITY) && !grouped.contains(TONE),
        "{grouped}"
    );
    let removed = run(copilot_eval_core::CopilotEval::builder()
        .system_message_mode("customize")
        .system_message_section("safety", SectionAction::Remove))
    .await;
    assert!(
        removed.len() < plain.len(),
        "removing the safety section left {} of {} characters",
        removed.len(),
        plain.len()
    );
}
