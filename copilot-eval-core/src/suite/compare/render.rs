//! The comparison as people read it: the terminal table (regressions first, the suite's
//! changes named before it), the GitHub job-summary section, one `::warning` per regression.

use super::eval::{EvalComparison, InputChangeKind, SideFigures, Verdict};
use super::history::{History, point_text, sparkline};
use super::{CompareReport, RunInfo};
use crate::cost::cost_per_pass_text;
use crate::report::trials::percent;

/// A side's pass rate: `3/5 (60%)`, with `, 1 error, 2 not run` when there are such; `-` when
/// the file lacks the eval.
pub fn rate_text(side: Option<&SideFigures>) -> String {
    let Some(s) = side else {
        return "-".to_owned();
    };
    let mut text = format!("{}/{}", s.passed, s.passed + s.failed);
    if let Some(rate) = s.pass_rate {
        text.push_str(&format!(" ({})", percent(rate)));
    }
    if s.error > 0 {
        text.push_str(&format!(", {} error", s.error));
    }
    if s.not_run > 0 {
        text.push_str(&format!(", {} not run", s.not_run));
    }
    text
}

/// A p-value: `1.000`, `0.008`, `2.2e-5`; `-` when there is none.
pub fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p >= 0.001 => format!("{p:.3}"),
        Some(p) => format!("{p:.1e}"),
        None => "-".to_owned(),
    }
}

/// The change of pass rate in percentage points: `-40 pp`, `+100 pp`, `0 pp`; `-` when unknown.
pub fn change_text(change: Option<f64>) -> String {
    match change {
        Some(c) => {
            let points = (c * 100.0).round();
            if points > 0.0 {
                format!("+{points} pp")
            } else {
                format!("{points} pp")
            }
        }
        None => "-".to_owned(),
    }
}

/// `before -> after` of a figure each side may lack (`-`).
fn pair(before: Option<String>, after: Option<String>) -> String {
    format!(
        "{} -> {}",
        before.unwrap_or_else(|| "-".to_owned()),
        after.unwrap_or_else(|| "-".to_owned())
    )
}

/// Tokens per trial before and after: `1200 -> 1350`; `unknown` for a side whose token usage
/// is unknown, `-` for a side without the eval or where none of its trials ran.
pub fn tokens_text(eval: &EvalComparison) -> String {
    let tokens = |s: &Option<SideFigures>| {
        let s = s.as_ref().filter(|s| s.ran > 0)?;
        Some(match s.tokens_per_trial() {
            Some(t) => format!("{t:.0}"),
            None => "unknown".to_owned(),
        })
    };
    pair(tokens(&eval.before), tokens(&eval.after))
}

/// Duration per trial before and after: `2.1 s -> 2.4 s`.
pub fn duration_text(eval: &EvalComparison) -> String {
    let duration = |s: &Option<SideFigures>| {
        s.as_ref()
            .and_then(SideFigures::duration_ms_per_trial)
            .map(|ms| format!("{:.1} s", ms / 1000.0))
    };
    pair(duration(&eval.before), duration(&eval.after))
}

/// Estimated cost per pass before and after: `0.0012 USD -> unknown`.
pub fn cost_text(eval: &EvalComparison, currency: &str) -> String {
    let cost = |s: &Option<SideFigures>| {
        s.as_ref()
            .map(|s| cost_per_pass_text(&s.cost, u64::from(s.passed), currency))
    };
    pair(cost(&eval.before), cost(&eval.after))
}

/// The lines under an eval: why it is underpowered, its inputs, models and settings that
/// changed (or that its inputs are unknown).
pub fn details(eval: &EvalComparison) -> Vec<String> {
    let mut out = Vec::new();
    if eval.verdict == Verdict::Underpowered {
        let rates = |s: &Option<SideFigures>| {
            s.as_ref()
                .and_then(|s| s.pass_rate)
                .map_or_else(|| "-".to_owned(), percent)
        };
        let needed = match eval.trials_needed {
            Some(n) => format!("needs {n} trials per side to reach p < 0.05"),
            None => "would not reach p < 0.05 even with 10000 trials per side".to_owned(),
        };
        out.push(format!(
            "underpowered: the observed difference ({} -> {}) {needed}",
            rates(&eval.before),
            rates(&eval.after)
        ));
    }
    for input in &eval.inputs {
        out.push(format!(
            "{} {} ({})",
            input.path,
            input.change.as_str(),
            input.kind.as_str()
        ));
    }
    if !eval.inputs_known && !matches!(eval.verdict, Verdict::New | Verdict::Removed) {
        out.push("inputs unknown: a file has no provenance for this eval".to_owned());
    }
    if let Some([before, after]) = &eval.models {
        out.push(format!(
            "model changed: {} -> {}",
            before.join(", "),
            after.join(", ")
        ));
    }
    for setting in &eval.settings {
        out.push(format!("setting changed: {setting}"));
    }
    out
}

/// A file's line: `BASE.json: 2026-01-31T09:15:02Z, replay, runtime 1.0.102, copilot-eval
/// 0.1.0, git 0123abcd4567 (dirty)` (`provenance unknown` when it has none).
pub fn run_line(run: &RunInfo) -> String {
    let provenance = match &run.provenance {
        Some(p) => {
            let git = match (&p.git_commit, p.git_dirty) {
                (Some(c), Some(true)) => {
                    format!("git {} (dirty)", crate::report::provenance::short(c))
                }
                (Some(c), _) => format!("git {}", crate::report::provenance::short(c)),
                (None, _) => "git unknown".to_owned(),
            };
            format!("SDK {}, {git}", p.sdk_version)
        }
        None => "provenance unknown".to_owned(),
    };
    format!(
        "{}: {}, {}, runtime {}, copilot-eval {}, {provenance}, {} tests",
        run.file,
        run.started_at,
        run.mode,
        run.runtime_version.as_deref().unwrap_or("unknown"),
        run.copilot_eval_version,
        run.tests
    )
}

/// The terminal form: the files, the suite's changes (`!!` before those that can explain a
/// difference by themselves), the table (regressions first) with each eval's details under
/// it, the history with more than two files, and the summary line.
pub fn terminal(report: &CompareReport, currency: &str) -> String {
    let n = report.runs.len();
    let mut out = format!(
        "compare: {} -> {}\n",
        report.runs[n - 2].file,
        report.runs[n - 1].file
    );
    for run in &report.runs {
        out.push_str(&format!("  {}\n", run_line(run)));
    }
    for change in &report.changes {
        let mark = if change.kind.is_loud() { "!!" } else { "note:" };
        out.push_str(&format!("  {mark} {}\n", change.detail));
    }
    let header = [
        "verdict",
        "eval",
        "before",
        "after",
        "change",
        "p",
        "tokens/trial",
        "time/trial",
        "cost/pass",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for eval in &report.evals {
        rows.push(vec![
            eval.verdict.as_str().to_owned(),
            format!("{} {}", eval.binary, eval.name),
            rate_text(eval.before.as_ref()),
            rate_text(eval.after.as_ref()),
            change_text(eval.change),
            p_text(eval.p_value),
            tokens_text(eval),
            duration_text(eval),
            cost_text(eval, currency),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for (index, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(text, width)| format!("{text:<width$}"))
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
        if index > 0 {
            for line in details(&report.evals[index - 1]) {
                out.push_str(&format!("      {line}\n"));
            }
        }
    }
    if let Some(history) = &report.history {
        out.push_str(&history_text(history, n));
    }
    out.push_str(&format!("  {}\n", report.summary));
    out
}

/// The history table: per eval its figures file by file, its trend and its flips; then the
/// evals failing most often.
pub fn history_text(history: &History, files: usize) -> String {
    let mut out = format!("  history over {files} files (oldest first):\n");
    for eval in &history.evals {
        let points: Vec<String> = eval.runs.iter().map(point_text).collect();
        let flips: Vec<String> = eval
            .flips
            .iter()
            .map(|f| {
                format!(
                    "{}->{} {}->{}",
                    f.from,
                    f.to,
                    f.before.as_str(),
                    f.after.as_str()
                )
            })
            .collect();
        out.push_str(&format!(
            "    {} {}: {}  {}  {} flip(s){}\n",
            eval.binary,
            eval.name,
            points.join(" "),
            sparkline(&eval.runs),
            eval.flips.len(),
            if flips.is_empty() {
                String::new()
            } else {
                format!(" ({})", flips.join(", "))
            }
        ));
    }
    if history.most_failing.is_empty() {
        out.push_str("  failing most often: none failed\n");
    } else {
        let items: Vec<String> = history
            .most_failing
            .iter()
            .map(|f| format!("{} ({} of {} files)", f.name, f.failing_runs, f.runs))
            .collect();
        out.push_str(&format!("  failing most often: {}\n", items.join(", ")));
    }
    out
}

/// A Markdown table cell: `|` escaped, new lines as spaces.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// The job-summary section in GitHub-flavoured Markdown: the files, the suite's changes, a
/// table of every eval that is not unchanged (regressions first), the history's failing evals.
pub fn job_summary(report: &CompareReport, currency: &str) -> String {
    let n = report.runs.len();
    let icon = if report.has_regression() {
        "❌"
    } else {
        "✅"
    };
    let mut out = format!(
        "## copilot-eval compare\n\n{icon} `{}` → `{}`: {}\n\n",
        cell(&report.runs[n - 2].file),
        cell(&report.runs[n - 1].file),
        cell(&report.summary)
    );
    for change in report.changes.iter().filter(|c| c.kind.is_loud()) {
        out.push_str(&format!("> ⚠️ {}\n\n", cell(&change.detail)));
    }
    let shown: Vec<&EvalComparison> = report
        .evals
        .iter()
        .filter(|e| e.verdict != Verdict::Unchanged)
        .collect();
    if !shown.is_empty() {
        out.push_str("| verdict | eval | before | after | change | p | tokens/trial | time/trial | cost/pass | what changed |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for eval in shown {
            out.push_str(&format!(
                "| {} | `{}` {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                eval.verdict.as_str(),
                cell(&eval.binary),
                cell(&eval.name),
                rate_text(eval.before.as_ref()),
                rate_text(eval.after.as_ref()),
                change_text(eval.change),
                p_text(eval.p_value),
                tokens_text(eval),
                duration_text(eval),
                cell(&cost_text(eval, currency)),
                cell(&details(eval).join("; ")),
            ));
        }
        out.push('\n');
    }
    if let Some(history) = &report.history
        && !history.most_failing.is_empty()
    {
        let items: Vec<String> = history
            .most_failing
            .iter()
            .map(|f| format!("`{}` ({} of {})", cell(&f.name), f.failing_runs, f.runs))
            .collect();
        out.push_str(&format!("Failing most often: {}\n\n", items.join(", ")));
    }
    out
}

/// One `::warning` per significant regression: its pass rates, p-value and the inputs that
/// changed.
pub fn warnings(report: &CompareReport) -> Vec<String> {
    report
        .evals
        .iter()
        .filter(|e| e.verdict == Verdict::Regressed)
        .map(|eval| {
            let changed: Vec<&str> = eval
                .inputs
                .iter()
                .filter(|i| i.change == InputChangeKind::Changed)
                .map(|i| i.path.as_str())
                .collect();
            let inputs = if changed.is_empty() {
                String::new()
            } else {
                format!("; changed: {}", changed.join(", "))
            };
            super::super::github::warning(
                &format!("copilot-eval: regressed {}", eval.name),
                &format!(
                    "{} {}: {} -> {}, p = {}{inputs}",
                    eval.binary,
                    eval.name,
                    rate_text(eval.before.as_ref()),
                    rate_text(eval.after.as_ref()),
                    p_text(eval.p_value)
                ),
            )
        })
        .collect()
}
