//! The cost options of a suite run: `--pricing`, `--max-cost`, `--max-premium-requests`.

use std::path::PathBuf;

use copilot_eval_core::cost::{CostOptions, PricingTable};

/// Cost arguments of the run command (flattened into its options).
#[derive(clap::Args)]
pub(crate) struct CostArgs {
    /// Estimate costs with this pricing table (TOML: prices per 1,000,000 tokens per model)
    /// instead of the built-in one.
    #[arg(long, value_name = "PATH")]
    pricing: Option<PathBuf>,
    /// Stop launching evals once their estimated cost reaches AMOUNT (in the pricing table's
    /// currency, USD by default); the rest are reported not_run.
    #[arg(long, value_name = "AMOUNT")]
    max_cost: Option<f64>,
    /// Stop launching evals once the premium requests the runtime reported reach N; the rest
    /// are reported not_run.
    #[arg(long, value_name = "N")]
    max_premium_requests: Option<f64>,
}

impl CostArgs {
    /// The suite's cost options: the pricing table read and checked, the caps checked.
    ///
    /// Errors (a usage error for the caller): the table cannot be read or is invalid, or a cap
    /// is negative or not a number.
    pub(crate) fn options(&self) -> Result<CostOptions, String> {
        for (flag, value) in [
            ("--max-cost", self.max_cost),
            ("--max-premium-requests", self.max_premium_requests),
        ] {
            if let Some(v) = value
                && (!v.is_finite() || v < 0.0)
            {
                return Err(format!("{flag} must be a number >= 0, got {v}"));
            }
        }
        let pricing = match &self.pricing {
            Some(path) => PricingTable::load(path).map_err(|e| e.to_string())?,
            None => PricingTable::builtin(),
        };
        Ok(CostOptions {
            pricing,
            max_cost: self.max_cost,
            max_premium_requests: self.max_premium_requests,
        })
    }
}
