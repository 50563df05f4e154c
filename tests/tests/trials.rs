//! Trials (`cargo copilot-eval --trials N`): each trial is its own test process and attempt,
//! reported on its own, and each eval gets its figures over its trials. The scripted example's
//! `names_the_capital_in_most_trials` answers wrongly in trials 2 and 4 of 5, so every figure
//! is known in advance: 3 of 5 passed, pass rate 0.6, Wilson 95% interval 0.2307-0.8824,
//! pass@1 0.6, pass@5 1 (1 - C(2,5)/C(5,5), no 5 trials without a pass), pass^1 0.6, pass^5 0,
//! pass@2 0.9 (1 - C(2,2)/C(5,2) = 1 - 1/10), pass^2 0.3 (C(3,2)/C(5,2) = 3/10), pass@3 1,
//! pass^3 0.1 (C(3,3)/C(5,3) = 1/10).
//! A comparison over trials (`compares_the_house_style_over_trials`) gives each criterion's
//! passes on both sides, Fisher's exact test and its verdict.

mod support;

use copilot_eval_core::report::{Outcome, TrialComparisonVerdict, TrialOf};
use copilot_eval_e2e::runtime_for;
use support::{FIXTURE, SuiteRun, workspace_root};

const FLAKY: &str = "names_the_capital_in_most_trials";

fn flaky_trials(extra: &[&str]) -> SuiteRun {
    let args = [
        &[
            "-p", "scripted", "--exact", FLAKY, "--trials", "5", "-j", "2",
        ][..],
        extra,
    ]
    .concat();
    support::copilot_eval(&workspace_root(), &args, &[])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

#[test]
fn a_flaky_eval_over_five_trials_gives_its_pass_rate_interval_and_pass_at_k() {
    if runtime_for("a_flaky_eval_over_five_trials_gives_its_pass_rate_interval_and_pass_at_k")
        .is_none()
    {
        return;
    }
    let run = flaky_trials(&[]);
    // Every trial must pass without a threshold: 2 failed trials fail the suite.
    assert_eq!(run.status, 1, "{}", run.stderr);

    // One JSON entry per trial, in trial order, each its own attempt.
    let trials: Vec<(Option<TrialOf>, Outcome)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial, t.outcome))
        .collect();
    let expected: Vec<(Option<TrialOf>, Outcome)> = (1..=5)
        .map(|trial| {
            let outcome = if trial % 2 == 0 {
                Outcome::Failed
            } else {
                Outcome::Passed
            };
            (Some(TrialOf { trial, trials: 5 }), outcome)
        })
        .collect();
    assert_eq!(trials, expected);
    assert!(
        run.report
            .tests
            .iter()
            .all(|t| t.name == FLAKY && t.runs.len() == 1)
    );
    let sessions: std::collections::BTreeSet<_> = run
        .report
        .tests
        .iter()
        .map(|t| t.runs[0].session_id.clone())
        .collect();
    assert_eq!(sessions.len(), 5, "five sessions, one per trial");

    // The eval's figures.
    let [summary] = &run.report.trial_summaries[..] else {
        panic!("one summary: {:#?}", run.report.trial_summaries)
    };
    assert_eq!(
        (
            summary.name.as_str(),
            summary.trials,
            summary.passed,
            summary.failed
        ),
        (FLAKY, 5, 3, 2)
    );
    assert_eq!((summary.error, summary.not_run), (0, 0));
    assert!(close(summary.pass_rate.unwrap(), 0.6));
    let [low, high] = summary.pass_rate_interval.unwrap();
    assert!(close(low, 0.2307) && close(high, 0.8824), "{low} {high}");
    let at = |values: &[copilot_eval_core::report::trials::AtK]| -> Vec<(u32, f64)> {
        values.iter().map(|a| (a.k, a.value)).collect()
    };
    assert_eq!(at(&summary.pass_at_k), vec![(1, 0.6), (5, 1.0)]);
    assert_eq!(at(&summary.pass_hat_k), vec![(1, 0.6), (5, 0.0)]);
    assert!(summary.flaky);
    assert_eq!(summary.min_pass_rate, None);
    assert_eq!(summary.verdict, Outcome::Failed);
    assert_eq!(summary.failed_trials, vec![2, 4]);

    // JUnit: one test case per trial, named apart, with the eval's figures.
    assert_eq!(run.junit.tests, 5, "{}", run.junit_xml);
    for trial in 1..=5 {
        let name = format!("{FLAKY} [trial {trial}/5]");
        let kind = if trial % 2 == 0 { "failure" } else { "success" };
        assert_eq!(run.junit_kind(&name), kind, "{name}");
        assert_eq!(
            run.junit_property(&name, "copilot_eval.trial"),
            format!("{trial}/5")
        );
        assert_eq!(
            run.junit_property(&name, "copilot_eval.trials.pass_rate"),
            "0.6000"
        );
        assert_eq!(
            run.junit_property(&name, "copilot_eval.trials.pass_rate_interval"),
            "0.2307-0.8824"
        );
        assert_eq!(
            run.junit_property(&name, "copilot_eval.trials.flaky"),
            "true"
        );
        assert_eq!(
            run.junit_property(&name, "copilot_eval.trials.verdict"),
            "failed"
        );
    }

    // The terminal's per-eval line.
    assert!(
        run.stderr.contains(&format!(
            "{FLAKY}: 3/5 passed (60%, 95% CI 23%-88%), flaky, pass@1 0.60, pass@5 1.00, pass^1 0.60, pass^5 0.00 -> failed (every trial must pass); failed trials: 2, 4"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("FAILED scripted::evals {FLAKY} [trial 2/5]")),
        "{}",
        run.stderr
    );
    // Each trial's line, printed as it ends, names its trial; trials of one eval run one
    // after another, so in trial order.
    let finished: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(&format!("s] scripted::evals {FLAKY}")))
        .collect();
    let expected: Vec<String> = (1..=5)
        .map(|k| {
            let status = if k % 2 == 0 { "FAIL" } else { "PASS" };
            format!("{status} s] scripted::evals {FLAKY} [trial {k}/5]")
        })
        .collect();
    let seen: Vec<String> = finished
        .iter()
        .map(|l| {
            let (status, rest) = l.trim_start().split_once(" [").unwrap();
            format!("{status} {}", &rest[rest.find("s] ").unwrap()..])
        })
        .collect();
    assert_eq!(seen, expected, "{}", run.stderr);
    // The summary leads with the decision: the headline, then the eval's verdict.
    assert!(
        run.stderr.contains(&format!(
            "     Verdict 1 eval, 5 trials, 1 eval failed\n     FAILED 3/5 (60%, 95% CI 23%-88%) scripted::evals {FLAKY}\n     Summary ["
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn a_minimum_pass_rate_makes_the_verdict_and_the_exit_status() {
    if runtime_for("a_minimum_pass_rate_makes_the_verdict_and_the_exit_status").is_none() {
        return;
    }
    let enough = flaky_trials(&["--min-pass-rate", "60", "--pass-k", "2,3"]);
    assert_eq!(enough.status, 0, "{}", enough.stderr);
    let summary = &enough.report.trial_summaries[0];
    assert_eq!(summary.verdict, Outcome::Passed);
    assert_eq!(summary.min_pass_rate, Some(0.6));
    let at = |values: &[copilot_eval_core::report::trials::AtK]| -> Vec<(u32, f64)> {
        values.iter().map(|a| (a.k, a.value)).collect()
    };
    let (pass_at, pass_hat) = (at(&summary.pass_at_k), at(&summary.pass_hat_k));
    assert_eq!(pass_at.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2, 3]);
    assert!(
        close(pass_at[0].1, 0.9) && close(pass_at[1].1, 1.0),
        "{pass_at:?}"
    );
    assert!(
        close(pass_hat[0].1, 0.3) && close(pass_hat[1].1, 0.1),
        "{pass_hat:?}"
    );
    assert!(
        enough
            .stderr
            .contains("-> passed (needs 60%); failed trials: 2, 4"),
        "{}",
        enough.stderr
    );
    // The failed trials are still failed trials in the report: only the verdict is by rate.
    assert_eq!(enough.report.totals.failed, 2);

    let short = flaky_trials(&["--min-pass-rate", "80"]);
    assert_eq!(short.status, 1, "{}", short.stderr);
    assert_eq!(short.report.trial_summaries[0].verdict, Outcome::Failed);
    assert!(
        short.stderr.contains("-> failed (needs 80%)"),
        "{}",
        short.stderr
    );
}

#[test]
fn an_infrastructure_error_in_trial_two_stops_that_evals_further_trials() {
    if runtime_for("an_infrastructure_error_in_trial_two_stops_that_evals_further_trials").is_none()
    {
        return;
    }
    let args = [
        "-p",
        FIXTURE,
        "--exact",
        "crashes_in_its_second_trial",
        "passes",
        "--trials",
        "5",
        "-j",
        "1",
        "--no-fail-fast",
    ];
    let run = support::copilot_eval(&workspace_root(), &args, &[]);
    assert_eq!(run.status, 3, "an eval's verdict is error: {}", run.stderr);
    let of = |name: &str| -> Vec<Outcome> {
        run.report
            .tests
            .iter()
            .filter(|t| t.name == name)
            .map(|t| t.outcome)
            .collect()
    };
    assert_eq!(
        of("crashes_in_its_second_trial"),
        vec![
            Outcome::Passed,
            Outcome::Error,
            Outcome::NotRun,
            Outcome::NotRun,
            Outcome::NotRun
        ]
    );
    for test in run
        .report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::NotRun)
    {
        assert_eq!(
            test.message.as_deref(),
            Some(
                "not run: trial 2 of 5 ended in an infrastructure error (crashed); the eval's further trials were not run"
            ),
            "{:?}",
            test.trial
        );
        assert!(test.runs.is_empty());
    }
    // The other eval's trials all ran.
    assert_eq!(of("passes"), vec![Outcome::Passed; 5]);
    let verdicts: Vec<(&str, Outcome, u32, u32)> = run
        .report
        .trial_summaries
        .iter()
        .map(|s| (s.name.as_str(), s.verdict, s.error, s.not_run))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("crashes_in_its_second_trial", Outcome::Error, 1, 3),
            ("passes", Outcome::Passed, 0, 0)
        ]
    );
    assert_eq!(
        run.junit_kind("crashes_in_its_second_trial [trial 3/5]"),
        "skipped"
    );
}

/// With `-j 3` the rule is the same, whatever the timing: an eval's trials run one after
/// another, so when trial 2 crashes trials 3 to 5 have not started, and none runs (before,
/// trials 1 to 3 started together, and trial 3 ran and passed beside the crashing trial 2).
#[test]
fn with_parallel_jobs_no_trial_after_an_infrastructure_error_runs() {
    if runtime_for("with_parallel_jobs_no_trial_after_an_infrastructure_error_runs").is_none() {
        return;
    }
    let args = [
        "-p",
        FIXTURE,
        "--exact",
        "crashes_in_its_second_trial",
        "--trials",
        "5",
        "-j",
        "3",
    ];
    let run = support::copilot_eval(&workspace_root(), &args, &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let got: Vec<(u32, Outcome)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial.unwrap().trial, t.outcome))
        .collect();
    assert_eq!(
        got,
        [
            (1, Outcome::Passed),
            (2, Outcome::Error),
            (3, Outcome::NotRun),
            (4, Outcome::NotRun),
            (5, Outcome::NotRun)
        ],
        "{}",
        run.stderr
    );
    for test in &run.report.tests[2..] {
        assert!(test.runs.is_empty() && test.exit.is_none(), "{test:#?}");
        assert_eq!(
            test.message.as_deref(),
            Some(
                "not run: trial 2 of 5 ended in an infrastructure error (crashed); the eval's further trials were not run"
            )
        );
    }
}

/// `--grading DIR` with trials: each trial of a skill eval gets its own `grading.json` under
/// `trial-K/`, naming its trial (docs/skills-and-agents.md).
#[test]
fn grading_with_trials_writes_one_grading_json_per_trial() {
    if runtime_for("grading_with_trials_writes_one_grading_json_per_trial").is_none() {
        return;
    }
    const ENTRY: &str = "changelog_skill::eval_3_in_one_sentence_what_is";
    let grading = tempfile::tempdir().unwrap();
    let folder = grading.path().join("grading");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--exact",
            ENTRY,
            "--trials",
            "2",
            "--grading",
            folder.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 2);
    for trial in 1..=2u64 {
        let path = folder
            .join(ENTRY.replace("::", "__"))
            .join(format!("trial-{trial}"))
            .join("grading.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), run.stderr));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["eval"]["name"], ENTRY);
        assert_eq!(value["eval"]["trial"], trial);
        assert_eq!(value["eval"]["trials"], 2);
        let record = &run.report.tests[trial as usize - 1];
        assert_eq!(
            value["expectations"],
            serde_json::to_value(&record.expectations).unwrap()
        );
        assert!(!record.expectations.is_empty());
    }
    assert!(
        run.stderr.contains("wrote 2 grading.json under"),
        "{}",
        run.stderr
    );
}

/// A comparison over trials: the scripted example's `compares_the_house_style_over_trials`
/// meets the tag-line criterion on the baseline in trial 1 only and on the treatment in every
/// trial, and completes on both sides in every trial. By hand, the tag line's table
/// [[1, 5], [6, 0]] has margins 6/6 (rows) and 7/5 (columns), n = 12; x baseline passes (1 to 6)
/// weigh C(6, x) · C(6, 7 - x) = 6, 90, 300, 300, 90, 6 out of C(12, 7) = 792; the observed
/// x = 1 and the mirror x = 6 are the tables at most as probable: p = 12/792 = 0.0152,
/// significant. `completed` is 6/6 on both sides: p = 1, and 6 trials could have shown a
/// difference (2 / C(12, 6) = 0.0022 at best): no difference.
#[test]
fn a_comparison_over_six_trials_gives_each_criterions_fisher_test() {
    if runtime_for("a_comparison_over_six_trials_gives_each_criterions_fisher_test").is_none() {
        return;
    }
    const EVAL: &str = "compares_the_house_style_over_trials";
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p", "scripted", "--exact", EVAL, "--trials", "6", "-j", "2",
        ],
        &[],
    );
    // The test asserts only that both sides completed: every trial passes.
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 6);
    assert!(
        run.report
            .tests
            .iter()
            .all(|t| t.outcome == Outcome::Passed && t.comparisons.len() == 1),
        "{:#?}",
        run.report.tests
    );
    let [summary] = &run.report.trial_summaries[..] else {
        panic!("one summary: {:#?}", run.report.trial_summaries)
    };
    let rows: Vec<(u32, &str, u32, u32, u32, TrialComparisonVerdict)> = summary
        .comparison_criteria
        .iter()
        .map(|c| {
            (
                c.comparison,
                c.criterion.as_str(),
                c.trials,
                c.baseline_passed,
                c.treatment_passed,
                c.verdict,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                1,
                "completed",
                6,
                6,
                6,
                TrialComparisonVerdict::NoDifference
            ),
            (
                1,
                "starts with the house tag line",
                6,
                1,
                6,
                TrialComparisonVerdict::Significant
            ),
        ]
    );
    let (completed, tag_line) = (
        &summary.comparison_criteria[0],
        &summary.comparison_criteria[1],
    );
    assert!(close(completed.p_value, 1.0));
    assert!(
        close(tag_line.p_value, 12.0 / 792.0),
        "{}",
        tag_line.p_value
    );
    assert!(close(tag_line.baseline_rate, 1.0 / 6.0));
    assert!(close(tag_line.treatment_rate, 1.0));
    assert!(close(tag_line.difference, 5.0 / 6.0));
    assert!(close(tag_line.best_possible_p_value, 2.0 / 924.0));

    // The terminal: one line per criterion under the eval's trials line.
    let lines = [
        format!(
            "    scripted::evals {EVAL}: 6/6 passed (100%, 95% CI 61%-100%), pass@1 1.00, pass@6 1.00, pass^1 1.00, pass^6 1.00 -> passed (every trial must pass)\n"
        ),
        "      comparison 1, completed: baseline 6/6 (100%), treatment 6/6 (100%), +0 points, Fisher p = 1.0000 -> no difference".to_owned(),
        "      comparison 1, starts with the house tag line: baseline 1/6 (17%), treatment 6/6 (100%), +83 points, Fisher p = 0.0152 -> significant".to_owned(),
    ];
    let at = |needle: &str| {
        run.stderr
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {}", run.stderr))
    };
    assert!(at(&lines[0]) < at(&lines[1]) && at(&lines[1]) < at(&lines[2]));

    // JUnit: every trial's test case carries the eval's criteria over the trials.
    for trial in 1..=6 {
        let name = format!("{EVAL} [trial {trial}/6]");
        assert_eq!(
            run.junit_property(
                &name,
                "copilot_eval.trials.comparison.1.criterion.starts with the house tag line"
            ),
            "baseline=1/6 treatment=6/6 difference=+0.8333 p=0.0152 verdict=significant"
        );
        assert_eq!(
            run.junit_property(
                &name,
                "copilot_eval.trials.comparison.1.criterion.completed"
            ),
            "baseline=6/6 treatment=6/6 difference=+0.0000 p=1.0000 verdict=no_difference"
        );
    }
}

/// The fixture eval whose attribute asks for 3 trials and a 60% pass rate
/// (`trials = 3, min_pass_rate = 0.6`); its scripted model answers wrongly in trial 2.
const ASKED: &str = "answers_rightly_in_two_of_three_trials";

fn asked_trials(extra: &[&str]) -> SuiteRun {
    let args = [&["-p", FIXTURE, "--exact", ASKED, "-j", "2"][..], extra].concat();
    support::copilot_eval(&workspace_root(), &args, &[])
}

/// Each record's trial, its outcome and the trial the test process saw (`ctx.trial()` as its
/// `trial` property: `"2/3"`, or null when it ran once).
fn asked_records(run: &SuiteRun) -> Vec<(Option<TrialOf>, Outcome, serde_json::Value)> {
    run.report
        .tests
        .iter()
        .map(|t| {
            assert_eq!(t.name, ASKED);
            let seen = t
                .properties
                .iter()
                .find(|p| p.name == "trial")
                .map(|p| p.value.clone())
                .expect("the trial property");
            (t.trial, t.outcome, seen)
        })
        .collect()
}

/// Issue 32's attribute keys: without `--trials`, the eval's first test process is trial 1 of
/// the 3 its attribute asks for, the runner runs trials 2 and 3 after it, and the verdict is
/// judged by the attribute's 60%: 2 of 3 pass. `--trials 2` on the command overrides the
/// attribute's trials (the attribute's rate still judges: 1 of 2 is short of 60%), and
/// `--min-pass-rate 100` overrides its rate.
#[test]
fn the_attributes_trials_and_min_pass_rate_run_and_judge_the_eval() {
    if runtime_for("the_attributes_trials_and_min_pass_rate_run_and_judge_the_eval").is_none() {
        return;
    }
    let of = |trial, trials| Some(TrialOf { trial, trials });
    let asked = asked_trials(&[]);
    assert_eq!(asked.status, 0, "{}", asked.stderr);
    assert_eq!(
        asked_records(&asked),
        vec![
            (of(1, 3), Outcome::Passed, serde_json::json!("1/3")),
            (of(2, 3), Outcome::Failed, serde_json::json!("2/3")),
            (of(3, 3), Outcome::Passed, serde_json::json!("3/3")),
        ],
        "{}",
        asked.stderr
    );
    let [summary] = &asked.report.trial_summaries[..] else {
        panic!("one summary: {:#?}", asked.report.trial_summaries)
    };
    assert_eq!((summary.trials, summary.passed, summary.failed), (3, 2, 1));
    assert!(close(summary.pass_rate.unwrap(), 2.0 / 3.0));
    assert_eq!(summary.min_pass_rate, Some(0.6));
    assert_eq!(summary.verdict, Outcome::Passed);
    assert_eq!(summary.failed_trials, vec![2]);
    assert!(
        asked.stderr.contains(&format!(
            "{ASKED}: 2/3 passed (67%, 95% CI 21%-94%), flaky, pass@1 0.67, pass@3 1.00, pass^1 0.67, pass^3 0.00 -> passed (needs 60%); failed trials: 2"
        )),
        "{}",
        asked.stderr
    );
    assert_eq!(asked.junit.tests, 3, "{}", asked.junit_xml);
    assert_eq!(asked.junit_kind(&format!("{ASKED} [trial 2/3]")), "failure");

    // `--trials 2` overrides the attribute's 3; its 60% still judges the two trials.
    let two = asked_trials(&["--trials", "2"]);
    assert_eq!(two.status, 1, "{}", two.stderr);
    assert_eq!(
        asked_records(&two),
        vec![
            (of(1, 2), Outcome::Passed, serde_json::json!("1/2")),
            (of(2, 2), Outcome::Failed, serde_json::json!("2/2")),
        ]
    );
    let summary = &two.report.trial_summaries[0];
    assert_eq!((summary.trials, summary.min_pass_rate), (2, Some(0.6)));
    assert_eq!(summary.verdict, Outcome::Failed);

    // `--min-pass-rate 100` overrides the attribute's 60%: the three trials now fail the eval.
    let all = asked_trials(&["--min-pass-rate", "100"]);
    assert_eq!(all.status, 1, "{}", all.stderr);
    assert_eq!(asked_records(&all).len(), 3);
    let summary = &all.report.trial_summaries[0];
    assert_eq!((summary.passed, summary.failed), (2, 1));
    assert_eq!(summary.min_pass_rate, Some(1.0));
    assert_eq!(summary.verdict, Outcome::Failed);
    assert!(
        all.stderr
            .contains("-> failed (needs 100%); failed trials: 2"),
        "{}",
        all.stderr
    );

    // `--pass-k 2,5` over the attribute's 3 trials: pass@5 cannot be estimated from 3 trials,
    // and the line, the JSON and the HTML say so instead of dropping it.
    let ks = asked_trials(&["--pass-k", "2,5"]);
    assert_eq!(ks.status, 0, "{}", ks.stderr);
    let summary = &ks.report.trial_summaries[0];
    let estimated: Vec<u32> = summary.pass_at_k.iter().map(|a| a.k).collect();
    assert_eq!(estimated, [2]);
    assert_eq!(summary.pass_k_not_estimated, [5]);
    assert!(
        ks.stderr.contains(
            "pass@2 1.00, pass^2 0.33, pass@5 and pass^5 not estimated (k above the 3 trials that reached a verdict) -> passed (needs 60%)"
        ),
        "{}",
        ks.stderr
    );

    // `--trials 1`: once; the test process sees no trial (not trial 1 of 3) and answers
    // rightly.
    let once = asked_trials(&["--trials", "1"]);
    assert_eq!(once.status, 0, "{}", once.stderr);
    assert_eq!(
        asked_records(&once),
        vec![(None, Outcome::Passed, serde_json::Value::Null)]
    );
    assert!(once.report.trial_summaries.is_empty());
}

/// An infrastructure error in the first trial of an attribute's `trials = 3` stops the eval's
/// further trials, as under `--trials`: trials 2 and 3 are `not_run` with the reason, and the
/// verdict is `error` (exit 3).
#[test]
fn a_crash_in_the_first_of_the_attributes_trials_stops_the_others() {
    if runtime_for("a_crash_in_the_first_of_the_attributes_trials_stops_the_others").is_none() {
        return;
    }
    let args = ["-p", FIXTURE, "--exact", ASKED, "-j", "2"];
    let run = support::copilot_eval(
        &workspace_root(),
        &args,
        &[("COPILOT_EVAL_FIXTURE_CRASH_TRIAL", "1")],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    let records: Vec<(Option<TrialOf>, Outcome)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial, t.outcome))
        .collect();
    let of = |trial| Some(TrialOf { trial, trials: 3 });
    assert_eq!(
        records,
        vec![
            (of(1), Outcome::Error),
            (of(2), Outcome::NotRun),
            (of(3), Outcome::NotRun)
        ],
        "{}",
        run.stderr
    );
    for test in &run.report.tests[1..] {
        assert_eq!(
            test.message.as_deref(),
            Some(
                "not run: trial 1 of 3 ended in an infrastructure error (crashed); the eval's further trials were not run"
            )
        );
        assert!(test.runs.is_empty());
    }
    let summary = &run.report.trial_summaries[0];
    assert_eq!(
        (summary.verdict, summary.error, summary.not_run),
        (Outcome::Error, 1, 2)
    );
}
