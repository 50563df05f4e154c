//! Comparisons over trials: an eval that calls `ctx.compare` and runs in trials
//! (`cargo copilot-eval --trials N`) gets, per criterion of each comparison, the baseline's and
//! the treatment's passes over the trials, Fisher's exact test on that 2x2 table and a verdict
//! word ([`CriterionOverTrials`], one list per eval in
//! [`TrialSummary::comparison_criteria`](super::TrialSummary::comparison_criteria)).
//!
//! A criterion is matched across trials by its comparison's position in the test (the first
//! `ctx.compare` is comparison 1) and its name (a name checked twice in one comparison: by its
//! occurrence). Only trials that reached a verdict (`passed` or `failed`) count, as for the
//! eval's pass rate: an `error` or `not_run` trial says nothing about the agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Outcome, TestRecord};
use crate::stats;

/// The significance level of the verdicts: a p-value below it is `significant`.
pub const SIGNIFICANCE_LEVEL: f64 = 0.05;

/// What the trials say about one criterion's difference between baseline and treatment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialComparisonVerdict {
    /// The two-sided p-value is below 0.05: the pass rates differ.
    Significant,
    /// Not significant, both sides passed at the same observed rate, and the trials were enough
    /// that a difference could have shown (the most extreme outcome of these trials reaches
    /// p < 0.05).
    NoDifference,
    /// Not significant, and the trials cannot tell: either the observed rates differ but that
    /// difference does not reach p < 0.05 with this many trials, or no outcome of this many
    /// trials could reach p < 0.05 at all (fewer than 4 trials).
    Underpowered,
}

impl TrialComparisonVerdict {
    /// The value as written in the JSON: `significant`, `no_difference`, `underpowered`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Significant => "significant",
            Self::NoDifference => "no_difference",
            Self::Underpowered => "underpowered",
        }
    }

    /// The value as a person reads it: `significant`, `no difference`, `underpowered`.
    pub fn words(self) -> &'static str {
        match self {
            Self::NoDifference => "no difference",
            other => other.as_str(),
        }
    }

    /// The verdict of `baseline_passed` against `treatment_passed` passes out of `trials` on
    /// each side, whose two-sided Fisher p-value is `p_value` (see the variants).
    pub fn of(baseline_passed: u32, treatment_passed: u32, trials: u32, p_value: f64) -> Self {
        if p_value < SIGNIFICANCE_LEVEL {
            Self::Significant
        } else if baseline_passed == treatment_passed
            && stats::most_extreme_p(u64::from(trials), u64::from(trials)) < SIGNIFICANCE_LEVEL
        {
            Self::NoDifference
        } else {
            Self::Underpowered
        }
    }
}

/// One criterion of one comparison of an eval, over the eval's trials: a 2x2 table (baseline
/// and treatment, met or not), its Fisher's exact test and a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionOverTrials {
    /// The comparison's position in the test, from 1 (the test's `comparisons[]` order).
    pub comparison: u32,
    /// The criterion's name (`Comparison::check(name, ..)`).
    pub criterion: String,
    /// Trials that recorded this criterion and reached a verdict (`passed` or `failed`): the
    /// trials of each side (each trial runs both sides once).
    pub trials: u32,
    /// Trials in which the baseline met the criterion.
    pub baseline_passed: u32,
    /// Trials in which the treatment met the criterion.
    pub treatment_passed: u32,
    /// `baseline_passed / trials`, a fraction in [0, 1].
    pub baseline_rate: f64,
    /// `treatment_passed / trials`, a fraction in [0, 1].
    pub treatment_rate: f64,
    /// `treatment_rate - baseline_rate`, a fraction in [-1, 1] (positive: the treatment met
    /// the criterion more often).
    pub difference: f64,
    /// The two-sided p-value of Fisher's exact test on the table `[[baseline_passed,
    /// trials - baseline_passed], [treatment_passed, trials - treatment_passed]]`, a fraction in
    /// [0, 1].
    pub p_value: f64,
    /// The smallest p-value any outcome of this many trials could give (every trial of one side
    /// meeting the criterion, none of the other's): at or above 0.05, no result of these trials
    /// could be significant.
    pub best_possible_p_value: f64,
    /// `significant` when `p_value < 0.05`; else `no_difference` when both sides met the
    /// criterion equally often and `best_possible_p_value < 0.05`; else `underpowered`.
    pub verdict: TrialComparisonVerdict,
}

impl CriterionOverTrials {
    /// The figures of `baseline_passed` and `treatment_passed` passes out of `trials` for
    /// criterion `criterion` of comparison `comparison` (from 1). With `trials == 0` the rates
    /// are 0 and the p-value 1.
    ///
    /// # Panics
    ///
    /// When a count of passes exceeds `trials` (not a valid count; [`aggregate`] never makes
    /// one).
    pub fn of(
        comparison: u32,
        criterion: &str,
        trials: u32,
        baseline_passed: u32,
        treatment_passed: u32,
    ) -> Self {
        let (n, b, t) = (
            u64::from(trials),
            u64::from(baseline_passed),
            u64::from(treatment_passed),
        );
        let p_value = stats::fisher_exact(b, n - b, t, n - t);
        let rate = |passed: u32| {
            if trials == 0 {
                0.0
            } else {
                f64::from(passed) / f64::from(trials)
            }
        };
        let (baseline_rate, treatment_rate) = (rate(baseline_passed), rate(treatment_passed));
        CriterionOverTrials {
            comparison,
            criterion: criterion.to_owned(),
            trials,
            baseline_passed,
            treatment_passed,
            baseline_rate,
            treatment_rate,
            difference: treatment_rate - baseline_rate,
            p_value,
            best_possible_p_value: stats::most_extreme_p(n, n),
            verdict: TrialComparisonVerdict::of(baseline_passed, treatment_passed, trials, p_value),
        }
    }
}

/// Each criterion of each comparison in `records` (one eval's trials), aggregated over the
/// trials that reached a verdict; in the order of the comparisons, then of each criterion's
/// first appearance. Empty when no such trial compared anything.
pub fn aggregate(records: &[&TestRecord]) -> Vec<CriterionOverTrials> {
    // (comparison, name, occurrence of the name in its comparison) -> (trials, baseline, treatment)
    type Key = (u32, String, u32);
    let mut tables: Vec<(Key, [u32; 3])> = Vec::new();
    let judged = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Passed | Outcome::Failed));
    for record in judged {
        for (index, comparison) in record.comparisons.iter().enumerate() {
            let number = index as u32 + 1;
            for (position, criterion) in comparison.criteria.iter().enumerate() {
                let occurrence = comparison.criteria[..position]
                    .iter()
                    .filter(|c| c.name == criterion.name)
                    .count() as u32;
                let key = (number, criterion.name.clone(), occurrence);
                let counts = counts_of(&mut tables, key);
                counts[0] += 1;
                counts[1] += u32::from(criterion.baseline);
                counts[2] += u32::from(criterion.treatment);
            }
        }
    }
    // Stable: comparisons in order, each one's criteria in first-seen order.
    tables.sort_by_key(|((comparison, _, _), _)| *comparison);
    tables
        .into_iter()
        .map(|((comparison, name, _), [trials, baseline, treatment])| {
            CriterionOverTrials::of(comparison, &name, trials, baseline, treatment)
        })
        .collect()
}

/// The counts kept under `key` in `tables` (in order of first use), a zeroed entry pushed last
/// when there is none yet.
pub(super) fn counts_of<K: PartialEq, const N: usize>(
    tables: &mut Vec<(K, [u32; N])>,
    key: K,
) -> &mut [u32; N] {
    let at = match tables.iter().position(|(k, _)| *k == key) {
        Some(at) => at,
        None => {
            tables.push((key, [0; N]));
            tables.len() - 1
        }
    };
    &mut tables[at].1
}

/// `p` for a person: four decimals, `< 0.0001` below that.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".to_owned()
    } else {
        format!("{p:.4}")
    }
}

/// A difference of two fractions as whole percentage points with its sign: `0.8333` ->
/// `+83 points`.
pub fn points(difference: f64) -> String {
    format!("{:+.0} points", difference * 100.0)
}

/// One side's passes: `1/6 (17%)`.
pub fn side_text(passed: u32, trials: u32, rate: f64) -> String {
    format!("{passed}/{trials} ({:.0}%)", rate * 100.0)
}

/// One criterion for the terminal, under its eval's trials line: `comparison 1, starts with
/// the house tag line: baseline 1/6 (17%), treatment 6/6 (100%), +83 points, Fisher p = 0.0152
/// -> significant`.
pub fn line(c: &CriterionOverTrials) -> String {
    format!(
        "comparison {}, {}: baseline {}, treatment {}, {}, Fisher p = {} -> {}",
        c.comparison,
        c.criterion,
        side_text(c.baseline_passed, c.trials, c.baseline_rate),
        side_text(c.treatment_passed, c.trials, c.treatment_rate),
        points(c.difference),
        p_text(c.p_value),
        c.verdict.words()
    )
}

/// One criterion as a JUnit property `(name, value)`:
/// `copilot_eval.trials.comparison.1.criterion.<name>` =
/// `baseline=1/6 treatment=6/6 difference=+0.8333 p=0.0152 verdict=significant`.
pub fn junit_property(c: &CriterionOverTrials) -> (String, String) {
    (
        format!(
            "copilot_eval.trials.comparison.{}.criterion.{}",
            c.comparison, c.criterion
        ),
        format!(
            "baseline={}/{} treatment={}/{} difference={:+.4} p={:.4} verdict={}",
            c.baseline_passed,
            c.trials,
            c.treatment_passed,
            c.trials,
            c.difference,
            c.p_value,
            c.verdict.as_str()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::run;
    use crate::report::{ComparisonRecord, CriterionRecord, TrialOf};
    use crate::result::StopReason;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// A comparison whose criteria are `(name, baseline met, treatment met)`.
    fn comparison(criteria: &[(&str, bool, bool)]) -> ComparisonRecord {
        let side = run(StopReason::Completed, 10);
        let mut record = ComparisonRecord::new("p", (1, &side, vec![]), (2, &side, vec![]));
        for &(name, baseline, treatment) in criteria {
            record.add_criterion(CriterionRecord {
                name: name.into(),
                baseline,
                treatment,
            });
        }
        record
    }

    /// Trial `trial` of 5 with `outcome` and `comparisons`.
    fn trial(trial: u32, outcome: Outcome, comparisons: Vec<ComparisonRecord>) -> TestRecord {
        TestRecord {
            provenance: None,
            attempt: None,
            stopped_early: None,
            arm: None,
            name: "compares".into(),
            test_id: "compares::__copilot_eval".into(),
            binary: "pkg::evals".into(),
            trial: Some(TrialOf { trial, trials: 5 }),
            model: None,
            outcome,
            error_kind: None,
            duration_ms: 1,
            message: None,
            properties: vec![],
            runs: vec![],
            comparisons,
            triggers: Vec::new(),
            judges: Vec::new(),
            workdir: None,
            cassette: None,
            exit: None,
            output: None,
            cost: None,
            source: None,
            skill_eval: None,
            trigger_query: None,
            ablated: Vec::new(),
            expectations: Vec::new(),
        }
    }

    /// Each criterion is counted over the trials that reached a verdict, matched by its
    /// comparison's position and its name (not its place among the criteria); an `error` trial
    /// and a trial without the comparison do not count.
    #[test]
    fn criteria_are_counted_over_the_judged_trials() {
        let records = [
            trial(
                1,
                Outcome::Passed,
                vec![
                    comparison(&[("completed", true, true), ("tag line", false, true)]),
                    comparison(&[("short", true, false)]),
                ],
            ),
            // The criteria in another order, and a failed trial: still counted.
            trial(
                2,
                Outcome::Failed,
                vec![comparison(&[
                    ("tag line", false, false),
                    ("completed", true, true),
                ])],
            ),
            trial(
                3,
                Outcome::Passed,
                vec![comparison(&[
                    ("completed", false, true),
                    ("tag line", true, true),
                ])],
            ),
            // An infrastructure error: its verdicts say nothing about the agent.
            trial(
                4,
                Outcome::Error,
                vec![comparison(&[
                    ("completed", false, false),
                    ("tag line", false, false),
                ])],
            ),
            trial(5, Outcome::Passed, vec![]),
        ];
        let refs: Vec<&TestRecord> = records.iter().collect();
        let rows = aggregate(&refs);
        let counts: Vec<(u32, &str, u32, u32, u32)> = rows
            .iter()
            .map(|c| {
                (
                    c.comparison,
                    c.criterion.as_str(),
                    c.trials,
                    c.baseline_passed,
                    c.treatment_passed,
                )
            })
            .collect();
        assert_eq!(
            counts,
            [
                (1, "completed", 3, 2, 3),
                (1, "tag line", 3, 1, 2),
                (2, "short", 1, 1, 0),
            ]
        );
        let completed = &rows[0];
        assert!(close(completed.baseline_rate, 2.0 / 3.0, 1e-12));
        assert!(close(completed.treatment_rate, 1.0, 1e-12));
        assert!(close(completed.difference, 1.0 / 3.0, 1e-12));
        // [[2, 1], [3, 0]]: margins 3/3/5, C(6, 5) = 6 tables weighted C(3, x) · C(3, 5 - x):
        // x = 2: 3 · 1 = 3, x = 3: 1 · 3 = 3; both as probable as the observed: p = 1.
        assert!(close(completed.p_value, 1.0, 1e-12));
        // 2 / C(6, 3) = 0.1: 3 trials cannot show anything.
        assert!(close(completed.best_possible_p_value, 0.1, 1e-12));
        assert_eq!(completed.verdict, TrialComparisonVerdict::Underpowered);
        // No judged trial compared anything: nothing to report.
        let none = [trial(1, Outcome::Passed, vec![]), records[3].clone()];
        assert!(aggregate(&none.iter().collect::<Vec<_>>()).is_empty());
    }

    /// A name checked twice in one comparison is two criteria, matched by occurrence.
    #[test]
    fn a_name_checked_twice_is_matched_by_occurrence() {
        let records = [
            trial(
                1,
                Outcome::Passed,
                vec![comparison(&[("same", true, false), ("same", false, true)])],
            ),
            trial(
                2,
                Outcome::Passed,
                vec![comparison(&[("same", true, false), ("same", false, true)])],
            ),
        ];
        let rows = aggregate(&records.iter().collect::<Vec<_>>());
        let counts: Vec<(u32, u32, u32)> = rows
            .iter()
            .map(|c| (c.trials, c.baseline_passed, c.treatment_passed))
            .collect();
        assert_eq!(counts, [(2, 2, 0), (2, 0, 2)]);
    }

    /// Baseline 1 of 10 against treatment 9 of 10, by hand: the table [[1, 9], [9, 1]] has
    /// margins 10/10 (rows) and 10/10 (columns), n = 20; the tables with x baseline passes have
    /// probability C(10, x) · C(10, 10 - x) / C(20, 10) = C(10, x)² / 184756: 1, 100, 2025,
    /// 14400, 44100, 63504, 44100, 14400, 2025, 100, 1 for x = 0..=10. The observed x = 1
    /// weighs 100; the tables at most as probable are x = 0, 1, 9, 10: 1 + 100 + 100 + 1 = 202.
    /// Two-sided p = 202 / 184756 = 0.00109333.
    #[test]
    fn one_of_ten_against_nine_of_ten_is_significant() {
        let c = CriterionOverTrials::of(1, "tag line", 10, 1, 9);
        assert!(close(c.p_value, 202.0 / 184756.0, 1e-12), "{}", c.p_value);
        assert!(close(c.p_value, 0.0010933, 1e-7), "{}", c.p_value);
        assert!(close(c.difference, 0.8, 1e-12));
        assert_eq!(c.verdict, TrialComparisonVerdict::Significant);
        assert_eq!(
            line(&c),
            "comparison 1, tag line: baseline 1/10 (10%), treatment 9/10 (90%), +80 points, \
             Fisher p = 0.0011 -> significant"
        );
        assert_eq!(
            junit_property(&c),
            (
                "copilot_eval.trials.comparison.1.criterion.tag line".to_owned(),
                "baseline=1/10 treatment=9/10 difference=+0.8000 p=0.0011 verdict=significant"
                    .to_owned()
            )
        );
    }

    /// Baseline 1 of 2 against treatment 2 of 2, by hand: the table [[1, 1], [2, 0]] has margins
    /// 2/2 (rows) and 3/1 (columns); x baseline passes can be 1 or 2, with probability
    /// C(2, x) · C(2, 3 - x) / C(4, 3) = 2/4 each: p = 1. Even the most extreme outcome of two
    /// trials a side, [[2, 0], [0, 2]], gives 2 / C(4, 2) = 1/3: two trials cannot show a
    /// difference, so the verdict is underpowered, not "no difference".
    #[test]
    fn one_of_two_against_two_of_two_is_underpowered() {
        let c = CriterionOverTrials::of(1, "tag line", 2, 1, 2);
        assert!(close(c.p_value, 1.0, 1e-12), "{}", c.p_value);
        assert!(close(c.best_possible_p_value, 1.0 / 3.0, 1e-12));
        assert_eq!(c.verdict, TrialComparisonVerdict::Underpowered);
        assert!(
            line(&c).ends_with("Fisher p = 1.0000 -> underpowered"),
            "{}",
            line(&c)
        );
    }

    /// The three verdicts at their edges.
    #[test]
    fn the_verdicts() {
        // The same rate with trials enough to show a difference (4 a side: the most extreme
        // outcome gives 2 / C(8, 4) = 0.0286): no difference.
        let same = CriterionOverTrials::of(1, "c", 4, 4, 4);
        assert!(close(same.best_possible_p_value, 2.0 / 70.0, 1e-12));
        assert_eq!(same.verdict, TrialComparisonVerdict::NoDifference);
        assert_eq!(same.verdict.words(), "no difference");
        // The same rate on 3 trials a side (best p 2 / C(6, 3) = 0.1): underpowered.
        assert_eq!(
            CriterionOverTrials::of(1, "c", 3, 3, 3).verdict,
            TrialComparisonVerdict::Underpowered
        );
        // A difference that 10 trials do not show: [[3, 7], [6, 4]], p = 0.3698 (R's
        // fisher.test): underpowered.
        let seen = CriterionOverTrials::of(1, "c", 10, 3, 6);
        assert!(close(seen.p_value, 0.3698, 5e-5), "{}", seen.p_value);
        assert_eq!(seen.verdict, TrialComparisonVerdict::Underpowered);
        // The most extreme table of 4 a side is significant, either way round.
        assert_eq!(
            CriterionOverTrials::of(1, "c", 4, 0, 4).verdict,
            TrialComparisonVerdict::Significant
        );
        assert_eq!(
            CriterionOverTrials::of(1, "c", 4, 4, 0).verdict,
            TrialComparisonVerdict::Significant
        );
        assert_eq!(p_text(1.0825088e-05), "< 0.0001");
    }

    /// docs/comparisons.md's "How many trials a difference needs" table, computed by hand (not
    /// by this crate): per pair of rates, the trials a side n, and the two-sided Fisher p-values
    /// of the expected tables (rates times trials, rounded half up) at n and at n - 1, each an
    /// exact sum of hypergeometric probabilities (Python's `fractions`; e.g. 0% against 100%:
    /// [[0, 4], [4, 0]] gives 2/C(8, 4) = 2/70, [[0, 3], [3, 0]] gives 2/C(6, 3) = 0.1).
    const TRIALS_NEEDED: [(f64, f64, u64, f64, f64); 8] = [
        (0.0, 1.0, 4, 0.028571, 0.1),
        (0.2, 0.8, 7, 0.029138, 0.080087),
        (0.5, 1.0, 10, 0.032508, 0.082353),
        (0.3, 0.7, 17, 0.038084, 0.075597),
        (0.5, 0.9, 14, 0.032850, 0.073043),
        (0.5, 0.8, 26, 0.039859, 0.071767),
        (0.7, 0.9, 39, 0.047456, 0.081567),
        (0.8, 0.9, 113, 0.039531, 0.058199),
    ];

    /// `stats::trials_needed` gives each row's n, `stats::fisher_exact` the hand-computed
    /// p-values (significant at n, not at n - 1), and docs/comparisons.md holds the table.
    #[test]
    fn the_docs_table_of_trials_needed_is_computed() {
        let mut table = String::from(
            "| baseline pass rate | treatment pass rate | trials per side |\n|---|---|---|\n",
        );
        for (baseline, treatment, n, p_at_n, p_before) in TRIALS_NEEDED {
            assert_eq!(
                stats::trials_needed(baseline, treatment),
                n,
                "{baseline} vs {treatment}"
            );
            let p = |n: u64| {
                let (b, t) = (
                    (n as f64 * baseline).round() as u64,
                    (n as f64 * treatment).round() as u64,
                );
                stats::fisher_exact(b, n - b, t, n - t)
            };
            assert!(
                close(p(n), p_at_n, 1e-6),
                "{baseline} vs {treatment}: {}",
                p(n)
            );
            assert!(
                close(p(n - 1), p_before, 1e-6),
                "{baseline} vs {treatment}: {}",
                p(n - 1)
            );
            assert!(p_at_n < SIGNIFICANCE_LEVEL && p_before >= SIGNIFICANCE_LEVEL);
            table.push_str(&format!(
                "| {:.0}% | {:.0}% | {n} |\n",
                baseline * 100.0,
                treatment * 100.0
            ));
        }
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/comparisons.md");
        let text = std::fs::read_to_string(&docs).unwrap();
        assert!(
            text.contains(&table),
            "docs/comparisons.md must hold this table (computed by stats::trials_needed):\n{table}"
        );
    }
}
