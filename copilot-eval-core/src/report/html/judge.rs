//! What the page shows of a judge (`ctx.judge`, `ctx.judge_pair`): one table per judge, its
//! rubric with each criterion's verdict, score and reasons, its sessions and their cost, and
//! its error; and each rubric judge's criteria over an eval's trials, each pairwise judge's
//! position consistency over them. Computed from the test's
//! own [`JudgeRecord`]s and the trial summaries (never from another source).

use serde::Serialize;

use crate::report::judge_labels::JudgeLabelsReport;
use crate::report::judge_trials::{JudgeCriterionOverTrials, PairCriterionOverTrials};
use crate::report::{JudgeRecord, RunRecord};

/// One judge of a test.
#[derive(Debug, Serialize)]
pub(super) struct JudgeView {
    /// From 1, in the test's order.
    pub number: usize,
    /// `rubric` or `pairwise`.
    pub kind: &'static str,
    /// `run 1`, `runs 1 and 2`, or empty.
    pub judged: String,
    pub material: String,
    /// The judge's model, or `default`.
    pub model: String,
    /// `none`, or the tools by name.
    pub tools: String,
    pub rows: Vec<JudgeRow>,
    /// `3 samples` for a judge sampled 3 times (its rows then have an agreement column); empty
    /// for one sample.
    pub samples: String,
    /// Its verdicts are new over replayed runs ([`JudgeRecord::rejudged`]).
    pub rejudged: bool,
    /// The sessions' cost line ([`JudgeRecord::cost_line`]).
    pub cost: String,
    pub error: Option<String>,
}

/// One criterion of a judge's rubric with its verdict.
#[derive(Debug, Serialize)]
pub(super) struct JudgeRow {
    pub name: String,
    pub text: String,
    /// `pass or fail`, or `score 1 to 5`.
    pub scale: String,
    /// `pass`, `fail`, `a`, `b`, `tie`, `inconsistent`, or `no verdict` (the judge's error).
    pub verdict: String,
    /// The score, or empty.
    pub score: String,
    /// The reasons, one per session.
    pub reasons: Vec<String>,
    /// A sampled judge's agreement on the criterion, `2/3`; empty otherwise.
    pub agreement: String,
}

impl JudgeView {
    pub(super) fn of(number: usize, judge: &JudgeRecord, runs: &[RunRecord]) -> Self {
        let judged = match judge.judged_runs.as_slice() {
            [] => String::new(),
            [one] => format!("run {one}"),
            [a, b] => format!("runs {a} and {b}"),
            many => format!("runs {many:?}"),
        };
        JudgeView {
            number,
            kind: judge.kind.as_str(),
            judged,
            material: judge.material.clone(),
            model: judge.model.clone().unwrap_or_else(|| "default".into()),
            tools: if judge.tools.is_empty() {
                "none".into()
            } else {
                judge.tools.join(", ")
            },
            rows: judge
                .rubric
                .iter()
                .map(|c| {
                    let verdict = judge.verdicts.iter().find(|v| v.criterion == c.name);
                    JudgeRow {
                        name: c.name.clone(),
                        text: c.text.clone(),
                        scale: c.scale.map_or_else(
                            || "pass or fail".to_owned(),
                            |[min, max]| format!("score {min} to {max}"),
                        ),
                        verdict: verdict
                            .map_or_else(|| "no verdict".into(), |v| v.verdict.as_str().into()),
                        score: verdict
                            .and_then(|v| v.score)
                            .map(|s| s.to_string())
                            .unwrap_or_default(),
                        reasons: verdict.map(|v| v.reasons.clone()).unwrap_or_default(),
                        agreement: verdict
                            .and_then(|v| v.agreement)
                            .map(|a| a.fraction())
                            .unwrap_or_default(),
                    }
                })
                .collect(),
            samples: judge
                .samples
                .map(|n| format!("{n} samples"))
                .unwrap_or_default(),
            rejudged: judge.rejudged(runs),
            cost: judge.cost_line(),
            error: judge.error.clone(),
        }
    }
}

/// One rubric judge's criterion over an eval's trials, as the terminal writes it.
#[derive(Debug, Serialize)]
pub(crate) struct JudgeTrialView {
    pub judge: u32,
    pub criterion: String,
    /// `2/3`: passed over the trials the judge judged (judge errors left out).
    pub passed: String,
    /// `67%`; `not judged` when the judge judged no trial.
    pub pass_rate: String,
    /// `21%-94%`; empty without a rate.
    pub interval: String,
    pub judge_errors: u32,
}

impl JudgeTrialView {
    pub(crate) fn of(c: &JudgeCriterionOverTrials) -> Self {
        let percent = crate::report::trials::percent;
        let (pass_rate, interval) = match (c.pass_rate, c.pass_rate_interval) {
            (Some(rate), Some([low, high])) => {
                (percent(rate), format!("{}-{}", percent(low), percent(high)))
            }
            _ => ("not judged".to_owned(), String::new()),
        };
        JudgeTrialView {
            judge: c.judge,
            criterion: c.criterion.clone(),
            passed: format!("{}/{}", c.passed, c.judged),
            pass_rate,
            interval,
            judge_errors: c.judge_errors,
        }
    }
}

/// One pairwise judge's criterion over an eval's trials: its position consistency.
#[derive(Debug, Serialize)]
pub(crate) struct PairTrialView {
    pub judge: u32,
    pub criterion: String,
    /// `2/3`: trials whose two orders agreed, of the trials the judge judged.
    pub consistent: String,
    /// `67%`; `not judged` when the judge judged no trial.
    pub consistency: String,
    /// `21%-94%`; empty without a rate.
    pub interval: String,
    pub judge_errors: u32,
}

impl PairTrialView {
    pub(crate) fn of(c: &PairCriterionOverTrials) -> Self {
        let percent = crate::report::trials::percent;
        let (consistency, interval) = match (c.consistency, c.consistency_interval) {
            (Some(rate), Some([low, high])) => {
                (percent(rate), format!("{}-{}", percent(low), percent(high)))
            }
            _ => ("not judged".to_owned(), String::new()),
        };
        PairTrialView {
            judge: c.judge,
            criterion: c.criterion.clone(),
            consistent: format!("{}/{}", c.consistent, c.judged),
            consistency,
            interval,
            judge_errors: c.judge_errors,
        }
    }
}

/// The suite's judges against a person's labels (`--judge-labels`).
#[derive(Debug, Serialize)]
pub(crate) struct LabelsView {
    pub file: String,
    pub labels: u32,
    pub rows: Vec<LabelRow>,
    pub unmatched: Vec<String>,
}

/// One eval's judge and criterion against the labels.
#[derive(Debug, Serialize)]
pub(crate) struct LabelRow {
    pub binary: String,
    pub eval: String,
    pub judge: u32,
    pub criterion: String,
    pub n: u32,
    /// `7/10 (70%)`; `none` when n is 0.
    pub agreed: String,
    /// `0.35`; `undefined` without a kappa.
    pub kappa: String,
    pub judge_pass_label_fail: u32,
    pub judge_fail_label_pass: u32,
    pub judge_errors: u32,
}

impl LabelsView {
    pub(crate) fn of(report: &JudgeLabelsReport) -> Self {
        LabelsView {
            file: report.file.clone(),
            labels: report.labels,
            rows: (report.criteria.iter())
                .map(|r| LabelRow {
                    binary: r.binary.clone(),
                    eval: r.eval.clone(),
                    judge: r.judge,
                    criterion: r.criterion.clone(),
                    n: r.n,
                    agreed: r.agreement.map_or_else(
                        || "none".to_owned(),
                        |a| {
                            format!(
                                "{}/{} ({})",
                                r.both_pass + r.both_fail,
                                r.n,
                                crate::report::trials::percent(a)
                            )
                        },
                    ),
                    kappa: r
                        .kappa
                        .map_or_else(|| "undefined".to_owned(), |k| format!("{k:.2}")),
                    judge_pass_label_fail: r.judge_pass_label_fail,
                    judge_fail_label_pass: r.judge_fail_label_pass,
                    judge_errors: r.judge_errors,
                })
                .collect(),
            unmatched: report.unmatched.clone(),
        }
    }
}
