//! Expectations and skill evals in the report: each expectation's verdict (`ctx.expect`), the
//! skill eval entry a test ran (`skill_evals = ".."`), and the skill-creator `grading.json` of a
//! test (`cargo copilot-eval --grading DIR`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Outcome, TestRecord};

/// One expectation's verdict, as the test recorded it with `ctx.expect(text, passed, evidence)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExpectationRecord {
    /// The statement checked (for a skill eval, as its `evals/evals.json` writes it).
    pub text: String,
    /// Whether the test's own check found it true.
    pub passed: bool,
    /// What the verdict rests on, in the test's words (what its check saw).
    pub evidence: String,
    /// What recorded it: an expectation (`ctx.expect`, `ctx.check` with a test's own check;
    /// absent from JSON), a trajectory check (`trajectory`) or a control of a check
    /// (`control`).
    #[serde(default, skip_serializing_if = "CheckKind::is_expectation")]
    pub kind: CheckKind,
}

/// What an [`ExpectationRecord`] records: a test's expectation, a trajectory check from the
/// evidence, or a control a check was run against before any session
/// ([`crate::harness::checks`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A verdict of the test's own check of the run (`ctx.expect`, `ctx.check`).
    #[default]
    Expectation,
    /// A trajectory check (`harness::checks::trajectory`): tools in order, never called, a
    /// number of calls or of model turns.
    Trajectory,
    /// A control: whether a check accepted a known-good material or rejected a known-bad one
    /// (`ctx.check_controls`). Not an expectation of the run: `grading.json` leaves it out.
    Control,
}

impl CheckKind {
    /// Whether this is [`CheckKind::Expectation`] (the JSON leaves the default out).
    pub fn is_expectation(&self) -> bool {
        *self == CheckKind::Expectation
    }
}

/// The entry of a skill's `evals/evals.json` a test ran (`skill_evals = ".."`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillEvalRecord {
    /// The skill folder, relative to the package root, as the attribute gives it.
    pub skill: String,
    /// The entry's `id`.
    pub id: String,
    /// The entry's `prompt`.
    pub prompt: String,
    /// The entry's `expected_output`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<String>,
}

/// The skill-creator `grading.json` of one test (one trial with `--trials`), from its record:
///
/// - `expectations`: `[{text, passed, evidence}]`, the test's verdicts in order (expectations
///   and trajectory checks; a check's controls are not about the run and are left out);
/// - `summary`: `{passed, failed, total, pass_rate}` over them (`pass_rate` in 0..=1, 0 when
///   there are none);
/// - `execution_metrics`: from the evidence of the test's runs: `tool_calls` (calls per tool
///   name), `total_tool_calls`, `total_steps` (the root agent's assistant messages), `errors_encountered` (tool
///   calls that failed or were denied), `output_chars` (characters of the final responses),
///   `success` (the test passed);
/// - `timing`: `{total_duration_seconds}` of the test process;
/// - `eval`: `{name, skill, id, prompt, expected_output, trial, trials}`: which entry and trial.
pub fn grading_json(test: &TestRecord) -> Value {
    let expectations: Vec<Value> = (test.expectations.iter())
        .filter(|x| x.kind != CheckKind::Control)
        .map(|x| json!({"text": x.text, "passed": x.passed, "evidence": x.evidence}))
        .collect();
    let passed = expectations.iter().filter(|x| x["passed"] == true).count();
    let total = expectations.len();
    let mut tool_calls: BTreeMap<&str, u64> = BTreeMap::new();
    let mut errors = 0u64;
    let mut steps = 0usize;
    let mut output_chars = 0usize;
    for run in &test.runs {
        for call in &run.tool_calls {
            *tool_calls.entry(call.name.as_str()).or_default() += 1;
            if call.success == Some(false) || call.denied.is_some() {
                errors += 1;
            }
        }
        steps += (run.turns.iter())
            .filter(|t| t.role == crate::evidence::Role::Assistant)
            .count();
        output_chars += run
            .final_response
            .as_deref()
            .map_or(0, |r| r.chars().count());
    }
    let total_tool_calls: u64 = tool_calls.values().sum();
    json!({
        "eval": {
            "name": test.name,
            "skill": test.skill_eval.as_ref().map(|s| &s.skill),
            "id": test.skill_eval.as_ref().map(|s| &s.id),
            "prompt": test.skill_eval.as_ref().map(|s| &s.prompt),
            "expected_output": test.skill_eval.as_ref().and_then(|s| s.expected_output.as_ref()),
            "trial": test.trial.map(|t| t.trial),
            "trials": test.trial.map(|t| t.trials),
        },
        "expectations": expectations,
        "summary": {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": if total == 0 { 0.0 } else { passed as f64 / total as f64 },
        },
        "execution_metrics": {
            "tool_calls": tool_calls,
            "total_tool_calls": total_tool_calls,
            "total_steps": steps,
            "errors_encountered": errors,
            "output_chars": output_chars,
            "success": test.outcome == Outcome::Passed,
        },
        "timing": {
            "total_duration_seconds": test.duration_ms as f64 / 1000.0,
        },
    })
}

/// Where `--grading DIR` writes a test's `grading.json`, relative to DIR: the test's name with
/// every character other than an ASCII letter, digit, `-`, `_`, `.` or `@` as `_`
/// (`release_notes::eval_1_write` -> `release_notes__eval_1_write/grading.json`), and with trials
/// `trial-K/grading.json` under it.
pub fn grading_path(test: &TestRecord) -> std::path::PathBuf {
    let folder: String = test
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut path = std::path::PathBuf::from(folder);
    if let Some(trial) = test.trial {
        path.push(format!("trial-{}", trial.trial));
    }
    path.push("grading.json");
    path
}
