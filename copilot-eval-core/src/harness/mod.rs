//! The test harness behind `#[copilot_eval]`: the [`EvalContext`] a test receives, and
//! [`run_test`], which the attribute's generated test calls.
//!
//! All behaviour of an eval test lives here; the attribute only validates its keys, emits the
//! eval keys as builder calls (a [`Configure`] closure) into a [`TestConfig`], and emits a
//! libtest test that calls [`run_test`]. The harness can therefore be
//! used (and is tested) without the macro.
//!
//! # How a test talks to the runner
//!
//! Like a snapshot library talks to its cargo subcommand, through the environment and a side
//! file, so it works whatever the test harness does with output:
//!
//! - [`ENV_MODE`] (`COPILOT_EVAL_MODE`): `live` (the default when unset), `replay` or `record`
//!   (with [`ENV_RECORD`]; refused under CI);
//! - [`ENV_CASSETTE_ROOT`] (`COPILOT_EVAL_CASSETTE_ROOT`): a folder replacing the package root
//!   for cassette paths;
//! - [`ENV_EVIDENCE_FILE`] (`COPILOT_EVAL_EVIDENCE_FILE`): where the test writes its
//!   [`TestEvidence`] (JSON). It is written atomically when the test starts, after each run and
//!   each recorded property, and when the test ends; so a test process that crashes or is killed
//!   still leaves everything it had recorded. Unset: no file is written (e.g. under
//!   `cargo nextest run`).
//!
//! The evidence also carries a **deadline** (`deadline_unix_ms`): during a run, the run's start
//! plus the eval's `timeout_s` (60 s more for a run whose test-only clock starts at its session
//! or prompt, which does not count the runtime's start); outside runs, the last event plus the attribute's `timeout_s`
//! (default 300 s). The runner kills a test process that outlives its deadline plus its cleanup
//! bound.
//!
//! # Where model requests go
//!
//! For each `ctx.run(..)`, in this order:
//! 1. the test scripted its model with [`EvalContext::offline`]: a loopback
//!    [`ModelServer`](crate::model_server::ModelServer) plays the script (mode `scripted`,
//!    whatever `COPILOT_EVAL_MODE` says; no cassette is needed);
//! 2. `COPILOT_EVAL_MODE=replay`: the test's cassette is replayed (the run fails the test as a
//!    setup error when the cassette is missing: never a live call);
//! 3. `COPILOT_EVAL_MODE=record`: the run's cassette is replayed when it exists and the policy
//!    ([`RecordPolicy`]) keeps it; otherwise the run goes live, recorded through the request seam,
//!    and the cassette is written when the run completed (`docs/recording-and-ci.md`);
//! 4. otherwise live (GitHub Copilot).
//!
//! # Why plain `cargo test` spends nothing
//!
//! The generated test is `#[ignore]`d with the reason
//! `copilot eval: run it with cargo copilot-eval (plain cargo test skips it)`, so `cargo test`
//! lists it as ignored and runs nothing. `cargo copilot-eval` runs each one with
//! `--exact <test id> --ignored`; `cargo nextest run --run-ignored only` and
//! `cargo test -- --ignored` run them too (live unless `COPILOT_EVAL_MODE=replay`).

pub mod checks;
pub mod compare;
mod config_errors;
mod context;
mod describe;
pub mod judge;
mod modes;
mod offline;
mod orphan;
mod provenance;
mod record;
mod replay;
mod resume;
mod side_file;
mod skill_case;
mod trigger;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use futures::FutureExt;

use crate::eval::{CopilotEval, CopilotEvalBuilder};

pub use crate::report::Trigger;
pub use checks::{Check, Control, Finding, Times};
pub use compare::{Comparison, Side, Verdict};
pub use context::EvalContext;
pub use describe::{ENV_DESCRIBE_FILE, TestDescription};
pub use judge::{JudgeError, Judgement, Material, Rubric};
pub use orphan::ENV_RUNNER_PID;
pub use record::{
    ENV_CASSETTE_ROOT, ENV_LIVE_BASE_URL, ENV_RECORD, ENV_RECORD_STRICT, RecordPolicy,
    cassette_root, is_ci, record_strict, recording_refused, recording_summary,
};
pub use resume::ResumeOptions;
pub use side_file::{EVIDENCE_FORMAT, EvidenceStatus, SideFileError, TestEvidence, TrialAsk};
pub use skill_case::{SkillCase, SkillCaseSpec};
pub use trigger::{TriggerCase, TriggerCaseSpec};

/// Variable the runner gives each test process of a model matrix run with `--models a,b`: the
/// model id this process runs its eval on, over the attribute's `model` or `models`
/// ([`TestConfig::model`]).
pub const ENV_MODEL: &str = "COPILOT_EVAL_MODEL";

/// The module of one model's test in a model matrix (`models = [..]`): `model_` and `model`
/// with every character other than an ASCII letter or digit as `_`, lower-cased
/// (`claude-sonnet-4.5` -> `model_claude_sonnet_4_5`). The attribute names the module with the
/// same function; the runner reads it to find a function's model tests.
pub fn model_segment(model: &str) -> String {
    let mut segment = String::from("model_");
    segment.extend(model.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        }
    }));
    segment
}

/// Variable the runner gives each test process of an eval run in trials (`cargo copilot-eval
/// --trials N`): its trial, from 1; read by [`EvalContext::trial`].
pub const ENV_TRIAL: &str = "COPILOT_EVAL_TRIAL";
/// Variable the runner gives each test process of an eval run in trials: the trials asked (N).
pub const ENV_TRIALS: &str = "COPILOT_EVAL_TRIALS";

/// Which trial of its eval this test process is, from [`ENV_TRIAL`] and [`ENV_TRIALS`]: `None`
/// when either is unset or not a number, or the trial is not in `1..=trials`.
pub fn trial_from_env() -> Option<crate::report::TrialOf> {
    let read = |name| std::env::var(name).ok()?.parse::<u32>().ok();
    let trial = read(ENV_TRIAL)?;
    let trials = read(ENV_TRIALS)?;
    (1..=trials)
        .contains(&trial)
        .then_some(crate::report::TrialOf { trial, trials })
}

/// Variable the runner gives each test process of an eval's ablated side (`cargo copilot-eval
/// --ablate skills`): the kinds of input its runs go without, separated by commas
/// (`skills,mcp`; [`Ablate::parse_list`](crate::eval::Ablate::parse_list)). Each run of the
/// test then runs [`CopilotEval::without`](crate::CopilotEval::without) them, in a runtime home
/// without them, and replays or records its own cassette (`<test>.ablate-skills.yaml`).
pub const ENV_ABLATE: &str = "COPILOT_EVAL_ABLATE";

/// The kinds of input this test process goes without, from [`ENV_ABLATE`]: empty when it is
/// unset, empty or names no known kind (an unknown one is left out; the runner only gives known
/// ones).
pub fn ablation_from_env() -> Vec<crate::eval::Ablate> {
    let text = std::env::var(ENV_ABLATE).unwrap_or_default();
    text.split(',')
        .filter_map(|entry| crate::eval::Ablate::parse(entry).ok())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Environment variable selecting where model requests go: `live` (default), `replay` or
/// `record` (with [`ENV_RECORD`]).
pub const ENV_MODE: &str = "COPILOT_EVAL_MODE";
/// Environment variable naming the evidence side file a test writes (see the module docs).
pub const ENV_EVIDENCE_FILE: &str = "COPILOT_EVAL_EVIDENCE_FILE";
/// Last segment of the libtest name of every generated eval test: `function::__copilot_eval`.
/// The runner selects eval tests by it.
pub const TEST_MARKER: &str = "__copilot_eval";
/// The `#[ignore]` reason of every generated eval test.
pub const IGNORE_REASON: &str =
    "copilot eval: run it with cargo copilot-eval (plain cargo test skips it)";
/// Default `timeout_s` of a test when the attribute sets none (seconds): the engine's default.
pub const DEFAULT_TEST_TIMEOUT_S: f64 = crate::eval::DEFAULT_TIMEOUT_S;

/// Why the environment names no mode an eval test can run in ([`Mode::from_env`],
/// [`RecordPolicy::from_env`]) or no live target (`COPILOT_EVAL_LIVE_BASE_URL`). The test records
/// the message as its setup error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// [`ENV_MODE`] holds something other than `live`, `replay` or `record`.
    #[error("{ENV_MODE}={value:?} is not one of: live, replay, record")]
    UnknownMode {
        /// The variable's value, trimmed.
        value: String,
    },
    /// [`ENV_RECORD`] holds something other than `missing`, `all` or `judges`.
    #[error("{ENV_RECORD}={value:?} is not one of: missing, all, judges")]
    UnknownRecordPolicy {
        /// The variable's value, trimmed.
        value: String,
    },
    /// `record` under CI: cassettes are read-only there ([`recording_refused`]).
    #[error("{}", record::RECORDING_REFUSED)]
    RecordingRefused,
    /// [`ENV_LIVE_BASE_URL`] is not a loopback `http://` URL.
    #[error(
        "{ENV_LIVE_BASE_URL}={url:?} is not a loopback http:// URL; it only points live runs at a local model server for testing"
    )]
    NotLoopback {
        /// The variable's value, trimmed.
        url: String,
    },
}

/// Where an eval test's model requests go, from [`ENV_MODE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// GitHub Copilot, with the user's authentication (may consume premium requests).
    Live,
    /// Offline, against the test's cassette.
    Replay,
    /// Live, recording each run's cassette (`cargo copilot-eval --record`); with
    /// [`RecordPolicy::Missing`], a run whose cassette exists replays it instead.
    Record(RecordPolicy),
}

impl Mode {
    /// The mode named by `COPILOT_EVAL_MODE`: unset or empty is `live`; `record` takes its
    /// policy from [`ENV_RECORD`].
    ///
    /// Errors: any value other than `live`, `replay` or `record` (the message names them); an
    /// invalid [`ENV_RECORD`]; `record` under CI ([`recording_refused`]).
    pub fn from_env() -> Result<Mode, ModeError> {
        match std::env::var(ENV_MODE).ok().as_deref().map(str::trim) {
            None | Some("") | Some("live") => Ok(Mode::Live),
            Some("replay") => Ok(Mode::Replay),
            Some("record") => match is_ci() {
                true => Err(ModeError::RecordingRefused),
                false => RecordPolicy::from_env().map(Mode::Record),
            },
            Some(other) => Err(ModeError::UnknownMode {
                value: other.to_owned(),
            }),
        }
    }

    /// `live`, `replay` or `record`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Replay => "replay",
            Self::Record(_) => "record",
        }
    }
}

/// The eval settings of one test: a function applied to a fresh
/// [`CopilotEvalBuilder`] by [`EvalContext::eval`].
///
/// `#[copilot_eval(...)]` emits one per test, a closure holding one builder call per eval key
/// of the attribute (`model = "m", max_tool_calls = 3` becomes
/// `|builder| builder.model("m").max_tool_calls(3u32)`); the keys and the builder methods they
/// call are listed in `copilot-eval-macros/src/keys.rs`.
pub type Configure = fn(CopilotEvalBuilder) -> CopilotEvalBuilder;

/// A [`Configure`] that sets nothing.
fn no_settings(builder: CopilotEvalBuilder) -> CopilotEvalBuilder {
    builder
}

/// What `#[copilot_eval(...)]` says about one test: its identity (from `module_path!()`,
/// `CARGO_MANIFEST_DIR` and the function's name), its eval settings ([`Configure`], applied by
/// [`EvalContext::eval`]) and its cassette.
///
/// The eval settings are validated once, by
/// [`CopilotEvalBuilder::build`](crate::eval::CopilotEvalBuilder::build) (the attribute checks
/// its literals at compile time).
#[derive(Debug, Clone)]
pub struct TestConfig {
    function: &'static str,
    module_path: &'static str,
    manifest_dir: &'static str,
    configure: Configure,
    cassette: Option<&'static str>,
    case: Option<&'static str>,
    source: Option<(&'static str, u32)>,
    /// The model of the test's module in a model matrix (`models = [..]`).
    matrix_model: Option<&'static str>,
    /// The model the runner asks for (`--models`, [`ENV_MODEL`]), over `matrix_model`.
    runner_model: Option<&'static str>,
    /// The entry of a skill's `evals/evals.json` this test runs (`skill_evals = ".."`).
    skill_case: Option<SkillCaseSpec>,
    /// The query of a skill's trigger set this test runs (`skill_triggers = ".."`).
    trigger_case: Option<TriggerCaseSpec>,
    /// `trials = N` of the attribute.
    trials: Option<u32>,
    /// `min_pass_rate = F` of the attribute.
    min_pass_rate: Option<f64>,
}

impl TestConfig {
    /// A test named `function`, generated in the module `module_path` (the value of
    /// `module_path!()` inside the generated test module, i.e. ending in `::function`), in the
    /// package at `manifest_dir` (`env!("CARGO_MANIFEST_DIR")`). No eval setting, no cassette
    /// key.
    pub const fn new(
        function: &'static str,
        module_path: &'static str,
        manifest_dir: &'static str,
    ) -> Self {
        Self {
            function,
            module_path,
            manifest_dir,
            configure: no_settings,
            cassette: None,
            case: None,
            source: None,
            matrix_model: None,
            runner_model: None,
            skill_case: None,
            trigger_case: None,
            trials: None,
            min_pass_rate: None,
        }
    }

    /// `trials = N` (N >= 1): the trials the eval asks for. Under `cargo copilot-eval` without
    /// `--trials`, the test process is trial 1 of N ([`trial`](Self::trial)) and the runner
    /// runs trials 2 to N after it, each its own test process; `--trials` on the command
    /// overrides it. Run without the runner (`cargo test -- --ignored`, nextest), the test runs
    /// once, as trial 1 of N. 0 is taken as 1 (the attribute refuses it).
    pub const fn trials(mut self, trials: u32) -> Self {
        self.trials = Some(if trials == 0 { 1 } else { trials });
        self
    }

    /// `min_pass_rate = F`, a fraction in (0, 1]: the eval passes when at least this share of
    /// its trials that reached a verdict passed (none in `error`); the runner's
    /// `--min-pass-rate` overrides it. Without it every trial must pass. Only an eval run in
    /// trials is judged by it.
    pub const fn min_pass_rate(mut self, rate: f64) -> Self {
        self.min_pass_rate = Some(rate);
        self
    }

    /// What the attribute asks of the eval's trials, for the runner
    /// ([`TestEvidence::trial_ask`]); `None` when it gives neither `trials` nor
    /// `min_pass_rate`.
    pub fn trial_ask(&self) -> Option<TrialAsk> {
        (self.trials.is_some() || self.min_pass_rate.is_some()).then(|| TrialAsk {
            trials: self.trials.unwrap_or(1),
            min_pass_rate: self.min_pass_rate,
        })
    }

    /// Which trial of its eval this test process is: the runner's ([`trial_from_env`]) when it
    /// gives one, `None` when the runner gives one trial (`--trials 1`); else, when the
    /// attribute asks for N > 1 trials ([`trials`](Self::trials)), trial 1 of N; else `None`
    /// (the eval runs once).
    pub fn trial(&self) -> Option<crate::report::TrialOf> {
        match trial_from_env() {
            Some(trial) => (trial.trials > 1).then_some(trial),
            None => self
                .trials
                .filter(|&trials| trials > 1)
                .map(|trials| crate::report::TrialOf { trial: 1, trials }),
        }
    }

    /// One model of a model matrix (`models = [..]` under the attribute): the test is generated
    /// in the module `<function>[::<label>]::<model_segment(model)>`; its eval runs on `model`
    /// (set over the attribute's eval keys), is named `function@model` (`function::label@model`
    /// with a case) and replays its own cassette (`<function>@<model>.yaml`).
    pub const fn matrix_model(mut self, model: &'static str) -> Self {
        self.matrix_model = Some(model);
        self
    }

    /// The model the runner asks for (`cargo copilot-eval --models`, given to the test process
    /// as [`ENV_MODEL`]), over the attribute's `model` or `models`: the test's eval runs on it and
    /// is named and replayed as for [`matrix_model`](Self::matrix_model); the libtest name stays
    /// the generated test's ([`test_id`](Self::test_id)).
    pub const fn runner_model(mut self, model: &'static str) -> Self {
        self.runner_model = Some(model);
        self
    }

    /// [`runner_model`](Self::runner_model) from [`ENV_MODEL`] when it is set and not blank.
    pub(crate) fn with_env_model(self) -> Self {
        match std::env::var(ENV_MODEL) {
            Ok(model) if !model.trim().is_empty() => {
                // Read once per test process: the one leaked string lives as long as the test.
                let model: &'static str = Box::leak(model.trim().to_owned().into_boxed_str());
                self.runner_model(model)
            }
            _ => self,
        }
    }

    /// The model of the test's cell of a model matrix: the runner's
    /// ([`runner_model`](Self::runner_model)), else the attribute's `models` entry
    /// ([`matrix_model`](Self::matrix_model)); `None` outside a model matrix.
    pub fn model(&self) -> Option<&'static str> {
        self.runner_model.or(self.matrix_model)
    }

    /// `@model` for a test of a model matrix, else nothing.
    fn model_suffix(&self) -> String {
        self.model().map(|m| format!("@{m}")).unwrap_or_default()
    }

    /// One case of a case matrix (`#[case::label(...)]` under the attribute): the test is
    /// `function::label`, generated in the module `module_path` ending in `::function::label`;
    /// its eval is named `function::label` and its cassette is
    /// `<...>/<function>/<label>.yaml`.
    pub const fn case(mut self, label: &'static str) -> Self {
        self.case = Some(label);
        self
    }

    /// One entry of a skill's `evals/evals.json` (`skill_evals = "skills/x"` under the
    /// attribute, which also gives the entry's [`case`](Self::case) label `eval_<id>_<slug>`):
    /// its `files` are copied into the test's working directory before the test starts, and
    /// [`EvalContext::skill_case`] hands it to the test.
    pub const fn skill_case(mut self, case: SkillCaseSpec) -> Self {
        self.skill_case = Some(case);
        self
    }

    /// The skill eval entry of the test ([`skill_case`](Self::skill_case)), when it has one.
    pub fn skill_case_spec(&self) -> Option<&SkillCaseSpec> {
        self.skill_case.as_ref()
    }

    /// One query of a skill's trigger set (`skill_triggers = "skills/x"` under the attribute,
    /// which also gives the query's [`case`](Self::case) label `invoke_<n>_<slug>` or
    /// `dormant_<n>_<slug>`): [`EvalContext::trigger_case`] hands it to the test, and the test
    /// fails when its trigger check did not hold or was never made.
    pub const fn trigger_case(mut self, case: TriggerCaseSpec) -> Self {
        self.trigger_case = Some(case);
        self
    }

    /// The trigger-set query of the test ([`trigger_case`](Self::trigger_case)), when it has
    /// one.
    pub fn trigger_case_spec(&self) -> Option<&TriggerCaseSpec> {
        self.trigger_case.as_ref()
    }

    /// The trigger check the test owes ([`trigger_case`](Self::trigger_case)), as its record
    /// keeps it; `None` for other tests.
    pub fn trigger_query(&self) -> Option<crate::report::TriggerQueryRecord> {
        self.trigger_case
            .as_ref()
            .map(|spec| crate::report::TriggerQueryRecord {
                skill: spec.skill.to_owned(),
                number: spec.number,
                expected: if spec.should_trigger {
                    Trigger::Invoke
                } else {
                    Trigger::Dormant
                },
            })
    }

    /// Where the eval function is written: `file` as `file!()` gives it (relative to the
    /// workspace root when cargo builds a workspace member) and the 1-based `line` of the
    /// function's name. The attribute sets it; reports and CI annotations point there.
    pub const fn source(mut self, file: &'static str, line: u32) -> Self {
        self.source = Some((file, line));
        self
    }

    /// Where the eval function is written ([`source`](Self::source)), when known.
    pub fn source_location(&self) -> Option<crate::report::SourceLocation> {
        self.source
            .map(|(file, line)| crate::report::SourceLocation {
                file: file.to_owned(),
                line,
            })
    }

    /// The case label, for a test of a case matrix.
    pub fn case_label(&self) -> Option<&'static str> {
        self.case
    }

    /// The eval's default name: the function's name, or `function::label` for a case; in a
    /// model matrix followed by `@model` ([`model`](Self::model)): `function@gpt-5`.
    pub fn eval_name(&self) -> String {
        let name = match self.case {
            Some(label) => format!("{}::{label}", self.function),
            None => self.function.to_owned(),
        };
        format!("{name}{}", self.model_suffix())
    }

    /// The test's eval settings: [`EvalContext::eval`] applies `configure` to a builder holding
    /// `name` = the function's name and `working_directory` = the test's working directory
    /// (settings made by `configure` win). Replaces an earlier `configure`.
    pub const fn configure(mut self, configure: Configure) -> Self {
        self.configure = configure;
        self
    }
    /// `cassette = "..."`: the cassette path, relative to the package root (or absolute).
    pub const fn cassette(mut self, path: &'static str) -> Self {
        self.cassette = Some(path);
        self
    }

    /// The test function's name.
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// The module segments of the test function, crate first (the generated test module
    /// removed): `["evals"]` for a function at the top of `tests/evals.rs`.
    fn module_segments(&self) -> Vec<&'static str> {
        let mut segments: Vec<&'static str> = self.module_path.split("::").collect();
        if let Some(model) = self.matrix_model
            && segments.len() > 2
            && segments.last().copied() == Some(model_segment(model).as_str())
        {
            segments.pop();
        }
        if let Some(label) = self.case
            && segments.len() > 2
            && segments.last() == Some(&label)
        {
            segments.pop();
        }
        if segments.len() > 1 && segments.last() == Some(&self.function) {
            segments.pop();
        }
        segments
    }

    /// The path of the test function (and case) without the crate: `module::function`, or
    /// just `function` at the top of a test crate; `function::label` for a case.
    fn function_path(&self) -> String {
        let segments = self.module_segments();
        let mut parts: Vec<&str> = segments.into_iter().skip(1).collect();
        parts.push(self.function);
        parts.extend(self.case);
        parts.join("::")
    }

    /// The full test path without the crate, as reports show it: `module::function`, or just
    /// `function` at the top of a test crate; in a model matrix followed by `@model`
    /// (`module::function::label@gpt-5`).
    pub fn test_path(&self) -> String {
        format!("{}{}", self.function_path(), self.model_suffix())
    }

    /// The name libtest knows the generated test by: the function's path, the model's module
    /// of a [`matrix_model`](Self::matrix_model) test, then `::__copilot_eval`
    /// (`evals::greets::model_gpt_5::__copilot_eval`).
    pub fn test_id(&self) -> String {
        match self.matrix_model {
            Some(model) => format!(
                "{}::{}::{TEST_MARKER}",
                self.function_path(),
                model_segment(model)
            ),
            None => format!("{}::{TEST_MARKER}", self.function_path()),
        }
    }

    /// The cassette this test replays: the `cassette` key resolved against the package root,
    /// else `<package>/tests/cassettes/<crate>/<modules...>/<function>.yaml` (for `tests/evals.rs`:
    /// `tests/cassettes/evals/<function>.yaml`; a case: `.../<function>/<label>.yaml`). With `COPILOT_EVAL_CASSETTE_ROOT` set
    /// ([`ENV_CASSETTE_ROOT`]), that folder takes the package root's place. In a model matrix
    /// each model has its own: `<function>@<model>.yaml` (`<function>/<label>@<model>.yaml`; a
    /// `cassette` key's file name gets `@<model>` before its extension).
    pub fn cassette_path(&self) -> PathBuf {
        self.cassette_path_in(cassette_root().as_deref())
    }

    /// [`cassette_path`](Self::cassette_path) with `root` (when given) in the package root's
    /// place.
    pub fn cassette_path_in(&self, root: Option<&Path>) -> PathBuf {
        let root = root.unwrap_or(Path::new(self.manifest_dir));
        let ablated = ablation_from_env();
        let mut suffix = self.model_suffix();
        if !ablated.is_empty() {
            suffix.push_str(&format!(".ablate-{}", crate::eval::Ablate::join(&ablated)));
        }
        match self.cassette {
            Some(path) => {
                let path = root.join(path);
                match (suffix.is_empty(), path.file_stem(), path.extension()) {
                    (false, Some(stem), extension) => {
                        let mut name = stem.to_os_string();
                        name.push(&suffix);
                        if let Some(extension) = extension {
                            name.push(".");
                            name.push(extension);
                        }
                        path.with_file_name(name)
                    }
                    _ => path,
                }
            }
            None => {
                let mut path = root.join("tests").join("cassettes");
                for segment in self.module_segments() {
                    path.push(segment);
                }
                match self.case {
                    Some(label) => {
                        path.push(self.function);
                        path.push(format!("{label}{suffix}.yaml"));
                    }
                    None => path.push(format!("{}{suffix}.yaml", self.function)),
                }
                path
            }
        }
    }

    /// The cassette of the test's run number `index` (0-based): [`cassette_path`](Self::cassette_path)
    /// for the first run, then the same path with `-2`, `-3`, ... before the extension
    /// (`creates_file-2.yaml`), so that a baseline and a treatment each replay their own
    /// recording.
    pub fn cassette_path_for_run(&self, index: usize) -> PathBuf {
        crate::cassette::run_cassette_path(&self.cassette_path(), index + 1)
    }

    /// The cassette of the test's run number `index` (0-based) in `trial` of its eval
    /// (`--trials N`), in `mode`: each trial records its own cassette,
    /// [`trial_cassette_path`](crate::cassette::trial_cassette_path) (`creates_file.yaml` ->
    /// `creates_file/trial-2.yaml`; a later run of the trial `trial-2-2.yaml`), and a replay
    /// reads it when the eval has any trial cassette
    /// ([`recorded_trials`](crate::cassette::recorded_trials)). Otherwise (no trial, or a
    /// replay of an eval without trial cassettes: the one cassette in every trial)
    /// [`cassette_path_for_run`](Self::cassette_path_for_run).
    pub fn cassette_path_in_trial(
        &self,
        index: usize,
        trial: Option<crate::report::TrialOf>,
        mode: Mode,
    ) -> PathBuf {
        let first = self.cassette_path();
        match trial {
            Some(trial)
                if matches!(mode, Mode::Record(_))
                    || !crate::cassette::recorded_trials(&first).is_empty() =>
            {
                crate::cassette::run_cassette_path(
                    &crate::cassette::trial_cassette_path(&first, trial.trial),
                    index + 1,
                )
            }
            _ => self.cassette_path_for_run(index),
        }
    }

    /// The test's deadline outside runs: the `timeout_s` of its eval settings, else (none set,
    /// or settings that do not build) [`DEFAULT_TEST_TIMEOUT_S`].
    pub fn test_timeout(&self) -> Duration {
        let seconds = (self.configure)(CopilotEval::builder())
            .build()
            .map(|eval| eval.timeout_s())
            .unwrap_or(DEFAULT_TEST_TIMEOUT_S);
        Duration::from_secs_f64(seconds)
    }
}

/// What an eval test function may return: `()`, or `Result<(), E>` with `E: Debug` (an `Err`
/// fails the test with its debug text, like libtest).
pub trait TestReturn {
    /// `None` when the test passed, else the failure message.
    fn failure(self) -> Option<String>;
}

impl TestReturn for () {
    fn failure(self) -> Option<String> {
        None
    }
}

impl<E: std::fmt::Debug> TestReturn for Result<(), E> {
    fn failure(self) -> Option<String> {
        self.err().map(|e| format!("the test returned Err: {e:?}"))
    }
}

/// Run one eval test: create its [`EvalContext`] (fresh working directory, evidence file),
/// run `test` on a fresh multi-threaded tokio runtime, catch its panic, record the outcome,
/// keep the working directory when it failed (printing its path), remove it when it passed,
/// and finally fail the libtest test the way the test failed (the original panic is resumed).
///
/// Called by the code `#[copilot_eval]` generates; callable by hand as well.
///
/// With [`ENV_DESCRIBE_FILE`] set, the test runs nothing: it appends its
/// [`TestDescription`] to that file and returns (the runner asks so for tests whose evidence
/// it lacks).
///
/// Panics: when the test failed (to fail the libtest test), and when the context cannot be set
/// up (no working directory, an invalid `COPILOT_EVAL_MODE`), which is recorded in the evidence
/// as a setup error first.
pub fn run_test<F, Fut>(config: TestConfig, test: F)
where
    F: FnOnce(EvalContext) -> Fut,
    Fut: Future,
    Fut::Output: TestReturn,
{
    if let Some(path) = describe::describe_file() {
        // The runner asks what the test is, not to run it.
        return describe::describe(&config, &path);
    }
    run_test_in(EvalContext::new(config), test)
}

/// [`run_test`] with a context made beforehand.
pub(crate) fn run_test_in<F, Fut>(ctx: EvalContext, test: F)
where
    F: FnOnce(EvalContext) -> Fut,
    Fut: Future,
    Fut::Output: TestReturn,
{
    let test_ctx = ctx.clone();
    run_boxed_test(ctx, Box::pin(async move { test(test_ctx).await.failure() }))
}

/// The work of [`run_test_in`], not generic: the tokio runtime, the unwinding and the outcome
/// are compiled once in this crate, not in every test of a user's test binary
/// (docs/performance.md, "The edit loop"). `test` resolves to the test's failure message.
fn run_boxed_test(ctx: EvalContext, test: Pin<Box<dyn Future<Output = Option<String>> + '_>>) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => ctx.setup_failure(format!("cannot start a tokio runtime: {e}")),
    };
    let outcome = runtime.block_on(AssertUnwindSafe(test).catch_unwind());
    runtime.shutdown_timeout(Duration::from_secs(5));
    // A run that stopped otherwise than the test declared (`ctx.expect_stop`) fails the test,
    // and is named in the failure message of a test that failed anyway.
    let unmet = ctx.unmet_expected_stops();
    let with_unmet = |message: String| match &unmet {
        Some(unmet) => format!("{message}\n{unmet}"),
        None => message,
    };
    match outcome {
        Ok(returned) => match returned
            .map(with_unmet)
            .or(unmet.clone())
            .or_else(|| ctx.strict_script_failure())
            .or_else(|| ctx.expectations_failure())
            .or_else(|| ctx.trigger_case_failure())
        {
            None => ctx.finish(None),
            Some(message) => {
                ctx.finish(Some(message.clone()));
                panic!("{message}");
            }
        },
        Err(payload) => {
            ctx.finish(Some(with_unmet(panic_message(payload.as_ref()))));
            std::panic::resume_unwind(payload);
        }
    }
}

/// The text of a panic payload (`&str` or `String`), else a placeholder.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "the test panicked with a non-string payload".to_owned()
    }
}

#[cfg(test)]
mod tests;
