//! What the page shows of a judge (`ctx.judge`, `ctx.judge_pair`): one table per judge, its
//! rubric with each criterion's verdict, score and reasons, its sessions and their cost, and
//! its error; and each rubric judge's criteria over an eval's trials. Computed from the test's
//! own [`JudgeRecord`]s and the trial summaries (never from another source).

use serde::Serialize;

use crate::report::JudgeRecord;
use crate::report::judge_trials::JudgeCriterionOverTrials;

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
}

impl JudgeView {
    pub(super) fn of(number: usize, judge: &JudgeRecord) -> Self {
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
                    }
                })
                .collect(),
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
