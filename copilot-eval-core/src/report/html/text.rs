//! How the page writes numbers, durations and texts: `unknown` for what is not known (never 0),
//! and which texts are folded.

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
pub(super) fn mcp_server_line(m: &crate::evidence::mcp::McpServerState) -> String {
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
