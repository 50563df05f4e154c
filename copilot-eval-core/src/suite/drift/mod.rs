//! `cargo copilot-eval drift`: what changes when the runtime pin moves.
//!
//! [`run_drift`] builds and lists the selected evals once, runs them twice under `--replay` (same
//! machine, same cassettes): first with the runtime that resolves without
//! `COPILOT_EVAL_RUNTIME_VERSION` (the pinned one, or `COPILOT_EVAL_RUNTIME_PATH` /
//! `COPILOT_CLI_PATH` when set), then with the installed runtime of the candidate version. Both
//! are ordinary suite runs ([`run_suite`](super::run_suite)); [`compare`] pairs their records per
//! eval.
//!
//! An eval **drifts** when its outcome or the stop reason of one of its runs differs between the
//! two versions. For a drifting eval the report names the first difference ([`Difference`]):
//! - when the candidate's run ended in `replay_mismatch`, from the run's typed replay diagnosis
//!   (its record's `replay_diagnosis`, [`crate::cassette::ReplayMismatch`]; [`classify_mismatch`];
//!   a results file without it: `other`, with the error's first line): the recorded conversation
//!   that matched furthest, and where the request departs from it, classified as a changed
//!   system prompt, tool result, tool set (a recorded tool the runtime no longer has),
//!   notification (`<system_notification>` text), agent id, a new or a missing model request,
//!   else `other` with the diagnosis;
//! - otherwise from the two runs' evidence ([`first_evidence_difference`]): the first field of the
//!   run records that differs once paths of the working directory, durations and the spelling of
//!   agent ids (numbered per run by their shape) are set aside, e.g.
//!   `runs[0].subagent_invocations[0].cancelled: false -> true`;
//! - else (the runs agree) the candidate's failure message, as `other`.
//!
//! The JSON report (`--json`) is [`DriftReport`]; its JSON Schema is [`json_schema`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{SuiteOptions, exit_code, list};
use crate::harness::Mode;
use crate::report::{Outcome, RuntimeInfo, SuiteReport, TestRecord};
use crate::result::StopReason;
use crate::runtime;

/// The version of the drift report's shape.
pub const DRIFT_SCHEMA_VERSION: &str = "1";

/// What `drift` was asked to do.
#[derive(Debug, Clone)]
pub struct DriftOptions {
    /// The selection, filters and settings of both suite runs (`mode` is forced to `replay`,
    /// `no_fail_fast` to `true`, `json`/`junit`/`runtime` are ignored). With `trials` N > 1,
    /// each trial of each eval is replayed and compared on its own (an eval's trial cassettes,
    /// else its one cassette in every trial).
    pub suite: SuiteOptions,
    /// The runtime version to compare with the pinned one (installed with
    /// `runtime install --version X`).
    pub version: String,
    /// Where to write the JSON report ([`DriftReport`]), if anywhere.
    pub json: Option<PathBuf>,
}

/// The drift report: both runtimes, one entry per eval, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftReport {
    /// [`DRIFT_SCHEMA_VERSION`].
    pub schema_version: String,
    /// The baseline runtime (the pinned one unless `COPILOT_EVAL_RUNTIME_PATH` or
    /// `COPILOT_CLI_PATH` names another), as the first suite run recorded it.
    pub pinned: RuntimeInfo,
    /// The candidate runtime (`--runtime-version X`), as the second suite run recorded it.
    pub candidate: RuntimeInfo,
    /// One line for people, e.g. `1 of 4 evals drift; 1 by changed evidence`.
    pub summary: String,
    /// Counts over `evals`.
    pub totals: DriftTotals,
    /// One entry per selected eval, in list order.
    pub evals: Vec<EvalDrift>,
}

/// Counts of a drift report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DriftTotals {
    /// Evals compared or not.
    pub evals: u64,
    /// Evals whose outcome or a run's stop reason differs.
    pub drifted: u64,
    /// Evals that ended alike under both versions.
    pub unchanged: u64,
    /// Evals not run under one of the versions (the suite was interrupted or a cost cap stopped
    /// it), so not compared.
    pub not_compared: u64,
    /// Drifting evals per [`DriftKind`] of their first difference (`as_str` names).
    pub by_kind: BTreeMap<String, u64>,
}

/// One eval under both versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalDrift {
    /// The test binary (`package::target`), as in the results JSON.
    pub binary: String,
    /// The test path (`module::function`), as in the results JSON.
    pub name: String,
    /// Which trial of the eval this entry is (`trial`, `trials`), with `drift --trials N`
    /// (N > 1): each trial replays its own cassette (`<test>/trial-K.yaml`) when the eval has
    /// trial cassettes, and is compared on its own; absent otherwise.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<crate::report::TrialOf>,
    /// `drifted`, `unchanged` or `not_compared`.
    pub status: DriftStatus,
    /// The cassette replayed (absolute path), when the run used one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<String>,
    /// How the eval ended under the pinned runtime.
    pub pinned: VersionOutcome,
    /// How it ended under the candidate runtime.
    pub candidate: VersionOutcome,
    /// For `drifted`: the first difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<Difference>,
}

/// Whether an eval drifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriftStatus {
    /// The outcome or a run's stop reason differs between the versions.
    Drifted,
    /// Same outcome and stop reasons under both.
    Unchanged,
    /// Not run under one of the versions.
    NotCompared,
}

/// How an eval ended under one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VersionOutcome {
    /// The eval test's outcome (`passed`, `failed`, `error`, `not_run`).
    pub outcome: Outcome,
    /// Each run's stop reason, in order.
    pub stop_reasons: Vec<StopReason>,
    /// The failure, error or not-run message of the test, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where the candidate first departs from the pinned runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Difference {
    /// What changed.
    pub kind: DriftKind,
    /// The run of the test (from 1) where it was found, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    /// One sentence: the replay diagnosis line, the differing field, or the failure.
    pub detail: String,
    /// The recorded (replay) or pinned (evidence) side, shortened, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    /// The candidate's side, shortened, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
}

/// The class of a first difference.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// The tools offered differ: a recorded tool result says a tool does not exist, or the
    /// audited tool names (`audit_requests`) differ.
    ToolSet,
    /// A system message differs (or one is missing).
    SystemPrompt,
    /// A tool result's text differs.
    ToolResult,
    /// A runtime notification (`<system_notification>`) differs, appears or is missing.
    Notification,
    /// An agent id is spelled differently (e.g. `agent-0` became a UUID).
    AgentId,
    /// The candidate makes a model request the recording lacks.
    NewRequest,
    /// The candidate ends before the recording does: recorded replies were never requested.
    MissingRequest,
    /// No replay mismatch: the runs' evidence differs (a field named in `detail`).
    Evidence,
    /// Anything else; `detail` has the mismatch or failure text.
    Other,
}

impl DriftKind {
    /// The value as written in the JSON: `tool_set`, `system_prompt`, `tool_result`,
    /// `notification`, `agent_id`, `new_request`, `missing_request`, `evidence`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolSet => "tool_set",
            Self::SystemPrompt => "system_prompt",
            Self::ToolResult => "tool_result",
            Self::Notification => "notification",
            Self::AgentId => "agent_id",
            Self::NewRequest => "new_request",
            Self::MissingRequest => "missing_request",
            Self::Evidence => "evidence",
            Self::Other => "other",
        }
    }

    /// The words of the summary line: `a changed tool set`, ..., `another difference`.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::ToolSet => "a changed tool set",
            Self::SystemPrompt => "a changed system prompt",
            Self::ToolResult => "a changed tool result",
            Self::Notification => "a changed notification",
            Self::AgentId => "a changed agent id",
            Self::NewRequest => "a new model request",
            Self::MissingRequest => "a missing model request",
            Self::Evidence => "changed evidence",
            Self::Other => "another difference",
        }
    }
}

/// The JSON Schema of [`DriftReport`], pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(DriftReport);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}

/// Run the whole `drift` command and return its exit status: `0` nothing drifts, `1` some eval
/// drifts, `2` a runtime is missing (the message says how to install it), `4` no eval matched,
/// `5` the build, the listing or writing the report failed. Everything goes to stderr.
pub fn run_drift(options: &DriftOptions) -> u8 {
    let (pinned, candidate) = match runtimes(&options.version) {
        Ok(runtimes) => runtimes,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::USAGE;
        }
    };
    let list = match list::discover(
        &options.suite.build,
        &options.suite.filters,
        options.suite.exact,
    ) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::SUITE_ERROR;
        }
    };
    if list.tests.is_empty() {
        eprintln!(
            "warning: no eval test matched ({} other tests, {} eval tests filtered out)",
            list.other_tests, list.filtered_out
        );
        return exit_code::NO_TESTS;
    }
    let Some(async_runtime) = super::async_runtime() else {
        return exit_code::SUITE_ERROR;
    };
    let replay = |label: &str, path: PathBuf| {
        let suite = SuiteOptions {
            mode: Mode::Replay,
            no_fail_fast: true,
            json: None,
            junit: None,
            html: None,
            list_only: false,
            runtime: Some(path.clone()),
            ..options.suite.clone()
        };
        let version = runtime::version(&path).unwrap_or_else(|e| format!("unknown ({e})"));
        eprintln!(
            "drift: replaying {} evals with the {label} runtime {version}",
            list.tests.len()
        );
        let report = async_runtime.block_on(super::run_suite(&list, &suite));
        eprint!("{}", super::display::summary(&report));
        report
    };
    let pinned_report = replay("pinned", pinned);
    let candidate_report = replay("candidate", candidate);
    let report = compare(&pinned_report, &candidate_report);
    eprint!("{}", render(&report));
    if let Some(path) = &options.json
        && !write_report(&report, path)
    {
        return exit_code::SUITE_ERROR;
    }
    if report.totals.drifted > 0 {
        exit_code::TEST_FAILURES
    } else {
        exit_code::SUCCESS
    }
}

/// The two runtimes `drift` compares: the one that resolves without
/// `COPILOT_EVAL_RUNTIME_VERSION` (the pinned one), and the installed runtime of `version`.
/// Errors: the message for a missing runtime or an invalid version (exit status `2`).
fn runtimes(version: &str) -> Result<(PathBuf, PathBuf), String> {
    let pinned = runtime::resolve_with(
        &|name| {
            (name != runtime::RUNTIME_VERSION_ENV)
                .then(|| std::env::var_os(name))
                .flatten()
        },
        &runtime::cache_root(),
    )
    .map_err(|e| format!("drift needs the pinned runtime too: {e}"))?
    .path;
    runtime::check_version_text(version).map_err(|e| format!("--runtime-version: {e}"))?;
    let Some(candidate) = runtime::installed(version) else {
        return Err(format!(
            "runtime {version} is not installed at {}; run `cargo copilot-eval runtime install --version {version}` (`runtime list` shows what is installed)",
            runtime::install_dir(version).display(),
        ));
    };
    Ok((pinned, candidate.path))
}

/// Write the drift report as JSON to `path`, saying so on stderr; `false` (the error said on
/// stderr) when it cannot be written.
fn write_report(report: &DriftReport, path: &std::path::Path) -> bool {
    let mut text = serde_json::to_string_pretty(report).expect("a drift report serialises");
    text.push('\n');
    super::artifacts::said(path, crate::report::write_atomically(path, text.as_bytes()))
}

/// Pair the records of two suite runs over the same list (by binary, name and trial) and build
/// the report.
pub fn compare(pinned: &SuiteReport, candidate: &SuiteReport) -> DriftReport {
    let mut evals = Vec::new();
    for before in &pinned.tests {
        let after = candidate.tests.iter().find(|t| {
            t.binary == before.binary && t.name == before.name && t.trial == before.trial
        });
        evals.push(compare_one(before, after));
    }
    let mut totals = DriftTotals {
        evals: evals.len() as u64,
        drifted: 0,
        unchanged: 0,
        not_compared: 0,
        by_kind: BTreeMap::new(),
    };
    for eval in &evals {
        match eval.status {
            DriftStatus::Drifted => totals.drifted += 1,
            DriftStatus::Unchanged => totals.unchanged += 1,
            DriftStatus::NotCompared => totals.not_compared += 1,
        }
        if let Some(difference) = &eval.difference {
            *totals
                .by_kind
                .entry(difference.kind.as_str().to_owned())
                .or_default() += 1;
        }
    }
    DriftReport {
        schema_version: DRIFT_SCHEMA_VERSION.to_owned(),
        pinned: pinned.runtime.clone(),
        candidate: candidate.runtime.clone(),
        summary: summary_line(&evals),
        totals,
        evals,
    }
}

fn version_outcome(record: &TestRecord) -> VersionOutcome {
    VersionOutcome {
        outcome: record.outcome,
        stop_reasons: record.runs.iter().map(|r| r.stop_reason).collect(),
        message: record.message.clone(),
    }
}

fn compare_one(before: &TestRecord, after: Option<&TestRecord>) -> EvalDrift {
    let missing = TestRecord {
        message: Some("not in the candidate's run".to_owned()),
        ..before.clone()
    };
    let (after, found) = match after {
        Some(after) => (after, true),
        None => (&missing, false),
    };
    let pinned = version_outcome(before);
    let mut candidate = version_outcome(after);
    if !found {
        candidate.outcome = Outcome::NotRun;
        candidate.stop_reasons.clear();
    }
    let status = if pinned.outcome == Outcome::NotRun || candidate.outcome == Outcome::NotRun {
        DriftStatus::NotCompared
    } else if pinned.outcome != candidate.outcome
        || pinned.stop_reasons != candidate.stop_reasons
        || before.error_kind != after.error_kind
    {
        DriftStatus::Drifted
    } else {
        DriftStatus::Unchanged
    };
    let difference = (status == DriftStatus::Drifted).then(|| first_difference(before, after));
    EvalDrift {
        binary: before.binary.clone(),
        name: before.name.clone(),
        trial: before.trial,
        status,
        cassette: after.cassette.clone().or_else(|| before.cassette.clone()),
        pinned,
        candidate,
        difference,
    }
}

/// The first difference of a drifting eval: the candidate's replay mismatch when it has one the
/// pinned run lacks, else the first differing evidence field, else the candidate's message.
pub fn first_difference(before: &TestRecord, after: &TestRecord) -> Difference {
    let (was, now) = (Mismatch::of_runs(before), Mismatch::of_runs(after));
    for (i, m) in now.iter().enumerate() {
        if let Some(m) = m
            && was.get(i).and_then(Option::as_ref) != Some(m)
        {
            return Difference {
                run: Some(i + 1),
                ..m.classify()
            };
        }
    }
    // The pinned run mismatched where the candidate replays: the candidate stopped sending what
    // the pinned runtime sent beyond the recording, classified the same way.
    for (i, m) in was.iter().enumerate() {
        if let Some(m) = m
            && now.get(i).is_none_or(Option::is_none)
        {
            let mut difference = m.classify();
            difference.run = Some(i + 1);
            difference.detail = format!(
                "the pinned runtime's replay failed and the candidate's did not; pinned: {}",
                difference.detail
            );
            return difference;
        }
    }
    if let Some(difference) = first_evidence_difference(before, after) {
        return difference;
    }
    Difference {
        kind: DriftKind::Other,
        run: None,
        detail: format!(
            "{} -> {}: {}",
            before.outcome.as_str(),
            after.outcome.as_str(),
            after
                .message
                .as_deref()
                .or(before.message.as_deref())
                .unwrap_or("no message")
        ),
        pinned: before.message.as_deref().map(shorten),
        candidate: after.message.as_deref().map(shorten),
    }
}

mod classify;
pub use classify::{classify_mismatch, first_evidence_difference, unclassified_mismatch};

/// A run's replay failure: its typed diagnosis (`None` in a results file written before it was
/// recorded) and its error text.
#[derive(PartialEq)]
struct Mismatch<'a> {
    typed: Option<&'a crate::result::replay::ReplayMismatch>,
    error: &'a str,
}

impl<'a> Mismatch<'a> {
    /// Per run of `record`: its replay failure, when its stop reason is `replay_mismatch`.
    fn of_runs(record: &'a TestRecord) -> Vec<Option<Self>> {
        record
            .runs
            .iter()
            .map(|r| {
                (r.stop_reason == StopReason::ReplayMismatch).then(|| Mismatch {
                    typed: r.replay_diagnosis.as_ref(),
                    error: r.error.as_deref().unwrap_or_default(),
                })
            })
            .collect()
    }

    fn classify(&self) -> Difference {
        match self.typed {
            Some(typed) => classify_mismatch(typed),
            None => unclassified_mismatch(self.error),
        }
    }
}

fn shorten(text: &str) -> String {
    const SHOWN: usize = 200;
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(SHOWN).collect();
    if chars.next().is_some() {
        head + "…"
    } else {
        head
    }
}

fn summary_line(evals: &[EvalDrift]) -> String {
    let compared = evals
        .iter()
        .filter(|e| e.status != DriftStatus::NotCompared)
        .count();
    let drifted: Vec<&EvalDrift> = evals
        .iter()
        .filter(|e| e.status == DriftStatus::Drifted)
        .collect();
    let mut line = format!("{} of {compared} evals drift", drifted.len());
    let mut kinds: BTreeMap<DriftKind, usize> = BTreeMap::new();
    for eval in &drifted {
        if let Some(difference) = &eval.difference {
            *kinds.entry(difference.kind).or_default() += 1;
        }
    }
    if !kinds.is_empty() {
        let parts: Vec<String> = kinds
            .iter()
            .map(|(kind, n)| format!("{n} by {}", kind.phrase()))
            .collect();
        line.push_str("; ");
        line.push_str(&parts.join(", "));
    }
    let skipped = evals.len() - compared;
    if skipped > 0 {
        line.push_str(&format!(
            " ({skipped} not compared: not run under one version)"
        ));
    }
    line
}

/// The terminal form: one line per eval (`unchanged`, `DRIFTS`, `not compared`), the first
/// difference under a drifting one, and the summary line.
pub fn render(report: &DriftReport) -> String {
    let version = |info: &RuntimeInfo| info.version.clone().unwrap_or_else(|| "unknown".into());
    let mut out = format!(
        "drift: runtime {} (pinned) -> {}\n",
        version(&report.pinned),
        version(&report.candidate)
    );
    for eval in &report.evals {
        let label = match eval.trial {
            Some(trial) => format!("{} {} {}", eval.binary, eval.name, trial.label()),
            None => format!("{} {}", eval.binary, eval.name),
        };
        let outcomes = format!(
            "{} -> {}",
            eval.pinned.outcome.as_str(),
            eval.candidate.outcome.as_str()
        );
        match eval.status {
            DriftStatus::Unchanged => out.push_str(&format!(
                "  unchanged     {label} ({})\n",
                eval.pinned.outcome.as_str()
            )),
            DriftStatus::NotCompared => {
                out.push_str(&format!("  not compared  {label} ({outcomes})\n"))
            }
            DriftStatus::Drifted => {
                out.push_str(&format!("  DRIFTS        {label} ({outcomes})\n"));
                if let Some(d) = &eval.difference {
                    let run = d.run.map(|r| format!(" in run {r}")).unwrap_or_default();
                    out.push_str(&format!(
                        "      first difference{run} ({}): {}\n",
                        d.kind.as_str(),
                        d.detail
                    ));
                    if let Some(pinned) = &d.pinned {
                        out.push_str(&format!("        pinned:    {pinned}\n"));
                    }
                    if let Some(candidate) = &d.candidate {
                        out.push_str(&format!("        candidate: {candidate}\n"));
                    }
                }
            }
        }
    }
    out.push_str(&format!("  {}\n", report.summary));
    out
}

#[cfg(test)]
mod tests;
