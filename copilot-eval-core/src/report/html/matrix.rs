//! The HTML report's Model matrix: per eval one table with a row per model, its figures written
//! as the terminal writes them (`report::matrix`).

use serde::Serialize;

use crate::report::ModelMatrixEval;
use crate::report::matrix::{
    cost_per_pass_text, cost_text, duration_text, premium_text, rate_text, tokens_text,
};

/// One eval of a model matrix and its models' rows.
#[derive(Debug, Serialize)]
pub(crate) struct MatrixView {
    pub eval: String,
    pub binary: String,
    pub rows: Vec<MatrixRow>,
}

/// One model of an eval: the cells of its row.
#[derive(Debug, Serialize)]
pub(crate) struct MatrixRow {
    pub model: String,
    /// `2/3 (67%, 95% CI 21%-94%)`.
    pub passed: String,
    pub tokens: String,
    pub premium: String,
    pub cost: String,
    pub cost_per_pass: String,
    pub duration: String,
}

impl MatrixView {
    pub(super) fn of(eval: &ModelMatrixEval, currency: &str) -> Self {
        MatrixView {
            eval: eval.eval.clone(),
            binary: eval.binary.clone(),
            rows: eval
                .models
                .iter()
                .map(|cell| MatrixRow {
                    model: cell.model.clone(),
                    passed: rate_text(cell),
                    tokens: tokens_text(cell),
                    premium: premium_text(cell),
                    cost: cost_text(cell, currency),
                    cost_per_pass: cost_per_pass_text(cell, currency),
                    duration: duration_text(cell),
                })
                .collect(),
        }
    }
}
