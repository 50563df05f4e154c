//! W1 and W2 of the benchmark: the scenario of `copilot_eval_bench::script` as an eval, 24
//! cases (`weather::w01` alone is W1; all 24 are W2). Scripted, so offline in every mode.

use copilot_eval_bench::weather_eval;
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
async fn weather(ctx: EvalContext, n: u32) {
    weather_eval(&ctx, n, None).await;
}
