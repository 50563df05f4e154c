//! `compare --html PATH`: the comparison as one self-contained page (a minijinja template with
//! HTML auto-escaping, `compare.html` beside this module; no script, nothing loaded from the
//! network): the files, the suite's changes, the table (regressions first, each eval's details
//! under its name) and, with more than two files, the history with a small trend per eval (an
//! inline SVG bar per file, its height the pass rate).

use minijinja::{AutoEscape, Environment};
use serde::Serialize;

use super::CompareReport;
use super::history::point_text;
use super::render::{
    change_text, cost_text, details, duration_text, p_text, rate_text, run_line, tokens_text,
};

const TEMPLATE: &str = include_str!("compare.html");

#[derive(Serialize)]
struct Page {
    title: String,
    summary: String,
    runs: Vec<String>,
    changes: Vec<(bool, String)>,
    rows: Vec<Row>,
    history: Option<HistoryView>,
}

#[derive(Serialize)]
struct Row {
    verdict: &'static str,
    binary: String,
    name: String,
    before: String,
    after: String,
    change: String,
    p: String,
    tokens: String,
    duration: String,
    cost: String,
    details: Vec<String>,
}

#[derive(Serialize)]
struct HistoryView {
    files: usize,
    evals: Vec<HistoryRow>,
    most_failing: Vec<String>,
}

#[derive(Serialize)]
struct HistoryRow {
    binary: String,
    name: String,
    points: Vec<String>,
    /// One bar per file: (x, height, class) in a 12-pixel-high box.
    bars: Vec<(u32, u32, &'static str)>,
    width: u32,
    flips: Vec<String>,
}

/// Render `report` as the HTML page (amounts in `currency`).
///
/// Errors: the template failed to render (a defect of the template).
pub fn to_html(report: &CompareReport, currency: &str) -> Result<String, minijinja::Error> {
    let n = report.runs.len();
    let page = Page {
        title: format!(
            "copilot-eval compare: {} -> {}",
            report.runs[n - 2].file,
            report.runs[n - 1].file
        ),
        summary: report.summary.clone(),
        runs: report.runs.iter().map(run_line).collect(),
        changes: report
            .changes
            .iter()
            .map(|c| (c.kind.is_loud(), c.detail.clone()))
            .collect(),
        rows: report
            .evals
            .iter()
            .map(|e| Row {
                verdict: e.verdict.as_str(),
                binary: e.binary.clone(),
                name: e.name.clone(),
                before: rate_text(e.before.as_ref()),
                after: rate_text(e.after.as_ref()),
                change: change_text(e.change),
                p: p_text(e.p_value),
                tokens: tokens_text(e),
                duration: duration_text(e),
                cost: cost_text(e, currency),
                details: details(e),
            })
            .collect(),
        history: report.history.as_ref().map(|h| HistoryView {
            files: n,
            evals: h
                .evals
                .iter()
                .map(|e| HistoryRow {
                    binary: e.binary.clone(),
                    name: e.name.clone(),
                    points: e.runs.iter().map(point_text).collect(),
                    bars: e
                        .runs
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let x = i as u32 * 8;
                            match p.as_ref().and_then(|p| p.pass_rate.map(|r| (r, p.verdict))) {
                                Some((rate, verdict)) => {
                                    (x, 1 + (rate * 11.0).round() as u32, verdict.as_str())
                                }
                                None => (x, 1, "absent"),
                            }
                        })
                        .collect(),
                    width: e.runs.len() as u32 * 8,
                    flips: e
                        .flips
                        .iter()
                        .map(|f| {
                            format!(
                                "{}→{}: {} → {}",
                                f.from,
                                f.to,
                                f.before.as_str(),
                                f.after.as_str()
                            )
                        })
                        .collect(),
                })
                .collect(),
            most_failing: h
                .most_failing
                .iter()
                .map(|f| format!("{} ({} of {} files)", f.name, f.failing_runs, f.runs))
                .collect(),
        }),
    };
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("compare.html", TEMPLATE)?;
    env.get_template("compare.html")?.render(
        minijinja::context! { page => minijinja::Value::from(minijinja::value::Serde(&page)) },
    )
}
