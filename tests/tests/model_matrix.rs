//! Model matrices: `models = [..]` under the attribute and `cargo copilot-eval --models a,b`
//! make each eval on each model its own eval (`name@model`), trials multiply per cell, and the
//! report sets each eval's models side by side. The scripted example's
//! `names_the_capital_per_model` (2 cases x `claude-sonnet-4.5`, `gpt-5`) answers wrongly only
//! on gpt-5 in trial 2, so with `--trials 3` every figure is known in advance: claude 3/3 (100%,
//! Wilson 95% interval 43.85%-100%), gpt-5 2/3 (66.7%, 20.77%-93.85%), in each case.

mod support;

use copilot_eval_core::report::{ModelCell, Outcome, TestRecord, TrialOf};
use copilot_eval_e2e::runtime_for;
use support::{SuiteRun, command_path, workspace_root};

const MATRIX: &str = "names_the_capital_per_model";
const MODELS: [&str; 2] = ["claude-sonnet-4.5", "gpt-5"];
const CASES: [&str; 2] = ["france", "italy"];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// The records of `cell` (its `name`) in `run`.
fn records<'a>(run: &'a SuiteRun, cell: &ModelCell) -> Vec<&'a TestRecord> {
    run.report
        .tests
        .iter()
        .filter(|t| t.name == cell.name)
        .collect()
}

#[test]
fn two_models_by_two_cases_by_three_trials_give_the_side_by_side_figures() {
    if runtime_for("two_models_by_two_cases_by_three_trials_give_the_side_by_side_figures")
        .is_none()
    {
        return;
    }
    let run = support::copilot_eval(
        &workspace_root(),
        &["-p", "scripted", MATRIX, "--trials", "3", "-j", "2"],
        &[],
    );
    // gpt-5's second trials fail: every trial must pass without a threshold.
    assert_eq!(run.status, 1, "{}", run.stderr);

    // Cases x models x trials: 12 test processes, each its own eval `case@model`.
    let mut expected = Vec::new();
    for case in CASES {
        for model in MODELS {
            for trial in 1..=3 {
                let outcome = if model == "gpt-5" && trial == 2 {
                    Outcome::Failed
                } else {
                    Outcome::Passed
                };
                expected.push((
                    format!("{MATRIX}::{case}@{model}"),
                    Some(model.to_owned()),
                    Some(TrialOf { trial, trials: 3 }),
                    outcome,
                ));
            }
        }
    }
    let got: Vec<_> = run
        .report
        .tests
        .iter()
        .map(|t| (t.name.clone(), t.model.clone(), t.trial, t.outcome))
        .collect();
    assert_eq!(got, expected);
    for test in &run.report.tests {
        let model = test.model.as_deref().unwrap();
        assert!(
            test.test_id
                .ends_with(&format!("::{}::__copilot_eval", model_module(model))),
            "{}",
            test.test_id
        );
        let [record] = &test.runs[..] else {
            panic!("one run: {test:#?}")
        };
        assert_eq!(record.model_requested.as_deref(), Some(model));
        assert_eq!(record.eval_name, test.name);
    }

    // The side-by-side table: per case, one cell per model, in the attribute's order.
    let evals: Vec<&str> = run
        .report
        .model_matrix
        .iter()
        .map(|e| e.eval.as_str())
        .collect();
    assert_eq!(
        evals,
        CASES.map(|case| format!("{MATRIX}::{case}")).to_vec(),
        "{:#?}",
        run.report.model_matrix
    );
    for eval in &run.report.model_matrix {
        assert_eq!(eval.binary, "scripted::evals");
        let models: Vec<&str> = eval.models.iter().map(|c| c.model.as_str()).collect();
        assert_eq!(models, MODELS);
        let [claude, gpt] = &eval.models[..] else {
            unreachable!()
        };
        assert_eq!(
            (claude.tests, claude.passed, claude.failed, claude.error),
            (3, 3, 0, 0)
        );
        assert_eq!((gpt.tests, gpt.passed, gpt.failed, gpt.error), (3, 2, 1, 0));
        assert_eq!(claude.pass_rate, Some(1.0));
        assert!(close(gpt.pass_rate.unwrap(), 2.0 / 3.0));
        let [low, high] = claude.pass_rate_interval.unwrap();
        assert!(close(low, 0.4385) && close(high, 1.0), "{low} {high}");
        let [low, high] = gpt.pass_rate_interval.unwrap();
        assert!(close(low, 0.2077) && close(high, 0.9385), "{low} {high}");
        for cell in [claude, gpt] {
            // Sums over the cell's own three trials.
            let records = records(&run, cell);
            assert_eq!(records.len(), 3);
            let sum = |f: fn(&TestRecord) -> u64| records.iter().map(|r| f(r)).sum::<u64>();
            let input = sum(|r| r.cost.as_ref().unwrap().input_tokens);
            let output = sum(|r| r.cost.as_ref().unwrap().output_tokens);
            assert!(input > 0 && output > 0, "{cell:#?}");
            assert_eq!(
                (cell.cost.input_tokens, cell.cost.output_tokens),
                (input, output)
            );
            assert_eq!(cell.cost.model_calls, 3);
            // A scripted model spends nothing: 0 premium requests, cost not applicable (0).
            assert_eq!(cell.cost.premium_requests, Some(0.0));
            assert_eq!(cell.cost.estimated_cost, Some(0.0));
            assert_eq!(cell.cost.not_applicable_runs, 3);
            assert_eq!(cell.duration_ms, sum(|r| r.duration_ms));
            assert!(cell.duration_ms > 0);
        }
    }

    // The terminal's table: a heading per eval and one row per model.
    let lines: Vec<&str> = run.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "  model matrix:")
        .unwrap_or_else(|| panic!("{}", run.stderr));
    for (i, case) in CASES.iter().enumerate() {
        let heading = lines[at + 1 + i * 4];
        assert_eq!(heading, format!("    scripted::evals {MATRIX}::{case}"));
        assert!(
            lines[at + 2 + i * 4].starts_with(
                "      model              passed                       tokens  premium  est. cost  cost/pass             duration"
            ),
            "{}",
            run.stderr
        );
        assert!(
            lines[at + 3 + i * 4]
                .starts_with("      claude-sonnet-4.5  3/3 (100%, 95% CI 44%-100%)  "),
            "{}",
            run.stderr
        );
        assert!(
            lines[at + 4 + i * 4]
                .starts_with("      gpt-5              2/3 (67%, 95% CI 21%-94%)    "),
            "{}",
            run.stderr
        );
        assert!(
            lines[at + 4 + i * 4].contains("  0        0 USD      n/a (scripted model)  "),
            "{}",
            run.stderr
        );
    }

    // JUnit: each trial of each cell named apart.
    assert_eq!(run.junit.tests, 12, "{}", run.junit_xml);
    assert_eq!(
        run.junit_kind(&format!("{MATRIX}::italy@gpt-5 [trial 2/3]")),
        "failure"
    );
    assert_eq!(
        run.junit_kind(&format!("{MATRIX}::italy@claude-sonnet-4.5 [trial 2/3]")),
        "success"
    );
}

/// `model_<id>`: the module the attribute gives a model's test.
fn model_module(model: &str) -> String {
    copilot_eval_core::harness::model_segment(model)
}

#[test]
fn models_on_the_command_line_replace_the_attributes_models() {
    if runtime_for("models_on_the_command_line_replace_the_attributes_models").is_none() {
        return;
    }
    // A plain eval (model = claude-sonnet-4.5) and the matrix, on gpt-5 and o3.
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "names_the_capital_",
            "--models",
            "gpt-5, o3",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let got: Vec<(&str, &str, &str)> = run
        .report
        .tests
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.test_id.as_str(),
                t.runs[0].model_requested.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "names_the_capital_in_most_trials@gpt-5",
                "names_the_capital_in_most_trials::__copilot_eval",
                "gpt-5"
            ),
            (
                "names_the_capital_in_most_trials@o3",
                "names_the_capital_in_most_trials::__copilot_eval",
                "o3"
            ),
            // gpt-5 on the attribute's own gpt-5 test; o3, which the attribute does not list,
            // on the eval's first model test.
            (
                "names_the_capital_per_model::france@gpt-5",
                "names_the_capital_per_model::france::model_gpt_5::__copilot_eval",
                "gpt-5"
            ),
            (
                "names_the_capital_per_model::france@o3",
                "names_the_capital_per_model::france::model_claude_sonnet_4_5::__copilot_eval",
                "o3"
            ),
            (
                "names_the_capital_per_model::italy@gpt-5",
                "names_the_capital_per_model::italy::model_gpt_5::__copilot_eval",
                "gpt-5"
            ),
            (
                "names_the_capital_per_model::italy@o3",
                "names_the_capital_per_model::italy::model_claude_sonnet_4_5::__copilot_eval",
                "o3"
            ),
        ]
    );
    assert!(
        run.report
            .tests
            .iter()
            .all(|t| t.outcome == Outcome::Passed)
    );
    let matrix: Vec<(&str, Vec<&str>)> = run
        .report
        .model_matrix
        .iter()
        .map(|e| {
            (
                e.eval.as_str(),
                e.models.iter().map(|c| c.model.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        matrix,
        [
            ("names_the_capital_in_most_trials", vec!["gpt-5", "o3"]),
            ("names_the_capital_per_model::france", vec!["gpt-5", "o3"]),
            ("names_the_capital_per_model::italy", vec!["gpt-5", "o3"]),
        ]
    );
}

/// A bad `--models` is a usage error naming the flag and the fix, before anything is built.
#[test]
fn a_bad_models_list_is_a_usage_error() {
    for (models, says) in [
        ("gpt-5,,o3", "entry 2 is empty"),
        (
            "gpt-5,gpt-5",
            "\"gpt-5\" is listed twice; list each model once",
        ),
    ] {
        let output = std::process::Command::new(command_path())
            .args(["copilot-eval", "--models", models])
            .current_dir(workspace_root())
            .output()
            .expect("the command runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("error: --models {models:?}: ")) && stderr.contains(says),
            "{stderr}"
        );
    }
}
