//! The cost sums the results keep: [`CostTotals`] per run, test and suite, and the pricing of a
//! test's runs with a pricing table ([`price_runs`], [`estimate_run`]). A run is read and priced
//! through [`PricedRun`], which the results' run record implements.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PricingTable, Spend, Unpriced};
use crate::evidence::Usage;

/// Tokens, model calls and cost, summed over runs (one test's, or the whole suite's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CostTotals {
    /// Model calls (`assistant.usage` events).
    pub model_calls: u64,
    /// Input tokens (every prompt token, cached ones included).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Sum of `assistant.usage.cost` as the runtime reports it (premium-request units);
    /// `null` when no call reported one.
    pub reported_cost: Option<f64>,
    /// Premium requests as the runtime reports them per session, summed; `null` when a run's
    /// runtime did not report them (unknown, not 0).
    pub premium_requests: Option<f64>,
    /// Estimated cost from the pricing table, in its currency (top-level `cost_control`);
    /// `null` when a call could not be priced (see `unpriced_models`) or nothing was priced.
    pub estimated_cost: Option<f64>,
    /// Models (with what is missing) whose calls could not be priced, e.g.
    /// `gpt-x: not in the pricing table`, or
    /// `claude-sonnet-4.5: token usage unknown (replayed from a cassette without recorded usage)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Runs whose token counts are unknown (`totals.tokens` = `unknown`: replays of cassettes
    /// without recorded usage). Their tokens are not in the sums above (so with any such run the
    /// token sums cover only the other runs) and their cost is not estimated (`estimated_cost`
    /// is then `null`). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage_unknown_runs: u64,
    /// Runs pricing does not apply to (`totals.cost_not_applicable`: scripted runs). They spent
    /// nothing: their tokens are in the sums above, but each counts 0 in `estimated_cost`.
    /// Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_applicable_runs: u64,
}

/// The `cost_not_applicable` of a scripted run.
pub const SCRIPTED_MODEL: &str = "scripted model";

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for CostTotals {
    /// Nothing known: zero counts, and `null` reported cost, premium requests and estimate (what
    /// a results file written before these fields existed reads as). Sums start from
    /// [`CostTotals::zero`].
    fn default() -> Self {
        Self {
            model_calls: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            reported_cost: None,
            premium_requests: None,
            estimated_cost: None,
            unpriced_models: Vec::new(),
            usage_unknown_runs: 0,
            not_applicable_runs: 0,
        }
    }
}

impl CostTotals {
    /// Nothing used: zero tokens and calls, 0 premium requests, an estimate of 0, no reported
    /// cost. The start of every sum.
    pub fn zero() -> Self {
        Self {
            premium_requests: Some(0.0),
            estimated_cost: Some(0.0),
            ..Self::default()
        }
    }

    /// Sums over `runs`, from each run's own figures ([`PricedRun::cost_totals`]:
    /// `premium_requests` and `estimated_cost` are `None` as soon as one run's is).
    pub fn of_runs<R: PricedRun>(runs: &[R]) -> Self {
        let mut totals = Self::zero();
        for run in runs {
            totals.add(&run.cost_totals());
        }
        totals
    }

    /// What these totals count toward the cost caps: the estimate, the premium requests and
    /// the calls that could not be priced.
    pub fn spend(&self) -> Spend {
        Spend {
            estimated_cost: self.estimated_cost,
            premium_requests: self.premium_requests,
            unpriced_models: self.unpriced_models.clone(),
        }
    }

    /// Add `other` into `self`: counts add; `reported_cost` adds the known values (stays `None`
    /// only when both are); `premium_requests` and `estimated_cost` become `None` when either is;
    /// `unpriced_models` are merged without duplicates.
    pub fn add(&mut self, other: &CostTotals) {
        self.model_calls += other.model_calls;
        self.usage_unknown_runs += other.usage_unknown_runs;
        self.not_applicable_runs += other.not_applicable_runs;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reported_cost = match (self.reported_cost, other.reported_cost) {
            (None, None) => None,
            (a, b) => Some(round_amount(a.unwrap_or(0.0) + b.unwrap_or(0.0))),
        };
        self.premium_requests = self
            .premium_requests
            .zip(other.premium_requests)
            .map(|(a, b)| a + b);
        self.estimated_cost = self
            .estimated_cost
            .zip(other.estimated_cost)
            .map(|(a, b)| round_amount(a + b));
        for model in &other.unpriced_models {
            if !self.unpriced_models.contains(model) {
                self.unpriced_models.push(model.clone());
            }
        }
    }
}

/// The estimated cost per passing trial: `estimated_cost / passes`, rounded as amounts are.
/// `None` (never 0) when the cost is unknown, when nothing passed, or when pricing does not
/// apply (the runs were scripted: nothing was spent).
pub fn cost_per_pass(cost: &CostTotals, passes: u64) -> Option<f64> {
    let total = cost.estimated_cost?;
    if passes == 0 || not_applicable(cost) {
        return None;
    }
    Some(round_amount(total / passes as f64))
}

/// [`cost_per_pass`] as people read it: `0.0012 USD`, else `unknown` (the cost is unknown),
/// `no pass`, or `n/a (scripted model)`.
pub fn cost_per_pass_text(cost: &CostTotals, passes: u64, currency: &str) -> String {
    match cost_per_pass(cost, passes) {
        Some(value) => format!("{} {currency}", super::format_amount(value))
            .trim_end()
            .to_owned(),
        None if cost.estimated_cost.is_none() => "unknown".to_owned(),
        None if not_applicable(cost) => format!("n/a ({SCRIPTED_MODEL})"),
        None => "no pass".to_owned(),
    }
}

/// Whether pricing does not apply to these totals: every priced run was scripted.
fn not_applicable(cost: &CostTotals) -> bool {
    cost.not_applicable_runs > 0 && cost.estimated_cost == Some(0.0)
}

/// A money amount as the artifacts keep it: rounded to millionths of the currency unit (the
/// display's precision), so sums of prices never show float noise such as
/// `0.005399999999999999`.
pub(crate) fn round_amount(value: f64) -> f64 {
    (value * 1_000_000.0).round() / 1_000_000.0
}

/// A run as pricing reads and writes it. The results' run record implements it
/// (`report::RunRecord`), so that this module need not know the results format.
pub trait PricedRun {
    /// Whether a script played the model (`ctx.offline`): nothing was spent, and pricing does
    /// not apply ([`SCRIPTED_MODEL`]).
    fn scripted(&self) -> bool;
    /// Whether the run's token counts are known (not a replay of a cassette without recorded
    /// usage).
    fn tokens_known(&self) -> bool;
    /// The model a call that names none is priced as: the model the run used, else the one it
    /// requested.
    fn model(&self) -> Option<&str>;
    /// The run's model calls.
    fn calls(&self) -> &[Usage];
    /// The run's own figures as the sum of one run: its tokens and calls, the cost and premium
    /// requests its runtime reported, and its estimate as last priced (0 when pricing does not
    /// apply); `usage_unknown_runs` and `not_applicable_runs` are 1 or 0.
    fn cost_totals(&self) -> CostTotals;
    /// Record the run's estimated cost (`None`: unknown).
    fn set_estimate(&mut self, estimate: Option<f64>);
    /// Record that pricing does not apply to the run, and why (its estimate is then `None`).
    fn set_not_applicable(&mut self, why: &str);
}

/// Price every run of `runs` with `table` (each run's estimate) and return their sums, with the
/// calls that could not be priced in `unpriced_models`. A run whose tokens are unknown is not
/// priced: its estimate is `None` and its model is listed as `<model>: token usage unknown
/// (...)`. A scripted run is not priced either: its estimate is `None` and pricing does not
/// apply to it ([`SCRIPTED_MODEL`]; it counts 0 in the sums).
pub fn price_runs<R: PricedRun>(table: &PricingTable, runs: &mut [R]) -> CostTotals {
    let mut unpriced: Vec<String> = Vec::new();
    let mut note = |text: String| {
        if !unpriced.contains(&text) {
            unpriced.push(text);
        }
    };
    for run in runs.iter_mut() {
        if run.scripted() {
            run.set_not_applicable(SCRIPTED_MODEL);
            continue;
        }
        if !run.tokens_known() {
            run.set_estimate(None);
            let model = run.model().unwrap_or("(unknown model)");
            note(format!(
                "{model}: token usage unknown (replayed from a cassette without recorded usage)"
            ));
            continue;
        }
        match estimate_run(table, run) {
            Ok(cost) => run.set_estimate(Some(round_amount(cost))),
            Err(missing) => {
                run.set_estimate(None);
                for m in missing {
                    note(m.to_string());
                }
            }
        }
    }
    let mut totals = CostTotals::of_runs(runs);
    totals.unpriced_models = unpriced;
    totals
}

/// The estimated cost of one run with `table`: the sum of [`PricingTable::estimate_call`] over
/// its calls (a call naming no model is priced as the run's [`model`](PricedRun::model)). A run
/// with no model call costs 0.
///
/// Errors: every call that could not be priced, deduplicated by model and reason.
pub fn estimate_run<R: PricedRun + ?Sized>(
    table: &PricingTable,
    run: &R,
) -> Result<f64, Vec<Unpriced>> {
    let fallback = run.model();
    let mut total = 0.0;
    let mut unpriced: Vec<Unpriced> = Vec::new();
    for call in run.calls() {
        match table.estimate_call(
            call.model.as_deref().or(fallback),
            call.input_tokens,
            call.output_tokens,
            call.cache_read_tokens,
            call.cache_write_tokens,
        ) {
            Ok(cost) => total += cost,
            Err(e) => {
                if !unpriced.contains(&e) {
                    unpriced.push(e);
                }
            }
        }
    }
    if unpriced.is_empty() {
        Ok(total)
    } else {
        Err(unpriced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_kept_without_float_noise() {
        assert_eq!(0.1 + 0.2, 0.30000000000000004);
        assert_eq!(round_amount(0.1 + 0.2), 0.3);
        assert_eq!(
            serde_json::to_string(&round_amount(0.1 + 0.2)).unwrap(),
            "0.3"
        );
        let mut a = CostTotals::zero();
        a.estimated_cost = Some(0.1);
        let mut b = CostTotals::zero();
        b.estimated_cost = Some(0.2);
        a.add(&b);
        assert_eq!(a.estimated_cost, Some(0.3));
    }
}
