//! The runner's verdict hides no failure behind a passing test (`cargo copilot-eval` end to end on
//! the fixture crate, `tests/fixture`): a run that ended on an infrastructure stop the test did
//! not declare, a process the test left behind, and a run whose evidence is incomplete are each
//! shown in the terminal, the JSON results and the JUnit XML (and the HTML report).

use copilot_eval_core::StopReason;
use copilot_eval_core::report::{ErrorKind, Outcome};
use copilot_eval_e2e::runtime_for;

mod support;

use support::fixture;

/// A test that passes its own check over a stale cassette (`ignores_a_stale_cassette`: it asserts
/// only that nothing was written) is an `error` naming the run and `replay_mismatch`; the same
/// cassette with the mismatch declared (`ctx.expect_stop`, `expects_a_stale_cassette`) stays
/// `passed`; a declared stop that does not happen fails the test
/// (`expects_a_stop_that_does_not_happen`).
#[test]
fn a_passing_test_over_a_stale_cassette_is_an_error_naming_replay_mismatch() {
    if runtime_for("a_passing_test_over_a_stale_cassette_is_an_error_naming_replay_mismatch")
        .is_none()
    {
        return;
    }
    let run = fixture(
        &[
            "--no-fail-fast",
            "--exact",
            "ignores_a_stale_cassette",
            "expects_a_stale_cassette",
            "expects_a_stop_that_does_not_happen",
        ],
        &[],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);

    let stale = run.test("ignores_a_stale_cassette");
    assert_eq!(stale.outcome, Outcome::Error, "{stale:#?}");
    assert_eq!(stale.error_kind, Some(ErrorKind::Run));
    assert_eq!(stale.runs[0].stop_reason, StopReason::ReplayMismatch);
    assert_eq!(stale.runs[0].expected_stop, None);
    let message = stale.message.as_deref().unwrap();
    assert!(
        message.starts_with(
            "the test passed, but run 1 (ignores_a_stale_cassette) stopped with replay_mismatch: replay mismatch: model request 1 matches no recorded conversation"
        ),
        "{message}"
    );
    assert!(message.contains("ctx.expect_stop"), "{message}");
    assert_eq!(run.junit_kind("ignores_a_stale_cassette"), "error");
    let junit = run.junit_message("ignores_a_stale_cassette");
    assert!(
        junit.starts_with("stop reason: replay_mismatch; the test passed, but run 1"),
        "{junit}"
    );
    assert!(
        run.stderr.contains(
            "ERROR copilot-eval-fixture::evals ignores_a_stale_cassette (its message is above)"
        ),
        "the summary names it\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "\n             the test passed, but run 1 (ignores_a_stale_cassette) stopped with replay_mismatch"
        ),
        "its line shows the message\n{}",
        run.stderr
    );

    let declared = run.test("expects_a_stale_cassette");
    assert_eq!(declared.outcome, Outcome::Passed, "{declared:#?}");
    assert_eq!(declared.runs[0].stop_reason, StopReason::ReplayMismatch);
    assert_eq!(
        declared.runs[0].expected_stop,
        Some(StopReason::ReplayMismatch)
    );
    assert_eq!(run.junit_kind("expects_a_stale_cassette"), "success");
    assert_eq!(
        run.junit_property("expects_a_stale_cassette", "copilot_eval.expected_stop"),
        "replay_mismatch"
    );

    let unmet = run.test("expects_a_stop_that_does_not_happen");
    assert_eq!(unmet.outcome, Outcome::Failed, "{unmet:#?}");
    assert_eq!(unmet.runs[0].stop_reason, StopReason::Completed);
    assert_eq!(
        unmet.message.as_deref(),
        Some(
            "run 1 (expects_a_stop_that_does_not_happen) was expected to stop with replay_mismatch (ctx.expect_stop) but stopped with completed"
        )
    );
    assert_eq!(
        run.junit_kind("expects_a_stop_that_does_not_happen"),
        "failure"
    );
    assert_eq!(
        (
            run.report.totals.passed,
            run.report.totals.failed,
            run.report.totals.error
        ),
        (1, 1, 1)
    );
}

/// A passing test that leaves a process behind (`leaves_a_process_behind`: `sleep 600` in a
/// process group of its own, carrying the runner's marker) is an `error`
/// (`leftover_processes`) naming the pid and its command line, in the JSON, the JUnit and the
/// terminal; the process is gone afterwards. No runtime is needed: the test makes no run.
#[test]
fn a_passing_test_that_leaves_a_process_behind_is_an_error_naming_it() {
    let run = fixture(&["--exact", "leaves_a_process_behind"], &[]);
    let test = run.test("leaves_a_process_behind");
    let pid: u32 = test
        .properties
        .iter()
        .find(|p| p.name == "child_pid")
        .and_then(|p| p.value.as_u64())
        .unwrap_or_else(|| panic!("the fixture recorded its child's pid: {test:#?}"))
        as u32;
    let alive = copilot_eval_core::runtime::process_alive(pid);
    if alive {
        // Do not leave it to the machine when the check below fails.
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(!alive, "the leftover process {pid} is still alive");
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(test.outcome, Outcome::Error, "{test:#?}");
    assert_eq!(test.error_kind, Some(ErrorKind::LeftoverProcesses));
    let named = format!("pid {pid} (sleep 600)");
    let message = test.message.as_deref().unwrap();
    assert!(
        message
            .starts_with("the test passed, but processes it started outlived it and were killed: ")
            && message.contains(&named),
        "{message}"
    );
    assert_eq!(run.junit_kind("leaves_a_process_behind"), "error");
    assert!(
        run.junit_message("leaves_a_process_behind")
            .contains(&named),
        "{}",
        run.junit_message("leaves_a_process_behind")
    );
    let json: serde_json::Value = serde_json::from_str(&run.json).unwrap();
    assert_eq!(json["tests"][0]["error_kind"], "leftover_processes");
    assert!(
        run.stderr
            .contains("ERROR copilot-eval-fixture::evals leaves_a_process_behind")
            && run.stderr.contains(&named),
        "{}",
        run.stderr
    );
}

/// A run whose event recorder had to be stopped (`loses_events`, a test-only fault) completes
/// with incomplete evidence: the test passes (`success` means the session completed), and the
/// terminal (its line and the summary), the JUnit property and the HTML badge show the loss.
#[test]
fn a_run_with_incomplete_evidence_is_shown_in_every_report() {
    if runtime_for("a_run_with_incomplete_evidence_is_shown_in_every_report").is_none() {
        return;
    }
    let html_dir = tempfile::tempdir().unwrap();
    let html = html_dir.path().join("report.html");
    let run = fixture(
        &[
            "--html",
            html.to_str().unwrap(),
            "--exact",
            "loses_events",
            "passes",
        ],
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let test = run.test("loses_events");
    assert_eq!(test.outcome, Outcome::Passed, "{test:#?}");
    let lossy = &test.runs[0];
    assert!(lossy.success && !lossy.evidence_complete, "{lossy:#?}");
    assert!(
        lossy.capture_errors[0].starts_with("the event recorder had not reached the end"),
        "{:?}",
        lossy.capture_errors
    );
    assert!(
        run.stderr.contains(
            "  evidence: 1 run with incomplete evidence (see its capture_errors): copilot-eval-fixture::evals loses_events (run 1)\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "evidence incomplete in run 1 (loses_events): the event recorder had not reached the end"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.junit_property("loses_events", "copilot_eval.evidence_complete"),
        "false"
    );
    assert_eq!(
        run.junit_property("passes", "copilot_eval.evidence_complete"),
        "true"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("data-evidence=\"incomplete\"").count(),
        2,
        "a badge on the eval and one on its run"
    );
    assert!(page.contains("evidence incomplete (1 run)"));
}

/// A panicking tool handler and a failing pre-tool guard (no budget set) are bugs in the test's
/// own code: each run stops `execution_error` naming the handler or the guard, and the runner
/// reports each test `error` although the test returned normally (`hides_a_handler_panic`,
/// `hides_a_guard_failure`). After the guard failure no model request is forwarded, so the
/// guarded file is never written.
#[test]
fn a_panicking_handler_or_a_failing_guard_is_an_error_though_the_test_passed() {
    if runtime_for("a_panicking_handler_or_a_failing_guard_is_an_error_though_the_test_passed")
        .is_none()
    {
        return;
    }
    let run = fixture(
        &[
            "--no-fail-fast",
            "--exact",
            "hides_a_handler_panic",
            "hides_a_guard_failure",
        ],
        &[],
    );
    assert_eq!(run.status, 3, "{}", run.stderr);

    let panicked = run.test("hides_a_handler_panic");
    assert_eq!(panicked.outcome, Outcome::Error, "{panicked:#?}");
    assert_eq!(panicked.error_kind, Some(ErrorKind::Run));
    assert_eq!(panicked.runs[0].stop_reason, StopReason::ExecutionError);
    let message = panicked.message.as_deref().unwrap();
    assert!(
        message
            .contains("the tool handler `lookup` panicked: fixture: the lookup table is missing"),
        "{message}"
    );
    assert!(
        message.starts_with(
            "the test passed, but run 1 (hides_a_handler_panic) stopped with execution_error"
        ),
        "{message}"
    );
    assert_eq!(run.junit_kind("hides_a_handler_panic"), "error");

    let guarded = run.test("hides_a_guard_failure");
    assert_eq!(guarded.outcome, Outcome::Error, "{guarded:#?}");
    assert_eq!(guarded.error_kind, Some(ErrorKind::Run));
    assert_eq!(guarded.runs[0].stop_reason, StopReason::ExecutionError);
    let message = guarded.message.as_deref().unwrap();
    assert!(
        message.contains("fixture guard: the policy file cannot be read"),
        "{message}"
    );
    assert_eq!(run.junit_kind("hides_a_guard_failure"), "error");
    assert!(
        run.stderr
            .contains("ERROR copilot-eval-fixture::evals hides_a_handler_panic")
            && run
                .stderr
                .contains("ERROR copilot-eval-fixture::evals hides_a_guard_failure"),
        "the summary names both\n{}",
        run.stderr
    );
}
