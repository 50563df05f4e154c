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
    /// A folder for each skill eval's skill-creator `grading.json` (`--grading`; see
    /// [`grading_json`](crate::report::grading::grading_json)).
    pub grading: Option<PathBuf>,
    /// skill-creator's `benchmark.json` of the skill lift (`--benchmark`; see
    /// [`benchmark_json`](crate::report::benchmark::benchmark_json)).
    pub benchmark: Option<PathBuf>,
}

/// Write every requested artifact of `report` (each atomically, secrets redacted by `redactor`),
/// printing `  wrote PATH` or `error: writing PATH failed: ...` to stderr for each. Returns `false`
/// when any artifact could not be written; the others are still written.
pub fn write_artifacts(report: &SuiteReport, paths: &ArtifactPaths, redactor: &Redactor) -> bool {
    let mut all_written = true;
    type Writer = fn(&std::path::Path, &SuiteReport, &Redactor) -> std::io::Result<()>;
    let writers: [(&Option<PathBuf>, Writer); 4] = [
        (&paths.json, write_json),
        (&paths.junit, write_junit),
        (&paths.html, write_html),
        (&paths.benchmark, write_benchmark),
    ];
    if let Some(folder) = &paths.grading {
        all_written &= write_gradings(folder, report, redactor);
    }
    for (path, write) in writers {
        let Some(path) = path else { continue };
        let written = write(path, report, redactor);
        all_written &= said(path, written);
    }
    all_written
}

/// Say on stderr whether the artifact `path` was written (`  wrote PATH`, else `error: writing
/// PATH failed: ...`); `true` when it was.
pub(crate) fn said(path: &std::path::Path, written: std::io::Result<()>) -> bool {
    match written {
        Ok(()) => {
            eprintln!("  wrote {}", path.display());
            true
        }
        Err(error) => not_written(path, error),
    }
}

/// Say on stderr that the artifact `path` could not be written, and why; `false`.
fn not_written(path: &std::path::Path, error: std::io::Error) -> bool {
    eprintln!(
        "error: {}",
        super::SuiteError::Artifact {
            path: path.to_path_buf(),
            error
        }
    );
    false
}

/// Write `grading.json` under `folder` for each test that ran a skill eval or recorded
/// expectations ([`grading_path`](crate::report::grading::grading_path): with `--ablate`, each
/// eval's `with_skill/` and `without_skill/` sides), printing one line for the folder and one
/// per test that compared two runs with `ctx.compare` (its grading is the test's: the
/// expectations are the test's verdicts, not a side's). Returns `false` when any could not be
/// written.
fn write_gradings(folder: &std::path::Path, report: &SuiteReport, redactor: &Redactor) -> bool {
    let mut written = 0usize;
    let mut all_written = true;
    let ablation = report.tests.iter().any(|t| !t.ablated.is_empty());
    for test in &report.tests {
        if test.skill_eval.is_none() && test.expectations.is_empty() {
            continue;
        }
        if !test.comparisons.is_empty() && test.trial.is_none_or(|t| t.trial == 1) {
            eprintln!(
                "  note: {} {}: one grading.json for both sides of its comparison (its expectations are the test's, not a side's); `--ablate skills` grades with_skill and without_skill apart",
                test.binary, test.name
            );
        }
        let path = folder.join(crate::report::grading::grading_path(test, ablation));
        let mut value = crate::report::grading::grading_json(test);
        redactor.redact_value(&mut value);
        let text = serde_json::to_vec_pretty(&value).expect("grading serialises");
        match crate::report::write_atomically(&path, &text) {
            Ok(()) => written += 1,
            Err(error) => all_written &= not_written(&path, error),
        }
    }
    eprintln!("  wrote {written} grading.json under {}", folder.display());
    all_written
}

/// Write skill-creator's `benchmark.json` of `report`'s skill lift at `path` (redacted).
///
/// Errors: the report has no skill lift (the suite ran no `--ablate`), or the write failed.
fn write_benchmark(
    path: &std::path::Path,
    report: &SuiteReport,
    redactor: &Redactor,
) -> std::io::Result<()> {
    let Some(mut value) = crate::report::benchmark::benchmark_json(report) else {
        return Err(std::io::Error::other(
            "no skill lift to write: no eval ran an ablated side; run the suite with `--ablate skills`",
        ));
    };
    redactor.redact_value(&mut value);
    let text = serde_json::to_vec_pretty(&value).expect("benchmark serialises");
    crate::report::write_atomically(path, &text)
}
