#![allow(dead_code)]
use copilot_eval_macros::copilot_eval;

struct EvalContext;

#[copilot_eval]
#[test]
async fn also_a_test(_ctx: EvalContext) {}

#[copilot_eval]
#[copilot_eval]
async fn twice(_ctx: EvalContext) {}

#[copilot_eval]
#[ignore = "an extra ignore is rejected too"]
async fn ignored(_ctx: EvalContext) {}

fn main() {}
