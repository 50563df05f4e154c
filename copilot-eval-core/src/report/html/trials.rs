//! The HTML report's Trials table: one row per eval run in trials, its figures (written as
//! the terminal writes them, `report::trials`) and a link to each trial that did not pass.

use serde::Serialize;

use super::text::test_anchor;
use crate::report::{Outcome, TestRecord};

/// One eval over its trials: its figures, and a link to each failed or errored trial.
#[derive(Debug, Serialize)]
pub(crate) struct TrialView {
    pub name: String,
    pub binary: String,
    /// `3/5`: passed of the trials that reached a verdict.
    pub passed: String,
    /// `60%`, or `none reached a verdict`.
    pub pass_rate: String,
    /// `23%-88%`, empty without a rate.
    pub interval: String,
    /// `pass@1 0.60, pass@5 1.00, pass^1 0.60, pass^5 0.00`.
    pub at_k: String,
    pub flaky: bool,
    pub verdict: &'static str,
    /// `every trial must pass` or `needs 80%`.
    pub rule: String,
    /// `error N, not run N`, empty when every trial ran to a verdict.
    pub incomplete: String,
    /// The trials that did not pass: (`trial 2`, the anchor of its section).
    pub not_passed: Vec<(String, String)>,
}

impl TrialView {
    pub(super) fn of(summary: &crate::report::TrialSummary, tests: &[TestRecord]) -> Self {
        let percent = crate::report::trials::percent;
        TrialView {
            name: summary.name.clone(),
            binary: summary.binary.clone(),
            passed: format!("{}/{}", summary.passed, summary.passed + summary.failed),
            pass_rate: summary
                .pass_rate
                .map_or_else(|| "none reached a verdict".to_owned(), percent),
            interval: summary
                .pass_rate_interval
                .map(|[low, high]| format!("{}-{}", percent(low), percent(high)))
                .unwrap_or_default(),
            at_k: crate::report::trials::at_k_text(summary),
            flaky: summary.flaky,
            verdict: summary.verdict.as_str(),
            rule: crate::report::trials::rule_text(summary),
            incomplete: if summary.error + summary.not_run > 0 {
                format!("error {}, not run {}", summary.error, summary.not_run)
            } else {
                String::new()
            },
            not_passed: tests
                .iter()
                .enumerate()
                .filter(|(_, t)| {
                    t.binary == summary.binary
                        && t.name == summary.name
                        && t.outcome != Outcome::Passed
                })
                .filter_map(|(i, t)| {
                    let trial = t.trial?;
                    Some((
                        format!(
                            "trial {} {}",
                            trial.trial,
                            t.outcome.as_str().replace('_', " ")
                        ),
                        test_anchor(i),
                    ))
                })
                .collect(),
        }
    }
}
