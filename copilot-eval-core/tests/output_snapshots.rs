//! What a person and a CI system read, checked as snapshots (insta) of one fixed suite, so a
//! change to any output is a reviewed diff: the terminal's lines (each test's finished line and
//! the summary `merge` prints), the JUnit XML, and the HTML page's visible text.
//!
//! The suite is `tests/fixtures/suite.json`: real results, written by the runner through the
//! real runtime offline (the scripted example with `--replay`, the quick-start example with
//! `--replay --trials 3`, and the fixture crate's `guards_and_delegates` and
//! `expects_a_stale_cassette`), merged with `cargo xeval merge`, then masked: every duration
//! `1000` ms (`0` when it was 0, and in a comparison's differences), the start time fixed, each
//! uuid numbered in order, temporary and workspace folders, the home folder, thread ids and the
//! backtrace of the failing test's output replaced by placeholders. It holds comparisons,
//! judges, trials (with a failing trial), skill evals, trigger checks, a model matrix, a
//! replay, a cassette without recorded usage, a guard's denial, a subagent, the request audit
//! and an expected stop.
//!
//! After a deliberate change of an output: `cargo insta test -p copilot-eval-core --test
//! output_snapshots --review` (or `INSTA_UPDATE=always`, then read the `.snap` diff).

use copilot_eval_core::report::{Redactor, SuiteReport};

/// The fixed suite.
fn suite() -> SuiteReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/suite.json");
    let text = std::fs::read_to_string(path).expect("the fixture is committed");
    serde_json::from_str(&text).expect("the fixture is a results file of this version")
}

/// The terminal's lines: each test's line as the runner prints it when the test ends, then
/// the summary (with each failure's first message line, as `merge` prints it).
#[test]
fn the_terminal_lines() {
    use copilot_eval_core::suite::display::{finished_line, summary_with_messages};
    let report = suite();
    let mut text: String = report
        .tests
        .iter()
        .map(|t| format!("{}\n", finished_line(t)))
        .collect();
    text.push_str(&summary_with_messages(&report));
    insta::assert_snapshot!(text);
}

/// The JUnit XML, as `--junit` writes it.
#[test]
fn the_junit_xml() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    copilot_eval_core::report::write_junit(&path, &suite(), &Redactor::default()).unwrap();
    insta::assert_snapshot!(std::fs::read_to_string(&path).unwrap());
}

/// The HTML page's visible text, as `--html` writes it: the body's text as a browser parses
/// it (script, style and tooltips left out), a line per block, whitespace collapsed.
#[test]
fn the_html_pages_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    copilot_eval_core::report::html::write_html(&path, &suite(), &Redactor::default()).unwrap();
    let text = visible_text(&std::fs::read_to_string(&path).unwrap());
    assert!(
        text.lines().count() > 1000,
        "the page has its text:\n{text}"
    );
    insta::assert_snapshot!(text);
}

/// Elements that start and end a line of the visible text.
const BLOCKS: &[&str] = &[
    "section", "header", "div", "p", "h1", "h2", "h3", "ul", "ol", "li", "dl", "dt", "dd", "table",
    "caption", "tr", "details", "summary", "pre", "fieldset", "legend", "text",
];

/// The visible text of `html`'s body: a line per block, table cells apart, whitespace of each
/// line collapsed, empty lines left out.
fn visible_text(html: &str) -> String {
    let document = scraper::Html::parse_document(html);
    let body = scraper::Selector::parse("body").unwrap();
    let mut raw = String::new();
    walk(document.select(&body).next().expect("a body"), &mut raw);
    let mut text = String::new();
    for line in raw.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if !words.is_empty() {
            text.push_str(&words.join(" "));
            text.push('\n');
        }
    }
    text
}

fn walk(element: scraper::ElementRef, out: &mut String) {
    let name = element.value().name();
    if matches!(name, "script" | "style" | "title") {
        return;
    }
    let block = BLOCKS.contains(&name);
    if block {
        out.push('\n');
    }
    for child in element.children() {
        if let Some(inner) = scraper::ElementRef::wrap(child) {
            walk(inner, out);
        } else if let Some(text) = child.value().as_text() {
            out.push_str(text);
        }
    }
    if block {
        out.push('\n');
    } else if matches!(name, "td" | "th") {
        out.push_str(" | ");
    }
}
