//! The cost sums of the results: [`CostTotals`] per run, test and suite, and pricing a test
//! record with a pricing table ([`price_test`], [`estimate_run`]). Prices and caps themselves are
//! in [`crate::cost`]; a test record reaches the caps as a [`Chargeable`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{RunRecord, TestRecord};
use crate::cost::{Chargeable, PricingTable, Spend, Unpriced};

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

    /// Sums over `runs`, from each run's `totals` (`premium_requests` and `estimated_cost` are
    /// `None` as soon as one run's is).
    pub fn of_runs(runs: &[RunRecord]) -> Self {
        let mut totals = Self::zero();
        for run in runs {
            let t = &run.totals;
            totals.add(&Self {
                model_calls: t.model_calls,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
                cache_read_tokens: t.cache_read_tokens,
                cache_write_tokens: t.cache_write_tokens,
                reported_cost: t.cost,
                premium_requests: t.premium_requests,
                estimated_cost: match t.cost_not_applicable {
                    Some(_) => Some(0.0),
                    None => t.estimated_cost,
                },
                unpriced_models: Vec::new(),
                usage_unknown_runs: u64::from(!t.tokens.is_reported()),
                not_applicable_runs: u64::from(t.cost_not_applicable.is_some()),
            });
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

/// A money amount as the artifacts keep it: rounded to millionths of the currency unit (the
/// display's precision), so sums of prices never show float noise such as
/// `0.005399999999999999`.
pub(crate) fn round_amount(value: f64) -> f64 {
    (value * 1_000_000.0).round() / 1_000_000.0
}

/// Price every run of `test` with `table` (each run's `totals.estimated_cost`) and set
/// `test.cost` to the test's sums, with the calls that could not be priced in
/// `unpriced_models`. A run whose tokens are unknown (`totals.tokens`) is not priced: its
/// estimate is `None` and its model is listed as `<model>: token usage unknown (...)`. A
/// scripted run is not priced either: its estimate is `None` and its `cost_not_applicable`
/// says `scripted model` (it counts 0 in the test's sums).
pub fn price_test(table: &PricingTable, test: &mut TestRecord) {
    let mut unpriced: Vec<String> = Vec::new();
    for run in &mut test.runs {
        if run.mode == "scripted" {
            run.totals.estimated_cost = None;
            run.totals.cost_not_applicable = Some(SCRIPTED_MODEL.to_owned());
            continue;
        }
        if !run.totals.tokens.is_reported() {
            run.totals.estimated_cost = None;
            let model = run
                .model_used
                .as_deref()
                .or(run.model_requested.as_deref())
                .unwrap_or("(unknown model)");
            let text = format!(
                "{model}: token usage unknown (replayed from a cassette without recorded usage)"
            );
            if !unpriced.contains(&text) {
                unpriced.push(text);
            }
            continue;
        }
        match estimate_run(table, run) {
            Ok(cost) => run.totals.estimated_cost = Some(round_amount(cost)),
            Err(missing) => {
                run.totals.estimated_cost = None;
                for m in missing {
                    let text = m.to_string();
                    if !unpriced.contains(&text) {
                        unpriced.push(text);
                    }
                }
            }
        }
    }
    let mut totals = CostTotals::of_runs(&test.runs);
    totals.unpriced_models = unpriced;
    test.cost = Some(totals);
    // A comparison's sides carry their runs' estimates: read them again.
    for comparison in &mut test.comparisons {
        comparison.refresh(&test.runs);
    }
    // So do a judge's sessions.
    for judge in &mut test.judges {
        judge.refresh(&test.runs);
    }
}

/// The estimated cost of one run with `table`: the sum of [`PricingTable::estimate_call`] over
/// its `usage` (a call naming no model is priced as the run's `model_used`, else
/// `model_requested`). A run with no model call costs 0.
///
/// Errors: every call that could not be priced, deduplicated by model and reason.
pub fn estimate_run(table: &PricingTable, run: &RunRecord) -> Result<f64, Vec<Unpriced>> {
    let fallback = run.model_used.as_deref().or(run.model_requested.as_deref());
    let mut total = 0.0;
    let mut unpriced: Vec<Unpriced> = Vec::new();
    for call in &run.usage {
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

impl Chargeable for TestRecord {
    /// [`price_test`], then the test's sums as a [`Spend`].
    fn price(&mut self, pricing: &PricingTable) -> Spend {
        price_test(pricing, self);
        self.cost
            .as_ref()
            .map(CostTotals::spend)
            .unwrap_or_else(Spend::zero)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn amounts_are_kept_without_float_noise() {
        assert_eq!(0.1 + 0.2, 0.30000000000000004);
        assert_eq!(super::round_amount(0.1 + 0.2), 0.3);
        assert_eq!(
            serde_json::to_string(&super::round_amount(0.1 + 0.2)).unwrap(),
            "0.3"
        );
        let mut a = CostTotals::zero();
        a.estimated_cost = Some(0.1);
        let mut b = CostTotals::zero();
        b.estimated_cost = Some(0.2);
        a.add(&b);
        assert_eq!(a.estimated_cost, Some(0.3));
    }

    use super::*;
    use crate::cost::{CostControl, CostOptions};
    use crate::evidence::Usage;
    use crate::report::{Outcome, RunTotals, SuiteTotals};
    use crate::result::Timings;
    use serde_json::Value;

    fn table() -> PricingTable {
        PricingTable::parse(
            r#"
currency = "EUR"
[models.m]
input = 10000
output = 20000
cache_read = 1000
[models.cheap]
input = 0
output = 0
"#,
            "t.toml",
        )
        .unwrap()
    }

    fn usage(model: Option<&str>, input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            model: model.map(str::to_owned),
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            cost: None,
            duration_ms: None,
            agent_id: None,
        }
    }

    fn run(usage: Vec<Usage>, premium: Option<f64>) -> RunRecord {
        let mut run = crate::report::tests::run(crate::StopReason::Completed, 0);
        run.model_requested = Some("m".into());
        run.model_used = Some("m".into());
        run.totals = RunTotals {
            model_calls: usage.len() as u64,
            input_tokens: usage.iter().map(|u| u.input_tokens).sum(),
            output_tokens: usage.iter().map(|u| u.output_tokens).sum(),
            cache_read_tokens: usage.iter().map(|u| u.cache_read_tokens).sum(),
            premium_requests: premium,
            ..Default::default()
        };
        run.usage = usage;
        run
    }

    fn test_record(runs: Vec<RunRecord>) -> TestRecord {
        TestRecord {
            trial: None,
            model: None,
            name: "t".into(),
            test_id: "t::__copilot_eval".into(),
            binary: "p::evals".into(),
            outcome: Outcome::Passed,
            error_kind: None,
            duration_ms: 1,
            message: None,
            properties: vec![],
            runs,
            workdir: None,
            cassette: None,
            exit: None,
            output: None,
            cost: None,
            comparisons: Vec::new(),
            triggers: Vec::new(),
            judges: Vec::new(),
            source: None,
            skill_eval: None,
            trigger_query: None,
            expectations: Vec::new(),
        }
    }

    #[test]
    fn a_run_with_one_unpriced_call_is_unknown_as_a_whole() {
        let t = table();
        // A run with one unpriced call is unknown as a whole.
        let mut test = test_record(vec![run(
            vec![
                usage(Some("m"), 100, 0, 0, 0),
                usage(Some("other"), 1, 1, 0, 0),
            ],
            Some(1.0),
        )]);
        price_test(&t, &mut test);
        let cost = test.cost.unwrap();
        assert_eq!(cost.estimated_cost, None);
        assert_eq!(cost.unpriced_models, ["other: not in the pricing table"]);
        assert_eq!(test.runs[0].totals.estimated_cost, None);
        assert_eq!(cost.model_calls, 2);
        let json = serde_json::to_value(&cost).unwrap();
        assert_eq!(json["estimated_cost"], Value::Null);
    }

    #[test]
    fn a_call_without_a_model_is_priced_as_the_run_model_and_no_call_costs_zero() {
        let t = table();
        let mut test = test_record(vec![
            run(vec![usage(None, 100, 0, 0, 0)], Some(0.0)),
            run(vec![], Some(0.0)),
        ]);
        price_test(&t, &mut test);
        assert_eq!(test.runs[0].totals.estimated_cost, Some(1.0));
        assert_eq!(test.runs[1].totals.estimated_cost, Some(0.0));
        assert_eq!(test.cost.unwrap().estimated_cost, Some(1.0));
    }

    #[test]
    fn caps_are_reached_at_the_cap_and_on_unknown_spend() {
        let options = CostOptions {
            pricing: table(),
            max_cost: Some(1.5),
            max_premium_requests: None,
        };
        let mut control = CostControl::new(&options);
        assert_eq!(control.cap_reached(), None);
        let mut first = test_record(vec![run(vec![usage(Some("m"), 100, 0, 0, 0)], None)]);
        control.charge(&mut first);
        assert_eq!(control.cap_reached(), None, "1 EUR < 1.5 EUR");
        let mut second = test_record(vec![run(vec![usage(Some("m"), 100, 0, 0, 0)], None)]);
        control.charge(&mut second);
        let reason = control.cap_reached().unwrap();
        assert_eq!(
            reason,
            "cost cap reached: estimated cost 2 EUR >= --max-cost 1.5 EUR after 2 evals"
        );
        assert_eq!(
            control.record().cap_reached.as_deref(),
            Some(reason.as_str())
        );
        assert_eq!(control.spent().estimated_cost, Some(2.0));

        let mut unknown = CostControl::new(&options);
        let mut test = test_record(vec![run(vec![usage(Some("zz"), 1, 1, 0, 0)], None)]);
        unknown.charge(&mut test);
        let reason = unknown.cap_reached().unwrap();
        assert!(
            reason.contains("cannot be enforced") && reason.contains("zz"),
            "{reason}"
        );

        let premium = CostOptions {
            max_cost: None,
            max_premium_requests: Some(0.0),
            ..options.clone()
        };
        let reason = CostControl::new(&premium).cap_reached().unwrap();
        assert!(reason.contains("before the first eval"), "{reason}");
        let mut control = CostControl::new(&CostOptions {
            max_premium_requests: Some(3.0),
            ..premium
        });
        let mut test = test_record(vec![run(vec![], None)]);
        control.charge(&mut test);
        assert!(control.cap_reached().unwrap().contains("did not report"));
    }

    #[test]
    fn suite_totals_sum_the_tests_and_junit_says_unknown() {
        let t = table();
        let mut priced = test_record(vec![run(vec![usage(Some("m"), 100, 0, 0, 0)], Some(1.0))]);
        price_test(&t, &mut priced);
        let mut not_run = test_record(vec![]);
        not_run.outcome = Outcome::NotRun;
        let totals = SuiteTotals::of(&[priced.clone(), not_run]);
        assert_eq!(totals.cost.model_calls, 1);
        assert_eq!(totals.cost.estimated_cost, Some(1.0));
        assert_eq!(totals.cost.premium_requests, Some(1.0));
        assert_eq!(
            SuiteTotals::of(&[]).cost,
            CostTotals::zero(),
            "an empty suite used nothing"
        );

        let mut unknown = test_record(vec![run(vec![usage(Some("x"), 1, 1, 0, 0)], None)]);
        price_test(&t, &mut unknown);
        let totals = SuiteTotals::of(&[priced, unknown.clone()]);
        assert_eq!(totals.cost.estimated_cost, None);
        assert_eq!(totals.cost.premium_requests, None);
        assert_eq!(totals.cost.unpriced_models, ["x: not in the pricing table"]);
        let props = super::super::junit::junit_properties(unknown.cost.as_ref().unwrap());
        assert!(props.contains(&("copilot_eval.cost.estimated", "unknown".to_owned())));
        assert!(props.contains(&("copilot_eval.premium_requests", "unknown".to_owned())));
        assert!(props.contains(&("copilot_eval.model_calls", "1".to_owned())));
    }

    /// A replay of a cassette without recorded usage: its tokens are unknown, so the run is not
    /// priced, its model is listed with why, the sums say how many runs they leave out, and the
    /// JUnit token properties say `unknown`.
    #[test]
    fn a_run_whose_tokens_are_unknown_is_not_priced() {
        let t = table();
        let mut replayed = run(vec![usage(Some("m"), 0, 0, 0, 0)], Some(0.0));
        replayed.totals.tokens = crate::report::TokenUsage::Unknown;
        let mut unknown = test_record(vec![replayed]);
        price_test(&t, &mut unknown);
        assert_eq!(unknown.runs[0].totals.estimated_cost, None);
        let cost = unknown.cost.clone().unwrap();
        assert_eq!(cost.estimated_cost, None);
        assert_eq!(cost.usage_unknown_runs, 1);
        assert_eq!(
            cost.unpriced_models,
            ["m: token usage unknown (replayed from a cassette without recorded usage)"]
        );
        let json = serde_json::to_value(&unknown.runs[0].totals).unwrap();
        assert_eq!(json["tokens"], "unknown");
        let props = super::super::junit::junit_properties(&cost);
        assert!(props.contains(&("copilot_eval.tokens.cache_read", "unknown".to_owned())));
        assert!(props.contains(&("copilot_eval.cost.estimated", "unknown".to_owned())));

        let mut priced = test_record(vec![run(vec![usage(Some("m"), 100, 0, 0, 0)], Some(1.0))]);
        price_test(&t, &mut priced);
        assert_eq!(priced.cost.as_ref().unwrap().usage_unknown_runs, 0);
        let json = serde_json::to_value(&priced.runs[0].totals).unwrap();
        assert!(json.get("tokens").is_none(), "known tokens carry no flag");
        let totals = SuiteTotals::of(&[priced, unknown]);
        assert_eq!(totals.cost.usage_unknown_runs, 1);
        assert_eq!(
            totals.cost.input_tokens, 100,
            "only the known runs are summed"
        );
        assert_eq!(totals.cost.estimated_cost, None);
    }

    /// A scripted run is not priced from the script's made-up usage: its estimate is `None`
    /// with `cost_not_applicable`, it counts 0 in the sums (so it never makes them unknown nor
    /// reaches a cap), and it is counted as not applicable.
    #[test]
    fn a_scripted_run_is_not_priced() {
        let t = table();
        let mut scripted = run(vec![usage(Some("m"), 100, 20, 0, 0)], Some(0.0));
        scripted.mode = "scripted".into();
        let mut test = test_record(vec![scripted]);
        price_test(&t, &mut test);
        assert_eq!(test.runs[0].totals.estimated_cost, None);
        assert_eq!(
            test.runs[0].totals.cost_not_applicable.as_deref(),
            Some("scripted model")
        );
        let cost = test.cost.clone().unwrap();
        assert_eq!(cost.estimated_cost, Some(0.0));
        assert_eq!(cost.not_applicable_runs, 1);
        assert!(
            cost.unpriced_models.is_empty(),
            "{:?}",
            cost.unpriced_models
        );
        assert_eq!(
            cost.input_tokens, 100,
            "the script's tokens are still counted"
        );
        let json = serde_json::to_value(&test.runs[0].totals).unwrap();
        assert_eq!(json["cost_not_applicable"], "scripted model");

        let mut priced = test_record(vec![run(vec![usage(Some("m"), 100, 0, 0, 0)], Some(1.0))]);
        price_test(&t, &mut priced);
        assert_eq!(priced.runs[0].totals.cost_not_applicable, None);
        assert!(priced.runs[0].totals.estimated_cost.unwrap() > 0.0);
        let totals = SuiteTotals::of(&[priced.clone(), test]);
        assert_eq!(
            totals.cost.estimated_cost,
            priced.cost.unwrap().estimated_cost
        );
        assert_eq!(totals.cost.not_applicable_runs, 1);
    }
}
