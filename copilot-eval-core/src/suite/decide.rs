//! What a suite run does to decide across runs: its provenance (the versions and the git state
//! it ran with, `provenance_task`), `--rerun-failed RESULTS.json` (only the evals that did not
//! pass there, each a new attempt, [`Rerun`]) and `--baseline BASE.json` (a comparison with an
//! earlier results file as the run finishes, [`compare_with_baseline`], recorded in the results
//! and printed after them, [`finish_baseline`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::list::TestList;
use super::{SuiteOptions, compare, exit_code};
use crate::report::baseline::{BaselineEval, BaselineRecord};
use crate::report::merge::MergeError;
use crate::report::{Attempt, Outcome, SuiteProvenance, SuiteReport};

/// Why a results file a suite run was given cannot be used; each message names the option and
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// The `--rerun-failed` file cannot be read as results.
    #[error("--rerun-failed: {0}")]
    RerunFailed(MergeError),
    /// The `--baseline` file cannot be read as results.
    #[error("--baseline: {0}")]
    Baseline(MergeError),
}

/// The folder whose git repository holds the package: the folder of `--manifest-path`, else
/// the current directory.
fn package_dir(options: &SuiteOptions) -> PathBuf {
    match options
        .build
        .manifest_path
        .as_deref()
        .and_then(Path::parent)
    {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    }
}

/// The suite's settings that change what is measured, as the provenance keeps them.
fn settings(options: &SuiteOptions) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::new();
    settings.insert("mode".to_owned(), options.mode.as_str().to_owned());
    if let Some(trials) = options.trials {
        settings.insert("trials".to_owned(), trials.to_string());
    }
    if !options.models.is_empty() {
        settings.insert("models".to_owned(), options.models.join(","));
    }
    if let Some(rate) = options.trial_rule.min_pass_rate {
        settings.insert("min_pass_rate".to_owned(), rate.to_string());
    }
    settings
}

/// Start asking git for the suite's provenance (before any test runs, so that `git_dirty` is
/// the tree's state when the suite started); the runtime version is filled in at the end.
pub(super) fn provenance_task(options: &SuiteOptions) -> tokio::task::JoinHandle<SuiteProvenance> {
    let (dir, settings) = (package_dir(options), settings(options));
    tokio::task::spawn_blocking(move || {
        crate::report::provenance::suite_provenance(&dir, None, settings)
    })
}

/// The evals `--rerun-failed` runs again: those whose verdict in the earlier file was not
/// `passed`.
#[derive(Debug, Clone)]
pub struct Rerun {
    /// The earlier file.
    pub file: PathBuf,
    /// When its suite started.
    pub started_at: String,
    /// Each eval to run again, by binary and libtest id, with how it ended there and its
    /// attempt number there (1 when it was a first attempt).
    pub evals: Vec<RerunEval>,
}

/// One eval `--rerun-failed` runs again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunEval {
    /// Its test binary.
    pub binary: String,
    /// Its libtest id (the list's test).
    pub test_id: String,
    /// How it ended in the earlier file (over its trials, by the trials' verdict).
    pub outcome: Outcome,
    /// Its attempt number there.
    pub attempt: u32,
}

impl Rerun {
    /// Read `file` and find the evals that did not pass there: an eval run in trials by its
    /// verdict over them (its trial summary), another by its outcome (`failed`, `error`,
    /// `not_run`).
    ///
    /// Errors: the file cannot be read as results (the message names it).
    pub fn read(file: &Path) -> Result<Rerun, DecideError> {
        let report = crate::report::merge::read_shard(file).map_err(DecideError::RerunFailed)?;
        let mut evals: Vec<RerunEval> = Vec::new();
        for test in &report.tests {
            let outcome = match test.trial {
                Some(_) => report
                    .trial_summaries
                    .iter()
                    .find(|s| s.binary == test.binary && s.name == test.name)
                    .map_or(test.outcome, |s| s.verdict),
                None => test.outcome,
            };
            if outcome == Outcome::Passed {
                continue;
            }
            let eval = RerunEval {
                binary: test.binary.clone(),
                test_id: test.test_id.clone(),
                outcome,
                attempt: test.attempt.as_ref().map_or(1, |a| a.number),
            };
            if !evals
                .iter()
                .any(|e| e.binary == eval.binary && e.test_id == eval.test_id)
            {
                evals.push(eval);
            }
        }
        Ok(Rerun {
            file: file.to_path_buf(),
            started_at: report.started_at,
            evals,
        })
    }

    /// Keep in `list` only the evals to run again; returns how many of them the list holds.
    pub fn select(&self, list: &mut TestList) -> usize {
        let before = list.tests.len();
        let binaries: Vec<String> = list.binaries.iter().map(|b| b.id.clone()).collect();
        list.tests.retain(|test| {
            self.evals
                .iter()
                .any(|e| e.binary == binaries[test.binary] && e.test_id == test.test_id)
        });
        list.filtered_out += before - list.tests.len();
        list.tests.len()
    }

    /// Label every record of `report` as a new attempt of its eval ([`Attempt`]).
    pub fn label(&self, report: &mut SuiteReport) {
        for test in &mut report.tests {
            if let Some(eval) = self
                .evals
                .iter()
                .find(|e| e.binary == test.binary && e.test_id == test.test_id)
            {
                test.attempt = Some(Attempt {
                    number: eval.attempt + 1,
                    previous_outcome: eval.outcome,
                    previous_started_at: self.started_at.clone(),
                });
            }
        }
    }

    /// The line the runner prints: how many evals run again, and that they are new attempts.
    pub fn line(&self, selected: usize) -> String {
        format!(
            "rerun-failed: {selected} of the {} evals that did not pass in {} (started {}) run again, each a new attempt (its earlier outcome stays in that file)",
            self.evals.len(),
            self.file.display(),
            self.started_at
        )
    }
}

/// Before the suite runs: read `--rerun-failed` and keep in `list` only the evals it runs
/// again (saying so on stderr), and read `--baseline`.
///
/// Errors: the exit status `2` when a file cannot be read (the message printed); `0` when
/// `--rerun-failed` finds every eval passed (nothing to run).
pub(super) fn prepare(
    options: &SuiteOptions,
    list: &mut TestList,
) -> Result<(Option<Rerun>, Option<SuiteReport>), u8> {
    let fail = |e: DecideError| {
        eprintln!("error: {e}");
        exit_code::USAGE
    };
    let rerun = match options.rerun_failed.as_deref() {
        Some(file) => {
            let rerun = Rerun::read(file).map_err(fail)?;
            if rerun.evals.is_empty() {
                eprintln!(
                    "rerun-failed: every eval passed in {}; nothing to run again",
                    file.display()
                );
                return Err(exit_code::SUCCESS);
            }
            let selected = rerun.select(list);
            eprintln!("{}", rerun.line(selected));
            Some(rerun)
        }
        None => None,
    };
    let baseline = match options.baseline.as_deref() {
        Some(file) => Some(read_baseline(file).map_err(fail)?),
        None => None,
    };
    Ok((rerun, baseline))
}

/// Read the `--baseline` file before the suite runs (so that a wrong path stops it at once).
///
/// Errors: the file cannot be read as results (the message names it).
pub fn read_baseline(file: &Path) -> Result<SuiteReport, DecideError> {
    crate::report::merge::read_shard(file).map_err(DecideError::Baseline)
}

/// Compare the finished suite `report` with `baseline` (read from `file`) as `compare` does
/// (the newer side named `this run`), before the summary prints: the comparison, and its
/// record for the results ([`BaselineRecord`]: each eval's verdict and lines).
pub fn compare_with_baseline(
    file: &Path,
    baseline: SuiteReport,
    report: &SuiteReport,
) -> (compare::CompareReport, BaselineRecord) {
    let started_at = baseline.started_at.clone();
    let runs = [
        (file.display().to_string(), baseline),
        ("this run".to_owned(), report.clone()),
    ];
    let comparison = compare::compare(&runs);
    let record = BaselineRecord {
        file: file.display().to_string(),
        started_at,
        summary: comparison.summary.clone(),
        evals: comparison.evals.iter().map(baseline_eval).collect(),
    };
    (comparison, record)
}

/// One eval's entry: `vs baseline: underpowered, 1/1 (100%) -> 3/5 (60%), -40 pp, p = 1.000`
/// and `compare`'s details under it.
fn baseline_eval(eval: &compare::eval::EvalComparison) -> BaselineEval {
    use compare::render::{change_text, details, p_text, rate_text};
    let mut lines = vec![format!(
        "vs baseline: {}, {} -> {}, {}, p = {}",
        eval.verdict.as_str(),
        rate_text(eval.before.as_ref()),
        rate_text(eval.after.as_ref()),
        change_text(eval.change),
        p_text(eval.p_value)
    )];
    lines.extend(details(eval));
    BaselineEval {
        binary: eval.binary.clone(),
        name: eval.name.clone(),
        verdict: eval.verdict.as_str().to_owned(),
        lines,
    }
}

/// After the artifacts: print the comparison's table, report it to GitHub Actions; return
/// `status`, raised to `1` with `fail_on_regression` when an eval regressed significantly
/// (`5` when the job summary cannot be written).
pub fn finish_baseline(
    comparison: &compare::CompareReport,
    report: &SuiteReport,
    fail_on_regression: bool,
    status: u8,
) -> u8 {
    let currency = compare::currency(report);
    eprint!("{}", compare::render::terminal(comparison, &currency));
    let compared = compare::finish(comparison, &currency, fail_on_regression);
    if compared == exit_code::SUCCESS {
        status
    } else {
        status.max(compared)
    }
}
