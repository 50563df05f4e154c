//! The invalid settings a test's `ctx.eval()...build()` refused, each with the line that called
//! `build`: a test that then fails (typically its `.unwrap()`) is a setup `error` naming them,
//! not a `failed` of the agent (`EvalContext::finish`).

use std::sync::Mutex;

use crate::ConfigError;

/// The notes, in the order `build()` refused them.
#[derive(Default)]
pub(super) struct ConfigErrors(Mutex<Vec<String>>);

impl ConfigErrors {
    /// Note `error`, refused by the `build()` called at `at`.
    pub(super) fn note(&self, error: &ConfigError, at: &std::panic::Location<'_>) {
        let line = format!("{error} (the eval built at {}:{})", at.file(), at.line());
        self.0.lock().expect("config errors lock").push(line);
    }

    /// The setup error of a test that failed with `failure` after an invalid setting; `None`
    /// when no setting was refused.
    pub(super) fn setup_error(&self, failure: &str) -> Option<String> {
        let notes = self.0.lock().expect("config errors lock");
        (!notes.is_empty()).then(|| {
            format!(
                "invalid eval configuration: {}\nthe test then failed: {failure}",
                notes.join("\n")
            )
        })
    }
}
