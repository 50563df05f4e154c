#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval(models = [])]
async fn no_model(_ctx: EvalContext) {}

#[copilot_eval(models = ["gpt-5", 5])]
async fn not_a_string(_ctx: EvalContext) {}

#[copilot_eval(models = "gpt-5")]
async fn not_a_list(_ctx: EvalContext) {}

#[copilot_eval(models = ["gpt-5", ""])]
async fn empty_id(_ctx: EvalContext) {}

#[copilot_eval(models = ["gpt-5", "gpt-5"])]
async fn twice(_ctx: EvalContext) {}

#[copilot_eval(models = ["gpt-5", "GPT.5"])]
async fn same_module(_ctx: EvalContext) {}

#[copilot_eval(model = "o3", models = ["gpt-5"])]
async fn model_and_models(_ctx: EvalContext) {}

#[copilot_eval(models = ["gpt-5"])]
#[case::model_fast("a")]
async fn reserved_label(_ctx: EvalContext, _prompt: &str) {}

fn main() {}
