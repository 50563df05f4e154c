//! Machine-readable artifacts of a suite run: the JSON results file and the JUnit XML file.
//!
//! The types here are the **published, versioned** JSON format written by
//! `cargo copilot-eval --json PATH` ([`SuiteReport`], schema version [`SCHEMA_VERSION`]). The
//! JSON Schema of that format is generated from these types ([`json_schema`]) and committed as
//! `docs/schema/results.schema.json`; a test keeps the two equal. [`RunRecord`] is also what an
//! eval test writes into its evidence side file for the runner
//! ([`harness`](crate::harness)), so both sides share one definition.
//!
//! Architecture: the runner ([`suite`](crate::suite)) builds one [`SuiteReport`] from the test
//! processes' evidence; [`write_json`], [`write_junit`] (module [`junit`]) and
//! [`html::write_html`] (the page for a person) are separate writers over that same record. Both write atomically (a temporary file in the destination folder, then
//! a rename), create missing parent folders, and pass every string through [`Redactor`] first, so
//! credential values found in the environment are never written.

mod compare;
pub mod compare_trials;
mod from_result;
pub mod judge;
pub mod judge_labels;
pub mod judge_trials;
pub use crate::result::PromptOptionsRecord;
pub use judge::{
    JUDGE, JudgeCriterionVerdict, JudgeKind, JudgeRecord, JudgeSession, JudgeVerdict,
    RubricCriterionRecord, SampleAgreement,
};
pub mod aa;
pub mod baseline;
pub mod benchmark;
pub mod discrimination;
pub mod grading;
pub mod lift;
pub use grading::{CheckKind, ExpectationRecord, SkillEvalRecord};
#[cfg(feature = "runner")]
pub mod html;
#[cfg(feature = "runner")]
pub mod junit;
#[cfg(feature = "runner")]
pub mod merge;
pub mod trials;
pub use compare_trials::{CriterionOverTrials, TrialComparisonVerdict};
pub use trials::{TrialOf, TrialSummary};
pub mod matrix;
pub use matrix::{ModelCell, ModelMatrixEval};
pub mod triggers;
pub mod verdicts;
pub use triggers::{SkillTriggers, Trigger, TriggerCheck, TriggerQueryRecord};
mod priced;
mod suite_info;
pub use suite_info::{PartitionRecord, PoolRecord, RuntimeInfo, ToolInfo, suite_mode};
pub mod provenance;
pub use provenance::{EvalProvenance, InputFile, InputKind, SuiteProvenance};
mod write;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evidence::Usage;
use crate::result::{CopilotResult, StopReason};

pub use crate::cost::{CostTotals, estimate_run};
pub use compare::{
    BASELINE, ComparisonDifferences, ComparisonRecord, ComparisonSide, CriterionRecord, TREATMENT,
};
// The cost module, also as `report::cost` for the report's own files that name it so.
pub use crate::artifact::{Redactor, rfc3339, write_atomically};
use crate::cost;
pub use priced::price_test;
pub use write::write_json;
#[cfg(feature = "runner")]
pub use write::write_junit;

/// Version of the JSON results format. Bumped on any incompatible change; additions of optional
/// fields keep the version. `"2"`: a subagent invocation's tool calls are written like the run's
/// own (`cut_for_model_full_bytes`; `runtime_name`, `structured_content` absent when unset);
/// `merge` still reads version `"1"` (docs/results.md, "Versions").
pub const SCHEMA_VERSION: &str = "2";

/// The whole results file (`--json`): one suite run of `cargo copilot-eval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "copilot-eval results")]
pub struct SuiteReport {
    /// Version of this format, currently `"2"` (the `SCHEMA_VERSION` constant).
    pub schema_version: String,
    /// The program that wrote the file.
    pub tool: ToolInfo,
    /// The Copilot runtime the suite resolved before running (the runs themselves record the
    /// executable they used).
    pub runtime: RuntimeInfo,
    /// Where the model requests of the suite's runs went, from each run's `mode`: `live`
    /// (GitHub Copilot), `replay` (each test's cassette) or `scripted` (the test's own script,
    /// `ctx.offline(..)`, in any mode) when every run shares it; `mixed` when runs went to more
    /// than one; the command's mode (`requested_mode`) when no run was made.
    pub mode: String,
    /// The mode the command asked for: `live`, `replay` (`--replay`) or `record`
    /// (`--record`). Tests that script their model run offline in any of them. Absent in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_mode: Option<String>,
    /// When the suite started, RFC 3339 in UTC, e.g. `2026-01-31T09:15:02Z`.
    pub started_at: String,
    /// Wall time of the suite (build and listing excluded), milliseconds.
    pub duration_ms: u64,
    /// Counts and sums over every test.
    pub totals: SuiteTotals,
    /// The pricing table and cost caps the suite ran with, and the cap that stopped it, if one
    /// did (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_control: Option<crate::cost::CostControlRecord>,
    /// The shard of the suite this run held (`--partition`); absent for an unsharded run and for
    /// the report `merge` writes from a complete set of shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionRecord>,
    /// The runner's warm runtimes (docs/performance.md, "Warm runtimes"): how many it started
    /// and retired; absent when the suite ran with `--fresh-runtime` or ran no eval. A merged
    /// report sums its shards'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolRecord>,
    /// One entry per selected eval test, in list order (binary, then test name); with trials
    /// (`--trials N`), one entry per trial, each eval's trials together in trial order.
    pub tests: Vec<TestRecord>,
    /// With trials: one summary per eval over its trials (pass rate, interval, pass@k, pass^k,
    /// flaky, verdict, its comparisons' criteria), in list order; absent when every eval ran
    /// once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trial_summaries: Vec<TrialSummary>,
    /// With a model matrix (`models = [..]` or `--models`): one entry per eval, its models side
    /// by side (pass rate and interval, tokens, premium requests, estimated cost, duration), in
    /// list order; absent when no eval ran in a model matrix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_matrix: Vec<ModelMatrixEval>,
    /// Per skill checked with `ctx.expect_trigger`, over every eval, case and trial (and per
    /// model): the trigger and false-trigger rates with their intervals; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skill_triggers: Vec<SkillTriggers>,
    /// What the suite ran with: the copilot-eval, SDK and runtime versions, the package's git
    /// commit and whether its tree was dirty, the suite's settings. Absent in files written
    /// before copilot-eval recorded it (their provenance is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<SuiteProvenance>,
    /// With `--ablate` (docs/skill-lift.md): each eval's and each skill's pass rate with and
    /// without the ablated inputs, the lift with Fisher's exact test, tokens, time and cost per
    /// pass; absent when no eval ran an ablated side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_lift: Option<lift::SkillLiftReport>,
    /// Whether each criterion of the suite's comparisons (`ctx.compare`), ablations
    /// (`--ablate`) and model matrices tells the sides apart: per criterion each side's
    /// `held / trials` over the trials that reached a verdict, and `does_not_discriminate` when
    /// it held on every side in every trial, or failed on every side in every trial
    /// (docs/can-this-eval-tell.md); and "N of M criteria discriminate". Absent when no such
    /// run recorded a criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discrimination: Option<discrimination::DiscriminationReport>,
    /// With `--judge-labels FILE`: the suite's rubric judges against a person's labels, per
    /// eval, judge and criterion the agreement and Cohen's kappa with n; absent without the
    /// option (and in a report `merge` writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_labels: Option<judge_labels::JudgeLabelsReport>,
    /// With `--aa` (docs/can-this-eval-tell.md): the suite's noise floor, the fraction of
    /// (eval, trial) pairs whose verdicts differ between arm A and arm B of the same
    /// configuration; absent when the suite ran no A/A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<aa::NoiseFloor>,
    /// With `--baseline BASE.json` (docs/deciding.md): this run against that earlier results
    /// file, eval by eval (`compare`'s verdict and what changed), as the runner compared them
    /// when the run finished; absent without the option (and in a report `merge` writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::BaselineRecord>,
}

/// Counts and sums over the suite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteTotals {
    /// Selected eval tests.
    pub tests: u64,
    /// Tests whose outcome is `passed`.
    pub passed: u64,
    /// Tests whose outcome is `failed`.
    pub failed: u64,
    /// Tests whose outcome is `error`.
    pub error: u64,
    /// Tests whose outcome is `not_run`.
    pub not_run: u64,
    /// Eval runs over all tests.
    pub runs: u64,
    /// Input tokens over all runs whose tokens are known (`cost.usage_unknown_runs` counts the
    /// others).
    pub input_tokens: u64,
    /// Output tokens over all runs whose tokens are known.
    pub output_tokens: u64,
    /// Tool calls over all runs.
    pub tool_calls: u64,
    /// Judges (`ctx.judge`, `ctx.judge_pair`) over all tests that gave no verdict (their
    /// record's `error` is set): neither a pass nor a fail; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judge_errors: u64,
    /// How many runs ended with each stop reason (`completed`, `timeout`, ...).
    pub stop_reasons: BTreeMap<String, u64>,
    /// Tokens, model calls, reported cost, premium requests and estimated cost over every run
    /// (the sum of the tests' `cost`).
    #[serde(default)]
    pub cost: CostTotals,
}

/// How one eval test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The test function returned normally (its own checks held).
    Passed,
    /// The test's own checks failed: an assertion, a panic, or an `Err` returned; this includes
    /// runs that stopped on `timeout` or `tool_budget_exceeded`.
    Failed,
    /// Infrastructure failed (`error_kind` says what). The suite stops launching tests after one
    /// unless `--no-fail-fast`.
    Error,
    /// Not started: the suite stopped launching after an infrastructure error, or was
    /// interrupted.
    NotRun,
}

impl Outcome {
    /// The value as written: `passed`, `failed`, `error`, `not_run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Error => "error",
            Self::NotRun => "not_run",
        }
    }
}

/// Which infrastructure failed, for tests whose outcome is `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The test could not set up a run: no cassette in replay mode, an unreadable cassette, or
    /// its working directory could not be created.
    Setup,
    /// A run ended on an infrastructure stop reason (one whose class is `Infrastructure`, e.g.
    /// `execution_error` or `replay_mismatch`: docs/budgets-guards-stops.md, "Stop reasons",
    /// lists them) that the test did not declare with `ctx.expect_stop(..)`, whether the test's
    /// own checks passed or failed.
    Run,
    /// The test process ended abnormally: a signal, an abort, or an exit status libtest does not
    /// use.
    Crashed,
    /// The runner killed the test process because it outlived its deadline (the eval's
    /// `timeout_s`, or the attribute's between runs) plus the cleanup bound.
    Killed,
    /// The test process ended without writing its evidence file (for example it did not run the
    /// eval test at all).
    MissingEvidence,
    /// The test passed, but processes it started (carrying its marker variable or in its
    /// process group: a runtime, an MCP server, a tool's child) were still alive after its
    /// process exited; the runner killed them. The message names each one's pid and command
    /// line. A test that did not pass keeps its own outcome, with the same note appended.
    LeftoverProcesses,
    /// A judge (`ctx.judge`, `ctx.judge_pair`) gave no verdict (its answer did not parse, its
    /// session did not complete, its rubric could not be used) and the test then failed: the
    /// failure may be the missing verdict rather than the agent's work, so it is neither a pass
    /// nor a fail of the agent. The message names each judge's error and the test's failure.
    /// Unlike the other kinds, it does not stop the suite launching tests nor the eval's
    /// further trials.
    Judge,
}

/// One eval test (one `#[copilot_eval]` function), run once in its own process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestRecord {
    /// The full test path as written in Rust, without the crate: `module::function` (for a
    /// function at the top of an integration test file, just `function`).
    pub name: String,
    /// The name libtest knows the test by (the path plus the `::__copilot_eval` marker); pass it
    /// with `--exact` to run the test binary by hand.
    pub test_id: String,
    /// The test binary: `package::target` for an integration test (e.g. `quickstart::evals`),
    /// `package` for a library's unit tests, `package::bin/target` for a binary's.
    pub binary: String,
    /// Which trial of its eval this record is (`trial`, `trials`), when the eval ran in trials
    /// (`--trials N` with N > 1); absent otherwise.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<TrialOf>,
    /// The model of the record's cell of a model matrix (`models = [..]` under the attribute,
    /// or `cargo copilot-eval --models`): the eval ran on it, and `name` ends with `@model`;
    /// absent outside a model matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The kinds of input this record's eval ran without (`cargo copilot-eval --ablate skills`):
    /// the ablated side of a skill lift, named `<eval> (without skills)`. Its outcome is a
    /// measurement (`skill_lift`), never the suite's verdict. Absent for the normal side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ablated: Vec<crate::eval::Ablate>,
    /// Outcome of the test.
    pub outcome: Outcome,
    /// For `error`: which infrastructure failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Wall time of the test process, milliseconds (0 when not run).
    pub duration_ms: u64,
    /// For `failed`: the assertion or panic message; for `error`: what failed; for `not_run`:
    /// why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Observations the test recorded with `ctx.record_property(name, value)`, in order.
    pub properties: Vec<Property>,
    /// Every eval run of the test, in order (a baseline and a treatment are two runs, labelled
    /// by their `label`).
    pub runs: Vec<RunRecord>,
    /// Each `ctx.compare(&baseline, &treatment, prompt)` of the test, in order: both sides (by
    /// their run number in `runs`), their differences and the criteria's verdicts. Absent when
    /// the test compared nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<ComparisonRecord>,
    /// Each `ctx.expect_trigger(..)` of the test, in order; absent when it checked none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerCheck>,
    /// Each `ctx.judge(&result, &rubric)` and `ctx.judge_pair(&a, &b, &rubric)` of the test, in
    /// order: the rubric, the judged runs, each judge session (a run in `runs` labelled
    /// `judge`, with its cost) and the verdicts or the error. A judge's verdict is a model's
    /// statement, not a check of the real output. Absent when the test judged nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeRecord>,
    /// The test's working directory, when it was kept (the test did not pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// In replay and record modes: the cassette of the test's first run (absolute path);
    /// absent when every run of the test was scripted (`ctx.offline`: no cassette is read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<String>,
    /// How the test process ended, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitRecord>,
    /// The end of the process's stdout and stderr (at most 16 KiB each), for tests that did not
    /// pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<CapturedOutput>,
    /// Tokens, model calls, reported cost, premium requests and estimated cost over the test's
    /// runs, set by the runner for every test it launched (absent for `not_run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostTotals>,
    /// Where the eval function is written, from the attribute (`file!()` and the line of the
    /// function's name), as the test's evidence reported it; absent when the test wrote no
    /// evidence (or for a test not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLocation>,
    /// The entry of a skill's `evals/evals.json` the test ran (`skill_evals = ".."`), from its
    /// evidence; absent for other tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_eval: Option<SkillEvalRecord>,
    /// Each expectation's verdict (`ctx.expect`), from the test's evidence, in the order
    /// recorded; empty when it recorded none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationRecord>,
    /// The query of a skill's trigger set the test runs (`skill_triggers = ".."`): the trigger
    /// check it owes, counted in `skill_triggers` (as not counted) when its record holds no such
    /// check. Absent for other tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_query: Option<TriggerQueryRecord>,
    /// What the eval's sessions were made of: each input file's path (relative to the package)
    /// and sha256, the models and a digest of each run's settings, from its evidence; absent
    /// when the test wrote no evidence, and in files written before copilot-eval recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<EvalProvenance>,
    /// For a test run by `--rerun-failed`: it is a new attempt of an eval that did not pass in
    /// an earlier results file (never that attempt's outcome); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<Attempt>,
    /// For a trial `--stop-early` skipped (its outcome `not_run`): the trial after which its
    /// eval's verdict could no longer change, that verdict and why; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<trials::StoppedEarly>,
    /// With `--aa`: the arm of the A/A run this record is (`a` or `b`, the same configuration
    /// run twice; arm B's records are named `<eval> (arm B)`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<aa::Arm>,
}

/// A new attempt of an eval that did not pass in an earlier suite run (`--rerun-failed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    /// This attempt's number: 2 for a rerun of a first run, one more than the earlier record's
    /// attempt otherwise.
    pub number: u32,
    /// How the eval ended in the earlier results file (over its trials: `failed` when any trial
    /// failed): `failed`, `error` or `not_run`.
    pub previous_outcome: Outcome,
    /// When the earlier suite started (its `started_at`).
    pub previous_started_at: String,
}

/// Where an eval function is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceLocation {
    /// The source file as `file!()` names it: relative to the workspace root for a workspace
    /// member (e.g. `tests/evals.rs`, `crates/app/tests/evals.rs`).
    pub file: String,
    /// The 1-based line of the function's name.
    pub line: u32,
}

/// One `record_property(name, value)` observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Property {
    /// The name given by the test.
    pub name: String,
    /// The value, any JSON.
    pub value: Value,
}

/// How a test process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExitRecord {
    /// The exit code (libtest: 0 passed, 101 failed), when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did (9 also when the runner killed it).
    pub signal: Option<i32>,
    /// Whether the runner killed it for outliving its deadline.
    pub killed_by_runner: bool,
}

/// The tail of what a test process printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CapturedOutput {
    /// The last bytes of stdout (lossy UTF-8).
    pub stdout: String,
    /// The last bytes of stderr (lossy UTF-8).
    pub stderr: String,
}

/// One eval run: `ctx.run(&eval, prompt)` or `ctx.run_turns(&eval, prompts)` (a conversation
/// in one session) inside a test: the engine's [`CopilotResult`] itself, written as its serde
/// attributes say (without the raw event stream; one type, and one JSON shape, per fact), and
/// what the runner adds: where the run's model requests went, its label, its sums and price,
/// the skills and subagents it used, its replay or recording, the run it resumed and the stop
/// the test expected. It reads as the result ([`Deref`](std::ops::Deref)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// The run.
    #[serde(flatten)]
    pub result: CopilotResult,
    /// `baseline` or `treatment` for a side of a comparison (`ctx.compare`; the test's
    /// `comparisons` has the pair), `judge` for a judge session (`ctx.judge`, `ctx.judge_pair`;
    /// the test's `judges` has its verdicts); absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Where model requests went: `live`, `replay` or `scripted`.
    pub mode: String,
    /// Sums over `usage` and `tool_calls`.
    pub totals: RunTotals,
    /// Names of the skills the session invoked, in order (`skill.invoked` events, else the
    /// runtime's `skill` tool calls); a custom agent's preload is not an invocation here (see
    /// `skills_preloaded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_invoked: Vec<String>,
    /// Names of the skills custom agents preloaded, in order (`skill.invoked` events with
    /// trigger `context-load`: an agent's `skills:` list). Never a trigger.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_preloaded: Vec<String>,
    /// Subagent ids that made tool calls or model calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<String>,
    /// Replay details, for runs replayed from a cassette.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayRecord>,
    /// Recording details, for runs recorded into a cassette (`cargo copilot-eval --record`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<RecordingOutcome>,
    /// For a run that resumed an earlier run's session (`ctx.resume`, `ctx.resume_turns`):
    /// which run of the same test it resumed and that run's session id. Absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<ResumedFrom>,
    /// The stop reason the test declared for this run with `ctx.expect_stop(..)` before it
    /// started (a test of a guard, an audit failure, a stale cassette). An infrastructure stop
    /// equal to it does not make the test an `error`; a run that stopped otherwise fails the
    /// test. Absent when the test declared none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_stop: Option<StopReason>,
}

impl std::ops::Deref for RunRecord {
    type Target = CopilotResult;

    fn deref(&self) -> &CopilotResult {
        &self.result
    }
}

impl std::ops::DerefMut for RunRecord {
    fn deref_mut(&mut self) -> &mut CopilotResult {
        &mut self.result
    }
}

/// The earlier run a resumed run continued (`resumed_from` of a [`RunRecord`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResumedFrom {
    /// The earlier run's number among the test's `runs`, from 1.
    pub run: u64,
    /// The session id of the earlier run (the resumed run's `session_id` is the same).
    pub session_id: String,
}

/// What happened to the cassette of a run recorded live (`cargo copilot-eval --record`).
// The JSON Schema keeps this type's earlier name, `RecordingRecord`, in `$defs` (and a doc line
// here would change the schema's description).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "RecordingRecord")]
pub struct RecordingOutcome {
    /// The cassette file (absolute path).
    pub cassette: String,
    /// Whether the cassette was written (replacing any earlier file there).
    pub written: bool,
    /// Conversations written into it (0 when not written).
    pub conversations: u64,
    /// Model requests the recorder saw through the request seam.
    pub model_requests: u64,
    /// Why no cassette was written: the run did not complete, or the recording could not be
    /// made into a cassette or written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Values the cassette holds literally that no normaliser covers (a path under a temporary
    /// folder, a uuid, a timestamp), each as `file:line: what ...`; with `--strict` they stop
    /// the cassette from being written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Replay details of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayRecord {
    /// The cassette file (absolute path).
    pub cassette: String,
    /// Recorded conversations the run did not consume (as the replay engine names them).
    pub unconsumed: Vec<String>,
    /// Every model request of the run that the cassette could not answer, in arrival order,
    /// each with its whole diagnosis (the request number and why, then for each recorded
    /// conversation where the request departs from it); the run's `error` has the first in
    /// full. Absent when every request was answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<String>,
}

/// Whether a run's token counts are known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenUsage {
    /// The counts are what the model service reported (live), what the cassette recorded
    /// (replay), or what the test's script says (scripted).
    #[default]
    Reported,
    /// Nobody knows them: the run replayed a cassette with replies that have no recorded
    /// `usage:`. The run's token counts are written as 0 and not priced.
    Unknown,
}

impl TokenUsage {
    /// Whether the counts are known (`reported`).
    pub fn is_reported(&self) -> bool {
        *self == Self::Reported
    }
}

/// Sums over one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunTotals {
    /// `unknown` when the run's token counts are not known (a replay of a cassette without
    /// recorded usage): every token count of the run, here and in `usage`, is then 0 and means
    /// nothing, and `estimated_cost` is `null`. Absent when the counts are known.
    #[serde(default, skip_serializing_if = "TokenUsage::is_reported")]
    pub tokens: TokenUsage,
    /// Model calls (`usage` entries).
    pub model_calls: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache-read tokens.
    pub cache_read_tokens: u64,
    /// Cache-write tokens.
    pub cache_write_tokens: u64,
    /// Sum of reported costs, when any call reported one.
    pub cost: Option<f64>,
    /// Tool calls.
    pub tool_calls: u64,
    /// Premium requests of the session as the runtime reports them
    /// (`session.shutdown.totalPremiumRequests`, else the last `session.usage_checkpoint`; 0
    /// when no prompt was sent); `null` when not reported.
    #[serde(default)]
    pub premium_requests: Option<f64>,
    /// Estimated cost of the run's model calls from the runner's pricing table, in its currency
    /// (`cost_control.currency`); `null` when a call could not be priced, or the run was not
    /// priced (the runner prices every run it reports), or pricing does not apply to it
    /// (`cost_not_applicable`).
    #[serde(default)]
    pub estimated_cost: Option<f64>,
    /// Why the run is not priced although its tokens are known: `scripted model` (the model was
    /// a script of `ctx.offline`: nothing was spent, and its token counts are the script's, not
    /// a model's). The run counts 0 toward the test's `estimated_cost` and the cost caps.
    /// Absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_not_applicable: Option<String>,
}

impl SuiteTotals {
    /// Sum `tests` into totals.
    pub fn of(tests: &[TestRecord]) -> Self {
        let mut totals = SuiteTotals {
            tests: tests.len() as u64,
            cost: CostTotals::zero(),
            ..Default::default()
        };
        for test in tests {
            match test.outcome {
                Outcome::Passed => totals.passed += 1,
                Outcome::Failed => totals.failed += 1,
                Outcome::Error => totals.error += 1,
                Outcome::NotRun => totals.not_run += 1,
            }
            totals.judge_errors += test.judges.iter().filter(|j| j.error.is_some()).count() as u64;
            for run in &test.runs {
                totals.runs += 1;
                totals.input_tokens += run.totals.input_tokens;
                totals.output_tokens += run.totals.output_tokens;
                totals.tool_calls += run.totals.tool_calls;
                *totals
                    .stop_reasons
                    .entry(run.stop_reason.as_str().to_owned())
                    .or_default() += 1;
            }
            match &test.cost {
                Some(cost) => totals.cost.add(cost),
                None => totals.cost.add(&CostTotals::of_runs(&test.runs)),
            }
        }
        totals
    }
}

/// The JSON Schema (draft 2020-12) of [`SuiteReport`], generated from the Rust types, as pretty
/// JSON text with a trailing newline: exactly the content of `docs/schema/results.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(SuiteReport);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}

/// Whether a count is 0 (serde leaves such a count out).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
pub(crate) mod tests;
