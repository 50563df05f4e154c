//! The suite's cost caps: what the finished tests spent, and when a cap stops the suite from
//! launching more evals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PricingTable, TOKENS_PER_PRICE_UNIT, format_amount};

/// The cost settings of a suite: the pricing table and the caps.
#[derive(Debug, Clone, Default)]
pub struct CostOptions {
    /// The table estimates are computed with (`--pricing PATH`, else the built-in table).
    pub pricing: PricingTable,
    /// `--max-cost`: stop launching evals once the estimated cost reaches this, in the table's
    /// currency (>= 0).
    pub max_cost: Option<f64>,
    /// `--max-premium-requests`: stop launching evals once the premium requests the runtime
    /// reported reach this (>= 0).
    pub max_premium_requests: Option<f64>,
}

/// The suite's cost settings and what came of them, as written to the results
/// (`cost_control`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CostControlRecord {
    /// The pricing table: `built-in default` or the path given with `--pricing`.
    pub pricing: String,
    /// The currency of every estimated cost in the file (e.g. `USD`).
    pub currency: String,
    /// The unit of the table's prices: always `per 1000000 tokens`.
    pub price_unit: String,
    /// `--max-cost`, in `currency`; `null`: no cap.
    pub max_cost: Option<f64>,
    /// `--max-premium-requests`; `null`: no cap.
    pub max_premium_requests: Option<f64>,
    /// When a cap stopped the suite from launching more evals: which cap and the spend that
    /// reached it; `null` otherwise.
    pub cap_reached: Option<String>,
}

/// What finished tests spent, as the cost caps count it ([`CostControl::spent`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    /// Estimated cost from the pricing table, in its currency; `None` when a call could not be
    /// priced (see `unpriced_models`).
    pub estimated_cost: Option<f64>,
    /// Premium requests as the runtime reported them per session, summed; `None` when a run's
    /// runtime did not report them (unknown, not 0).
    pub premium_requests: Option<f64>,
    /// Models (with what is missing) whose calls could not be priced, e.g.
    /// `gpt-x: not in the pricing table`.
    pub unpriced_models: Vec<String>,
}

impl Spend {
    /// Nothing spent: an estimate of 0, 0 premium requests. The start of every sum.
    pub fn zero() -> Self {
        Self {
            estimated_cost: Some(0.0),
            premium_requests: Some(0.0),
            unpriced_models: Vec::new(),
        }
    }

    /// Add `other` into `self`: `estimated_cost` and `premium_requests` become `None` when
    /// either is; `unpriced_models` are merged without duplicates.
    pub fn add(&mut self, other: &Spend) {
        self.estimated_cost = self
            .estimated_cost
            .zip(other.estimated_cost)
            .map(|(a, b)| a + b);
        self.premium_requests = self
            .premium_requests
            .zip(other.premium_requests)
            .map(|(a, b)| a + b);
        for model in &other.unpriced_models {
            if !self.unpriced_models.contains(model) {
                self.unpriced_models.push(model.clone());
            }
        }
    }
}

/// A finished test the runner charges to the suite's spend ([`CostControl::charge`]). The
/// results' test record implements it (`report::TestRecord`, priced by `report::price_test`),
/// so the caps need not know the results format.
pub trait Chargeable {
    /// Price `self` with `pricing` (recording the estimates in `self`) and return what it spent.
    fn price(&mut self, pricing: &PricingTable) -> Spend;
}

/// The runner's cost bookkeeping: prices each finished test and decides when a cap is reached.
///
/// The spend is the sum over the tests that finished so far (evals still running are not
/// counted until they finish, so with `-j N` the suite can pass a cap by what the running evals
/// spend). A run cut short by a crash or a kill leaves no record, so its spend is not counted.
#[derive(Debug, Clone)]
pub struct CostControl {
    options: CostOptions,
    spent: Spend,
    finished: usize,
    reached: Option<String>,
}

impl CostControl {
    /// Bookkeeping for a suite run with `options`; nothing spent yet.
    pub fn new(options: &CostOptions) -> Self {
        Self {
            options: options.clone(),
            spent: Spend::zero(),
            finished: 0,
            reached: None,
        }
    }

    /// Price `test` with the suite's table ([`Chargeable::price`]; for a results test record,
    /// `report::price_test`) and add what it spent to the spend.
    pub fn charge(&mut self, test: &mut impl Chargeable) {
        let spend = test.price(&self.options.pricing);
        self.spent.add(&spend);
        self.finished += 1;
    }

    /// What the finished tests used so far.
    pub fn spent(&self) -> &Spend {
        &self.spent
    }

    /// Whether a cap is reached, and why (`Some(reason)`; once reached it stays reached). A cap
    /// is reached when the spend is >= the cap, or when the spend it caps is unknown (a model
    /// without a price, premium requests not reported): an unknown spend cannot be held to a
    /// cap. Without caps, never.
    pub fn cap_reached(&mut self) -> Option<String> {
        if self.reached.is_none() {
            self.reached = self.check();
        }
        self.reached.clone()
    }

    fn check(&self) -> Option<String> {
        let after = match self.finished {
            0 => "before the first eval".to_owned(),
            1 => "after 1 eval".to_owned(),
            n => format!("after {n} evals"),
        };
        let currency = self.options.pricing.currency();
        if let Some(cap) = self.options.max_cost {
            match self.spent.estimated_cost {
                Some(spent) if spent >= cap => {
                    return Some(format!(
                        "cost cap reached: estimated cost {} {currency} >= --max-cost {} {currency} {after}",
                        format_amount(spent),
                        format_amount(cap)
                    ));
                }
                Some(_) => {}
                None => {
                    return Some(format!(
                        "cost cap cannot be enforced: the estimated cost is unknown {after} ({}; pricing table: {}); add the missing prices with --pricing",
                        self.spent.unpriced_models.join(", "),
                        self.options.pricing.source()
                    ));
                }
            }
        }
        if let Some(cap) = self.options.max_premium_requests {
            match self.spent.premium_requests {
                Some(spent) if spent >= cap => {
                    return Some(format!(
                        "premium-request cap reached: {} premium requests >= --max-premium-requests {} {after}",
                        format_amount(spent),
                        format_amount(cap)
                    ));
                }
                Some(_) => {}
                None => {
                    return Some(format!(
                        "premium-request cap cannot be enforced: the runtime did not report the premium requests of a run {after}"
                    ));
                }
            }
        }
        None
    }

    /// The settings and outcome for the results file.
    pub fn record(&self) -> CostControlRecord {
        CostControlRecord {
            pricing: self.options.pricing.source().to_owned(),
            currency: self.options.pricing.currency().to_owned(),
            price_unit: format!("per {} tokens", TOKENS_PER_PRICE_UNIT as u64),
            max_cost: self.options.max_cost,
            max_premium_requests: self.options.max_premium_requests,
            cap_reached: self.reached.clone(),
        }
    }
}
