//! The JUnit XML artifact (`--junit`), built with `quick-junit`.
//!
//! Layout: one `<testsuites name="copilot-eval">`; one `<testsuite>` per test binary (named
//! `package::target`, in list order); one `<testcase>` per eval test (`name` = the test path,
//! `classname` = the binary, `time` in seconds). Outcomes map to:
//!
//! | outcome | JUnit |
//! |---|---|
//! | `passed` | no child element |
//! | `failed` | `<failure message="…" type="assertion">` with the message as text |
//! | `error` | `<error message="…" type="<error kind>">`: the stop reasons of the runs and what failed |
//! | `not_run` | `<skipped message="…">` |
//!
//! Each test case carries `<properties>`: `copilot_eval.model` (the models used, comma-separated),
//! `copilot_eval.tokens.input`, `copilot_eval.tokens.output` (`unknown` when a run's tokens are
//! unknown: a replay of a cassette without recorded usage), `copilot_eval.tool_calls`,
//! `copilot_eval.stop_reason` (one per run, comma-separated), `copilot_eval.runs`,
//! `copilot_eval.evidence_complete` (`false` when any run's evidence is incomplete: events were
//! lost or unmatched, see the run's `capture_errors` in the JSON; `true` otherwise, also for a
//! test without runs), `copilot_eval.expected_stop` when a run declared one with
//! `ctx.expect_stop` (one per run, comma-separated, `none` for a run without), and every
//! `record_property` observation as `property.<name>` with its JSON text as value. Tests that ran
//! also carry their cost (`copilot_eval.model_calls`, `copilot_eval.tokens.cache_read`,
//! `copilot_eval.tokens.cache_write`, `copilot_eval.cost.reported`,
//! `copilot_eval.premium_requests`, `copilot_eval.cost.estimated`: a number, or `unknown`).
//! A test that compared configurations (`ctx.compare`) carries, per comparison `N` (from 1):
//! `copilot_eval.run.<run>.label` (`baseline` / `treatment`, for each labelled run),
//! `copilot_eval.comparison.N.summary` (both sides in one line, then the criteria's verdicts),
//! `copilot_eval.comparison.N.differences` (treatment minus baseline) and
//! `copilot_eval.comparison.N.criterion.<name>` (`baseline=yes treatment=no`).
//! A test that judged (`ctx.judge`, `ctx.judge_pair`) carries `copilot_eval.run.<run>.label`
//! `judge` for each judge session and, per judge `N` (from 1), the properties of
//! `report::judge::junit_properties`: `copilot_eval.judge.N.summary`, `.cost`, `.error` and
//! `.criterion.<name>`.
//! A skill eval (`skill_evals = ".."`) carries `copilot_eval.skill_eval` (`<skill folder> id
//! <id>`), and each expectation the test checked (`ctx.expect`), from `N` = 1 in order,
//! `copilot_eval.expectation.N` (`passed: <text> (evidence: <evidence>)`, or `failed: ...`).
//! A trial of an eval run in trials (`--trials N`) is a test case of its own, named
//! `<test path> [trial k/N]`, with `copilot_eval.trial` (`k/N`) and its eval's figures over
//! all its trials as `copilot_eval.trials.*` (see `trial_properties`).
//! A test that checked skill triggers (`ctx.expect_trigger`) carries one
//! `copilot_eval.trigger.<n>` per check (`release-notes expected=invoke invoked=yes held=yes`),
//! and the testsuite of such tests carries each checked skill's suite-wide figures as
//! `copilot_eval.triggers.<skill>.*` (see `suite_trigger_properties`).
//! A test that recorded its provenance carries `copilot_eval.provenance` (`sha256:<digest of
//! its inputs, models and settings> (N inputs; models a, b)`), a new attempt of
//! `--rerun-failed` `copilot_eval.attempt` (`2 (earlier: failed)`), and each testsuite the
//! suite's `copilot_eval.provenance` (`copilot-eval 0.1.0, SDK 1.0.28, runtime 1.0.102, git
//! 0123abcd4567`).
//! Tests that did not pass carry the tail of their output in `<system-out>` / `<system-err>`.
//!
//! Every text is valid XML 1.0 whatever the model, a tool or the test put in it: `quick-junit`
//! removes ANSI escapes and the C0 control characters XML forbids (all but tab, line feed and
//! carriage return), and this writer replaces the other code points XML forbids (U+FFFE, U+FFFF)
//! with U+FFFD. A lone surrogate cannot reach a Rust string (lossy decoding already made it
//! U+FFFD). The JSON results keep the exact text.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::{CostTotals, Outcome, SuiteReport, TestRecord};
use crate::cost::format_amount;

/// Build the JUnit report of `report` (see the module documentation for the layout).
pub fn to_junit(report: &SuiteReport) -> Report {
    let mut junit = Report::new("copilot-eval");
    junit.set_time(Duration::from_millis(report.duration_ms));
    let mut binaries: Vec<&str> = Vec::new();
    for test in &report.tests {
        if !binaries.contains(&test.binary.as_str()) {
            binaries.push(&test.binary);
        }
    }
    for binary in binaries {
        let mut suite = TestSuite::new(xml_text(binary));
        let tests: Vec<&TestRecord> = report.tests.iter().filter(|t| t.binary == binary).collect();
        suite.set_time(Duration::from_millis(
            tests.iter().map(|t| t.duration_ms).sum(),
        ));
        suite.add_property(Property::new("copilot_eval.mode", xml_text(&report.mode)));
        if let Some(provenance) = &report.provenance {
            suite.add_property(Property::new(
                "copilot_eval.provenance",
                xml_text(&provenance.line()),
            ));
        }
        if let Some(asked) = &report.requested_mode {
            suite.add_property(Property::new(
                "copilot_eval.requested_mode",
                xml_text(asked),
            ));
        }
        if let Some(control) = &report.cost_control {
            suite.add_property(Property::new(
                "copilot_eval.cost.currency",
                xml_text(&control.currency),
            ));
            suite.add_property(Property::new(
                "copilot_eval.pricing",
                xml_text(&control.pricing),
            ));
        }
        for (name, value) in suite_trigger_properties(report, &tests) {
            suite.add_property(Property::new(xml_text(&name), value));
        }
        for test in tests {
            let mut case = test_case(test);
            if let Some(trial) = test.trial {
                let summary = report
                    .trial_summaries
                    .iter()
                    .find(|s| s.binary == test.binary && s.name == test.name);
                for (name, value) in trial_properties(trial, summary) {
                    case.add_property(Property::new(name, xml_text(&value)));
                }
            }
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    junit
}

/// One test's test case: its status, name, class name, time, properties and, for a test that
/// did not pass, its output.
fn test_case(test: &TestRecord) -> TestCase {
    // A trial is its own test case, named so that a CI reader keeps the trials apart.
    let name = match test.trial {
        Some(trial) => format!("{} {}", test.name, trial.label()),
        None => test.name.clone(),
    };
    let mut case = TestCase::new(xml_text(&name), status(test));
    case.set_classname(xml_text(&test.binary));
    case.set_time(Duration::from_millis(test.duration_ms));
    let properties = run_properties(test)
        .into_iter()
        .chain(check_properties(test))
        .chain(test.properties.iter().map(|property| {
            (
                format!("property.{}", property.name),
                property.value.to_string(),
            )
        }));
    for (name, value) in properties {
        case.add_property(Property::new(xml_text(&name), xml_text(&value)));
    }
    if let Some(output) = &test.output {
        case.set_system_out(xml_text(&output.stdout));
        case.set_system_err(xml_text(&output.stderr));
    }
    case
}

/// The test case's status: success, a failure (an assertion), an error (of its error kind, with
/// the runs' stop reasons) or skipped (not run).
fn status(test: &TestRecord) -> TestCaseStatus {
    match test.outcome {
        Outcome::Passed => TestCaseStatus::success(),
        Outcome::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let message = test.message.clone().unwrap_or_else(|| "failed".to_owned());
            status
                .set_message(xml_text(first_line(&message)))
                .set_type("assertion")
                .set_description(xml_text(&message));
            status
        }
        Outcome::Error => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            let stops: Vec<&str> = test.runs.iter().map(|r| r.stop_reason.as_str()).collect();
            let what = test.message.clone().unwrap_or_else(|| "error".to_owned());
            let message = if stops.is_empty() {
                what.clone()
            } else {
                format!("stop reason: {}; {}", stops.join(", "), first_line(&what))
            };
            status
                .set_message(xml_text(first_line(&message)))
                .set_type(
                    test.error_kind
                        .map(|k| {
                            serde_json::to_value(k)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        })
                        .unwrap_or_else(|| "error".to_owned()),
                )
                .set_description(xml_text(&what));
            status
        }
        Outcome::NotRun => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(xml_text(test.message.as_deref().unwrap_or("not run")));
            status
        }
    }
}

/// What the test's runs did: `copilot_eval.model`, `.tokens.input`, `.tokens.output` (`unknown`
/// when a run's tokens are), `.tool_calls`, `.stop_reason`, `.runs`, `.evidence_complete`,
/// `.expected_stop` (when a run declared one), the cost's properties and each labelled run's
/// `.run.N.label`.
fn run_properties(test: &TestRecord) -> Vec<(String, String)> {
    let mut models: Vec<&str> = Vec::new();
    for run in &test.runs {
        if let Some(m) = run.model_used.as_deref().or(run.model_requested.as_deref())
            && !models.contains(&m)
        {
            models.push(m);
        }
    }
    // A sum with a run whose tokens are unknown is unknown.
    let tokens = |count: fn(&super::RunTotals) -> u64| {
        if test.runs.iter().any(|r| !r.totals.tokens.is_reported()) {
            "unknown".to_owned()
        } else {
            test.runs
                .iter()
                .map(|r| count(&r.totals))
                .sum::<u64>()
                .to_string()
        }
    };
    let tool_calls: u64 = test.runs.iter().map(|r| r.totals.tool_calls).sum();
    let stops: Vec<&str> = test.runs.iter().map(|r| r.stop_reason.as_str()).collect();
    let mut properties = vec![
        ("copilot_eval.model".to_owned(), models.join(",")),
        (
            "copilot_eval.tokens.input".to_owned(),
            tokens(|t| t.input_tokens),
        ),
        (
            "copilot_eval.tokens.output".to_owned(),
            tokens(|t| t.output_tokens),
        ),
        ("copilot_eval.tool_calls".to_owned(), tool_calls.to_string()),
        ("copilot_eval.stop_reason".to_owned(), stops.join(",")),
        ("copilot_eval.runs".to_owned(), test.runs.len().to_string()),
        (
            "copilot_eval.evidence_complete".to_owned(),
            test.runs.iter().all(|r| r.evidence_complete).to_string(),
        ),
    ];
    if test.runs.iter().any(|r| r.expected_stop.is_some()) {
        let expected: Vec<&str> = test
            .runs
            .iter()
            .map(|r| r.expected_stop.map_or("none", |s| s.as_str()))
            .collect();
        properties.push(("copilot_eval.expected_stop".to_owned(), expected.join(",")));
    }
    if let Some(cost) = &test.cost {
        properties.extend(
            junit_properties(cost)
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value)),
        );
    }
    for (index, run) in test.runs.iter().enumerate() {
        if let Some(label) = &run.label {
            properties.push((
                format!("copilot_eval.run.{}.label", index + 1),
                label.clone(),
            ));
        }
    }
    properties
}

/// What the test checked: each comparison (`copilot_eval.comparison.N.summary`, `.differences`,
/// `.criterion.<name>`), each trigger check (`copilot_eval.trigger.N`), each judge's
/// (`report::judge::junit_properties`), the skill eval entry
/// (`copilot_eval.skill_eval`) and each expectation (`copilot_eval.expectation.N`).
fn check_properties(test: &TestRecord) -> Vec<(String, String)> {
    let yes = |met: bool| if met { "yes" } else { "no" };
    let mut properties = Vec::new();
    for (index, comparison) in test.comparisons.iter().enumerate() {
        let prefix = format!("copilot_eval.comparison.{}", index + 1);
        properties.push((format!("{prefix}.summary"), comparison.summary.clone()));
        properties.push((
            format!("{prefix}.differences"),
            comparison.differences_line(),
        ));
        for criterion in &comparison.criteria {
            properties.push((
                format!("{prefix}.criterion.{}", criterion.name),
                format!(
                    "baseline={} treatment={}",
                    yes(criterion.baseline),
                    yes(criterion.treatment)
                ),
            ));
        }
    }
    for (index, check) in test.triggers.iter().enumerate() {
        properties.push((
            format!("copilot_eval.trigger.{}", index + 1),
            format!(
                "{} expected={} invoked={} held={}",
                check.skill,
                check.expected.as_str(),
                yes(check.invoked),
                yes(check.held())
            ),
        ));
    }
    properties.extend(super::judge::junit_properties(&test.judges));
    properties.extend(
        super::provenance::junit_properties(test)
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value)),
    );
    if let Some(skill_eval) = &test.skill_eval {
        properties.push((
            "copilot_eval.skill_eval".to_owned(),
            format!("{} id {}", skill_eval.skill, skill_eval.id),
        ));
    }
    for (index, expectation) in test.expectations.iter().enumerate() {
        properties.push((
            format!("copilot_eval.expectation.{}", index + 1),
            format!(
                "{}: {} (evidence: {})",
                if expectation.passed {
                    "passed"
                } else {
                    "failed"
                },
                expectation.text,
                expectation.evidence
            ),
        ));
    }
    properties
}

/// The suite's trigger figures of each skill that `tests` (one testsuite's) checked or owed a
/// check of, over the whole suite: `copilot_eval.triggers.<skill>.<figure>` and, with a model
/// matrix, `copilot_eval.triggers.<skill>@<model>.<figure>`, where the figures are
/// `should_trigger`, `triggered`, `should_not_trigger`, `false_triggers`, `not_counted`
/// (counts) and, when their runs are not 0,
/// `trigger_rate`, `false_trigger_rate` (fractions, 4 decimals) and `trigger_rate_interval`,
/// `false_trigger_rate_interval` (`low-high`, the 95% Wilson interval), and when defined
/// `precision` and `recall` (fractions, 4 decimals).
fn suite_trigger_properties(report: &SuiteReport, tests: &[&TestRecord]) -> Vec<(String, String)> {
    let mut properties = Vec::new();
    let checked = |skill: &str| {
        tests.iter().any(|t| {
            t.triggers.iter().any(|c| c.skill == skill)
                || t.trigger_query.as_ref().is_some_and(|q| q.skill == skill)
        })
    };
    for skill in report.skill_triggers.iter().filter(|s| checked(&s.skill)) {
        let mut rows = vec![(skill.skill.clone(), &skill.figures)];
        rows.extend(
            skill
                .models
                .iter()
                .map(|m| (format!("{}@{}", skill.skill, m.model), &m.figures)),
        );
        for (name, f) in rows {
            let p = |figure: &str| format!("copilot_eval.triggers.{name}.{figure}");
            for (figure, count) in [
                ("should_trigger", f.should_trigger),
                ("triggered", f.triggered),
                ("should_not_trigger", f.should_not_trigger),
                ("false_triggers", f.false_triggers),
                ("not_counted", f.not_counted),
            ] {
                properties.push((p(figure), count.to_string()));
            }
            for (figure, rate, interval) in [
                ("trigger_rate", f.trigger_rate, f.trigger_rate_interval),
                (
                    "false_trigger_rate",
                    f.false_trigger_rate,
                    f.false_trigger_rate_interval,
                ),
            ] {
                if let (Some(rate), Some([low, high])) = (rate, interval) {
                    properties.push((p(figure), format!("{rate:.4}")));
                    properties.push((
                        p(&format!("{figure}_interval")),
                        format!("{low:.4}-{high:.4}"),
                    ));
                }
            }
            let (precision, recall) = (f.precision_of_counts(), f.recall_of_counts());
            for (figure, value) in [("precision", precision), ("recall", recall)] {
                if let Some(value) = value {
                    properties.push((p(figure), format!("{value:.4}")));
                }
            }
        }
    }
    properties
}

/// The JUnit properties of one trial: `copilot_eval.trial` (`2/5`) and its eval's figures over
/// every trial, `copilot_eval.trials.<figure>`: `passed`, `failed`, `error`, `not_run`,
/// `pass_rate` and `pass_rate_interval` (fractions, `low-high`; absent when no trial reached a
/// verdict), `pass_at_k.<k>`, `pass_hat_k.<k>`, `flaky`, `verdict`; and per comparison
/// criterion over the trials, `copilot_eval.trials.comparison.<n>.criterion.<name>` =
/// `baseline=1/6 treatment=6/6 difference=+0.8333 p=0.0152 verdict=significant`.
fn trial_properties(
    trial: super::TrialOf,
    summary: Option<&super::TrialSummary>,
) -> Vec<(String, String)> {
    let mut properties = vec![(
        "copilot_eval.trial".to_owned(),
        format!("{}/{}", trial.trial, trial.trials),
    )];
    let Some(s) = summary else {
        return properties;
    };
    let p = |name: &str| format!("copilot_eval.trials.{name}");
    for (name, value) in [
        ("passed", s.passed),
        ("failed", s.failed),
        ("error", s.error),
        ("not_run", s.not_run),
    ] {
        properties.push((p(name), value.to_string()));
    }
    if let (Some(rate), Some([low, high])) = (s.pass_rate, s.pass_rate_interval) {
        properties.push((p("pass_rate"), format!("{rate:.4}")));
        properties.push((p("pass_rate_interval"), format!("{low:.4}-{high:.4}")));
    }
    for at in &s.pass_at_k {
        properties.push((
            p(&format!("pass_at_k.{}", at.k)),
            format!("{:.4}", at.value),
        ));
    }
    for at in &s.pass_hat_k {
        properties.push((
            p(&format!("pass_hat_k.{}", at.k)),
            format!("{:.4}", at.value),
        ));
    }
    properties.push((p("flaky"), s.flaky.to_string()));
    properties.push((p("verdict"), s.verdict.as_str().to_owned()));
    properties.extend(
        s.comparison_criteria
            .iter()
            .map(super::compare_trials::junit_property),
    );
    properties.extend(
        s.judge_criteria
            .iter()
            .map(super::judge_trials::junit_property),
    );
    properties.extend(
        s.pair_criteria
            .iter()
            .map(super::judge_trials::pair_junit_property),
    );
    properties
}

/// The JUnit properties of one test's cost, as `(name, value)` pairs: `copilot_eval.model_calls`,
/// `copilot_eval.tokens.cache_read`, `copilot_eval.tokens.cache_write`,
/// `copilot_eval.cost.reported`, `copilot_eval.premium_requests` and
/// `copilot_eval.cost.estimated` (numbers as text; an unknown value is `unknown`).
pub fn junit_properties(cost: &CostTotals) -> Vec<(&'static str, String)> {
    let known = |value: Option<f64>| value.map(format_amount).unwrap_or_else(|| "unknown".into());
    let tokens = |count: u64| {
        if cost.usage_unknown_runs > 0 {
            "unknown".to_owned()
        } else {
            count.to_string()
        }
    };
    vec![
        ("copilot_eval.model_calls", cost.model_calls.to_string()),
        (
            "copilot_eval.tokens.cache_read",
            tokens(cost.cache_read_tokens),
        ),
        (
            "copilot_eval.tokens.cache_write",
            tokens(cost.cache_write_tokens),
        ),
        ("copilot_eval.cost.reported", known(cost.reported_cost)),
        (
            "copilot_eval.premium_requests",
            known(cost.premium_requests),
        ),
        ("copilot_eval.cost.estimated", known(cost.estimated_cost)),
    ]
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// `text` with the code points XML 1.0 forbids replaced by U+FFFD, except the C0 control
/// characters, which `quick-junit` removes (after removing the ANSI escapes they start).
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_xml_char(c) || c.is_ascii_control() {
                c
            } else {
                char::REPLACEMENT_CHARACTER
            }
        })
        .collect()
}

/// XML 1.0's `Char` production: tab, line feed, carriage return, U+0020..U+D7FF,
/// U+E000..U+FFFD and U+10000..U+10FFFF.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}
