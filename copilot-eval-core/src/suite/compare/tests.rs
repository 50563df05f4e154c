//! `compare`: verdicts with Fisher's exact test, evals on one side only, the suite's changes
//! named apart from the inputs, files without provenance, the history, the outputs.

use std::collections::BTreeMap;

use super::*;
use crate::report::provenance::{InputFile, InputKind};
use crate::report::tests::{run, test};
use crate::report::{
    EvalProvenance, Outcome, RuntimeInfo, SCHEMA_VERSION, SuiteTotals, TestRecord, ToolInfo,
    TrialOf,
};
use crate::result::StopReason;
use crate::stats;

const BIN: &str = "pkg::evals";

/// `passed` passes out of `trials` records of eval `name` (trials when `trials` > 1), each with
/// `inputs` (path, hash) as its provenance when given.
fn eval(name: &str, trials: u32, passed: u32, inputs: Option<&[(&str, &str)]>) -> Vec<TestRecord> {
    (1..=trials)
        .map(|k| {
            let outcome = if k <= passed {
                Outcome::Passed
            } else {
                Outcome::Failed
            };
            let mut record = test(name, BIN, outcome, vec![run(StopReason::Completed, 100)]);
            record.trial = (trials > 1).then_some(TrialOf { trial: k, trials });
            record.provenance = inputs.map(|inputs| EvalProvenance {
                inputs: inputs
                    .iter()
                    .map(|(path, hash)| InputFile {
                        path: (*path).to_owned(),
                        kind: InputKind::Skill,
                        sha256: (*hash).to_owned(),
                    })
                    .collect(),
                models: vec!["default".into()],
                ..EvalProvenance::default()
            });
            record
        })
        .collect()
}

fn suite(runtime: &str, tests: Vec<Vec<TestRecord>>, provenance: bool) -> SuiteReport {
    let tests: Vec<TestRecord> = tests.into_iter().flatten().collect();
    SuiteReport {
        requested_mode: None,
        schema_version: SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "copilot-eval".into(),
            version: "0.1.0".into(),
        },
        runtime: RuntimeInfo {
            version: Some(runtime.into()),
            path: None,
            error: None,
        },
        mode: "replay".into(),
        started_at: "2026-01-31T09:15:02Z".into(),
        duration_ms: 1,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
        skill_lift: None,
        discrimination: None,
        judge_labels: None,
        noise_floor: None,
        baseline: None,
        provenance: provenance.then(|| SuiteProvenance {
            copilot_eval_version: "0.1.0".into(),
            sdk_version: "1.0.28".into(),
            runtime_version: Some(runtime.into()),
            git_commit: Some("0123456789abcdef".into()),
            git_dirty: Some(false),
            git_error: None,
            settings: BTreeMap::from([("mode".to_owned(), "replay".to_owned())]),
        }),
        tests,
    }
}

fn two(base: SuiteReport, new: SuiteReport) -> CompareReport {
    compare(&[("BASE.json".into(), base), ("NEW.json".into(), new)])
}

fn find<'a>(report: &'a CompareReport, name: &str) -> &'a EvalComparison {
    report
        .evals
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:#?}", report.evals))
}

#[test]
fn one_of_one_against_three_of_five_is_underpowered_with_the_trials_it_needs() {
    let report = two(
        suite(
            "1.0.102",
            vec![eval("a", 1, 1, None), eval("b", 1, 1, None)],
            true,
        ),
        suite(
            "1.0.102",
            vec![eval("a", 5, 3, None), eval("b", 5, 5, None)],
            true,
        ),
    );
    let a = find(&report, "a");
    assert_eq!(a.verdict, Verdict::Underpowered);
    assert_eq!(a.p_value, Some(1.0), "Fisher's exact p of [[1, 0], [3, 2]]");
    assert_eq!(a.p_value, Some(stats::fisher_exact(1, 0, 3, 2)));
    let needed = stats::trials_needed(1.0, 0.6);
    assert!(needed > 5, "{needed}");
    assert_eq!(a.trials_needed, Some(needed));
    assert_eq!(a.change.map(|c| (c * 100.0).round()), Some(-40.0));
    assert_eq!(find(&report, "b").verdict, Verdict::Unchanged);
    assert!(!report.has_regression());
    assert_eq!(
        report.evals[0].name, "a",
        "the underpowered eval before the unchanged one"
    );
    let text = render::terminal(&report, "USD");
    assert!(
        text.contains(&format!(
            "underpowered: the observed difference (100% -> 60%) needs {needed} trials per side to reach p < 0.05"
        )),
        "{text}"
    );
    assert!(text.contains("1/1 (100%)"), "{text}");
    assert!(text.contains("3/5 (60%)"), "{text}");
    assert!(text.contains("  1.000  "), "{text}");
    assert!(render::warnings(&report).is_empty());
}

#[test]
fn a_significant_regression_is_named_first_in_the_table_the_summary_and_a_warning() {
    let report = two(
        suite(
            "1.0.102",
            vec![eval("steady", 5, 5, None), eval("broke", 5, 5, None)],
            true,
        ),
        suite(
            "1.0.102",
            vec![eval("steady", 5, 5, None), eval("broke", 5, 0, None)],
            true,
        ),
    );
    let broke = find(&report, "broke");
    assert_eq!(broke.verdict, Verdict::Regressed);
    assert!(broke.p_value.unwrap() < 0.05, "{broke:#?}");
    assert_eq!(report.evals[0].name, "broke", "regressions first");
    assert!(report.has_regression());
    assert_eq!(report.totals.regressed, 1);
    let warnings = render::warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("::warning title=copilot-eval%3A regressed broke::pkg::evals broke: 5/5 (100%25) -> 0/5 (0%25), p = 0.008"),
        "{}",
        warnings[0]
    );
    let summary = render::job_summary(&report, "USD");
    assert!(
        summary.contains("| regressed | `pkg::evals` broke |"),
        "{summary}"
    );
    assert!(
        summary.starts_with("## copilot-eval compare\n\n❌"),
        "{summary}"
    );
    // The mirror image is an improvement, not a failure.
    let improved = two(
        suite("1.0.102", vec![eval("broke", 5, 0, None)], true),
        suite("1.0.102", vec![eval("broke", 5, 5, None)], true),
    );
    assert_eq!(improved.evals[0].verdict, Verdict::Improved);
    assert!(!improved.has_regression());
}

#[test]
fn evals_selected_differently_are_listed_on_their_side_never_dropped() {
    let report = two(
        suite(
            "1.0.102",
            vec![eval("kept", 1, 1, None), eval("gone", 1, 0, None)],
            true,
        ),
        suite(
            "1.0.102",
            vec![eval("kept", 1, 1, None), eval("added", 1, 1, None)],
            true,
        ),
    );
    assert_eq!(report.totals.evals, 3);
    assert_eq!(find(&report, "gone").verdict, Verdict::Removed);
    assert!(find(&report, "gone").after.is_none());
    assert_eq!(find(&report, "added").verdict, Verdict::New);
    assert!(find(&report, "added").before.is_none());
    assert_eq!(find(&report, "kept").verdict, Verdict::Unchanged);
    assert!(
        report.summary.contains("1 new, 1 removed"),
        "{}",
        report.summary
    );
}

#[test]
fn a_side_with_only_errors_has_no_verdict() {
    let mut errored = eval("a", 1, 1, None);
    errored[0].outcome = Outcome::Error;
    let report = two(
        suite("1.0.102", vec![eval("a", 1, 1, None)], true),
        suite("1.0.102", vec![errored], true),
    );
    assert_eq!(report.evals[0].verdict, Verdict::NoVerdict);
    assert_eq!(report.evals[0].p_value, None);
    assert!(!report.has_regression());
}

#[test]
fn a_runtime_edit_is_named_as_a_runtime_change_not_an_input_change() {
    let base = suite(
        "1.0.102",
        vec![eval("a", 1, 1, Some(&[("skills/x/SKILL.md", "11")]))],
        true,
    );
    let mut new = base.clone();
    new.runtime.version = Some("1.0.103".into());
    let report = two(base.clone(), new);
    let runtime: Vec<&SuiteChange> = report
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Runtime)
        .collect();
    assert_eq!(runtime.len(), 1, "{:#?}", report.changes);
    assert_eq!(runtime[0].after.as_deref(), Some("1.0.103"));
    assert!(report.evals[0].inputs.is_empty());
    let text = render::terminal(&report, "USD");
    assert!(
        text.contains("  !! the Copilot runtime changed: 1.0.102 -> 1.0.103 (a runtime change, not a change of the evals' inputs)\n"),
        "{text}"
    );
    assert!(
        report.summary.contains("the suite changed too (runtime)"),
        "{}",
        report.summary
    );
    // The provenance's copy alone edited is named too.
    let mut new = base.clone();
    new.provenance.as_mut().unwrap().runtime_version = Some("1.0.104".into());
    let report = two(base.clone(), new);
    assert!(
        report
            .changes
            .iter()
            .any(|c| c.kind == ChangeKind::Runtime && c.after.as_deref() == Some("1.0.104"))
    );
    // And an SDK change.
    let mut new = base.clone();
    new.provenance.as_mut().unwrap().sdk_version = "1.0.29".into();
    assert!(
        two(base, new)
            .changes
            .iter()
            .any(|c| c.kind == ChangeKind::Sdk)
    );
}

#[test]
fn an_input_whose_hash_differs_is_named_for_each_eval_that_used_it() {
    let skill = "skills/release-notes/SKILL.md";
    let base = suite(
        "1.0.102",
        vec![
            eval(
                "a",
                1,
                1,
                Some(&[(skill, "11"), ("tests/cassettes/a.yaml", "aa")]),
            ),
            eval("b", 1, 1, Some(&[(skill, "11")])),
            eval("c", 1, 1, Some(&[("tests/cassettes/c.yaml", "cc")])),
        ],
        true,
    );
    let new = suite(
        "1.0.102",
        vec![
            eval(
                "a",
                1,
                1,
                Some(&[(skill, "22"), ("tests/cassettes/a.yaml", "aa")]),
            ),
            eval("b", 1, 1, Some(&[(skill, "22"), ("skills/extra.md", "ee")])),
            eval("c", 1, 1, Some(&[("tests/cassettes/c.yaml", "cc")])),
        ],
        true,
    );
    let report = two(base, new);
    let changed = |name: &str| {
        find(&report, name)
            .inputs
            .iter()
            .map(|i| format!("{} {}", i.path, i.change.as_str()))
            .collect::<Vec<_>>()
    };
    assert_eq!(changed("a"), [format!("{skill} changed")]);
    assert_eq!(
        changed("b"),
        [
            "skills/extra.md added".to_owned(),
            format!("{skill} changed")
        ]
    );
    assert!(changed("c").is_empty());
    assert!(find(&report, "c").inputs_known);
    let text = render::terminal(&report, "USD");
    assert_eq!(
        text.matches(&format!("      {skill} changed (skill)\n"))
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn a_file_without_provenance_reads_as_unknown_and_still_compares() {
    let base = suite("1.0.102", vec![eval("a", 1, 1, None)], false);
    let new = suite("1.0.102", vec![eval("a", 1, 1, Some(&[("x", "1")]))], true);
    let report = two(base, new);
    assert!(
        report
            .changes
            .iter()
            .any(|c| c.kind == ChangeKind::ProvenanceUnknown
                && c.detail.starts_with("BASE.json has no provenance")),
        "{:#?}",
        report.changes
    );
    assert!(!report.evals[0].inputs_known);
    assert!(report.runs[0].provenance.is_none());
    let text = render::terminal(&report, "USD");
    assert!(text.contains("provenance unknown"), "{text}");
    assert!(text.contains("inputs unknown"), "{text}");
}

#[test]
fn older_results_files_of_versions_1_and_2_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let report = suite("1.0.102", vec![eval("a", 1, 1, None)], false);
    let mut value = serde_json::to_value(&report).unwrap();
    assert!(value.get("provenance").is_none());
    let two_path = dir.path().join("v2.json");
    std::fs::write(&two_path, serde_json::to_string(&value).unwrap()).unwrap();
    value["schema_version"] = "1".into();
    let one_path = dir.path().join("v1.json");
    std::fs::write(&one_path, serde_json::to_string(&value).unwrap()).unwrap();
    let runs = read_results(&[one_path, two_path]).unwrap();
    let report = compare(&runs);
    assert_eq!(report.evals[0].verdict, Verdict::Unchanged);
    assert_eq!(
        report
            .changes
            .iter()
            .filter(|c| c.kind == ChangeKind::ProvenanceUnknown)
            .count(),
        2
    );
    let missing = dir.path().join("missing.json");
    let error = read_results(std::slice::from_ref(&missing))
        .unwrap_err()
        .to_string();
    assert!(error.contains(&missing.display().to_string()), "{error}");
}

#[test]
fn model_and_settings_changes_are_named_per_eval_and_for_the_suite() {
    let base = suite(
        "1.0.102",
        vec![eval("a", 1, 1, None), eval("b", 1, 1, None)],
        true,
    );
    let mut new = base.clone();
    new.tests[0].runs[0].configuration.model = Some("gpt-5".into());
    new.tests[1].runs[0].configuration.timeout_s = 60.0;
    new.tests[1].runs[0].working_directory = "/elsewhere".into();
    new.tests[1].runs[0].configuration.working_directory = Some("/elsewhere".into());
    new.provenance
        .as_mut()
        .unwrap()
        .settings
        .insert("trials".into(), "5".into());
    let report = two(base, new);
    assert_eq!(
        find(&report, "a").models,
        Some([vec!["default".to_owned()], vec!["gpt-5".to_owned()]])
    );
    assert_eq!(find(&report, "b").settings, ["timeout_s: 300.0 -> 60.0"]);
    let details: Vec<&str> = report.changes.iter().map(|c| c.detail.as_str()).collect();
    assert!(
        details.contains(&"the model changed: default -> gpt-5 (1 eval(s): a)"),
        "{details:#?}"
    );
    assert!(
        details.contains(&"the suite's trials changed: not given -> 5"),
        "{details:#?}"
    );
    assert!(
        details
            .iter()
            .any(|d| d.starts_with("the run settings changed for 1 eval(s): b (timeout_s")),
        "{details:#?}"
    );
}

#[test]
fn cost_per_pass_is_unknown_when_the_cost_is_never_zero() {
    let mut base = suite("1.0.102", vec![eval("a", 2, 1, None)], true);
    for test in &mut base.tests {
        let mut cost = crate::report::CostTotals::zero();
        cost.estimated_cost = Some(0.002);
        test.cost = Some(cost);
    }
    let mut new = base.clone();
    new.tests[0].cost.as_mut().unwrap().estimated_cost = None;
    let report = two(base, new);
    let a = find(&report, "a");
    assert_eq!(a.before.as_ref().unwrap().cost_per_pass, Some(0.004));
    assert_eq!(a.after.as_ref().unwrap().cost_per_pass, None);
    assert_eq!(render::cost_text(a, "USD"), "0.004 USD -> unknown");
}

#[test]
fn three_files_show_each_evals_history_flips_and_the_most_failing() {
    let runs: Vec<(String, SuiteReport)> = [(1, 1), (1, 0), (5, 5)]
        .iter()
        .enumerate()
        .map(|(i, &(trials, passed))| {
            (
                format!("run{}.json", i + 1),
                suite(
                    "1.0.102",
                    vec![
                        eval("flaky", trials, passed, None),
                        eval("steady", 1, 1, None),
                    ],
                    true,
                ),
            )
        })
        .collect();
    let report = compare(&runs);
    let history = report.history.as_ref().expect("a history");
    let flaky = history.evals.iter().find(|e| e.name == "flaky").unwrap();
    assert_eq!(
        flaky
            .flips
            .iter()
            .map(|f| (f.from, f.to, f.before, f.after))
            .collect::<Vec<_>>(),
        [
            (1, 2, Outcome::Passed, Outcome::Failed),
            (2, 3, Outcome::Failed, Outcome::Passed)
        ]
    );
    assert_eq!(history::sparkline(&flaky.runs), "█▁█");
    assert_eq!(history.most_failing.len(), 1);
    assert_eq!(history.most_failing[0].name, "flaky");
    assert_eq!(history.most_failing[0].failing_runs, 1);
    // The last two files are compared eval by eval: 0/1 -> 5/5.
    assert_eq!(find(&report, "flaky").verdict, Verdict::Underpowered);
    let text = render::terminal(&report, "USD");
    assert!(
        text.contains("    pkg::evals flaky: 1/1 0/1 5/5  █▁█  2 flip(s) (1->2 passed->failed, 2->3 failed->passed)\n"),
        "{text}"
    );
    assert!(
        text.contains("  failing most often: flaky (1 of 3 files)\n"),
        "{text}"
    );
    let page = html::to_html(&report, "USD").unwrap();
    assert!(
        page.contains(r#"<tr class="history-eval" data-name="flaky">"#),
        "{page}"
    );
    assert!(page.contains(r#"class="o-failed"/>"#), "{page}");
}

#[test]
fn the_html_page_escapes_and_orders_the_evals() {
    let report = two(
        suite(
            "1.0.102",
            vec![eval("<b>x</b>", 5, 5, None), eval("ok", 1, 1, None)],
            true,
        ),
        suite(
            "1.0.103",
            vec![eval("<b>x</b>", 5, 0, None), eval("ok", 1, 1, None)],
            true,
        ),
    );
    let page = html::to_html(&report, "USD").unwrap();
    assert!(!page.contains("<b>x</b>"), "names are escaped");
    assert!(page.contains("&lt;b&gt;x&lt;&#x2f;b&gt;"), "{page}");
    let regressed = page.find(r#"data-verdict="regressed""#).unwrap();
    let unchanged = page.find(r#"data-verdict="unchanged""#).unwrap();
    assert!(regressed < unchanged);
    assert!(
        page.contains(
            r#"<p class="change loud">the Copilot runtime changed: 1.0.102 -&gt; 1.0.103"#
        ),
        "{page}"
    );
}

#[test]
fn the_committed_compare_schema_is_the_generated_one() {
    crate::report::tests::check_committed_schema(
        "compare.schema.json",
        &json_schema(),
        "cargo copilot-eval compare --schema > docs/schema/compare.schema.json",
    );
}
