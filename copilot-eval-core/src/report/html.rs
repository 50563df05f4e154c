//! The HTML report (`cargo copilot-eval --html PATH`, `merge --html PATH`): one self-contained
//! static page for a person, rendered from the same [`SuiteReport`] the JSON results are written
//! from (after the same [`Redactor`]), so the two can never disagree.
//!
//! The page is a [minijinja] template with HTML auto-escaping on: every text that comes from a
//! model, a tool, a test or a file is escaped (a model answer holding `<script>` or `</div>` is
//! shown as text). The template, its CSS and its small script (the outcome filter and the name
//! search) are files beside this module (`html/report.html`, `html/report.css`,
//! `html/report.js`), compiled in with `include_str!` and inlined into the page: the page loads
//! nothing from the network.
//!
//! What the page shows: first, with trials, models, comparisons or an ablation, the verdict of
//! each eval (its pass rate over its trials, the 95% interval, what changed between its sides)
//! under a headline counting evals and trials apart; then the suite summary (outcome counts, duration, tokens, cost with `unknown`
//! where unknown, mode, runtime version); a chart of each eval's duration and tokens, sorted by
//! cost (an inline SVG); then one foldable section per eval with its outcome, stop reasons,
//! failure message, properties and, per run, a timeline: the prompt, each assistant turn with
//! the tool calls it requested (arguments, result, duration, and `admitted` or `denied` with who
//! denied it: `budget`, `guard`, `stop`, or the permission layer), subagent dispatches with
//! their own calls nested, skill invocations, the request audit rows, usage per model call, and
//! cleanup and capture errors. Long texts are folded (`<details>`).
//!
//! Comparisons (`ctx.compare`): before an eval's runs, one `table.comparison` per comparison
//! with a row per measure (outcome, tool calls, files written, model calls, tokens, costs,
//! duration: baseline, treatment, difference) and a row per criterion (`yes`/`no` per side,
//! marked `improved` or `regressed`); each side's run is labelled `baseline` / `treatment`
//! in its heading, and the runs stand side by side in the `.runs` row.
//!
//! (Feature `runner`.)

mod compare;
mod discrimination;
mod judge;
mod lift;
mod matrix;
mod provenance;
mod text;
mod trials;
mod triggers;
mod verdicts;
mod view;

use std::path::Path;

use minijinja::{AutoEscape, Environment};

use super::{Redactor, SuiteReport, write_atomically};

/// The page template (auto-escaped as HTML).
const TEMPLATE: &str = include_str!("html/report.html");
/// The page's CSS, inlined into `<style>`.
const STYLE: &str = include_str!("html/report.css");
/// The page's script (outcome filter and search), inlined into `<script>`.
const SCRIPT: &str = include_str!("html/report.js");

/// Render `report` as one self-contained HTML page. The caller redacts first ([`write_html`]
/// does).
///
/// Errors: the template failed to render (a defect of the template, with minijinja's
/// description).
pub fn to_html(report: &SuiteReport) -> Result<String, minijinja::Error> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    text::register(&mut env);
    env.add_template("report.html", TEMPLATE)?;
    let page = view::Page::of(report);
    env.get_template("report.html")?
        .render(minijinja::context! {
            page => minijinja::Value::from(minijinja::value::Serde(&page)),
            style => minijinja::Value::from_safe_string(STYLE.to_owned()),
            script => minijinja::Value::from_safe_string(SCRIPT.to_owned()),
        })
}

/// Write `report` as the HTML page ([`to_html`]) to `path`, atomically, after removing the
/// secrets `redactor` knows (the same redaction as the JSON and the JUnit XML).
///
/// Errors: as [`write_atomically`], or the page could not be rendered.
pub fn write_html(path: &Path, report: &SuiteReport, redactor: &Redactor) -> std::io::Result<()> {
    let report = redactor.redact_report(report);
    let html = to_html(&report)
        .map_err(|e| std::io::Error::other(format!("rendering the HTML report: {e:#}")))?;
    write_atomically(path, html.as_bytes())
}

#[cfg(test)]
mod tests;
