//! The benchmark's shared scenario: a scripted model that calls the custom tool `get_weather`
//! once, then answers; the same in the evals (`tests/weather.rs`, W1 and W2;
//! `tests/weather_skill.rs`, W4, the same eval given the skill [`SKILL_DIRECTORY`]) and in the
//! raw SDK program (`src/bin/raw_session.rs`).

use copilot_eval_core::CopilotResult;
use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use serde_json::{Value, json};

/// The prompt of the scenario.
pub const PROMPT: &str = "What is the weather in Paris?";
/// The final answer the scripted model gives.
pub const ANSWER: &str = "It is sunny in Paris.";
/// The model id the scenario asks for (in the loopback server's catalog).
pub const MODEL: &str = "claude-sonnet-4.5";

/// W4's skill folder, relative to the package root: one skill, [`SKILL`].
pub const SKILL_DIRECTORY: &str = "skills/weather-report";
/// The name of W4's skill.
pub const SKILL: &str = "weather-report";

/// The scripted model: one `get_weather` call, then [`ANSWER`].
pub fn script() -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "get_weather",
            json!({"city": "Paris"}),
        ))
        .turn(ScriptedTurn::text(ANSWER))
}

/// The JSON Schema of `get_weather`'s arguments.
pub fn parameters() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// The tool: answers `sunny` for any city.
pub fn get_weather() -> github_copilot_sdk::Tool {
    copilot_eval_core::tools::function_tool(
        "get_weather",
        "The current weather of a city.",
        parameters(),
        |_args| async { Ok("sunny".to_owned()) },
    )
}

/// The scenario as an eval, case `n`: the scripted model, the `get_weather` tool and, for W4,
/// the skill folder `skill_directory`; runs [`PROMPT`] and checks that the session succeeded
/// with [`ANSWER`] after one tool call. Returns the result for the caller's own checks.
pub async fn weather_eval(
    ctx: &EvalContext,
    n: u32,
    skill_directory: Option<&str>,
) -> CopilotResult {
    ctx.offline(script());
    let mut builder = ctx.eval().tool(get_weather());
    if let Some(directory) = skill_directory {
        builder = builder.skill_directory(directory);
    }
    let eval = builder.build().unwrap();
    let result = ctx.run(&eval, PROMPT).await;
    assert!(
        result.success,
        "case {n}: {:?}: {:?}",
        result.stop_reason, result.error
    );
    assert_eq!(result.final_response.as_deref(), Some(ANSWER));
    assert_eq!(result.tool_calls.len(), 1);
    result
}
