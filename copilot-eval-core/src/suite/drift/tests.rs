//! The classifier on the replay engine's typed diagnoses, and the comparison's verdicts.

use std::path::PathBuf;

use super::*;
use crate::cassette::{ConversationDiff, Departure, ReplayMismatch, ReplayMiss, Role};
use crate::report::{SCHEMA_VERSION, SuiteTotals, ToolInfo};

/// A replay failure whose first miss departs from each of `conversations`.
fn mismatch(conversations: Vec<ConversationDiff>) -> ReplayMismatch {
    ReplayMismatch::Miss {
        first: ReplayMiss {
            cassette: PathBuf::from("/repo/tests/cassettes/evals/x.yaml"),
            request: 2,
            reason: "matches no recorded conversation".to_owned(),
            normalizers: 4,
            request_messages: vec!["system \"${system}\"".to_owned()],
            conversations,
        },
        later: Vec::new(),
    }
}

fn at(
    conversation: usize,
    message: usize,
    role: Role,
    recorded: &str,
    request: &str,
) -> ConversationDiff {
    ConversationDiff {
        conversation,
        recorded_messages: 6,
        departure: Departure::Differs {
            message,
            recorded_role: role,
            request_role: role,
            changed_parts: Vec::new(),
        },
        recorded: Some(recorded.to_owned()),
        requested: Some(request.to_owned()),
    }
}

#[test]
fn a_changed_tool_result_is_named_with_both_texts() {
    let text = mismatch(vec![
        at(1, 2, Role::User, "user \"Say hello.\"", "user \"Say bye.\""),
        at(
            2,
            4,
            Role::Tool,
            "tool[toolcall_0] \"Created file a.txt\"",
            "tool[toolcall_0] \"Created a.txt\"",
        ),
    ]);
    let d = classify_mismatch(&text);
    assert_eq!(d.kind, DriftKind::ToolResult, "{d:?}");
    assert!(
        d.detail
            .starts_with("replay mismatch: model request 2 matches no recorded conversation"),
        "{}",
        d.detail
    );
    assert!(
        d.detail.ends_with("first difference at message 4 (tool)"),
        "{}",
        d.detail
    );
    assert_eq!(
        d.pinned.as_deref(),
        Some("tool[toolcall_0] \"Created file a.txt\"")
    );
    assert_eq!(
        d.candidate.as_deref(),
        Some("tool[toolcall_0] \"Created a.txt\"")
    );
}

#[test]
fn each_kind_of_difference_is_recognised() {
    let cases = [
        (
            at(
                1,
                1,
                Role::System,
                "system \"${system}\"",
                "system \"other\"",
            ),
            DriftKind::SystemPrompt,
        ),
        (
            at(
                1,
                5,
                Role::Tool,
                "tool[toolcall_1] \"Tool 'grep' does not exist.\"",
                "tool[toolcall_1] \"3 matches\"",
            ),
            DriftKind::ToolSet,
        ),
        (
            at(
                1,
                5,
                Role::User,
                "user \"<system_notification>Agent done</system_notification>\"",
                "user \"<system_notification>Background agent finished</system_notification>\"",
            ),
            DriftKind::Notification,
        ),
        (
            at(
                1,
                5,
                Role::Tool,
                "tool[toolcall_1] \"started agent-0\"",
                "tool[toolcall_1] \"started 6e1af1f1-5ca4-464f-96d3-b157c868d887\"",
            ),
            DriftKind::AgentId,
        ),
        (
            at(1, 3, Role::User, "user \"a\"", "user \"b\""),
            DriftKind::Other,
        ),
        (
            ConversationDiff {
                conversation: 1,
                recorded_messages: 4,
                departure: Departure::PastEnd { message: 5 },
                recorded: None,
                requested: Some("user \"more\"".to_owned()),
            },
            DriftKind::NewRequest,
        ),
    ];
    for (diff, kind) in cases {
        let text = mismatch(vec![diff.clone()]);
        assert_eq!(classify_mismatch(&text).kind, kind, "{text}");
    }
    let unconsumed = ReplayMismatch::Unconsumed {
        cassette: PathBuf::from("/x.yaml"),
        answered: 1,
        never_requested: vec!["conversation 1 of 1 (4 messages): 1 of 2 replies not served; the first is message 4: assistant \"done\"".to_owned()],
        split_hint: String::new(),
    };
    let d = classify_mismatch(&unconsumed);
    assert_eq!(d.kind, DriftKind::MissingRequest);
    assert!(d.pinned.unwrap().contains("1 of 2 replies not served"));
}

#[test]
fn the_conversation_followed_furthest_decides() {
    // Conversation 1 departs at the system prompt (the session did not follow it); 2 at a tool
    // result.
    let text = mismatch(vec![
        at(1, 1, Role::System, "system \"a\"", "system \"b\""),
        at(
            2,
            6,
            Role::Tool,
            "tool[toolcall_2] \"x\"",
            "tool[toolcall_2] \"y\"",
        ),
    ]);
    assert_eq!(classify_mismatch(&text).kind, DriftKind::ToolResult);
}

fn record(name: &str, outcome: Outcome, message: Option<&str>) -> TestRecord {
    TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        name: name.to_owned(),
        test_id: format!("{name}::__copilot_eval"),
        binary: "pkg::evals".to_owned(),
        outcome,
        error_kind: None,
        duration_ms: 1,
        message: message.map(str::to_owned),
        properties: Vec::new(),
        runs: Vec::new(),
        workdir: None,
        cassette: None,
        exit: None,
        output: None,
        cost: None,
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        source: None,
        skill_eval: None,
        trigger_query: None,
        ablated: Vec::new(),
        expectations: Vec::new(),
    }
}

fn suite(version: &str, tests: Vec<TestRecord>) -> SuiteReport {
    SuiteReport {
        provenance: None,
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
        skill_lift: None,
        discrimination: None,
        judge_labels: None,
        noise_floor: None,
        baseline: None,
        schema_version: SCHEMA_VERSION.to_owned(),
        tool: ToolInfo {
            name: "copilot-eval".into(),
            version: "0".into(),
        },
        runtime: RuntimeInfo {
            version: Some(version.to_owned()),
            path: None,
            error: None,
        },
        mode: "replay".into(),
        requested_mode: None,
        started_at: String::new(),
        duration_ms: 0,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        tests,
    }
}

#[test]
fn compare_counts_drift_unchanged_and_not_compared() {
    let pinned = suite(
        "1.0.102",
        vec![
            record("a", Outcome::Passed, None),
            record("b", Outcome::Passed, None),
            record("c", Outcome::Failed, Some("x")),
            record("d", Outcome::Passed, None),
        ],
    );
    let candidate = suite(
        "1.0.92",
        vec![
            record("a", Outcome::Passed, None),
            record(
                "b",
                Outcome::Failed,
                Some("assertion failed: subagent completed"),
            ),
            record("c", Outcome::Failed, Some("x")),
            record("d", Outcome::NotRun, Some("not run: interrupted")),
        ],
    );
    let report = compare(&pinned, &candidate);
    let status: Vec<DriftStatus> = report.evals.iter().map(|e| e.status).collect();
    assert_eq!(
        status,
        [
            DriftStatus::Unchanged,
            DriftStatus::Drifted,
            DriftStatus::Unchanged,
            DriftStatus::NotCompared
        ]
    );
    let b = &report.evals[1].difference.as_ref().unwrap();
    assert_eq!(b.kind, DriftKind::Other);
    assert!(
        b.detail
            .contains("passed -> failed: assertion failed: subagent completed"),
        "{}",
        b.detail
    );
    assert_eq!(report.totals.drifted, 1);
    assert_eq!(report.totals.unchanged, 2);
    assert_eq!(report.totals.not_compared, 1);
    assert_eq!(
        report.summary,
        "1 of 3 evals drift; 1 by another difference (1 not compared: not run under one version)"
    );
    let text = render(&report);
    assert!(
        text.contains("drift: runtime 1.0.102 (pinned) -> 1.0.92"),
        "{text}"
    );
    assert!(
        text.contains("  DRIFTS        pkg::evals b (passed -> failed)"),
        "{text}"
    );
    assert!(
        text.contains("  unchanged     pkg::evals a (passed)"),
        "{text}"
    );
    let none = compare(&pinned, &pinned);
    assert_eq!(none.summary, "0 of 4 evals drift");
    assert_eq!(none.totals.drifted, 0);
}

/// With `drift --trials N`, each trial is paired with the same trial of the other run (never
/// with another trial of the same eval), and named with its trial.
#[test]
fn trials_are_compared_trial_by_trial() {
    use crate::report::TrialOf;
    let trials = |outcomes: [Outcome; 3]| -> Vec<TestRecord> {
        outcomes
            .iter()
            .enumerate()
            .map(|(i, outcome)| TestRecord {
                trial: Some(TrialOf {
                    trial: i as u32 + 1,
                    trials: 3,
                }),
                ..record("a", *outcome, None)
            })
            .collect()
    };
    let pinned = suite(
        "1.0.102",
        trials([Outcome::Passed, Outcome::Failed, Outcome::Passed]),
    );
    let candidate = suite(
        "1.0.92",
        trials([Outcome::Passed, Outcome::Failed, Outcome::Failed]),
    );
    let report = compare(&pinned, &candidate);
    let got: Vec<(Option<u32>, DriftStatus)> = report
        .evals
        .iter()
        .map(|e| (e.trial.map(|t| t.trial), e.status))
        .collect();
    assert_eq!(
        got,
        [
            (Some(1), DriftStatus::Unchanged),
            (Some(2), DriftStatus::Unchanged),
            (Some(3), DriftStatus::Drifted)
        ]
    );
    let text = render(&report);
    assert!(
        text.contains("  DRIFTS        pkg::evals a [trial 3/3] (passed -> failed)"),
        "{text}"
    );
    let json = serde_json::to_value(&report.evals[2]).unwrap();
    assert_eq!(
        (json["trial"].as_u64(), json["trials"].as_u64()),
        (Some(3), Some(3))
    );
}

#[test]
fn json_differences_name_the_path() {
    use serde_json::json;
    let a = json!({"x": [{"cancelled": false, "id": 1}], "y": 1});
    let b = json!({"x": [{"cancelled": true, "id": 1}], "y": 2});
    let (path, p, q) = classify_tests::first_json_difference("runs", &a, &b).unwrap();
    assert_eq!(path, "runs.x[0].cancelled");
    assert_eq!((p, q), (json!(false), json!(true)));
    assert!(classify_tests::first_json_difference("r", &a, &a).is_none());
    let longer = json!({"x": [1, 2]});
    let (path, _, q) =
        classify_tests::first_json_difference("r", &json!({"x": [1]}), &longer).unwrap();
    assert_eq!((path.as_str(), q), ("r.x[1]", json!(2)));
}

#[test]
fn the_schema_describes_the_report() {
    let schema = json_schema();
    for field in [
        "schema_version",
        "pinned",
        "candidate",
        "summary",
        "totals",
        "evals",
        "difference",
        "tool_set",
        "missing_request",
    ] {
        assert!(schema.contains(field), "{field} missing from the schema");
    }
}

use super::classify as classify_tests;

/// A test record whose one run ended in `replay_mismatch` with `diagnosis` (the typed value the
/// run keeps, `None` as in a results file written before it was recorded) and its error text.
fn mismatched(diagnosis: Option<ReplayMismatch>, error: &str) -> TestRecord {
    let mut run = crate::report::tests::run(StopReason::ReplayMismatch, 1);
    run.error = Some(error.to_owned());
    run.replay_diagnosis = diagnosis;
    TestRecord {
        runs: vec![run],
        ..record("a", Outcome::Error, Some("replay mismatch"))
    }
}

/// Drift classifies a run's replay failure from the typed diagnosis its record keeps, read back
/// from the JSON results as written; a record without one (an older results file) is `other`
/// with the error's first line.
#[test]
fn the_typed_diagnosis_of_a_run_record_decides_the_kind() {
    let diagnosis = mismatch(vec![at(
        1,
        4,
        Role::Tool,
        "tool[toolcall_0] \"Tool 'grep' does not exist.\"",
        "tool[toolcall_0] \"3 matches\"",
    )]);
    let passed = TestRecord {
        runs: vec![crate::report::tests::run(StopReason::Completed, 1)],
        ..record("a", Outcome::Passed, None)
    };
    // The error text says nothing a text probe could classify: the kind comes from the value.
    let written = mismatched(Some(diagnosis.clone()), "replay mismatch: (text)");
    let read: TestRecord = serde_json::from_value(serde_json::to_value(&written).unwrap()).unwrap();
    assert_eq!(read.runs[0].replay_diagnosis.as_ref(), Some(&diagnosis));
    let d = first_difference(&passed, &read);
    assert_eq!((d.kind, d.run), (DriftKind::ToolSet, Some(1)), "{d:?}");
    assert!(
        d.detail.ends_with("first difference at message 4 (tool)"),
        "{}",
        d.detail
    );

    let older = mismatched(
        None,
        "replay mismatch: model request 2 matches nothing\n  more",
    );
    let d = first_difference(&passed, &older);
    assert_eq!(d.kind, DriftKind::Other, "{d:?}");
    assert_eq!(d.detail, "replay mismatch: model request 2 matches nothing");
}
