//! `cargo copilot-eval plan`: what a suite run with the same options would cost, before it
//! spends anything. The evals are built and listed as for a run (nothing runs); per eval (per
//! model cell) the runs are trials x sides (2 with `--ablate` or `--aa`); then what is known of
//! the spend (an estimate from `--baseline`'s recorded costs, else none) and the caps; and with
//! `--detect PP` the trials per side a comparison needs to detect a difference of PP percentage
//! points ([`crate::stats::trials_to_detect`], alpha 0.05 two-sided, power 0.8) at each eval's
//! base rate observed in `--baseline`, else at `--base-rate`.

use super::list::TestList;
use super::{SuiteOptions, exit_code, models};
use crate::harness::Mode;
use crate::report::{Outcome, SuiteReport, TestRecord};

/// The significance level of `--detect` (two-sided).
pub const DETECT_ALPHA: f64 = 0.05;

/// The power of `--detect`: the chance that a real difference of that size is found.
pub const DETECT_POWER: f64 = 0.8;

/// What `plan` is asked.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// The suite run being planned (its selection, trials, models, `--ablate`, `--aa`,
    /// caps, `--baseline`).
    pub suite: SuiteOptions,
    /// `--detect PP`: the difference to detect, a fraction (0.2 for 20 points); `None`: no
    /// power calculation.
    pub detect: Option<f64>,
    /// `--base-rate PCT`: the pass rate assumed for an eval the baseline does not give, a
    /// fraction (default 0.5).
    pub base_rate: f64,
}

/// One eval (on one model) in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEval {
    /// Its test binary's id.
    pub binary: String,
    /// Its name as its records will have it (`name@model` on a model of `--models`).
    pub name: String,
    /// The test processes (runs) it will take: trials x sides.
    pub runs: u64,
    /// In the baseline: (passes, trials that reached a verdict), when it has any.
    pub observed: Option<(u32, u32)>,
    /// In the baseline: the mean estimated cost of one of its runs, when every run of it there
    /// was priced.
    pub cost_per_run: Option<f64>,
}

/// The plan of a suite run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Each selected eval on each model, in list order.
    pub evals: Vec<PlannedEval>,
    /// Trials per eval (`--trials`; 1 without, an attribute's `trials = N` is not known
    /// before the eval runs).
    pub trials: u32,
    /// Sides per trial: 2 with `--ablate` or `--aa`, else 1.
    pub sides: u32,
}

impl Plan {
    /// The plan of `options` over `list`, with what `baseline` recorded of each eval.
    pub fn of(list: &TestList, options: &SuiteOptions, baseline: Option<&SuiteReport>) -> Plan {
        let trials = options.trials.unwrap_or(1);
        let sides = if options.ablate.is_empty() && !options.aa {
            1
        } else {
            2
        };
        let evals = models::cells(list, &options.models)
            .into_iter()
            .map(|cell| {
                let test = &list.tests[cell.test];
                let name = match cell.model {
                    Some(model) => models::cell_name(&test.name, &options.models[model]),
                    None => test.name.clone(),
                };
                let binary = list.binary(test).id.clone();
                let recorded: Vec<&TestRecord> = baseline
                    .map(|b| {
                        (b.tests.iter())
                            .filter(|t| is_of(t, &binary, &name))
                            .collect()
                    })
                    .unwrap_or_default();
                PlannedEval {
                    runs: u64::from(trials) * u64::from(sides),
                    observed: observed(&recorded),
                    cost_per_run: cost_per_run(&recorded),
                    binary,
                    name,
                }
            })
            .collect();
        Plan {
            evals,
            trials,
            sides,
        }
    }

    /// The runs of every eval.
    pub fn runs(&self) -> u64 {
        self.evals.iter().map(|e| e.runs).sum()
    }
}

/// Whether `record` is one of the eval's own records (not an ablated side or an A/A arm B).
fn is_of(record: &TestRecord, binary: &str, name: &str) -> bool {
    record.binary == binary
        && record.name == name
        && record.ablated.is_empty()
        && record.arm != Some(crate::report::aa::Arm::B)
}

/// Passes and trials that reached a verdict among `records`; `None` when none did.
fn observed(records: &[&TestRecord]) -> Option<(u32, u32)> {
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count() as u32;
    let (passed, failed) = (count(Outcome::Passed), count(Outcome::Failed));
    (passed + failed > 0).then_some((passed, passed + failed))
}

/// The mean estimated cost of `records` that ran; `None` when none ran or one has no estimate.
fn cost_per_run(records: &[&TestRecord]) -> Option<f64> {
    let ran: Vec<&&TestRecord> = records.iter().filter(|r| !r.runs.is_empty()).collect();
    let costs: Option<Vec<f64>> = (ran.iter())
        .map(|r| r.cost.as_ref().and_then(|c| c.estimated_cost))
        .collect();
    let costs = costs.filter(|c| !c.is_empty())?;
    Some(costs.iter().sum::<f64>() / costs.len() as f64)
}

/// `3 evals`, `1 trial`.
fn plural(n: u64, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}

/// The plan as printed: the count, one line per eval, the spend, the caps, and with
/// `options.detect` the trials per side a comparison needs. `currency` is the pricing table's.
pub fn render(plan: &Plan, options: &PlanOptions, currency: &str) -> String {
    let suite = &options.suite;
    let mut factors = vec![plural(plan.evals.len() as u64, "eval")];
    if !suite.models.is_empty() {
        factors.push(format!(
            "(incl. {} each)",
            plural(suite.models.len() as u64, "model")
        ));
    }
    factors.push(plural(u64::from(plan.trials), "trial"));
    let sides = match (suite.ablate.is_empty(), suite.aa) {
        (false, _) => "2 sides (--ablate: with and without)",
        (true, true) => "2 sides (--aa: arm A and arm B)",
        (true, false) => "1 side",
    };
    factors.push(sides.to_owned());
    let mut out = format!(
        "plan: {} = {} (nothing runs now)\n",
        factors.join(" x "),
        plural(plan.runs(), "run")
    );
    if suite.trials.is_none() {
        out.push_str("  an eval's attribute `trials = N` adds N - 1 runs per side (known only when it runs; give --trials to fix the count)\n");
    }
    for eval in &plan.evals {
        let cost = match eval.cost_per_run {
            Some(cost) => format!(
                "est. {} {currency}",
                crate::cost::format_amount(cost * eval.runs as f64)
            ),
            None => "est. unknown".to_owned(),
        };
        out.push_str(&format!(
            "  {:>5} runs  {cost:<16}  {} {}\n",
            eval.runs, eval.binary, eval.name
        ));
    }
    out.push_str(&spend_lines(plan, suite, currency));
    if let Some(difference) = options.detect {
        out.push_str(&detect_lines(plan, options, difference));
    }
    out
}

/// What is known of the spend before the run, and the caps.
fn spend_lines(plan: &Plan, suite: &SuiteOptions, currency: &str) -> String {
    let mut out = String::new();
    let spend = match suite.mode {
        Mode::Replay => "spend: none: --replay replays every run from its cassette, no model request leaves the machine".to_owned(),
        Mode::Live | Mode::Record(_) => {
            let priced: Vec<&PlannedEval> = (plan.evals.iter())
                .filter(|e| e.cost_per_run.is_some())
                .collect();
            if priced.is_empty() {
                "spend: no estimate: an eval's cost is known only once it has run (give --baseline RESULTS.json of an earlier run to estimate from its recorded costs); scripted evals spend nothing".to_owned()
            } else {
                let total: f64 = (priced.iter())
                    .map(|e| e.cost_per_run.unwrap_or(0.0) * e.runs as f64)
                    .sum();
                format!(
                    "spend: est. {} {currency} for the {} of {} evals the baseline priced (their mean cost per run there x runs); unknown for the others",
                    crate::cost::format_amount(total),
                    priced.len(),
                    plan.evals.len()
                )
            }
        }
    };
    out.push_str(&spend);
    out.push('\n');
    let mut caps = Vec::new();
    if let Some(cost) = suite.cost.max_cost {
        caps.push(format!("--max-cost {cost}"));
    }
    if let Some(premium) = suite.cost.max_premium_requests {
        caps.push(format!("--max-premium-requests {premium}"));
    }
    out.push_str(&match caps.is_empty() {
        true => "caps: none (--max-cost, --max-premium-requests bound a live run's spend)\n"
            .to_owned(),
        false => format!(
            "caps: {}: no further run starts once the finished runs reach it (runs already going finish past it)\n",
            caps.join(" and ")
        ),
    });
    out
}

/// `--detect`: the trials per side at the assumed base rate, and at each eval's observed one.
fn detect_lines(plan: &Plan, options: &PlanOptions, difference: f64) -> String {
    let points = format!("{:.0}", difference * 100.0);
    let per_side = plan.trials;
    let verdict = |needed: Option<u64>| match needed {
        None => {
            "cannot be detected (the difference does not fit in 0-100% from that rate)".to_owned()
        }
        Some(n) if u64::from(per_side) >= n => {
            format!("{n} trials per side (this plan: {per_side}, enough)")
        }
        Some(n) => format!("{n} trials per side (this plan: {per_side}, too few)"),
    };
    let needs = |rate: f64| {
        verdict(crate::stats::trials_to_detect(
            rate,
            difference,
            DETECT_ALPHA,
            DETECT_POWER,
        ))
    };
    let mut out = format!(
        "detect: a comparison (two runs compared with `compare`, --ablate, --aa) needs, to detect a {points}-point difference at alpha {DETECT_ALPHA} two-sided with power {DETECT_POWER}:\n"
    );
    out.push_str(&format!(
        "  at a {} base rate (assumed, --base-rate): {}\n",
        crate::report::trials::percent(options.base_rate),
        needs(options.base_rate)
    ));
    for eval in &plan.evals {
        if let Some((passed, judged)) = eval.observed {
            let rate = f64::from(passed) / f64::from(judged);
            out.push_str(&format!(
                "  {} {} at its {} observed in the baseline ({passed}/{judged}): {}\n",
                eval.binary,
                eval.name,
                crate::report::trials::percent(rate),
                needs(rate)
            ));
        }
    }
    out
}

/// Run `plan`: build and list the evals as a suite run would, read `--baseline`, print the
/// plan on stdout; return the exit status: `0`, `2` when the baseline cannot be read, `4` when
/// no eval matched, `5` when the build or the listing failed.
pub fn run_plan(options: &PlanOptions) -> u8 {
    let suite = &options.suite;
    let mut list = match super::list::discover(&suite.build, &suite.filters, suite.exact) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::SUITE_ERROR;
        }
    };
    if let Some(partition) = suite.partition {
        partition.apply(&mut list);
    }
    let baseline = match suite.baseline.as_deref().map(super::decide::read_baseline) {
        None => None,
        Some(Ok(report)) => Some(report),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return exit_code::USAGE;
        }
    };
    if list.tests.is_empty() {
        eprintln!("{}", super::list::no_match_warning(&list, &suite.filters));
        return exit_code::NO_TESTS;
    }
    let plan = Plan::of(&list, suite, baseline.as_ref());
    print!("{}", render(&plan, options, suite.cost.pricing.currency()));
    exit_code::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(evals: usize, trials: u32, sides: u32) -> Plan {
        Plan {
            evals: (0..evals)
                .map(|i| PlannedEval {
                    binary: "b".into(),
                    name: format!("e{i}"),
                    runs: u64::from(trials * sides),
                    observed: (i == 0).then_some((3, 5)),
                    cost_per_run: None,
                })
                .collect(),
            trials,
            sides,
        }
    }

    /// 2 evals x 5 trials x 2 sides (--aa) = 20 runs; --detect 20 at the assumed 50% needs 93
    /// per side (stats::trials_to_detect's hand computation), and at e0's observed 3/5 = 60%:
    /// only +/-20 from 0.6 (0.8 and 0.4): the larger, 0.6 vs 0.4 (p̄ 0.5), gives
    /// (1.959964 * sqrt(0.5) + 0.841621 * sqrt(0.24 + 0.24))² / 0.04
    /// = (1.385904 + 0.583092)² / 0.04 = 3.876945 / 0.04 = 96.92: 97.
    #[test]
    fn the_plan_counts_runs_and_the_trials_a_difference_needs() {
        let mut suite = SuiteOptions::new();
        suite.mode = Mode::Replay;
        suite.trials = Some(5);
        suite.aa = true;
        let options = PlanOptions {
            suite,
            detect: Some(0.2),
            base_rate: 0.5,
        };
        let text = render(&plan(2, 5, 2), &options, "USD");
        assert!(
            text.starts_with("plan: 2 evals x 5 trials x 2 sides (--aa: arm A and arm B) = 20 runs (nothing runs now)\n"),
            "{text}"
        );
        assert!(
            text.contains("\n     10 runs  est. unknown      b e0\n"),
            "{text}"
        );
        assert!(text.contains("spend: none: --replay"), "{text}");
        assert!(
            text.contains("  at a 50% base rate (assumed, --base-rate): 93 trials per side (this plan: 5, too few)\n"),
            "{text}"
        );
        assert!(
            text.contains("  b e0 at its 60% observed in the baseline (3/5): 97 trials per side (this plan: 5, too few)\n"),
            "{text}"
        );
    }
}
