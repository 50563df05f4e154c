//! `CopilotEval::user_input_handler` through the real runtime: with a handler the model is
//! offered the runtime's `ask_user` tool, its call reaches the handler with the question and the
//! choices, and the handler's answer is what the model reads; without a handler the model is not
//! offered `ask_user`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::SessionId;
use copilot_eval_core::sdk::handler::{UserInputHandler, UserInputResponse};
use copilot_eval_e2e::{Offline, runtime_for};
use serde_json::json;

/// Answers every question with its last choice and records what it was asked.
#[derive(Default)]
struct LastChoice {
    asked: Mutex<Vec<(String, Option<Vec<String>>)>>,
}

#[async_trait]
impl UserInputHandler for LastChoice {
    async fn handle(
        &self,
        _session_id: SessionId,
        question: String,
        choices: Option<Vec<String>>,
        _allow_freeform: Option<bool>,
    ) -> Option<UserInputResponse> {
        let answer = choices
            .as_ref()
            .and_then(|c| c.last().cloned())
            .unwrap_or_default();
        self.asked.lock().unwrap().push((question, choices));
        Some(UserInputResponse {
            answer,
            was_freeform: false,
        })
    }
}

fn ask_script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "ask_user",
            json!({"question": "Which color?", "choices": ["red", "blue"]}),
        ))
        .turn(ScriptedTurn::text("You chose."))
}

#[tokio::test]
async fn the_user_input_handler_answers_the_models_question() {
    let Some(runtime) = runtime_for("the_user_input_handler_answers_the_models_question") else {
        return;
    };
    let offline = Offline::start(&runtime, ask_script()).await;
    let handler = Arc::new(LastChoice::default());
    let eval = offline
        .eval()
        .user_input_handler(handler.clone())
        .build()
        .unwrap();
    let result = offline.run(&eval, "Ask me for a color.").await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert_eq!(
        *handler.asked.lock().unwrap(),
        [(
            "Which color?".to_owned(),
            Some(vec!["red".to_owned(), "blue".to_owned()])
        )]
    );
    let call = &result.tool_calls_for("ask_user")[0];
    assert_eq!(call.success, Some(true), "{call:?}");
    let requests = offline.server.model_requests();
    assert!(
        requests[0].tool_names.iter().any(|t| t == "ask_user"),
        "{:?}",
        requests[0].tool_names
    );
    let tool_message = requests[1]
        .messages
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_message.to_string().contains("blue"),
        "the model reads the handler's answer: {tool_message}"
    );
}

#[tokio::test]
async fn without_a_user_input_handler_the_model_is_not_offered_ask_user() {
    let Some(runtime) =
        runtime_for("without_a_user_input_handler_the_model_is_not_offered_ask_user")
    else {
        return;
    };
    let offline = Offline::start(
        &runtime,
        Script::new([]).turn(ScriptedTurn::text("No question.")),
    )
    .await;
    let eval = offline.eval().build().unwrap();
    let result = offline.run(&eval, "Ask me for a color.").await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let requests = offline.server.model_requests();
    assert!(
        !requests[0].tool_names.iter().any(|t| t == "ask_user"),
        "{:?}",
        requests[0].tool_names
    );
}
