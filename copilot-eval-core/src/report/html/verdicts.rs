//! The HTML report's Verdicts section, the page's first: one row per eval
//! (`report::verdicts`), its figures written as the terminal writes them.

use serde::Serialize;

use crate::report::SuiteReport;
use crate::report::trials::percent;
use crate::report::verdicts::{EvalVerdict, headline, leads_with_decision, verdicts};

/// The Verdicts section: the headline and one row per eval.
#[derive(Debug, Serialize)]
pub(super) struct VerdictsView {
    /// `29 evals, 87 trials, 5 evals failed`.
    pub headline: String,
    /// With `--baseline`: `vs BASE.json (started): 0 regressed, ...`.
    pub baseline: Option<String>,
    pub rows: Vec<VerdictRow>,
}

/// One eval's row.
#[derive(Debug, Serialize)]
pub(super) struct VerdictRow {
    pub name: String,
    pub binary: String,
    /// `2/3`.
    pub passed: String,
    /// `67%`, or `n/a` when no trial reached a verdict.
    pub rate: String,
    /// `21%-94%`, or `n/a`.
    pub interval: String,
    /// `passed`, `failed`, `error` or `not_run`.
    pub verdict: &'static str,
    /// What changed between the sides (`report::verdicts::EvalVerdict::changed`).
    pub changed: Vec<String>,
}

impl VerdictsView {
    /// The section of `report`, when it leads with the decision (trials, models, comparisons
    /// or an ablation); `None` otherwise.
    pub(super) fn of(report: &SuiteReport) -> Option<Self> {
        if !leads_with_decision(report) {
            return None;
        }
        let evals = verdicts(report);
        Some(VerdictsView {
            headline: headline(report, &evals),
            baseline: report.baseline.as_ref().map(|b| b.headline()),
            rows: evals.iter().map(VerdictRow::of).collect(),
        })
    }
}

impl VerdictRow {
    fn of(eval: &EvalVerdict) -> Self {
        VerdictRow {
            name: eval.name.clone(),
            binary: eval.binary.clone(),
            passed: format!("{}/{}", eval.passed, eval.decided),
            rate: eval.pass_rate.map_or("n/a".to_owned(), percent),
            interval: eval.interval.map_or("n/a".to_owned(), |[low, high]| {
                format!("{}-{}", percent(low), percent(high))
            }),
            verdict: eval.verdict.as_str(),
            changed: eval.changed.clone(),
        }
    }
}
