//! Errors raised before a run starts: invalid eval configuration and runtime resolution.
//!
//! Errors that happen *during* a run never surface as `Err`: they end the run with a
//! [`StopReason`](crate::StopReason) and an error text on the [`CopilotResult`](crate::CopilotResult),
//! so the evidence gathered so far is kept.

use std::fmt;

/// An eval field holds a value that cannot be run.
///
/// Raised by [`CopilotEvalBuilder::build`](crate::eval::CopilotEvalBuilder::build). The message names
/// the field (by its builder method / attribute key), the offending value, the allowed values when
/// they form a closed set, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The field's name as written in the builder and in `#[copilot_eval(...)]`, e.g. `timeout_s`.
    pub field: &'static str,
    /// What is wrong and how to fix it, in one sentence.
    pub message: String,
}

impl ConfigError {
    /// A new error for `field` with a message saying what is wrong and how to fix it.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }

    /// An error for a value outside a closed set: names the value and every allowed value.
    pub fn not_one_of(field: &'static str, value: &str, allowed: &[&str]) -> Self {
        Self::new(
            field,
            format!("{value:?} is not one of: {}", allowed.join(", ")),
        )
    }

    /// An error for a field whose capability is not built yet; the field is never silently ignored.
    pub fn not_supported_yet(field: &'static str, detail: &str) -> Self {
        Self::new(
            field,
            format!("not supported yet ({detail}); remove the setting until it is"),
        )
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid eval field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}
