// `skill_triggers` reads the skill's evals/triggers.json at compile time, relative to the
// package root (trybuild's project folder, see bad_skill_evals.rs).
#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;
struct TriggerCase;

// [1] has no `should_trigger`.
#[copilot_eval(skill_triggers = "../../../../copilot-eval-macros/tests/ui/skills/bad_triggers")]
async fn malformed(_ctx: EvalContext, _case: TriggerCase) {}

// `skill_name` is not the skill folder's name.
#[copilot_eval(skill_triggers = "../../../../copilot-eval-macros/tests/ui/skills/misnamed")]
async fn misnamed(_ctx: EvalContext, _case: TriggerCase) {}

// The folder has no trigger set.
#[copilot_eval(skill_triggers = "../../../../copilot-eval-macros/tests/ui/skills/bad")]
async fn no_file(_ctx: EvalContext, _case: TriggerCase) {}

// A trigger test takes its context and its case.
#[copilot_eval(skill_triggers = "../../../../copilot-eval-macros/tests/ui/skills/misnamed")]
async fn no_case(_ctx: EvalContext) {}

// One file per function.
#[copilot_eval(
    skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/bad",
    skill_triggers = "../../../../copilot-eval-macros/tests/ui/skills/bad_triggers"
)]
async fn both(_ctx: EvalContext, _case: TriggerCase) {}

fn main() {}
