//! Criteria that do not discriminate: a criterion that holds on every side in every trial (or
//! fails on every side in every trial) cannot tell the sides apart, however green it is. The
//! one place that classifies the criteria of the suite's three kinds of side-by-side runs:
//!
//! - a comparison (`ctx.compare`): its sides are the baseline and the treatment; its criteria
//!   are the `comparison.check(..)` verdicts and the criteria of rubric judges that judged one
//!   side's run (`ctx.judge(&comparison.baseline, ..)`);
//! - an ablation (`--ablate`, skill lift): its sides are the eval with its inputs and without
//!   them; its criteria are the expectations (`ctx.expect`) and the rubric judges' criteria of
//!   each side's records;
//! - a model matrix (`models = [..]`, `--models`): its sides are the models; its criteria as an
//!   ablation's.
//!
//! The definition, per criterion, over the trials that reached a verdict (`passed` or
//! `failed`; an `error` or `not_run` trial says nothing about the agent), with `held / trials`
//! counted on each side (`trials`: the trials in which that side recorded the criterion):
//!
//! - **does not discriminate** when every side recorded it and it held in all of its trials on
//!   every side (`baseline 3/3, treatment 3/3`), or in none of them on every side (`0/3, 0/3`);
//! - **not on every side** when some side never recorded it (its test ended before the check,
//!   or its judge gave no verdict): it cannot be classified, and is not counted;
//! - **discriminates** otherwise: its outcome was not the same on every side in every trial.
//!
//! "Discriminates" says only that the criterion can tell: whether the sides' rates differ
//! significantly is Fisher's exact test's verdict (`compare_trials`, `lift`).
//! [`DiscriminationReport`] is the suite's list ([`super::SuiteReport::discrimination`]); the
//! terminal, the HTML page and the GitHub job summary write it with [`lines`] and [`count_text`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::judge::{JudgeKind, JudgeRecord, JudgeVerdict};
use super::{Outcome, TestRecord};

/// Which kind of side-by-side runs a criterion belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// A comparison (`ctx.compare`): sides `baseline` and `treatment`.
    Comparison,
    /// An eval with and without its ablated inputs (`--ablate`): sides `with` and `without
    /// <kinds>`.
    Ablation,
    /// A model matrix (`models = [..]`, `--models`): one side per model.
    ModelMatrix,
}

/// What a criterion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CriterionKind {
    /// A comparison's `comparison.check(name, ..)`.
    Check,
    /// An expectation, `ctx.expect(text, ..)`.
    Expectation,
    /// A criterion of a rubric judge (`ctx.judge`): held when its verdict is `pass`.
    Judge,
}

/// Whether a criterion tells the sides apart (the module's definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Discrimination {
    /// Its outcome was not the same on every side in every trial.
    Discriminates,
    /// Every side recorded it, and it held in every trial on every side, or failed in every
    /// trial on every side.
    DoesNotDiscriminate,
    /// A side never recorded it: not classified, and not counted in the suite's figures.
    NotOnEverySide,
}

/// One side's count of a criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SideCount {
    /// The side: `baseline` or `treatment`; `with` or `without <kinds>` (`without skills`); a
    /// model id.
    pub side: String,
    /// Trials (that reached a verdict) in which the criterion held on this side.
    pub held: u32,
    /// Trials (that reached a verdict) in which this side recorded the criterion.
    pub trials: u32,
}

/// One criterion of one eval's side-by-side runs, classified.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionDiscrimination {
    /// `comparison`, `ablation` or `model_matrix`.
    pub surface: Surface,
    /// The test binary, as the records' `binary`.
    pub binary: String,
    /// The eval: the records' `name` for a comparison; the side with the inputs' name for an
    /// ablation; the name without `@model` for a model matrix.
    pub eval: String,
    /// For a comparison: its position in the test, from 1; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<u32>,
    /// `check`, `expectation` or `judge`.
    pub kind: CriterionKind,
    /// For a judge's criterion: the judge's position, from 1 (in a comparison, among the judges
    /// of each side's run; otherwise among the test's judges); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<u32>,
    /// The criterion's name (a check's or a judge criterion's name, an expectation's text).
    pub criterion: String,
    /// Each side's count, in order (baseline then treatment; with then without; the models in
    /// the order they ran).
    pub sides: Vec<SideCount>,
    /// `discriminates`, `does_not_discriminate` or `not_on_every_side`.
    pub verdict: Discrimination,
}

/// The suite's criteria of comparisons, ablations and model matrices
/// ([`super::SuiteReport::discrimination`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiscriminationReport {
    /// Criteria classified (every side recorded them): the M of "N of M criteria discriminate".
    pub criteria: u32,
    /// Of those, criteria that discriminate: the N.
    pub discriminating: u32,
    /// Every criterion, comparisons first (in test order), then ablations, then model matrices.
    pub entries: Vec<CriterionDiscrimination>,
}

/// The classification of a criterion with these counts (the module's definition).
pub fn classify(sides: &[SideCount]) -> Discrimination {
    if sides.len() < 2 || sides.iter().any(|s| s.trials == 0) {
        Discrimination::NotOnEverySide
    } else if sides.iter().all(|s| s.held == s.trials) || sides.iter().all(|s| s.held == 0) {
        Discrimination::DoesNotDiscriminate
    } else {
        Discrimination::Discriminates
    }
}

/// A criterion's key within one eval: (comparison, kind, judge, name, occurrence of the name).
type Key = (Option<u32>, CriterionKind, Option<u32>, String, u32);

/// The criteria of one eval's sides, gathered record by record.
struct Tally {
    sides: Vec<String>,
    /// Per key, per side: (held, trials).
    counts: Vec<(Key, Vec<(u32, u32)>)>,
}

impl Tally {
    fn new(sides: Vec<String>) -> Self {
        Tally {
            sides,
            counts: Vec::new(),
        }
    }

    /// Count one recorded outcome of `key` on side `side` (an index of `sides`).
    fn add(&mut self, key: Key, side: usize, held: bool) {
        let width = self.sides.len();
        let at = match self.counts.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.counts.push((key, vec![(0, 0); width]));
                self.counts.len() - 1
            }
        };
        let count = &mut self.counts[at].1[side];
        count.0 += u32::from(held);
        count.1 += 1;
    }

    /// The classified entries, in order of each criterion's first record.
    fn entries(self, surface: Surface, binary: &str, eval: &str) -> Vec<CriterionDiscrimination> {
        let sides = self.sides;
        self.counts
            .into_iter()
            .map(|((comparison, kind, judge, criterion, _), counts)| {
                let sides: Vec<SideCount> = (sides.iter().zip(counts))
                    .map(|(side, (held, trials))| SideCount {
                        side: side.clone(),
                        held,
                        trials,
                    })
                    .collect();
                CriterionDiscrimination {
                    surface,
                    binary: binary.to_owned(),
                    eval: eval.to_owned(),
                    comparison,
                    kind,
                    judge,
                    criterion,
                    verdict: classify(&sides),
                    sides,
                }
            })
            .collect()
    }
}

/// Whether a record's outcome counts (it reached a verdict).
fn judged(record: &TestRecord) -> bool {
    matches!(record.outcome, Outcome::Passed | Outcome::Failed)
}

/// Each pass/fail verdict of a rubric judge: (criterion, held); none for a pairwise judge or a
/// judge that gave no verdicts.
fn judge_outcomes(judge: &JudgeRecord) -> impl Iterator<Item = (&str, bool)> {
    let rubric = judge.kind == JudgeKind::Rubric && judge.error.is_none();
    (judge.verdicts.iter())
        .filter(move |_| rubric)
        .filter(|v| matches!(v.verdict, JudgeVerdict::Pass | JudgeVerdict::Fail))
        .map(|v| (v.criterion.as_str(), v.verdict == JudgeVerdict::Pass))
}

/// The occurrence of `name` at `position` among `names` (0 for its first).
fn occurrence<'a>(mut names: impl Iterator<Item = &'a str>, position: usize, name: &str) -> u32 {
    (0..position).filter(|_| names.next() == Some(name)).count() as u32
}

/// The criteria of one comparison eval's records (its trials, or its one record).
fn comparison_tally(records: &[&TestRecord]) -> Tally {
    let mut tally = Tally::new(vec!["baseline".to_owned(), "treatment".to_owned()]);
    for record in records.iter().filter(|r| judged(r)) {
        for (index, comparison) in record.comparisons.iter().enumerate() {
            let number = Some(index as u32 + 1);
            for (position, criterion) in comparison.criteria.iter().enumerate() {
                let names = comparison.criteria.iter().map(|c| c.name.as_str());
                let key = (
                    number,
                    CriterionKind::Check,
                    None,
                    criterion.name.clone(),
                    occurrence(names, position, &criterion.name),
                );
                tally.add(key.clone(), 0, criterion.baseline);
                tally.add(key, 1, criterion.treatment);
            }
            // Rubric judges of one side's run: the k-th judge of that side's run is judge k.
            for (side, run) in [(0, comparison.baseline.run), (1, comparison.treatment.run)] {
                let judges = (record.judges.iter()).filter(|j| j.judged_runs == [run]);
                for (k, judge) in judges.enumerate() {
                    for (criterion, held) in judge_outcomes(judge) {
                        let key = (
                            number,
                            CriterionKind::Judge,
                            Some(k as u32 + 1),
                            criterion.to_owned(),
                            0,
                        );
                        tally.add(key, side, held);
                    }
                }
            }
        }
    }
    tally
}

/// Count the expectations and rubric judges' criteria of `record` on side `side`.
fn add_record(tally: &mut Tally, record: &TestRecord, side: usize) {
    if !judged(record) {
        return;
    }
    for (position, expectation) in record.expectations.iter().enumerate() {
        let texts = record.expectations.iter().map(|e| e.text.as_str());
        let key = (
            None,
            CriterionKind::Expectation,
            None,
            expectation.text.clone(),
            occurrence(texts, position, &expectation.text),
        );
        tally.add(key, side, expectation.passed);
    }
    for (index, judge) in record.judges.iter().enumerate() {
        for (criterion, held) in judge_outcomes(judge) {
            let key = (
                None,
                CriterionKind::Judge,
                Some(index as u32 + 1),
                criterion.to_owned(),
                0,
            );
            tally.add(key, side, held);
        }
    }
}

/// Records grouped by `(binary, eval)`, each with its side.
type Groups<'a> = Vec<((String, String), Vec<(String, &'a TestRecord)>)>;

/// The records of `tests` grouped by `(binary, eval)` as `group` names them (records it gives
/// `None` are left out), in the order of each group's first record, each with its side.
fn groups<'a>(
    tests: &'a [TestRecord],
    group: impl Fn(&'a TestRecord) -> Option<(String, String)>,
) -> Groups<'a> {
    let mut groups: Groups<'a> = Vec::new();
    for test in tests {
        let Some((eval, side)) = group(test) else {
            continue;
        };
        let key = (test.binary.clone(), eval);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, records)) => records.push((side, test)),
            None => groups.push((key, vec![(side, test)])),
        }
    }
    groups
}

/// The entries of groups whose records are sides (ablations and model matrices): a side per
/// distinct side name in the order first seen; groups with one side are left out.
fn sided_entries(surface: Surface, groups: Groups<'_>) -> Vec<CriterionDiscrimination> {
    let mut entries = Vec::new();
    for ((binary, eval), records) in groups {
        let mut sides: Vec<String> = Vec::new();
        for (side, _) in &records {
            if !sides.contains(side) {
                sides.push(side.clone());
            }
        }
        if sides.len() < 2 {
            continue;
        }
        let mut tally = Tally::new(sides.clone());
        for (side, record) in &records {
            let index = sides.iter().position(|s| s == side).unwrap_or_default();
            add_record(&mut tally, record, index);
        }
        entries.extend(tally.entries(surface, &binary, &eval));
    }
    entries
}

/// The ablation side of `test` with `tests`: `(the eval with its inputs, "with" or "without
/// <kinds>")` when `test` is an ablated record or the record with the inputs of an eval that
/// has one; `None` otherwise.
fn ablation_side(test: &TestRecord, tests: &[TestRecord]) -> Option<(String, String)> {
    if !test.ablated.is_empty() {
        let base = tests.iter().find(|t| {
            t.ablated.is_empty()
                && t.binary == test.binary
                && super::lift::ablated_name(&t.name, &test.ablated) == test.name
        })?;
        let kinds: Vec<&str> = test.ablated.iter().map(|k| k.as_str()).collect();
        return Some((base.name.clone(), format!("without {}", kinds.join(", "))));
    }
    let has_ablated = tests.iter().any(|t| {
        !t.ablated.is_empty()
            && t.binary == test.binary
            && super::lift::ablated_name(&test.name, &t.ablated) == t.name
    });
    has_ablated.then(|| (test.name.clone(), "with".to_owned()))
}

/// Every criterion of `tests`' comparisons, ablations and model matrices, classified; `None`
/// when there is none.
pub fn of(tests: &[TestRecord]) -> Option<DiscriminationReport> {
    let mut entries = Vec::new();
    let compared = groups(tests, |t| {
        (!t.comparisons.is_empty()).then(|| (t.name.clone(), String::new()))
    });
    for ((binary, eval), records) in compared {
        let records: Vec<&TestRecord> = records.into_iter().map(|(_, r)| r).collect();
        let tally = comparison_tally(&records);
        entries.extend(tally.entries(Surface::Comparison, &binary, &eval));
    }
    entries.extend(sided_entries(
        Surface::Ablation,
        groups(tests, |t| ablation_side(t, tests)),
    ));
    let matrix = groups(tests, |t| {
        let model = t.model.as_deref().filter(|_| t.ablated.is_empty())?;
        Some((
            super::matrix::eval_of(&t.name, model).to_owned(),
            model.to_owned(),
        ))
    });
    entries.extend(sided_entries(Surface::ModelMatrix, matrix));
    if entries.is_empty() {
        return None;
    }
    let classified = |verdict: Discrimination| entries.iter().filter(move |e| e.verdict == verdict);
    let discriminating = classified(Discrimination::Discriminates).count() as u32;
    let criteria = discriminating + classified(Discrimination::DoesNotDiscriminate).count() as u32;
    Some(DiscriminationReport {
        criteria,
        discriminating,
        entries,
    })
}

/// The criterion as a person names it: `comparison 1, completed`; `comparison 1, judge 1,
/// tone`; `expectation "The changelog skill was invoked"`; `judge 2, tone`.
pub fn label(entry: &CriterionDiscrimination) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(comparison) = entry.comparison {
        parts.push(format!("comparison {comparison}"));
    }
    if let Some(judge) = entry.judge {
        parts.push(format!("judge {judge}"));
    }
    parts.push(match entry.kind {
        CriterionKind::Expectation => format!("expectation {:?}", entry.criterion),
        CriterionKind::Check | CriterionKind::Judge => entry.criterion.clone(),
    });
    parts.join(", ")
}

/// Each side's count: `baseline 3/3, treatment 0/3`.
pub fn sides_text(entry: &CriterionDiscrimination) -> String {
    let sides: Vec<String> = (entry.sides.iter())
        .map(|s| format!("{} {}/{}", s.side, s.held, s.trials))
        .collect();
    sides.join(", ")
}

/// The verdict as a person reads it: `discriminates`; `does not discriminate (holds on every
/// side in every trial)` or `(fails on every side in every trial)`; `not on every side (not
/// counted)`.
pub fn verdict_text(entry: &CriterionDiscrimination) -> String {
    match entry.verdict {
        Discrimination::Discriminates => "discriminates".to_owned(),
        Discrimination::DoesNotDiscriminate => {
            let holds = entry.sides.iter().all(|s| s.held == s.trials);
            format!(
                "does not discriminate ({} on every side in every trial)",
                if holds { "holds" } else { "fails" }
            )
        }
        Discrimination::NotOnEverySide => {
            "not on every side (a side never recorded it; not counted)".to_owned()
        }
    }
}

/// One criterion on one line: `quickstart::evals compares, comparison 1, completed: baseline
/// 3/3, treatment 3/3 -> does not discriminate (holds on every side in every trial)`.
pub fn line(entry: &CriterionDiscrimination) -> String {
    format!(
        "{} {}, {}: {} -> {}",
        entry.binary,
        entry.eval,
        label(entry),
        sides_text(entry),
        verdict_text(entry)
    )
}

/// The suite's figure: `1 of 2 criteria discriminate`, then `; 1 not on every side (not
/// counted)` when there are such.
pub fn count_text(report: &DiscriminationReport) -> String {
    let mut text = format!(
        "{} of {} {}",
        report.discriminating,
        report.criteria,
        if report.criteria == 1 {
            "criterion discriminates"
        } else {
            "criteria discriminate"
        }
    );
    let unclassified = report.entries.len() as u32 - report.criteria;
    if unclassified > 0 {
        text.push_str(&format!("; {unclassified} not on every side (not counted)"));
    }
    text
}

/// The terminal's lines: one per criterion ([`line()`]), then [`count_text`], each indented by
/// `indent`.
pub fn lines(report: &DiscriminationReport, indent: &str) -> String {
    let mut out = String::new();
    for entry in &report.entries {
        out.push_str(&format!("{indent}{}\n", line(entry)));
    }
    out.push_str(&format!("{indent}{}\n", count_text(report)));
    out
}

#[cfg(test)]
mod tests;
