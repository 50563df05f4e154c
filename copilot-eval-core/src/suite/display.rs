//! Human output of a suite run, on stderr: a progress bar with the running tests on a terminal
//! (indicatif), one line per finished test otherwise, and a summary at the end. Machine output
//! is written separately from the same record ([`report`](crate::report)).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cost::format_amount;
use crate::report::{Outcome, SuiteReport, TestRecord};

/// Shows the suite's progress.
#[derive(Debug)]
pub struct Display {
    bar: Option<ProgressBar>,
    running: Vec<String>,
}

impl Display {
    /// A display for `total` tests: a progress bar when stderr is a terminal and `plain` is
    /// false, else plain lines.
    pub fn new(total: usize, plain: bool) -> Self {
        let bar = (!plain && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:25} {pos}/{len} running: {wide_msg}",
                )
                .expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Self {
            bar,
            running: Vec::new(),
        }
    }

    /// `more` tests were added to the suite (the trials an eval's attribute asks for, known
    /// after its first trial): the progress total grows by them.
    pub fn grow(&mut self, more: usize) {
        if let Some(bar) = &self.bar {
            bar.inc_length(more as u64);
        }
    }

    /// A test started.
    pub fn started(&mut self, label: &str) {
        self.running.push(label.to_owned());
        self.update();
    }

    /// A test finished (or was not run): print its line.
    pub fn finished(&mut self, label: &str, record: &TestRecord) {
        self.running.retain(|r| r != label);
        let line = finished_line(record);
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.inc(1);
            }
            None => eprintln!("{line}"),
        }
        self.update();
    }

    /// Print a note above the progress.
    pub fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn update(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(self.running.join(", "));
        }
    }

    /// Remove the progress bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The line printed when a test finishes, e.g.
/// `    PASS [   1.234s] quickstart::evals creates_a_file`, or under trials and models
/// `    FAIL [   1.234s] quickstart::evals creates_a_file@gpt-5 [trial 2/5]` (a model matrix's
/// cell names its model after `@`), followed for a test that did not
/// pass by its message's first lines and its kept working directory, and for any test by one
/// line per run whose evidence is incomplete ([`incomplete_evidence_lines`]).
pub fn finished_line(record: &TestRecord) -> String {
    let status = match record.outcome {
        Outcome::Passed => "PASS",
        Outcome::Failed => "FAIL",
        Outcome::Error => "ERROR",
        Outcome::NotRun if record.stopped_early.is_some() => "SKIP",
        Outcome::NotRun => "NOT RUN",
    };
    let mut line = format!(
        "{status:>8} [{:>8.3}s] {} {}{}",
        record.duration_ms as f64 / 1000.0,
        record.binary,
        record.name,
        trial_suffix(record)
    );
    if record.outcome != Outcome::Passed {
        if let Some(message) = &record.message {
            for text in message.lines().take(6) {
                line.push_str("\n             ");
                line.push_str(text);
            }
        }
        if let Some(dir) = &record.workdir {
            line.push_str(&format!("\n             working directory: {dir}"));
        }
    }
    for text in incomplete_evidence_lines(record) {
        line.push_str("\n             ");
        line.push_str(&text);
    }
    line
}

/// ` [trial 2/5]` for a record that is one trial of its eval, else empty.
fn trial_suffix(record: &TestRecord) -> String {
    record
        .trial
        .map(|t| format!(" {}", t.label()))
        .unwrap_or_default()
}

/// One line per run of `record` whose evidence is incomplete (`evidence_complete` false: events
/// were lost or could not be matched, so tool calls, turns or usage may be missing), e.g.
/// `evidence incomplete in run 1 (e): the event subscription lagged: 3 events were lost`
/// (the run's first capture error, and how many more there are).
pub fn incomplete_evidence_lines(record: &TestRecord) -> Vec<String> {
    record
        .runs
        .iter()
        .enumerate()
        .filter(|(_, run)| !run.evidence_complete)
        .map(|(i, run)| {
            let first = run
                .capture_errors
                .first()
                .map(String::as_str)
                .unwrap_or("no capture error recorded");
            let more = match run.capture_errors.len() {
                0 | 1 => String::new(),
                n => format!(" (+{} more)", n - 1),
            };
            format!(
                "evidence incomplete in run {} ({}): {first}{more}",
                i + 1,
                run.eval_name
            )
        })
        .collect()
}

/// The summary's line for runs with incomplete evidence, e.g.
/// `  evidence: 1 run with incomplete evidence (see its capture_errors): pkg::evals test (run 1)`;
/// empty when every run's evidence is complete. Such a run may still have succeeded: `success`
/// says the session completed, `evidence_complete` that everything it did was recorded.
pub fn incomplete_evidence_summary(report: &SuiteReport) -> String {
    let mut runs = 0u64;
    let mut where_: Vec<String> = Vec::new();
    for test in &report.tests {
        let numbers: Vec<String> = test
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.evidence_complete)
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        if numbers.is_empty() {
            continue;
        }
        runs += numbers.len() as u64;
        where_.push(format!(
            "{} {} ({} {})",
            test.binary,
            test.name,
            if numbers.len() == 1 { "run" } else { "runs" },
            numbers.join(", ")
        ));
    }
    if runs == 0 {
        return String::new();
    }
    format!(
        "  evidence: {} with incomplete evidence (see {} capture_errors): {}\n",
        count(runs, "run", "runs"),
        if runs == 1 { "its" } else { "their" },
        where_.join(", ")
    )
}

/// The summary printed at the end of a suite run: counts, stop reasons, tokens, the runs with
/// incomplete evidence ([`incomplete_evidence_summary`]), cost, each comparison (`ctx.compare`:
/// [`comparison_lines`]), one line per test that did not pass, the trials' figures and the model
/// matrix ([`crate::report::matrix::table`]), then whether each criterion of the comparisons,
/// ablations and model matrices discriminates ([`crate::report::discrimination::lines`]).
///
/// A test that did not pass is named with `(its message is above)`, e.g.
/// `    ERROR pkg::evals replay_mismatch (its message is above)`: its message was printed once,
/// under its line ([`finished_line`]), and is not repeated. Where no such lines were printed
/// (`merge`), use [`summary_with_messages`].
pub fn summary(report: &SuiteReport) -> String {
    summary_text(report, false)
}

/// [`summary`] for a report whose tests' lines were not printed (`cargo copilot-eval merge`):
/// each test that did not pass is followed by its message's first line, e.g.
/// `    ERROR pkg::evals replay_mismatch: run 1 (replay_mismatch) stopped with ...`.
pub fn summary_with_messages(report: &SuiteReport) -> String {
    summary_text(report, true)
}

fn summary_text(report: &SuiteReport, with_messages: bool) -> String {
    let mut out = verdict_lines(report);
    out.push_str(&counts_lines(report));
    out.push_str(&incomplete_evidence_summary(report));
    out.push_str(&cost_summary_line(report));
    out.push_str(&comparison_lines(report));
    out.push_str(&crate::report::judge::summary_lines(&report.tests));
    if let Some(labels) = &report.judge_labels {
        out.push_str(&crate::report::judge_labels::summary_lines(labels));
    }
    out.push_str(&not_passed_lines(report, with_messages));
    out.push_str(&trials_lines(report));
    if !report.model_matrix.is_empty() {
        let currency = report
            .cost_control
            .as_ref()
            .map_or("", |c| c.currency.as_str());
        out.push_str("  model matrix:\n");
        out.push_str(&crate::report::matrix::table(
            &report.model_matrix,
            currency,
            "    ",
        ));
    }
    if !report.skill_triggers.is_empty() {
        out.push_str("  skill triggers:\n");
        out.push_str(&crate::report::triggers::lines(
            &report.skill_triggers,
            "    ",
        ));
    }
    if let Some(lift) = &report.skill_lift {
        let currency = report
            .cost_control
            .as_ref()
            .map_or("", |c| c.currency.as_str());
        out.push_str(
            "  skill lift (with / without; the side without is a measurement, not the verdict):\n",
        );
        out.push_str(&crate::report::lift::table(lift, currency, "    "));
    }
    if let Some(discrimination) = &report.discrimination {
        out.push_str(
            "  criteria (does each tell the sides apart? not when it holds, or fails, on every side in every trial):\n",
        );
        out.push_str(&crate::report::discrimination::lines(
            discrimination,
            "    ",
        ));
    }
    if let Some(floor) = &report.noise_floor {
        out.push_str("  noise floor (A/A: the same configuration as arm A and arm B):\n");
        out.push_str(&crate::report::aa::lines(floor, "    "));
    }
    out
}

/// The decision the summary leads with when the suite ran trials, models, comparisons or an
/// ablation ([`crate::report::verdicts::leads_with_decision`]): the headline (`2 evals, 6
/// trials, 1 eval failed`), then one line per eval, e.g.
/// `     FAILED 2/3 (67%, 95% CI 21%-94%) quickstart::evals creates_a_greeting_file`, each
/// followed by what changed between its sides (`       changed: starts with the house tag
/// line: baseline 0/3, treatment 3/3`). Empty otherwise.
pub fn verdict_lines(report: &SuiteReport) -> String {
    use crate::report::verdicts;
    if !verdicts::leads_with_decision(report) {
        return String::new();
    }
    let evals = verdicts::verdicts(report);
    let mut out = format!("     Verdict {}\n", verdicts::headline(report, &evals));
    if let Some(baseline) = &report.baseline {
        out.push_str(&format!("             {}\n", baseline.headline()));
    }
    for eval in &evals {
        out.push_str(&format!(
            "  {:>9} {} {} {}\n",
            eval.verdict.as_str().to_uppercase(),
            eval.figures(),
            eval.binary,
            eval.name
        ));
        for change in &eval.changed {
            out.push_str(&format!("             - {change}\n"));
        }
    }
    out
}

/// The summary's first lines: the outcome counts, the mode when no model was called (`mode:
/// scripted`, and the mode asked for when it differs), the stop reasons, the tokens and tool
/// calls.
fn counts_lines(report: &SuiteReport) -> String {
    let t = &report.totals;
    // Trials `--stop-early` skipped are `not_run` records, counted apart.
    let skipped = (report.tests.iter())
        .filter(|t| t.outcome == Outcome::NotRun && t.stopped_early.is_some())
        .count() as u64;
    let mut out = format!(
        "     Summary [{:>8.3}s] {}: {} passed, {} failed, {}, {} not run{}\n",
        report.duration_ms as f64 / 1000.0,
        count(t.tests, "test", "tests"),
        t.passed,
        t.failed,
        count(t.error, "error", "errors"),
        t.not_run.saturating_sub(skipped),
        match skipped {
            0 => String::new(),
            n => format!(", {n} skipped (--stop-early)"),
        }
    );
    if report.mode == "scripted" {
        out.push_str(&match report.requested_mode.as_deref() {
            Some(asked) if asked != "scripted" => format!(
                "  mode: scripted (every run's model was scripted by its test; asked for {asked})\n"
            ),
            _ => "  mode: scripted (every run's model was scripted by its test)\n".to_owned(),
        });
    }
    if !t.stop_reasons.is_empty() {
        let reasons: Vec<String> = t
            .stop_reasons
            .iter()
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        out.push_str(&format!("  stop reasons: {}\n", reasons.join(", ")));
    }
    let unknown = t.cost.usage_unknown_runs;
    let tokens = if unknown == 0 {
        format!("{} input, {} output", t.input_tokens, t.output_tokens)
    } else if unknown >= t.runs {
        "unknown (replayed from cassettes without recorded usage)".to_owned()
    } else {
        format!(
            "{} input, {} output in the runs that report them, unknown in {} (replayed from cassettes without recorded usage)",
            t.input_tokens,
            t.output_tokens,
            count(unknown, "run", "runs")
        )
    };
    out.push_str(&format!(
        "  tokens: {tokens}; {} in {}\n",
        count(t.tool_calls, "tool call", "tool calls"),
        count(t.runs, "run", "runs")
    ));
    out
}

/// One line per test that did not pass: its outcome, binary, name and trial, then `(its
/// message is above)`, or with `with_messages` its message's first line.
fn not_passed_lines(report: &SuiteReport, with_messages: bool) -> String {
    let mut out = String::new();
    // A trial `--stop-early` skipped is not a failure: its eval's trials line says why.
    let listed = |t: &&TestRecord| t.outcome != Outcome::Passed && t.stopped_early.is_none();
    for test in report.tests.iter().filter(listed) {
        let first = test
            .message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or("");
        let message = match (first.is_empty(), with_messages) {
            (true, _) => String::new(),
            (false, false) => " (its message is above)".to_owned(),
            (false, true) => format!(": {first}"),
        };
        out.push_str(&format!(
            "  {:>7} {} {}{}{message}\n",
            test.outcome.as_str().to_uppercase(),
            test.binary,
            test.name,
            trial_suffix(test)
        ));
    }
    out
}

/// The trials' figures: one line per eval run in trials, each followed by its comparison and
/// judge criteria over the trials; empty without trials.
fn trials_lines(report: &SuiteReport) -> String {
    if report.trial_summaries.is_empty() {
        return String::new();
    }
    let mut out = "  trials:\n".to_owned();
    for summary in &report.trial_summaries {
        out.push_str(&format!(
            "    {} {}\n",
            summary.binary,
            crate::report::trials::line(summary)
        ));
        for criterion in &summary.comparison_criteria {
            out.push_str(&format!(
                "      {}\n",
                crate::report::compare_trials::line(criterion)
            ));
        }
        for criterion in &summary.judge_criteria {
            out.push_str(&format!(
                "      {}\n",
                crate::report::judge_trials::line(criterion)
            ));
        }
        for criterion in &summary.pair_criteria {
            out.push_str(&format!(
                "      {}\n",
                crate::report::judge_trials::pair_line(criterion)
            ));
        }
    }
    out
}

/// The cost lines of the runner's summary, e.g.
/// `  cost: 3 model calls (cache: 0 read, 0 written tokens); premium requests: 0 (reported); estimated: 0.0018 USD (pricing: built-in default)`,
/// then `  cap: <reason>` when a cap stopped the suite. Unknown values print as `unknown`.
pub fn cost_summary_line(report: &SuiteReport) -> String {
    let cost = &report.totals.cost;
    let (currency, pricing) = match &report.cost_control {
        Some(c) => (c.currency.as_str(), c.pricing.as_str()),
        None => ("", "none"),
    };
    let premium = cost
        .premium_requests
        .map(format_amount)
        .unwrap_or_else(|| "unknown".to_owned());
    let estimated = match cost.estimated_cost {
        Some(value) => format!("{} {currency}", format_amount(value)),
        None if cost.unpriced_models.is_empty() => "unknown".to_owned(),
        None => format!("unknown (not priced: {})", cost.unpriced_models.join(", ")),
    };
    let estimated = match cost.not_applicable_runs {
        0 => estimated,
        n => format!(
            "{estimated} ({} not applicable: scripted model)",
            count(n, "run", "runs")
        ),
    };
    let cache = match cost.usage_unknown_runs {
        0 => format!(
            "{} read, {} written tokens",
            cost.cache_read_tokens, cost.cache_write_tokens
        ),
        n => format!("tokens unknown in {}", count(n, "run", "runs")),
    };
    let mut out = format!(
        "  cost: {} (cache: {cache}); premium requests: {premium} (reported); estimated: {} (pricing: {pricing})\n",
        count(cost.model_calls, "model call", "model calls"),
        estimated.trim_end()
    );
    if let Some(reason) = report
        .cost_control
        .as_ref()
        .and_then(|c| c.cap_reached.as_ref())
    {
        out.push_str(&format!("  cap: {reason}\n"));
    }
    out
}

/// Two lines per comparison of the suite's tests, in test order:
/// `  compare <binary> <test> [trial 2/3]: baseline (run 1): ...; treatment (run 2): ...; criteria: ...`
/// (the trial label for a test run in trials: each trial's comparison is its own; the
/// criteria over the trials follow in the trials' lines)
/// then `          differences: outcome same; tool calls +1 (...); ...; duration +0.4 s (1.2 s ->
/// 1.6 s)` (treatment minus baseline). Empty when no test compared.
pub fn comparison_lines(report: &SuiteReport) -> String {
    let mut out = String::new();
    for test in &report.tests {
        for comparison in &test.comparisons {
            out.push_str(&format!(
                "  compare {} {}{}: {}\n          differences: {}; duration {:+.1} s ({:.1} s -> {:.1} s)\n",
                test.binary,
                test.name,
                trial_suffix(test),
                comparison.summary,
                comparison.differences_line(),
                comparison.differences.duration_ms as f64 / 1000.0,
                comparison.baseline.duration_ms as f64 / 1000.0,
                comparison.treatment.duration_ms as f64 / 1000.0,
            ));
        }
    }
    out
}

/// `n` with the noun in the number it takes: `1 test`, `0 tests`, `2 tests`.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{RuntimeInfo, SuiteTotals, ToolInfo};

    /// A run with incomplete evidence is named in its test's line and counted in the summary,
    /// whether the test passed or not; a suite without one prints no such line.
    #[test]
    fn incomplete_evidence_is_shown_in_the_test_line_and_the_summary() {
        let mut lossy = crate::report::tests::run(crate::StopReason::Completed, 1);
        lossy.evidence_complete = false;
        lossy.capture_errors = vec![
            "the event subscription lagged: 3 events were lost".to_owned(),
            "completion for unknown tool call call_1".to_owned(),
        ];
        let whole = crate::report::tests::run(crate::StopReason::Completed, 1);
        let mut test = crate::suite::executor::tests::record("lossy", Outcome::Passed);
        test.runs = vec![whole.clone(), lossy];
        let line = finished_line(&test);
        assert!(
            line.ends_with(
                "\n             evidence incomplete in run 2 (e): the event subscription lagged: 3 events were lost (+1 more)"
            ),
            "{line}"
        );
        let mut clean = crate::suite::executor::tests::record("clean", Outcome::Passed);
        clean.runs = vec![whole];
        assert!(!finished_line(&clean).contains("evidence"));
        let report = |tests: Vec<TestRecord>| SuiteReport {
            provenance: None,
            trial_summaries: Vec::new(),
            model_matrix: Vec::new(),
            skill_triggers: Vec::new(),
            skill_lift: None,
            discrimination: None,
            judge_labels: None,
            noise_floor: None,
            baseline: None,
            schema_version: crate::report::SCHEMA_VERSION.into(),
            tool: ToolInfo {
                name: "copilot-eval".into(),
                version: "0".into(),
            },
            runtime: RuntimeInfo::default(),
            mode: "replay".into(),
            requested_mode: None,
            started_at: "2026-01-31T09:15:02Z".into(),
            duration_ms: 1,
            totals: SuiteTotals::of(&tests),
            cost_control: None,
            partition: None,
            pool: None,
            tests,
        };
        let text = summary(&report(vec![test, clean.clone()]));
        assert!(
            text.contains(
                "\n  evidence: 1 run with incomplete evidence (see its capture_errors): pkg::evals lossy (run 2)\n"
            ),
            "{text}"
        );
        assert!(!summary(&report(vec![clean])).contains("evidence"));

        // A test that did not pass: its message's first line only where its own line was not
        // printed (merge); the suite run's summary points at the line above instead.
        let mut failed = crate::suite::executor::tests::record("broken", Outcome::Failed);
        failed.message = Some("the answer was wrong\nsecond line".to_owned());
        let failed = report(vec![failed]);
        let text = summary(&failed);
        assert!(
            text.ends_with("\n   FAILED pkg::evals broken (its message is above)\n"),
            "{text}"
        );
        assert!(!text.contains("the answer was wrong"), "{text}");
        let text = summary_with_messages(&failed);
        assert!(
            text.ends_with("\n   FAILED pkg::evals broken: the answer was wrong\n"),
            "{text}"
        );
    }

    /// Under trials and models, a test's line names its attempt: the model cell (`@model`) and
    /// `[trial 2/5]`, in the finished line and in the summary's line of a test that did not
    /// pass; a test without trials has no label.
    #[test]
    fn lines_under_trials_and_models_name_the_attempt() {
        let mut record = crate::suite::executor::tests::record("greets@gpt-5", Outcome::Failed);
        record.model = Some("gpt-5".into());
        record.trial = Some(crate::report::TrialOf {
            trial: 2,
            trials: 5,
        });
        let line = finished_line(&record);
        assert!(
            line.starts_with("    FAIL [")
                && line.contains("s] pkg::evals greets@gpt-5 [trial 2/5]"),
            "{line}"
        );
        let plain = crate::suite::executor::tests::record("greets", Outcome::Passed);
        assert!(finished_line(&plain).ends_with("s] pkg::evals greets"));
        let mut report = crate::report::tests::report();
        report.tests = vec![record];
        assert!(
            not_passed_lines(&report, false).contains("FAILED pkg::evals greets@gpt-5 [trial 2/5]"),
            "{}",
            not_passed_lines(&report, false)
        );
    }

    #[test]
    fn counts_take_the_noun_in_their_number() {
        assert_eq!(count(0, "test", "tests"), "0 tests");
        assert_eq!(count(1, "test", "tests"), "1 test");
        assert_eq!(count(2, "tool call", "tool calls"), "2 tool calls");
        assert_eq!(count(1, "model call", "model calls"), "1 model call");
    }
}
