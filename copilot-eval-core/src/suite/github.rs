//! Reporting to GitHub Actions: when the runner runs in a workflow (`GITHUB_ACTIONS=true`), a
//! job summary in Markdown appended to the file `GITHUB_STEP_SUMMARY` names, and one `::error`
//! workflow command per failed or errored eval on stdout, pointing at the eval function's file
//! and line (from the attribute, [`TestRecord::source`]). Both are built from the suite's
//! report, the same data as the JSON, and follow each eval's verdict (over its trials, when it
//! ran in trials) and the exit status.
//!
//! Workflow command format (GitHub's documented one): `::error file=F,line=L,title=T::MESSAGE`,
//! with `%`, `\r` and `\n` escaped as `%25`, `%0D`, `%0A` in the message, and also `:` and `,`
//! (`%3A`, `%2C`) in property values.

use std::io::Write;
use std::path::Path;

use super::SuiteError;
use crate::report::{Outcome, Redactor, SuiteReport, TestRecord};

/// The environment variable GitHub Actions sets to `true` in every workflow step.
pub const ENV_GITHUB_ACTIONS: &str = "GITHUB_ACTIONS";
/// The environment variable naming the job summary file of the current step.
pub const ENV_STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// Whether the runner runs in a GitHub Actions step (`GITHUB_ACTIONS=true`).
pub fn in_github_actions() -> bool {
    std::env::var(ENV_GITHUB_ACTIONS).is_ok_and(|v| v == "true")
}

/// The job summary of `report` in GitHub-flavoured Markdown: a heading, the totals line (a
/// mark that follows the exit status, [`super::exit_status`]: ✅ only for 0, else ❌; tests,
/// passed, failed, errors, not run, duration in s), with trials a line of the evals' verdicts
/// over their trials, a table of what did not pass (an eval run once whose outcome is not
/// `passed`, an eval run in trials whose verdict is not `passed`: outcome or verdict, binary,
/// name with its `file:line`, the first line of the message or the trials' figures), and the
/// cost line of the terminal summary. With comparisons, ablations or model matrices, before the
/// table: "N of M criteria discriminate" and a table of the criteria that do not
/// (`report::discrimination`).
pub fn job_summary(report: &SuiteReport) -> String {
    let t = &report.totals;
    let mut out = String::from("## copilot-eval\n\n");
    let icon = if super::exit_status(report) == super::exit_code::SUCCESS {
        "✅"
    } else {
        "❌"
    };
    out.push_str(&format!(
        "{icon} **{} tests**: {} passed, {} failed, {} errors, {} not run ({:.1} s, {} mode, runtime {})\n\n",
        t.tests,
        t.passed,
        t.failed,
        t.error,
        t.not_run,
        report.duration_ms as f64 / 1000.0,
        report.mode,
        report.runtime.version.as_deref().unwrap_or("unknown"),
    ));
    if !report.trial_summaries.is_empty() {
        let count = |verdict: Outcome| {
            report
                .trial_summaries
                .iter()
                .filter(|s| s.verdict == verdict)
                .count()
        };
        out.push_str(&format!(
            "**{} evals run in trials**, by their verdict over their trials: {} passed, {} failed, {} errors\n\n",
            report.trial_summaries.len(),
            count(Outcome::Passed),
            count(Outcome::Failed),
            count(Outcome::Error),
        ));
    }
    out.push_str(&discrimination(report));
    let rows = not_passed(report);
    if !rows.is_empty() {
        out.push_str("| outcome | eval | message |\n|---|---|---|\n");
        for row in rows {
            let place = row
                .source
                .map(|s| format!(" (`{}:{}`)", s.file, s.line))
                .unwrap_or_default();
            out.push_str(&format!(
                "| {} | `{}` {}{place} | {} |\n",
                row.outcome.as_str(),
                row.binary,
                table_cell(row.name),
                table_cell(first_line(Some(&row.message))),
            ));
        }
        out.push('\n');
    }
    for line in super::display::cost_summary_line(report).lines() {
        out.push_str(line.trim());
        out.push('\n');
    }
    out
}

/// The criteria of the suite's comparisons, ablations and model matrices: `**1 of 2 criteria
/// discriminate**`, then a table of those that do not (eval, criterion, each side's count, why);
/// empty when there is no such criterion.
fn discrimination(report: &SuiteReport) -> String {
    use crate::report::discrimination::{self, Discrimination};
    let Some(criteria) = &report.discrimination else {
        return String::new();
    };
    let mut out = format!("**{}**\n\n", discrimination::count_text(criteria));
    let rows: Vec<String> = (criteria.entries.iter())
        .filter(|e| e.verdict == Discrimination::DoesNotDiscriminate)
        .map(|e| {
            format!(
                "| `{}` {} | {} | {} | {} |\n",
                e.binary,
                table_cell(&e.eval),
                table_cell(&discrimination::label(e)),
                table_cell(&discrimination::sides_text(e)),
                table_cell(&discrimination::verdict_text(e)),
            )
        })
        .collect();
    if !rows.is_empty() {
        out.push_str("| eval | criterion | sides | verdict |\n|---|---|---|---|\n");
        out.extend(rows);
        out.push('\n');
    }
    out
}

/// What did not pass, by the eval's verdict: an eval run once, by its record; an eval run in
/// trials, once, by its verdict over them (its figures as the message, then its first trial in
/// error or failed, with its message).
struct NotPassed<'a> {
    outcome: Outcome,
    binary: &'a str,
    name: &'a str,
    source: Option<&'a crate::report::SourceLocation>,
    message: String,
}

fn not_passed(report: &SuiteReport) -> Vec<NotPassed<'_>> {
    let mut rows = Vec::new();
    for test in &report.tests {
        if test.trial.is_none() {
            if test.outcome != Outcome::Passed {
                rows.push(NotPassed {
                    outcome: test.outcome,
                    binary: &test.binary,
                    name: &test.name,
                    source: test.source.as_ref(),
                    message: test.message.clone().unwrap_or_default(),
                });
            }
            continue;
        }
        let Some(summary) = report
            .trial_summaries
            .iter()
            .find(|s| s.binary == test.binary && s.name == test.name)
        else {
            continue;
        };
        let first = report
            .tests
            .iter()
            .find(|t| t.binary == test.binary && t.name == test.name);
        if summary.verdict == Outcome::Passed || !first.is_some_and(|f| std::ptr::eq(f, test)) {
            continue;
        }
        let eval: Vec<&TestRecord> = report
            .tests
            .iter()
            .filter(|t| t.binary == test.binary && t.name == test.name)
            .collect();
        let mut message = crate::report::trials::line(summary);
        // The first trial that did not pass (one in error first), and its message.
        let culprit = eval
            .iter()
            .find(|t| t.outcome == Outcome::Error)
            .or_else(|| eval.iter().find(|t| t.outcome == Outcome::Failed))
            .or_else(|| eval.iter().find(|t| t.outcome == Outcome::NotRun));
        if let Some(trial) = culprit {
            let label = trial.trial.map(|t| t.label()).unwrap_or_default();
            message.push_str(&format!(
                "\n{label} {}: {}",
                trial.outcome.as_str(),
                trial.message.as_deref().unwrap_or("(no message)")
            ));
        }
        rows.push(NotPassed {
            outcome: summary.verdict,
            binary: &test.binary,
            name: &test.name,
            source: eval.iter().find_map(|t| t.source.as_ref()),
            message,
        });
    }
    rows
}

/// One `::error` workflow command per eval that failed or errored, in report order, by the
/// eval's verdict: `::error file=F,line=L,title=copilot-eval: OUTCOME NAME::MESSAGE` (without
/// `file`/`line` when the test's source is unknown). An eval run once is annotated by its
/// outcome (`failed`, `error`); an eval run in trials once, by its verdict over them (none when
/// it passed, e.g. by `--min-pass-rate`; its figures and first failing trial as the message).
/// `not_run` tests get none, nor an eval whose trials were only `not_run` besides passes.
pub fn annotations(report: &SuiteReport) -> Vec<String> {
    not_passed(report)
        .into_iter()
        .filter(|row| match row.outcome {
            Outcome::Failed => true,
            Outcome::Error => {
                // An eval in trials whose verdict is `error` only because trials were not run
                // is like a `not_run` test: no annotation.
                report
                    .tests
                    .iter()
                    .filter(|t| t.binary == row.binary && t.name == row.name)
                    .any(|t| matches!(t.outcome, Outcome::Error | Outcome::Failed))
            }
            Outcome::Passed | Outcome::NotRun => false,
        })
        .map(|row| {
            let mut properties = Vec::new();
            if let Some(source) = row.source {
                properties.push(format!("file={}", escape_property(&source.file)));
                properties.push(format!("line={}", source.line));
            }
            properties.push(format!(
                "title={}",
                escape_property(&format!(
                    "copilot-eval: {} {}",
                    row.outcome.as_str(),
                    row.name
                ))
            ));
            let message = if row.message.is_empty() {
                "(no message)"
            } else {
                &row.message
            };
            format!("::error {}::{}", properties.join(","), escape_data(message))
        })
        .collect()
}

/// In a GitHub Actions step: print [`annotations`] on stdout and append [`job_summary`] to the
/// `GITHUB_STEP_SUMMARY` file (when set), both of `report` as `redactor` redacts it (the same
/// redaction as the artifacts). Outside one: nothing.
///
/// Errors: the summary file cannot be opened or written (the message names it); the
/// annotations are printed first either way.
pub fn report_to_github(report: &SuiteReport, redactor: &Redactor) -> Result<(), SuiteError> {
    if !in_github_actions() {
        return Ok(());
    }
    let report = &redactor.redact_report(report);
    for line in annotations(report) {
        println!("{line}");
    }
    match std::env::var_os(ENV_STEP_SUMMARY).filter(|v| !v.is_empty()) {
        Some(path) => append(Path::new(&path), &job_summary(report)),
        None => Ok(()),
    }
}

/// A `::warning title=TITLE::MESSAGE` workflow command, escaped as GitHub documents.
pub fn warning(title: &str, message: &str) -> String {
    format!(
        "::warning title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

/// In a GitHub Actions step: print `commands` (workflow commands, e.g. [`warning`]) on stdout
/// and append `summary` to the `GITHUB_STEP_SUMMARY` file (when set). Outside one: nothing.
/// `compare` reports through it.
///
/// Errors: as [`report_to_github`].
pub fn report_lines_to_github(commands: &[String], summary: &str) -> Result<(), SuiteError> {
    if !in_github_actions() {
        return Ok(());
    }
    for line in commands {
        println!("{line}");
    }
    match std::env::var_os(ENV_STEP_SUMMARY).filter(|v| !v.is_empty()) {
        Some(path) => append(Path::new(&path), summary),
        None => Ok(()),
    }
}

fn append(path: &Path, text: &str) -> Result<(), SuiteError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|error| SuiteError::JobSummary {
            path: path.to_path_buf(),
            error,
        })
}

fn first_line(message: Option<&str>) -> &str {
    message.and_then(|m| m.lines().next()).unwrap_or("")
}

/// A Markdown table cell: `|` escaped, newlines as spaces.
fn table_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A workflow command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::tests::test;
    use crate::report::trials::{TrialRule, summarize};
    use crate::report::{SourceLocation, SuiteTotals, TrialOf};

    /// A report of `tests`, with their totals and trial summaries (judged by `rule`).
    fn report_of(tests: Vec<TestRecord>, rule: &TrialRule) -> SuiteReport {
        let mut report = crate::report::tests::report();
        report.totals = SuiteTotals::of(&tests);
        report.trial_summaries = summarize(&tests, rule);
        report.tests = tests;
        report
    }

    /// Trial `trial` of 3 of the eval `flaky` with `outcome`, written at evals.rs:7.
    fn trial(trial: u32, outcome: Outcome) -> TestRecord {
        let mut record = test("flaky", "pkg::evals", outcome, Vec::new());
        record.trial = Some(TrialOf { trial, trials: 3 });
        record.source = Some(SourceLocation {
            file: "tests/evals.rs".into(),
            line: 7,
        });
        record
    }

    /// A flaky eval that passes by its pass rate (2 of 3, 60% needed) exits 0: no `::error`,
    /// a green mark, no row; the same trials judged "every trial must pass" fail the eval: one
    /// `::error` for the eval (not per trial), at its function, with its figures.
    #[test]
    fn annotations_and_the_summary_follow_the_evals_verdict_over_its_trials() {
        let trials = || {
            vec![
                trial(1, Outcome::Passed),
                trial(2, Outcome::Failed),
                trial(3, Outcome::Passed),
            ]
        };
        let lenient = TrialRule {
            pass_k: Vec::new(),
            min_pass_rate: Some(0.6),
        };
        let passing = report_of(trials(), &lenient);
        assert_eq!(super::super::exit_status(&passing), 0);
        assert_eq!(annotations(&passing), Vec::<String>::new());
        let summary = job_summary(&passing);
        assert!(
            summary.contains("✅ **3 tests**: 2 passed, 1 failed"),
            "{summary}"
        );
        assert!(
            summary.contains("**1 evals run in trials**, by their verdict over their trials: 1 passed, 0 failed, 0 errors"),
            "{summary}"
        );
        assert!(!summary.contains("| outcome |"), "{summary}");

        let failing = report_of(trials(), &TrialRule::default());
        assert_eq!(super::super::exit_status(&failing), 1);
        let [annotation] = &annotations(&failing)[..] else {
            panic!("one annotation: {:?}", annotations(&failing))
        };
        assert!(
            annotation.starts_with(
                "::error file=tests/evals.rs,line=7,title=copilot-eval%3A failed flaky::flaky: 2/3 passed"
            ),
            "{annotation}"
        );
        assert!(
            annotation.contains("-> failed (every trial must pass); failed trials: 2%0A[trial 2/3] failed: flaky went wrong"),
            "{annotation}"
        );
        let summary = job_summary(&failing);
        assert!(summary.contains("❌ **3 tests**"), "{summary}");
        assert!(
            summary
                .contains("| failed | `pkg::evals` flaky (`tests/evals.rs:7`) | flaky: 2/3 passed"),
            "{summary}"
        );
    }

    /// Every eval not run (exit 3): no green mark, no annotation, each listed as not run.
    #[test]
    fn a_suite_whose_evals_were_all_not_run_shows_no_green_mark() {
        let tests = vec![
            test("a", "pkg::evals", Outcome::NotRun, Vec::new()),
            test("b", "pkg::evals", Outcome::NotRun, Vec::new()),
        ];
        let report = report_of(tests, &TrialRule::default());
        assert_eq!(super::super::exit_status(&report), 3);
        let summary = job_summary(&report);
        assert!(!summary.contains('✅'), "{summary}");
        assert!(
            summary.contains("❌ **2 tests**: 0 passed, 0 failed, 0 errors, 2 not run"),
            "{summary}"
        );
        assert!(
            summary.contains("| not_run | `pkg::evals` a |"),
            "{summary}"
        );
        assert!(annotations(&report).is_empty());
    }

    /// A model matrix whose expectation every model meets every time: the summary gives the
    /// count and names it in the table of criteria that do not discriminate; the one that
    /// discriminates is not in that table.
    #[test]
    fn the_summary_names_the_criteria_that_do_not_discriminate() {
        use crate::report::ExpectationRecord;
        let cell = |model: &str, oslo: bool| {
            let mut record = test(
                &format!("capital@{model}"),
                "pkg::evals",
                Outcome::Passed,
                vec![],
            );
            record.model = Some(model.into());
            record.expectations = [("names Oslo", oslo), ("answers | briefly", true)]
                .map(|(text, passed)| ExpectationRecord {
                    text: text.into(),
                    passed,
                    evidence: String::new(),
                    kind: Default::default(),
                })
                .to_vec();
            record
        };
        let tests = vec![cell("a", true), cell("b", false)];
        let mut report = report_of(tests, &TrialRule::default());
        report.discrimination = crate::report::discrimination::of(&report.tests);
        let summary = job_summary(&report);
        assert!(
            summary.contains(
                "**1 of 2 criteria discriminate**\n\n| eval | criterion | sides | verdict |\n|---|---|---|---|\n\
                 | `pkg::evals` capital | expectation \"answers \\| briefly\" | a 1/1, b 1/1 | does not discriminate (holds on every side in every trial) |\n\n"
            ),
            "{summary}"
        );
        assert!(!summary.contains("names Oslo"), "{summary}");
        // Without such runs, no line.
        assert!(!job_summary(&crate::report::tests::report()).contains("discriminate"));
    }

    #[test]
    fn messages_and_properties_are_escaped_as_github_documents() {
        assert_eq!(escape_data("50% of a\r\nb"), "50%25 of a%0D%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
        assert_eq!(table_cell("a|b\nc"), "a\\|b c");
    }
}
