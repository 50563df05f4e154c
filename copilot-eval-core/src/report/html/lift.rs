//! The HTML report's Skill lift table (`--ablate`): one row per eval, then one per skill, its
//! figures written as the terminal writes them (`report::lift`).

use serde::Serialize;

use crate::report::lift::{
    Lift, LiftSide, SkillLiftReport, cost_per_pass_text, lift_text, rate_text,
};

/// One row of the Skill lift table.
#[derive(Debug, Serialize)]
pub(crate) struct LiftRow {
    /// `eval` or `skill`.
    pub kind: &'static str,
    /// The eval's or the skill's name.
    pub name: String,
    /// `3/3 (100%)`.
    pub with: String,
    /// `0/3 (0%)`.
    pub without: String,
    /// `+100 pp`.
    pub lift: String,
    /// `0.1000`.
    pub p: String,
    /// `underpowered (needs 5 trials)`, `no signal about the skill`.
    pub verdict: String,
    /// The verdict's JSON value (`no_signal`), for the row's `data-verdict`.
    pub verdict_value: String,
    /// `1200 / 800`.
    pub tokens: String,
    /// `1.2 s / 0.9 s`.
    pub time: String,
    /// `0.002 USD / unknown`.
    pub cost_per_pass: String,
}

impl LiftRow {
    fn of(kind: &'static str, name: &str, lift: &Lift, currency: &str) -> Self {
        let per_run = |total: u64, side: &LiftSide| match side.trials {
            0 => "-".to_owned(),
            n => (total / u64::from(n)).to_string(),
        };
        let seconds = |side: &LiftSide| match side.trials {
            0 => "-".to_owned(),
            n => format!("{:.1} s", side.duration_ms as f64 / 1000.0 / f64::from(n)),
        };
        LiftRow {
            kind,
            name: name.to_owned(),
            with: rate_text(&lift.with),
            without: rate_text(&lift.without),
            lift: lift_text(lift),
            p: format!("{:.4}", lift.p_value),
            verdict: match lift.trials_needed {
                Some(n) => format!("{} (needs {n} trials)", lift.verdict.words()),
                None => lift.verdict.words().to_owned(),
            },
            verdict_value: serde_json::to_value(lift.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            tokens: format!(
                "{} / {}",
                per_run(lift.with.tokens, &lift.with),
                per_run(lift.without.tokens, &lift.without)
            ),
            time: format!("{} / {}", seconds(&lift.with), seconds(&lift.without)),
            cost_per_pass: format!(
                "{} / {}",
                cost_per_pass_text(&lift.with, currency),
                cost_per_pass_text(&lift.without, currency)
            ),
        }
    }

    /// The rows of `report`: each eval's, then each skill's.
    pub(super) fn rows(report: Option<&SkillLiftReport>, currency: &str) -> Vec<LiftRow> {
        let Some(report) = report else {
            return Vec::new();
        };
        (report.evals.iter())
            .map(|e| LiftRow::of("eval", &e.eval, &e.lift, currency))
            .chain(
                (report.skills.iter()).map(|s| LiftRow::of("skill", &s.skill, &s.lift, currency)),
            )
            .collect()
    }
}
