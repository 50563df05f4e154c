//! Tests of the executor's verdicts.

use super::*;
use crate::harness::EVIDENCE_FORMAT;
use crate::result::{StopClass, StopReason};

/// The record of a test `name` of binary `pkg::evals` with `outcome` and nothing else (for
/// the display's tests).
pub(crate) fn record(name: &str, outcome: Outcome) -> TestRecord {
    let binary = TestBinary {
        id: "pkg::evals".into(),
        package: "pkg".into(),
        target: "evals".into(),
        path: PathBuf::from("evals"),
        cwd: PathBuf::from("."),
    };
    let test = EvalTest {
        binary: 0,
        test_id: format!("{name}::__copilot_eval"),
        name: name.into(),
    };
    test_record(&test, &binary, outcome)
}

fn evidence(status: EvidenceStatus) -> TestEvidence {
    TestEvidence {
        provenance: None,
        format: EVIDENCE_FORMAT.to_owned(),
        test_id: "t::__copilot_eval".to_owned(),
        name: "t".to_owned(),
        status,
        pid: 1,
        deadline_unix_ms: 0,
        mode: "live".to_owned(),
        properties: vec![],
        runs: vec![],
        running: None,
        failure: None,
        setup_error: None,
        workdir: None,
        workdir_kept: false,
        cassette: "c.yaml".to_owned(),
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        model: None,
        trial_ask: None,
        expectations: Vec::new(),
        skill_eval: None,
        trigger_query: None,
    }
}

fn exit(code: Option<i32>, signal: Option<i32>) -> ExitRecord {
    ExitRecord {
        code,
        signal,
        killed_by_runner: false,
    }
}

const BOUND: Duration = Duration::from_secs(60);

#[test]
fn passed_and_failed_follow_the_process_and_the_evidence() {
    let v = classify(
        &exit(Some(0), None),
        Some(&evidence(EvidenceStatus::Passed)),
        BOUND,
        false,
    );
    assert_eq!(v.outcome, Outcome::Passed);
    let mut failed = evidence(EvidenceStatus::Failed);
    failed.failure = Some("assertion failed: x".to_owned());
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Failed);
    assert_eq!(v.message.as_deref(), Some("assertion failed: x"));
}

#[test]
fn abnormal_ends_are_errors() {
    let v = classify(
        &exit(None, Some(6)),
        Some(&evidence(EvidenceStatus::Running)),
        BOUND,
        false,
    );
    assert_eq!(v.error_kind, Some(ErrorKind::Crashed));
    assert!(v.message.unwrap().contains("SIGABRT"));
    let v = classify(&exit(Some(0), None), None, BOUND, false);
    assert_eq!(v.error_kind, Some(ErrorKind::MissingEvidence));
    let mut killed = exit(None, Some(9));
    killed.killed_by_runner = true;
    let v = classify(
        &killed,
        Some(&evidence(EvidenceStatus::Running)),
        BOUND,
        false,
    );
    assert_eq!(v.error_kind, Some(ErrorKind::Killed));
    let mut setup = evidence(EvidenceStatus::Failed);
    setup.setup_error = Some("no cassette".to_owned());
    let v = classify(&exit(Some(101), None), Some(&setup), BOUND, false);
    assert_eq!(v.error_kind, Some(ErrorKind::Setup));
    assert_eq!(v.message.as_deref(), Some("no cassette"));
}

fn with_run(status: EvidenceStatus, stop: StopReason, error: &str) -> TestEvidence {
    let mut evidence = evidence(status);
    let mut run = crate::report::tests::run(stop, 0);
    run.error = Some(error.to_owned());
    evidence.runs.push(run);
    evidence
}

#[test]
fn a_passed_test_whose_run_cleanup_failed_is_an_error() {
    let passed = with_run(
        EvidenceStatus::Passed,
        StopReason::CleanupError,
        "a runtime process outlived the stop",
    );
    let v = classify(&exit(Some(0), None), Some(&passed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Error);
    assert_eq!(v.error_kind, Some(ErrorKind::Run));
    let message = v.message.unwrap();
    assert!(
        message.starts_with(
            "the test passed, but run 1 (e) stopped with cleanup_error: a runtime process outlived the stop\n"
        ),
        "{message}"
    );
}

/// Every infrastructure stop ([`StopReason::class`]) makes a passing test an error naming the
/// run, its stop and its error text; the task's own verdicts (and a script that ran out, the
/// test's mistake) do not.
#[test]
fn a_passed_test_whose_run_ended_on_any_infrastructure_stop_is_an_error() {
    let mut infrastructure = 0;
    for stop in StopReason::PRECEDENCE {
        let passed = with_run(EvidenceStatus::Passed, stop, "what went wrong");
        let v = classify(&exit(Some(0), None), Some(&passed), BOUND, false);
        if stop.class() != StopClass::Infrastructure {
            assert_eq!(v.outcome, Outcome::Passed, "{stop}: {:?}", v.message);
            continue;
        }
        infrastructure += 1;
        assert_eq!(v.outcome, Outcome::Error, "{stop}");
        assert_eq!(v.error_kind, Some(ErrorKind::Run), "{stop}");
        let message = v.message.unwrap();
        assert!(
            message.contains(&format!(
                "the test passed, but run 1 (e) stopped with {stop}: what went wrong"
            )) && message.contains("ctx.expect_stop"),
            "{message}"
        );
    }
    assert!(infrastructure > 0, "no infrastructure stop was tried");
}

/// A stop the test declared (`ctx.expect_stop`, the run's `expected_stop`) is not an
/// error, whether the test then passed or failed; a declared stop of another reason does
/// not excuse the one that happened.
#[test]
fn a_declared_infrastructure_stop_is_not_an_error() {
    let mut passed = with_run(
        EvidenceStatus::Passed,
        StopReason::ReplayMismatch,
        "request 1",
    );
    passed.runs[0].expected_stop = Some(StopReason::ReplayMismatch);
    let v = classify(&exit(Some(0), None), Some(&passed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Passed, "{:?}", v.message);

    let mut failed = with_run(
        EvidenceStatus::Failed,
        StopReason::RequestAuditError,
        "no request",
    );
    failed.runs[0].expected_stop = Some(StopReason::RequestAuditError);
    failed.failure = Some("assertion failed: the guard's file".to_owned());
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Failed);
    assert_eq!(
        v.message.as_deref(),
        Some("assertion failed: the guard's file")
    );

    let mut other = with_run(
        EvidenceStatus::Passed,
        StopReason::CleanupError,
        "runtime kept running",
    );
    other.runs[0].expected_stop = Some(StopReason::RequestAuditError);
    let v = classify(&exit(Some(0), None), Some(&other), BOUND, false);
    assert_eq!(v.error_kind, Some(ErrorKind::Run));
    assert!(
        v.message
            .unwrap()
            .contains("run 1 (e) stopped with cleanup_error: runtime kept running")
    );
}

#[test]
fn a_failed_test_after_an_infrastructure_stop_is_an_error_naming_both() {
    let mut failed = with_run(
        EvidenceStatus::Failed,
        StopReason::ReplayMismatch,
        "request 2 unmatched",
    );
    failed.failure = Some("assertion failed: success".to_owned());
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(v.error_kind, Some(ErrorKind::Run));
    let message = v.message.unwrap();
    assert!(
        message.contains("run 1 (e) stopped with replay_mismatch: request 2 unmatched")
            && message.contains("the test then failed: assertion failed: success"),
        "{message}"
    );
}

#[test]
fn a_failure_that_repeats_the_runs_error_shows_it_once() {
    let mut failed = with_run(
        EvidenceStatus::Failed,
        StopReason::ReplayMismatch,
        "request 2 \"x\" unmatched",
    );
    failed.failure = Some("replay_mismatch: Some(\"request 2 \\\"x\\\" unmatched\")".to_owned());
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(
        v.message.as_deref(),
        Some(
            "run 1 (e) stopped with replay_mismatch: request 2 \"x\" unmatched\nthe test then failed: replay_mismatch: Some(<the run's error, shown above>)"
        )
    );
}

#[test]
fn a_script_that_ran_out_is_the_tests_failure_and_said_first() {
    let mut failed = with_run(
        EvidenceStatus::Failed,
        StopReason::ScriptExhausted,
        "the script ran out of turns: it has 1 turn and the runtime asked for turn 2",
    );
    failed.failure = Some("the run did not complete".to_owned());
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Failed);
    assert_eq!(v.error_kind, None);
    assert_eq!(
        v.message.as_deref(),
        Some(
            "run 1 (e): the script ran out of turns: it has 1 turn and the runtime asked for turn 2\nthe test then failed: the run did not complete"
        )
    );
}

#[test]
fn an_interrupted_suite_reports_what_was_running() {
    let mut running = evidence(EvidenceStatus::Running);
    running.running = Some("e: Say hello.".to_owned());
    let mut killed = exit(None, Some(9));
    killed.killed_by_runner = true;
    let v = classify(&killed, Some(&running), BOUND, true);
    assert_eq!(v.error_kind, Some(ErrorKind::Crashed));
    assert_eq!(
        v.message.as_deref(),
        Some("interrupted: the suite was stopped while running e: Say hello.")
    );
    // A test that exited 0 without ever writing its evidence.
    let v = classify(&exit(Some(0), None), None, BOUND, false);
    assert!(
        v.message
            .unwrap()
            .contains("exited with status 0 without writing its evidence")
    );
}

/// Processes a test left behind (docs/command.md, "Leftover processes"): a passing test becomes
/// an `error` naming each; a failed or errored test keeps its outcome, kind and message, with
/// the line naming them under it; none left changes nothing.
#[test]
fn leftovers_turn_a_pass_into_an_error_and_a_note_elsewhere() {
    let left = [
        super::super::leftovers::Leftover {
            pid: 4242,
            command: "sleep 600".to_owned(),
        },
        super::super::leftovers::Leftover {
            pid: 4243,
            command: "[node]".to_owned(),
        },
    ];
    let mut passed = record("p", Outcome::Passed);
    note_leftovers(&mut passed, &left);
    assert_eq!(passed.outcome, Outcome::Error);
    assert_eq!(passed.error_kind, Some(ErrorKind::LeftoverProcesses));
    assert_eq!(
        passed.message.as_deref(),
        Some(
            "the test passed, but processes it started outlived it and were killed: pid 4242 (sleep 600), pid 4243 ([node]) (stop every process the test starts before it returns)"
        )
    );

    let mut failed = record("f", Outcome::Failed);
    failed.message = Some("assertion failed".to_owned());
    note_leftovers(&mut failed, &left);
    assert_eq!(failed.outcome, Outcome::Failed);
    assert_eq!(failed.error_kind, None);
    assert_eq!(
        failed.message.as_deref(),
        Some(
            "assertion failed\nkilled processes the test left behind: pid 4242 (sleep 600), pid 4243 ([node])"
        )
    );

    let mut crashed = record("c", Outcome::Error);
    crashed.error_kind = Some(ErrorKind::Crashed);
    note_leftovers(&mut crashed, &left[..1]);
    assert_eq!(crashed.outcome, Outcome::Error);
    assert_eq!(crashed.error_kind, Some(ErrorKind::Crashed));
    assert_eq!(
        crashed.message.as_deref(),
        Some("killed processes the test left behind: pid 4242 (sleep 600)")
    );

    let mut clean = record("n", Outcome::Passed);
    note_leftovers(&mut clean, &[]);
    assert_eq!((clean.outcome, clean.message), (Outcome::Passed, None));
}

/// A judge that gave no verdict, then a failed test (`ctx.judge(..).await.unwrap()`): an
/// `error` of kind `judge`, never a `failed` of the agent; a test that passed over a judge
/// error (it handled the `JudgeError`) keeps its own checks' `passed`; a failed test whose
/// judges all gave verdicts stays `failed`.
#[test]
fn a_judge_error_is_never_a_fail_of_the_agent() {
    let judge = |error: Option<&str>| crate::report::JudgeRecord {
        kind: crate::report::JudgeKind::Rubric,
        material: "final response".into(),
        judged_runs: vec![1],
        model: None,
        tools: Vec::new(),
        samples: None,
        rubric: Vec::new(),
        sessions: Vec::new(),
        verdicts: Vec::new(),
        error: error.map(str::to_owned),
    };
    let mut failed = evidence(EvidenceStatus::Failed);
    failed.failure = Some("called `Result::unwrap()` on an `Err` value: NotJson".to_owned());
    failed.judges = vec![
        judge(None),
        judge(Some("the judge's answer (run 3) is not JSON")),
    ];
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(
        (v.outcome, v.error_kind),
        (Outcome::Error, Some(ErrorKind::Judge))
    );
    let message = v.message.unwrap();
    assert!(
        message.starts_with(
            "judge 2: the judge's answer (run 3) is not JSON\nthe test then failed: called `Result::unwrap()`"
        ),
        "{message}"
    );

    let mut handled = evidence(EvidenceStatus::Passed);
    handled.judges = failed.judges.clone();
    let v = classify(&exit(Some(0), None), Some(&handled), BOUND, false);
    assert_eq!(v.outcome, Outcome::Passed);

    failed.judges = vec![judge(None)];
    let v = classify(&exit(Some(101), None), Some(&failed), BOUND, false);
    assert_eq!(v.outcome, Outcome::Failed);
}
