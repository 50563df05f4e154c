//! W4 of the benchmark: W2's 24 evals (`tests/weather.rs`) given a skill
//! (`copilot_eval_bench::SKILL_DIRECTORY`), the same scripted scenario, run by the bench with
//! `--ablate skills --trials 5` (24 evals x 5 trials x 2 sides: 240 runs). Each also checks
//! that the runtime discovered the skill, so the side without it fails (a measurement, not the
//! suite's verdict) and the lift table shows the skill's `helps`.

use copilot_eval_bench::{SKILL, SKILL_DIRECTORY, weather_eval};
use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;

#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 120)]
#[case::w01(1)]
#[case::w02(2)]
#[case::w03(3)]
#[case::w04(4)]
#[case::w05(5)]
#[case::w06(6)]
#[case::w07(7)]
#[case::w08(8)]
#[case::w09(9)]
#[case::w10(10)]
#[case::w11(11)]
#[case::w12(12)]
#[case::w13(13)]
#[case::w14(14)]
#[case::w15(15)]
#[case::w16(16)]
#[case::w17(17)]
#[case::w18(18)]
#[case::w19(19)]
#[case::w20(20)]
#[case::w21(21)]
#[case::w22(22)]
#[case::w23(23)]
#[case::w24(24)]
async fn weather_skill(ctx: EvalContext, n: u32) {
    let result = weather_eval(&ctx, n, Some(SKILL_DIRECTORY)).await;
    assert!(
        result.skill_was_discovered(SKILL),
        "case {n}: the runtime did not discover the skill {SKILL}"
    );
}
