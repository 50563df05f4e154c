//! Cost in the artifacts and the suite's cost caps, end to end: the real command on the fixture
//! crate with `--replay`. The fixture's `priced::*` evals replay cassettes whose replies carry
//! recorded usage (100 input and 20 output tokens per call; `b_larger_call` 200 and 40), priced
//! with a test pricing table that makes 100 input tokens cost exactly 1 unit. Scripted evals are
//! not priced (their tokens are the script's), which the last test shows.

mod support;

use copilot_eval_core::report::{Outcome, TrialOf};
use copilot_eval_e2e::runtime_for;
use serde_json::Value;
use support::fixture;

/// 100 input tokens × 10000 per million = 1 EUR per call; output tokens are free.
const ONE_PER_CALL: &str = r#"
currency = "EUR"
[models."claude-sonnet-4.5"]
input = 10000
output = 0
"#;

/// The fixture's evals matching `filters`, `-j jobs`, priced with `table` and capped at
/// `max_cost`.
fn capped(jobs: &str, table: &str, max_cost: &str, filters: &[&str]) -> support::SuiteRun {
    let args = [
        &["-j", jobs, "--pricing", table, "--max-cost", max_cost][..],
        filters,
    ]
    .concat();
    fixture(&args, &[])
}

fn pricing(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("pricing.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_cost_cap_stops_launching_evals_at_the_cap() {
    if runtime_for("a_cost_cap_stops_launching_evals_at_the_cap").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(dir.path(), ONE_PER_CALL);
    // List order: a_call (1 EUR), another_call (1 EUR), b_larger_call (2 EUR).
    // After a_call 1 EUR < 1.5: the next is launched; after it 2 EUR >= 1.5: no more.
    let run = capped("1", &table, "1.5", &["priced"]);
    assert_eq!(run.status, 3, "not_run evals exit 3\n{}", run.stderr);
    let names = run.outcomes();
    assert_eq!(
        names,
        [
            ("priced::a_call", Outcome::Passed),
            ("priced::another_call", Outcome::Passed),
            ("priced::b_larger_call", Outcome::NotRun),
        ]
    );

    // Per eval: tokens, calls, reported numbers and the estimate.
    let first = run.test("priced::a_call").cost.clone().unwrap();
    assert_eq!(
        (
            first.model_calls,
            first.input_tokens,
            first.output_tokens,
            first.cache_read_tokens
        ),
        (1, 100, 20, 0)
    );
    assert_eq!(first.estimated_cost, Some(1.0));
    assert_eq!(
        first.premium_requests,
        Some(0.0),
        "the replay server bills nothing"
    );
    assert_eq!(first.reported_cost, Some(0.0));
    let run_totals = &run.test("priced::a_call").runs[0].totals;
    assert_eq!(run_totals.estimated_cost, Some(1.0));
    assert_eq!(run_totals.premium_requests, Some(0.0));

    // The eval not launched: not_run with the reason, no cost.
    let skipped = run.test("priced::b_larger_call");
    let reason = skipped.message.as_deref().unwrap();
    assert!(
        reason
            .contains("cost cap reached: estimated cost 2 EUR >= --max-cost 1.5 EUR after 2 evals"),
        "{reason}"
    );
    assert!(skipped.cost.is_none() && skipped.runs.is_empty());

    // Per suite.
    let totals = &run.report.totals.cost;
    assert_eq!((totals.model_calls, totals.input_tokens), (2, 200));
    assert_eq!(totals.estimated_cost, Some(2.0));
    let control = run.report.cost_control.as_ref().unwrap();
    assert_eq!(control.currency, "EUR");
    assert_eq!(control.pricing, table);
    assert_eq!(control.price_unit, "per 1000000 tokens");
    assert_eq!(control.max_cost, Some(1.5));
    assert!(
        control
            .cap_reached
            .as_deref()
            .unwrap()
            .starts_with("cost cap reached")
    );

    // JUnit: the same numbers, and the skipped eval with its reason.
    assert_eq!(
        run.junit_property("priced::a_call", "copilot_eval.cost.estimated"),
        "1"
    );
    assert_eq!(
        run.junit_property("priced::a_call", "copilot_eval.model_calls"),
        "1"
    );
    assert_eq!(
        run.junit_property("priced::a_call", "copilot_eval.premium_requests"),
        "0"
    );
    match &run.junit_case("priced::b_larger_call").status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => {
            assert!(message.as_ref().unwrap().contains("--max-cost 1.5"))
        }
        other => panic!("{other:?}"),
    }
    assert!(
        run.stderr.contains("stopping: cost cap reached"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("estimated: 2 EUR (pricing: "),
        "{}",
        run.stderr
    );
}

/// docs/live-runs.md: with `-j N` the cap stops launching, but evals already running finish and
/// may carry the spend past it. With `-j 3` all three selected evals start before any finishes
/// (nothing is checked before a launch while nothing has been spent), so all three run and the
/// suite spends 4 EUR against a 1.5 EUR cap, and the report says the cap was reached.
#[test]
fn with_parallel_evals_running_ones_finish_past_the_cap() {
    if runtime_for("with_parallel_evals_running_ones_finish_past_the_cap").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(dir.path(), ONE_PER_CALL);
    let run = capped("3", &table, "1.5", &["priced"]);
    let outcomes = run.outcomes();
    assert_eq!(
        outcomes,
        [
            ("priced::a_call", Outcome::Passed),
            ("priced::another_call", Outcome::Passed),
            ("priced::b_larger_call", Outcome::Passed),
        ],
        "{}",
        run.stderr
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.report.totals.cost.estimated_cost,
        Some(4.0),
        "1 + 1 + 2 EUR, past the 1.5 EUR cap"
    );
    let control = run.report.cost_control.as_ref().unwrap();
    assert_eq!(control.max_cost, Some(1.5));
    assert!(
        control
            .cap_reached
            .as_deref()
            .is_some_and(|c| c.starts_with("cost cap reached")),
        "{control:?}"
    );
}

#[test]
fn a_premium_request_cap_of_zero_launches_nothing() {
    let run = fixture(&["--max-premium-requests", "0", "passes", "unit_eval"], &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(run.report.totals.not_run, 3);
    for test in &run.report.tests {
        assert_eq!(test.outcome, Outcome::NotRun);
        let message = test.message.as_deref().unwrap();
        assert!(
            message.contains(
                "premium-request cap reached: 0 premium requests >= --max-premium-requests 0 before the first eval"
            ),
            "{message}"
        );
    }
    let control = run.report.cost_control.as_ref().unwrap();
    assert_eq!(control.max_premium_requests, Some(0.0));
    assert_eq!(control.pricing, "built-in default");
}

#[test]
fn unknown_prices_stay_null_and_stop_a_capped_suite() {
    if runtime_for("unknown_prices_stay_null_and_stop_a_capped_suite").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(
        dir.path(),
        "[models.\"some-other-model\"]\ninput = 1\noutput = 1\n",
    );
    let run = capped("1", &table, "100", &["priced"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.json).unwrap();
    let first = &json["tests"][0];
    assert_eq!(first["name"], "priced::a_call");
    assert_eq!(first["outcome"], "passed");
    assert!(
        first["cost"]["estimated_cost"].is_null(),
        "unknown, never 0: {}",
        first["cost"]
    );
    assert_eq!(
        first["cost"]["unpriced_models"],
        serde_json::json!(["claude-sonnet-4.5: not in the pricing table"])
    );
    assert!(first["runs"][0]["totals"]["estimated_cost"].is_null());
    assert!(json["totals"]["cost"]["estimated_cost"].is_null());
    assert_eq!(
        run.junit_property("priced::a_call", "copilot_eval.cost.estimated"),
        "unknown"
    );
    for name in ["priced::another_call", "priced::b_larger_call"] {
        let test = run.test(name);
        assert_eq!(test.outcome, Outcome::NotRun);
        assert!(
            test.message
                .as_deref()
                .unwrap()
                .contains("cost cap cannot be enforced"),
            "{:?}",
            test.message
        );
    }
}

#[test]
fn an_invalid_pricing_table_or_cap_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(dir.path(), "[models.m]\ninput = 1\n");
    let out = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "--pricing", &table, "--list"])
        .current_dir(support::workspace_root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid pricing table") && stderr.contains("missing field `output`"),
        "{stderr}"
    );
    let out = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "--max-cost=-1", "--list"])
        .current_dir(support::workspace_root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-cost must be a number >= 0"));
}

/// A scripted run is not priced: its tokens are the script's, not a model's, so its cost is
/// "not applicable: scripted model" in every artifact, it counts 0 toward the sums, and a cap
/// below one priced call never stops scripted evals.
#[test]
fn scripted_runs_are_not_priced_and_never_reach_a_cap() {
    if runtime_for("scripted_runs_are_not_priced_and_never_reach_a_cap").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(dir.path(), ONE_PER_CALL);
    let run = capped("1", &table, "0.5", &["unit_eval", "passes"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let outcomes = run.outcomes();
    assert_eq!(
        outcomes,
        [
            ("tests::unit_eval", Outcome::Passed),
            ("nested::passes_in_a_module", Outcome::Passed),
            ("passes", Outcome::Passed),
        ]
    );
    for test in &run.report.tests {
        let totals = &test.runs[0].totals;
        assert_eq!(totals.estimated_cost, None, "{}", test.name);
        assert_eq!(
            totals.cost_not_applicable.as_deref(),
            Some("scripted model"),
            "{}",
            test.name
        );
        let cost = test.cost.as_ref().unwrap();
        assert_eq!(cost.estimated_cost, Some(0.0), "{}", test.name);
        assert!(
            cost.input_tokens > 0,
            "the script's tokens are still counted"
        );
    }
    let totals = &run.report.totals.cost;
    assert_eq!(totals.estimated_cost, Some(0.0));
    assert_eq!(totals.not_applicable_runs, 3);
    assert!(
        run.report
            .cost_control
            .as_ref()
            .unwrap()
            .cap_reached
            .is_none()
    );
    assert!(
        run.stderr
            .contains("(3 runs not applicable: scripted model)"),
        "{}",
        run.stderr
    );
}

/// Both models of the fixture's `capped_hello_per_model` at 1 EUR a call.
const ONE_PER_CALL_BOTH: &str = r#"
currency = "EUR"
[models."claude-sonnet-4.5"]
input = 10000
output = 0
[models."gpt-5"]
input = 10000
output = 0
"#;

/// A model matrix in trials stopped midway by a cost cap still counts every trial asked in its
/// cell. The fixture's `capped_hello_per_model` (`tests/fixture/tests/counting.rs`) runs on
/// claude-sonnet-4.5 and gpt-5 and its attribute asks for 3 trials; each trial replays one
/// priced call (1 EUR). With `-j 1` and a 1.5 EUR cap, claude's trials 1 and 2 run (2 EUR), then
/// nothing starts: claude's trial 3 and gpt-5's three trials are `not_run`. gpt-5's test never
/// ran, so the runner learns its model and its 3 trials from the test's description: six
/// records, each in its cell, and the matrix says `2/2 …, 1 not run` and `0/0, 3 not run`.
#[test]
fn a_cost_cap_midway_through_a_matrix_in_trials_counts_every_asked_trial_in_its_cell() {
    if runtime_for(
        "a_cost_cap_midway_through_a_matrix_in_trials_counts_every_asked_trial_in_its_cell",
    )
    .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = pricing(dir.path(), ONE_PER_CALL_BOTH);
    let run = capped("1", &table, "1.5", &["capped_hello_per_model"]);
    assert_eq!(run.status, 3, "not_run trials exit 3\n{}", run.stderr);
    let of = |trial| Some(TrialOf { trial, trials: 3 });
    let got: Vec<(&str, Option<&str>, Option<TrialOf>, Outcome)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.model.as_deref(), t.trial, t.outcome))
        .collect();
    let claude = "capped_hello_per_model@claude-sonnet-4.5";
    let gpt = "capped_hello_per_model@gpt-5";
    assert_eq!(
        got,
        [
            (claude, Some("claude-sonnet-4.5"), of(1), Outcome::Passed),
            (claude, Some("claude-sonnet-4.5"), of(2), Outcome::Passed),
            (claude, Some("claude-sonnet-4.5"), of(3), Outcome::NotRun),
            (gpt, Some("gpt-5"), of(1), Outcome::NotRun),
            (gpt, Some("gpt-5"), of(2), Outcome::NotRun),
            (gpt, Some("gpt-5"), of(3), Outcome::NotRun),
        ],
        "{}",
        run.stderr
    );
    for test in run
        .report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::NotRun)
    {
        let message = test.message.as_deref().unwrap();
        assert!(
            message.contains("cost cap reached: estimated cost 2 EUR >= --max-cost 1.5 EUR"),
            "{message}"
        );
        assert!(test.runs.is_empty() && test.cost.is_none());
        let source = test
            .source
            .as_ref()
            .expect("the source, from the description");
        assert_eq!(source.file, "tests/fixture/tests/counting.rs");
    }

    // The matrix: one eval, both models, every asked trial in its cell.
    let [eval] = &run.report.model_matrix[..] else {
        panic!("{:#?}", run.report.model_matrix)
    };
    assert_eq!(
        (eval.eval.as_str(), eval.binary.as_str()),
        ("capped_hello_per_model", "copilot-eval-fixture::counting")
    );
    let cells: Vec<(&str, u32, u32, u32, u32)> = eval
        .models
        .iter()
        .map(|c| (c.model.as_str(), c.tests, c.passed, c.failed, c.not_run))
        .collect();
    assert_eq!(
        cells,
        [("claude-sonnet-4.5", 3, 2, 0, 1), ("gpt-5", 3, 0, 0, 3)]
    );
    // The trials' verdicts: neither eval passes over fewer trials than asked.
    let summaries: Vec<(&str, u32, u32, u32, Outcome)> = run
        .report
        .trial_summaries
        .iter()
        .map(|s| (s.name.as_str(), s.trials, s.passed, s.not_run, s.verdict))
        .collect();
    assert_eq!(
        summaries,
        [
            (claude, 3, 2, 1, Outcome::Error),
            (gpt, 3, 0, 3, Outcome::Error)
        ]
    );
    let row = |model: &str| {
        run.stderr
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{model}  ")))
            .unwrap_or_else(|| panic!("no {model} row: {}", run.stderr))
            .to_owned()
    };
    assert!(
        row("claude-sonnet-4.5").contains("2/2 (100%, 95% CI 34%-100%), 0 error, 1 not run"),
        "{}",
        run.stderr
    );
    assert!(
        row("gpt-5").contains("0/0, 0 error, 3 not run"),
        "{}",
        run.stderr
    );
    assert_eq!(run.junit.tests, 6, "{}", run.junit_xml);
    assert_eq!(run.junit_kind(&format!("{gpt} [trial 2/3]")), "skipped");
}
