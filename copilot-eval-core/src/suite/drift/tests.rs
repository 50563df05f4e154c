//! The classifier on the replay engine's own diagnosis texts, and the comparison's verdicts.

use std::path::PathBuf;

use super::*;
use crate::cassette::{ConversationDiff, ReplayMiss};
use crate::report::{SCHEMA_VERSION, SuiteTotals, ToolInfo};

/// The text a run's error holds for `miss` (as `ReplayCheck::failure` writes it).
fn mismatch_text(conversations: Vec<ConversationDiff>) -> String {
    let miss = ReplayMiss {
        cassette: PathBuf::from("/repo/tests/cassettes/evals/x.yaml"),
        request: 2,
        reason: "matches no recorded conversation".to_owned(),
        request_messages: vec!["system \"${system}\"".to_owned()],
        conversations,
    };
    format!("run failed; replay mismatch: {miss}")
}

fn at(
    conversation: usize,
    message: usize,
    role: &str,
    recorded: &str,
    request: &str,
) -> ConversationDiff {
    ConversationDiff {
        conversation,
        recorded_messages: 6,
        first_difference: Some(message),
        explanation: format!("first difference at message {message} ({role})"),
        recorded: Some(recorded.to_owned()),
        requested: Some(request.to_owned()),
    }
}

#[test]
fn a_changed_tool_result_is_named_with_both_texts() {
    let text = mismatch_text(vec![
        at(1, 2, "user", "user \"Say hello.\"", "user \"Say bye.\""),
        at(
            2,
            4,
            "tool",
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
            at(1, 1, "system", "system \"${system}\"", "system \"other\""),
            DriftKind::SystemPrompt,
        ),
        (
            at(
                1,
                5,
                "tool",
                "tool[toolcall_1] \"Tool 'grep' does not exist.\"",
                "tool[toolcall_1] \"3 matches\"",
            ),
            DriftKind::ToolSet,
        ),
        (
            at(
                1,
                5,
                "user",
                "user \"<system_notification>Agent done</system_notification>\"",
                "user \"<system_notification>Background agent finished</system_notification>\"",
            ),
            DriftKind::Notification,
        ),
        (
            at(
                1,
                5,
                "tool",
                "tool[toolcall_1] \"started agent-0\"",
                "tool[toolcall_1] \"started 6e1af1f1-5ca4-464f-96d3-b157c868d887\"",
            ),
            DriftKind::AgentId,
        ),
        (
            at(1, 3, "user", "user \"a\"", "user \"b\""),
            DriftKind::Other,
        ),
        (
            ConversationDiff {
                conversation: 1,
                recorded_messages: 4,
                first_difference: Some(5),
                explanation:
                    "the request goes on past the end of the recording: message 5 is extra"
                        .to_owned(),
                recorded: None,
                requested: Some("user \"more\"".to_owned()),
            },
            DriftKind::NewRequest,
        ),
    ];
    for (diff, kind) in cases {
        let text = mismatch_text(vec![diff.clone()]);
        assert_eq!(classify_mismatch(&text).kind, kind, "{text}");
    }
    let unconsumed = "replay mismatch: the session ended before the cassette /x.yaml was fully replayed (1 model requests answered); recorded replies never requested:\n  conversation 1 of 1 (4 messages): 1 of 2 replies not served; the first is message 4: assistant \"done\"";
    let d = classify_mismatch(unconsumed);
    assert_eq!(d.kind, DriftKind::MissingRequest);
    assert!(d.pinned.unwrap().contains("1 of 2 replies not served"));
}

#[test]
fn the_conversation_followed_furthest_decides() {
    // Conversation 1 departs at the system prompt (the session did not follow it); 2 at a tool
    // result.
    let text = mismatch_text(vec![
        at(1, 1, "system", "system \"a\"", "system \"b\""),
        at(
            2,
            6,
            "tool",
            "tool[toolcall_2] \"x\"",
            "tool[toolcall_2] \"y\"",
        ),
    ]);
    assert_eq!(classify_mismatch(&text).kind, DriftKind::ToolResult);
}

fn record(name: &str, outcome: Outcome, message: Option<&str>) -> TestRecord {
    TestRecord {
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
        expectations: Vec::new(),
    }
}

fn suite(version: &str, tests: Vec<TestRecord>) -> SuiteReport {
    SuiteReport {
        trial_summaries: Vec::new(),
        model_matrix: Vec::new(),
        skill_triggers: Vec::new(),
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
