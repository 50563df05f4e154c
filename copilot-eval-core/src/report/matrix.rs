//! Model matrices (`models = [..]` under the attribute, `cargo copilot-eval --models a,b`): each
//! eval's models side by side ([`ModelMatrixEval`]), computed from the records of its cells (a
//! cell is one eval on one model: one record, or one per trial with `--trials N`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CostTotals, Outcome, TestRecord};
use crate::stats;

/// One eval of a model matrix ([`super::SuiteReport::model_matrix`]): its models side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelMatrixEval {
    /// The eval's test path without its model: the records' `name` before `@model`
    /// (`greets`, `greets::english` for a case).
    pub eval: String,
    /// Its test binary, as its records' `binary`.
    pub binary: String,
    /// One cell per model, in the order the suite ran them (the attribute's `models`, or
    /// `--models`).
    pub models: Vec<ModelCell>,
}

/// One eval on one model, over its records (its trials with `--trials N`, else its one run).
/// Only records that reached a verdict (`passed` or `failed`) count towards the pass rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCell {
    /// The model id, as the records' `model`.
    pub model: String,
    /// The records' `name`: `<eval>@<model>`.
    pub name: String,
    /// Records of this cell: the trials asked (`--trials N`), else 1.
    pub tests: u32,
    /// Records that passed.
    pub passed: u32,
    /// Records that failed (the eval's own checks).
    pub failed: u32,
    /// Records that ended in an infrastructure error.
    pub error: u32,
    /// Records not run.
    pub not_run: u32,
    /// `passed / (passed + failed)`, a fraction in [0, 1]; absent when no record reached a
    /// verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// The 95% Wilson score interval of the pass rate, `[low, high]` fractions; absent with
    /// `pass_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_interval: Option<[f64; 2]>,
    /// Tokens, model calls, premium requests and estimated cost summed over the cell's records
    /// that ran (each record's `cost`; the same rules of unknown values).
    pub cost: CostTotals,
    /// The estimated cost per passing record (`cost.estimated_cost / passed`); `null` when the
    /// cost is unknown, nothing passed, or pricing does not apply (scripted runs), never 0 for
    /// an unknown cost.
    #[serde(default)]
    pub cost_per_pass: Option<f64>,
    /// Wall time of the cell's test processes, summed, milliseconds.
    pub duration_ms: u64,
}

/// The eval of a record `name` of a model matrix on `model`: `name` without its `@model`.
pub fn eval_of<'a>(name: &'a str, model: &str) -> &'a str {
    name.strip_suffix(model)
        .and_then(|rest| rest.strip_suffix('@'))
        .unwrap_or(name)
}

/// The model matrix of `tests`: every record with a `model`, grouped by binary and eval (in the
/// order of each eval's first record), then by model (in the order of each model's first
/// record). Empty when no record has a model.
pub fn of(tests: &[TestRecord]) -> Vec<ModelMatrixEval> {
    let mut evals: Vec<ModelMatrixEval> = Vec::new();
    for test in tests {
        let Some(model) = test.model.as_deref() else {
            continue;
        };
        let eval = eval_of(&test.name, model);
        let index = match evals
            .iter()
            .position(|e| e.binary == test.binary && e.eval == eval)
        {
            Some(index) => index,
            None => {
                evals.push(ModelMatrixEval {
                    eval: eval.to_owned(),
                    binary: test.binary.clone(),
                    models: Vec::new(),
                });
                evals.len() - 1
            }
        };
        let models = &mut evals[index].models;
        let cell = match models.iter().position(|c| c.model == model) {
            Some(cell) => cell,
            None => {
                models.push(ModelCell {
                    model: model.to_owned(),
                    name: test.name.clone(),
                    tests: 0,
                    passed: 0,
                    failed: 0,
                    error: 0,
                    not_run: 0,
                    pass_rate: None,
                    pass_rate_interval: None,
                    cost: CostTotals::zero(),
                    cost_per_pass: None,
                    duration_ms: 0,
                });
                models.len() - 1
            }
        };
        let cell = &mut models[cell];
        cell.tests += 1;
        match test.outcome {
            Outcome::Passed => cell.passed += 1,
            Outcome::Failed => cell.failed += 1,
            Outcome::Error => cell.error += 1,
            Outcome::NotRun => cell.not_run += 1,
        }
        if let Some(cost) = &test.cost {
            cell.cost.add(cost);
        }
        cell.duration_ms += test.duration_ms;
    }
    for cell in evals.iter_mut().flat_map(|e| e.models.iter_mut()) {
        cell.cost_per_pass = crate::cost::cost_per_pass(&cell.cost, u64::from(cell.passed));
        (cell.pass_rate, cell.pass_rate_interval) =
            stats::rate_with_interval(cell.passed, cell.passed + cell.failed);
    }
    evals
}

/// The cell's pass rate as the terminal and the HTML page write it: `2/3 (67%, 95% CI
/// 21%-94%)`; `0/0` with no verdict, then `, 1 error, 2 not run` when there are such.
pub fn rate_text(cell: &ModelCell) -> String {
    use super::trials::percent;
    let mut text = format!("{}/{}", cell.passed, cell.passed + cell.failed);
    if let (Some(rate), Some([low, high])) = (cell.pass_rate, cell.pass_rate_interval) {
        text.push_str(&format!(
            " ({}, 95% CI {}-{})",
            percent(rate),
            percent(low),
            percent(high)
        ));
    }
    if cell.error + cell.not_run > 0 {
        text.push_str(&format!(", {} error, {} not run", cell.error, cell.not_run));
    }
    text
}

/// The cell's tokens (input plus output): `1234`, `1234 (+2 runs unknown)` when some runs'
/// usage is unknown (replays of cassettes without recorded usage).
pub fn tokens_text(cell: &ModelCell) -> String {
    let tokens = cell.cost.input_tokens + cell.cost.output_tokens;
    match cell.cost.usage_unknown_runs {
        0 => tokens.to_string(),
        n => format!("{tokens} (+{n} runs unknown)"),
    }
}

/// An amount, or `unknown`.
fn amount(value: Option<f64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), |v| v.to_string())
}

/// The cell's premium requests: `0`, `1.5`, or `unknown` (a run's runtime did not report them).
pub fn premium_text(cell: &ModelCell) -> String {
    amount(cell.cost.premium_requests)
}

/// The cell's estimated cost per pass in `currency` (`crate::cost::cost_per_pass_text`):
/// `0.0009 USD`, `unknown`, `no pass` or `n/a (scripted model)`.
pub fn cost_per_pass_text(cell: &ModelCell, currency: &str) -> String {
    crate::cost::cost_per_pass_text(&cell.cost, u64::from(cell.passed), currency)
}

/// The cell's estimated cost in `currency`: `0.0018 USD`, or `unknown`.
pub fn cost_text(cell: &ModelCell, currency: &str) -> String {
    match cell.cost.estimated_cost {
        Some(value) => format!("{value} {currency}").trim_end().to_owned(),
        None => "unknown".to_owned(),
    }
}

/// The cell's duration: `4.2 s`.
pub fn duration_text(cell: &ModelCell) -> String {
    format!("{:.1} s", cell.duration_ms as f64 / 1000.0)
}

/// The terminal's model matrix: per eval a heading line (`binary eval`) and one aligned row per
/// model (model, passed with rate and interval, tokens, premium requests, estimated cost in
/// `currency`, duration), each line indented by `indent`.
pub fn table(matrix: &[ModelMatrixEval], currency: &str, indent: &str) -> String {
    const HEADER: [&str; 7] = [
        "model",
        "passed",
        "tokens",
        "premium",
        "est. cost",
        "cost/pass",
        "duration",
    ];
    let mut out = String::new();
    for eval in matrix {
        out.push_str(&format!("{indent}{} {}\n", eval.binary, eval.eval));
        let mut rows: Vec<[String; 7]> = vec![HEADER.map(str::to_owned)];
        rows.extend(eval.models.iter().map(|cell| {
            [
                cell.model.clone(),
                rate_text(cell),
                tokens_text(cell),
                premium_text(cell),
                cost_text(cell, currency),
                cost_per_pass_text(cell, currency),
                duration_text(cell),
            ]
        }));
        let widths: Vec<usize> = (0..7)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(text, width)| format!("{text:<width$}"))
                .collect();
            out.push_str(&format!("{indent}  {}\n", cells.join("  ").trim_end()));
        }
    }
    out
}

#[cfg(test)]
mod tests;
