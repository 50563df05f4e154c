//! The A/A run (`cargo copilot-eval --aa`): every selected eval runs twice in each trial, as
//! arm A and arm B, with the same configuration (records with `arm`; arm B's named
//! `<eval> (arm B)`). Nothing differs between the arms but chance, so the fraction of (eval,
//! trial) pairs whose verdicts differ, the flip rate, is the suite's noise floor: a difference
//! between two real runs that is not above it says nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Outcome, TestRecord};
use crate::stats;

/// The arm of an A/A run a record belongs to ([`TestRecord::arm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// The first arm: the eval as it is, its records named as the eval.
    A,
    /// The second arm: the same configuration again, its records named `<eval> (arm B)`.
    B,
}

/// The name of an eval's arm B records: `<eval> (arm B)`.
pub fn arm_b_name(name: &str) -> String {
    format!("{name} (arm B)")
}

/// Label `record` as an arm of an A/A run: arm A keeps its name, arm B (`arm_b`) is named
/// [`arm_b_name`].
pub fn label(record: &mut TestRecord, arm_b: bool) {
    record.arm = Some(if arm_b { Arm::B } else { Arm::A });
    if arm_b {
        record.name = arm_b_name(&record.name);
    }
}

/// One eval's pairs in an A/A run: arm A's and arm B's record of the same trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalFlips {
    /// The eval's test path, as arm A's records' `name`.
    pub name: String,
    /// Its test binary, as its records' `binary`.
    pub binary: String,
    /// Pairs whose two records both reached a verdict (`passed` or `failed`).
    pub pairs: u32,
    /// Pairs whose two verdicts differ.
    pub flips: u32,
    /// `flips / pairs`, a fraction in [0, 1]; absent when no pair was compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate: Option<f64>,
    /// The trials whose pair flipped, in order (0 for an eval run once).
    pub flipped_trials: Vec<u32>,
    /// Pairs not compared: a record of either arm ended in `error`, was `not_run`, or is
    /// missing.
    pub not_compared: u32,
}

/// The suite's noise floor from an A/A run (`noise_floor` of the results): every eval's pairs
/// summed, with the flip rate and its 95% Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoiseFloor {
    /// (eval, trial) pairs whose two records both reached a verdict.
    pub pairs: u32,
    /// Pairs whose two verdicts differ.
    pub flips: u32,
    /// `flips / pairs`, a fraction in [0, 1]: the suite's noise floor; absent when no pair was
    /// compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate: Option<f64>,
    /// The 95% Wilson score interval of the flip rate, `[low, high]` fractions; absent with
    /// `flip_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate_interval: Option<[f64; 2]>,
    /// Pairs not compared (a record in `error`, `not_run` or missing).
    pub not_compared: u32,
    /// Each eval's pairs, in the order of its first arm A record.
    pub evals: Vec<EvalFlips>,
}

/// The noise floor of `tests` when they hold an A/A run (records with `arm`), else `None`.
/// Arm A's record of an eval's trial pairs with the arm B record of the same binary, name
/// ([`arm_b_name`]) and trial.
pub fn of(tests: &[TestRecord]) -> Option<NoiseFloor> {
    let mut evals: Vec<EvalFlips> = Vec::new();
    for a in tests.iter().filter(|t| t.arm == Some(Arm::A)) {
        let b_name = arm_b_name(&a.name);
        let b = tests.iter().find(|t| {
            t.arm == Some(Arm::B) && t.binary == a.binary && t.name == b_name && t.trial == a.trial
        });
        let at = match evals
            .iter()
            .position(|e| e.binary == a.binary && e.name == a.name)
        {
            Some(at) => at,
            None => {
                evals.push(EvalFlips {
                    name: a.name.clone(),
                    binary: a.binary.clone(),
                    pairs: 0,
                    flips: 0,
                    flip_rate: None,
                    flipped_trials: Vec::new(),
                    not_compared: 0,
                });
                evals.len() - 1
            }
        };
        let eval = &mut evals[at];
        let verdict = |o: Outcome| matches!(o, Outcome::Passed | Outcome::Failed);
        match b {
            Some(b) if verdict(a.outcome) && verdict(b.outcome) => {
                eval.pairs += 1;
                if a.outcome != b.outcome {
                    eval.flips += 1;
                    eval.flipped_trials.push(a.trial.map_or(0, |t| t.trial));
                }
            }
            _ => eval.not_compared += 1,
        }
    }
    if evals.is_empty() {
        return None;
    }
    for eval in &mut evals {
        eval.flipped_trials.sort_unstable();
        eval.flip_rate = stats::rate_with_interval(eval.flips, eval.pairs).0;
    }
    let pairs = evals.iter().map(|e| e.pairs).sum();
    let flips = evals.iter().map(|e| e.flips).sum();
    let (flip_rate, flip_rate_interval) = stats::rate_with_interval(flips, pairs);
    Some(NoiseFloor {
        pairs,
        flips,
        flip_rate,
        flip_rate_interval,
        not_compared: evals.iter().map(|e| e.not_compared).sum(),
        evals,
    })
}

/// The terminal's lines of `floor`, under `noise floor (A/A):`: the suite's flip rate, then one
/// line per eval, each indented by `indent`.
pub fn lines(floor: &NoiseFloor, indent: &str) -> String {
    let rate = |flips: u32, pairs: u32, rate: Option<f64>| match rate {
        Some(rate) => format!(
            "{flips} of {pairs} (eval, trial) pairs flipped: flip rate {}",
            super::trials::percent(rate)
        ),
        None => "no pair reached a verdict on both arms: flip rate unknown".to_owned(),
    };
    let mut out = format!(
        "{indent}{}",
        rate(floor.flips, floor.pairs, floor.flip_rate)
    );
    if let Some([low, high]) = floor.flip_rate_interval {
        out.push_str(&format!(
            " (95% CI {}-{})",
            super::trials::percent(low),
            super::trials::percent(high)
        ));
    }
    if floor.not_compared > 0 {
        out.push_str(&format!("; {} not compared", floor.not_compared));
    }
    out.push('\n');
    for eval in &floor.evals {
        out.push_str(&format!(
            "{indent}  {} {}: {}",
            eval.binary,
            eval.name,
            rate(eval.flips, eval.pairs, eval.flip_rate)
        ));
        if !eval.flipped_trials.is_empty() {
            let trials: Vec<String> = eval.flipped_trials.iter().map(u32::to_string).collect();
            out.push_str(&format!("; flipped trials: {}", trials.join(", ")));
        }
        if eval.not_compared > 0 {
            out.push_str(&format!("; {} not compared", eval.not_compared));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TrialOf;

    /// A record of `name` in `arm`, trial `trial` of 4, with `outcome`.
    fn record(name: &str, arm: Arm, trial: u32, outcome: Outcome) -> TestRecord {
        let mut record = crate::report::tests::test(name, "b", outcome, Vec::new());
        record.arm = Some(arm);
        record.trial = Some(TrialOf { trial, trials: 4 });
        if arm == Arm::B {
            record.name = arm_b_name(name);
        }
        record
    }

    /// Hand-made records: eval `x` agrees in trials 1 and 2 and flips in 3 and 4 (pass/fail,
    /// then fail/pass); eval `y` agrees in trials 1 to 3 and its trial 4 ended in an error on
    /// arm B, so it is not compared. Pairs: 4 of x + 3 of y = 7; flips: 2; flip rate 2/7.
    #[test]
    fn the_flip_rate_counts_pairs_whose_verdicts_differ() {
        use Outcome::{Error, Failed, Passed};
        let x = [
            (Passed, Passed),
            (Failed, Failed),
            (Passed, Failed),
            (Failed, Passed),
        ];
        let y = [
            (Passed, Passed),
            (Passed, Passed),
            (Failed, Failed),
            (Passed, Error),
        ];
        let mut tests = Vec::new();
        for (name, outcomes) in [("x", x), ("y", y)] {
            for (i, (a, b)) in outcomes.into_iter().enumerate() {
                tests.push(record(name, Arm::A, i as u32 + 1, a));
                tests.push(record(name, Arm::B, i as u32 + 1, b));
            }
        }
        let floor = of(&tests).expect("an A/A run");
        assert_eq!((floor.pairs, floor.flips, floor.not_compared), (7, 2, 1));
        assert_eq!(floor.flip_rate, Some(2.0 / 7.0));
        let [low, high] = floor.flip_rate_interval.unwrap();
        assert!(low < 2.0 / 7.0 && 2.0 / 7.0 < high, "{low} {high}");
        assert_eq!(floor.evals.len(), 2);
        assert_eq!(floor.evals[0].flipped_trials, vec![3, 4]);
        assert_eq!(floor.evals[0].flip_rate, Some(0.5));
        assert_eq!(
            (floor.evals[1].pairs, floor.evals[1].flips),
            (3, 0),
            "y's trial 4 is not compared"
        );
        assert_eq!(floor.evals[1].flip_rate, Some(0.0));
        let text = lines(&floor, "    ");
        assert!(
            text.starts_with("    2 of 7 (eval, trial) pairs flipped: flip rate 29% (95% CI "),
            "{text}"
        );
        assert!(
            text.contains("\n      b x: 2 of 4 (eval, trial) pairs flipped: flip rate 50%; flipped trials: 3, 4\n"),
            "{text}"
        );
        // Records without arms are no A/A run.
        let plain: Vec<TestRecord> = tests
            .into_iter()
            .map(|mut t| {
                t.arm = None;
                t
            })
            .collect();
        assert_eq!(of(&plain), None);
    }
}
