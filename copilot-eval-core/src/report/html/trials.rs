//! The HTML report's Trials table: one row per eval run in trials, its figures (written as
//! the terminal writes them, `report::trials`) and a link to each trial that did not pass; then,
//! for evals that compare (`ctx.compare`), each comparison criterion over the trials
//! (`report::compare_trials`).

use serde::Serialize;

use super::text::test_anchor;
use crate::report::compare_trials::{p_text, points, side_text};
use crate::report::{CriterionOverTrials, Outcome, TestRecord};

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
    /// Each comparison criterion over the trials (`report::compare_trials`).
    pub comparisons: Vec<CriterionView>,
    /// Each rubric judge's criterion over the trials (`report::judge_trials`).
    pub judges: Vec<super::judge::JudgeTrialView>,
    /// Each pairwise judge's criterion over the trials: its position consistency.
    pub pairs: Vec<super::judge::PairTrialView>,
}

/// One comparison criterion of an eval over its trials, written as the terminal writes it.
#[derive(Debug, Serialize)]
pub(crate) struct CriterionView {
    /// `1`: the comparison's position in the test.
    pub comparison: u32,
    pub criterion: String,
    /// `1/6 (17%)`.
    pub baseline: String,
    /// `6/6 (100%)`.
    pub treatment: String,
    /// `+83 points`.
    pub difference: String,
    /// `0.0152`, or `< 0.0001`.
    pub p_value: String,
    /// `significant`, `no_difference` or `underpowered` (a CSS class).
    pub verdict: &'static str,
    /// `significant`, `no difference` or `underpowered`.
    pub verdict_words: &'static str,
}

impl CriterionView {
    fn of(c: &CriterionOverTrials) -> Self {
        CriterionView {
            comparison: c.comparison,
            criterion: c.criterion.clone(),
            baseline: side_text(c.baseline_passed, c.trials, c.baseline_rate),
            treatment: side_text(c.treatment_passed, c.trials, c.treatment_rate),
            difference: points(c.difference),
            p_value: p_text(c.p_value),
            verdict: c.verdict.as_str(),
            verdict_words: c.verdict.words(),
        }
    }
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
            at_k: [
                Some(crate::report::trials::at_k_text(summary)),
                crate::report::trials::not_estimated_text(summary),
            ]
            .into_iter()
            .flatten()
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
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
            comparisons: summary
                .comparison_criteria
                .iter()
                .map(CriterionView::of)
                .collect(),
            judges: summary
                .judge_criteria
                .iter()
                .map(super::judge::JudgeTrialView::of)
                .collect(),
            pairs: summary
                .pair_criteria
                .iter()
                .map(super::judge::PairTrialView::of)
                .collect(),
        }
    }
}
