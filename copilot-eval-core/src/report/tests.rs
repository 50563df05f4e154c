//! The artifact writers: the committed schema, JSON round trip, JUnit layout, redaction, atomic
//! writes.

use super::*;
use serde_json::json;

/// A run record that stopped with `stop` and read `input` tokens (also used by the executor's
/// tests).
pub(crate) fn run(stop: StopReason, input: u64) -> RunRecord {
    let eval = crate::CopilotEval::builder().name("e").build().unwrap();
    let mut result = crate::run::result_for_tests(&eval);
    result.prompts = vec!["p".into()];
    result.model_requested = Some("claude-sonnet-4.5".into());
    result.model_used = Some("claude-sonnet-4.5".into());
    result.success = stop == StopReason::Completed;
    result.stop_reason = stop;
    result.error = None;
    result.capture_errors.clear();
    result.evidence_complete = true;
    result.tool_calls_admitted = 1;
    result.final_response = Some("done".into());
    result.duration_ms = 10;
    result.timings = crate::result::Timings::default();
    result.working_directory = "/w".into();
    let mut record = RunRecord::from_result(&result, "replay");
    record.totals = RunTotals {
        input_tokens: input,
        output_tokens: 5,
        tool_calls: 2,
        ..Default::default()
    };
    record
}

/// A test record of `name` in `binary` with `outcome` and `runs` (also used by the model
/// matrix's tests).
pub(crate) fn test(name: &str, binary: &str, outcome: Outcome, runs: Vec<RunRecord>) -> TestRecord {
    TestRecord {
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        trial: None,
        model: None,
        name: name.into(),
        test_id: format!("{name}::__copilot_eval"),
        binary: binary.into(),
        outcome,
        error_kind: (outcome == Outcome::Error).then_some(ErrorKind::Killed),
        duration_ms: 1500,
        message: (outcome != Outcome::Passed).then(|| format!("{name} went wrong\nsecond line")),
        properties: vec![Property {
            name: "verdict".into(),
            value: json!({"ok": outcome == Outcome::Passed}),
        }],
        runs,
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

/// A report of four tests, one per outcome (also used by the GitHub output's tests).
pub(crate) fn report() -> SuiteReport {
    let tests = vec![
        test(
            "a",
            "pkg::evals",
            Outcome::Passed,
            vec![run(StopReason::Completed, 100)],
        ),
        test(
            "b",
            "pkg::evals",
            Outcome::Failed,
            vec![run(StopReason::Timeout, 50)],
        ),
        test(
            "c",
            "pkg",
            Outcome::Error,
            vec![
                run(StopReason::Completed, 1),
                run(StopReason::ExecutionError, 2),
            ],
        ),
        test("d", "pkg", Outcome::NotRun, vec![]),
    ];
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
        schema_version: SCHEMA_VERSION.into(),
        tool: ToolInfo {
            name: "copilot-eval".into(),
            version: "0.1.0".into(),
        },
        runtime: RuntimeInfo::default(),
        mode: "replay".into(),
        requested_mode: None,
        started_at: "2026-01-31T09:15:02Z".into(),
        duration_ms: 4000,
        totals: SuiteTotals::of(&tests),
        cost_control: None,
        partition: None,
        pool: None,
        tests,
    }
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    check_committed_schema(
        "results.schema.json",
        &json_schema(),
        "cargo copilot-eval schema > docs/schema/results.schema.json",
    );
}

/// Fail unless `docs/schema/<file>` is `generated`; with `COPILOT_EVAL_UPDATE_SCHEMA` set, write
/// it and still fail. It compares before writing, so the check can never pass by updating the
/// file it compares against. `command` is how a user regenerates the file.
pub(crate) fn check_committed_schema(file: &str, generated: &str, command: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/schema")
        .join(file);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    if std::env::var_os("COPILOT_EVAL_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, generated).unwrap();
        panic!("docs/schema/{file}: schema updated, re-run without COPILOT_EVAL_UPDATE_SCHEMA");
    }
    panic!(
        "docs/schema/{file} is out of date: run `{command}` (or this test with COPILOT_EVAL_UPDATE_SCHEMA=1, then re-run)"
    );
}

#[test]
fn totals_count_outcomes_runs_and_stop_reasons() {
    let totals = report().totals;
    assert_eq!(
        (totals.passed, totals.failed, totals.error, totals.not_run),
        (1, 1, 1, 1)
    );
    assert_eq!(totals.runs, 4);
    assert_eq!(totals.input_tokens, 153);
    assert_eq!(totals.tool_calls, 8);
    // Keyed by each reason's text, as the JSON writes them.
    assert_eq!(totals.stop_reasons[StopReason::Completed.as_str()], 2);
    assert_eq!(totals.stop_reasons[StopReason::ExecutionError.as_str()], 1);
}

#[test]
fn json_round_trips_and_junit_parses_back() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("deep/er/native.json");
    let junit_path = dir.path().join("junit.xml");
    let report = report();
    write_json(&json_path, &report, &Redactor::default()).unwrap();
    write_junit(&junit_path, &report, &Redactor::default()).unwrap();
    let back: SuiteReport =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(back, report);

    let xml = std::fs::read_to_string(&junit_path).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(
        (junit.tests, junit.failures, junit.errors, junit.skipped),
        (4, 1, 1, 1)
    );
    let suites: Vec<&str> = junit.test_suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(suites, ["pkg::evals", "pkg"]);
    let c = &junit.test_suites[1].test_cases[0];
    assert_eq!(c.name.as_str(), "c");
    match &c.status {
        quick_junit::TestCaseStatus::NonSuccess {
            kind, message, ty, ..
        } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Error);
            assert_eq!(
                message.as_ref().unwrap().as_str(),
                "stop reason: completed, execution_error; c went wrong"
            );
            assert_eq!(ty.as_ref().unwrap().as_str(), "killed");
        }
        other => panic!("{other:?}"),
    }
    let props: Vec<(String, String)> = c
        .properties
        .iter()
        .map(|p| (p.name.as_str().to_owned(), p.value.as_str().to_owned()))
        .collect();
    for expected in [
        ("copilot_eval.model", "claude-sonnet-4.5"),
        ("copilot_eval.tokens.input", "3"),
        ("copilot_eval.tokens.output", "10"),
        ("copilot_eval.tool_calls", "4"),
        ("copilot_eval.stop_reason", "completed,execution_error"),
        ("property.verdict", "{\"ok\":false}"),
    ] {
        assert!(
            props.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} not in {props:?}"
        );
    }
    let b = &junit.test_suites[0].test_cases[1];
    assert!(matches!(
        &b.status,
        quick_junit::TestCaseStatus::NonSuccess {
            kind: quick_junit::NonSuccessKind::Failure,
            ..
        }
    ));
}

/// Each test case says whether its runs' evidence is complete (`false` as soon as one run's is
/// not) and, when a run declared one, the stop each run was expected to end with.
#[test]
fn junit_shows_incomplete_evidence_and_expected_stops() {
    let mut report = report();
    report.tests[0]
        .runs
        .push(run(StopReason::ReplayMismatch, 1));
    report.tests[0].runs[1].evidence_complete = false;
    report.tests[0].runs[1].expected_stop = Some(StopReason::ReplayMismatch);
    let junit = super::junit::to_junit(&report);
    let property = |case: &str, name: &str| {
        junit
            .test_suites
            .iter()
            .flat_map(|s| &s.test_cases)
            .find(|c| c.name.as_str() == case)
            .unwrap()
            .properties
            .iter()
            .find(|p| p.name.as_str() == name)
            .map(|p| p.value.as_str().to_owned())
    };
    assert_eq!(
        property("a", "copilot_eval.evidence_complete").as_deref(),
        Some("false")
    );
    assert_eq!(
        property("a", "copilot_eval.expected_stop").as_deref(),
        Some("none,replay_mismatch")
    );
    assert_eq!(
        property("b", "copilot_eval.evidence_complete").as_deref(),
        Some("true")
    );
    assert_eq!(property("b", "copilot_eval.expected_stop"), None);
    // A test without runs has nothing incomplete.
    assert_eq!(
        property("d", "copilot_eval.evidence_complete").as_deref(),
        Some("true")
    );
}

#[test]
fn secrets_never_reach_the_artifacts() {
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123".to_owned();
    let mut report = report();
    report.tests[0].runs[0].final_response = Some(format!("token is {secret}!"));
    report.tests[0].properties.push(Property {
        name: secret.clone(),
        value: json!([secret.clone()]),
    });
    // One character under the minimum: too short to be a secret (redacting it would blank out
    // ordinary words), so it must survive in both artifacts. Exactly the minimum is redacted.
    let short = "s".repeat(Redactor::MIN_SECRET_LEN - 1);
    let at_minimum = "m".repeat(Redactor::MIN_SECRET_LEN);
    report.tests[0].runs[0].prompts = vec![format!("short {short} minimum {at_minimum}").into()];
    report.tests[1].message = Some(format!("short {short} minimum {at_minimum}"));
    let redactor = Redactor::with_secrets([secret.clone(), short.clone(), at_minimum.clone()]);
    let dir = tempfile::tempdir().unwrap();
    write_json(&dir.path().join("r.json"), &report, &redactor).unwrap();
    write_junit(&dir.path().join("r.xml"), &report, &redactor).unwrap();
    for file in ["r.json", "r.xml"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(!text.contains(&secret), "{file} leaks the secret");
        assert!(
            !text.contains(&at_minimum),
            "{file} leaks a secret of the minimum length"
        );
        assert!(text.contains("[redacted]"), "{file}");
        assert!(
            text.contains(&format!("short {short} minimum [redacted]")),
            "{file}: a value shorter than MIN_SECRET_LEN is kept, the minimum length is redacted"
        );
    }
}

#[test]
fn atomic_writes_replace_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/out.txt");
    write_atomically(&path, b"first").unwrap();
    write_atomically(&path, b"second").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left: {leftovers:?}"
    );
}

#[test]
fn times_are_rfc3339_utc() {
    use std::time::{Duration, UNIX_EPOCH};
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    assert_eq!(
        rfc3339(UNIX_EPOCH + Duration::from_secs(1_769_850_902)),
        "2026-01-31T09:15:02Z"
    );
    assert_eq!(
        rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
        "2000-02-29T00:00:00Z"
    );
}

/// A credential this process obtained outside its environment (a `gh auth token` answer) is
/// redacted by the artifacts' redactor like an environment token.
#[test]
fn an_obtained_credential_is_redacted_in_artifacts() {
    crate::secrets::remember("gho_remembered_for_the_test");
    assert_eq!(
        Redactor::from_env().redact_str("token gho_remembered_for_the_test!"),
        "token [redacted]!"
    );
}

/// A folder on the way to an artifact that is a regular file: the error names that file (the
/// operating system's own "File exists" does not say which part of the path is in the way).
#[test]
fn a_file_in_the_way_of_the_artifact_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("results");
    std::fs::write(&blocker, "not a folder").unwrap();
    let error = write_atomically(&blocker.join("nested/r.json"), b"{}").unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(&format!("{} is a file, not a folder", blocker.display())),
        "{message}"
    );
}

/// A run record as files written before the configuration, the audit and the skill and subagent
/// evidence were typed hold them (the configuration without the fields added later, a requested
/// skill without `model_invocable`, a subagent's tool call without the later fields) still
/// reads, the missing fields as their defaults; and the typed fields write back as they read.
#[test]
fn an_older_run_record_reads_into_the_typed_fields() {
    let mut value = serde_json::to_value(run(StopReason::Completed, 1)).unwrap();
    let configuration = value["configuration"].as_object_mut().unwrap();
    for later in [
        "system_message_sections",
        "default_agent_excluded_tools",
        "fresh_runtime",
        "user_input_handler",
        "pre_tool_guards",
    ] {
        assert!(configuration.remove(later).is_some(), "{later}");
    }
    configuration.insert("max_tool_calls".into(), json!(4));
    value["audit"] = json!([{
        "request_id": "r1", "transport": "web_socket", "api": "responses", "model": "m",
        "tools": ["view", "task"], "reasoning_effort": null, "image_count": 1,
        "image_details": [null, "low"], "instructions_sha256": "ab", "continuation": true,
        "subagent": true, "agent_id": "a1", "parent_agent_id": "p", "interaction_type": null
    }]);
    value["skill_discovery"] = json!({
        "requested": [{"name": "notes", "path": "/s/notes/SKILL.md"}],
        "discovered": [], "missing": ["notes"], "disabled": [], "warnings": [], "errors": [],
        "complete": true
    });
    value["skill_invocations"] = json!([{
        "name": "notes", "path": null, "source": "custom", "trigger": "agent-invoked",
        "agent_id": null
    }]);
    value["subagent_invocations"] = json!([{
        "agent_id": "a1", "name": "reviewer", "display_name": null, "agent_type": null,
        "status": "completed", "cancelled": false, "dispatch_tool_call_id": "c1",
        "parent_agent_id": null, "prompt": "review", "duration_ms": 5, "model": null,
        "error": null, "total_tool_calls": 1, "total_tokens": null, "final_response": "ok",
        "tool_calls": [{
            "id": "c2", "name": "view", "arguments": {"path": "a"}, "result": "x",
            "success": true, "error": null, "agent_id": "a1", "duration_ms": 1,
            "completed": true, "denied": null
        }]
    }]);
    let record: RunRecord = serde_json::from_value(value.clone()).expect("an older record reads");
    let configuration = &record.configuration;
    assert_eq!(configuration.max_tool_calls, Some(4));
    assert!(configuration.system_message_sections.is_empty());
    assert_eq!(configuration.default_agent_excluded_tools, None);
    assert!(!configuration.fresh_runtime && !configuration.user_input_handler);
    assert_eq!(configuration.pre_tool_guards, 0);
    let audit = &record.request_audit[0];
    assert_eq!(audit.transport, crate::wire::Transport::WebSocket);
    assert_eq!(audit.image_details, [None, Some("low".to_owned())]);
    let discovery = record.skill_discovery.as_ref().unwrap();
    assert!(discovery.requested[0].model_invocable);
    assert_eq!(
        record.skill_invocations[0].source.as_deref(),
        Some("custom")
    );
    let subagent = &record.subagent_invocations[0];
    assert_eq!(
        subagent.status,
        crate::evidence::subagents::SubagentStatus::Completed
    );
    assert_eq!(subagent.announced_tools, None);
    let call = &subagent.tool_calls[0];
    assert_eq!(
        (call.runtime_name.as_ref(), call.denied.as_ref()),
        (None, None)
    );
    // Written back: the audit and the invocations as they were read, field for field.
    let back = serde_json::to_value(&record).unwrap();
    assert_eq!(back["audit"], value["audit"]);
    assert_eq!(back["skill_invocations"], value["skill_invocations"]);
    assert_eq!(back["configuration"]["max_tool_calls"], 4);
    assert_eq!(back["configuration"]["fresh_runtime"], false);
}

/// One tool call is one fact with one JSON shape: a subagent's call is written in the run
/// record's `subagent_invocations[].tool_calls[]` exactly as in its `tool_calls[]` (same keys,
/// same values), with every optional part absent and present; and the schema describes both
/// lists' items by one definition.
#[test]
fn a_subagents_tool_call_is_written_like_a_top_level_one() {
    use crate::evidence::subagents::SubagentInvocation;
    use crate::evidence::{CutForModel, Denial, Permission, ToolCall};
    let bare = ToolCall::started("c1", "view", json!({"path": "a.txt"}), Some("sub-1".into()));
    let full = ToolCall {
        id: "c2".into(),
        runtime_name: Some("invalid_tool_call".into()),
        result: Some("saved to a temporary file, preview ...".into()),
        success: Some(false),
        error: Some("no".into()),
        duration_ms: Some(4),
        completed: true,
        denied: Some(Denial::budget(1, "view")),
        permission: Some(Permission {
            kind: "read".into(),
            by: "auto_confirm".into(),
            outcome: Some("approved".into()),
            approved: true,
            feedback: None,
        }),
        cut_for_model: Some(CutForModel {
            full_bytes: 30_000,
            model_bytes: 28,
        }),
        structured_content: Some(json!({"k": 1})),
        telemetry: Some(json!({"metrics": {}})),
        ..bare.clone()
    };
    let eval = crate::CopilotEval::builder().name("e").build().unwrap();
    let mut result = crate::run::result_for_tests(&eval);
    result.tool_calls = vec![bare.clone(), full.clone()];
    let mut invocation = SubagentInvocation::new(Some("sub-1".into()), "reviewer".into());
    invocation.tool_calls = vec![bare, full];
    result.subagent_invocations = vec![invocation];
    let json = serde_json::to_value(RunRecord::from_result(&result, "replay")).unwrap();
    let top = &json["tool_calls"];
    let nested = &json["subagent_invocations"][0]["tool_calls"];
    assert_eq!(top.as_array().map(Vec::len), Some(2), "{json:#}");
    assert_eq!(nested, top, "a subagent's calls are written like the run's");
    let schema: Value = serde_json::from_str(&json_schema()).unwrap();
    let items = |def: &str| schema["$defs"][def]["properties"]["tool_calls"]["items"].clone();
    assert!(items("RunRecord").get("$ref").is_some(), "{schema:#}");
    assert_eq!(items("SubagentInvocation"), items("RunRecord"));
}

/// A results file of version "1" still merges: a subagent's tool call written the old way
/// (`cut_for_model: {full_bytes, model_bytes}`, unset parts `null`) is read as every tool call
/// is written now, and the merged file is of the current version.
#[cfg(feature = "runner")]
#[test]
fn a_version_1_report_still_merges() {
    use crate::evidence::subagents::SubagentInvocation;
    let mut old = serde_json::to_value(report()).unwrap();
    old["schema_version"] = json!("1");
    let mut invocation =
        serde_json::to_value(SubagentInvocation::new(Some("sub-1".into()), "r".into())).unwrap();
    invocation["tool_calls"] = json!([{
        "id": "c1", "name": "view", "runtime_name": null, "arguments": {}, "result": "preview",
        "success": true, "error": null, "agent_id": "sub-1", "duration_ms": 4,
        "completed": true, "denied": null, "permission": null,
        "cut_for_model": {"full_bytes": 30000, "model_bytes": 7}, "structured_content": null
    }]);
    old["tests"][0]["runs"][0]["subagent_invocations"] = json!([invocation]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.json");
    std::fs::write(&path, old.to_string()).unwrap();
    let options = merge::MergeOptions {
        allow_unknown_runtime: true,
    };
    let merged = merge::merge_files(&[path], options).unwrap();
    assert_eq!(merged.schema_version, SCHEMA_VERSION);
    let a = merged.tests.iter().position(|t| t.name == "a").unwrap();
    let call = &merged.tests[a].runs[0].subagent_invocations[0].tool_calls[0];
    assert_eq!(call.cut_for_model.map(|c| c.full_bytes), Some(30_000));
    assert_eq!(call.runtime_name, None);
    let written = serde_json::to_value(&merged).unwrap();
    let call = &written["tests"][a]["runs"][0]["subagent_invocations"][0]["tool_calls"][0];
    assert_eq!(call["cut_for_model_full_bytes"], json!(30_000), "{call:#}");
    assert_eq!(call.get("cut_for_model"), None, "{call:#}");
}

/// The suite's mode tells where its runs went: one mode when all share it, `mixed` otherwise,
/// the command's when nothing ran.
#[test]
fn the_suites_mode_is_its_runs_mode() {
    let with = |modes: &[&str]| {
        let runs = modes
            .iter()
            .map(|mode| RunRecord {
                mode: (*mode).to_owned(),
                ..run(StopReason::Completed, 1)
            })
            .collect();
        vec![test("a", "b", Outcome::Passed, runs)]
    };
    assert_eq!(
        suite_mode(&with(&["scripted", "scripted"]), "live"),
        "scripted"
    );
    assert_eq!(suite_mode(&with(&["replay"]), "replay"), "replay");
    assert_eq!(
        suite_mode(&with(&["scripted", "replay"]), "replay"),
        "mixed"
    );
    assert_eq!(suite_mode(&with(&[]), "live"), "live");
}
