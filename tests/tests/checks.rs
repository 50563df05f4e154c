//! Named checks through the real runtime (examples/checks, scripted model): a check that
//! accepts the empty answer fails its eval before any session, naming the control; the same
//! check fixed passes its controls and grades the run beside trajectory checks. Each verdict is
//! in the JSON with its kind (valid against the schema), the JUnit properties, and
//! `grading.json` (the run's checks, not the controls).

mod support;

use copilot_eval_core::report::{CheckKind, Outcome};
use copilot_eval_e2e::runtime_for;
use serde_json::Value;
use support::workspace_root;

#[test]
fn a_control_fails_the_check_that_accepts_the_empty_answer_and_the_fixed_check_grades_the_run() {
    if runtime_for("checks").is_none() {
        return;
    }
    let grading = tempfile::tempdir().unwrap();
    let run = support::copilot_eval(
        &workspace_root(),
        &[
            "-p",
            "checks",
            "--grading",
            grading.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status, 1, "one eval fails on purpose: {}", run.stderr);

    let buggy = run.test("a_check_that_accepts_the_empty_answer");
    assert_eq!(buggy.outcome, Outcome::Failed, "{buggy:#?}");
    assert_eq!(
        buggy.message.as_deref(),
        Some(
            "control failed: check `announces 2.4.1` accepted the bad control `empty answer` (no final answer)"
        ),
        "{buggy:#?}"
    );
    assert!(
        buggy.runs.is_empty(),
        "no session is spent: {:#?}",
        buggy.runs
    );
    let verdicts: Vec<(&str, bool, CheckKind)> = (buggy.expectations.iter())
        .map(|x| (x.text.as_str(), x.passed, x.kind))
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "control `the release line` (good) of check `announces 2.4.1`",
                true,
                CheckKind::Control
            ),
            (
                "control `empty answer` (bad) of check `announces 2.4.1`",
                false,
                CheckKind::Control
            ),
            (
                "control `the old version` (bad) of check `announces 2.4.1`",
                true,
                CheckKind::Control
            ),
        ]
    );
    assert!(
        run.stderr
            .contains("accepted the bad control `empty answer`"),
        "the terminal names the control:\n{}",
        run.stderr
    );

    let fixed = run.test("the_fixed_check_grades_the_run");
    assert_eq!(fixed.outcome, Outcome::Passed, "{fixed:#?}");
    assert_eq!(fixed.runs.len(), 1);
    let checks: Vec<(&str, bool, CheckKind)> = (fixed.expectations.iter())
        .filter(|x| x.kind != CheckKind::Control)
        .map(|x| (x.text.as_str(), x.passed, x.kind))
        .collect();
    assert_eq!(
        checks,
        [
            ("announces 2.4.1", true, CheckKind::Expectation),
            ("tools called in order: create", true, CheckKind::Trajectory),
            ("never called: bash", true, CheckKind::Trajectory),
            ("model turns: at most 2", true, CheckKind::Trajectory),
        ]
    );
    assert_eq!(fixed.expectations.len(), 7, "3 controls and 4 checks");
    // The JSON writes a kind only where it is not an expectation.
    let written: Value = serde_json::from_str(&run.json).unwrap();
    let test = (written["tests"].as_array().unwrap().iter())
        .find(|t| t["name"] == "the_fixed_check_grades_the_run")
        .unwrap();
    let kinds: Vec<Option<&str>> = (test["expectations"].as_array().unwrap().iter())
        .map(|x| x.get("kind").map(|k| k.as_str().unwrap()))
        .collect();
    let (control, trajectory) = (Some("control"), Some("trajectory"));
    assert_eq!(
        kinds,
        [
            control, control, control, None, trajectory, trajectory, trajectory
        ]
    );
    assert_eq!(
        run.junit_property(
            "the_fixed_check_grades_the_run",
            "copilot_eval.expectation.5"
        ),
        "passed: tools called in order: create (evidence: called: create)"
    );
    // grading.json holds the run's four checks, not the controls.
    let graded: Value = serde_json::from_str(
        &std::fs::read_to_string(
            grading
                .path()
                .join("the_fixed_check_grades_the_run/grading.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(graded["summary"]["total"], 4, "{graded:#}");
    assert_eq!(graded["summary"]["passed"], 4, "{graded:#}");
}
