//! [`EvalContext`]: what an eval test function receives.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::side_file::{EVIDENCE_FORMAT, EvidenceStatus, TestEvidence};
use super::{ENV_EVIDENCE_FILE, Mode, ModeError, TestConfig};
use crate::eval::{CopilotEval, CopilotEvalBuilder, Prompt};
use crate::model_server::{ModelRequest, ScriptCatalog};
use crate::report::Property;
use crate::result::CopilotResult;
use crate::result::StopReason;
use crate::run::{RunOptions, TestFaults};

/// What a run whose test-only clock starts at its session or prompt adds to the deadline the
/// runner watches: the runtime's start, which that clock does not count, may take this long (as
/// long as the runner gives a test process to write its first evidence).
const CLOCK_ALLOWANCE: Duration = Duration::from_secs(60);

/// The context of one eval test: a fresh working directory, an eval builder pre-filled from the
/// attribute, [`run`](Self::run) (the engine, recording each run's evidence for the artifacts)
/// and [`record_property`](Self::record_property) for the test's own observations.
///
/// Cheap to clone (a shared handle); every clone is the same test.
#[derive(Clone)]
pub struct EvalContext {
    inner: Arc<Inner>,
}

struct Inner {
    config: TestConfig,
    mode: Result<Mode, ModeError>,
    workdir: Mutex<Option<tempfile::TempDir>>,
    workdir_path: PathBuf,
    evidence_file: Option<PathBuf>,
    evidence: Mutex<TestEvidence>,
    script: Mutex<Option<Arc<ScriptCatalog>>>,
    /// Every model request the loopback server of a scripted run received, runs in order.
    model_requests: Mutex<Vec<ModelRequest>>,
    /// Every run's runtime home, kept until the test ends ([`super::resume`]).
    homes: super::resume::Homes,
    /// The stop reason later runs are expected to end with ([`EvalContext::expect_stop`]).
    expected_stop: Mutex<Option<StopReason>>,
    /// Faults later runs inject into their own machinery (test-only).
    faults: Mutex<Option<TestFaults>>,
    /// The package files and folders the test named with `package_path` (inputs of its runs).
    package_paths: Mutex<Vec<PathBuf>>,
    /// Set while a judge session runs ([`EvalContext::run_judge_session`]).
    judging: std::sync::atomic::AtomicBool,
    /// The invalid settings `build()` of this test's builders refused ([`super::config_errors`]).
    config_errors: super::config_errors::ConfigErrors,
}

impl std::fmt::Debug for EvalContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalContext")
            .field("test", &self.inner.config.test_path())
            .field("workdir", &self.inner.workdir_path)
            .field("mode", &self.inner.mode)
            .finish_non_exhaustive()
    }
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl EvalContext {
    /// Set up the context of the test described by `config`: read [`Mode::from_env`] and
    /// `COPILOT_EVAL_EVIDENCE_FILE`, create the working directory
    /// (`<temp>/copilot-eval-<function>-XXXXXX`), and write the first evidence.
    ///
    /// Panics (after recording a setup error in the evidence when possible): the working
    /// directory cannot be created, or `COPILOT_EVAL_MODE` holds an unknown value.
    pub fn new(config: TestConfig) -> EvalContext {
        super::orphan::watch_runner();
        let evidence_file = std::env::var_os(ENV_EVIDENCE_FILE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        Self::with_settings(config.with_env_model(), Mode::from_env(), evidence_file)
    }

    /// [`new`](Self::new) with the mode and evidence file given instead of read from the
    /// environment.
    pub(crate) fn with_settings(
        config: TestConfig,
        mode: Result<Mode, ModeError>,
        evidence_file: Option<PathBuf>,
    ) -> EvalContext {
        let workdir = tempfile::Builder::new()
            .prefix(&format!("copilot-eval-{}-", config.function()))
            .tempdir();
        let (workdir, workdir_error) = match workdir {
            Ok(dir) => (Some(dir), None),
            Err(e) => (
                None,
                Some(format!("cannot create a working directory: {e}")),
            ),
        };
        let workdir_path = workdir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        let evidence = TestEvidence {
            format: EVIDENCE_FORMAT.to_owned(),
            test_id: config.test_id(),
            name: config.test_path(),
            status: EvidenceStatus::Running,
            pid: std::process::id(),
            deadline_unix_ms: unix_ms(SystemTime::now() + config.test_timeout()),
            mode: mode
                .as_ref()
                .map(|m| m.as_str())
                .unwrap_or("invalid")
                .to_owned(),
            properties: Vec::new(),
            runs: Vec::new(),
            running: None,
            failure: None,
            setup_error: None,
            workdir: workdir.as_ref().map(|d| d.path().display().to_string()),
            workdir_kept: false,
            cassette: config
                .cassette_path_in_trial(0, config.trial(), mode.clone().unwrap_or(Mode::Live))
                .display()
                .to_string(),
            comparisons: Vec::new(),
            judges: Vec::new(),
            source: config.source_location(),
            model: config.model().map(str::to_owned),
            trial_ask: config.trial_ask(),
            triggers: Vec::new(),
            expectations: Vec::new(),
            trigger_query: config.trigger_query(),
            provenance: None,
            skill_eval: super::skill_case::skill_eval_record(&config),
        };
        let ctx = EvalContext {
            inner: Arc::new(Inner {
                config,
                mode: mode.clone(),
                workdir: Mutex::new(workdir),
                workdir_path,
                evidence_file,
                evidence: Mutex::new(evidence),
                script: Mutex::new(None),
                model_requests: Mutex::new(Vec::new()),
                homes: super::resume::Homes::new(),
                expected_stop: Mutex::new(None),
                faults: Mutex::new(None),
                package_paths: Mutex::new(Vec::new()),
                judging: std::sync::atomic::AtomicBool::new(false),
                config_errors: Default::default(),
            }),
        };
        ctx.save();
        if let Some(error) = workdir_error {
            ctx.setup_failure(error);
        }
        if let Some(spec) = ctx.inner.config.skill_case_spec()
            && let Err(error) = super::skill_case::copy_files(
                spec,
                Path::new(ctx.inner.config.manifest_dir),
                ctx.workdir(),
            )
        {
            ctx.setup_failure(error);
        }
        if let Err(error) = mode {
            ctx.setup_failure(error.to_string());
        }
        ctx
    }

    /// The test's fresh working directory (created empty for this test; kept and printed when
    /// the test fails, removed when it passes). [`eval`](Self::eval) points the session at it.
    pub fn workdir(&self) -> &Path {
        &self.inner.workdir_path
    }

    /// Which trial of its eval this test process is, when the eval runs in trials: under
    /// `cargo copilot-eval --trials N` (from `COPILOT_EVAL_TRIAL` and `COPILOT_EVAL_TRIALS`),
    /// or with the attribute's `trials = N` (the first test process of the eval is trial 1 of
    /// N, the runner starts the others with the variables); `None` when it runs once
    /// ([`TestConfig::trial`]). A script may vary by it, e.g. to test how a suite reports a
    /// flaky eval.
    pub fn trial(&self) -> Option<crate::report::TrialOf> {
        self.inner.config.trial()
    }

    /// The model this test runs its eval on, as [`eval`](Self::eval) sets it: in a model
    /// matrix, its cell's model (the runner's `--models` entry, else the attribute's `models`
    /// entry); else the attribute's `model`; `None` when neither is given (the runtime's
    /// default). A scripted test may vary its script by it, to test how a suite reports one
    /// model against another.
    pub fn model(&self) -> Option<String> {
        let config = &self.inner.config;
        match config.model() {
            Some(model) => Some(model.to_owned()),
            None => (config.configure)(CopilotEval::builder())
                .build()
                .ok()
                .and_then(|eval| eval.model().map(str::to_owned)),
        }
    }

    /// `path` in the test's package: the package root (the folder of its `Cargo.toml`) joined
    /// with `path`, in place of `concat!(env!("CARGO_MANIFEST_DIR"), "/...")` (an absolute
    /// `path` stays as it is). The file (or every file of the folder) is an input of the test's
    /// later runs: its hash is in the results' `provenance` (kind `test_file`).
    pub fn package_path(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = Path::new(self.inner.config.manifest_dir).join(path);
        let mut named = self.inner.package_paths.lock().expect("package paths lock");
        if !named.contains(&path) {
            named.push(path.clone());
        }
        path
    }

    /// The test path (`module::function`).
    pub fn test_name(&self) -> String {
        self.inner.config.test_path()
    }

    /// The mode from `COPILOT_EVAL_MODE`.
    pub fn mode(&self) -> Mode {
        self.inner.mode.clone().unwrap_or(Mode::Live)
    }

    /// The cassette this test replays in replay mode (see [`TestConfig::cassette_path`]).
    pub fn cassette_path(&self) -> PathBuf {
        self.inner.config.cassette_path()
    }

    /// An eval builder pre-filled from the attribute: `name` = the function's name and
    /// `working_directory` = [`workdir`](Self::workdir), then the attribute's eval keys given
    /// (those whose target is the builder in `copilot-eval-macros/src/keys.rs`; docs/attribute.md
    /// lists them; see [`TestConfig::configure`]); in a model
    /// matrix (`models = [..]`, `--models`), its cell's model ([`model`](Self::model)) over
    /// them, with the name `function@model`. Add what
    /// the test needs and call `build()`. Relative paths given to it (`skill_directory`, an MCP
    /// server's `working_directory`) are resolved against the package root
    /// ([`base_directory`](crate::eval::CopilotEvalBuilder::base_directory)).
    pub fn eval(&self) -> CopilotEvalBuilder {
        let config = &self.inner.config;
        let builder = CopilotEval::builder()
            .package_root(config.manifest_dir)
            .name(config.eval_name())
            .working_directory(self.workdir());
        let mut builder = (config.configure)(builder);
        let inner = Arc::downgrade(&self.inner);
        builder.on_config_error = Some(Arc::new(move |error, at| {
            if let Some(inner) = inner.upgrade() {
                inner.config_errors.note(error, at);
            }
        }));
        match config.model() {
            Some(model) => builder.model(model),
            None => builder,
        }
    }

    /// Script the model for this test's next runs: each later [`run`](Self::run) starts a
    /// loopback [`ModelServer`](crate::model_server::ModelServer) that answers with the
    /// script's replies, in order, continuing where the previous run stopped. Scripted runs are
    /// offline in every mode (no cassette is read); their run records say `scripted`.
    ///
    /// `catalog` is a [`Script`](crate::model_server::Script) (one model: the eval's `model`,
    /// else [`DEFAULT_MODEL`](crate::model_server::DEFAULT_MODEL)) or a [`ScriptCatalog`] of
    /// several models, each answered by its own script (a custom agent on another model). Before
    /// the prompt, a custom agent whose `model` the catalog lacks is a warning in the result's
    /// `warnings` (the runtime would fail its dispatch, see
    /// [`StopReason::ModelUnavailable`](crate::StopReason::ModelUnavailable)). Replies left
    /// unused when the test ends are a warning in the last run record, or a test failure when
    /// the script is [`strict`](crate::model_server::Script::strict).
    ///
    /// What reached the model is in [`model_requests`](Self::model_requests).
    pub fn offline(&self, catalog: impl Into<ScriptCatalog>) {
        *self.inner.script.lock().expect("script lock") = Some(Arc::new(catalog.into()));
    }

    /// Every model request the scripted model received in this test's runs so far, in arrival
    /// order (runs in order): the conversation as sent (system prompt, user messages, tool
    /// results), the tools offered, the model asked for and the interaction type (subagent
    /// requests say `conversation-subagent`, [`ModelRequest::is_subagent`]). Use it to assert
    /// what reached the model, e.g. that a canary string never did
    /// ([`ModelRequest::mentions`]) or which tools a subagent was offered. Empty for runs that
    /// were not scripted ([`offline`](Self::offline)).
    pub fn model_requests(&self) -> Vec<ModelRequest> {
        self.inner
            .model_requests
            .lock()
            .expect("requests lock")
            .clone()
    }

    /// Declare that this test's later runs are expected to end with `reason`, for a test whose
    /// point is a stop: a guard, a budget, an audit failure, a stale cassette. Applies to every
    /// [`run`](Self::run), [`run_turns`](Self::run_turns), resume and comparison run started
    /// after it, until the next call (or [`clear_expected_stop`](Self::clear_expected_stop));
    /// each of those runs records it as its `expected_stop` in the artifacts.
    ///
    /// What it changes:
    /// - a run that ends on an infrastructure stop (a reason whose [`StopReason::class`] is
    ///   [`StopClass::Infrastructure`](crate::StopClass::Infrastructure), which lists them)
    ///   makes the runner report the test as an infrastructure `error`, even when its own
    ///   checks passed, **unless** that stop is the one declared here;
    /// - a run that ends with another stop than the declared one fails the test when it ends
    ///   (`run N (eval) was expected to stop with X (ctx.expect_stop) but stopped with Y`), even
    ///   when its own checks passed (the failure message of a test that failed anyway gets the
    ///   same line).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// use copilot_eval_core::StopReason;
    /// let eval = ctx.eval().audit_requests(true).build().unwrap();
    /// ctx.expect_stop(StopReason::RequestAuditError);
    /// let result = ctx.run(&eval, "Describe this image.").await;
    /// assert_eq!(result.stop_reason, StopReason::RequestAuditError);
    /// # }
    /// ```
    pub fn expect_stop(&self, reason: StopReason) {
        *self.inner.expected_stop.lock().expect("expected stop lock") = Some(reason);
    }

    /// Undo [`expect_stop`](Self::expect_stop): later runs have no expected stop.
    pub fn clear_expected_stop(&self) {
        *self.inner.expected_stop.lock().expect("expected stop lock") = None;
    }

    /// Test-only: later runs break parts of their own machinery ([`TestFaults`]), as
    /// [`RunOptions::test_faults`] does for a run started by hand.
    #[doc(hidden)]
    pub fn test_faults(&self, faults: TestFaults) {
        *self.inner.faults.lock().expect("faults lock") = Some(faults);
    }

    /// The line failing the test for each run that stopped otherwise than its declared
    /// [`expect_stop`](Self::expect_stop), joined with new lines; `None` when there is none.
    pub(crate) fn unmet_expected_stops(&self) -> Option<String> {
        let evidence = self.inner.evidence.lock().expect("evidence lock");
        let lines: Vec<String> = evidence
            .runs
            .iter()
            .enumerate()
            .filter_map(|(i, run)| {
                run.unmet_expected_stop().map(|expected| {
                    format!(
                        "run {} ({}) was expected to stop with {expected} (ctx.expect_stop) but stopped with {}{}",
                        i + 1,
                        run.eval_name,
                        run.stop_reason,
                        run.error
                            .as_deref()
                            .map(|e| format!(": {e}"))
                            .unwrap_or_default()
                    )
                })
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// Record a JSON-compatible observation of the test's own checks (written to the artifacts
    /// as `properties`, in order; repeated names are kept).
    ///
    /// Panics: `value` cannot be represented as JSON (e.g. a map with non-string keys).
    pub fn record_property(&self, name: impl Into<String>, value: impl Serialize) {
        let name = name.into();
        let value = match serde_json::to_value(value) {
            Ok(v) => v,
            Err(e) => panic!("record_property({name:?}): the value is not JSON-compatible: {e}"),
        };
        self.inner
            .evidence
            .lock()
            .expect("evidence lock")
            .properties
            .push(Property { name, value });
        self.save();
    }

    /// Run `eval` on `prompt` once (no retry) and record the run for the artifacts. `prompt` is a
    /// `&str`, a `String` or a [`Prompt`] with attachments (paths relative to
    /// [`workdir`](Self::workdir)) and an agent mode; its options are in the result's `prompts`
    /// and the run record's `prompt_options`. A missing attachment ends the run with
    /// `execution_error` naming the path, before the runtime starts. Model
    /// requests go to the script given to [`offline`](Self::offline), else to the test's
    /// cassette in replay mode, else live (see the module documentation).
    ///
    /// While the run lasts, the test's deadline is the run's start plus the eval's `timeout_s`.
    ///
    /// In replay mode the first run of the test replays [`cassette_path`](Self::cassette_path)
    /// (`<test>.yaml`), the second `<test>-2.yaml`, and so on: each run has its own recording.
    /// In trials (`--trials N`), trial K records `<test>/trial-K.yaml` (its second run
    /// `trial-K-2.yaml`) and replays it when the eval has trial cassettes
    /// ([`TestConfig::cassette_path_in_trial`]).
    ///
    /// In record mode the run replays its existing cassette (policy `missing`) or runs live
    /// while its session is recorded, and the cassette is written when the run completed; the
    /// run record then has a `recording`.
    ///
    /// Panics (recorded as a setup error, so the runner reports the test as an infrastructure
    /// `error`): replay mode and the cassette is missing or cannot be loaded; record mode and an
    /// existing cassette cannot be loaded, or a completed run's recording cannot be made into a
    /// cassette or written; `COPILOT_EVAL_LIVE_BASE_URL` is not a loopback URL.
    pub async fn run(&self, eval: &CopilotEval, prompt: impl Into<Prompt>) -> CopilotResult {
        self.run_prompts(eval, vec![prompt.into()]).await
    }

    /// [`run`](Self::run) as a judge session: record mode's `judges` policy records it again
    /// (`--record=judges`).
    pub(super) async fn run_judge_session(
        &self,
        eval: &CopilotEval,
        prompt: String,
    ) -> CopilotResult {
        use std::sync::atomic::Ordering::SeqCst;
        self.inner.judging.store(true, SeqCst);
        let result = self.run(eval, prompt).await;
        self.inner.judging.store(false, SeqCst);
        result
    }

    /// Run `eval` on several prompts in ONE session (a conversation): each prompt is sent once
    /// the previous turn went idle; after a `session.error` no further prompt is sent (see
    /// [`run_turns`](crate::run_turns)). The whole conversation is one run: one result (read
    /// each prompt's answer and tool calls with
    /// [`CopilotResult::prompt_turns`]), one run record in the artifacts (its `prompts`, and
    /// each message's `prompt` number in `turns`), one cassette (`<test>.yaml` for the test's
    /// first run, as [`run`](Self::run)), recorded and replayed as one session. `timeout_s`
    /// bounds all turns together. Each prompt is a `&str`, a `String` or a [`Prompt`] (with its
    /// own attachments and mode). Otherwise as [`run`](Self::run).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// let eval = ctx.eval().build().unwrap();
    /// let result = ctx
    ///     .run_turns(&eval, ["Create notes.txt saying hi.", "What did you write?"])
    ///     .await;
    /// let turns = result.prompt_turns();
    /// assert_eq!(turns[1].prompt, "What did you write?");
    /// # }
    /// ```
    ///
    /// Panics: as [`run`](Self::run); also when `prompts` is empty (a mistake in the test:
    /// nothing would be sent).
    pub async fn run_turns<I, S>(&self, eval: &CopilotEval, prompts: I) -> CopilotResult
    where
        I: IntoIterator<Item = S>,
        S: Into<Prompt>,
    {
        let prompts = self.some_prompts("ctx.run_turns", eval, prompts);
        self.run_prompts(eval, prompts).await
    }

    /// `prompts` as a list, or the test's setup failure when there is none (`call` names the
    /// method in the message: nothing would be sent).
    pub(crate) fn some_prompts<I, S>(
        &self,
        call: &str,
        eval: &CopilotEval,
        prompts: I,
    ) -> Vec<Prompt>
    where
        I: IntoIterator<Item = S>,
        S: Into<Prompt>,
    {
        let prompts: Vec<Prompt> = prompts.into_iter().map(Into::into).collect();
        if prompts.is_empty() {
            self.setup_failure(format!(
                "{call}({:?}, ..) was given no prompt; pass at least one",
                eval.name()
            ));
        }
        prompts
    }

    /// The work of [`run`](Self::run) and [`run_turns`](Self::run_turns): `prompts` holds at
    /// least one prompt.
    async fn run_prompts(&self, eval: &CopilotEval, prompts: Vec<Prompt>) -> CopilotResult {
        self.run_prompts_with(eval, prompts, None).await
    }

    /// The runtime homes of the test's runs.
    pub(super) fn homes(&self) -> &super::resume::Homes {
        &self.inner.homes
    }

    /// [`run_prompts`](Self::run_prompts), resuming the earlier session `resume` plans when
    /// given ([`resume`](Self::resume)). Every run gets its own runtime home, kept until the
    /// test ends.
    ///
    /// Boxed here, so that the test binaries that await it run this crate's code instead of
    /// compiling the whole run again (docs/performance.md, "The edit loop").
    pub(super) fn run_prompts_with<'a>(
        &'a self,
        eval: &'a CopilotEval,
        prompts: Vec<Prompt>,
        resume: Option<super::resume::ResumePlan>,
    ) -> futures::future::BoxFuture<'a, CopilotResult> {
        Box::pin(self.run_prompts_unboxed(eval, prompts, resume))
    }

    async fn run_prompts_unboxed(
        &self,
        eval: &CopilotEval,
        prompts: Vec<Prompt>,
        resume: Option<super::resume::ResumePlan>,
    ) -> CopilotResult {
        let home = self.homes().create().unwrap_or_else(|e| {
            self.setup_failure(format!("cannot create the run's runtime home: {e}"))
        });
        let earlier_calls = resume.as_ref().map_or(0, |plan| plan.earlier_calls);
        let expected_stop = *self.inner.expected_stop.lock().expect("expected stop lock");
        let faults = self.inner.faults.lock().expect("faults lock").clone();
        let adjust = |options: RunOptions| {
            let options = super::resume::options_for(options, &home, resume.as_ref())
                .ablate(super::ablation_from_env())
                .workdir_root(self.workdir());
            match &faults {
                Some(faults) => options.test_faults(faults.clone()),
                None => options,
            }
        };
        let clock_moved = faults
            .as_ref()
            .is_some_and(|f| f.clock_starts_at_session.is_some());
        self.mark_running(eval, &prompts, clock_moved);
        let input = super::modes::ModeInput {
            eval,
            prompts: &prompts,
            adjust: &adjust,
            earlier_calls,
            config: &self.inner.config,
            trial: self.trial(),
            test: self.test_name(),
            index: self.runs_so_far(),
            judge: self.inner.judging.load(std::sync::atomic::Ordering::SeqCst),
        };
        let clock = faults
            .as_ref()
            .and_then(|f| f.clock_starts_at_session.clone());
        let run = self.run_mode(&input, clock).await;
        let mut run = run.unwrap_or_else(|e| self.setup_failure(e));
        self.inner
            .model_requests
            .lock()
            .expect("requests lock")
            .extend(std::mem::take(&mut run.model_requests));
        for warning in run
            .result
            .warnings
            .iter()
            .filter(|w| w.starts_with(crate::run::skills::WARNING_PREFIX))
        {
            eprintln!("copilot-eval: warning: {}: {warning}", eval.name());
        }
        let resumed_from = resume.as_ref().map(|plan| plan.from.clone());
        let (mut result, record, recording_failure) = run.into_record(resumed_from, expected_stop);
        {
            let mut evidence = self.inner.evidence.lock().expect("evidence lock");
            let named = self.inner.package_paths.lock().expect("paths lock").clone();
            let roots = super::provenance::roots(&self.inner.config, self.workdir());
            let config = &self.inner.config;
            super::provenance::note_run(&mut evidence, eval, &record, config, &roots, &named);
            evidence.runs.push(record);
            let run = evidence.runs.len();
            self.homes().keep(home, run, &result, earlier_calls);
            result.origin = Some(crate::result::RunOrigin {
                context: self.homes().context,
                test: self.test_name(),
                run,
            });
            evidence.running = None;
            evidence.deadline_unix_ms =
                unix_ms(SystemTime::now() + self.inner.config.test_timeout());
        }
        self.save();
        if let Some(failure) = recording_failure {
            self.setup_failure(failure);
        }
        result
    }

    /// Run `input` the way this test's runs reach a model: its script when it set one, else
    /// by the test's mode. With the test-only `clock` (`TestFaults::clock_starts_at_session`),
    /// the run's bound starts when the clock does: the test's deadline moves with it, so the
    /// runner does not kill the test before the run's bound.
    async fn run_mode(
        &self,
        input: &super::modes::ModeInput<'_>,
        clock: Option<crate::run::SessionClock>,
    ) -> Result<super::modes::ModeRun, String> {
        let script = self.inner.script.lock().expect("script lock").clone();
        let started = std::time::Instant::now();
        let run = async {
            match script {
                Some(catalog) => super::modes::scripted(input, catalog).await,
                None => match self.mode() {
                    Mode::Live => super::modes::live(input).await,
                    Mode::Record(policy) => super::modes::record(input, policy).await,
                    Mode::Replay => super::modes::replay(input).await,
                },
            }
        };
        let Some(clock) = clock else {
            return run.await;
        };
        let follow = async {
            clock.started_since(started).await;
            self.move_deadline(Duration::from_secs_f64(input.eval.timeout_s()));
            std::future::pending::<()>().await
        };
        tokio::select! {
            run = run => run,
            () = follow => unreachable!("following the clock never ends"),
        }
    }

    /// The evidence of a run starting: the test's deadline is now the run's (`timeout_s` from
    /// now), and `running` names the eval and its first prompt (`(+N more prompts)`). A run
    /// whose test-only clock starts later (`TestFaults::clock_starts_at_session`: no bound
    /// before the session or the prompt) gets [`CLOCK_ALLOWANCE`] more, so that the runner does
    /// not kill it during a runtime start that its own timeout does not count.
    pub(super) fn mark_running(&self, eval: &CopilotEval, prompts: &[Prompt], clock_moved: bool) {
        {
            let mut evidence = self.inner.evidence.lock().expect("evidence lock");
            let allowance = if clock_moved {
                CLOCK_ALLOWANCE
            } else {
                Duration::ZERO
            };
            evidence.deadline_unix_ms =
                unix_ms(SystemTime::now() + Duration::from_secs_f64(eval.timeout_s()) + allowance);
            let more = match prompts.len() {
                0 | 1 => String::new(),
                n => format!(" (+{} more prompts)", n - 1),
            };
            evidence.running = Some(format!(
                "{}: {}{more}",
                eval.name(),
                prompts.first().map(|p| p.text.as_str()).unwrap_or_default()
            ));
        }
        self.save();
    }

    /// The test's deadline is now `timeout` from now (the test-only clock of the current run
    /// started).
    fn move_deadline(&self, timeout: Duration) {
        self.inner
            .evidence
            .lock()
            .expect("evidence lock")
            .deadline_unix_ms = unix_ms(SystemTime::now() + timeout);
        self.save();
    }

    /// How many runs the test has recorded so far (the index of its next run).
    fn runs_so_far(&self) -> usize {
        self.inner
            .evidence
            .lock()
            .expect("evidence lock")
            .runs
            .len()
    }

    /// Record `message` as the test's setup error, then panic with it.
    pub(crate) fn setup_failure(&self, message: String) -> ! {
        {
            let mut evidence = self.inner.evidence.lock().expect("evidence lock");
            evidence.setup_error = Some(message.clone());
            evidence.running = None;
        }
        self.save();
        panic!("copilot-eval setup error: {message}");
    }

    /// The failure of a test whose body passed although its strict script still holds replies
    /// ([`Script::strict`](crate::model_server::Script::strict)); `None` otherwise.
    pub(crate) fn strict_script_failure(&self) -> Option<String> {
        let catalog = self.inner.script.lock().expect("script lock").clone()?;
        if !catalog.strict() {
            return None;
        }
        super::offline::unused_turns(&catalog).map(|w| format!("{w} (the script is strict)"))
    }

    /// Record the end of the test (`failure` = `None` when it passed), keep or remove the working
    /// directory, and write the final evidence. Replies the scripted model left unused, and a
    /// skill eval's `ctx.expect` texts its evals.json does not hold, are warnings on the last
    /// run record.
    pub(crate) fn finish(&self, failure: Option<String>) {
        let catalog = self.inner.script.lock().expect("script lock").clone();
        let unused = catalog.as_deref().and_then(super::offline::unused_turns);
        for warning in unused.into_iter().chain(self.stray_expectations_warning()) {
            eprintln!("copilot-eval: warning: {warning}");
            let mut evidence = self.inner.evidence.lock().expect("evidence lock");
            if let Some(last) = evidence.runs.last_mut() {
                last.warnings.push(warning);
            }
        }
        let failed = failure.is_some();
        // The runs' runtime homes go with the test.
        self.homes().clear();
        let kept = if failed {
            let dir = self.inner.workdir.lock().expect("workdir lock").take();
            if let Some(dir) = dir {
                let path = dir.keep();
                eprintln!("copilot-eval: working directory kept: {}", path.display());
                true
            } else {
                false
            }
        } else {
            // Dropping the TempDir removes the folder.
            drop(self.inner.workdir.lock().expect("workdir lock").take());
            false
        };
        let setup_error =
            (failure.as_deref()).and_then(|f| self.inner.config_errors.setup_error(f));
        {
            let mut evidence = self.inner.evidence.lock().expect("evidence lock");
            if setup_error.is_some() {
                evidence.setup_error = setup_error;
            }
            evidence.status = if failed {
                EvidenceStatus::Failed
            } else {
                EvidenceStatus::Passed
            };
            evidence.failure = failure;
            evidence.workdir_kept = kept;
            evidence.running = None;
        }
        self.save();
    }

    /// A copy of the evidence recorded so far.
    pub fn evidence(&self) -> TestEvidence {
        let mut evidence = self.inner.evidence.lock().expect("evidence lock").clone();
        let roots = super::provenance::roots(&self.inner.config, self.workdir());
        super::provenance::refresh(&mut evidence, &roots);
        evidence
    }

    /// The test's configuration, from the attribute.
    pub(super) fn test_config(&self) -> &TestConfig {
        &self.inner.config
    }

    /// Change the evidence with `change`, then write it (for the harness's other modules:
    /// `compare` labels its runs and adds its comparison).
    pub(super) fn update_evidence<T>(&self, change: impl FnOnce(&mut TestEvidence) -> T) -> T {
        let out = change(&mut self.inner.evidence.lock().expect("evidence lock"));
        self.save();
        out
    }

    /// Write the evidence file, when the runner asked for one. A write failure is printed, not
    /// raised: the test itself goes on.
    fn save(&self) {
        let Some(path) = &self.inner.evidence_file else {
            return;
        };
        let evidence = self.evidence();
        if let Err(e) = evidence.write(path) {
            eprintln!("copilot-eval: cannot write the evidence file: {e}");
        }
    }
}
