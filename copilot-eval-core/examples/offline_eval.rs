//! One eval, run offline end to end through the real Copilot runtime.
//!
//! A scripted model (the embedded loopback model server) asks for a custom tool, then for the
//! runtime's built-in `create` tool to write a file, then answers. The runtime really runs the
//! session: the custom tool's handler runs in this process, and the file is written by the
//! runtime into a temporary working directory. The example then checks the real output
//! independently and prints the result.
//!
//! Run it with `cargo run -p copilot-eval-core --example offline_eval` after
//! `cargo copilot-eval runtime install`.

use std::sync::Arc;

use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotEval, RunOptions, run_with};
use serde_json::json;

/// `claude-*` model ids get the runtime's `create`/`edit` file tools.
const MODEL: &str = "claude-sonnet-4.5";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let work = tempfile::tempdir()?;
    let target = work.path().join("greeting.txt");

    // The scripted model: one reply per model request, in order.
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("team_name", json!({})))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "Hello from the Ferris team!\n"}),
        ))
        .turn(ScriptedTurn::text("I wrote greeting.txt."));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL)).await?;

    let eval = CopilotEval::builder()
        .name("greeting")
        .model(MODEL)
        .instructions("Greet the team by name in greeting.txt.")
        .working_directory(work.path())
        .timeout_s(60.0)
        .tool(function_tool(
            "team_name",
            "The name of the user's team.",
            json!({"type": "object", "properties": {}}),
            |_args| async { Ok("Ferris".to_owned()) },
        ))
        .build()?;

    let result = run_with(
        &eval,
        "Write a greeting for my team into greeting.txt.",
        &RunOptions::offline(server.base_url()),
    )
    .await;

    println!("stop_reason:    {}", result.stop_reason);
    println!("success:        {}", result.success);
    if let Some(error) = &result.error {
        println!("error:          {error}");
    }
    for call in &result.tool_calls {
        println!(
            "tool call:      {} {} -> {:?}",
            call.name, call.arguments, call.success
        );
    }
    println!("final_response: {:?}", result.final_response);
    println!(
        "usage:          {} model calls, {} input / {} output tokens",
        result.usage.len(),
        result.total_input_tokens(),
        result.total_output_tokens()
    );
    println!("duration:       {} ms", result.duration_ms);

    // Independent verification: read what the runtime wrote.
    let written = std::fs::read_to_string(&target)?;
    println!("greeting.txt:   {written:?}");
    if !result.success || written != "Hello from the Ferris team!\n" {
        return Err("the eval did not produce the expected file".into());
    }
    println!("verified: the file on disk has the expected content");
    Ok(())
}
