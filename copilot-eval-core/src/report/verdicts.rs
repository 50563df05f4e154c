//! The decision a suite run leads with: one verdict per eval (a model matrix's cell is an eval
//! of its own), its pass rate over its trials with the 95% Wilson interval, and what changed
//! between the sides it compared. The terminal summary and the HTML page open with these rows
//! when the suite ran trials, models, comparisons or an ablation, or compared with a
//! `--baseline` ([`leads_with_decision`]);
//! they are computed from the records, never stored.

use serde::Serialize;

use super::trials::percent;
use super::{Outcome, SuiteReport, TestRecord};

/// One eval's verdict over its trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalVerdict {
    /// The eval's test binary (`package::target`).
    pub binary: String,
    /// The eval's name (`module::function`, `@model` for a model matrix's cell).
    pub name: String,
    /// Trials that passed.
    pub passed: u32,
    /// Trials that reached a verdict (passed or failed; errors and trials not run left out).
    pub decided: u32,
    /// `passed / decided`, a fraction in [0, 1]; `None` when no trial reached a verdict.
    pub pass_rate: Option<f64>,
    /// The 95% Wilson interval of the pass rate, `[low, high]` fractions.
    pub interval: Option<[f64; 2]>,
    /// The eval's verdict: its trials' verdict under its rule with trials, else its test's
    /// outcome.
    pub verdict: Outcome,
    /// What changed between the sides: each comparison criterion met by one side more often
    /// than by the other (`starts with the tag line: baseline 0/3, treatment 3/3`), the
    /// ablated side's pass rate (`without skills: 1/3 passed`), and with `--baseline` the
    /// eval against the baseline file (`vs baseline: underpowered, 1/1 (100%) -> 3/5 (60%),
    /// -40 pp, p = 1.000` and what changed in its inputs, [`super::baseline::BaselineRecord`]).
    pub changed: Vec<String>,
}

impl EvalVerdict {
    /// `2/3 (67%, 95% CI 21%-94%)`, or `0/0` when no trial reached a verdict.
    pub fn figures(&self) -> String {
        match (self.pass_rate, self.interval) {
            (Some(rate), Some([low, high])) => format!(
                "{}/{} ({}, 95% CI {}-{})",
                self.passed,
                self.decided,
                percent(rate),
                percent(low),
                percent(high)
            ),
            _ => format!("{}/{}", self.passed, self.decided),
        }
    }
}

/// Whether the suite's report leads with the per-eval verdicts: it ran trials, a model
/// matrix, comparisons (`ctx.compare`) or an ablation (`--ablate`), or compared with a
/// `--baseline`.
pub fn leads_with_decision(report: &SuiteReport) -> bool {
    !report.trial_summaries.is_empty()
        || report.baseline.is_some()
        || !report.model_matrix.is_empty()
        || report.skill_lift.is_some()
        || report.tests.iter().any(|t| !t.comparisons.is_empty())
}

/// One verdict per eval, in the order the evals first appear in the report.
pub fn verdicts(report: &SuiteReport) -> Vec<EvalVerdict> {
    let mut evals: Vec<(&str, &str)> = Vec::new();
    for test in report.tests.iter().filter(|t| t.ablated.is_empty()) {
        if !evals.contains(&(test.binary.as_str(), test.name.as_str())) {
            evals.push((test.binary.as_str(), test.name.as_str()));
        }
    }
    evals
        .into_iter()
        .map(|(binary, name)| verdict(report, binary, name))
        .collect()
}

/// The suite's headline: `29 evals, 87 trials, 5 evals failed` (errors count as failed evals;
/// a trial is a record that ran, the ablated side's included).
pub fn headline(report: &SuiteReport, verdicts: &[EvalVerdict]) -> String {
    let trials = (report.tests.iter())
        .filter(|t| t.outcome != Outcome::NotRun)
        .count() as u64;
    let failed = (verdicts.iter())
        .filter(|v| matches!(v.verdict, Outcome::Failed | Outcome::Error))
        .count() as u64;
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {}, {} failed",
        count(verdicts.len() as u64, "eval", "evals"),
        count(trials, "trial", "trials"),
        count(failed, "eval", "evals")
    )
}

fn verdict(report: &SuiteReport, binary: &str, name: &str) -> EvalVerdict {
    let records: Vec<&TestRecord> = (report.tests.iter())
        .filter(|t| t.binary == binary && t.name == name && t.ablated.is_empty())
        .collect();
    let summary = (report.trial_summaries.iter()).find(|s| s.binary == binary && s.name == name);
    let mut changed = Vec::new();
    let (passed, decided, verdict) = match summary {
        Some(s) => {
            for c in s.comparison_criteria.iter() {
                if c.baseline_passed != c.treatment_passed {
                    changed.push(format!(
                        "{}: baseline {}/{n}, treatment {}/{n}",
                        c.criterion,
                        c.baseline_passed,
                        c.treatment_passed,
                        n = c.trials
                    ));
                }
            }
            (s.passed, s.passed + s.failed, s.verdict)
        }
        None => {
            changed.extend(single_comparisons(&records));
            outcome_of(&records)
        }
    };
    changed.extend(ablated_side(report, binary, name));
    if let Some(baseline) = &report.baseline {
        changed.extend(baseline.lines_of(binary, name).iter().cloned());
    }
    let (pass_rate, interval) = crate::stats::rate_with_interval(passed, decided);
    EvalVerdict {
        binary: binary.to_owned(),
        name: name.to_owned(),
        passed,
        decided,
        pass_rate,
        interval,
        verdict,
        changed,
    }
}

/// Passed and decided records and the verdict of an eval without a trial summary: passed when
/// every record passed, else its first error, failure or not-run outcome in that order.
fn outcome_of(records: &[&TestRecord]) -> (u32, u32, Outcome) {
    let count = |o: Outcome| records.iter().filter(|t| t.outcome == o).count() as u32;
    let (passed, failed) = (count(Outcome::Passed), count(Outcome::Failed));
    let verdict = [Outcome::Error, Outcome::Failed, Outcome::NotRun]
        .into_iter()
        .find(|o| count(*o) > 0)
        .unwrap_or(Outcome::Passed);
    (passed, passed + failed, verdict)
}

/// The criteria of single comparisons (no trials) that one side met and the other did not.
fn single_comparisons(records: &[&TestRecord]) -> Vec<String> {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut changed: Vec<String> = Vec::new();
    for criterion in (records.iter())
        .flat_map(|t| &t.comparisons)
        .flat_map(|c| &c.criteria)
        .filter(|c| c.baseline != c.treatment)
    {
        let line = format!(
            "{}: baseline {}, treatment {}",
            criterion.name,
            yes(criterion.baseline),
            yes(criterion.treatment)
        );
        if !changed.contains(&line) {
            changed.push(line);
        }
    }
    changed
}

/// The ablated side of the eval (`--ablate`): `without skills: 1/3 passed`; empty without one.
fn ablated_side(report: &SuiteReport, binary: &str, name: &str) -> Vec<String> {
    let side: Vec<&TestRecord> = (report.tests.iter())
        .filter(|t| !t.ablated.is_empty() && t.binary == binary)
        .filter(|t| t.name == super::lift::ablated_name(name, &t.ablated))
        .collect();
    let Some(first) = side.first() else {
        return Vec::new();
    };
    let (passed, decided, _) = outcome_of(&side);
    let kinds: Vec<&str> = first.ablated.iter().map(|k| k.as_str()).collect();
    vec![format!(
        "without {}: {passed}/{decided} passed",
        kinds.join(", ")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite with trials, a comparison and an ablation leads with one verdict per eval: its
    /// figures over its trials, its verdict, and what changed between its sides.
    #[test]
    fn each_eval_gets_one_verdict_with_what_changed() {
        use crate::report::tests::test;
        let mut report = crate::report::tests::report();
        assert!(
            !leads_with_decision(&report),
            "one run per eval, nothing compared"
        );
        let trial = |t: u32, outcome| {
            let mut record = test("flaky", "p::t", outcome, vec![]);
            record.trial = Some(crate::report::TrialOf {
                trial: t,
                trials: 3,
            });
            record
        };
        let mut without = test("flaky", "p::t", Outcome::Failed, vec![]);
        without.name = crate::report::lift::ablated_name("flaky", &[crate::eval::Ablate::Skills]);
        without.ablated = vec![crate::eval::Ablate::Skills];
        report.tests = vec![
            trial(1, Outcome::Passed),
            trial(2, Outcome::Failed),
            trial(3, Outcome::Passed),
            without,
            test("broken", "p::t", Outcome::Error, vec![]),
        ];
        report.trial_summaries =
            crate::report::trials::summarize(&report.tests, &Default::default());
        let verdicts = verdicts(&report);
        assert!(leads_with_decision(&report));
        assert_eq!(verdicts.len(), 2, "{verdicts:#?}");
        assert_eq!(
            (
                verdicts[0].name.as_str(),
                verdicts[0].figures(),
                verdicts[0].verdict
            ),
            (
                "flaky",
                "2/3 (67%, 95% CI 21%-94%)".to_owned(),
                Outcome::Failed
            )
        );
        assert_eq!(verdicts[0].changed, ["without skills: 0/1 passed"]);
        assert_eq!(
            (verdicts[1].figures(), verdicts[1].verdict),
            ("0/0".to_owned(), Outcome::Error)
        );
        assert_eq!(
            headline(&report, &verdicts),
            "2 evals, 5 trials, 2 evals failed"
        );
    }

    /// A suite run with `--baseline` leads with the decision even without trials: each eval's
    /// verdict carries its lines against the baseline.
    #[test]
    fn a_baseline_alone_leads_with_the_decision() {
        use crate::report::baseline::{BaselineEval, BaselineRecord};
        use crate::report::tests::test;
        let mut report = crate::report::tests::report();
        report.tests = vec![test("greets", "p::t", Outcome::Passed, vec![])];
        assert!(!leads_with_decision(&report));
        let line = "vs baseline: underpowered, 0/1 (0%) -> 1/1 (100%), +100 pp, p = 1.000";
        report.baseline = Some(BaselineRecord {
            file: "base.json".into(),
            started_at: "2026-12-01T10:00:00Z".into(),
            summary: "0 regressed, 0 improved, 1 underpowered, 0 unchanged (of 1 evals)".into(),
            evals: vec![BaselineEval {
                binary: "p::t".into(),
                name: "greets".into(),
                verdict: "underpowered".into(),
                lines: vec![line.into()],
            }],
        });
        assert!(leads_with_decision(&report));
        let verdicts = verdicts(&report);
        assert_eq!(verdicts.len(), 1);
        assert_eq!(verdicts[0].changed, [line]);
    }
}
