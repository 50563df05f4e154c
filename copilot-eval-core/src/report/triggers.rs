//! Trigger and dormancy evals of skills: the typed check a test records with
//! `ctx.expect_trigger(&result, skill, Trigger::Invoke | Trigger::Dormant)` ([`TriggerCheck`],
//! kept in the test's evidence and its record's `triggers`), and the suite's figures per skill
//! over every eval, case and trial ([`SkillTriggers`]: the trigger rate of the runs that should
//! invoke the skill and the false-trigger rate of the runs that should not, each with its 95%
//! Wilson interval, and the precision and recall of the skill's invocations; per model too when
//! a model matrix ran).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::trials::percent;
use super::{Outcome, TestRecord};
use crate::stats;

/// What a trigger check expects of a skill on a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The prompt should make the model invoke the skill (a should-trigger case).
    Invoke,
    /// The prompt should leave the skill alone (a should-not-trigger case): invoking it is a
    /// false trigger.
    Dormant,
}

impl Trigger {
    /// The value as written: `invoke` or `dormant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invoke => "invoke",
            Self::Dormant => "dormant",
        }
    }
}

/// One trigger check of a test (`ctx.expect_trigger`): whether one run invoked one skill,
/// against what the test expected. Read from the run's `skill.invoked` events
/// (`CopilotResult::skill_was_invoked`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TriggerCheck {
    /// The skill's name (its `SKILL.md` `name`, as the runtime's `skill.invoked` event gives it).
    pub skill: String,
    /// What the test expected: `invoke` (should trigger) or `dormant` (should not).
    pub expected: Trigger,
    /// Whether the run invoked the skill (a `skill.invoked` event named it, main agent or a
    /// subagent), a custom agent's preload left out.
    pub invoked: bool,
    /// Whether a custom agent preloaded the skill (a `skill.invoked` event with trigger
    /// `context-load`: the agent lists it in `skills:`). Evidence of its own, never a trigger:
    /// it counts neither as triggered nor as a false trigger.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preloaded: bool,
    /// The checked run's number among the test's `runs`, from 1; absent when the result checked
    /// was not a run of this test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u64>,
}

impl TriggerCheck {
    /// Whether the check held: the skill was invoked when expected `invoke`, and was not when
    /// expected `dormant`.
    pub fn held(&self) -> bool {
        self.invoked == (self.expected == Trigger::Invoke)
    }
}

impl std::fmt::Display for TriggerCheck {
    /// What happened, as a test's assertion message: `release-notes was not invoked although
    /// the prompt should trigger it`, `release-notes was invoked although the prompt should not
    /// trigger it (a false trigger)`, or the held forms (`was invoked, as the prompt should
    /// trigger it`, `stayed dormant, as the prompt should not trigger it`); then, when a custom
    /// agent preloaded the skill, ` (release-notes was preloaded by a custom agent's `skills:`,
    /// which is not a trigger)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let skill = &self.skill;
        self.verdict_text(f, skill)?;
        if self.preloaded {
            write!(
                f,
                " ({skill} was preloaded by a custom agent's `skills:`, which is not a trigger)"
            )?;
        }
        Ok(())
    }
}

impl TriggerCheck {
    /// What happened to the skill, the preload left aside.
    fn verdict_text(&self, f: &mut std::fmt::Formatter<'_>, skill: &str) -> std::fmt::Result {
        match (self.expected, self.invoked) {
            (Trigger::Invoke, true) => {
                write!(f, "{skill} was invoked, as the prompt should trigger it")
            }
            (Trigger::Invoke, false) => write!(
                f,
                "{skill} was not invoked although the prompt should trigger it"
            ),
            (Trigger::Dormant, false) => write!(
                f,
                "{skill} stayed dormant, as the prompt should not trigger it"
            ),
            (Trigger::Dormant, true) => write!(
                f,
                "{skill} was invoked although the prompt should not trigger it (a false trigger)"
            ),
        }
    }
}

/// The trigger check a test of a skill's trigger set owes (`skill_triggers = ".."`): its
/// query's skill and expectation, kept in its record ([`TestRecord::trigger_query`]) so that a
/// test that never made the check is counted ([`TriggerFigures::not_counted`]), not dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TriggerQueryRecord {
    /// The skill's name.
    pub skill: String,
    /// The query's 1-based position in the trigger set (`evals/triggers.json`).
    pub number: u32,
    /// What the query should do: `invoke` (`should_trigger: true`) or `dormant`.
    pub expected: Trigger,
}

/// The trigger figures of one skill over a set of checks. Only checks of records that reached
/// a verdict (`passed` or `failed`) count towards the rates: a run stopped by an
/// infrastructure error says nothing about the skill's description. Every other check a
/// record made or owed is in `not_counted`, so that no run leaves the figures unseen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TriggerFigures {
    /// Checks expecting `invoke` (should-trigger runs).
    pub should_trigger: u32,
    /// Of those, runs that invoked the skill.
    pub triggered: u32,
    /// `triggered / should_trigger`, a fraction in [0, 1]; absent when `should_trigger` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_rate: Option<f64>,
    /// The 95% Wilson score interval of `trigger_rate`, `[low, high]` fractions; absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_rate_interval: Option<[f64; 2]>,
    /// Checks expecting `dormant` (should-not-trigger runs).
    pub should_not_trigger: u32,
    /// Of those, runs that invoked the skill anyway.
    pub false_triggers: u32,
    /// `false_triggers / should_not_trigger`, a fraction in [0, 1]; absent when
    /// `should_not_trigger` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_trigger_rate: Option<f64>,
    /// The 95% Wilson score interval of `false_trigger_rate`, `[low, high]` fractions; absent
    /// with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_trigger_rate_interval: Option<[f64; 2]>,
    /// Checks not counted in the rates: made by a record that ended `error` or `not_run`, or
    /// owed and never made: a record holds no check of a skill and expectation its trigger-set
    /// query owes ([`TestRecord::trigger_query`]) or the eval's other records (its other
    /// trials) checked, because its test failed, crashed, timed out or was not run before the
    /// check.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_counted: u32,
    /// Of the counted runs that invoked the skill, the fraction that should have:
    /// `triggered / (triggered + false_triggers)`, in [0, 1]; absent when no counted run invoked
    /// it. Like any precision it depends on the set's mix: more should-not queries give more
    /// chances of a false trigger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Of the counted runs that should invoke the skill, the fraction that did:
    /// `triggered / should_trigger`, in [0, 1] (the trigger rate, by its retrieval name); absent
    /// when `should_trigger` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One skill's trigger figures over the suite ([`super::SuiteReport::skill_triggers`]): every
/// check of it in every eval, case and trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillTriggers {
    /// The skill's name.
    pub skill: String,
    /// The figures over all its checks.
    #[serde(flatten)]
    pub figures: TriggerFigures,
    /// With a model matrix: the figures of the checks of each model's records (their
    /// `model`), in the order of each model's first check; absent when no checked record had a
    /// model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelTriggers>,
}

/// One skill's trigger figures on one model of a model matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelTriggers {
    /// The model id, as the records' `model`.
    pub model: String,
    /// The figures over the checks of that model's records.
    #[serde(flatten)]
    pub figures: TriggerFigures,
}

impl TriggerFigures {
    /// Count `check` of a record that ended with `outcome`.
    fn add(&mut self, check: &TriggerCheck, outcome: Outcome) {
        if !matches!(outcome, Outcome::Passed | Outcome::Failed) {
            self.not_counted += 1;
            return;
        }
        match check.expected {
            Trigger::Invoke => {
                self.should_trigger += 1;
                self.triggered += u32::from(check.invoked);
            }
            Trigger::Dormant => {
                self.should_not_trigger += 1;
                self.false_triggers += u32::from(check.invoked);
            }
        }
    }

    /// Set the rates and intervals from the counts.
    fn finish(&mut self) {
        (self.trigger_rate, self.trigger_rate_interval) =
            stats::rate_with_interval(self.triggered, self.should_trigger);
        (self.false_trigger_rate, self.false_trigger_rate_interval) =
            stats::rate_with_interval(self.false_triggers, self.should_not_trigger);
        self.precision = self.precision_of_counts();
        self.recall = self.recall_of_counts();
    }

    /// `triggered / (triggered + false_triggers)` from the counts (`precision`, also for a
    /// results file written before the field existed); `None` when no counted run invoked the
    /// skill.
    pub fn precision_of_counts(&self) -> Option<f64> {
        let invoked = self.triggered + self.false_triggers;
        (invoked > 0).then(|| f64::from(self.triggered) / f64::from(invoked))
    }

    /// `triggered / should_trigger` from the counts (`recall`); `None` when `should_trigger` is
    /// 0.
    pub fn recall_of_counts(&self) -> Option<f64> {
        (self.should_trigger > 0)
            .then(|| f64::from(self.triggered) / f64::from(self.should_trigger))
    }
}

/// The checks `test` owes: a (skill, expectation) pair of its trigger-set query, or, for a
/// trial, of a check any trial of its eval (the same binary and name) made, in the order first
/// seen.
fn owed<'a>(test: &'a TestRecord, tests: &'a [TestRecord]) -> Vec<(&'a str, Trigger)> {
    let mut owed: Vec<(&str, Trigger)> = Vec::new();
    let trials = tests.iter().filter(|t| {
        test.trial.is_some() && t.trial.is_some() && t.binary == test.binary && t.name == test.name
    });
    let eval = std::iter::once(test).chain(trials);
    for record in eval {
        let pairs = record
            .trigger_query
            .iter()
            .map(|q| (q.skill.as_str(), q.expected))
            .chain(
                record
                    .triggers
                    .iter()
                    .map(|c| (c.skill.as_str(), c.expected)),
            );
        for pair in pairs {
            if !owed.contains(&pair) {
                owed.push(pair);
            }
        }
    }
    owed
}

/// The figures of `skill` in `skills` (added, empty, when new), and of its `model` cell when
/// given.
fn figures_of<'a>(
    skills: &'a mut Vec<SkillTriggers>,
    skill: &str,
    model: Option<&str>,
) -> (&'a mut TriggerFigures, Option<&'a mut TriggerFigures>) {
    let index = match skills.iter().position(|s| s.skill == skill) {
        Some(index) => index,
        None => {
            skills.push(SkillTriggers {
                skill: skill.to_owned(),
                figures: TriggerFigures::default(),
                models: Vec::new(),
            });
            skills.len() - 1
        }
    };
    let entry = &mut skills[index];
    let cell = model.map(
        |model| match entry.models.iter().position(|m| m.model == model) {
            Some(cell) => cell,
            None => {
                entry.models.push(ModelTriggers {
                    model: model.to_owned(),
                    figures: TriggerFigures::default(),
                });
                entry.models.len() - 1
            }
        },
    );
    let SkillTriggers {
        figures, models, ..
    } = entry;
    (figures, cell.map(move |cell| &mut models[cell].figures))
}

/// The trigger figures of every skill `tests` checked or owed a check of, in the order of each
/// skill's first check (or owed check); empty when no test recorded or owed a trigger check.
/// A record without a check it owes (its trigger-set query's, or, for a trial, one its eval's
/// other trials made) counts in `not_counted`.
pub fn of(tests: &[TestRecord]) -> Vec<SkillTriggers> {
    let mut skills: Vec<SkillTriggers> = Vec::new();
    for test in tests {
        for check in &test.triggers {
            let (figures, cell) = figures_of(&mut skills, &check.skill, test.model.as_deref());
            figures.add(check, test.outcome);
            if let Some(cell) = cell {
                cell.add(check, test.outcome);
            }
        }
        for (skill, expected) in owed(test, tests) {
            let made = test
                .triggers
                .iter()
                .any(|c| c.skill == skill && c.expected == expected);
            if !made {
                let (figures, cell) = figures_of(&mut skills, skill, test.model.as_deref());
                figures.not_counted += 1;
                if let Some(cell) = cell {
                    cell.not_counted += 1;
                }
            }
        }
    }
    for skill in &mut skills {
        skill.figures.finish();
        for model in &mut skill.models {
            model.figures.finish();
        }
    }
    skills
}

/// `5/6 (83%, 95% CI 44%-97%)`: hits over runs with the rate and interval; `0/0` with none.
fn count_text(hits: u32, runs: u32, rate: Option<f64>, interval: Option<[f64; 2]>) -> String {
    match (rate, interval) {
        (Some(rate), Some([low, high])) => format!(
            "{hits}/{runs} ({}, 95% CI {}-{})",
            percent(rate),
            percent(low),
            percent(high)
        ),
        _ => format!("{hits}/{runs}"),
    }
}

/// The trigger rate as the terminal, the JUnit XML and the HTML page write it:
/// `5/6 (83%, 95% CI 44%-97%)`.
pub fn triggered_text(figures: &TriggerFigures) -> String {
    count_text(
        figures.triggered,
        figures.should_trigger,
        figures.trigger_rate,
        figures.trigger_rate_interval,
    )
}

/// The false-trigger rate, written as [`triggered_text`]: `1/6 (17%, 95% CI 3%-56%)`.
pub fn false_triggers_text(figures: &TriggerFigures) -> String {
    count_text(
        figures.false_triggers,
        figures.should_not_trigger,
        figures.false_trigger_rate,
        figures.false_trigger_rate_interval,
    )
}

/// The precision as the terminal and the HTML page write it: `5/6 (83%)`, the skill's
/// invocations that should have happened; `n/a (never invoked)` when no counted run invoked it.
pub fn precision_text(figures: &TriggerFigures) -> String {
    match figures.precision_of_counts() {
        Some(precision) => format!(
            "{}/{} ({})",
            figures.triggered,
            figures.triggered + figures.false_triggers,
            percent(precision)
        ),
        None => "n/a (never invoked)".to_owned(),
    }
}

/// The recall as the terminal and the HTML page write it: `5/6 (83%)`, the should-trigger runs
/// that invoked the skill; `n/a (no should-trigger run)` when there is none.
pub fn recall_text(figures: &TriggerFigures) -> String {
    match figures.recall_of_counts() {
        Some(recall) => format!(
            "{}/{} ({})",
            figures.triggered,
            figures.should_trigger,
            percent(recall)
        ),
        None => "n/a (no should-trigger run)".to_owned(),
    }
}

/// One line of figures: `triggered 5/6 (83%, 95% CI 44%-97%), false triggers 1/6 (17%, 95% CI
/// 3%-56%), precision 5/6 (83%), recall 5/6 (83%)`, then `, 2 checks not counted (error, not
/// run or never made)` when there are such.
pub fn figures_text(figures: &TriggerFigures) -> String {
    let mut text = format!(
        "triggered {}, false triggers {}, precision {}, recall {}",
        triggered_text(figures),
        false_triggers_text(figures),
        precision_text(figures),
        recall_text(figures)
    );
    if figures.not_counted > 0 {
        text.push_str(&format!(
            ", {} checks not counted (error, not run or never made)",
            figures.not_counted
        ));
    }
    text
}

/// The terminal's lines under `skill triggers:`: per skill `<skill>: <figures>`, then with a
/// model matrix one line per model, `<skill>@<model>: <figures>`, each line indented by
/// `indent`.
pub fn lines(skills: &[SkillTriggers], indent: &str) -> String {
    let mut out = String::new();
    for skill in skills {
        out.push_str(&format!(
            "{indent}{}: {}\n",
            skill.skill,
            figures_text(&skill.figures)
        ));
        for model in &skill.models {
            out.push_str(&format!(
                "{indent}  {}@{}: {}\n",
                skill.skill,
                model.model,
                figures_text(&model.figures)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
