#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(model = "claude-sonnet-4.5")]
fn not_async(_ctx: EvalContext) {}

fn main() {}
