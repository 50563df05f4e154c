//! What an eval test is, told to the runner without running it: with
//! [`ENV_DESCRIBE_FILE`] set, the generated test appends one [`TestDescription`] (a JSON line)
//! to that file and returns at once: no working directory, no runtime, no model request, no
//! evidence file.
//!
//! The runner asks for it only for the tests whose own evidence it lacks (a test not run after
//! a cost cap, fail-fast or an interrupt, or a process that died before writing its evidence),
//! so that every record is counted under its eval's name and model, with the trials its
//! attribute asks for and the trigger check it owes.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{TestConfig, TrialAsk};
use crate::report::{SourceLocation, TriggerQueryRecord};

/// Variable naming the file a test appends its [`TestDescription`] to, instead of running.
/// The runner sets it (with `--exact --ignored` and the tests' ids) on a process of its own.
pub const ENV_DESCRIBE_FILE: &str = "COPILOT_EVAL_DESCRIBE_FILE";

/// One eval test as its attribute describes it, before it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDescription {
    /// The libtest name of the test (`path::__copilot_eval`).
    pub test_id: String,
    /// The name its records get: the test path, with `@model` in a model matrix
    /// (`greets::english@gpt-5`).
    pub name: String,
    /// The model of its cell of a model matrix (`models = [..]`), absent outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where the eval function is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLocation>,
    /// What the attribute asks of the eval's trials (`trials`, `min_pass_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_ask: Option<TrialAsk>,
    /// The trigger-set query the test runs (`skill_triggers = ".."`): the check it owes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_query: Option<TriggerQueryRecord>,
}

impl TestDescription {
    /// The description of the test `config` configures.
    pub fn of(config: &TestConfig) -> Self {
        Self {
            test_id: config.test_id(),
            name: config.test_path(),
            model: config.model().map(str::to_owned),
            source: config.source_location(),
            trial_ask: config.trial_ask(),
            trigger_query: config.trigger_query(),
        }
    }

    /// Read every description of a file the tests appended to, by test id; lines that do not
    /// parse are skipped (a test binary of another version).
    pub fn read_all(path: &Path) -> std::io::Result<Vec<TestDescription>> {
        let text = std::fs::read_to_string(path)?;
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }
}

/// The file to describe the test into, when the runner asks ([`ENV_DESCRIBE_FILE`] set and not
/// empty).
pub(crate) fn describe_file() -> Option<PathBuf> {
    std::env::var_os(ENV_DESCRIBE_FILE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Append the description of `config` to `path`, one JSON line. Panics (failing the libtest
/// test, which the runner sees) when the file cannot be written.
pub(crate) fn describe(config: &TestConfig, path: &Path) {
    let line =
        serde_json::to_string(&TestDescription::of(config)).expect("a description serialises");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = written {
        panic!(
            "cannot append the test's description to {}: {e}",
            path.display()
        );
    }
}
