//! Every key of `#[copilot_eval]` in one test that compiles (each eval key becomes a call of its
//! `CopilotEvalBuilder` method in the generated configure function, so a key whose method is
//! missing or takes another type fails to compile here), and each value reaches the eval.

use copilot_eval_core::eval::{ImageDetail, ReasoningEffort, SandboxMode};
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
    sandbox = "required",
    sandbox_allow_read = "tests",
    sandbox_allow_write = "/var/tmp",
    sandbox_allow_connect = 5432,
    cassette = "tests/cassettes/every_key.yaml",
    trials = 3,
    min_pass_rate = 0.8,
    crate = "::copilot_eval_core"
)]
async fn every_key(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.name(), "every key");
    // `trials = 3`: the first test process is trial 1 of 3 (tests/tests/trials.rs runs the
    // keys end to end).
    assert_eq!(ctx.trial().map(|t| t.trials), Some(3));
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
    assert_eq!(snapshot.max_tool_calls, Some(3), "{snapshot:#?}");
    assert_eq!(
        snapshot.reasoning_effort,
        Some(ReasoningEffort::High),
        "{snapshot:#?}"
    );
    assert_eq!(
        snapshot.image_detail,
        Some(ImageDetail::Low),
        "{snapshot:#?}"
    );
    assert!(snapshot.audit_requests, "{snapshot:#?}");
    let sandbox = eval.sandbox();
    assert_eq!(sandbox.mode, SandboxMode::Required);
    // Relative to the package root, as every path of the eval.
    assert_eq!(
        sandbox.allow_read,
        [std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")]
    );
    assert_eq!(sandbox.allow_write, [std::path::PathBuf::from("/var/tmp")]);
    assert_eq!(sandbox.allow_connect, [5432]);
}

/// `sandbox = false` (a bool, where other values are text).
#[copilot_eval(sandbox = false, crate = "::copilot_eval_core")]
async fn unsandboxed(ctx: EvalContext) {
    let _ = ctx;
}

#[test]
fn sandbox_false_turns_it_off() {
    let eval = unsandboxed::__CONFIGURE(CopilotEval::builder())
        .build()
        .unwrap();
    assert_eq!(eval.sandbox().mode, SandboxMode::Off);
    assert_eq!(eval.snapshot().sandbox, SandboxMode::Off);
}

/// A model matrix: one test per model, in the module core's `model_segment` names (the `use`
/// lines below compile only then), each on its model over the attribute's other keys.
#[copilot_eval(models = ["claude-sonnet-4.5", "gpt-5"], timeout_s = 2.5)]
async fn on_each_model(ctx: EvalContext) {
    let eval = ctx.eval().build().unwrap();
    assert_eq!(eval.model().map(str::to_owned), ctx.model());
}

#[copilot_eval(models = ["gpt-5"])]
#[case::english("Hello")]
async fn on_each_model_and_case(ctx: EvalContext, greeting: &str) {
    assert_eq!(greeting, "Hello");
    assert_eq!(ctx.model().as_deref(), Some("gpt-5"));
}

#[allow(unused_imports)]
use on_each_model::{model_claude_sonnet_4_5 as _, model_gpt_5 as _};

/// `skill_evals`: one test per entry of the skill's evals/evals.json, in the module
/// `eval_<id>_<slug>` (the `use` lines below compile only then), here with a model each.
#[copilot_eval(skill_evals = "../examples/scripted/skills/changelog", models = ["gpt-5"])]
async fn from_the_skills_evals(ctx: EvalContext, case: copilot_eval_core::harness::SkillCase) {
    assert_eq!(ctx.skill_case(), Some(case));
}

#[allow(unused_imports)]
use from_the_skills_evals::{
    eval_1_write_the_changelog_for_the as _, eval_2_add_a_changelog_entry_for as _,
    eval_3_in_one_sentence_what_is as _,
};

/// `skill_triggers`: one test per query of the skill's evals/triggers.json, in the module
/// `invoke_<n>_<slug>` or `dormant_<n>_<slug>` (the `use` lines below compile only then).
#[copilot_eval(skill_triggers = "../examples/scripted/skills/changelog", trials = 2)]
async fn from_the_skills_triggers(ctx: EvalContext, case: copilot_eval_core::harness::TriggerCase) {
    assert_eq!(ctx.trigger_case(), Some(case));
}

#[allow(unused_imports)]
use from_the_skills_triggers::{
    dormant_3_what_is_the_capital_of as _, dormant_4_rename_the_variable_x_to as _,
    invoke_1_write_the_changelog_for_the as _, invoke_2_add_a_changelog_entry_for as _,
};

#[test]
fn models_make_one_test_per_model_named_by_model_segment() {
    use copilot_eval_core::harness::model_segment;
    assert_eq!(
        model_segment("claude-sonnet-4.5"),
        "model_claude_sonnet_4_5"
    );
    assert_eq!(model_segment("gpt-5"), "model_gpt_5");
    // The other keys apply to every model's test; the model is set by the test's config.
    let eval = on_each_model::__CONFIGURE(CopilotEval::builder())
        .build()
        .unwrap();
    assert_eq!(eval.timeout_s(), 2.5);
    assert_eq!(eval.model(), None);
}
