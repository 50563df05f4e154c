//! One eval in two results files: its figures on each side, the verdict, and what changed in
//! its inputs, models and settings.
//!
//! An eval is matched across the files by its binary and name (`name@model` in a model
//! matrix); its trials (`--trials N`) are its records of one name. Only records that passed or
//! failed count towards a pass rate, as for trials: an `error` or `not_run` says nothing about
//! the agent.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cost::cost_per_pass;
use crate::report::compare_trials::SIGNIFICANCE_LEVEL;
use crate::report::provenance::{InputKind, Roots, settings_value};
use crate::report::{CostTotals, Outcome, SuiteReport, TestRecord};
use crate::stats;

/// What the two files say about an eval.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The newer pass rate is lower and Fisher's exact test gives p < 0.05.
    Regressed,
    /// The newer pass rate is higher and Fisher's exact test gives p < 0.05.
    Improved,
    /// The pass rates differ but p >= 0.05: these trials cannot tell (`trials_needed` says how
    /// many the observed difference would need). Never a failure.
    Underpowered,
    /// A side has no trial that passed or failed (each ended in an error or was not run).
    NoVerdict,
    /// Only in the newer file.
    New,
    /// Only in the older file.
    Removed,
    /// The same pass rate on both sides.
    Unchanged,
}

impl Verdict {
    /// The value as written: `regressed`, `improved`, `underpowered`, `no_verdict`, `new`,
    /// `removed`, `unchanged`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regressed => "regressed",
            Self::Improved => "improved",
            Self::Underpowered => "underpowered",
            Self::NoVerdict => "no_verdict",
            Self::New => "new",
            Self::Removed => "removed",
            Self::Unchanged => "unchanged",
        }
    }

    /// The order of the table: regressions first.
    pub fn rank(self) -> u8 {
        self as u8
    }
}

/// One eval in the two files compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalComparison {
    /// The test binary (`package::target`).
    pub binary: String,
    /// The test path (`module::function`, `@model` in a model matrix).
    pub name: String,
    /// What the two files say about it.
    pub verdict: Verdict,
    /// Its figures in the older file; absent when it is not there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<SideFigures>,
    /// Its figures in the newer file; absent when it is not there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<SideFigures>,
    /// `after.pass_rate - before.pass_rate`, a fraction in [-1, 1]; absent unless both are
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    /// The two-sided p-value of Fisher's exact test on `[[before passed, before failed], [after
    /// passed, after failed]]`; absent unless both sides have a pass rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// For `underpowered`: the trials per side at which the observed pass rates would be
    /// significant (`stats::trials_needed`); `null` when even 10 000 would not do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<u64>,
    /// Whether both files recorded this eval's inputs (provenance); `false`: what changed in
    /// its inputs is unknown.
    pub inputs_known: bool,
    /// The inputs whose hashes differ between the files, by path; empty when none (or
    /// unknown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputChange>,
    /// The models the runs asked for before and after, when they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<[Vec<String>; 2]>,
    /// The run settings that differ (`configuration` fields, machine paths left out), e.g.
    /// `timeout_s: 120.0 -> 60.0`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
}

/// An eval's figures over its records in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SideFigures {
    /// Records (trials, else 1).
    pub trials: u32,
    /// Records that passed.
    pub passed: u32,
    /// Records that failed (the eval's own checks).
    pub failed: u32,
    /// Records that ended in an infrastructure error.
    pub error: u32,
    /// Records not run.
    pub not_run: u32,
    /// `passed / (passed + failed)`; absent when none passed or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Tokens, model calls, premium requests and estimated cost over the records that ran.
    pub cost: CostTotals,
    /// The estimated cost per pass (`cost.estimated_cost / passed`); `null` when the cost is
    /// unknown, nothing passed or pricing does not apply, never 0 for an unknown cost.
    pub cost_per_pass: Option<f64>,
    /// Wall time of the records that ran, summed, milliseconds.
    pub duration_ms: u64,
    /// Records that ran (not `not_run`): what `tokens` and `duration_ms` are averaged over.
    pub ran: u32,
}

impl SideFigures {
    fn of(records: &[&TestRecord]) -> Self {
        let mut figures = SideFigures {
            trials: records.len() as u32,
            passed: 0,
            failed: 0,
            error: 0,
            not_run: 0,
            pass_rate: None,
            cost: CostTotals::zero(),
            cost_per_pass: None,
            duration_ms: 0,
            ran: 0,
        };
        for record in records {
            match record.outcome {
                Outcome::Passed => figures.passed += 1,
                Outcome::Failed => figures.failed += 1,
                Outcome::Error => figures.error += 1,
                Outcome::NotRun => {
                    figures.not_run += 1;
                    continue;
                }
            }
            figures.ran += 1;
            figures.duration_ms += record.duration_ms;
            match &record.cost {
                Some(cost) => figures.cost.add(cost),
                None => figures.cost.add(&CostTotals::of_runs(&record.runs)),
            }
        }
        let judged = figures.passed + figures.failed;
        if judged > 0 {
            figures.pass_rate = Some(f64::from(figures.passed) / f64::from(judged));
        }
        figures.cost_per_pass = cost_per_pass(&figures.cost, u64::from(figures.passed));
        figures
    }

    /// Input plus output tokens per record that ran; `None` when none ran or a run's token
    /// usage is unknown (a replay without recorded usage: unknown, never 0).
    pub fn tokens_per_trial(&self) -> Option<f64> {
        (self.ran > 0 && self.cost.usage_unknown_runs == 0).then(|| {
            (self.cost.input_tokens + self.cost.output_tokens) as f64 / f64::from(self.ran)
        })
    }

    /// Milliseconds per record that ran; `None` when none ran.
    pub fn duration_ms_per_trial(&self) -> Option<f64> {
        (self.ran > 0).then(|| self.duration_ms as f64 / f64::from(self.ran))
    }
}

/// One input of an eval whose hash differs between the two files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InputChange {
    /// The input's path (as the provenance writes it).
    pub path: String,
    /// What it is to the eval.
    pub kind: InputKind,
    /// `changed`, `added` or `removed`.
    pub change: InputChangeKind,
}

/// How an input differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputChangeKind {
    /// In both files, with another hash.
    Changed,
    /// Only in the newer file.
    Added,
    /// Only in the older file.
    Removed,
}

impl InputChangeKind {
    /// `changed`, `added`, `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Changed => "changed",
            Self::Added => "added",
            Self::Removed => "removed",
        }
    }
}

/// The records of each eval of `report`, by binary and name, in list order.
pub(super) fn group(report: &SuiteReport) -> Vec<((&str, &str), Vec<&TestRecord>)> {
    let mut groups: Vec<((&str, &str), Vec<&TestRecord>)> = Vec::new();
    for test in &report.tests {
        let key = (test.binary.as_str(), test.name.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, records)) => records.push(test),
            None => groups.push((key, vec![test])),
        }
    }
    groups
}

/// Each eval of `base` or `new` compared, in list order (the older file's evals first, then
/// those only in the newer one).
pub(super) fn compare_evals(base: &SuiteReport, new: &SuiteReport) -> Vec<EvalComparison> {
    let before = group(base);
    let after = group(new);
    let mut out = Vec::new();
    for (key, records) in &before {
        let other = after
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, r)| r.as_slice());
        out.push(compare_one(*key, Some(records), other));
    }
    for (key, records) in &after {
        if !before.iter().any(|(k, _)| k == key) {
            out.push(compare_one(*key, None, Some(records)));
        }
    }
    out
}

fn compare_one(
    (binary, name): (&str, &str),
    before: Option<&[&TestRecord]>,
    after: Option<&[&TestRecord]>,
) -> EvalComparison {
    let figures = |records: Option<&[&TestRecord]>| records.map(SideFigures::of);
    let (b, a) = (figures(before), figures(after));
    let mut comparison = EvalComparison {
        binary: binary.to_owned(),
        name: name.to_owned(),
        verdict: Verdict::Unchanged,
        before: b.clone(),
        after: a.clone(),
        change: None,
        p_value: None,
        trials_needed: None,
        inputs_known: false,
        inputs: Vec::new(),
        models: None,
        settings: Vec::new(),
    };
    let (Some(before), Some(after), Some(b), Some(a)) = (before, after, b, a) else {
        comparison.verdict = if before.is_none() {
            Verdict::New
        } else {
            Verdict::Removed
        };
        return comparison;
    };
    judge(&mut comparison, &b, &a);
    (comparison.inputs_known, comparison.inputs) = input_changes(before, after);
    let (models_before, models_after) = (models(before), models(after));
    if models_before != models_after {
        comparison.models = Some([models_before, models_after]);
    }
    comparison.settings = settings_changes(before, after);
    comparison
}

/// The verdict, change, p-value and trials needed of `b` against `a`.
fn judge(comparison: &mut EvalComparison, b: &SideFigures, a: &SideFigures) {
    let (Some(rate_b), Some(rate_a)) = (b.pass_rate, a.pass_rate) else {
        comparison.verdict = Verdict::NoVerdict;
        return;
    };
    let p = stats::fisher_exact(
        u64::from(b.passed),
        u64::from(b.failed),
        u64::from(a.passed),
        u64::from(a.failed),
    );
    comparison.change = Some(rate_a - rate_b);
    comparison.p_value = Some(p);
    comparison.verdict = if rate_a == rate_b {
        Verdict::Unchanged
    } else if p < SIGNIFICANCE_LEVEL {
        if rate_a > rate_b {
            Verdict::Improved
        } else {
            Verdict::Regressed
        }
    } else {
        comparison.trials_needed = Some(stats::trials_needed(rate_b, rate_a)).filter(|&n| n > 0);
        Verdict::Underpowered
    };
}

/// Each input path's hashes over `records` (its trials); `None` when a record that ran has no
/// provenance.
fn inputs_of(records: &[&TestRecord]) -> Option<BTreeMap<String, (InputKind, BTreeSet<String>)>> {
    let mut inputs: BTreeMap<String, (InputKind, BTreeSet<String>)> = BTreeMap::new();
    let mut known = false;
    for record in records.iter().filter(|r| r.outcome != Outcome::NotRun) {
        let provenance = record.provenance.as_ref()?;
        known = true;
        for file in &provenance.inputs {
            inputs
                .entry(file.path.clone())
                .or_insert_with(|| (file.kind, BTreeSet::new()))
                .1
                .insert(file.sha256.clone());
        }
    }
    known.then_some(inputs)
}

/// Whether both sides' inputs are known, and the inputs that differ.
fn input_changes(before: &[&TestRecord], after: &[&TestRecord]) -> (bool, Vec<InputChange>) {
    let (Some(b), Some(a)) = (inputs_of(before), inputs_of(after)) else {
        return (false, Vec::new());
    };
    let mut changes = Vec::new();
    for (path, (kind, hashes)) in &b {
        let change = match a.get(path) {
            None => InputChangeKind::Removed,
            Some((_, other)) if other != hashes => InputChangeKind::Changed,
            Some(_) => continue,
        };
        changes.push(InputChange {
            path: path.clone(),
            kind: *kind,
            change,
        });
    }
    for (path, (kind, _)) in &a {
        if !b.contains_key(path) {
            changes.push(InputChange {
                path: path.clone(),
                kind: *kind,
                change: InputChangeKind::Added,
            });
        }
    }
    changes.sort_by(|x, y| x.path.cmp(&y.path));
    (true, changes)
}

/// The models the records' runs asked for (`default`: the runtime's), sorted.
pub(super) fn models(records: &[&TestRecord]) -> Vec<String> {
    let models: BTreeSet<String> = records
        .iter()
        .flat_map(|r| &r.runs)
        .map(|run| {
            run.configuration
                .model
                .clone()
                .unwrap_or_else(|| "default".to_owned())
        })
        .collect();
    models.into_iter().collect()
}

/// Each run configuration of `records` by its eval name and label, as the settings digest
/// reads it (machine paths left out), the model aside (compared on its own).
fn configurations(records: &[&TestRecord]) -> BTreeMap<(String, Option<String>), Value> {
    let mut out = BTreeMap::new();
    for record in records {
        for run in &record.runs {
            let roots = Roots {
                workdir: Some(std::path::PathBuf::from(&run.working_directory)),
                ..Roots::default()
            };
            let mut value = settings_value(run, &roots);
            if let Value::Object(map) = &mut value {
                map.remove("model");
                map.remove("skill_directories");
            }
            out.entry((run.configuration.name.clone(), run.label.clone()))
                .or_insert(value);
        }
    }
    out
}

/// At most this many characters of a setting's value are shown.
const SHOWN: usize = 80;

/// The configuration fields that differ between the sides' runs of the same eval name and
/// label: `field: before -> after` (a label's field `label field: ...`).
fn settings_changes(before: &[&TestRecord], after: &[&TestRecord]) -> Vec<String> {
    let (b, a) = (configurations(before), configurations(after));
    let mut out = Vec::new();
    for (key, old) in &b {
        let Some(new) = a.get(key) else { continue };
        let (Value::Object(old), Value::Object(new)) = (old, new) else {
            continue;
        };
        let fields: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for field in fields {
            let (x, y) = (old.get(field), new.get(field));
            if x != y {
                let show = |v: Option<&Value>| {
                    let text = crate::report::provenance::canonical_json(v.unwrap_or(&Value::Null));
                    match text.char_indices().nth(SHOWN) {
                        Some((at, _)) => format!("{}…", &text[..at]),
                        None => text,
                    }
                };
                let prefix = key
                    .1
                    .as_deref()
                    .map(|l| format!("{l} "))
                    .unwrap_or_default();
                let line = format!("{prefix}{field}: {} -> {}", show(x), show(y));
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
    }
    out
}
