#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(timeout_s = "60")]
async fn timeout_as_string(_ctx: EvalContext) {}

#[copilot_eval(model = 5)]
async fn model_as_number(_ctx: EvalContext) {}

#[copilot_eval(audit_requests = 1)]
async fn audit_as_number(_ctx: EvalContext) {}

#[copilot_eval(max_tool_calls = 2.5)]
async fn budget_as_float(_ctx: EvalContext) {}

#[copilot_eval(reasoning_effort = "extreme")]
async fn effort_outside_the_set(_ctx: EvalContext) {}

const MODEL: &str = "claude-sonnet-4.5";
#[copilot_eval(model = MODEL)]
async fn model_as_constant(_ctx: EvalContext) {}

fn main() {}
