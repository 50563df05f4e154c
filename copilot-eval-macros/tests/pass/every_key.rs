//! Every key of `#[copilot_eval]` in one test that must compile: each eval key becomes a call of
//! its `CopilotEvalBuilder` method in the generated configure closure, which is type-checked in
//! every build (this one is not a test build), so a key whose method is missing or takes another
//! type fails here.
use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;

#[copilot_eval(
    name = "every key",
    model = "claude-sonnet-4.5",
    max_tool_calls = 3,
    timeout_s = 2.5,
    reasoning_effort = "high",
    client_mode = "empty",
    image_detail = "low",
    audit_requests = true,
    cassette = "tests/cassettes/every_key.yaml",
    crate = "::copilot_eval_core",
)]
async fn every_key(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.name(), "every key");
}

fn main() {}
