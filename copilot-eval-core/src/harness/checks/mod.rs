//! Named checks of a run ([`Check`]): a test's own criterion with a name, recorded in the report
//! like an expectation ([`EvalContext::check`]), the trajectory checks built from the evidence
//! ([`trajectory`]), and controls that check a check before any session is spent
//! ([`controls`], [`EvalContext::check_controls`]).

pub mod controls;
pub mod trajectory;

use std::fmt;
use std::sync::Arc;

use super::EvalContext;
use crate::CopilotResult;
use crate::report::{CheckKind, ExpectationRecord};

pub use controls::Control;
pub use trajectory::Times;

/// What a check found about one result: whether it holds and what the verdict rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Whether the check holds for the result.
    pub passed: bool,
    /// What the verdict rests on, in words (e.g. `called: view, edit`).
    pub evidence: String,
}

type CheckFn = dyn Fn(&CopilotResult) -> Finding + Send + Sync;

/// A named criterion over a run's result: a closure from a [`CopilotResult`] to a [`Finding`].
///
/// Build one with [`Check::new`] (a test's own criterion, evidence in its words) or
/// [`Check::predicate`] (a plain `bool` closure), or take one from [`trajectory`]. Apply it to a
/// real run with [`EvalContext::check`] and to known-good and known-bad materials with
/// [`EvalContext::check_controls`]. Cloning is cheap (the closure is shared).
#[derive(Clone)]
pub struct Check {
    name: String,
    kind: CheckKind,
    judge: Arc<CheckFn>,
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Check")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Check {
    /// A check named `name` whose closure gives the verdict and its evidence.
    pub fn new(
        name: impl Into<String>,
        judge: impl Fn(&CopilotResult) -> Finding + Send + Sync + 'static,
    ) -> Self {
        Check {
            name: name.into(),
            kind: CheckKind::Expectation,
            judge: Arc::new(judge),
        }
    }

    /// A check named `name` from a `bool` closure; its evidence is the final answer's first
    /// line (or `no final answer`).
    pub fn predicate(
        name: impl Into<String>,
        holds: impl Fn(&CopilotResult) -> bool + Send + Sync + 'static,
    ) -> Self {
        Check::new(name, move |result| Finding {
            passed: holds(result),
            evidence: answer_evidence(result),
        })
    }

    /// A trajectory check (recorded with kind `trajectory`).
    pub(crate) fn trajectory(
        name: String,
        judge: impl Fn(&CopilotResult) -> Finding + Send + Sync + 'static,
    ) -> Self {
        Check {
            name,
            kind: CheckKind::Trajectory,
            judge: Arc::new(judge),
        }
    }

    /// The check's name, as the report shows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Apply the check to `result`.
    pub fn apply(&self, result: &CopilotResult) -> Finding {
        (self.judge)(result)
    }
}

/// The evidence of a [`Check::predicate`]: the final answer's first line, or `no final answer`.
fn answer_evidence(result: &CopilotResult) -> String {
    match result.final_response.as_deref().map(str::trim) {
        None | Some("") => "no final answer".to_owned(),
        Some(text) => {
            let line = text.lines().next().unwrap_or_default();
            format!("final answer: {line:?}")
        }
    }
}

impl EvalContext {
    /// Apply `check` to `result` and record its verdict in the report beside the test's
    /// expectations (JSON `expectations[]` with its `kind`, JUnit, HTML, `grading.json`).
    /// Returns whether it held. A check that does not hold fails the test after its body, as
    /// a failed [`EvalContext::expect`] does.
    pub fn check(&self, result: &CopilotResult, check: &Check) -> bool {
        let finding = check.apply(result);
        let record = ExpectationRecord {
            text: check.name.clone(),
            passed: finding.passed,
            evidence: finding.evidence,
            kind: check.kind,
        };
        self.update_evidence(|e| e.expectations.push(record));
        finding.passed
    }

    /// Check the check: apply `check` to each control (a known-good or known-bad material,
    /// [`Control`]) without any session, and record one verdict per control in the report
    /// (kind `control`). A control passes when the check accepts a good control or rejects a bad
    /// one. Returns whether every control passed; when one did not, the test fails after its
    /// body with `control failed: check `NAME` accepted the bad control `CONTROL`` (or
    /// `rejected the good control`), so `if !ctx.check_controls(..) { return; }` spends no
    /// session on a check that cannot tell.
    ///
    /// Each control's result is built in a folder of its own under the test's working
    /// directory (`.controls/<n>`), holding the control's files; the check sees it as the
    /// result's `working_directory`. Errors writing those files fail the control (named).
    pub fn check_controls(&self, check: &Check, controls: &[Control]) -> bool {
        let mut all = true;
        for (n, control) in controls.iter().enumerate() {
            let dir = self.workdir().join(".controls").join(n.to_string());
            let record = match control.result(self, &dir) {
                Ok(result) => controls::verdict(check, control, &result),
                Err(error) => ExpectationRecord {
                    text: controls::text(check, control),
                    passed: false,
                    evidence: error,
                    kind: CheckKind::Control,
                },
            };
            all &= record.passed;
            self.update_evidence(|e| e.expectations.push(record));
        }
        all
    }
}

#[cfg(test)]
mod tests;
