//! Cost: the pricing table, estimates of what each eval spent, and the suite's caps.
//!
//! Three kinds of numbers, kept apart:
//!
//! - **Usage** as the runtime reports it per model call (`assistant.usage`): input, output,
//!   cache-read and cache-write tokens, and model calls.
//! - **Reported cost**: what the runtime itself states. `assistant.usage.cost` (summed as
//!   `reported_cost`, in the runtime's premium-request units) and the session's premium
//!   requests ([`reported_premium_requests`](crate::evidence::reported_premium_requests):
//!   `session.shutdown.totalPremiumRequests`, else the last `session.usage_checkpoint`).
//! - **Estimated cost**: the tokens priced with a [`PricingTable`] (TOML; prices in the table's
//!   currency, USD by default, per 1,000,000 tokens). A model missing from the table, or a
//!   missing cache price for a call that used the cache, makes the estimate unknown (`None`,
//!   `null` in the results), never 0.
//!
//! The runner prices every test it launched ([`CostControl::charge`]) and, with `--max-cost` or
//! `--max-premium-requests`, stops launching evals once the suite's spend reaches a cap
//! ([`CostControl::cap_reached`]); the evals not launched are reported `not_run` with the
//! reason.
//!
//! One module for every cost figure, in three parts: `pricing` (the [`PricingTable`] and the
//! estimate of one call), `totals` (the sums the results keep, [`CostTotals`], and the pricing
//! of a test's runs, [`price_runs`]) and `caps` (the suite's [`CostControl`]). The results'
//! records are priced through [`PricedRun`] (a run) and [`Chargeable`] (a finished test), which
//! [`report`](crate::report) implements, so this module does not know the results format. The
//! summary line is in `suite::display`, the JUnit properties in `report::junit` (both feature
//! `runner`).

mod caps;
mod pricing;
#[cfg(test)]
pub(crate) use pricing::test_table;
mod totals;

pub use caps::{Chargeable, CostControl, CostControlRecord, CostOptions, Spend};
pub use pricing::{
    DEFAULT_PRICING, DEFAULT_PRICING_SOURCE, ModelPrice, PricingError, PricingTable,
    TOKENS_PER_PRICE_UNIT, Unpriced,
};
pub use totals::{
    CostTotals, PricedRun, SCRIPTED_MODEL, cost_per_pass, cost_per_pass_text, estimate_run,
    price_runs,
};

/// A cost or count for people: up to 6 decimals, trailing zeros removed (`0.0012`, `2`).
pub fn format_amount(value: f64) -> String {
    let text = format!("{value:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_printed_short() {
        assert_eq!(format_amount(2.0), "2");
        assert_eq!(format_amount(0.0012), "0.0012");
        assert_eq!(format_amount(0.0), "0");
        assert_eq!(format_amount(1.5), "1.5");
    }
}
