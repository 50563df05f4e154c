//! Controls: known-good and known-bad materials (a final answer, files, tool calls) a check is
//! run against before any session ([`EvalContext::check_controls`]), so a check that accepts an
//! empty answer or rejects a right one is found before it grades a real run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Check, EvalContext};
use crate::report::{CheckKind, ExpectationRecord};
use crate::{CopilotResult, StopReason, ToolCall};

/// Whether a control is one the check must accept or one it must reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A known-good material: the check must hold.
    Accept,
    /// A known-bad material (an obvious mistake, an empty answer): the check must not hold.
    Reject,
}

/// One control: a named material, good or bad, from which a result is built as if a session
/// had ended with it (`success` true, stop `completed`, the given final answer, files and tool
/// calls). Build with [`Control::good`], [`Control::bad`] or [`Control::empty_answer`], then
/// [`Control::answer`], [`Control::file`], [`Control::tool_call`].
#[derive(Debug, Clone, PartialEq)]
pub struct Control {
    name: String,
    expected: Expected,
    answer: Option<String>,
    files: Vec<(PathBuf, Vec<u8>)>,
    tool_calls: Vec<(String, Value)>,
}

impl Control {
    /// A known-good control named `name`: the check must accept it.
    pub fn good(name: impl Into<String>) -> Self {
        Control::named(name.into(), Expected::Accept)
    }

    /// A known-bad control named `name`: the check must reject it.
    pub fn bad(name: impl Into<String>) -> Self {
        Control::named(name.into(), Expected::Reject)
    }

    /// The bad control every check should reject: `empty answer` (an empty final answer, no
    /// files, no tool calls).
    pub fn empty_answer() -> Self {
        Control::bad("empty answer").answer("")
    }

    fn named(name: String, expected: Expected) -> Self {
        Control {
            name,
            expected,
            answer: None,
            files: Vec::new(),
            tool_calls: Vec::new(),
        }
    }

    /// The control's final answer (the result's `final_response`).
    pub fn answer(mut self, text: impl Into<String>) -> Self {
        self.answer = Some(text.into());
        self
    }

    /// A file the control's working directory holds, at `path` relative to it.
    pub fn file(mut self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }

    /// A completed, successful tool call `name` with `arguments`, in the order given.
    pub fn tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push((name.into(), arguments));
        self
    }

    /// The control's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the check must accept or reject it.
    pub fn expected(&self) -> Expected {
        self.expected
    }

    /// The result a check sees for this control: the test's eval settings, `dir` as the
    /// working directory (created, holding the control's files), the answer and tool calls.
    /// Errors name the file that could not be written.
    pub(super) fn result(&self, ctx: &EvalContext, dir: &Path) -> Result<CopilotResult, String> {
        let write = |path: &Path, contents: &[u8]| -> Result<(), String> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            std::fs::write(path, contents)
                .map_err(|e| format!("cannot write the control's file {}: {e}", path.display()))
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (path, contents) in &self.files {
            write(&dir.join(path), contents)?;
        }
        let eval = ctx
            .eval()
            .working_directory(dir)
            .build()
            .map_err(|e| format!("cannot build the control's eval: {e}"))?;
        let mut result = crate::run::result_without_session(&eval, dir.to_path_buf());
        result.success = true;
        result.stop_reason = StopReason::Completed;
        result.error = None;
        result.final_response = self.answer.clone();
        result.tool_calls = self
            .tool_calls
            .iter()
            .enumerate()
            .map(|(n, (name, arguments))| {
                let mut call =
                    ToolCall::started(format!("control-{n}"), name, arguments.clone(), None);
                call.completed = true;
                call.success = Some(true);
                call
            })
            .collect();
        Ok(result)
    }
}

/// The report's text for `control` under `check`: `control `NAME` (good|bad) of check `CHECK``.
pub(super) fn text(check: &Check, control: &Control) -> String {
    let side = match control.expected {
        Expected::Accept => "good",
        Expected::Reject => "bad",
    };
    format!(
        "control `{}` ({side}) of check `{}`",
        control.name, check.name
    )
}

/// Apply `check` to the control's `result` and say whether it answered as the control expects.
pub(super) fn verdict(
    check: &Check,
    control: &Control,
    result: &CopilotResult,
) -> ExpectationRecord {
    let finding = check.apply(result);
    let (passed, what) = match (control.expected, finding.passed) {
        (Expected::Accept, true) => (true, "accepted the good control"),
        (Expected::Accept, false) => (false, "rejected the good control"),
        (Expected::Reject, false) => (true, "rejected the bad control"),
        (Expected::Reject, true) => (false, "accepted the bad control"),
    };
    ExpectationRecord {
        text: text(check, control),
        passed,
        evidence: format!(
            "check `{}` {what} `{}` ({})",
            check.name, control.name, finding.evidence
        ),
        kind: CheckKind::Control,
    }
}
