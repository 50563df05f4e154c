//! Writing a finished report's artifacts: the one loop that both a suite run
//! ([`run_command`](super::run_command)) and `cargo copilot-eval merge` call, so the two paths can
//! never write differently.

use std::path::PathBuf;

use crate::report::html::write_html;
use crate::report::{Redactor, SuiteReport, write_json, write_junit};

/// Where to write a report's artifacts; `None` skips that artifact.
#[derive(Debug, Clone, Default)]
pub struct ArtifactPaths {
    /// The JSON results (`--json`; schema: `docs/schema/results.schema.json`).
    pub json: Option<PathBuf>,
    /// The JUnit XML (`--junit`).
    pub junit: Option<PathBuf>,
    /// The HTML report for a person (`--html`; see [`crate::report::html`]).
    pub html: Option<PathBuf>,
}

/// Write every requested artifact of `report` (each atomically, secrets redacted by `redactor`),
/// printing `  wrote PATH` or `error: writing PATH failed: ...` to stderr for each. Returns `false`
/// when any artifact could not be written; the others are still written.
pub fn write_artifacts(report: &SuiteReport, paths: &ArtifactPaths, redactor: &Redactor) -> bool {
    let mut all_written = true;
    type Writer = fn(&std::path::Path, &SuiteReport, &Redactor) -> std::io::Result<()>;
    let writers: [(&Option<PathBuf>, Writer); 3] = [
        (&paths.json, write_json),
        (&paths.junit, write_junit),
        (&paths.html, write_html),
    ];
    for (path, write) in writers {
        let Some(path) = path else { continue };
        let written = write(path, report, redactor);
        match written {
            Ok(()) => eprintln!("  wrote {}", path.display()),
            Err(error) => {
                eprintln!(
                    "error: {}",
                    super::SuiteError::Artifact {
                        path: path.clone(),
                        error
                    }
                );
                all_written = false;
            }
        }
    }
    all_written
}
