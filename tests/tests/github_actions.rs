//! The runner in a GitHub Actions step (`GITHUB_ACTIONS=true`): a job summary appended to
//! `GITHUB_STEP_SUMMARY` and one `::error` annotation per failed eval, pointing at the eval
//! function's file and line; both follow each eval's verdict (over its trials) and the exit
//! status; outside a workflow neither appears.

mod support;

use copilot_eval_e2e::runtime_for;
use support::{fixture, workspace_root};

/// The fixture run with `args` in a GitHub Actions step whose summary file is `summary`.
fn in_actions(args: &[&str], summary: &std::path::Path) -> support::SuiteRun {
    fixture(
        args,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    )
}

/// The fixture file and the 1-based line of `async fn <function>` in it.
fn place_of(function: &str) -> (String, u32) {
    let file = "tests/fixture/tests/evals.rs";
    let text = std::fs::read_to_string(workspace_root().join(file)).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains(&format!("async fn {function}(")))
        .unwrap_or_else(|| panic!("no {function} in {file}"));
    (file.to_owned(), line as u32 + 1)
}

#[test]
fn in_github_actions_the_runner_writes_a_job_summary_and_annotations() {
    let scratch = tempfile::tempdir().unwrap();
    let summary = scratch.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = fixture(
        &["unit_eval", "fails_an_assertion"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    let (file, line) = place_of("fails_an_assertion");

    // The JSON says where each eval is written.
    let failed = run.test("fails_an_assertion");
    let source = failed.source.as_ref().expect("the eval's source location");
    assert_eq!((source.file.as_str(), source.line), (file.as_str(), line));

    // One annotation, for the failed eval only, at its function.
    let annotations: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 1, "{}", run.stdout);
    let prefix = format!(
        "::error file={file},line={line},title=copilot-eval%3A failed fails_an_assertion::"
    );
    assert!(annotations[0].starts_with(&prefix), "{}", annotations[0]);
    assert!(
        annotations[0].contains("the scripted model answers wrongly on purpose"),
        "{}",
        annotations[0]
    );
    assert!(
        !annotations[0][prefix.len()..].contains('\n'),
        "one line per annotation"
    );

    // The job summary is appended after what earlier steps wrote.
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n## copilot-eval\n"),
        "{text}"
    );
    assert!(
        text.contains("**2 tests**: 1 passed, 1 failed, 0 errors, 0 not run"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "| failed | `copilot-eval-fixture::evals` fails_an_assertion (`{file}:{line}`) |"
        )),
        "{text}"
    );
    assert!(text.contains("cost: "), "{text}");
}

#[test]
fn outside_github_actions_there_is_no_annotation_nor_summary() {
    let scratch = tempfile::tempdir().unwrap();
    let summary = scratch.path().join("step-summary.md");
    let run = fixture(
        &["fails_an_assertion"],
        &[
            ("GITHUB_ACTIONS", "false"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("::")),
        "{}",
        run.stdout
    );
    assert!(!summary.exists());
}

/// The fixture's `answers_rightly_in_two_of_three_trials` asks for 3 trials and a 60% pass rate;
/// trial 2 fails, so the eval passes by its rate (2 of 3) and the suite exits 0. No `::error`
/// for the failed trial, and the summary's mark is green, with the eval's verdict.
#[test]
fn a_flaky_eval_that_passes_by_its_pass_rate_posts_no_error() {
    if runtime_for("a_flaky_eval_that_passes_by_its_pass_rate_posts_no_error").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let summary = scratch.path().join("step-summary.md");
    let run = in_actions(
        &[
            "--exact",
            "answers_rightly_in_two_of_three_trials",
            "-j",
            "2",
        ],
        &summary,
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let outcomes: Vec<_> = run.report.tests.iter().map(|t| t.outcome).collect();
    use copilot_eval_core::report::Outcome;
    assert_eq!(
        outcomes,
        [Outcome::Passed, Outcome::Failed, Outcome::Passed],
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("::")),
        "no annotation for a trial of a passing eval: {}",
        run.stdout
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.contains("✅ **3 tests**: 2 passed, 1 failed, 0 errors, 0 not run"),
        "{text}"
    );
    assert!(
        text.contains(
            "**1 evals run in trials**, by their verdict over their trials: 1 passed, 0 failed, 0 errors"
        ),
        "{text}"
    );
    assert!(
        !text.contains("| failed |") && !text.contains('❌'),
        "{text}"
    );
}

/// Every selected eval not run (a premium-request cap of 0 launches nothing; exit 3): the job
/// summary shows no green mark, and lists each eval as not run; no eval gets an annotation.
#[test]
fn a_suite_whose_evals_were_all_not_run_shows_no_green_mark() {
    let scratch = tempfile::tempdir().unwrap();
    let summary = scratch.path().join("step-summary.md");
    let run = in_actions(
        &["--max-premium-requests", "0", "passes", "unit_eval"],
        &summary,
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(run.report.totals.not_run, 3);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(!text.contains('✅'), "{text}");
    assert!(
        text.contains("❌ **3 tests**: 0 passed, 0 failed, 0 errors, 3 not run"),
        "{text}"
    );
    assert!(
        text.contains("| not_run | `copilot-eval-fixture::evals` passes ("),
        "{text}"
    );
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("::")),
        "{}",
        run.stdout
    );
}
