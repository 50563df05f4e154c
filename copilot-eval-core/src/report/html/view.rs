//! What the HTML template shows beside the report's own records, computed from them (never
//! from another source): the summary numbers, the chart's bars, and each run's timeline with
//! the tool calls nested under the turn (or the subagent dispatch) that requested them. A run
//! is its record as the JSON writes it ([`RunView`] flattens it); the template formats its
//! fields with the filters of `text`.

use std::collections::BTreeSet;

use serde::Serialize;

use super::text::{duration, maybe_number, pretty, test_anchor};
use crate::evidence::denial::DenialKind;
use crate::evidence::subagents::SubagentInvocation;
use crate::evidence::{Role, ToolCall};
use crate::report::{CostTotals, Outcome, RunRecord, SuiteReport, TestRecord};

/// The whole page.
#[derive(Debug, Serialize)]
pub(super) struct Page<'a> {
    pub title: String,
    /// The Verdicts section, the page's first (with trials, models, comparisons or an
    /// ablation).
    pub verdicts: Option<super::verdicts::VerdictsView>,
    pub summary: Summary,
    pub chart: Chart,
    /// One row per eval run in trials (`--trials N`), before the evals.
    pub trials: Vec<super::trials::TrialView>,
    /// One table per eval of a model matrix, its models side by side.
    pub matrix: Vec<super::matrix::MatrixView>,
    /// The Skill triggers table's rows (`ctx.expect_trigger`), per skill and model.
    pub triggers: Vec<super::triggers::TriggerRow>,
    /// The Skill lift table's rows (`--ablate`), per eval and per skill.
    pub lift: Vec<super::lift::LiftRow>,
    /// What the ablated side went without: `skills`, `skills, mcp`.
    pub lift_without: String,
    /// The Criteria section: whether each criterion of the comparisons, ablations and model
    /// matrices discriminates.
    pub discrimination: Option<super::discrimination::DiscriminationView>,
    pub tests: Vec<TestView<'a>>,
    /// The suite's provenance, folded under the header.
    pub provenance: Option<super::provenance::SuiteView>,
    /// The judges against a person's labels (`--judge-labels`).
    pub judge_labels: Option<super::judge::LabelsView>,
}

/// The numbers at the top.
#[derive(Debug, Serialize)]
pub(super) struct Summary {
    pub tests: u64,
    pub passed: u64,
    pub failed: u64,
    pub error: u64,
    pub not_run: u64,
    pub runs: u64,
    pub duration: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub tool_calls: u64,
    pub estimated_cost: String,
    pub reported_cost: String,
    pub premium_requests: String,
    pub unpriced_models: Vec<String>,
    pub mode: String,
    pub runtime: String,
    pub tool: String,
    pub started_at: String,
    pub pricing: Option<String>,
    pub cap_reached: Option<String>,
    pub partition: Option<String>,
    pub stop_reasons: Vec<(String, u64)>,
}

/// The inline SVG chart: one row per eval that ran, sorted by cost (highest first; unknown cost
/// last), each with a duration bar and a token bar scaled to the largest of its kind.
#[derive(Debug, Serialize)]
pub(super) struct Chart {
    pub width: u32,
    pub height: u32,
    pub label_width: u32,
    pub bar_width: u32,
    pub rows: Vec<ChartRow>,
}

/// One eval in the chart.
#[derive(Debug, Serialize)]
pub(super) struct ChartRow {
    pub anchor: String,
    pub name: String,
    /// The label the row shows: the name (shortened to 36 characters) and, for a trial,
    /// its `[trial 2/5]`.
    pub caption: String,
    pub outcome: &'static str,
    pub y: u32,
    pub duration_width: u32,
    pub tokens_width: u32,
    pub duration: String,
    /// The eval's input + output tokens, e.g. `240 tok`, or `tokens unknown`.
    pub tokens: String,
    pub cost: String,
}

/// One eval test.
#[derive(Debug, Serialize)]
pub(super) struct TestView<'a> {
    pub anchor: String,
    pub name: String,
    pub binary: String,
    pub test_id: String,
    pub outcome: &'static str,
    pub error_kind: Option<String>,
    pub duration: String,
    pub message: Option<String>,
    pub message_line: Option<String>,
    pub stop_reasons: Vec<String>,
    /// How many runs have incomplete evidence (`evidence_complete` false).
    pub incomplete_evidence_runs: usize,
    /// The eval's input + output tokens, e.g. `240 tokens`, or `tokens unknown`.
    pub tokens: String,
    pub cost: String,
    pub properties: Vec<(String, String)>,
    pub workdir: Option<String>,
    pub cassette: Option<String>,
    pub exit: Option<String>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub runs: Vec<RunView<'a>>,
    pub comparisons: Vec<super::compare::ComparisonView>,
    pub judges: Vec<super::judge::JudgeView>,
    /// The skill eval entry (`<skill folder> id <id>`), for a `skill_evals` test.
    pub skill_eval: Option<String>,
    /// Each expectation's verdict (`ctx.expect`), in order.
    pub expectations: Vec<crate::report::ExpectationRecord>,
    /// The eval's provenance and attempt, folded in its section.
    pub provenance: super::provenance::EvalView,
}

/// One eval run of a test: its record as the JSON writes it, its number in the test, and its
/// timeline.
#[derive(Debug, Serialize)]
pub(super) struct RunView<'a> {
    pub index: usize,
    #[serde(flatten)]
    pub record: &'a RunRecord,
    pub timeline: Vec<Entry<'a>>,
}

/// One step of a run's timeline: a message of the conversation with the tool calls it
/// requested, or the calls no message requested.
#[derive(Debug, Serialize)]
pub(super) struct Entry<'a> {
    pub kind: &'static str,
    pub text: &'a str,
    pub calls: Vec<CallView<'a>>,
}

/// One tool call as its record writes it, with its status and the subagent it dispatched (if
/// any) with that subagent's own calls.
#[derive(Debug, Serialize)]
pub(super) struct CallView<'a> {
    #[serde(flatten)]
    pub call: &'a ToolCall,
    /// `admitted`, `denied`, `failed` or `incomplete`.
    pub status: &'static str,
    /// For a denied call: `budget`, `guard`, `stop` (denied after the run stopped) or the
    /// permission layer that refused it (`permission_handler`, `auto_confirm`).
    pub denied_by: Option<String>,
    pub reason: Option<String>,
    pub subagent: Option<SubagentView<'a>>,
}

/// A subagent dispatch nested under its `task` call: its record, and its calls placed here.
#[derive(Debug, Serialize)]
pub(super) struct SubagentView<'a> {
    #[serde(flatten)]
    pub invocation: &'a SubagentInvocation,
    pub calls: Vec<CallView<'a>>,
}

impl<'a> Page<'a> {
    /// The page for `report` (already redacted by the caller).
    pub(super) fn of(report: &'a SuiteReport) -> Self {
        let currency = report
            .cost_control
            .as_ref()
            .map(|c| c.currency.clone())
            .unwrap_or_default();
        let cost = &report.totals.cost;
        let summary = Summary {
            tests: report.totals.tests,
            passed: report.totals.passed,
            failed: report.totals.failed,
            error: report.totals.error,
            not_run: report.totals.not_run,
            runs: report.totals.runs,
            duration: duration(report.duration_ms),
            input_tokens: report.totals.input_tokens,
            output_tokens: report.totals.output_tokens,
            tool_calls: report.totals.tool_calls,
            estimated_cost: maybe_number(cost.estimated_cost, &currency),
            reported_cost: maybe_number(cost.reported_cost, ""),
            premium_requests: maybe_number(cost.premium_requests, ""),
            unpriced_models: cost.unpriced_models.clone(),
            mode: super::text::mode_text(report),
            runtime: match (&report.runtime.version, &report.runtime.error) {
                (Some(version), _) => version.clone(),
                (None, Some(error)) => format!("none ({error})"),
                (None, None) => "unknown".to_owned(),
            },
            tool: format!("{} {}", report.tool.name, report.tool.version),
            started_at: report.started_at.clone(),
            pricing: report.cost_control.as_ref().map(|c| c.pricing.clone()),
            cap_reached: report
                .cost_control
                .as_ref()
                .and_then(|c| c.cap_reached.clone()),
            partition: report.partition.as_ref().map(ToString::to_string),
            stop_reasons: report
                .totals
                .stop_reasons
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        };
        Page {
            title: format!(
                "copilot-eval report: {} tests, {} passed, {} failed, {} errors, {} not run",
                summary.tests, summary.passed, summary.failed, summary.error, summary.not_run
            ),
            summary,
            verdicts: super::verdicts::VerdictsView::of(report),
            chart: Chart::of(&report.tests, &currency),
            trials: report
                .trial_summaries
                .iter()
                .map(|s| super::trials::TrialView::of(s, &report.tests))
                .collect(),
            matrix: report
                .model_matrix
                .iter()
                .map(|e| super::matrix::MatrixView::of(e, &currency))
                .collect(),
            triggers: super::triggers::TriggerRow::rows(&report.skill_triggers),
            judge_labels: (report.judge_labels.as_ref()).map(super::judge::LabelsView::of),
            provenance: report
                .provenance
                .as_ref()
                .map(super::provenance::SuiteView::of),
            lift: super::lift::LiftRow::rows(report.skill_lift.as_ref(), &currency),
            lift_without: (report.skill_lift.iter())
                .flat_map(|l| l.evals.first())
                .flat_map(|e| &e.ablated)
                .map(|kind| kind.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            discrimination: super::discrimination::DiscriminationView::of(
                report.discrimination.as_ref(),
            ),
            tests: report
                .tests
                .iter()
                .enumerate()
                .map(|(i, t)| TestView::of(i, t, &currency))
                .collect(),
        }
    }
}

/// The estimated cost of a test, else its reported cost, for sorting (unknown: `None`).
fn sort_cost(cost: Option<&CostTotals>) -> Option<f64> {
    cost.and_then(|c| c.estimated_cost.or(c.reported_cost))
}

fn cost_label(cost: Option<&CostTotals>, currency: &str) -> String {
    match cost {
        None => "unknown".to_owned(),
        // Only scripted runs (each counts 0): no price applies.
        Some(c) if c.not_applicable_runs > 0 && c.estimated_cost == Some(0.0) => {
            format!("not applicable: {}", crate::report::cost::SCRIPTED_MODEL)
        }
        Some(c) => match (c.estimated_cost, c.reported_cost) {
            (Some(e), _) => maybe_number(Some(e), currency),
            (None, Some(r)) => format!("{} reported", maybe_number(Some(r), "")),
            (None, None) => "unknown".to_owned(),
        },
    }
}

impl Chart {
    const ROW: u32 = 34;
    const TOP: u32 = 28;

    fn of(tests: &[TestRecord], currency: &str) -> Self {
        let mut ran: Vec<(usize, &TestRecord)> = tests
            .iter()
            .enumerate()
            .filter(|(_, t)| t.outcome != Outcome::NotRun)
            .collect();
        // Highest cost first; unknown cost after every known one; then by tokens, then by name.
        ran.sort_by(|(_, a), (_, b)| {
            let (ca, cb) = (sort_cost(a.cost.as_ref()), sort_cost(b.cost.as_ref()));
            let by_cost = match (ca, cb) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            by_cost
                .then_with(|| tokens(b).cmp(&tokens(a)))
                .then_with(|| a.name.cmp(&b.name))
        });
        let bar_width = 360;
        let max_ms = ran
            .iter()
            .map(|(_, t)| t.duration_ms)
            .max()
            .unwrap_or(0)
            .max(1);
        let max_tokens = ran.iter().map(|(_, t)| tokens(t)).max().unwrap_or(0).max(1);
        let scale = |v: u64, max: u64| ((v as f64 / max as f64) * f64::from(bar_width)) as u32;
        let rows: Vec<ChartRow> = ran
            .iter()
            .enumerate()
            .map(|(row, (i, t))| ChartRow {
                anchor: test_anchor(*i),
                name: t.name.clone(),
                caption: chart_label(t),
                outcome: t.outcome.as_str(),
                y: Self::TOP + row as u32 * Self::ROW,
                duration_width: scale(t.duration_ms, max_ms).max(1),
                tokens_width: scale(tokens(t), max_tokens),
                duration: duration(t.duration_ms),
                tokens: token_label(t, "tok"),
                cost: cost_label(t.cost.as_ref(), currency),
            })
            .collect();
        // Room for the longest text beside the bars, so the page never clips it: at most
        // 7 px per character of the 12 px font, plus the gaps.
        let widest = |text: fn(&ChartRow) -> usize| rows.iter().map(text).max().unwrap_or(0);
        let label_width = 16 + 7 * widest(|r| r.caption.chars().count()) as u32;
        let value_width =
            16 + 7 * widest(|r| r.tokens.chars().count() + 3 + r.cost.chars().count()) as u32;
        Chart {
            width: label_width + bar_width + value_width.max(200),
            height: Self::TOP + rows.len() as u32 * Self::ROW + 8,
            label_width,
            bar_width,
            rows,
        }
    }
}

/// A chart row's label: the name shortened to 36 characters, then the trial's `[trial 2/5]`.
fn chart_label(test: &TestRecord) -> String {
    let name = super::text::shorten(&test.name, 36);
    match test.trial {
        Some(trial) => format!("{name} {}", trial.label()),
        None => name,
    }
}

/// The test's known tokens (input + output): runs whose tokens are unknown count 0.
fn tokens(test: &TestRecord) -> u64 {
    test.runs
        .iter()
        .filter(|r| r.totals.tokens.is_reported())
        .map(|r| r.totals.input_tokens + r.totals.output_tokens)
        .sum()
}

/// The test's tokens as shown: `N <unit>`, or `tokens unknown` when a run's tokens are unknown
/// (a replay of a cassette without recorded usage), never a made-up 0.
fn token_label(test: &TestRecord, unit: &str) -> String {
    if test.runs.iter().any(|r| !r.totals.tokens.is_reported()) {
        "tokens unknown".to_owned()
    } else {
        format!("{} {unit}", tokens(test))
    }
}

impl<'a> TestView<'a> {
    fn of(index: usize, test: &'a TestRecord, currency: &str) -> Self {
        let mut stop_reasons: Vec<String> = test
            .runs
            .iter()
            .map(|r| r.stop_reason.to_string())
            .collect();
        stop_reasons.dedup();
        TestView {
            anchor: test_anchor(index),
            name: match test.trial {
                Some(trial) => format!("{} {}", test.name, trial.label()),
                None => test.name.clone(),
            },
            binary: test.binary.clone(),
            test_id: test.test_id.clone(),
            outcome: test.outcome.as_str(),
            error_kind: test
                .error_kind
                .and_then(|k| serde_json::to_value(k).ok())
                .and_then(|v| v.as_str().map(str::to_owned)),
            duration: duration(test.duration_ms),
            message: test.message.clone(),
            message_line: test
                .message
                .as_deref()
                .and_then(|m| m.lines().find(|l| !l.trim().is_empty()))
                .map(str::to_owned),
            stop_reasons,
            incomplete_evidence_runs: test.runs.iter().filter(|r| !r.evidence_complete).count(),
            tokens: token_label(test, "tokens"),
            cost: if test.outcome == Outcome::NotRun {
                "not run".to_owned()
            } else {
                cost_label(test.cost.as_ref(), currency)
            },
            properties: test
                .properties
                .iter()
                .map(|p| (p.name.clone(), pretty(&p.value)))
                .collect(),
            workdir: test.workdir.clone(),
            cassette: test.cassette.clone(),
            exit: test.exit.as_ref().map(|e| {
                let mut parts = Vec::new();
                if let Some(code) = e.code {
                    parts.push(format!("exit code {code}"));
                }
                if let Some(signal) = e.signal {
                    parts.push(format!("signal {signal}"));
                }
                if e.killed_by_runner {
                    parts.push("killed by the runner".to_owned());
                }
                parts.join(", ")
            }),
            stdout: test
                .output
                .as_ref()
                .map(|o| o.stdout.clone())
                .filter(|s| !s.is_empty()),
            stderr: test
                .output
                .as_ref()
                .map(|o| o.stderr.clone())
                .filter(|s| !s.is_empty()),
            runs: test
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| RunView::of(i + 1, r))
                .collect(),
            comparisons: test
                .comparisons
                .iter()
                .enumerate()
                .map(|(i, c)| super::compare::ComparisonView::of(i + 1, c))
                .collect(),
            judges: test
                .judges
                .iter()
                .enumerate()
                .map(|(i, j)| super::judge::JudgeView::of(i + 1, j, &test.runs))
                .collect(),
            skill_eval: (test.skill_eval.as_ref()).map(|s| format!("{} id {}", s.skill, s.id)),
            expectations: test.expectations.clone(),
            provenance: super::provenance::EvalView::of(test),
        }
    }
}

impl<'a> RunView<'a> {
    fn of(index: usize, run: &'a RunRecord) -> Self {
        let mut placed = BTreeSet::new();
        let mut timeline: Vec<Entry> = run
            .turns
            .iter()
            .map(|turn| Entry {
                kind: match turn.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                },
                text: &turn.content,
                calls: turn
                    .tool_call_ids
                    .iter()
                    .filter_map(|id| run.tool_calls.iter().find(|c| &c.id == id))
                    .map(|c| CallView::of(c, run, &mut placed, 0))
                    .collect(),
            })
            .collect();
        if !run.turns.iter().any(|t| t.role == Role::User) {
            timeline.insert(
                0,
                Entry {
                    kind: "user",
                    text: run.prompts.first().map_or("", |p| p.text.as_str()),
                    calls: Vec::new(),
                },
            );
        }
        // Root-agent calls no message named (and subagent calls whose dispatch is unknown).
        let rest: Vec<CallView> = run
            .tool_calls
            .iter()
            .filter(|c| c.agent_id.is_none() || !dispatched(run, c.agent_id.as_deref()))
            .filter(|c| !placed.contains(&c.id))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|c| CallView::of(c, run, &mut placed, 0))
            .collect();
        if !rest.is_empty() {
            timeline.push(Entry {
                kind: "calls",
                text: "",
                calls: rest,
            });
        }
        RunView {
            index,
            record: run,
            timeline,
        }
    }
}

/// Whether some subagent dispatch of `run` has this agent id (its calls are then shown nested
/// under the dispatch).
fn dispatched(run: &RunRecord, agent: Option<&str>) -> bool {
    run.subagent_invocations
        .iter()
        .any(|s| s.agent_id.as_deref() == agent && s.dispatch_tool_call_id.is_some())
}

/// How deep subagents may nest in the page (a guard against a malformed record that names itself
/// as its own parent).
const MAX_DEPTH: usize = 8;

impl<'a> CallView<'a> {
    pub(super) fn of(
        call: &'a ToolCall,
        run: &'a RunRecord,
        placed: &mut BTreeSet<String>,
        depth: usize,
    ) -> Self {
        placed.insert(call.id.clone());
        let permission_refused = call.permission.as_ref().filter(|p| !p.approved);
        let (status, denied_by, reason) = match (&call.denied, permission_refused) {
            (Some(denial), _) => (
                "denied",
                denied_by(denial.kind).map(str::to_owned),
                Some(denial.reason.clone()),
            ),
            (None, Some(p)) => (
                "denied",
                Some(p.by.clone()),
                p.feedback.clone().or_else(|| p.outcome.clone()),
            ),
            (None, None) if !call.completed => ("incomplete", None, None),
            (None, None) if call.success == Some(false) => ("failed", None, None),
            (None, None) => ("admitted", None, None),
        };
        let subagent = (depth < MAX_DEPTH)
            .then(|| {
                run.subagent_invocations
                    .iter()
                    .find(|s| s.dispatch_tool_call_id.as_deref() == Some(call.id.as_str()))
            })
            .flatten()
            .map(|invocation| {
                let calls = match invocation.agent_id.as_deref() {
                    Some(agent) => run
                        .tool_calls
                        .iter()
                        .filter(|c| c.agent_id.as_deref() == Some(agent))
                        .filter(|c| !placed.contains(&c.id))
                        .collect::<Vec<_>>(),
                    None => Vec::new(),
                };
                SubagentView {
                    invocation,
                    calls: calls
                        .into_iter()
                        .map(|c| CallView::of(c, run, placed, depth + 1))
                        .collect(),
                }
            });
        CallView {
            call,
            status,
            denied_by,
            reason,
            subagent,
        }
    }
}

/// Who denied a call, from the kind its denial records: `budget` (the call past
/// `max_tool_calls`), `stop` (a call after the run stopped), `guard` (a pre-tool guard's deny),
/// `guard failure` (a guard failed on the call), `guard ask, no permission layer` (a guard's ask
/// no one could answer); nothing for a denial read from a file that recorded no kind.
fn denied_by(kind: DenialKind) -> Option<&'static str> {
    Some(match kind {
        DenialKind::Budget => "budget",
        DenialKind::Stopped => "stop",
        DenialKind::Guard => "guard",
        DenialKind::GuardFailed => "guard failure",
        DenialKind::UnansweredAsk => "guard ask, no permission layer",
        DenialKind::Unrecorded => return None,
    })
}
