//! Named checks without a runtime: the trajectory checks over a hand-made result, and controls
//! that catch a check accepting an empty answer (the test fails, naming the control) while the
//! same check fixed passes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;

use super::trajectory::{called_times, in_order, model_turns, never_called};
use super::{Check, Control, Finding, Times};
use crate::evidence::Role;
use crate::harness::{EvalContext, EvidenceStatus, TestConfig, TestEvidence, run_test_in};
use crate::report::CheckKind;
use crate::{CopilotResult, ToolCall, Turn};

fn result_calling(names: &[&str], assistant_turns: usize) -> CopilotResult {
    let ctx = EvalContext::with_settings(
        TestConfig::new("t", "checks::t", "/pkg"),
        Ok(crate::harness::Mode::Live),
        None,
    );
    let mut result = crate::run::result_for_tests(&ctx.eval().build().unwrap());
    result.tool_calls = (names.iter().enumerate())
        .map(|(n, name)| ToolCall::started(n.to_string(), *name, json!({}), None))
        .collect();
    result.turns = (0..assistant_turns)
        .flat_map(|_| {
            [Role::User, Role::Assistant].map(|role| Turn {
                role,
                content: String::new(),
                tool_call_ids: Vec::new(),
            })
        })
        .collect();
    result
}

#[test]
fn tools_in_order_is_a_subsequence_of_the_calls() {
    let result = result_calling(&["view", "bash", "edit", "view"], 2);
    let holds = |check: Check| check.apply(&result).passed;
    assert!(holds(in_order(["view", "edit"])));
    assert!(holds(in_order(["bash", "view"])));
    assert!(holds(in_order(["view", "view"])));
    assert!(!holds(in_order(["edit", "bash"])));
    assert!(!holds(in_order(["view", "view", "view"])));
    let finding = in_order(["edit", "bash"]).apply(&result);
    assert_eq!(finding.evidence, "called: view, bash, edit, view");
    assert_eq!(
        in_order(["view", "edit"]).name(),
        "tools called in order: view, edit"
    );
}

#[test]
fn never_called_and_call_counts_and_turns() {
    let result = result_calling(&["view", "bash", "view"], 3);
    assert!(never_called("edit").apply(&result).passed);
    assert!(!never_called("bash").apply(&result).passed);
    assert!(
        called_times("view", Times::Exactly(2))
            .apply(&result)
            .passed
    );
    assert!(
        !called_times("view", Times::Exactly(1))
            .apply(&result)
            .passed
    );
    assert!(called_times("view", Times::AtMost(2)).apply(&result).passed);
    assert!(!called_times("view", Times::AtMost(1)).apply(&result).passed);
    assert!(called_times("edit", Times::AtMost(0)).apply(&result).passed);
    assert!(
        called_times("bash", Times::AtLeast(1))
            .apply(&result)
            .passed
    );
    assert_eq!(
        called_times("view", Times::AtMost(1)).apply(&result),
        Finding {
            passed: false,
            evidence: "view called 2 times".to_owned()
        }
    );
    assert!(model_turns(Times::Exactly(3)).apply(&result).passed);
    assert!(!model_turns(Times::AtMost(2)).apply(&result).passed);
    assert_eq!(
        model_turns(Times::AtMost(2)).name(),
        "model turns: at most 2"
    );
    let empty = result_calling(&[], 0);
    assert_eq!(
        never_called("bash").apply(&empty).evidence,
        "called: no tool"
    );
}

/// Run `body` as a test would (the harness's own runner) and read its evidence.
fn run(body: impl FnOnce(EvalContext) + Send + 'static) -> (Result<(), ()>, TestEvidence) {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("evidence.json");
    let ctx = EvalContext::with_settings(
        TestConfig::new("controls", "checks::controls", "/pkg"),
        Ok(crate::harness::Mode::Live),
        Some(file.clone()),
    );
    let workdir = ctx.workdir().to_path_buf();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        run_test_in(ctx, |ctx| async move { body(ctx) })
    }));
    let evidence = TestEvidence::read(&file).unwrap();
    let _ = std::fs::remove_dir_all(workdir);
    (unwound.map_err(|_| ()), evidence)
}

fn controls() -> Vec<Control> {
    vec![
        Control::good("the release line").answer("Released 2.4.1 today."),
        Control::empty_answer(),
        Control::bad("the wrong version").answer("Released 2.4.0 today."),
    ]
}

#[test]
fn a_check_that_accepts_the_empty_answer_fails_the_test_naming_the_control() {
    // The bug: "does not mention another version" is also true of an empty answer.
    let (outcome, evidence) = run(|ctx| {
        let check = Check::predicate("names the version", |r| {
            !r.final_response.as_deref().unwrap_or("").contains("2.4.0")
        });
        assert!(!ctx.check_controls(&check, &controls()));
    });
    assert_eq!(outcome, Err(()));
    assert_eq!(evidence.status, EvidenceStatus::Failed);
    assert_eq!(
        evidence.failure.as_deref(),
        Some(
            "control failed: check `names the version` accepted the bad control `empty answer` (no final answer)"
        )
    );
    let verdicts: Vec<(&str, bool, CheckKind)> = (evidence.expectations.iter())
        .map(|x| (x.text.as_str(), x.passed, x.kind))
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "control `the release line` (good) of check `names the version`",
                true,
                CheckKind::Control
            ),
            (
                "control `empty answer` (bad) of check `names the version`",
                false,
                CheckKind::Control
            ),
            (
                "control `the wrong version` (bad) of check `names the version`",
                true,
                CheckKind::Control
            ),
        ]
    );
}

#[test]
fn the_same_check_fixed_passes_its_controls() {
    let (outcome, evidence) = run(|ctx| {
        let check = Check::predicate("names the version", |r| {
            r.final_response.as_deref().unwrap_or("").contains("2.4.1")
        });
        assert!(ctx.check_controls(&check, &controls()));
    });
    assert_eq!(outcome, Ok(()));
    assert_eq!(evidence.status, EvidenceStatus::Passed);
    assert!(evidence.expectations.iter().all(|x| x.passed));
    assert_eq!(evidence.expectations.len(), 3);
}

#[test]
fn a_control_with_files_and_tool_calls_reaches_the_check() {
    let (outcome, evidence) = run(|ctx| {
        let check = Check::new("wrote NOTES.md with edit", |r| {
            let file = std::fs::read_to_string(r.working_directory.join("docs/NOTES.md"));
            let edited = r.tool_calls.iter().any(|c| c.name == "edit");
            Finding {
                passed: file.is_ok_and(|t| t.contains("2.4.1")) && edited,
                evidence: format!("edited: {edited}"),
            }
        });
        let good = Control::good("notes written")
            .file("docs/NOTES.md", "# 2.4.1\n")
            .tool_call("edit", json!({"path": "docs/NOTES.md"}));
        let no_edit = Control::bad("file without the tool").file("docs/NOTES.md", "# 2.4.1\n");
        assert!(ctx.check_controls(&check, &[good, no_edit, Control::empty_answer()]));
    });
    assert_eq!(outcome, Ok(()));
    assert_eq!(evidence.expectations.len(), 3);
}

#[test]
fn a_trajectory_check_is_recorded_with_its_kind_and_fails_the_test() {
    let (outcome, evidence) = run(|ctx| {
        let result = result_calling(&["bash"], 1);
        assert!(!ctx.check(&result, &never_called("bash")));
        assert!(ctx.check(&result, &model_turns(Times::AtMost(1))));
    });
    assert_eq!(outcome, Err(()));
    assert_eq!(evidence.expectations[0].kind, CheckKind::Trajectory);
    assert_eq!(
        evidence.failure.as_deref(),
        Some("trajectory check failed: never called: bash (called: bash)")
    );
}
