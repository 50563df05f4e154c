//! The HTML report's Skill triggers table: one row per skill (and per skill on each model of a
//! model matrix), its figures written as the terminal writes them (`report::triggers`).

use serde::Serialize;

use crate::report::SkillTriggers;
use crate::report::triggers::{
    TriggerFigures, false_triggers_text, precision_text, recall_text, triggered_text,
};

/// One row of the Skill triggers table.
#[derive(Debug, Serialize)]
pub(crate) struct TriggerRow {
    pub skill: String,
    /// The model of a model matrix's row; `None` for the skill's row over every model.
    pub model: Option<String>,
    /// `5/6 (83%, 95% CI 44%-97%)`.
    pub triggered: String,
    /// `1/6 (17%, 95% CI 3%-56%)`.
    pub false_triggers: String,
    /// `5/6 (83%)`: the invocations that should have happened.
    pub precision: String,
    /// `5/6 (83%)`: the should-trigger runs that invoked the skill.
    pub recall: String,
    /// Checks not counted in the rates (their record ended `error` or `not_run`, or never made
    /// a check it owed).
    pub not_counted: u32,
}

impl TriggerRow {
    fn of(skill: &str, model: Option<&str>, figures: &TriggerFigures) -> Self {
        TriggerRow {
            skill: skill.to_owned(),
            model: model.map(str::to_owned),
            triggered: triggered_text(figures),
            false_triggers: false_triggers_text(figures),
            precision: precision_text(figures),
            recall: recall_text(figures),
            not_counted: figures.not_counted,
        }
    }

    /// The rows of `skills`: each skill's row, then its models' rows.
    pub(super) fn rows(skills: &[SkillTriggers]) -> Vec<TriggerRow> {
        skills
            .iter()
            .flat_map(|skill| {
                std::iter::once(TriggerRow::of(&skill.skill, None, &skill.figures)).chain(
                    skill
                        .models
                        .iter()
                        .map(|m| TriggerRow::of(&skill.skill, Some(m.model.as_str()), &m.figures)),
                )
            })
            .collect()
    }
}
