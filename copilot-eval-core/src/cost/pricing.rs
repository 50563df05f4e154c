//! The pricing table: per model, the price of each kind of token, and the estimate of one model
//! call with it.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The default pricing table (the text of `copilot-eval-core/pricing/default.toml`).
pub const DEFAULT_PRICING: &str = include_str!("../../pricing/default.toml");

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
    ///
    /// ```
    /// use copilot_eval_core::cost::PricingTable;
    ///
    /// let table = PricingTable::parse(
    ///     "currency = \"EUR\"\n[models.\"m\"]\ninput = 2.0\noutput = 10.0\n",
    ///     "inline",
    /// )
    /// .unwrap();
    /// assert_eq!(table.currency(), "EUR");
    /// // 1,000 input tokens and 100 output tokens, nothing cached:
    /// let cost = table.estimate_call(Some("m"), 1_000, 100, 0, 0).unwrap();
    /// assert!((cost - 0.003).abs() < 1e-12);
    /// // Typos are errors, not ignored keys.
    /// assert!(PricingTable::parse("[models.\"m\"]\ninptu = 1\noutput = 1\n", "inline").is_err());
    /// ```
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

/// The pricing table the cost and the report's tests price with (currency `EUR`, a priced model
/// `m` with a cache-read price, a free model `cheap`).
#[cfg(test)]
pub(crate) fn test_table() -> PricingTable {
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

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_table as table;

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
}
