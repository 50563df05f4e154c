//! A baseline/treatment comparison in the artifacts: [`ComparisonRecord`], computed from the
//! two sides' [`RunRecord`]s (so the JSON, the JUnit, the HTML page and the terminal summary all
//! read one set of numbers) plus what only the test process knows (the files each side wrote,
//! the criteria's verdicts).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::RunRecord;
use crate::result::StopReason;

/// The label of a comparison's baseline run (`RunRecord::label`).
pub const BASELINE: &str = "baseline";
/// The label of a comparison's treatment run (`RunRecord::label`).
pub const TREATMENT: &str = "treatment";

/// One `ctx.compare(&baseline, &treatment, prompt)`: the same prompt given to two eval
/// configurations in their own working directories, what each did, what differs, and the
/// verdicts of the criteria applied to both (`Comparison::check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparisonRecord {
    /// The prompt both sides were given (the first, for a conversation).
    pub prompt: String,
    /// What the baseline did.
    pub baseline: ComparisonSide,
    /// What the treatment did.
    pub treatment: ComparisonSide,
    /// Treatment minus baseline.
    pub differences: ComparisonDifferences,
    /// Each criterion the test applied to both sides, in order.
    #[serde(default)]
    pub criteria: Vec<CriterionRecord>,
    /// What makes the comparison doubtful, one line each: a side's session read the other
    /// side's inputs (a tool call named a path of its skill directories, agent files or
    /// instructions files), so a difference, or none, may not be the configurations' doing.
    /// Empty when nothing was seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The comparison in one line, as the runner's summary prints it: each side's outcome, tool
    /// calls, files written and tokens, then the criteria's verdicts, then the warnings
    /// (durations are in `duration_ms`, not here, so the line is the same for every replay of
    /// the same cassettes).
    pub summary: String,
}

/// What one side of a comparison did, from its run record (and its working directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparisonSide {
    /// The side's run: its number in the test's `runs`, from 1.
    pub run: u64,
    /// The run's `success`.
    pub success: bool,
    /// The run's `stop_reason`.
    pub stop_reason: StopReason,
    /// Tool calls (main agent and subagents).
    pub tool_calls: u64,
    /// Calls per tool name.
    pub tools: BTreeMap<String, u64>,
    /// Files the run created or changed in its working directory (paths relative to it, `/`
    /// separated, sorted): the directory's files after the run whose content differs from
    /// before it (a file the test put there and the run left alone is not listed).
    pub files_written: Vec<String>,
    /// Model calls.
    pub model_calls: u64,
    /// Input tokens; `null` when unknown (a replay of a cassette without recorded usage).
    pub input_tokens: Option<u64>,
    /// Output tokens; `null` when unknown.
    pub output_tokens: Option<u64>,
    /// Cost as the runtime reported it; `null` when no call reported one.
    pub reported_cost: Option<f64>,
    /// Premium requests as the runtime reported them; `null` when not reported.
    pub premium_requests: Option<f64>,
    /// The runner's estimate (its pricing table); `null` when not priced.
    pub estimated_cost: Option<f64>,
    /// Whole run, milliseconds.
    pub duration_ms: u64,
}

/// Treatment minus baseline. A difference of two values of which one is unknown is `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparisonDifferences {
    /// Whether `success` or `stop_reason` differ.
    pub outcome_changed: bool,
    /// Tool calls.
    pub tool_calls: i64,
    /// Tools only the baseline called.
    pub tools_only_in_baseline: Vec<String>,
    /// Tools only the treatment called.
    pub tools_only_in_treatment: Vec<String>,
    /// Files only the baseline wrote.
    pub files_only_in_baseline: Vec<String>,
    /// Files only the treatment wrote.
    pub files_only_in_treatment: Vec<String>,
    /// Model calls.
    pub model_calls: i64,
    /// Input tokens.
    pub input_tokens: Option<i64>,
    /// Output tokens.
    pub output_tokens: Option<i64>,
    /// Reported cost.
    pub reported_cost: Option<f64>,
    /// Premium requests.
    pub premium_requests: Option<f64>,
    /// Estimated cost.
    pub estimated_cost: Option<f64>,
    /// Duration, milliseconds.
    pub duration_ms: i64,
}

/// One criterion applied to both sides (`Comparison::check(name, |result| ...)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionRecord {
    /// The name the test gave it.
    pub name: String,
    /// Whether the baseline met it.
    pub baseline: bool,
    /// Whether the treatment met it.
    pub treatment: bool,
}

impl ComparisonSide {
    /// The side as `run` (its number in the test's runs, from 1) shows it, with the files it
    /// wrote.
    pub fn of(number: u64, run: &RunRecord, files_written: Vec<String>) -> Self {
        let mut tools: BTreeMap<String, u64> = BTreeMap::new();
        for call in &run.tool_calls {
            *tools.entry(call.name.clone()).or_default() += 1;
        }
        let known = run.totals.tokens.is_reported();
        ComparisonSide {
            run: number,
            success: run.success,
            stop_reason: run.stop_reason,
            tool_calls: run.totals.tool_calls,
            tools,
            files_written,
            model_calls: run.totals.model_calls,
            input_tokens: known.then_some(run.totals.input_tokens),
            output_tokens: known.then_some(run.totals.output_tokens),
            reported_cost: run.totals.cost,
            premium_requests: run.totals.premium_requests,
            estimated_cost: run.totals.estimated_cost,
            duration_ms: run.duration_ms,
        }
    }

    /// `completed, 2 tool calls (create 1, skill 1), 1 file written, 350 tokens` (no duration:
    /// the line is the same for every replay of the same cassettes).
    fn line(&self) -> String {
        let mut parts = vec![if self.success {
            self.stop_reason.to_string()
        } else {
            format!("{} (not successful)", self.stop_reason)
        }];
        let tools: Vec<String> = self.tools.iter().map(|(t, n)| format!("{t} {n}")).collect();
        parts.push(if tools.is_empty() {
            count(self.tool_calls, "tool call")
        } else {
            format!(
                "{} ({})",
                count(self.tool_calls, "tool call"),
                tools.join(", ")
            )
        });
        parts.push(format!(
            "{} written",
            count(self.files_written.len() as u64, "file")
        ));
        parts.push(match (self.input_tokens, self.output_tokens) {
            (Some(i), Some(o)) => format!("{} tokens", i + o),
            _ => "tokens unknown".to_owned(),
        });
        parts.join(", ")
    }
}

fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn minus_u64(a: u64, b: u64) -> i64 {
    a as i64 - b as i64
}

fn minus_opt_u64(a: Option<u64>, b: Option<u64>) -> Option<i64> {
    Some(minus_u64(a?, b?))
}

fn minus_opt_f64(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    // Rounded like the amounts themselves, so 0.3 - 0.1 reads 0.2.
    Some(((a? - b?) * 1e9).round() / 1e9)
}

fn only_in<'a>(a: impl Iterator<Item = &'a String>, b: &[&String]) -> Vec<String> {
    a.filter(|x| !b.contains(x)).cloned().collect()
}

impl ComparisonDifferences {
    /// `treatment` minus `baseline`.
    pub fn between(baseline: &ComparisonSide, treatment: &ComparisonSide) -> Self {
        let base_tools: Vec<&String> = baseline.tools.keys().collect();
        let treat_tools: Vec<&String> = treatment.tools.keys().collect();
        let base_files: Vec<&String> = baseline.files_written.iter().collect();
        let treat_files: Vec<&String> = treatment.files_written.iter().collect();
        ComparisonDifferences {
            outcome_changed: baseline.success != treatment.success
                || baseline.stop_reason != treatment.stop_reason,
            tool_calls: minus_u64(treatment.tool_calls, baseline.tool_calls),
            tools_only_in_baseline: only_in(baseline.tools.keys(), &treat_tools),
            tools_only_in_treatment: only_in(treatment.tools.keys(), &base_tools),
            files_only_in_baseline: only_in(baseline.files_written.iter(), &treat_files),
            files_only_in_treatment: only_in(treatment.files_written.iter(), &base_files),
            model_calls: minus_u64(treatment.model_calls, baseline.model_calls),
            input_tokens: minus_opt_u64(treatment.input_tokens, baseline.input_tokens),
            output_tokens: minus_opt_u64(treatment.output_tokens, baseline.output_tokens),
            reported_cost: minus_opt_f64(treatment.reported_cost, baseline.reported_cost),
            premium_requests: minus_opt_f64(treatment.premium_requests, baseline.premium_requests),
            estimated_cost: minus_opt_f64(treatment.estimated_cost, baseline.estimated_cost),
            duration_ms: minus_u64(treatment.duration_ms, baseline.duration_ms),
        }
    }
}

impl ComparisonRecord {
    /// The comparison of `baseline` (run number `baseline_run`, from 1) and `treatment`, with
    /// the files each wrote; no criterion yet.
    pub fn new(
        prompt: &str,
        (baseline_run, baseline, baseline_files): (u64, &RunRecord, Vec<String>),
        (treatment_run, treatment, treatment_files): (u64, &RunRecord, Vec<String>),
    ) -> Self {
        let mut record = ComparisonRecord {
            prompt: prompt.to_owned(),
            baseline: ComparisonSide::of(baseline_run, baseline, baseline_files),
            treatment: ComparisonSide::of(treatment_run, treatment, treatment_files),
            differences: ComparisonDifferences::default(),
            criteria: Vec::new(),
            warnings: Vec::new(),
            summary: String::new(),
        };
        record.update();
        record
    }

    /// Add warnings (and refresh the summary).
    pub fn add_warnings(&mut self, warnings: impl IntoIterator<Item = String>) {
        self.warnings.extend(warnings);
        self.update();
    }

    /// Add a criterion's verdicts (and refresh the summary).
    pub fn add_criterion(&mut self, criterion: CriterionRecord) {
        self.criteria.push(criterion);
        self.update();
    }

    /// Read both sides' numbers again from `runs` (the test's runs, which the runner has priced
    /// since: `estimated_cost`), keeping the files written, then recompute the differences and
    /// the summary. A side whose run number is not in `runs` is left as it was.
    pub fn refresh(&mut self, runs: &[RunRecord]) {
        for side in [&mut self.baseline, &mut self.treatment] {
            if let Some(run) = (side.run as usize)
                .checked_sub(1)
                .and_then(|index| runs.get(index))
            {
                let files = std::mem::take(&mut side.files_written);
                *side = ComparisonSide::of(side.run, run, files);
            }
        }
        self.update();
    }

    /// The differences in one line, treatment minus baseline, e.g. `outcome same; tool calls
    /// +1 (tools only in treatment: skill); files written: none differ; model calls +1; tokens
    /// +210 input, +15 output; estimated cost +0.0012`. Unknown values say `unknown`. Durations
    /// are left out (they differ from one replay to the next; `differences.duration_ms` has
    /// them), so the line is the same for every replay of the same cassettes.
    pub fn differences_line(&self) -> String {
        let d = &self.differences;
        let signed = |n: i64| format!("{n:+}");
        let amount = |v: Option<f64>| match v {
            Some(v) if v >= 0.0 => format!("+{}", crate::cost::format_amount(v)),
            Some(v) => format!("-{}", crate::cost::format_amount(-v)),
            None => "unknown".to_owned(),
        };
        let only = |what: &str, baseline: &[String], treatment: &[String]| {
            let mut parts = Vec::new();
            if !baseline.is_empty() {
                parts.push(format!("only in baseline: {}", baseline.join(", ")));
            }
            if !treatment.is_empty() {
                parts.push(format!("only in treatment: {}", treatment.join(", ")));
            }
            if parts.is_empty() {
                format!("{what}: none differ")
            } else {
                format!("{what} {}", parts.join("; "))
            }
        };
        let tokens = match (d.input_tokens, d.output_tokens) {
            (Some(i), Some(o)) => format!("tokens {} input, {} output", signed(i), signed(o)),
            _ => "tokens unknown".to_owned(),
        };
        [
            format!(
                "outcome {}",
                if d.outcome_changed { "changed" } else { "same" }
            ),
            format!(
                "tool calls {} ({})",
                signed(d.tool_calls),
                only(
                    "tools",
                    &d.tools_only_in_baseline,
                    &d.tools_only_in_treatment
                )
            ),
            only(
                "files written",
                &d.files_only_in_baseline,
                &d.files_only_in_treatment,
            ),
            format!("model calls {}", signed(d.model_calls)),
            tokens,
            format!("estimated cost {}", amount(d.estimated_cost)),
        ]
        .join("; ")
    }

    fn update(&mut self) {
        self.differences = ComparisonDifferences::between(&self.baseline, &self.treatment);
        self.summary = self.summary_line();
    }

    /// `baseline (run 1): completed, 0 tool calls, ...; treatment (run 2): ...; criteria: NAME
    /// baseline no, treatment yes`, then `; warnings: ...` when there are any.
    fn summary_line(&self) -> String {
        let mut out = format!(
            "baseline (run {}): {}; treatment (run {}): {}",
            self.baseline.run,
            self.baseline.line(),
            self.treatment.run,
            self.treatment.line()
        );
        if !self.criteria.is_empty() {
            let yes = |met: bool| if met { "yes" } else { "no" };
            let verdicts: Vec<String> = self
                .criteria
                .iter()
                .map(|c| {
                    format!(
                        "{}: baseline {}, treatment {}",
                        c.name,
                        yes(c.baseline),
                        yes(c.treatment)
                    )
                })
                .collect();
            out.push_str(&format!("; criteria: {}", verdicts.join("; ")));
        }
        if !self.warnings.is_empty() {
            out.push_str(&format!("; warnings: {}", self.warnings.join("; ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::ToolCall;
    use crate::report::TokenUsage;

    fn call(name: &str) -> ToolCall {
        ToolCall {
            success: Some(true),
            completed: true,
            ..ToolCall::started(format!("id-{name}"), name, serde_json::json!({}), None)
        }
    }

    fn run(
        stop: StopReason,
        tools: &[&str],
        input: u64,
        output: u64,
        duration_ms: u64,
    ) -> RunRecord {
        let mut run = crate::report::tests::run(stop, input);
        run.tool_calls = tools.iter().map(|t| call(t)).collect();
        run.totals.tool_calls = tools.len() as u64;
        run.totals.output_tokens = output;
        run.totals.model_calls = 1 + tools.len() as u64;
        run.totals.cost = Some(0.1);
        run.totals.premium_requests = Some(1.0);
        run.duration_ms = duration_ms;
        run
    }

    #[test]
    fn differences_are_treatment_minus_baseline() {
        let baseline = run(StopReason::Completed, &["view"], 1000, 20, 1500);
        let mut treatment = run(
            StopReason::Completed,
            &["skill", "create", "create"],
            1200,
            35,
            2100,
        );
        treatment.totals.cost = Some(0.3);
        let record = ComparisonRecord::new(
            "Announce 2.4.1",
            (1, &baseline, vec!["a.txt".into(), "both.txt".into()]),
            (2, &treatment, vec!["both.txt".into(), "notes.md".into()]),
        );
        let d = &record.differences;
        assert!(!d.outcome_changed);
        assert_eq!(d.tool_calls, 2);
        assert_eq!(d.model_calls, 2);
        assert_eq!(d.tools_only_in_baseline, ["view"]);
        assert_eq!(d.tools_only_in_treatment, ["create", "skill"]);
        assert_eq!(d.files_only_in_baseline, ["a.txt"]);
        assert_eq!(d.files_only_in_treatment, ["notes.md"]);
        assert_eq!(d.input_tokens, Some(200));
        assert_eq!(d.output_tokens, Some(15));
        assert_eq!(d.reported_cost, Some(0.2));
        assert_eq!(d.premium_requests, Some(0.0));
        assert_eq!(d.estimated_cost, None, "not priced yet");
        assert_eq!(d.duration_ms, 600);
        assert_eq!(record.treatment.tools["create"], 2);
        assert_eq!(record.baseline.run, 1);
        assert_eq!(record.treatment.run, 2);
        assert_eq!(
            record.summary,
            "baseline (run 1): completed, 1 tool call (view 1), 2 files written, 1020 tokens; \
             treatment (run 2): completed, 3 tool calls (create 2, skill 1), 2 files written, 1235 tokens"
        );
    }

    #[test]
    fn the_differences_line_says_each_difference() {
        let baseline = run(StopReason::Completed, &["view"], 1000, 20, 1500);
        let mut treatment = run(StopReason::Completed, &["skill", "view"], 1200, 15, 1100);
        treatment.totals.estimated_cost = Some(0.002);
        let mut runs = vec![baseline, treatment];
        runs[0].totals.estimated_cost = Some(0.0015);
        let mut record = ComparisonRecord::new(
            "p",
            (1, &runs[0], vec!["a.txt".into()]),
            (2, &runs[1], vec!["a.txt".into()]),
        );
        record.refresh(&runs);
        assert_eq!(
            record.differences_line(),
            "outcome same; tool calls +1 (tools only in treatment: skill); files written: none differ; \
             model calls +1; tokens +200 input, -5 output; estimated cost +0.0005"
        );
    }

    #[test]
    fn an_unknown_side_makes_the_difference_unknown_and_outcomes_are_compared() {
        let baseline = run(StopReason::Completed, &[], 1000, 20, 1000);
        let mut treatment = run(StopReason::Timeout, &[], 0, 0, 900);
        treatment.success = false;
        treatment.totals.tokens = TokenUsage::Unknown;
        let mut record =
            ComparisonRecord::new("p", (1, &baseline, vec![]), (2, &treatment, vec![]));
        assert!(record.differences.outcome_changed);
        assert_eq!(record.treatment.input_tokens, None);
        assert_eq!(record.differences.input_tokens, None);
        assert_eq!(record.differences.output_tokens, None);
        assert_eq!(record.differences.duration_ms, -100);
        assert!(
            record.summary.contains("treatment (run 2): timeout (not successful), 0 tool calls, 0 files written, tokens unknown"),
            "{}",
            record.summary
        );
        record.add_criterion(CriterionRecord {
            name: "answers".into(),
            baseline: true,
            treatment: false,
        });
        assert!(
            record
                .summary
                .ends_with("; criteria: answers: baseline yes, treatment no"),
            "{}",
            record.summary
        );
    }

    #[test]
    fn refresh_reads_the_priced_runs_and_keeps_the_files() {
        let mut runs = vec![
            run(StopReason::Completed, &[], 1000, 20, 1000),
            run(StopReason::Completed, &["skill"], 1500, 40, 1000),
        ];
        let mut record =
            ComparisonRecord::new("p", (1, &runs[0], vec!["x".into()]), (2, &runs[1], vec![]));
        runs[0].totals.estimated_cost = Some(0.01);
        runs[1].totals.estimated_cost = Some(0.025);
        record.refresh(&runs);
        assert_eq!(record.baseline.estimated_cost, Some(0.01));
        assert_eq!(record.differences.estimated_cost, Some(0.015));
        assert_eq!(record.baseline.files_written, ["x"]);
        assert_eq!(record.differences.files_only_in_baseline, ["x"]);
    }
}
