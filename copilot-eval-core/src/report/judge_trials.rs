//! Judges over trials: an eval that calls `ctx.judge` and runs in trials (`cargo copilot-eval
//! --trials N`) gets, per criterion of each rubric judge, how many trials the judge passed it
//! and that pass rate with its 95% Wilson interval ([`JudgeCriterionOverTrials`], one list per
//! eval in [`TrialSummary::judge_criteria`](super::TrialSummary::judge_criteria)).
//!
//! A criterion is matched across trials by its judge's position in the test (the first
//! `ctx.judge` is judge 1) and its name. Only trials that reached a verdict (`passed` or
//! `failed`) count, as for the eval's pass rate. A trial whose judge gave no verdict (its
//! answer did not parse, its session failed) is a judge error: counted in `judge_errors`,
//! and left out of the pass rate, whose denominator is the trials the judge judged (`judged`):
//! a judge that failed to answer says nothing about the criterion.
//!
//! A pairwise judge's verdicts are preferences, not passes: per criterion it gets its position
//! consistency instead ([`PairCriterionOverTrials`], in
//! [`TrialSummary::pair_criteria`](super::TrialSummary::pair_criteria)): in how many of the
//! trials it judged both orders agreed (any verdict but `inconsistent`), with the rate's 95%
//! Wilson interval. A judge that prefers whatever it reads first has a low one; its
//! preferences say little about the material.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compare_trials::counts_of;
use super::{JudgeKind, JudgeVerdict, Outcome, TestRecord};
use crate::stats;

/// One criterion of one rubric judge of an eval, over the eval's trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeCriterionOverTrials {
    /// The judge's position in the test, from 1 (the test's `judges[]` order).
    pub judge: u32,
    /// The criterion's name.
    pub criterion: String,
    /// Trials that reached a verdict and ran this judge (`judged` plus `judge_errors`).
    pub trials: u32,
    /// Of those, trials in which the judge gave verdicts: the pass rate's denominator.
    #[serde(default)]
    pub judged: u32,
    /// Trials in which the judge's verdict on the criterion was `pass`.
    pub passed: u32,
    /// Trials in which the judge gave no verdict (an error: its answer did not parse, its
    /// session failed): counted in `trials`, never in `judged` nor in the pass rate.
    pub judge_errors: u32,
    /// `passed / judged`, a fraction in [0, 1]; absent when `judged` is 0 (every trial's judge
    /// failed: no rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// The 95% Wilson score interval of `pass_rate`, `[low, high]` fractions; absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_interval: Option<[f64; 2]>,
}

/// One criterion of one pairwise judge of an eval, over the eval's trials: how often its two
/// orders agreed (its position consistency).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairCriterionOverTrials {
    /// The judge's position in the test, from 1 (the test's `judges[]` order).
    pub judge: u32,
    /// The criterion's name.
    pub criterion: String,
    /// Trials that reached a verdict and ran this judge (`judged` plus `judge_errors`).
    pub trials: u32,
    /// Of those, trials in which the judge gave verdicts: the rate's denominator.
    pub judged: u32,
    /// Trials in which both orders agreed on the criterion (the verdict is `a`, `b` or `tie`,
    /// not `inconsistent`).
    pub consistent: u32,
    /// Trials in which the judge gave no verdict (an error): never in `judged` nor the rate.
    pub judge_errors: u32,
    /// `consistent / judged`, a fraction in [0, 1]: the position consistency; absent when
    /// `judged` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<f64>,
    /// The 95% Wilson score interval of `consistency`, `[low, high]`; absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency_interval: Option<[f64; 2]>,
}

/// Each criterion of each pairwise judge in `records` (one eval's trials), over the trials
/// that reached a verdict: in how many both orders agreed; in the order of the judges, then of
/// each judge's rubric. Empty when no such trial ran a pairwise judge.
pub fn aggregate_pairs(records: &[&TestRecord]) -> Vec<PairCriterionOverTrials> {
    // (judge, criterion) -> (trials, consistent, errors)
    let mut tables: Vec<((u32, String), [u32; 3])> = Vec::new();
    let judged = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Passed | Outcome::Failed));
    for record in judged {
        for (index, judge) in record.judges.iter().enumerate() {
            if judge.kind != JudgeKind::Pairwise {
                continue;
            }
            for criterion in &judge.rubric {
                let counts = counts_of(&mut tables, (index as u32 + 1, criterion.name.clone()));
                counts[0] += 1;
                let verdict = (judge.verdicts.iter())
                    .find(|v| v.criterion == criterion.name)
                    .map(|v| v.verdict);
                let judged = judge.error.is_none() && verdict.is_some();
                counts[1] += u32::from(judged && verdict != Some(JudgeVerdict::Inconsistent));
                counts[2] += u32::from(!judged);
            }
        }
    }
    tables.sort_by_key(|((judge, _), _)| *judge);
    tables
        .into_iter()
        .map(|((judge, criterion), [trials, consistent, judge_errors])| {
            let judged = trials - judge_errors;
            let (consistency, consistency_interval) = stats::rate_with_interval(consistent, judged);
            PairCriterionOverTrials {
                judge,
                criterion,
                trials,
                judged,
                consistent,
                judge_errors,
                consistency,
                consistency_interval,
            }
        })
        .collect()
}

/// One pairwise criterion for the terminal: `judge 2 (pairwise), informative: both orders
/// agreed in 2/3 (67%, 95% CI 21%-94%)`, then `, 1 judge error (not in the rate)` when there
/// were any; `not judged` when the judge judged no trial.
pub fn pair_line(c: &PairCriterionOverTrials) -> String {
    let percent = |f: f64| format!("{:.0}%", f * 100.0);
    let mut line = match (c.consistency, c.consistency_interval) {
        (Some(rate), Some([low, high])) => format!(
            "judge {} (pairwise), {}: both orders agreed in {}/{} ({}, 95% CI {}-{})",
            c.judge,
            c.criterion,
            c.consistent,
            c.judged,
            percent(rate),
            percent(low),
            percent(high)
        ),
        _ => format!("judge {} (pairwise), {}: not judged", c.judge, c.criterion),
    };
    line.push_str(&errors_note(c.judge_errors, c.judged));
    line
}

/// One pairwise criterion as a JUnit property:
/// `copilot_eval.trials.judge.2.criterion.<name>` = `consistent=2/3 consistency=0.6667
/// interval=0.2077-0.9385 judge_errors=0`.
pub fn pair_junit_property(c: &PairCriterionOverTrials) -> (String, String) {
    let mut value = format!("consistent={}/{}", c.consistent, c.judged);
    if let (Some(rate), Some([low, high])) = (c.consistency, c.consistency_interval) {
        value.push_str(&format!(
            " consistency={rate:.4} interval={low:.4}-{high:.4}"
        ));
    }
    value.push_str(&format!(" judge_errors={}", c.judge_errors));
    (
        format!(
            "copilot_eval.trials.judge.{}.criterion.{}",
            c.judge, c.criterion
        ),
        value,
    )
}

/// `, 1 judge error (not in the rate)` (`(not in the rate)` left out when nothing was judged);
/// empty without errors.
fn errors_note(judge_errors: u32, judged: u32) -> String {
    if judge_errors == 0 {
        return String::new();
    }
    format!(
        ", {} judge error{}{}",
        judge_errors,
        if judge_errors == 1 { "" } else { "s" },
        if judged > 0 { " (not in the rate)" } else { "" }
    )
}

/// Each criterion of each rubric judge in `records` (one eval's trials), over the trials that
/// reached a verdict; in the order of the judges, then of each judge's rubric. Empty when no
/// such trial judged anything.
pub fn aggregate(records: &[&TestRecord]) -> Vec<JudgeCriterionOverTrials> {
    // (judge, criterion) -> (trials, passed, errors)
    let mut tables: Vec<((u32, String), [u32; 3])> = Vec::new();
    let judged = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Passed | Outcome::Failed));
    for record in judged {
        for (index, judge) in record.judges.iter().enumerate() {
            if judge.kind != JudgeKind::Rubric {
                continue;
            }
            for criterion in &judge.rubric {
                let key = (index as u32 + 1, criterion.name.clone());
                let counts = counts_of(&mut tables, key);
                counts[0] += 1;
                let verdict = judge
                    .verdicts
                    .iter()
                    .find(|v| v.criterion == criterion.name)
                    .map(|v| v.verdict);
                counts[1] += u32::from(verdict == Some(JudgeVerdict::Pass));
                // No verdict on the criterion (the judge's error): apart from the rate.
                counts[2] += u32::from(judge.error.is_some() || verdict.is_none());
            }
        }
    }
    tables.sort_by_key(|((judge, _), _)| *judge);
    tables
        .into_iter()
        .map(|((judge, criterion), [trials, passed, judge_errors])| {
            let judged = trials - judge_errors;
            let (pass_rate, pass_rate_interval) = stats::rate_with_interval(passed, judged);
            JudgeCriterionOverTrials {
                judge,
                criterion,
                trials,
                judged,
                passed,
                judge_errors,
                pass_rate,
                pass_rate_interval,
            }
        })
        .collect()
}

/// One criterion for the terminal, under its eval's trials line: `judge 1, names the version:
/// passed 2/3 (67%, 95% CI 21%-94%)` over the trials the judge judged, then `, 1 judge error
/// (not in the rate)` when there were any; `judge 1, clear: not judged, 3 judge errors` when
/// the judge judged no trial.
pub fn line(c: &JudgeCriterionOverTrials) -> String {
    // Whole percentages, as the trials line writes its pass rate.
    let percent = |f: f64| format!("{:.0}%", f * 100.0);
    let mut line = match (c.pass_rate, c.pass_rate_interval) {
        (Some(rate), Some([low, high])) => format!(
            "judge {}, {}: passed {}/{} ({}, 95% CI {}-{})",
            c.judge,
            c.criterion,
            c.passed,
            c.judged,
            percent(rate),
            percent(low),
            percent(high)
        ),
        _ => format!("judge {}, {}: not judged", c.judge, c.criterion),
    };
    line.push_str(&errors_note(c.judge_errors, c.judged));
    line
}

/// One criterion as a JUnit property `(name, value)`:
/// `copilot_eval.trials.judge.1.criterion.<name>` = `passed=2/3 pass_rate=0.6667
/// interval=0.2077-0.9385 judge_errors=0` (`passed` over the trials judged; `pass_rate` and
/// `interval` left out when the judge judged no trial).
pub fn junit_property(c: &JudgeCriterionOverTrials) -> (String, String) {
    let mut value = format!("passed={}/{}", c.passed, c.judged);
    if let (Some(rate), Some([low, high])) = (c.pass_rate, c.pass_rate_interval) {
        value.push_str(&format!(" pass_rate={rate:.4} interval={low:.4}-{high:.4}"));
    }
    value.push_str(&format!(" judge_errors={}", c.judge_errors));
    (
        format!(
            "copilot_eval.trials.judge.{}.criterion.{}",
            c.judge, c.criterion
        ),
        value,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{
        JudgeCriterionVerdict, JudgeRecord, RubricCriterionRecord, TrialOf, tests::test,
    };

    fn judged(trial: u32, outcome: Outcome, verdict: Option<JudgeVerdict>) -> TestRecord {
        let mut record = test("e", "pkg::evals", outcome, Vec::new());
        record.trial = Some(TrialOf { trial, trials: 4 });
        record.judges = vec![JudgeRecord {
            kind: JudgeKind::Rubric,
            material: "final response".into(),
            judged_runs: vec![1],
            model: None,
            tools: Vec::new(),
            samples: None,
            rubric: vec![RubricCriterionRecord {
                name: "names the version".into(),
                text: "t".into(),
                scale: None,
            }],
            sessions: Vec::new(),
            verdicts: verdict
                .map(|verdict| JudgeCriterionVerdict {
                    criterion: "names the version".into(),
                    verdict,
                    score: None,
                    reasons: vec!["r".into()],
                    agreement: None,
                })
                .into_iter()
                .collect(),
            error: verdict.is_none().then(|| "not JSON".to_owned()),
        }];
        record
    }

    #[test]
    fn a_criterion_is_counted_over_the_trials_that_reached_a_verdict() {
        let records = [
            judged(1, Outcome::Passed, Some(JudgeVerdict::Pass)),
            judged(2, Outcome::Failed, Some(JudgeVerdict::Fail)),
            judged(3, Outcome::Passed, None),
            judged(4, Outcome::Error, Some(JudgeVerdict::Pass)),
        ];
        let refs: Vec<&TestRecord> = records.iter().collect();
        let criteria = aggregate(&refs);
        assert_eq!(criteria.len(), 1, "{criteria:?}");
        let c = &criteria[0];
        // Trial 3's judge gave no verdict: a judge error, apart from the rate (1 of the 2
        // trials judged passed, not 1 of 3).
        assert_eq!(
            (c.judge, c.trials, c.judged, c.passed, c.judge_errors),
            (1, 3, 2, 1, 1)
        );
        assert_eq!(c.pass_rate, Some(0.5));
        assert_eq!(
            line(c),
            "judge 1, names the version: passed 1/2 (50%, 95% CI 9%-91%), 1 judge error (not in the rate)"
        );
        assert_eq!(
            junit_property(c).1,
            "passed=1/2 pass_rate=0.5000 interval=0.0945-0.9055 judge_errors=1"
        );
    }

    #[test]
    fn a_judge_that_never_answered_has_no_rate() {
        let records = [
            judged(1, Outcome::Passed, None),
            judged(2, Outcome::Failed, None),
        ];
        let refs: Vec<&TestRecord> = records.iter().collect();
        let c = &aggregate(&refs)[0];
        assert_eq!((c.trials, c.judged, c.judge_errors), (2, 0, 2));
        assert_eq!((c.pass_rate, c.pass_rate_interval), (None, None));
        assert_eq!(
            line(c),
            "judge 1, names the version: not judged, 2 judge errors"
        );
        assert_eq!(junit_property(c).1, "passed=0/0 judge_errors=2");
    }

    /// A trial with one pairwise judge whose verdict on `informative` is `verdict` (`None`:
    /// the judge's error).
    fn paired(trial: u32, outcome: Outcome, verdict: Option<JudgeVerdict>) -> TestRecord {
        let mut record = judged(trial, outcome, None);
        let judge = &mut record.judges[0];
        judge.kind = JudgeKind::Pairwise;
        judge.rubric[0].name = "informative".into();
        judge.error = verdict.is_none().then(|| "not JSON".to_owned());
        judge.verdicts = verdict
            .map(|verdict| JudgeCriterionVerdict {
                criterion: "informative".into(),
                verdict,
                score: None,
                reasons: vec!["r".into(), "r".into()],
                agreement: None,
            })
            .into_iter()
            .collect();
        record
    }

    /// Position consistency: of the 3 trials the pairwise judge judged, both orders agreed in 2
    /// (`a`, `tie`) and not in 1 (`inconsistent`); its error in trial 4 stays out of the rate;
    /// trial 5 (an `error` trial) is not counted. Rubric figures leave the pairwise judge out.
    #[test]
    fn a_pairwise_criterion_gets_its_position_consistency() {
        let records = [
            paired(1, Outcome::Passed, Some(JudgeVerdict::A)),
            paired(2, Outcome::Passed, Some(JudgeVerdict::Inconsistent)),
            paired(3, Outcome::Failed, Some(JudgeVerdict::Tie)),
            paired(4, Outcome::Passed, None),
            paired(5, Outcome::Error, Some(JudgeVerdict::Inconsistent)),
        ];
        let refs: Vec<&TestRecord> = records.iter().collect();
        assert!(aggregate(&refs).is_empty());
        let pairs = aggregate_pairs(&refs);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        let c = &pairs[0];
        assert_eq!(
            (c.judge, c.trials, c.judged, c.consistent, c.judge_errors),
            (1, 4, 3, 2, 1)
        );
        assert_eq!(c.consistency, Some(2.0 / 3.0));
        assert_eq!(
            pair_line(c),
            "judge 1 (pairwise), informative: both orders agreed in 2/3 (67%, 95% CI 21%-94%), 1 judge error (not in the rate)"
        );
        assert_eq!(
            pair_junit_property(c),
            (
                "copilot_eval.trials.judge.1.criterion.informative".to_owned(),
                "consistent=2/3 consistency=0.6667 interval=0.2077-0.9385 judge_errors=1"
                    .to_owned()
            )
        );
        // The rubric judges' figures skip pairwise ones, and the reverse.
        let rubric = [judged(1, Outcome::Passed, Some(JudgeVerdict::Pass))];
        let refs: Vec<&TestRecord> = rubric.iter().collect();
        assert!(aggregate_pairs(&refs).is_empty());
    }
}
