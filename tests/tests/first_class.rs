//! Session settings that are eval fields (no `extra_session_config` needed), each shown taking
//! effect through the real runtime and a scripted loopback model: the default agent's excluded
//! tools, and instructions added in `customize` mode. Nothing waits on the clock: every run waits for its session's events, bounded by an
//! ample timeout.

use std::sync::Arc;

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::{CopilotEval, RunOptions, SectionAction, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";
/// Ample for a runtime start and a subagent dispatch on a loaded machine.
const TIMEOUT_S: f64 = 120.0;

/// `default_agent_excluded_tools`: the main agent's model request does not offer `create`; the
/// custom agent that lists `create` in its tools is offered it and writes the file.
#[tokio::test]
async fn the_default_agent_excluded_tools_leave_them_to_the_custom_agent() {
    let Some(runtime) =
        runtime_for("the_default_agent_excluded_tools_leave_them_to_the_custom_agent")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("review.txt");
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write the review.", "description": "Write a review"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "LGTM\n"}),
        ))
        .turn(ScriptedTurn::text("review written"))
        .turn(ScriptedTurn::text("The writer wrote the review."));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .timeout_s(TIMEOUT_S)
        .custom_agent(
            CustomAgentConfig::new("writer", "You write reviews into files.")
                .with_description("Writes reviews")
                .with_tools(vec!["create".to_owned()]),
        )
        .default_agent_excluded_tools(["create"])
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Have the writer write a review.",
        &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
    )
    .await;
    assert_no_runtime_left(&result);
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "LGTM\n");
    let requests = server.model_requests();
    let main = &requests[0];
    assert!(
        main.tool_names.iter().any(|t| t == "task"),
        "{:?}",
        main.tool_names
    );
    assert!(
        !main.tool_names.iter().any(|t| t == "create"),
        "the main agent is not offered `create`: {:?}",
        main.tool_names
    );
    let subagent = &requests[1];
    assert!(
        subagent.tool_names.iter().any(|t| t == "create"),
        "the custom agent keeps `create`: {:?}",
        subagent.tool_names
    );
}

/// The system message of the first model request `server` received (its text parts joined).
fn system_prompt(server: &ModelServer) -> String {
    let requests = server.model_requests();
    let message = requests[0]
        .messages
        .iter()
        .find(|m| m["role"] == "system")
        .expect("a system message");
    match &message["content"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("system content {other}"),
    }
}

/// `instructions` with `system_message_mode("customize")`: added after the runtime's sections,
/// with no section edit, or after an edited section.
#[tokio::test]
async fn customize_mode_adds_the_instructions_after_the_runtimes_sections() {
    let Some(runtime) =
        runtime_for("customize_mode_adds_the_instructions_after_the_runtimes_sections")
    else {
        return;
    };
    const ADDED: &str = "Answer with the word PLUM (added-instructions marker 44).";
    const IDENTITY: &str = "You are Botanica, a gardening assistant (identity marker 45).";
    let run = |builder: copilot_eval_core::eval::CopilotEvalBuilder| {
        let runtime = runtime.clone();
        async move {
            let work = tempfile::tempdir().unwrap();
            let script = Script::new([]).turn(ScriptedTurn::text("ok"));
            let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
                .await
                .unwrap();
            let eval = builder
                .model(MODEL)
                .working_directory(work.path())
                .timeout_s(TIMEOUT_S)
                .build()
                .unwrap();
            let result = run_with(
                &eval,
                "Who are you?",
                &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
            )
            .await;
            assert_no_runtime_left(&result);
            assert_eq!(
                result.stop_reason,
                StopReason::Completed,
                "{:?}",
                result.error
            );
            system_prompt(&server)
        }
    };
    let plain = run(CopilotEval::builder()).await;
    let added = run(CopilotEval::builder()
        .system_message_mode("customize")
        .instructions(ADDED))
    .await;
    assert!(!plain.contains(ADDED));
    assert!(added.contains(ADDED), "{added}");
    // The runtime's own prompt is kept (replace mode would leave the instructions alone).
    assert!(
        added.len() > plain.len(),
        "customize kept {} characters of the runtime's {}",
        added.len(),
        plain.len()
    );
    let both = run(CopilotEval::builder()
        .system_message_mode("customize")
        .system_message_section("identity", SectionAction::Replace(IDENTITY.into()))
        .instructions(ADDED))
    .await;
    let (identity, instructions) = (both.find(IDENTITY), both.find(ADDED));
    assert!(identity.is_some() && instructions.is_some(), "{both}");
    assert!(
        identity < instructions,
        "the instructions come after the sections: {both}"
    );
}
