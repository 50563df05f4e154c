#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(modle = "claude-sonnet-4.5")]
async fn misspelled_key(_ctx: EvalContext) {}

#[copilot_eval(retries)]
async fn bare_word(_ctx: EvalContext) {}

#[copilot_eval(model = "claude-sonnet-4.5", model = "gpt-5")]
async fn duplicate_key(_ctx: EvalContext) {}

#[copilot_eval(max_tool_call = 5)]
async fn missing_letter(_ctx: EvalContext) {}

#[copilot_eval(flavour = "vanilla")]
async fn nothing_near(_ctx: EvalContext) {}

fn main() {}
