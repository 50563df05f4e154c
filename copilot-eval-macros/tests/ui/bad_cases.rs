#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval]
#[case::one("a")]
#[case::two("a", 2)]
async fn wrong_value_count(_ctx: EvalContext, _prompt: &str) {}

#[copilot_eval]
#[case("a")]
async fn unnamed_case(_ctx: EvalContext, _prompt: &str) {}

#[copilot_eval]
#[case::same("a")]
#[case::same("b")]
async fn same_label_twice(_ctx: EvalContext, _prompt: &str) {}

fn main() {}
