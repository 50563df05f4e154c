//! A starter eval test, added by `cargo copilot-eval init`.
//!
//! Run it offline: its cassette (`tests/cassettes/evals/writes_a_greeting.yaml`) is replayed
//! through the real Copilot runtime, with no account and no cost:
//!
//! ```sh
//! cargo copilot-eval runtime install   # once per machine
//! cargo copilot-eval --replay
//! ```
//!
//! Without `--replay` it runs live on your GitHub Copilot account and may use premium requests
//! (check the setup first with `cargo copilot-eval doctor --model claude-sonnet-4.5`). Plain
//! `cargo test` lists it as ignored and runs nothing.

use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;

/// The session writes a file with the runtime's own `create` tool; the test then reads the file
/// from disk instead of trusting the model's answer.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn writes_a_greeting(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(
            &eval,
            "Create a file called 'greeting.txt' with the content 'Hello, Ferris!'.",
        )
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);

    let greeting = std::fs::read_to_string(ctx.workdir().join("greeting.txt"))
        .expect("greeting.txt was written");
    ctx.record_property("greeting", &greeting);
    assert_eq!(greeting.trim_end(), "Hello, Ferris!");
}
