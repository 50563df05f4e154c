#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(trials = 0)]
async fn no_trials(_ctx: EvalContext) {}

#[copilot_eval(trials = -3)]
async fn negative_trials(_ctx: EvalContext) {}

#[copilot_eval(trials = 2.5)]
async fn fractional_trials(_ctx: EvalContext) {}

#[copilot_eval(trials = "5")]
async fn trials_as_string(_ctx: EvalContext) {}

#[copilot_eval(min_pass_rate = 80)]
async fn rate_as_percent(_ctx: EvalContext) {}

#[copilot_eval(min_pass_rate = 0)]
async fn zero_rate(_ctx: EvalContext) {}

#[copilot_eval(min_pass_rate = -0.5)]
async fn negative_rate(_ctx: EvalContext) {}

#[copilot_eval(min_pass_rate = "0.8")]
async fn rate_as_string(_ctx: EvalContext) {}

fn main() {}
