//! Judges (`ctx.judge`, `ctx.judge_pair`) end to end, through the real `cargo copilot-eval`,
//! the real runtime and the scripted example's `tests/judges.rs`:
//!
//! - a rubric judge's verdicts, scores, reasons and cost are in the JSON (valid against the
//!   committed schema), the JUnit properties, the terminal summary and the HTML page; its
//!   session is a run labelled `judge`, counted in the test's cost;
//! - a judge whose answer is not JSON gives an error naming the criterion, never a verdict;
//! - a pairwise judge whose two orders agree reports the preference, one whose orders disagree
//!   reports `inconsistent`;
//! - in trials, each rubric criterion's pass rate over the trials.

use copilot_eval_core::report::{JudgeKind, JudgeVerdict, Outcome};
use copilot_eval_e2e::runtime_for;

mod support;

use support::workspace_root;

#[test]
fn judges_appear_in_every_report_with_their_verdicts_reasons_and_cost() {
    let test = "judges_appear_in_every_report_with_their_verdicts_reasons_and_cost";
    if runtime_for(test).is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    // `support::copilot_eval` checks the JSON against the committed schema.
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--html",
            html.to_str().unwrap(),
            "judge",
            "prefers_an_answer",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        [
            ("a_judge_answer_that_is_not_json_is_an_error", Outcome::Passed),
            ("judges_the_release_notes", Outcome::Passed),
            ("prefers_an_answer_in_both_orders", Outcome::Passed),
        ]
    );

    // The rubric judge: a run labelled judge, and the record with verdicts, scores, reasons.
    let judged = run.test("judges_the_release_notes");
    let labels: Vec<Option<&str>> = judged.runs.iter().map(|r| r.label.as_deref()).collect();
    assert_eq!(labels, [None, Some("judge")]);
    assert!(
        judged.runs[1].working_directory.ends_with("/judge-1"),
        "{}",
        judged.runs[1].working_directory
    );
    assert_eq!(judged.judges.len(), 1, "{judged:#?}");
    let judge = &judged.judges[0];
    assert_eq!(judge.kind, JudgeKind::Rubric);
    assert_eq!(judge.material, "files: NOTES.md");
    assert_eq!(judge.judged_runs, [1]);
    assert_eq!(judge.model.as_deref(), Some("claude-sonnet-4.5"));
    assert!(judge.tools.is_empty());
    assert_eq!(judge.error, None);
    let verdicts: Vec<(&str, JudgeVerdict, Option<i64>, &str)> = judge
        .verdicts
        .iter()
        .map(|v| {
            (
                v.criterion.as_str(),
                v.verdict,
                v.score,
                v.reasons[0].as_str(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "names the version",
                JudgeVerdict::Pass,
                None,
                "The heading names 2.4.1."
            ),
            (
                "clear",
                JudgeVerdict::Pass,
                Some(4),
                "One short, plain line."
            ),
        ]
    );
    // Its cost: the judge session's own tokens, and counted in the test's.
    let session = &judge.sessions[0];
    assert_eq!(session.run, 2);
    assert_eq!(
        (session.input_tokens, session.output_tokens),
        (Some(900), Some(60))
    );
    assert_eq!(session.model_calls, 1);
    let cost = judged.cost.as_ref().expect("a cost");
    assert_eq!(cost.input_tokens, 5000 + 5100 + 900, "{cost:?}");
    assert_eq!(judged.runs[1].totals.input_tokens, 900);

    // JUnit: the run's label, each criterion, the summary and the cost.
    let name = "judges_the_release_notes";
    assert_eq!(run.junit_property(name, "copilot_eval.run.2.label"), "judge");
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.criterion.clear"),
        "verdict=pass score=4 reason=One short, plain line."
    );
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.criterion.names the version"),
        "verdict=pass reason=The heading names 2.4.1."
    );
    assert_eq!(
        run.junit_property(name, "copilot_eval.judge.1.cost"),
        "1 session (run 2), 1 model call, 960 tokens, premium requests 0, estimated cost not priced"
    );
    let line = judge.line();
    assert_eq!(run.junit_property(name, "copilot_eval.judge.1.summary"), line);
    // The terminal summary.
    assert!(
        run.stderr
            .contains(&format!("\n  judge scripted::judges {name}: {line}\n")),
        "{}",
        run.stderr
    );
    assert!(
        line.starts_with(
            "rubric judge of run 1 on claude-sonnet-4.5 (files: NOTES.md): names the version: pass, clear: pass (score 4); 1 session (run 2)"
        ),
        "{line}"
    );

    // An answer that is not JSON: an error naming the criterion, and no verdict.
    let broken = &run.test("a_judge_answer_that_is_not_json_is_an_error").judges[0];
    assert!(broken.verdicts.is_empty(), "{broken:#?}");
    let error = broken.error.as_deref().expect("an error");
    assert!(
        error.starts_with("the judge's answer (run 2) is not the JSON object asked for")
            && error.ends_with("first criterion: `names the version`"),
        "{error}"
    );
    assert_eq!(
        run.junit_property(
            "a_judge_answer_that_is_not_json_is_an_error",
            "copilot_eval.judge.1.error"
        ),
        error
    );

    // The pairwise judges: both orders each; a preference only when they agree.
    let pair = run.test("prefers_an_answer_in_both_orders");
    assert_eq!(pair.judges.len(), 2);
    let outcome: Vec<(JudgeVerdict, Vec<u64>, Vec<Option<&str>>)> = pair
        .judges
        .iter()
        .map(|j| {
            assert_eq!(j.kind, JudgeKind::Pairwise);
            assert_eq!(j.judged_runs, [1, 2]);
            (
                j.verdicts[0].verdict,
                j.sessions.iter().map(|s| s.run).collect(),
                j.sessions.iter().map(|s| s.order.as_deref()).collect(),
            )
        })
        .collect();
    assert_eq!(
        outcome,
        [
            (
                JudgeVerdict::A,
                vec![3, 4],
                vec![Some("a_b"), Some("b_a")]
            ),
            (
                JudgeVerdict::Inconsistent,
                vec![5, 6],
                vec![Some("a_b"), Some("b_a")]
            ),
        ]
    );
    assert_eq!(
        run.junit_property(
            "prefers_an_answer_in_both_orders",
            "copilot_eval.judge.2.criterion.informative"
        ),
        "verdict=inconsistent reason=Answer 1 comes first. | Answer 1 comes first."
    );

    // The page: a judge table per judge, with each criterion's verdict, and the cost.
    let page = std::fs::read_to_string(&html).unwrap();
    for expected in [
        "<table class=\"judge\" data-judge=\"1\" data-kind=\"rubric\">",
        "<tr class=\"judge-criterion\" data-criterion=\"clear\" data-verdict=\"pass\">",
        "<td class=\"score\">4</td>",
        "One short, plain line.",
        "<table class=\"judge\" data-judge=\"2\" data-kind=\"pairwise\">",
        "data-criterion=\"informative\" data-verdict=\"inconsistent\"",
        "1 session (run 2), 1 model call, 960 tokens, premium requests 0, estimated cost not priced",
        "data-label=\"judge\"",
    ] {
        assert!(page.contains(expected), "the page lacks {expected:?}");
    }
}

#[test]
fn over_trials_each_rubric_criterion_has_its_pass_rate() {
    let test = "over_trials_each_rubric_criterion_has_its_pass_rate";
    if runtime_for(test).is_none() {
        return;
    }
    let name = "judges_the_release_notes";
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "scripted",
            "--exact",
            name,
            "--trials",
            "3",
            "-j",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 3);
    // A verdict per trial: the judge found the notes unclear in trial 2 only.
    let clear: Vec<(u32, JudgeVerdict)> = run
        .report
        .tests
        .iter()
        .map(|t| (t.trial.unwrap().trial, t.judges[0].verdicts[1].verdict))
        .collect();
    assert_eq!(
        clear,
        [
            (1, JudgeVerdict::Pass),
            (2, JudgeVerdict::Fail),
            (3, JudgeVerdict::Pass)
        ]
    );
    let summary = &run.report.trial_summaries[0];
    let rates: Vec<(u32, &str, u32, u32, u32)> = summary
        .judge_criteria
        .iter()
        .map(|c| {
            (
                c.judge,
                c.criterion.as_str(),
                c.passed,
                c.trials,
                c.judge_errors,
            )
        })
        .collect();
    assert_eq!(
        rates,
        [(1, "names the version", 3, 3, 0), (1, "clear", 2, 3, 0)]
    );
    let clear = &summary.judge_criteria[1];
    assert!((clear.pass_rate - 2.0 / 3.0).abs() < 1e-9);
    let line = copilot_eval_core::report::judge_trials::line(clear);
    assert_eq!(line, "judge 1, clear: passed 2/3 (67%, 95% CI 21%-94%)");
    assert!(
        run.stderr.contains(&format!("\n      {line}\n")),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.junit_property(
            &format!("{name} [trial 1/3]"),
            "copilot_eval.trials.judge.1.criterion.clear"
        ),
        "passed=2/3 pass_rate=0.6667 interval=0.2077-0.9385 judge_errors=0"
    );
    // The page's "Judges over trials" table.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<table class=\"trial-judges\">"), "no judges table");
    assert!(
        page.contains(&format!(
            "<tr class=\"trial-judge\" data-name=\"{name}\" data-criterion=\"clear\">"
        )),
        "no row for clear"
    );
    assert!(page.contains("<td class=\"passed\">2/3</td>"));
}
