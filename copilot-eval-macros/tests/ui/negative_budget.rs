#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(max_tool_calls = -1)]
async fn negative_budget(_ctx: EvalContext) {}

#[copilot_eval(timeout_s = 0)]
async fn zero_timeout(_ctx: EvalContext) {}

#[copilot_eval(timeout_s = -2.5)]
async fn negative_timeout(_ctx: EvalContext) {}

fn main() {}
