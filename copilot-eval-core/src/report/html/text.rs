//! How the page writes numbers, durations and texts: `unknown` for what is not known (never 0),
//! and which texts are folded. The template's filters ([`FILTERS`]) are these functions: the
//! page formats the records' own fields with them.

use minijinja::value::{Serde, Value};

use crate::evidence::mcp::McpServerState;
use crate::evidence::skills::SkillInvocation;
use crate::report::RunTotals;

/// Registers the filters and tests the template uses: `duration` (ms), `maybe_duration` (ms or
/// `unknown`), `number` (`unknown` when none), `if_none(word)`, `pretty` (JSON), `preview`,
/// `shorten(n)`, `mcp_line`, `skill_line`, `image_details`, `run_totals`, and the test `long`.
pub(super) fn register(env: &mut minijinja::Environment) {
    env.add_test("long", |text: &str| is_long(text));
    env.add_filter("preview", |text: &str| preview(text));
    env.add_filter("shorten", |text: &str, max: usize| shorten(text, max));
    env.add_filter("duration", duration);
    env.add_filter("maybe_duration", maybe_duration);
    env.add_filter("number", |value: Option<f64>| maybe_number(value, ""));
    env.add_filter("if_none", |value: Value, word: &str| {
        if value.is_none() || value.is_undefined() {
            Value::from(word)
        } else {
            value
        }
    });
    env.add_filter("pretty", |value: Value| pretty(&value));
    env.add_filter("mcp_line", |m: Serde<McpServerState>| mcp_server_line(&m));
    env.add_filter("skill_line", |s: Serde<SkillInvocation>| skill_line(&s));
    env.add_filter("image_details", |d: Vec<Option<String>>| image_details(&d));
    env.add_filter("run_totals", |t: Serde<RunTotals>| run_totals(&t));
}

/// Texts longer than this many characters, or with more than [`FOLD_LINES`] lines, are folded.
pub(super) const FOLD_CHARS: usize = 600;
/// Texts with more lines than this are folded.
pub(super) const FOLD_LINES: usize = 12;

/// Whether `text` is folded in the page (more than [`FOLD_CHARS`] characters or
/// [`FOLD_LINES`] lines).
pub(super) fn is_long(text: &str) -> bool {
    text.chars().count() > FOLD_CHARS || text.lines().count() > FOLD_LINES
}

/// The first non-empty line of a folded text, at most 120 characters.
pub(super) fn preview(text: &str) -> String {
    shorten(
        text.lines().find(|l| !l.trim().is_empty()).unwrap_or(""),
        120,
    )
}

/// `text` cut to `max` characters, with `…` when cut.
pub(super) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// `1.23 s` or `45 ms`.
pub(super) fn duration(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.2} s", ms as f64 / 1000.0)
    } else {
        format!("{ms} ms")
    }
}

/// A duration that may be unknown.
pub(super) fn maybe_duration(ms: Option<u64>) -> String {
    ms.map_or_else(|| "unknown".to_owned(), duration)
}

/// A number that may be unknown (`unknown`, never 0).
pub(super) fn maybe_number(value: Option<f64>, unit: &str) -> String {
    let Some(v) = value else {
        return "unknown".to_owned();
    };
    // At most 4 decimals, without trailing zeros: `0`, `1.5`, `0.0036`.
    let mut text = format!("{v:.4}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    if unit.is_empty() {
        text
    } else {
        format!("{text} {unit}")
    }
}

/// `value` as pretty JSON (empty if it cannot be written as JSON).
pub(super) fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One MCP server's line: name, `optional` when it is, status, tool count, error, each tool as
/// the server named it and as the model sees it when the runtime renamed it (cut to 64
/// characters), and the check's warnings.
pub(super) fn mcp_server_line(m: &McpServerState) -> String {
    let mut line = format!("{}: {}", m.name, m.status);
    if m.optional {
        line = format!("{} (optional): {}", m.name, m.status);
    }
    if let Some(count) = m.tool_count {
        line.push_str(&format!(", {count} tools"));
    }
    if let Some(error) = &m.error {
        line.push_str(&format!(" ({error})"));
    }
    let renamed: Vec<String> = m
        .tools
        .iter()
        .filter(|t| t.model_name != format!("{}-{}", m.name, t.name))
        .map(|t| format!("`{}` seen by the model as `{}`", t.name, t.model_name))
        .collect();
    if !renamed.is_empty() {
        line.push_str(&format!(
            "; tools renamed by the runtime: {}",
            renamed.join(", ")
        ));
    }
    if m.offered_tools.as_ref().is_some_and(Vec::is_empty) {
        line.push_str("; the model was offered none of its tools");
    }
    for warning in &m.warnings {
        line.push_str(&format!("; warning: {warning}"));
    }
    line
}

/// One skill invocation: its name, and its `SKILL.md` in parentheses when known.
pub(super) fn skill_line(s: &SkillInvocation) -> String {
    match &s.path {
        Some(path) => format!("{} ({})", s.name, path.display()),
        None => s.name.clone(),
    }
}

/// An audited request's image details: `no images`, else each image's detail (`default` when
/// the request set none), comma-separated.
pub(super) fn image_details(details: &[Option<String>]) -> String {
    if details.is_empty() {
        return "no images".to_owned();
    }
    (details.iter())
        .map(|d| d.as_deref().unwrap_or("default"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A run's sums in one line: model calls, tokens (`tokens unknown` when not known, never 0),
/// tool calls, premium requests and the estimated cost (or why it does not apply).
pub(super) fn run_totals(t: &RunTotals) -> String {
    format!(
        "{} model calls, {}, {} tool calls, premium requests {}, estimated cost {}",
        t.model_calls,
        if t.tokens.is_reported() {
            format!(
                "{} input / {} output tokens ({} cache read, {} cache write)",
                t.input_tokens, t.output_tokens, t.cache_read_tokens, t.cache_write_tokens
            )
        } else {
            "tokens unknown".to_owned()
        },
        t.tool_calls,
        maybe_number(t.premium_requests, ""),
        match &t.cost_not_applicable {
            Some(why) => format!("not applicable: {why}"),
            None => maybe_number(t.estimated_cost, ""),
        }
    )
}

/// The id of the eval's section in the page: `eval-<index>`, the eval's position in the report's
/// tests from 0.
pub(super) fn test_anchor(index: usize) -> String {
    format!("eval-{index}")
}

/// The suite's mode as the page's header writes it: the runs' mode (`scripted`, `replay`,
/// `live`, `mixed`), then `(asked for live)` when the command asked for another.
pub(super) fn mode_text(report: &crate::report::SuiteReport) -> String {
    match report.requested_mode.as_deref() {
        Some(asked) if asked != report.mode => format!("{} (asked for {asked})", report.mode),
        _ => report.mode.clone(),
    }
}
