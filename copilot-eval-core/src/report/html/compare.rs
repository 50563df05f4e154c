//! What the page shows of a comparison (`ctx.compare`): one table per comparison, baseline and
//! treatment side by side with the difference, computed from the test's own
//! [`ComparisonRecord`]s (never from another source).

use serde::Serialize;

use super::text::duration;
use crate::cost::format_amount;
use crate::report::{ComparisonRecord, ComparisonSide};

/// One comparison of a test.
#[derive(Debug, Serialize)]
pub(super) struct ComparisonView {
    /// From 1, in the test's order.
    pub number: usize,
    pub prompt: String,
    pub baseline_run: u64,
    pub treatment_run: u64,
    pub rows: Vec<CompareRow>,
    pub criteria: Vec<CriterionView>,
    /// The comparison's warnings (a side read the other's inputs).
    pub warnings: Vec<String>,
    pub summary: String,
}

/// One measure: each side's value and the difference (treatment minus baseline).
#[derive(Debug, Serialize)]
pub(super) struct CompareRow {
    pub what: &'static str,
    pub baseline: String,
    pub treatment: String,
    pub difference: String,
    /// Whether the two sides differ on it.
    pub changed: bool,
}

/// One criterion: `yes` / `no` per side, and `improved`, `regressed` or `same`.
#[derive(Debug, Serialize)]
pub(super) struct CriterionView {
    pub name: String,
    pub baseline: &'static str,
    pub treatment: &'static str,
    pub direction: &'static str,
}

fn opt_amount(value: Option<f64>) -> String {
    value.map(format_amount).unwrap_or_else(|| "unknown".into())
}

fn signed_amount(value: Option<f64>) -> String {
    match value {
        Some(v) if v >= 0.0 => format!("+{}", format_amount(v)),
        Some(v) => format!("-{}", format_amount(-v)),
        None => "unknown".into(),
    }
}

fn tokens(side: &ComparisonSide) -> String {
    match (side.input_tokens, side.output_tokens) {
        (Some(i), Some(o)) => format!("{i} input / {o} output"),
        _ => "unknown".into(),
    }
}

fn tools(side: &ComparisonSide) -> String {
    let named: Vec<String> = side
        .tools
        .iter()
        .map(|(t, n)| format!("{t} ×{n}"))
        .collect();
    if named.is_empty() {
        side.tool_calls.to_string()
    } else {
        format!("{} ({})", side.tool_calls, named.join(", "))
    }
}

fn files(side: &ComparisonSide) -> String {
    if side.files_written.is_empty() {
        "none".into()
    } else {
        side.files_written.join(", ")
    }
}

fn only(baseline: &[String], treatment: &[String]) -> String {
    let mut parts = Vec::new();
    if !baseline.is_empty() {
        parts.push(format!("only baseline: {}", baseline.join(", ")));
    }
    if !treatment.is_empty() {
        parts.push(format!("only treatment: {}", treatment.join(", ")));
    }
    if parts.is_empty() {
        "same".into()
    } else {
        parts.join("; ")
    }
}

fn outcome(side: &ComparisonSide) -> String {
    if side.success {
        side.stop_reason.to_string()
    } else {
        format!("{} (not successful)", side.stop_reason)
    }
}

impl ComparisonView {
    pub(super) fn of(number: usize, c: &ComparisonRecord) -> Self {
        let (b, t, d) = (&c.baseline, &c.treatment, &c.differences);
        let row = |what, baseline: String, treatment: String, difference: String| CompareRow {
            what,
            changed: baseline != treatment,
            baseline,
            treatment,
            difference,
        };
        let token_difference = match (d.input_tokens, d.output_tokens) {
            (Some(i), Some(o)) => format!("{i:+} input / {o:+} output"),
            _ => "unknown".into(),
        };
        let rows = vec![
            row(
                "outcome",
                outcome(b),
                outcome(t),
                if d.outcome_changed { "changed" } else { "same" }.into(),
            ),
            row(
                "tool calls",
                tools(b),
                tools(t),
                format!(
                    "{:+} ({})",
                    d.tool_calls,
                    only(&d.tools_only_in_baseline, &d.tools_only_in_treatment)
                ),
            ),
            row(
                "files written",
                files(b),
                files(t),
                only(&d.files_only_in_baseline, &d.files_only_in_treatment),
            ),
            row(
                "model calls",
                b.model_calls.to_string(),
                t.model_calls.to_string(),
                format!("{:+}", d.model_calls),
            ),
            row("tokens", tokens(b), tokens(t), token_difference),
            row(
                "estimated cost",
                opt_amount(b.estimated_cost),
                opt_amount(t.estimated_cost),
                signed_amount(d.estimated_cost),
            ),
            row(
                "reported cost",
                opt_amount(b.reported_cost),
                opt_amount(t.reported_cost),
                signed_amount(d.reported_cost),
            ),
            row(
                "premium requests",
                opt_amount(b.premium_requests),
                opt_amount(t.premium_requests),
                signed_amount(d.premium_requests),
            ),
            row(
                "duration",
                duration(b.duration_ms),
                duration(t.duration_ms),
                format!("{:+.1} s", d.duration_ms as f64 / 1000.0),
            ),
        ];
        let yes = |met: bool| if met { "yes" } else { "no" };
        ComparisonView {
            number,
            prompt: c.prompt.clone(),
            baseline_run: b.run,
            treatment_run: t.run,
            rows,
            criteria: c
                .criteria
                .iter()
                .map(|k| CriterionView {
                    name: k.name.clone(),
                    baseline: yes(k.baseline),
                    treatment: yes(k.treatment),
                    direction: match (k.baseline, k.treatment) {
                        (false, true) => "improved",
                        (true, false) => "regressed",
                        _ => "same",
                    },
                })
                .collect(),
            warnings: c.warnings.clone(),
            summary: c.summary.clone(),
        }
    }
}
