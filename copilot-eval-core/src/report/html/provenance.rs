//! The HTML report's provenance, collapsed: the suite's (versions, git, settings) under the
//! header, and each eval's (its inputs with their hashes, models, settings digests; its attempt
//! of `--rerun-failed`) in its section.

use serde::Serialize;

use crate::report::{SuiteProvenance, TestRecord};

/// The suite's provenance.
#[derive(Debug, Serialize)]
pub(super) struct SuiteView {
    /// `copilot-eval 0.1.0, SDK 1.0.28, runtime 1.0.102, git 0123abcd4567 (dirty)`.
    pub line: String,
    pub commit: Option<String>,
    pub git_error: Option<String>,
    pub settings: Vec<(String, String)>,
}

impl SuiteView {
    pub(super) fn of(provenance: &SuiteProvenance) -> Self {
        SuiteView {
            line: provenance.line(),
            commit: provenance.git_commit.clone(),
            git_error: provenance.git_error.clone(),
            settings: provenance
                .settings
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// One eval's provenance and attempt.
#[derive(Debug, Serialize)]
pub(super) struct EvalView {
    /// `false`: the record has no provenance (the page says it is unknown).
    pub known: bool,
    pub digest: String,
    /// Each input: path, kind, sha256.
    pub inputs: Vec<(String, &'static str, String)>,
    pub models: String,
    /// Each settings digest: `eval (label) on model: sha256`.
    pub settings: Vec<String>,
    pub notes: Vec<String>,
    /// `attempt 2 (earlier: failed, in the suite started ...)`.
    pub attempt: Option<String>,
}

impl EvalView {
    pub(super) fn of(test: &TestRecord) -> Self {
        let attempt = test.attempt.as_ref().map(|a| {
            format!(
                "attempt {} (earlier: {}, in the suite started {})",
                a.number,
                a.previous_outcome.as_str(),
                a.previous_started_at
            )
        });
        let Some(p) = &test.provenance else {
            return EvalView {
                known: false,
                digest: String::new(),
                inputs: Vec::new(),
                models: String::new(),
                settings: Vec::new(),
                notes: Vec::new(),
                attempt,
            };
        };
        EvalView {
            known: true,
            digest: p.digest(),
            inputs: p
                .inputs
                .iter()
                .map(|f| (f.path.clone(), f.kind.as_str(), f.sha256.clone()))
                .collect(),
            models: p.models.join(", "),
            settings: p
                .settings
                .iter()
                .map(|s| {
                    let label = s
                        .label
                        .as_deref()
                        .map(|l| format!(" ({l})"))
                        .unwrap_or_default();
                    format!("{}{label} on {}: {}", s.eval, s.model, s.sha256)
                })
                .collect(),
            notes: p.notes.clone(),
            attempt,
        }
    }
}
