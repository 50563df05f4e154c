//! The HTML report's Criteria table: each criterion of the suite's comparisons, ablations and
//! model matrices, its sides' counts and whether it discriminates, written as the terminal
//! writes them (`report::discrimination`), under the suite's "N of M criteria discriminate".

use serde::Serialize;

use crate::report::discrimination::{
    self, CriterionDiscrimination, DiscriminationReport, count_text, sides_text, verdict_text,
};

/// The Criteria section.
#[derive(Debug, Serialize)]
pub(crate) struct DiscriminationView {
    /// `1 of 2 criteria discriminate`.
    pub count: String,
    /// One row per criterion, in the report's order.
    pub rows: Vec<CriterionRow>,
}

/// One row of the Criteria table.
#[derive(Debug, Serialize)]
pub(crate) struct CriterionRow {
    /// The eval.
    pub eval: String,
    /// Its test binary.
    pub binary: String,
    /// `comparison`, `ablation` or `model matrix`.
    pub surface: &'static str,
    /// `comparison 1, completed`.
    pub criterion: String,
    /// `baseline 3/3, treatment 3/3`.
    pub sides: String,
    /// The verdict's JSON value (`does_not_discriminate`), for the row's `data-verdict` and
    /// its class.
    pub verdict: &'static str,
    /// `does not discriminate (holds on every side in every trial)`.
    pub verdict_text: String,
}

impl DiscriminationView {
    /// The section of `report`; `None` without criteria.
    pub(super) fn of(report: Option<&DiscriminationReport>) -> Option<Self> {
        let report = report?;
        Some(DiscriminationView {
            count: count_text(report),
            rows: report.entries.iter().map(CriterionRow::of).collect(),
        })
    }
}

impl CriterionRow {
    fn of(entry: &CriterionDiscrimination) -> Self {
        use discrimination::{Discrimination, Surface};
        CriterionRow {
            eval: entry.eval.clone(),
            binary: entry.binary.clone(),
            surface: match entry.surface {
                Surface::Comparison => "comparison",
                Surface::Ablation => "ablation",
                Surface::ModelMatrix => "model matrix",
            },
            criterion: discrimination::label(entry),
            sides: sides_text(entry),
            verdict: match entry.verdict {
                Discrimination::Discriminates => "discriminates",
                Discrimination::DoesNotDiscriminate => "does_not_discriminate",
                Discrimination::NotOnEverySide => "not_on_every_side",
            },
            verdict_text: verdict_text(entry),
        }
    }
}
