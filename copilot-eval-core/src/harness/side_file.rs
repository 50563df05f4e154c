//! The evidence side file an eval test writes for the runner.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::{
    ComparisonRecord, ExpectationRecord, JudgeRecord, Property, RunRecord, SkillEvalRecord,
    SourceLocation, TriggerCheck, TriggerQueryRecord,
};

/// Value of [`TestEvidence::format`]: names this file format and its version.
pub const EVIDENCE_FORMAT: &str = "copilot-eval-evidence/1";

/// Why an evidence side file cannot be read ([`TestEvidence::read`]); each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum SideFileError {
    /// The file cannot be read.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not this JSON format (the message has the line and column).
    #[error("parsing {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The file names another format or version than [`EVIDENCE_FORMAT`].
    #[error("{} has format {format:?}, expected {EVIDENCE_FORMAT:?}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The `format` it names.
        format: String,
    },
}

/// Where a test is, as its evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceStatus {
    /// The test started and has not ended (or its process died).
    Running,
    /// The test function returned normally.
    Passed,
    /// The test function panicked or returned `Err`.
    Failed,
}

/// The evidence side file of one eval test (JSON, at `COPILOT_EVAL_EVIDENCE_FILE`), rewritten
/// atomically at each step so that a killed process leaves its last state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestEvidence {
    /// Always [`EVIDENCE_FORMAT`].
    pub format: String,
    /// The libtest name of the test (`path::__copilot_eval`).
    pub test_id: String,
    /// The test path (`module::function`).
    pub name: String,
    /// Where the test is.
    pub status: EvidenceStatus,
    /// The id of the process that wrote the file.
    pub pid: u32,
    /// Until when (Unix time, ms) the test may run before the runner's cleanup bound starts:
    /// during a run its start plus the eval's `timeout_s`, otherwise the last step plus the
    /// attribute's `timeout_s`.
    pub deadline_unix_ms: u64,
    /// The mode from `COPILOT_EVAL_MODE` (`live` or `replay`).
    pub mode: String,
    /// `record_property` observations, in order.
    pub properties: Vec<Property>,
    /// Finished runs, in order.
    pub runs: Vec<RunRecord>,
    /// A run that started and has not finished: its eval name and prompt (set while it runs).
    pub running: Option<String>,
    /// The failure message (panic text or the returned `Err`), when the test failed.
    pub failure: Option<String>,
    /// Why the test could not set up a run (missing cassette, unreadable cassette, ...).
    pub setup_error: Option<String>,
    /// The test's working directory.
    pub workdir: Option<String>,
    /// Whether the working directory was kept after the test (it is when the test failed).
    pub workdir_kept: bool,
    /// The test's cassette (absolute path).
    pub cassette: String,
    /// Each `ctx.compare(..)` of the test, in order (absent in files written before it existed).
    #[serde(default)]
    pub comparisons: Vec<ComparisonRecord>,
    /// Each `ctx.judge(..)` / `ctx.judge_pair(..)` of the test, in order (absent in files
    /// written before it existed).
    #[serde(default)]
    pub judges: Vec<JudgeRecord>,
    /// Where the eval function is written (from the attribute); absent in files written before
    /// it existed.
    #[serde(default)]
    pub source: Option<SourceLocation>,
    /// The model of the test's cell of a model matrix (`models = [..]` or `--models`), absent
    /// outside a model matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Each expectation's verdict (`ctx.expect`), in the order recorded; absent in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationRecord>,
    /// The entry of a skill's `evals/evals.json` the test runs (`skill_evals = ".."`); absent
    /// for other tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_eval: Option<SkillEvalRecord>,
    /// Each `ctx.expect_trigger(..)` of the test, in order (absent when it checked none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerCheck>,
    /// The query of a skill's trigger set the test runs (`skill_triggers = ".."`): the check it
    /// owes. Absent for other tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_query: Option<TriggerQueryRecord>,
    /// What the attribute asks of the eval's trials (`trials = N`, `min_pass_rate = F`): read
    /// by the runner, which cannot see attribute values before a test runs. Absent when the
    /// attribute gives neither key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_ask: Option<TrialAsk>,
    /// What the test's sessions were made of (input files and their hashes, models, settings
    /// digests), updated at each run; absent before the first run and in files written before
    /// it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::report::EvalProvenance>,
}

/// What an eval's attribute asks of its trials ([`TestEvidence::trial_ask`]).
///
/// Under `cargo copilot-eval` without `--trials`, a test process whose ask is N > 1 trials is
/// trial 1 of N, and the runner then runs trials 2 to N of the eval; `--trials` on the command
/// overrides `trials`, and `--min-pass-rate` overrides `min_pass_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialAsk {
    /// `trials = N`: the trials asked (>= 1); 1 when the attribute gives only
    /// `min_pass_rate`.
    pub trials: u32,
    /// `min_pass_rate = F`: the pass rate the eval's trials need, a fraction in (0, 1];
    /// absent: every trial must pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_pass_rate: Option<f64>,
}

impl TestEvidence {
    /// Read an evidence file.
    ///
    /// Errors: the file cannot be read, is not this JSON format, or has another `format`.
    pub fn read(path: &Path) -> Result<TestEvidence, SideFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| SideFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let evidence: TestEvidence =
            serde_json::from_str(&text).map_err(|source| SideFileError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        if evidence.format != EVIDENCE_FORMAT {
            return Err(SideFileError::Format {
                path: path.to_path_buf(),
                format: evidence.format,
            });
        }
        Ok(evidence)
    }

    /// Write the file atomically (temporary file and rename), creating its folder. Credential
    /// values of the environment are replaced by `[redacted]` first
    /// ([`Redactor::from_env`](crate::report::Redactor::from_env)).
    ///
    /// Errors: as [`write_atomically`](crate::report::write_atomically).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut value = serde_json::to_value(self).expect("evidence serialises");
        crate::report::Redactor::from_env().redact_value(&mut value);
        let text = serde_json::to_vec_pretty(&value).expect("evidence serialises");
        crate::report::write_atomically(path, &text)
    }
}
