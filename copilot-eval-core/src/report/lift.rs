//! Skill lift (`cargo copilot-eval --ablate skills`): every selected eval also ran without the
//! named inputs (its ablated side, records with `ablated`), same prompt and trials. Per eval
//! and per skill: the pass rate with and without, the lift (the difference) with Fisher's exact
//! test, tokens and time per run and estimated cost per pass on each side; an eval that passes
//! equally with and without says nothing about the skill ("no signal about the skill").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Outcome, TestRecord};
use crate::eval::Ablate;
use crate::stats;

/// The name of an eval's ablated side: `<eval> (without skills)`, `<eval> (without skills,
/// mcp)`.
pub fn ablated_name(name: &str, kinds: &[Ablate]) -> String {
    let kinds: Vec<&str> = kinds.iter().map(|kind| kind.as_str()).collect();
    format!("{name} (without {})", kinds.join(", "))
}

/// What the trials say about an eval's (or a skill's) lift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiftVerdict {
    /// The eval passes more often with the inputs, p < 0.05.
    Helps,
    /// The eval passes less often with the inputs, p < 0.05.
    Hurts,
    /// The two sides passed at the same rate: the eval says nothing about the inputs ("no
    /// signal about the skill").
    NoSignal,
    /// The pass rates differ, but not significantly with this many trials (`trials_needed`
    /// says how many the observed rates would need).
    Underpowered,
    /// A side has no trial that reached a verdict (every one `error` or `not_run`).
    Unknown,
}

impl LiftVerdict {
    /// The value as a person reads it: `helps`, `hurts`, `no signal about the skill`,
    /// `underpowered`, `unknown`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Helps => "helps",
            Self::Hurts => "hurts",
            Self::NoSignal => "no signal about the skill",
            Self::Underpowered => "underpowered",
            Self::Unknown => "unknown",
        }
    }
}

/// One side of a lift (with the inputs, or without): its trials' counts and costs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LiftSide {
    /// Trials (test processes) on this side.
    pub trials: u32,
    /// Trials that passed.
    pub passed: u32,
    /// Trials that failed.
    pub failed: u32,
    /// Trials that ended in `error` or were `not_run` (not in the pass rate).
    pub errors: u32,
    /// `passed / (passed + failed)`; `null` when no trial reached a verdict.
    pub pass_rate: Option<f64>,
    /// Input plus output tokens over the side's runs whose tokens are known.
    pub tokens: u64,
    /// Tool calls over the side's runs.
    pub tool_calls: u64,
    /// Wall time of the side's test processes, milliseconds.
    pub duration_ms: u64,
    /// Estimated cost over the side's runs (the pricing table's currency); `null` when unknown.
    pub estimated_cost: Option<f64>,
    /// `estimated_cost / passed`; `null` when the cost is unknown, nothing passed, or every run
    /// was scripted (pricing does not apply).
    pub cost_per_pass: Option<f64>,
    /// The side's cost totals, which [`crate::cost::cost_per_pass`] reads (not in the JSON: a
    /// results file's lift is recomputed from its records).
    #[serde(skip)]
    #[schemars(skip)]
    cost: crate::cost::CostTotals,
}

impl LiftSide {
    fn add(&mut self, test: &TestRecord) {
        self.trials += 1;
        match test.outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Error | Outcome::NotRun => self.errors += 1,
        }
        self.duration_ms += test.duration_ms;
        self.tool_calls += (test.runs.iter())
            .map(|run| run.tool_calls.len() as u64)
            .sum::<u64>();
        let cost = test.cost.clone().unwrap_or_default();
        if self.trials == 1 {
            self.cost = cost;
        } else {
            self.cost.add(&cost);
        }
    }

    fn settle(mut self) -> Self {
        let judged = self.passed + self.failed;
        self.pass_rate = (judged > 0).then(|| f64::from(self.passed) / f64::from(judged));
        self.tokens = self.cost.input_tokens + self.cost.output_tokens;
        self.estimated_cost = self.cost.estimated_cost;
        self.cost_per_pass = crate::cost::cost_per_pass(&self.cost, u64::from(self.passed));
        self
    }

    fn merge(&mut self, other: &LiftSide) {
        if self.trials == 0 {
            self.cost = other.cost.clone();
        } else {
            self.cost.add(&other.cost);
        }
        self.trials += other.trials;
        self.passed += other.passed;
        self.failed += other.failed;
        self.errors += other.errors;
        self.tool_calls += other.tool_calls;
        self.duration_ms += other.duration_ms;
    }
}

/// The lift of one eval (or one skill over its evals): both sides, their difference, Fisher's
/// exact test and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Lift {
    /// With the inputs (the normal side).
    pub with: LiftSide,
    /// Without them (the ablated side).
    pub without: LiftSide,
    /// `with.pass_rate - without.pass_rate`; `null` when either is unknown.
    pub lift: Option<f64>,
    /// The two-sided p-value of Fisher's exact test on the 2x2 table of passes and failures.
    pub p_value: f64,
    /// The verdict (`helps`, `hurts`, `no_signal`, `underpowered`, `unknown`).
    pub verdict: LiftVerdict,
    /// With `underpowered`: how many trials per side the observed rates would need to reach
    /// p < 0.05; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<u64>,
}

impl Lift {
    fn of(with: LiftSide, without: LiftSide) -> Self {
        let (with, without) = (with.settle(), without.settle());
        let p_value = stats::fisher_exact(
            u64::from(with.passed),
            u64::from(with.failed),
            u64::from(without.passed),
            u64::from(without.failed),
        );
        let lift = with.pass_rate.zip(without.pass_rate).map(|(a, b)| a - b);
        let verdict = match lift {
            None => LiftVerdict::Unknown,
            Some(lift) if p_value < super::compare_trials::SIGNIFICANCE_LEVEL => {
                if lift > 0.0 {
                    LiftVerdict::Helps
                } else {
                    LiftVerdict::Hurts
                }
            }
            Some(lift) if lift.abs() < f64::EPSILON => LiftVerdict::NoSignal,
            Some(_) => LiftVerdict::Underpowered,
        };
        let trials_needed = match (verdict, with.pass_rate, without.pass_rate) {
            (LiftVerdict::Underpowered, Some(a), Some(b)) => {
                Some(stats::trials_needed(b, a)).filter(|&n| n > 0)
            }
            _ => None,
        };
        Self {
            with,
            without,
            lift,
            p_value,
            verdict,
            trials_needed,
        }
    }
}

/// One eval's skill lift: the eval, the inputs its ablated side went without, and the lift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalLift {
    /// The test binary.
    pub binary: String,
    /// The eval (the normal side's record name).
    pub eval: String,
    /// The skill the eval is about: its `skill_evals` folder, else the skills its normal side
    /// invoked (`a, b`); absent when neither names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The kinds of input the ablated side went without.
    pub ablated: Vec<Ablate>,
    /// The figures.
    #[serde(flatten)]
    pub lift: Lift,
}

/// One skill's lift over the evals about it (their trials pooled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillLift {
    /// The skill (as the evals' `skill` names it).
    pub skill: String,
    /// Its evals, in list order.
    pub evals: Vec<String>,
    /// Its evals that passed equally with and without ("no signal about the skill").
    pub no_signal: Vec<String>,
    /// The figures over every trial of its evals.
    #[serde(flatten)]
    pub lift: Lift,
}

/// The skill lift of a suite run with `--ablate`: per eval and per skill.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillLiftReport {
    /// One entry per eval that has an ablated side, in list order.
    pub evals: Vec<EvalLift>,
    /// One entry per skill the evals name, in the order first named.
    pub skills: Vec<SkillLift>,
}

/// The skill lift of `tests`: each eval's records paired with its ablated side's (records with
/// `ablated`, named [`ablated_name`]); `None` when no record is ablated.
pub fn of(tests: &[TestRecord]) -> Option<SkillLiftReport> {
    let mut evals: Vec<(EvalLift, LiftSide, LiftSide)> = Vec::new();
    for ablated in tests.iter().filter(|t| !t.ablated.is_empty()) {
        let Some(base) = tests.iter().find(|t| {
            t.ablated.is_empty()
                && t.binary == ablated.binary
                && ablated_name(&t.name, &ablated.ablated) == ablated.name
        }) else {
            continue;
        };
        if evals
            .iter()
            .any(|(e, _, _)| e.binary == base.binary && e.eval == base.name)
        {
            continue;
        }
        let mut with = LiftSide::default();
        let mut without = LiftSide::default();
        let mut invoked: Vec<String> = Vec::new();
        for test in tests.iter().filter(|t| t.binary == base.binary) {
            if test.name == base.name && test.ablated.is_empty() {
                with.add(test);
                for name in test.runs.iter().flat_map(|r| &r.skills_invoked) {
                    if !invoked.contains(name) {
                        invoked.push(name.clone());
                    }
                }
            } else if test.name == ablated.name {
                without.add(test);
            }
        }
        let skill = match &base.skill_eval {
            Some(entry) => Some(entry.skill.clone()),
            None => (!invoked.is_empty()).then(|| invoked.join(", ")),
        };
        let eval = EvalLift {
            binary: base.binary.clone(),
            eval: base.name.clone(),
            skill,
            ablated: ablated.ablated.clone(),
            lift: Lift::of(with.clone(), without.clone()),
        };
        evals.push((eval, with, without));
    }
    if evals.is_empty() {
        return None;
    }
    // Per skill: its name, its evals, its evals without signal, and its two sides.
    type Pooled = (String, Vec<String>, Vec<String>, LiftSide, LiftSide);
    let mut skills: Vec<Pooled> = Vec::new();
    for (eval, with, without) in &evals {
        let Some(skill) = &eval.skill else { continue };
        let at = match skills.iter().position(|s| &s.0 == skill) {
            Some(at) => at,
            None => {
                skills.push((
                    skill.clone(),
                    Vec::new(),
                    Vec::new(),
                    LiftSide::default(),
                    LiftSide::default(),
                ));
                skills.len() - 1
            }
        };
        let entry = &mut skills[at];
        entry.1.push(eval.eval.clone());
        if eval.lift.verdict == LiftVerdict::NoSignal {
            entry.2.push(eval.eval.clone());
        }
        entry.3.merge(with);
        entry.4.merge(without);
    }
    Some(SkillLiftReport {
        evals: evals.into_iter().map(|(eval, _, _)| eval).collect(),
        skills: skills
            .into_iter()
            .map(|(skill, evals, no_signal, with, without)| SkillLift {
                skill,
                evals,
                no_signal,
                lift: Lift::of(with, without),
            })
            .collect(),
    })
}

/// A pass rate as a person reads it: `3/3 (100%)`, `0/3 (0%)`, `-` when no trial reached a
/// verdict.
pub fn rate_text(side: &LiftSide) -> String {
    match side.pass_rate {
        Some(rate) => format!(
            "{}/{} ({:.0}%)",
            side.passed,
            side.passed + side.failed,
            rate * 100.0
        ),
        None => "-".to_owned(),
    }
}

/// A lift as a person reads it: `+100 pp`, `-33 pp`, `0 pp`, `-` when unknown.
pub fn lift_text(lift: &Lift) -> String {
    match lift.lift {
        Some(value) if value.abs() < 1e-9 => "0 pp".to_owned(),
        Some(value) => format!("{:+.0} pp", value * 100.0),
        None => "-".to_owned(),
    }
}

/// A side's cost per pass in `currency` as the cost module writes it
/// ([`crate::cost::cost_per_pass_text`]): `0.002 USD`; `unknown` when the cost is unknown;
/// `no pass` when nothing passed; `n/a (scripted model)` when every run was scripted (never 0).
pub fn cost_per_pass_text(side: &LiftSide, currency: &str) -> String {
    crate::cost::cost_per_pass_text(&side.cost, u64::from(side.passed), currency)
}

/// The terminal's skill lift: per eval one row (eval, with, without, lift, p, verdict, tokens
/// per run with/without, seconds per run with/without, cost per pass with/without), then per
/// skill one row, each line indented by `indent`.
pub fn table(report: &SkillLiftReport, currency: &str, indent: &str) -> String {
    let header = [
        "eval",
        "with",
        "without",
        "lift",
        "p",
        "verdict",
        "tokens/run",
        "s/run",
        "cost/pass",
    ];
    let per_run = |total: u64, side: &LiftSide| match side.trials {
        0 => "-".to_owned(),
        n => format!("{}", total / u64::from(n)),
    };
    let seconds = |side: &LiftSide| match side.trials {
        0 => "-".to_owned(),
        n => format!("{:.1}", side.duration_ms as f64 / 1000.0 / f64::from(n)),
    };
    let row = |name: &str, lift: &Lift| -> Vec<String> {
        vec![
            name.to_owned(),
            rate_text(&lift.with),
            rate_text(&lift.without),
            lift_text(lift),
            format!("{:.4}", lift.p_value),
            match lift.trials_needed {
                Some(n) => format!("{} (needs {n} trials)", lift.verdict.words()),
                None => lift.verdict.words().to_owned(),
            },
            format!(
                "{} / {}",
                per_run(lift.with.tokens, &lift.with),
                per_run(lift.without.tokens, &lift.without)
            ),
            format!("{} / {}", seconds(&lift.with), seconds(&lift.without)),
            format!(
                "{} / {}",
                cost_per_pass_text(&lift.with, currency),
                cost_per_pass_text(&lift.without, currency)
            ),
        ]
    };
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    rows.extend(report.evals.iter().map(|e| row(&e.eval, &e.lift)));
    let evals = rows.len();
    rows.extend((report.skills.iter()).map(|s| row(&format!("skill {}", s.skill), &s.lift)));
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        if i == evals && evals < rows.len() {
            out.push('\n');
        }
        let cells: Vec<String> = (row.iter().zip(&widths))
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(indent);
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::test;

    fn side(name: &str, outcomes: &[Outcome], ablated: bool) -> Vec<TestRecord> {
        outcomes
            .iter()
            .map(|&outcome| {
                let mut record = test(name, "scripted::skill_evals", outcome, vec![]);
                if ablated {
                    record.name = ablated_name(name, &[Ablate::Skills]);
                    record.ablated = vec![Ablate::Skills];
                }
                record.skill_eval = Some(crate::report::SkillEvalRecord {
                    name: Some("changelog".into()),
                    skill: "skills/changelog".into(),
                    id: name.into(),
                    prompt: "p".into(),
                    expected_output: None,
                });
                record
            })
            .collect()
    }

    /// Two evals of one skill, 3 trials a side: one passes only with the skill (3/3 vs 0/3,
    /// Fisher p = 0.1: underpowered), one passes either way (no signal); the skill pools them
    /// (6/6 vs 3/6, p = 0.1818).
    #[test]
    fn each_eval_and_its_skill_get_the_lift_with_fishers_p() {
        use Outcome::{Failed, Passed};
        let mut tests = side("eval_1", &[Passed; 3], false);
        tests.extend(side("eval_1", &[Failed; 3], true));
        tests.extend(side("eval_3", &[Passed; 3], false));
        tests.extend(side("eval_3", &[Passed; 3], true));
        let report = of(&tests).unwrap();
        let [one, three] = &report.evals[..] else {
            panic!("{report:?}")
        };
        assert_eq!(one.eval, "eval_1");
        assert_eq!((one.lift.with.passed, one.lift.without.passed), (3, 0));
        assert_eq!(one.lift.lift, Some(1.0));
        assert!(
            (one.lift.p_value - 0.1).abs() < 1e-9,
            "{}",
            one.lift.p_value
        );
        assert_eq!(one.lift.verdict, LiftVerdict::Underpowered);
        assert_eq!(three.lift.verdict, LiftVerdict::NoSignal);
        assert_eq!(three.lift.lift, Some(0.0));
        let [skill] = &report.skills[..] else {
            panic!("{report:?}")
        };
        assert_eq!(skill.skill, "skills/changelog");
        assert_eq!(skill.no_signal, vec!["eval_3".to_owned()]);
        assert_eq!((skill.lift.with.passed, skill.lift.without.passed), (6, 3));
        assert!((skill.lift.p_value - 0.181818).abs() < 1e-5);
        // Unknown cost stays unknown: never 0; a side without a pass has no cost per pass.
        assert_eq!(one.lift.with.cost_per_pass, None);
        assert_eq!(cost_per_pass_text(&one.lift.with, "USD"), "unknown");
        assert_eq!(cost_per_pass_text(&one.lift.without, "USD"), "unknown");
        // Known costs: per pass, and pooled over a skill's evals.
        let priced = |outcome, cost: f64| {
            let mut record = side("eval_9", &[outcome], false).remove(0);
            record.cost = Some(crate::cost::CostTotals {
                estimated_cost: Some(cost),
                ..crate::cost::CostTotals::zero()
            });
            record
        };
        let mut tests = vec![
            priced(Passed, 0.25),
            priced(Passed, 0.25),
            priced(Failed, 0.5),
        ];
        let mut without = priced(Failed, 0.1);
        without.name = ablated_name("eval_9", &[Ablate::Skills]);
        without.ablated = vec![Ablate::Skills];
        tests.push(without);
        let report = of(&tests).unwrap();
        assert_eq!(report.evals[0].lift.with.cost_per_pass, Some(0.5));
        assert_eq!(report.skills[0].lift.with.cost_per_pass, Some(0.5));
        assert_eq!(report.skills[0].lift.without.estimated_cost, Some(0.1));
        // A known cost without a pass: no pass; scripted runs: pricing does not apply (never 0).
        let without = &report.evals[0].lift.without;
        assert_eq!(cost_per_pass_text(without, "USD"), "no pass");
        let scripted = |outcome| {
            let mut record = priced(outcome, 0.0);
            record.cost.as_mut().unwrap().not_applicable_runs = 1;
            record
        };
        let mut tests = vec![scripted(Passed)];
        let mut without = scripted(Passed);
        without.name = ablated_name("eval_9", &[Ablate::Skills]);
        without.ablated = vec![Ablate::Skills];
        tests.push(without);
        let report = of(&tests).unwrap();
        assert_eq!(report.evals[0].lift.with.cost_per_pass, None);
        assert_eq!(
            cost_per_pass_text(&report.evals[0].lift.with, "USD"),
            "n/a (scripted model)"
        );
        assert!(of(&side("eval_1", &[Passed], false)).is_none());
    }
}
