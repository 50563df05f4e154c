// `skill_evals` reads the skill's evals/evals.json at compile time, relative to the package
// root; under trybuild that is trybuild's project folder (target/tests/trybuild/<crate>), so the
// folders below climb back to this one (the default target folder at the workspace root).
#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;
struct SkillCase;

// evals[1] has no `prompt`.
#[copilot_eval(skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/bad")]
async fn malformed(_ctx: EvalContext, _case: SkillCase) {}

// evals[0] names an input file that does not exist.
#[copilot_eval(skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/missing_file")]
async fn missing_input(_ctx: EvalContext, _case: SkillCase) {}

// The value must be a string.
#[copilot_eval(skill_evals = 3)]
async fn not_a_folder(_ctx: EvalContext, _case: SkillCase) {}

// A skill eval test takes its context and its case.
#[copilot_eval(skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/missing_file")]
async fn no_case(_ctx: EvalContext) {}

// Cases come from the file, not from `#[case]`.
#[copilot_eval(skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/bad")]
#[case::one(1)]
async fn with_cases(_ctx: EvalContext, _case: SkillCase) {}

// A folder that does not exist, beside one whose name is near.
#[copilot_eval(skill_evals = "../../../../copilot-eval-macros/tests/ui/skills/misnamd")]
async fn typo_in_folder(_ctx: EvalContext, _case: SkillCase) {}

fn main() {}
