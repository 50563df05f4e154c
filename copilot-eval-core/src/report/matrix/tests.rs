//! The model matrix computed from test records.

use super::*;
use crate::StopReason;
use crate::report::tests::{run, test};

/// A record of `eval` on `model` with `outcome`, `tokens` input tokens (and 5 output), 1.5 s.
fn cell_record(eval: &str, model: &str, outcome: Outcome, tokens: u64) -> TestRecord {
    let mut record = test(
        &format!("{eval}@{model}"),
        "scripted::evals",
        outcome,
        vec![run(StopReason::Completed, tokens)],
    );
    record.model = Some(model.to_owned());
    record.cost = Some(CostTotals {
        input_tokens: tokens,
        output_tokens: 5,
        model_calls: 1,
        premium_requests: Some(1.0),
        estimated_cost: Some(0.25),
        ..CostTotals::zero()
    });
    record
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// Two evals (cases) x two models x three trials: each eval's models side by side, in the
/// order they ran, with their counts, rate, interval and sums.
#[test]
fn cells_group_by_eval_then_model_and_sum_their_records() {
    let mut tests = Vec::new();
    for eval in ["capital::france", "capital::italy"] {
        for model in ["claude-sonnet-4.5", "gpt-5"] {
            for trial in 1..=3 {
                let outcome = if model == "gpt-5" && trial == 2 {
                    Outcome::Failed
                } else {
                    Outcome::Passed
                };
                tests.push(cell_record(eval, model, outcome, 100));
            }
        }
    }
    // A record outside the matrix is not in it.
    tests.push(test("plain", "scripted::evals", Outcome::Passed, vec![]));
    let matrix = of(&tests);
    let evals: Vec<&str> = matrix.iter().map(|e| e.eval.as_str()).collect();
    assert_eq!(evals, ["capital::france", "capital::italy"]);
    for eval in &matrix {
        let models: Vec<&str> = eval.models.iter().map(|c| c.model.as_str()).collect();
        assert_eq!(models, ["claude-sonnet-4.5", "gpt-5"]);
        let [claude, gpt] = &eval.models[..] else {
            unreachable!()
        };
        assert_eq!(claude.name, format!("{}@claude-sonnet-4.5", eval.eval));
        assert_eq!(
            (claude.tests, claude.passed, claude.failed),
            (3, 3, 0),
            "{claude:?}"
        );
        assert_eq!((gpt.tests, gpt.passed, gpt.failed), (3, 2, 1), "{gpt:?}");
        assert_eq!(claude.pass_rate, Some(1.0));
        assert!(close(gpt.pass_rate.unwrap(), 2.0 / 3.0));
        // Wilson 95%: 3/3 -> 43.85%-100%, 2/3 -> 20.77%-93.85%.
        let [low, high] = claude.pass_rate_interval.unwrap();
        assert!(close(low, 0.4385) && close(high, 1.0), "{low} {high}");
        let [low, high] = gpt.pass_rate_interval.unwrap();
        assert!(close(low, 0.2077) && close(high, 0.9385), "{low} {high}");
        assert_eq!(
            (
                gpt.cost.input_tokens,
                gpt.cost.output_tokens,
                gpt.cost.model_calls
            ),
            (300, 15, 3)
        );
        assert_eq!(gpt.cost.premium_requests, Some(3.0));
        assert_eq!(gpt.cost.estimated_cost, Some(0.75));
        assert_eq!(gpt.duration_ms, 4500);
        assert_eq!(rate_text(gpt), "2/3 (67%, 95% CI 21%-94%)");
        assert_eq!(rate_text(claude), "3/3 (100%, 95% CI 44%-100%)");
        assert_eq!(tokens_text(gpt), "315");
        assert_eq!(cost_text(gpt, "USD"), "0.75 USD");
        assert_eq!(gpt.cost_per_pass, Some(0.375));
        assert_eq!(claude.cost_per_pass, Some(0.25));
    }
    let table = table(&matrix[..1], "USD", "  ");
    assert_eq!(
        table,
        "  scripted::evals capital::france\n\
         \x20   model              passed                       tokens  premium  est. cost  cost/pass  duration\n\
         \x20   claude-sonnet-4.5  3/3 (100%, 95% CI 44%-100%)  315     3        0.75 USD   0.25 USD   4.5 s\n\
         \x20   gpt-5              2/3 (67%, 95% CI 21%-94%)    315     3        0.75 USD   0.375 USD  4.5 s\n"
    );
}

/// A cell without a verdict has no rate; errors and unknown figures are said.
#[test]
fn a_cell_without_a_verdict_has_no_rate_and_says_what_is_unknown() {
    let mut errored = cell_record("greets", "gpt-5", Outcome::Error, 10);
    errored.cost.as_mut().unwrap().premium_requests = None;
    errored.cost.as_mut().unwrap().usage_unknown_runs = 1;
    let mut not_run = cell_record("greets", "gpt-5", Outcome::NotRun, 0);
    not_run.cost = None;
    not_run.duration_ms = 0;
    let matrix = of(&[errored, not_run]);
    let cell = &matrix[0].models[0];
    assert_eq!((cell.tests, cell.error, cell.not_run), (2, 1, 1));
    assert_eq!((cell.pass_rate, cell.pass_rate_interval), (None, None));
    assert_eq!(rate_text(cell), "0/0, 1 error, 1 not run");
    assert_eq!(premium_text(cell), "unknown");
    assert_eq!(tokens_text(cell), "15 (+1 runs unknown)");
}

/// The eval of a record is its name without `@model`, and only that suffix.
#[test]
fn the_eval_is_the_name_without_its_model() {
    assert_eq!(eval_of("a::b@gpt-5", "gpt-5"), "a::b");
    assert_eq!(eval_of("a::b@gpt-5", "o3"), "a::b@gpt-5");
    assert_eq!(eval_of("agpt-5", "gpt-5"), "agpt-5");
}
