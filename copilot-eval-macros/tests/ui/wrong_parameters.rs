#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval]
async fn no_context() {}

#[copilot_eval]
async fn two_parameters(_ctx: EvalContext, _extra: u32) {}

#[copilot_eval]
async fn generic<T>(_ctx: T) {}

fn main() {}
