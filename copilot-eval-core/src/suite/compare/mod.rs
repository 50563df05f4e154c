//! `cargo copilot-eval compare BASE.json NEW.json` (and a suite run's `--baseline BASE.json`):
//! from two results files to a decision.
//!
//! Per eval ([`EvalComparison`], [`eval`]): the pass rate on each side over its trials, the
//! change, the two-sided p-value of Fisher's exact test, a [`Verdict`], and tokens, duration and
//! estimated cost per pass before and after; the inputs whose hashes differ between the two
//! files (from each record's provenance). For the suite ([`SuiteChange`], [`changes`]): a
//! different runtime, SDK, copilot-eval, mode, model or settings, named apart from the inputs
//! (a runtime upgrade is not a skill change).
//!
//! Given more than two files (oldest first), the evals of the last two are compared, and the
//! report's [`History`] ([`history`]) holds each eval's pass rate file by file, the flips
//! between consecutive files and the evals failing most often.
//!
//! Outputs: the terminal table, regressions first ([`render`]); `--json` ([`CompareReport`],
//! its schema [`json_schema`], committed as `docs/schema/compare.schema.json`); `--html`
//! ([`html`]); and in GitHub Actions a job-summary section and one `::warning` per regression.

pub mod changes;
pub mod eval;
pub mod history;
pub mod html;
pub mod render;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::exit_code;
use crate::report::{SuiteProvenance, SuiteReport};
pub use changes::{ChangeKind, SuiteChange};
pub use eval::{EvalComparison, InputChange, InputChangeKind, SideFigures, Verdict};
pub use history::History;

/// The version of the compare report's shape ([`CompareReport::schema_version`]).
pub const COMPARE_SCHEMA_VERSION: &str = "1";

/// What `compare` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// The results files, oldest first (at least two).
    pub files: Vec<PathBuf>,
    /// Where to write the comparison as JSON, if anywhere.
    pub json: Option<PathBuf>,
    /// Where to write the comparison as an HTML page, if anywhere.
    pub html: Option<PathBuf>,
    /// Exit 1 when an eval regressed significantly.
    pub fail_on_regression: bool,
}

/// The comparison of two (or more) results files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "copilot-eval comparison")]
pub struct CompareReport {
    /// [`COMPARE_SCHEMA_VERSION`].
    pub schema_version: String,
    /// The results files, oldest first, as given. `evals` compares the last two.
    pub runs: Vec<RunInfo>,
    /// What differs between the last two files' suites (runtime, SDK, copilot-eval, mode,
    /// models, settings, commit), and a side whose provenance is unknown; empty when nothing.
    pub changes: Vec<SuiteChange>,
    /// One entry per eval of either of the last two files: regressions first, then
    /// improvements, underpowered, no verdict, new, removed and unchanged evals; each group
    /// in list order.
    pub evals: Vec<EvalComparison>,
    /// Counts of `evals` by verdict.
    pub totals: CompareTotals,
    /// One line for people, e.g. `1 regressed, 0 improved, 1 underpowered, 7 unchanged (of 9
    /// evals)`.
    pub summary: String,
    /// With more than two files: each eval file by file; absent with two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
}

/// One results file of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunInfo {
    /// The file as given on the command line (`--baseline`: the file given, and `this run`).
    pub file: String,
    /// When its suite started.
    pub started_at: String,
    /// `live` or `replay`.
    pub mode: String,
    /// The runtime version it recorded, when known.
    pub runtime_version: Option<String>,
    /// The copilot-eval version that wrote it.
    pub copilot_eval_version: String,
    /// Its test records (trials counted one by one).
    pub tests: u64,
    /// Its suite provenance; absent when the file predates it (provenance unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<SuiteProvenance>,
}

impl RunInfo {
    fn of(file: &str, report: &SuiteReport) -> Self {
        RunInfo {
            file: file.to_owned(),
            started_at: report.started_at.clone(),
            mode: report.mode.clone(),
            runtime_version: report.runtime.version.clone(),
            copilot_eval_version: report.tool.version.clone(),
            tests: report.tests.len() as u64,
            provenance: report.provenance.clone(),
        }
    }
}

/// Counts of a comparison's evals by verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CompareTotals {
    /// Evals compared (in either file).
    pub evals: u64,
    /// Significantly worse (p < 0.05).
    pub regressed: u64,
    /// Significantly better (p < 0.05).
    pub improved: u64,
    /// The same pass rate.
    pub unchanged: u64,
    /// A different pass rate, not significant with these trials.
    pub underpowered: u64,
    /// A side has no trial that passed or failed (errors, not run).
    pub no_verdict: u64,
    /// Only in the newer file.
    pub new: u64,
    /// Only in the older file.
    pub removed: u64,
}

/// Compare `runs` (each a file name and its report, oldest first, at least two): the last two
/// eval by eval, and with more than two the history of all.
///
/// # Panics
///
/// When `runs` holds fewer than two reports (the command refuses that first).
pub fn compare(runs: &[(String, SuiteReport)]) -> CompareReport {
    assert!(runs.len() >= 2, "compare needs two results files");
    let (base_file, base) = &runs[runs.len() - 2];
    let (new_file, new) = &runs[runs.len() - 1];
    let mut evals = eval::compare_evals(base, new);
    evals.sort_by_key(|e| e.verdict.rank());
    let mut totals = CompareTotals {
        evals: evals.len() as u64,
        ..Default::default()
    };
    for e in &evals {
        *match e.verdict {
            Verdict::Regressed => &mut totals.regressed,
            Verdict::Improved => &mut totals.improved,
            Verdict::Unchanged => &mut totals.unchanged,
            Verdict::Underpowered => &mut totals.underpowered,
            Verdict::NoVerdict => &mut totals.no_verdict,
            Verdict::New => &mut totals.new,
            Verdict::Removed => &mut totals.removed,
        } += 1;
    }
    let changes = changes::suite_changes((base_file, base), (new_file, new), &evals);
    let summary = summary_line(&totals, &changes);
    CompareReport {
        schema_version: COMPARE_SCHEMA_VERSION.to_owned(),
        runs: runs.iter().map(|(file, r)| RunInfo::of(file, r)).collect(),
        changes,
        evals,
        totals,
        summary,
        history: (runs.len() > 2).then(|| history::history(runs)),
    }
}

fn summary_line(totals: &CompareTotals, changes: &[SuiteChange]) -> String {
    let mut parts = vec![
        format!("{} regressed", totals.regressed),
        format!("{} improved", totals.improved),
    ];
    for (n, what) in [
        (totals.underpowered, "underpowered"),
        (totals.no_verdict, "without a verdict"),
        (totals.new, "new"),
        (totals.removed, "removed"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.push(format!("{} unchanged", totals.unchanged));
    let mut line = format!("{} (of {} evals)", parts.join(", "), totals.evals);
    let loud: Vec<&str> = changes
        .iter()
        .filter(|c| c.kind.is_loud())
        .map(|c| c.kind.as_str())
        .collect();
    if !loud.is_empty() {
        line.push_str(&format!(
            "; the suite changed too ({}): a difference may come from it, not from the inputs",
            loud.join(", ")
        ));
    }
    line
}

impl CompareReport {
    /// Whether an eval regressed significantly (p < 0.05): what `--fail-on-regression` fails on.
    pub fn has_regression(&self) -> bool {
        self.totals.regressed > 0
    }
}

/// The JSON Schema of [`CompareReport`], pretty-printed with a trailing newline: the content of
/// `docs/schema/compare.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(CompareReport);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}

/// Read results files (schema versions `"1"` and `"2"`; files without provenance read as
/// provenance unknown), each with the name it was given.
///
/// Errors: the first file that cannot be read, naming it (as `merge` reads a file).
pub fn read_results(
    files: &[PathBuf],
) -> Result<Vec<(String, SuiteReport)>, crate::report::merge::MergeError> {
    files
        .iter()
        .map(|path| {
            crate::report::merge::read_shard(path)
                .map(|report| (path.display().to_string(), report))
        })
        .collect()
}

/// Run the whole `compare` command: read the files, print the table on stderr, write `--json`
/// and `--html`, report to GitHub Actions; return the exit status: `0`, or `1` with
/// `--fail-on-regression` when an eval regressed significantly (an underpowered difference
/// never does), `2` when fewer than two files are given, `5` when a file cannot be read or an
/// output cannot be written.
pub fn run_compare(options: &CompareOptions) -> u8 {
    if options.files.len() < 2 {
        eprintln!("error: compare needs at least two results files (BASE.json NEW.json)");
        return exit_code::USAGE;
    }
    let runs = match read_results(&options.files) {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::SUITE_ERROR;
        }
    };
    let report = compare(&runs);
    let currency = currency(&runs[runs.len() - 1].1);
    eprint!("{}", render::terminal(&report, &currency));
    let mut status = finish(&report, &currency, options.fail_on_regression);
    if let Some(path) = &options.json {
        let mut text = serde_json::to_string_pretty(&report).expect("a comparison serialises");
        text.push('\n');
        status = status.max(write(path, text.as_bytes()));
    }
    if let Some(path) = &options.html {
        match html::to_html(&report, &currency) {
            Ok(page) => status = status.max(write(path, page.as_bytes())),
            Err(e) => {
                eprintln!("error: rendering the comparison's HTML page: {e:#}");
                status = exit_code::SUITE_ERROR;
            }
        }
    }
    status
}

/// Report `report` to GitHub Actions (when in a workflow) and decide the status of a
/// comparison: `1` when `fail_on_regression` and an eval regressed significantly, else `0`;
/// `5` when the job summary cannot be written.
pub fn finish(report: &CompareReport, currency: &str, fail_on_regression: bool) -> u8 {
    let mut status = exit_code::SUCCESS;
    if let Err(e) = super::github::report_lines_to_github(
        &render::warnings(report),
        &render::job_summary(report, currency),
    ) {
        eprintln!("error: {e}");
        status = exit_code::SUITE_ERROR;
    }
    if fail_on_regression && report.has_regression() {
        eprintln!(
            "compare: {} eval(s) regressed significantly (--fail-on-regression)",
            report.totals.regressed
        );
        status = status.max(exit_code::TEST_FAILURES);
    }
    status
}

/// The currency of `report`'s cost estimates (`USD` when it has no cost control).
pub fn currency(report: &SuiteReport) -> String {
    report
        .cost_control
        .as_ref()
        .map_or_else(|| "USD".to_owned(), |c| c.currency.clone())
}

fn write(path: &std::path::Path, bytes: &[u8]) -> u8 {
    match crate::report::write_atomically(path, bytes) {
        Ok(()) => {
            eprintln!("  wrote {}", path.display());
            exit_code::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "error: {}",
                super::SuiteError::Artifact {
                    path: path.to_path_buf(),
                    error
                }
            );
            exit_code::SUITE_ERROR
        }
    }
}

#[cfg(test)]
mod tests;
