//! Reporting to GitHub Actions: when the runner runs in a workflow (`GITHUB_ACTIONS=true`), a
//! job summary in Markdown appended to the file `GITHUB_STEP_SUMMARY` names, and one `::error`
//! workflow command per failed or errored eval on stdout, pointing at the eval function's file
//! and line (from the attribute, [`TestRecord::source`]). Both are built from the suite's
//! report, the same data as the JSON.
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

/// The job summary of `report` in GitHub-flavoured Markdown: a heading, the totals line
/// (tests, passed, failed, errors, not run, duration in s), a table of the evals that did not
/// pass (outcome, binary, name with its `file:line`, the first line of the message), and the
/// cost line of the terminal summary.
pub fn job_summary(report: &SuiteReport) -> String {
    let t = &report.totals;
    let mut out = String::from("## copilot-eval\n\n");
    let icon = if t.failed + t.error == 0 {
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
    let not_passed: Vec<&TestRecord> = report
        .tests
        .iter()
        .filter(|t| t.outcome != Outcome::Passed)
        .collect();
    if !not_passed.is_empty() {
        out.push_str("| outcome | eval | message |\n|---|---|---|\n");
        for test in not_passed {
            let place = test
                .source
                .as_ref()
                .map(|s| format!(" (`{}:{}`)", s.file, s.line))
                .unwrap_or_default();
            out.push_str(&format!(
                "| {} | `{}` {}{place} | {} |\n",
                test.outcome.as_str(),
                test.binary,
                table_cell(&test.name),
                table_cell(first_line(test.message.as_deref())),
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

/// One `::error` workflow command per failed or errored test of `report`, in report order:
/// `::error file=F,line=L,title=copilot-eval: OUTCOME NAME::MESSAGE` (without `file`/`line`
/// when the test's source is unknown). `not_run` tests get none.
pub fn annotations(report: &SuiteReport) -> Vec<String> {
    report
        .tests
        .iter()
        .filter(|t| matches!(t.outcome, Outcome::Failed | Outcome::Error))
        .map(|test| {
            let mut properties = Vec::new();
            if let Some(source) = &test.source {
                properties.push(format!("file={}", escape_property(&source.file)));
                properties.push(format!("line={}", source.line));
            }
            properties.push(format!(
                "title={}",
                escape_property(&format!(
                    "copilot-eval: {} {}",
                    test.outcome.as_str(),
                    test.name
                ))
            ));
            format!(
                "::error {}::{}",
                properties.join(","),
                escape_data(test.message.as_deref().unwrap_or("(no message)"))
            )
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

    #[test]
    fn messages_and_properties_are_escaped_as_github_documents() {
        assert_eq!(escape_data("50% of a\r\nb"), "50%25 of a%0D%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
        assert_eq!(table_cell("a|b\nc"), "a\\|b c");
    }
}
