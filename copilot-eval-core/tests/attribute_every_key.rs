//! Every key of `#[copilot_eval]` in one test that compiles (each eval key becomes a call of its
//! `CopilotEvalBuilder` method in the generated configure function, so a key whose method is
//! missing or takes another type fails to compile here), and each value reaches the eval.

use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::{ClientMode, CopilotEval, copilot_eval};

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
    crate = "::copilot_eval_core"
)]
async fn every_key(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.name(), "every key");
}

#[test]
fn every_key_reaches_the_eval() {
    let eval = every_key::__CONFIGURE(CopilotEval::builder())
        .build()
        .unwrap();
    assert_eq!(eval.name(), "every key");
    assert_eq!(eval.model(), Some("claude-sonnet-4.5"));
    assert_eq!(eval.timeout_s(), 2.5);
    assert_eq!(eval.client_mode(), ClientMode::Empty);
    let snapshot = eval.snapshot();
    assert_eq!(snapshot["max_tool_calls"], 3, "{snapshot:#}");
    assert_eq!(snapshot["reasoning_effort"], "high", "{snapshot:#}");
    assert_eq!(snapshot["image_detail"], "low", "{snapshot:#}");
    assert_eq!(snapshot["audit_requests"], true, "{snapshot:#}");
}
