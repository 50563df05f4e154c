//! Named checks: a check is run against controls (known-good and known-bad answers) before any
//! session is spent, then grades the real run beside trajectory checks (tools in order, never
//! called, how many model turns).
//!
//! `a_check_that_accepts_the_empty_answer` FAILS ON PURPOSE: its check ("does not announce the
//! old version") is also true of an empty answer, and the `empty answer` control says so before
//! any session starts. `the_fixed_check_grades_the_run` is the same check fixed: it passes its
//! controls, then grades a scripted run.
//!
//! ```sh
//! cargo copilot-eval -p checks --json results/checks.json
//! ```
//!
//! exits 1 with one failed eval: `control failed: check `announces 2.4.1` accepted the bad
//! control `empty answer` (no final answer)`.

use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::checks::trajectory::{in_order, model_turns, never_called};
use copilot_eval_core::harness::{Check, Control, EvalContext, Times};
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use serde_json::json;

/// The controls both checks are held to: a right answer must be accepted; an empty answer and
/// an answer with the old version must be rejected.
fn controls() -> Vec<Control> {
    vec![
        Control::good("the release line").answer("ferris-cli 2.4.1 is out."),
        Control::empty_answer(),
        Control::bad("the old version").answer("ferris-cli 2.4.0 is out."),
    ]
}

/// Fails on purpose: "does not name the old version" also holds for an empty answer, so the
/// check would pass a session that said nothing. The control catches it; no session runs.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
async fn a_check_that_accepts_the_empty_answer(ctx: EvalContext) {
    let announces = Check::predicate("announces 2.4.1", |result| {
        !(result.final_response.as_deref())
            .unwrap_or_default()
            .contains("2.4.0")
    });
    if !ctx.check_controls(&announces, &controls()) {
        return; // The test fails, naming the control; no session is spent on this check.
    }
    unreachable!("the empty-answer control rejects this check");
}

/// The same check fixed: it passes its controls, then grades a scripted run, beside trajectory
/// checks of what the agent did.
#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120, max_tool_calls = 5)]
async fn the_fixed_check_grades_the_run(ctx: EvalContext) {
    let announces = Check::predicate("announces 2.4.1", |result| {
        (result.final_response.as_deref())
            .unwrap_or_default()
            .contains("2.4.1")
    });
    if !ctx.check_controls(&announces, &controls()) {
        return;
    }
    let notes = ctx.workdir().join("NOTES.md");
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": notes.to_str().unwrap(), "file_text": "# 2.4.1\n"}),
            ))
            .turn(ScriptedTurn::text("ferris-cli 2.4.1 is out.")),
    );
    let eval = ctx.eval().build().unwrap();
    let result = ctx
        .run(&eval, "Announce version 2.4.1 of ferris-cli.")
        .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    ctx.check(&result, &announces);
    ctx.check(&result, &in_order(["create"]));
    ctx.check(&result, &never_called("bash"));
    ctx.check(&result, &model_turns(Times::AtMost(2)));
}
