//! Expectations and skill evals in the report: each expectation's verdict (`ctx.expect`), the
//! skill eval entry a test ran (`skill_evals = ".."`), and the skill-creator `grading.json` of a
//! test (`cargo copilot-eval --grading DIR`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::TestRecord;

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
    /// The skill's name, from its `SKILL.md` front matter (`name`), read by the test process
    /// when the test started; absent when the folder's `SKILL.md` could not be loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
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

/// The skill-creator `grading.json` of one test (one trial with `--trials`), from its record,
/// with the fields skill-creator's `references/schemas.md` defines:
///
/// - `expectations`: `[{text, passed, evidence}]`, the test's verdicts in order (expectations
///   and trajectory checks; a check's controls are not about the run and are left out);
/// - `summary`: `{passed, failed, total, pass_rate}` over them (`pass_rate` in 0..=1, 0 when
///   there are none);
/// - `execution_metrics`: what the sessions did ([`execution_metrics`]), never the test's
///   verdict;
/// - `timing`: `{total_duration_seconds}` of the test process;
/// - `eval`: `{name, skill, skill_path, id, prompt, expected_output, trial, trials}`: which
///   entry and trial; `skill` is the skill's name (its `SKILL.md` `name`), `skill_path` its
///   folder.
pub fn grading_json(test: &TestRecord) -> Value {
    let expectations: Vec<Value> = (test.expectations.iter())
        .filter(|x| x.kind != CheckKind::Control)
        .map(|x| json!({"text": x.text, "passed": x.passed, "evidence": x.evidence}))
        .collect();
    let passed = expectations.iter().filter(|x| x["passed"] == true).count();
    let total = expectations.len();
    let entry = test.skill_eval.as_ref();
    json!({
        "eval": {
            "name": test.name,
            "skill": entry.and_then(|s| s.name.as_ref()),
            "skill_path": entry.map(|s| &s.skill),
            "id": entry.map(|s| &s.id),
            "prompt": entry.map(|s| &s.prompt),
            "expected_output": entry.and_then(|s| s.expected_output.as_ref()),
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
        "execution_metrics": execution_metrics(test),
        "timing": {
            "total_duration_seconds": test.duration_ms as f64 / 1000.0,
        },
    })
}

/// skill-creator's `execution_metrics`, from the evidence of the test's runs (judge sessions
/// left out: they are not the executor):
///
/// - `tool_calls` (calls per tool name) and `total_tool_calls`;
/// - `total_steps`: the root agent's assistant messages;
/// - `errors_encountered`: tool calls that failed or were denied, and runs that ended with an
///   error;
/// - `output_chars`: "total character count of output files": the characters the sessions
///   wrote into files with the runtime's file tools (a successful `create`'s `file_text`, an
///   `edit`'s `new_str`); a file a shell command wrote is not counted;
/// - `transcript_chars`: "character count of transcript": every message's text (the prompts
///   and the assistant's messages) and every tool call's arguments and result.
pub fn execution_metrics(test: &TestRecord) -> Value {
    let mut tool_calls: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut errors, mut steps, mut output, mut transcript) = (0u64, 0usize, 0usize, 0usize);
    let executor = test
        .runs
        .iter()
        .filter(|r| r.label.as_deref() != Some("judge"));
    for run in executor {
        errors += u64::from(run.error.is_some());
        for call in &run.tool_calls {
            *tool_calls.entry(call.name.as_str()).or_default() += 1;
            if call.success == Some(false) || call.denied.is_some() {
                errors += 1;
            }
            output += written_chars(call);
            transcript += call.arguments.to_string().chars().count();
            transcript += call.result.as_deref().map_or(0, |r| r.chars().count());
        }
        for turn in &run.turns {
            steps += usize::from(turn.role == crate::evidence::Role::Assistant);
            transcript += turn.content.chars().count();
        }
    }
    json!({
        "tool_calls": tool_calls,
        "total_tool_calls": tool_calls.values().sum::<u64>(),
        "total_steps": steps,
        "errors_encountered": errors,
        "output_chars": output,
        "transcript_chars": transcript,
    })
}

/// The characters a successful file-tool call wrote: `create`'s `file_text`, `edit`'s
/// `new_str`; 0 for any other call.
fn written_chars(call: &crate::evidence::ToolCall) -> usize {
    let key = match call.name.as_str() {
        "create" => "file_text",
        "edit" => "new_str",
        _ => return 0,
    };
    if call.success != Some(true) {
        return 0;
    }
    call.arguments[key]
        .as_str()
        .map_or(0, |t| t.chars().count())
}

/// Where `--grading DIR` writes a test's `grading.json`, relative to DIR: the test's name with
/// every character other than an ASCII letter, digit, `-`, `_`, `.` or `@` as `_`
/// (`release_notes::eval_1_write` -> `release_notes__eval_1_write/grading.json`), and with trials
/// `trial-K/grading.json` under it. In a suite run with `--ablate` (`ablation`), skill-creator's
/// layout: each eval's folder holds `with_skill/` (the normal side) and `without_skill/` (the
/// ablated side, its record named `<eval> (without skills)`), the trials under each.
pub fn grading_path(test: &TestRecord, ablation: bool) -> std::path::PathBuf {
    let name = match test.ablated.is_empty() {
        true => test.name.as_str(),
        false => (test.name.rsplit_once(" (without ")).map_or(test.name.as_str(), |(n, _)| n),
    };
    let folder: String = name
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
    if ablation {
        path.push(match test.ablated.is_empty() {
            true => "with_skill",
            false => "without_skill",
        });
    }
    if let Some(trial) = test.trial {
        path.push(format!("trial-{}", trial.trial));
    }
    path.push("grading.json");
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StopReason;
    use crate::evidence::{Role, ToolCall, Turn};
    use crate::report::Outcome;

    fn call(name: &str, arguments: Value, success: bool, result: &str) -> ToolCall {
        let mut call = ToolCall::started("c", name, arguments, None);
        call.success = Some(success);
        call.completed = true;
        call.result = Some(result.to_owned());
        call
    }

    fn turn(role: Role, content: &str) -> Turn {
        Turn {
            role,
            content: content.to_owned(),
            tool_call_ids: Vec::new(),
        }
    }

    /// `execution_metrics` says what the session did, in skill-creator's fields: not the
    /// test's verdict (no `success`: a failed test whose session ran cleanly has no error),
    /// `output_chars` the characters written into files, `transcript_chars` the transcript's;
    /// `eval.skill` is the skill's name and `eval.skill_path` its folder.
    #[test]
    fn execution_metrics_come_from_the_session_in_skill_creators_fields() {
        let mut run = crate::report::tests::run(StopReason::Completed, 1);
        run.result.turns = vec![
            turn(Role::User, "write it"),
            turn(Role::Assistant, "ok"),
            turn(Role::Assistant, "done"),
        ];
        run.result.tool_calls = vec![
            call(
                "create",
                json!({"path": "/w/a.md", "file_text": "hello"}),
                true,
                "made",
            ),
            call(
                "create",
                json!({"path": "/w/b.md", "file_text": "refused"}),
                false,
                "",
            ),
            call(
                "edit",
                json!({"path": "/w/a.md", "new_str": "héllo!"}),
                true,
                "ok",
            ),
            call("view", json!({"path": "/w/a.md"}), true, "hello"),
        ];
        let mut judge = crate::report::tests::run(StopReason::Completed, 1);
        judge.label = Some("judge".into());
        judge.result.tool_calls = vec![call("view", json!({}), true, "x")];
        let mut test = crate::report::tests::test("e", "p::t", Outcome::Failed, vec![run, judge]);
        test.skill_eval = Some(SkillEvalRecord {
            name: Some("changelog".into()),
            skill: "skills/changelog".into(),
            id: "1".into(),
            prompt: "write it".into(),
            expected_output: None,
        });
        let grading = grading_json(&test);
        let arguments: usize = [
            json!({"path": "/w/a.md", "file_text": "hello"}),
            json!({"path": "/w/b.md", "file_text": "refused"}),
            json!({"path": "/w/a.md", "new_str": "héllo!"}),
            json!({"path": "/w/a.md"}),
        ]
        .iter()
        .map(|a| a.to_string().chars().count())
        .sum();
        let transcript = "write it".len() + 2 + 4 + arguments + "made".len() + 2 + 5;
        assert_eq!(
            grading["execution_metrics"],
            json!({
                "tool_calls": {"create": 2, "edit": 1, "view": 1},
                "total_tool_calls": 4,
                "total_steps": 2,
                "errors_encountered": 1,
                "output_chars": 5 + 6,
                "transcript_chars": transcript,
            })
        );
        assert_eq!(grading["eval"]["skill"], "changelog");
        assert_eq!(grading["eval"]["skill_path"], "skills/changelog");
    }

    /// With `--ablate`, each eval's grading goes to skill-creator's `with_skill/` and
    /// `without_skill/` folders, the trials under each; without it, the eval's own folder.
    #[test]
    fn an_ablated_suite_grades_with_skill_and_without_skill_apart() {
        let mut with = crate::report::tests::test("m::eval_1", "p::t", Outcome::Passed, vec![]);
        with.trial = Some(crate::report::trials::TrialOf {
            trial: 2,
            trials: 3,
        });
        let mut without = with.clone();
        without.name =
            crate::report::lift::ablated_name("m::eval_1", &[crate::eval::Ablate::Skills]);
        without.ablated = vec![crate::eval::Ablate::Skills];
        let path = |t: &TestRecord, ablation| grading_path(t, ablation).display().to_string();
        assert_eq!(
            path(&with, true),
            "m__eval_1/with_skill/trial-2/grading.json"
        );
        assert_eq!(
            path(&without, true),
            "m__eval_1/without_skill/trial-2/grading.json"
        );
        assert_eq!(path(&with, false), "m__eval_1/trial-2/grading.json");
    }
}
