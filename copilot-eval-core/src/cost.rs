//! Cost: what each eval used and spent, an estimate from a pricing table, and the suite's caps.
//!
//! Three kinds of numbers, kept apart:
//!
//! - **Usage** as the runtime reports it per model call (`assistant.usage`): input, output,
//!   cache-read and cache-write tokens, and model calls.
//! - **Reported cost**: what the runtime itself states. `assistant.usage.cost` (summed as
//!   `reported_cost`, in the runtime's premium-request units) and the session's premium
//!   requests ([`reported_premium_requests`]: `session.shutdown.totalPremiumRequests`, else the
//!   last `session.usage_checkpoint`).
//! - **Estimated cost**: the tokens priced with a [`PricingTable`] (TOML; prices in the table's
//!   currency, USD by default, per 1,000,000 tokens). A model missing from the table, or a
//!   missing cache price for a call that used the cache, makes the estimate unknown (`None`,
//!   `null` in the results), never 0.
//!
//! The runner prices every test it launched ([`CostControl::charge`]) and, with `--max-cost` or
//! `--max-premium-requests`, stops launching evals once the suite's spend reaches a cap
//! ([`CostControl::cap_reached`]); the evals not launched are reported `not_run` with the
//! reason.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::{RunRecord, TestRecord};
use crate::result::RawEvent;

/// The default pricing table (the text of `copilot-eval-core/pricing/default.toml`).
pub const DEFAULT_PRICING: &str = include_str!("../pricing/default.toml");

/// What [`PricingTable::source`] says for the built-in table.
pub const DEFAULT_PRICING_SOURCE: &str = "built-in default";

/// The unit of every price in a pricing table: currency per this many tokens.
pub const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

/// Prices of one model, in the table's currency per 1,000,000 tokens. Every price is finite
/// and >= 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Prompt tokens neither read from nor written to the prompt cache.
    pub input: f64,
    /// Generated tokens.
    pub output: f64,
    /// Prompt tokens read from the prompt cache; `None`: not priced (a call that read the
    /// cache then has an unknown estimate).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the prompt cache; `None`: not priced (as `cache_read`).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// The TOML file: `currency` (default `USD`) and `[models."<id>"]` tables of [`ModelPrice`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PricingFile {
    #[serde(default)]
    currency: Option<String>,
    #[serde(default)]
    models: BTreeMap<String, ModelPrice>,
}

/// A pricing table: per model id, the price of each kind of token.
///
/// The format (TOML), with prices in `currency` per 1,000,000 tokens:
///
/// ```toml
/// currency = "USD"          # optional, default USD
///
/// [models."claude-sonnet-4.5"]
/// input = 3.00              # uncached prompt tokens
/// output = 15.00            # generated tokens
/// cache_read = 0.30         # optional
/// cache_write = 3.75        # optional
/// ```
///
/// Model ids are matched exactly against the model each `assistant.usage` event names.
#[derive(Debug, Clone, PartialEq)]
pub struct PricingTable {
    source: String,
    currency: String,
    models: BTreeMap<String, ModelPrice>,
}

/// Why a pricing table could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    /// The file could not be read.
    #[error("cannot read the pricing table {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The text is not a valid pricing table: TOML syntax, an unknown key, a wrong type, or a
    /// negative or non-finite price. The message names the source and, for syntax and type
    /// errors, the line and column.
    #[error("invalid pricing table {source_name}: {message}")]
    Invalid {
        /// Where the text came from (a path, or the built-in table).
        source_name: String,
        /// What is wrong.
        message: String,
    },
}

impl PricingTable {
    /// The built-in table ([`DEFAULT_PRICING`]).
    pub fn builtin() -> Self {
        Self::parse(DEFAULT_PRICING, DEFAULT_PRICING_SOURCE).expect("the built-in table is valid")
    }

    /// Read a table from a TOML file; its [`source`](Self::source) is the path.
    ///
    /// Errors: the file cannot be read ([`PricingError::Read`]) or is invalid
    /// ([`PricingError::Invalid`]).
    pub fn load(path: &Path) -> Result<Self, PricingError> {
        let text = std::fs::read_to_string(path).map_err(|error| PricingError::Read {
            path: path.display().to_string(),
            error,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parse a table from TOML text; `source` names it in errors and in the results.
    ///
    /// Errors: [`PricingError::Invalid`]: TOML syntax, an unknown key (typos are not ignored),
    /// a price that is not a number, negative or not finite, or an empty `currency`.
    pub fn parse(text: &str, source: &str) -> Result<Self, PricingError> {
        let invalid = |message: String| PricingError::Invalid {
            source_name: source.to_owned(),
            message,
        };
        let file: PricingFile = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let currency = file.currency.unwrap_or_else(|| "USD".to_owned());
        if currency.trim().is_empty() {
            return Err(invalid("`currency` is empty".to_owned()));
        }
        for (model, price) in &file.models {
            let fields = [
                ("input", Some(price.input)),
                ("output", Some(price.output)),
                ("cache_read", price.cache_read),
                ("cache_write", price.cache_write),
            ];
            for (field, value) in fields {
                if let Some(value) = value
                    && (!value.is_finite() || value < 0.0)
                {
                    return Err(invalid(format!(
                        "models.\"{model}\".{field} = {value}: a price must be a finite number >= 0"
                    )));
                }
            }
        }
        Ok(Self {
            source: source.to_owned(),
            currency,
            models: file.models,
        })
    }

    /// Where the table came from: [`DEFAULT_PRICING_SOURCE`] or the file's path.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The currency of every price (`USD` unless the table says otherwise).
    pub fn currency(&self) -> &str {
        &self.currency
    }

    /// The prices of `model`, when the table has it (exact id match).
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        self.models.get(model)
    }

    /// The model ids the table prices, sorted.
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.models.keys().map(String::as_str)
    }

    /// The estimated cost of one model call, in [`currency`](Self::currency):
    /// `(uncached × input + cache_read_tokens × cache_read + cache_write_tokens × cache_write +
    /// output_tokens × output) / 1,000,000`, where `uncached = input_tokens − cache_read_tokens −
    /// cache_write_tokens` (never below 0: the runtime's `inputTokens` counts every prompt token,
    /// cached ones included).
    ///
    /// Errors (the estimate is unknown): `model` is `None` or not in the table, or the call read
    /// or wrote the cache and the table has no price for that; the message says which.
    pub fn estimate_call(
        &self,
        model: Option<&str>,
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_write_tokens: u64,
    ) -> Result<f64, Unpriced> {
        let Some(model) = model else {
            return Err(Unpriced {
                model: "(unknown model)".to_owned(),
                what: "the runtime named no model for the call".to_owned(),
            });
        };
        let unpriced = |what: &str| Unpriced {
            model: model.to_owned(),
            what: what.to_owned(),
        };
        let price = self
            .price(model)
            .ok_or_else(|| unpriced("not in the pricing table"))?;
        let cache_read = match (cache_read_tokens, price.cache_read) {
            (0, _) => 0.0,
            (n, Some(p)) => n as f64 * p,
            (_, None) => return Err(unpriced("no cache_read price")),
        };
        let cache_write = match (cache_write_tokens, price.cache_write) {
            (0, _) => 0.0,
            (n, Some(p)) => n as f64 * p,
            (_, None) => return Err(unpriced("no cache_write price")),
        };
        let uncached = input_tokens
            .saturating_sub(cache_read_tokens)
            .saturating_sub(cache_write_tokens);
        let total = uncached as f64 * price.input
            + cache_read
            + cache_write
            + output_tokens as f64 * price.output;
        Ok(total / TOKENS_PER_PRICE_UNIT)
    }

    /// The estimated cost of one run: the sum of [`estimate_call`](Self::estimate_call) over its
    /// `usage` (a call naming no model is priced as the run's `model_used`, else
    /// `model_requested`). A run with no model call costs 0.
    ///
    /// Errors: every call that could not be priced, deduplicated by model and reason.
    pub fn estimate_run(&self, run: &RunRecord) -> Result<f64, Vec<Unpriced>> {
        let fallback = run.model_used.as_deref().or(run.model_requested.as_deref());
        let mut total = 0.0;
        let mut unpriced: Vec<Unpriced> = Vec::new();
        for call in &run.usage {
            match self.estimate_call(
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
}

impl Default for PricingTable {
    /// The built-in table.
    fn default() -> Self {
        Self::builtin()
    }
}

/// A model call that could not be priced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpriced {
    /// The model id (or `(unknown model)`).
    pub model: String,
    /// What is missing: `not in the pricing table`, `no cache_read price`, ...
    pub what: String,
}

impl std::fmt::Display for Unpriced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.model, self.what)
    }
}

/// The premium requests a session used, as the runtime reports them in the run's events:
/// `totalPremiumRequests` of the last `session.shutdown`, else of the last
/// `session.usage_checkpoint`; `Some(0.0)` when no prompt reached the session (no
/// `user.message`: nothing was sent); otherwise `None` (not reported, e.g. the runtime was killed
/// before it checkpointed). Fractional values are possible (model multipliers).
pub fn reported_premium_requests(events: &[RawEvent]) -> Option<f64> {
    let total_of = |kind: &str| {
        events
            .iter()
            .rev()
            .filter(|e| e.event_type == kind)
            .find_map(|e| e.data.get("totalPremiumRequests").and_then(Value::as_f64))
    };
    total_of("session.shutdown")
        .or_else(|| total_of("session.usage_checkpoint"))
        .or_else(|| (!events.iter().any(|e| e.event_type == "user.message")).then_some(0.0))
}

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
    /// `gpt-x: not in the pricing table`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
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
                estimated_cost: t.estimated_cost,
                unpriced_models: Vec::new(),
            });
        }
        totals
    }

    /// Add `other` into `self`: counts add; `reported_cost` adds the known values (stays `None`
    /// only when both are); `premium_requests` and `estimated_cost` become `None` when either is;
    /// `unpriced_models` are merged without duplicates.
    pub fn add(&mut self, other: &CostTotals) {
        self.model_calls += other.model_calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reported_cost = match (self.reported_cost, other.reported_cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.premium_requests = self
            .premium_requests
            .zip(other.premium_requests)
            .map(|(a, b)| a + b);
        self.estimated_cost = self
            .estimated_cost
            .zip(other.estimated_cost)
            .map(|(a, b)| a + b);
        for model in &other.unpriced_models {
            if !self.unpriced_models.contains(model) {
                self.unpriced_models.push(model.clone());
            }
        }
    }
}

/// Price every run of `test` with `table` (each run's `totals.estimated_cost`) and set
/// `test.cost` to the test's sums, with the calls that could not be priced in
/// `unpriced_models`.
pub fn price_test(table: &PricingTable, test: &mut TestRecord) {
    let mut unpriced: Vec<String> = Vec::new();
    for run in &mut test.runs {
        match table.estimate_run(run) {
            Ok(cost) => run.totals.estimated_cost = Some(cost),
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
}

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

/// The runner's cost bookkeeping: prices each finished test and decides when a cap is reached.
///
/// The spend is the sum over the tests that finished so far (evals still running are not
/// counted until they finish, so with `-j N` the suite can pass a cap by what the running evals
/// spend). A run cut short by a crash or a kill leaves no record, so its spend is not counted.
#[derive(Debug, Clone)]
pub struct CostControl {
    options: CostOptions,
    spent: CostTotals,
    finished: usize,
    reached: Option<String>,
}

impl CostControl {
    /// Bookkeeping for a suite run with `options`; nothing spent yet.
    pub fn new(options: &CostOptions) -> Self {
        Self {
            options: options.clone(),
            spent: CostTotals::zero(),
            finished: 0,
            reached: None,
        }
    }

    /// Price `test` ([`price_test`]) and add its sums to the spend.
    pub fn charge(&mut self, test: &mut TestRecord) {
        price_test(&self.options.pricing, test);
        if let Some(cost) = &test.cost {
            self.spent.add(cost);
        }
        self.finished += 1;
    }

    /// What the finished tests used so far.
    pub fn spent(&self) -> &CostTotals {
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

/// The cost lines of the runner's summary, e.g.
/// `  cost: 3 model calls (cache: 0 read, 0 written tokens); premium requests: 0 (reported); estimated: 0.0018 USD (pricing: built-in default)`,
/// then `  cap: <reason>` when a cap stopped the suite. Unknown values print as `unknown`.
pub fn summary_line(report: &crate::report::SuiteReport) -> String {
    let cost = &report.totals.cost;
    let (currency, pricing) = match &report.cost_control {
        Some(c) => (c.currency.as_str(), c.pricing.as_str()),
        None => ("", "none"),
    };
    let premium = cost
        .premium_requests
        .map(format_amount)
        .unwrap_or_else(|| "unknown".to_owned());
    let estimated = match cost.estimated_cost {
        Some(value) => format!("{} {currency}", format_amount(value)),
        None if cost.unpriced_models.is_empty() => "unknown".to_owned(),
        None => format!("unknown (not priced: {})", cost.unpriced_models.join(", ")),
    };
    let mut out = format!(
        "  cost: {} model calls (cache: {} read, {} written tokens); premium requests: {premium} (reported); estimated: {} (pricing: {pricing})\n",
        cost.model_calls,
        cost.cache_read_tokens,
        cost.cache_write_tokens,
        estimated.trim_end()
    );
    if let Some(reason) = report
        .cost_control
        .as_ref()
        .and_then(|c| c.cap_reached.as_ref())
    {
        out.push_str(&format!("  cap: {reason}\n"));
    }
    out
}

/// The JUnit properties of one test's cost, as `(name, value)` pairs: `copilot_eval.model_calls`,
/// `copilot_eval.tokens.cache_read`, `copilot_eval.tokens.cache_write`,
/// `copilot_eval.cost.reported`, `copilot_eval.premium_requests` and
/// `copilot_eval.cost.estimated` (numbers as text; an unknown value is `unknown`).
pub fn junit_properties(cost: &CostTotals) -> Vec<(&'static str, String)> {
    let known = |value: Option<f64>| value.map(format_amount).unwrap_or_else(|| "unknown".into());
    vec![
        ("copilot_eval.model_calls", cost.model_calls.to_string()),
        (
            "copilot_eval.tokens.cache_read",
            cost.cache_read_tokens.to_string(),
        ),
        (
            "copilot_eval.tokens.cache_write",
            cost.cache_write_tokens.to_string(),
        ),
        ("copilot_eval.cost.reported", known(cost.reported_cost)),
        (
            "copilot_eval.premium_requests",
            known(cost.premium_requests),
        ),
        ("copilot_eval.cost.estimated", known(cost.estimated_cost)),
    ]
}

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
    use crate::report::{RunTotals, TimingsRecord, UsageRecord};
    use serde_json::json;

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

    fn usage(model: Option<&str>, input: u64, output: u64, read: u64, write: u64) -> UsageRecord {
        UsageRecord {
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

    fn run(usage: Vec<UsageRecord>, premium: Option<f64>) -> RunRecord {
        RunRecord {
            eval_name: "e".into(),
            mode: "replay".into(),
            prompt: "p".into(),
            model_requested: Some("m".into()),
            model_used: Some("m".into()),
            success: true,
            stop_reason: "completed".into(),
            error: None,
            capture_errors: vec![],
            evidence_complete: true,
            cleanup_errors: vec![],
            tool_handler_failures: vec![],
            tool_calls_admitted: 0,
            configuration: json!({}),
            turns: vec![],
            tool_calls: vec![],
            final_response: None,
            totals: RunTotals {
                model_calls: usage.len() as u64,
                input_tokens: usage.iter().map(|u| u.input_tokens).sum(),
                output_tokens: usage.iter().map(|u| u.output_tokens).sum(),
                cache_read_tokens: usage.iter().map(|u| u.cache_read_tokens).sum(),
                premium_requests: premium,
                ..Default::default()
            },
            usage,
            duration_ms: 1,
            timings: TimingsRecord::default(),
            working_directory: "/w".into(),
            skills_invoked: vec![],
            skill_discovery: None,
            skill_invocations: vec![],
            subagents: vec![],
            subagent_invocations: vec![],
            audit: None,
            replay: None,
            recording: None,
        }
    }

    fn test_record(runs: Vec<RunRecord>) -> TestRecord {
        TestRecord {
            name: "t".into(),
            test_id: "t::__copilot_eval".into(),
            binary: "p::evals".into(),
            outcome: crate::report::Outcome::Passed,
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
        }
    }

    #[test]
    fn the_builtin_table_parses_and_prices_the_test_model() {
        let table = PricingTable::builtin();
        assert_eq!(table.currency(), "USD");
        assert_eq!(table.source(), DEFAULT_PRICING_SOURCE);
        let price = table.price("claude-sonnet-4.5").unwrap();
        assert_eq!((price.input, price.output), (3.0, 15.0));
        assert!(table.models().count() >= 5);
    }

    #[test]
    fn calls_are_priced_per_million_tokens_with_cache_tokens_apart() {
        let t = table();
        // 100 input of which 40 cached: 60 × 10000 + 40 × 1000 + 10 × 20000 = 840000 → 0.84
        let cost = t.estimate_call(Some("m"), 100, 10, 40, 0).unwrap();
        assert!((cost - 0.84).abs() < 1e-12, "{cost}");
        assert_eq!(t.estimate_call(Some("m"), 100, 0, 0, 0).unwrap(), 1.0);
        assert_eq!(t.estimate_call(Some("cheap"), 5, 5, 0, 0).unwrap(), 0.0);
    }

    #[test]
    fn unknown_prices_stay_unknown_never_zero() {
        let t = table();
        let e = t.estimate_call(Some("other"), 1, 1, 0, 0).unwrap_err();
        assert_eq!(e.to_string(), "other: not in the pricing table");
        let e = t.estimate_call(Some("m"), 10, 1, 0, 5).unwrap_err();
        assert_eq!(e.to_string(), "m: no cache_write price");
        assert!(t.estimate_call(None, 1, 1, 0, 0).is_err());
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
    fn invalid_tables_are_refused_with_the_reason() {
        for (text, needle) in [
            ("[models.m]\ninput = 1\n", "missing field `output`"),
            (
                "[models.m]\ninput = 1\noutput = 1\ncahce_read = 1\n",
                "cahce_read",
            ),
            ("[models.m]\ninput = -1\noutput = 1\n", "finite number >= 0"),
            ("currency = \"\"\n", "currency"),
            ("models = 3", "invalid type"),
        ] {
            let e = PricingTable::parse(text, "p.toml").unwrap_err().to_string();
            assert!(e.contains("p.toml") && e.contains(needle), "{text:?}: {e}");
        }
        let e = PricingTable::load(Path::new("/nonexistent/p.toml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/p.toml"), "{e}");
    }

    #[test]
    fn premium_requests_come_from_shutdown_then_checkpoint() {
        let event = |kind: &str, data: Value| RawEvent {
            event_type: kind.to_owned(),
            id: String::new(),
            timestamp: String::new(),
            agent_id: None,
            ephemeral: false,
            data,
        };
        assert_eq!(reported_premium_requests(&[]), Some(0.0));
        let prompt = event("user.message", json!({"content": "hi"}));
        assert_eq!(
            reported_premium_requests(std::slice::from_ref(&prompt)),
            None
        );
        let checkpoint = event(
            "session.usage_checkpoint",
            json!({"totalPremiumRequests": 1.5}),
        );
        assert_eq!(
            reported_premium_requests(&[prompt.clone(), checkpoint.clone()]),
            Some(1.5)
        );
        let shutdown = event("session.shutdown", json!({"totalPremiumRequests": 2}));
        assert_eq!(
            reported_premium_requests(&[prompt, shutdown, checkpoint]),
            Some(2.0)
        );
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
        not_run.outcome = crate::report::Outcome::NotRun;
        let totals = crate::report::SuiteTotals::of(&[priced.clone(), not_run]);
        assert_eq!(totals.cost.model_calls, 1);
        assert_eq!(totals.cost.estimated_cost, Some(1.0));
        assert_eq!(totals.cost.premium_requests, Some(1.0));
        assert_eq!(
            crate::report::SuiteTotals::of(&[]).cost,
            CostTotals::zero(),
            "an empty suite used nothing"
        );

        let mut unknown = test_record(vec![run(vec![usage(Some("x"), 1, 1, 0, 0)], None)]);
        price_test(&t, &mut unknown);
        let totals = crate::report::SuiteTotals::of(&[priced, unknown.clone()]);
        assert_eq!(totals.cost.estimated_cost, None);
        assert_eq!(totals.cost.premium_requests, None);
        assert_eq!(totals.cost.unpriced_models, ["x: not in the pricing table"]);
        let props = junit_properties(unknown.cost.as_ref().unwrap());
        assert!(props.contains(&("copilot_eval.cost.estimated", "unknown".to_owned())));
        assert!(props.contains(&("copilot_eval.premium_requests", "unknown".to_owned())));
        assert!(props.contains(&("copilot_eval.model_calls", "1".to_owned())));
    }

    #[test]
    fn amounts_are_printed_short() {
        assert_eq!(format_amount(2.0), "2");
        assert_eq!(format_amount(0.0012), "0.0012");
        assert_eq!(format_amount(0.0), "0");
        assert_eq!(format_amount(1.5), "1.5");
    }
}
