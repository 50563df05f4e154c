//! The results' records as the [`cost`](crate::cost) module prices them: a [`RunRecord`] is a
//! [`PricedRun`], a [`TestRecord`] is [`Chargeable`] (priced by [`price_test`]).

use super::{RunRecord, TestRecord};
use crate::cost::{Chargeable, CostTotals, PricedRun, PricingTable, Spend, price_runs};
use crate::evidence::Usage;

impl PricedRun for RunRecord {
    fn scripted(&self) -> bool {
        self.mode == "scripted"
    }

    fn tokens_known(&self) -> bool {
        self.totals.tokens.is_reported()
    }

    fn model(&self) -> Option<&str> {
        self.model_used
            .as_deref()
            .or(self.model_requested.as_deref())
    }

    fn calls(&self) -> &[Usage] {
        &self.usage
    }

    fn cost_totals(&self) -> CostTotals {
        let t = &self.totals;
        CostTotals {
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
        }
    }

    fn set_estimate(&mut self, estimate: Option<f64>) {
        self.totals.estimated_cost = estimate;
    }

    fn set_not_applicable(&mut self, why: &str) {
        self.totals.estimated_cost = None;
        self.totals.cost_not_applicable = Some(why.to_owned());
    }
}

/// Price every run of `test` with `table` ([`price_runs`]: each run's `totals.estimated_cost`,
/// and `cost_not_applicable` = `scripted model` for a scripted run) and set `test.cost` to the
/// test's sums, with the calls that could not be priced in `unpriced_models`; then the
/// estimates its comparisons' sides and judges' sessions carry are read again.
pub fn price_test(table: &PricingTable, test: &mut TestRecord) {
    test.cost = Some(price_runs(table, &mut test.runs));
    // A comparison's sides carry their runs' estimates: read them again.
    for comparison in &mut test.comparisons {
        comparison.refresh(&test.runs);
    }
    // So do a judge's sessions.
    for judge in &mut test.judges {
        judge.refresh(&test.runs);
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
    use super::*;
    use crate::cost::{CostControl, CostOptions};
    use crate::evidence::Usage;
    use crate::report::{Outcome, RunTotals, SuiteTotals};
    use serde_json::Value;

    use crate::cost::test_table as table;

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
        crate::report::tests::test("t", "p::evals", Outcome::Passed, runs)
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
