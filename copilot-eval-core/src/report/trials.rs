//! Trials of one eval (`cargo copilot-eval --trials N`): which trial a test record is, and the
//! figures over an eval's trials ([`TrialSummary`]: counts, pass rate with its 95% Wilson
//! interval, pass@k, pass^k, flaky, verdict, and each comparison criterion over the trials:
//! `compare_trials`), computed from the trials' records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compare_trials::{self, CriterionOverTrials};
use super::{Outcome, TestRecord};
use crate::stats;

/// Which trial of its eval a test record is ([`TestRecord::trial`]): written as the record's
/// `trial` and `trials` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TrialOf {
    /// This trial, from 1 to `trials`.
    pub trial: u32,
    /// Trials asked for this eval (`--trials N`).
    pub trials: u32,
}

impl TrialOf {
    /// The label a reader keeps apart: `[trial 2/5]`.
    pub fn label(self) -> String {
        format!("[trial {}/{}]", self.trial, self.trials)
    }
}

/// Why an eval's further trials were skipped (`--stop-early`): after `after_trial`, its verdict
/// over its trials could no longer change, whatever the trials not run would have given.
/// Written on each skipped trial's record (`stopped_early`; its outcome is `not_run`) and on
/// the eval's trial summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoppedEarly {
    /// The trial after which the verdict was decided (the last trial run).
    pub after_trial: u32,
    /// The verdict it decided: `passed` or `failed`.
    pub verdict: Outcome,
    /// Why, in words: `trial 2 failed, and every trial must pass` or `3 of 5 trials passed
    /// already (needs 60% of 5: 3)`.
    pub reason: String,
}

/// One estimate for one k (`pass@k` or `pass^k`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AtK {
    /// k: trials drawn (1 <= k <= the trials that reached a verdict).
    pub k: u32,
    /// The estimate, a fraction in [0, 1].
    pub value: f64,
}

/// The figures of one eval over its trials ([`super::SuiteReport::trial_summaries`]; one per
/// eval run with more than one trial). Only trials that reached a verdict (`passed` or
/// `failed`) count towards the rate: an `error` or `not_run` trial says nothing about the
/// agent, and makes the verdict `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialSummary {
    /// The eval's test path, as its records' `name`.
    pub name: String,
    /// Its test binary, as its records' `binary`.
    pub binary: String,
    /// Trials asked.
    pub trials: u32,
    /// Trials that passed.
    pub passed: u32,
    /// Trials that failed (the eval's own checks).
    pub failed: u32,
    /// Trials that ended in an infrastructure error.
    pub error: u32,
    /// Trials not run (after an infrastructure error in an earlier trial, an interrupt, or a
    /// cost cap); not the trials `--stop-early` skipped (`skipped`).
    pub not_run: u32,
    /// Trials skipped by `--stop-early` once the verdict could no longer change (their
    /// records are `not_run` with `stopped_early`); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u32,
    /// Why the eval's trials stopped early (`--stop-early`); absent when every trial asked
    /// was run (or not run for another reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<StoppedEarly>,
    /// `passed / (passed + failed)`, a fraction in [0, 1]; absent when no trial reached a
    /// verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// The 95% Wilson score interval of the pass rate, `[low, high]` fractions; absent with
    /// `pass_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_interval: Option<[f64; 2]>,
    /// pass@k, the unbiased estimate of "at least one of k trials passes" from these trials,
    /// for each asked k (`--pass-k`; by default 1 and the trials that reached a verdict) that
    /// is at most the trials that reached a verdict.
    pub pass_at_k: Vec<AtK>,
    /// pass^k, the unbiased estimate of "all k trials pass", for the same k.
    pub pass_hat_k: Vec<AtK>,
    /// The asked ks (`--pass-k`) above the trials that reached a verdict, for which neither
    /// pass@k nor pass^k can be estimated (said in the terminal and the HTML page too); absent
    /// when every asked k was estimated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_k_not_estimated: Vec<u32>,
    /// Some trials passed and some failed.
    pub flaky: bool,
    /// The pass rate the eval needs (`--min-pass-rate`, as a fraction); absent: every trial
    /// must pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_pass_rate: Option<f64>,
    /// The eval's verdict over its trials: `error` when any trial is `error` or `not_run`
    /// (trials skipped by `--stop-early` do not count);
    /// else, with `min_pass_rate`, `passed` when the pass rate reaches it; without, `passed`
    /// only when every trial passed; otherwise `failed`.
    pub verdict: Outcome,
    /// The trial numbers that failed, in order (the records to read first).
    pub failed_trials: Vec<u32>,
    /// When the eval compares a baseline with a treatment (`ctx.compare`): each criterion of
    /// each comparison over the trials that reached a verdict, with Fisher's exact test and a
    /// verdict word; in the order of the comparisons, then of the criteria. Absent when no
    /// such trial compared anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparison_criteria: Vec<CriterionOverTrials>,
    /// When the eval judges its results (`ctx.judge`): each criterion of each rubric judge
    /// over the trials that reached a verdict, with its pass rate and interval; in the order
    /// of the judges, then of the rubric. Absent when no such trial judged anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_criteria: Vec<super::judge_trials::JudgeCriterionOverTrials>,
    /// When the eval runs pairwise judges (`ctx.judge_pair`): each criterion of each pairwise
    /// judge over the trials that reached a verdict, with its position consistency (the share
    /// of judged trials whose two orders agreed) and interval; in the order of the judges,
    /// then of the rubric. Absent when no such trial ran one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pair_criteria: Vec<super::judge_trials::PairCriterionOverTrials>,
}

/// How trials are judged: the ks to estimate and the pass rate needed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrialRule {
    /// The ks of pass@k and pass^k; empty: 1 and the trials that reached a verdict.
    pub pass_k: Vec<u32>,
    /// The pass rate needed, a fraction in [0, 1]; `None`: every trial must pass.
    pub min_pass_rate: Option<f64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Whether `passed` passes out of `judged` trials that reached a verdict meet `min_pass_rate`
/// (a fraction; `None`: every trial must pass): the one rule of an eval's verdict over its
/// trials ([`TrialSummary::verdict`]) and of `--stop-early` ([`decided`]). A rate is compared
/// with a tolerance, so that 4 of 5 meets 0.8. No trial judged meets nothing.
pub fn meets(passed: u32, judged: u32, min_pass_rate: Option<f64>) -> bool {
    judged > 0 && f64::from(passed) / f64::from(judged) + 1e-9 >= min_pass_rate.unwrap_or(1.0)
}

/// The verdict of an eval asked to run `trials` trials once `passed` passed and `failed`
/// failed, when the trials left cannot change it (`--stop-early`), with why; `None` while they
/// can, or when none is left. Exact counting with [`meets`] over all `trials`: `passed` when
/// it holds even if every trial left fails, `failed` when it fails even if every trial left
/// passes (an eval that meets its rate over all its trials meets it over any fewer judged,
/// and one that cannot meet it over all of them cannot over fewer either).
pub fn decided(
    passed: u32,
    failed: u32,
    trials: u32,
    min_pass_rate: Option<f64>,
) -> Option<(Outcome, String)> {
    let left = trials
        .checked_sub(passed + failed)
        .filter(|&left| left > 0)?;
    let whatever = match left {
        1 => "whatever the 1 trial left gives".to_owned(),
        n => format!("whatever the {n} trials left give"),
    };
    let trials_word = |n: u32| match n {
        1 => "1 trial".to_owned(),
        n => format!("{n} trials"),
    };
    // The fewest passes of all `trials` that meet the rule (ceil(rate x trials), by `meets`).
    let needed = (0..=trials)
        .find(|&p| meets(p, trials, min_pass_rate))
        .unwrap_or(trials);
    let rule = match min_pass_rate {
        None => "every trial must pass".to_owned(),
        Some(rate) => format!("the eval needs {} of {trials} ({needed})", percent(rate)),
    };
    if meets(passed, trials, min_pass_rate) {
        return Some((
            Outcome::Passed,
            format!("{passed} of {trials} trials passed already and {rule}: it passes {whatever}"),
        ));
    }
    if !meets(passed + left, trials, min_pass_rate) {
        let why = match min_pass_rate {
            None => format!("{} failed", trials_word(failed)),
            Some(_) => format!(
                "{} failed, so at most {} of {trials} can pass",
                trials_word(failed),
                passed + left
            ),
        };
        return Some((
            Outcome::Failed,
            format!("{why} and {rule}: it fails {whatever}"),
        ));
    }
    None
}

/// The summaries of every eval of `tests` that ran in trials (records with
/// [`TestRecord::trial`]), in the order of each eval's first trial.
pub fn summarize(tests: &[TestRecord], rule: &TrialRule) -> Vec<TrialSummary> {
    summarize_asked(tests, rule, &[])
}

/// [`summarize`] with the pass rates evals ask for themselves (`min_pass_rate` of the
/// attribute): `asked` holds `(binary, name, rate)` per eval, as its records' `binary` and
/// `name`, the rate a fraction in (0, 1]. An eval's asked rate is its verdict rule unless
/// `rule.min_pass_rate` (`--min-pass-rate`) is given, which wins.
pub fn summarize_asked(
    tests: &[TestRecord],
    rule: &TrialRule,
    asked: &[(String, String, f64)],
) -> Vec<TrialSummary> {
    let mut evals: Vec<(&str, &str, u32, Vec<&TestRecord>)> = Vec::new();
    for test in tests {
        let Some(trial) = test.trial else { continue };
        match evals
            .iter_mut()
            .find(|(binary, name, _, _)| *binary == test.binary && *name == test.name)
        {
            Some((_, _, _, records)) => records.push(test),
            None => evals.push((&test.binary, &test.name, trial.trials, vec![test])),
        }
    }
    evals
        .into_iter()
        .map(|(binary, name, trials, records)| {
            let asked = asked
                .iter()
                .find(|(b, n, _)| b == binary && n == name)
                .map(|(_, _, rate)| *rate);
            let rule = TrialRule {
                pass_k: rule.pass_k.clone(),
                min_pass_rate: rule.min_pass_rate.or(asked),
            };
            summary(binary, name, trials, &records, &rule)
        })
        .collect()
}

fn summary(
    binary: &str,
    name: &str,
    trials: u32,
    records: &[&TestRecord],
    rule: &TrialRule,
) -> TrialSummary {
    let count = |outcome: Outcome| records.iter().filter(|r| r.outcome == outcome).count() as u32;
    let (passed, failed) = (count(Outcome::Passed), count(Outcome::Failed));
    let skipped = records
        .iter()
        .filter(|r| r.outcome == Outcome::NotRun && r.stopped_early.is_some())
        .count() as u32;
    let (error, not_run) = (count(Outcome::Error), count(Outcome::NotRun) - skipped);
    let stopped_early = records.iter().find_map(|r| r.stopped_early.clone());
    let judged = passed + failed;
    let (pass_rate, pass_rate_interval) = stats::rate_with_interval(passed, judged);
    let ks: Vec<u32> = if rule.pass_k.is_empty() {
        let mut ks = vec![1, judged];
        ks.dedup();
        ks
    } else {
        rule.pass_k.clone()
    };
    let estimate = |f: fn(u64, u64, u64) -> Option<f64>| -> Vec<AtK> {
        ks.iter()
            .filter_map(|&k| {
                f(u64::from(judged), u64::from(passed), u64::from(k)).map(|value| AtK { k, value })
            })
            .collect()
    };
    let pass_k_not_estimated: Vec<u32> = ks.iter().copied().filter(|&k| k > judged).collect();
    let verdict = if error > 0 || not_run > 0 {
        Outcome::Error
    } else if meets(passed, judged, rule.min_pass_rate) {
        Outcome::Passed
    } else {
        Outcome::Failed
    };
    let mut failed_trials: Vec<u32> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .filter_map(|r| r.trial.map(|t| t.trial))
        .collect();
    failed_trials.sort_unstable();
    TrialSummary {
        name: name.to_owned(),
        binary: binary.to_owned(),
        trials,
        passed,
        failed,
        error,
        not_run,
        skipped,
        stopped_early,
        pass_rate,
        pass_rate_interval,
        pass_at_k: estimate(stats::pass_at_k),
        pass_hat_k: estimate(stats::pass_hat_k),
        pass_k_not_estimated,
        flaky: passed > 0 && failed > 0,
        min_pass_rate: rule.min_pass_rate,
        verdict,
        failed_trials,
        comparison_criteria: compare_trials::aggregate(records),
        judge_criteria: super::judge_trials::aggregate(records),
        pair_criteria: super::judge_trials::aggregate_pairs(records),
    }
}

/// `f` (a fraction) as a whole percentage: `0.6` -> `60%`.
pub fn percent(f: f64) -> String {
    format!("{:.0}%", f * 100.0)
}

/// The estimates of `summary`: `pass@1 0.60, pass@5 1.00, pass^1 0.60, pass^5 0.00`.
pub fn at_k_text(summary: &TrialSummary) -> String {
    let mut at_k: Vec<String> = Vec::new();
    for (name, values) in [
        ("pass@", &summary.pass_at_k),
        ("pass^", &summary.pass_hat_k),
    ] {
        at_k.extend(
            values
                .iter()
                .map(|a| format!("{name}{} {:.2}", a.k, a.value)),
        );
    }
    at_k.join(", ")
}

/// The asked ks `summary` could not estimate ([`TrialSummary::pass_k_not_estimated`]):
/// `pass@5 and pass^5 not estimated (k above the 3 trials that reached a verdict)`; `None` when
/// there are none.
pub fn not_estimated_text(summary: &TrialSummary) -> Option<String> {
    if summary.pass_k_not_estimated.is_empty() {
        return None;
    }
    let ks: Vec<String> = summary
        .pass_k_not_estimated
        .iter()
        .map(|k| format!("pass@{k} and pass^{k}"))
        .collect();
    let judged = summary.passed + summary.failed;
    Some(format!(
        "{} not estimated (k above the {judged} trials that reached a verdict)",
        ks.join(", ")
    ))
}

/// The rule of `summary`'s verdict: `every trial must pass` or `needs 80%`.
pub fn rule_text(summary: &TrialSummary) -> String {
    summary.min_pass_rate.map_or_else(
        || "every trial must pass".to_owned(),
        |rate| format!("needs {}", percent(rate)),
    )
}

/// One line per eval for the terminal: `name: 3/5 passed (60%, 95% CI 23%-88%), flaky, pass@1
/// 0.60, pass^5 0.00 -> failed (every trial must pass); failed trials: 2, 4`, with the asked ks
/// that could not be estimated ([`not_estimated_text`]) after the estimates.
pub fn line(summary: &TrialSummary) -> String {
    let mut line = format!(
        "{}: {}/{} passed",
        summary.name,
        summary.passed,
        summary.passed + summary.failed
    );
    if let (Some(rate), Some([low, high])) = (summary.pass_rate, summary.pass_rate_interval) {
        line.push_str(&format!(
            " ({}, 95% CI {}-{})",
            percent(rate),
            percent(low),
            percent(high)
        ));
    }
    if summary.error + summary.not_run > 0 {
        line.push_str(&format!(
            ", {} error, {} not run",
            summary.error, summary.not_run
        ));
    }
    if summary.flaky {
        line.push_str(", flaky");
    }
    let at_k = at_k_text(summary);
    if !at_k.is_empty() {
        line.push_str(&format!(", {at_k}"));
    }
    if let Some(note) = not_estimated_text(summary) {
        line.push_str(&format!(", {note}"));
    }
    line.push_str(&format!(
        " -> {} ({})",
        summary.verdict.as_str(),
        rule_text(summary)
    ));
    if !summary.failed_trials.is_empty() {
        let trials: Vec<String> = summary.failed_trials.iter().map(u32::to_string).collect();
        line.push_str(&format!("; failed trials: {}", trials.join(", ")));
    }
    if let Some(early) = &summary.stopped_early {
        line.push_str(&format!(
            "; stopped early after trial {} (--stop-early): {}; {} skipped",
            early.after_trial,
            early.reason,
            match summary.skipped {
                1 => "1 trial".to_owned(),
                n => format!("{n} trials"),
            }
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decided` is exact counting over `meets`, the verdict's rule: with every trial must
    /// pass, the first failure decides; with a rate r over N trials, ceil(r x N) passes decide
    /// `passed`, and fewer passes possible than that decide `failed`; otherwise it waits.
    #[test]
    fn decided_is_exact_counting_over_the_verdicts_rule() {
        let verdict = |p, f, n, rate| decided(p, f, n, rate).map(|(v, _)| v);
        // Every trial must pass.
        assert_eq!(verdict(1, 0, 5, None), None);
        assert_eq!(verdict(1, 1, 5, None), Some(Outcome::Failed));
        assert_eq!(verdict(0, 1, 5, None), Some(Outcome::Failed));
        assert_eq!(
            verdict(4, 0, 5, None),
            None,
            "the last trial can still fail"
        );
        assert_eq!(verdict(5, 0, 5, None), None, "nothing is left to skip");
        // 60% of 5 needs 3 passes: 3 decide, and 3 failures leave at most 2.
        assert_eq!(verdict(3, 0, 5, Some(0.6)), Some(Outcome::Passed));
        assert_eq!(verdict(2, 1, 5, Some(0.6)), None);
        assert_eq!(verdict(2, 2, 5, Some(0.6)), None, "the last trial decides");
        assert_eq!(verdict(1, 3, 5, Some(0.6)), Some(Outcome::Failed));
        assert_eq!(verdict(0, 3, 5, Some(0.6)), Some(Outcome::Failed));
        // 80% of 5 is exactly 4 (the rate's tolerance): 4 passes decide.
        assert_eq!(verdict(4, 0, 5, Some(0.8)), Some(Outcome::Passed));
        assert_eq!(verdict(3, 1, 5, Some(0.8)), None);
        assert_eq!(verdict(3, 2, 6, Some(0.8)), Some(Outcome::Failed));
        // 50% of 3 needs 2 (ceil 1.5).
        assert_eq!(verdict(1, 0, 3, Some(0.5)), None);
        assert_eq!(verdict(1, 1, 3, Some(0.5)), None);
        assert_eq!(verdict(0, 2, 3, Some(0.5)), Some(Outcome::Failed));
        assert_eq!(verdict(2, 0, 3, Some(0.5)), Some(Outcome::Passed));
        // A verdict decided over fewer trials is the rule's over the judged ones too.
        for n in 1..=8u32 {
            for rate in [None, Some(0.3), Some(0.5), Some(0.6), Some(0.8), Some(1.0)] {
                for p in 0..=n {
                    for f in 0..=n - p {
                        if let Some(v) = verdict(p, f, n, rate) {
                            let judged = meets(p, p + f, rate);
                            assert_eq!(v == Outcome::Passed, judged, "{p}+{f} of {n} at {rate:?}");
                        }
                    }
                }
            }
        }
        let (_, why) = decided(1, 1, 5, None).unwrap();
        assert_eq!(
            why,
            "1 trial failed and every trial must pass: it fails whatever the 3 trials left give"
        );
        let (_, why) = decided(1, 3, 5, Some(0.6)).unwrap();
        assert_eq!(
            why,
            "3 trials failed, so at most 2 of 5 can pass and the eval needs 60% of 5 (3): it fails whatever the 1 trial left gives"
        );
    }
}
