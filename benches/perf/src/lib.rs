//! The benchmark's shared scenario: a scripted model that calls the custom tool `get_weather`
//! once, then answers; the same in the eval (`tests/weather.rs`) and in the raw SDK program
//! (`src/bin/raw_session.rs`).

use copilot_eval_core::model_server::{Script, ScriptedTurn};
use serde_json::{Value, json};

/// The prompt of the scenario.
pub const PROMPT: &str = "What is the weather in Paris?";
/// The final answer the scripted model gives.
pub const ANSWER: &str = "It is sunny in Paris.";
/// The model id the scenario asks for (in the loopback server's catalog).
pub const MODEL: &str = "claude-sonnet-4.5";

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
