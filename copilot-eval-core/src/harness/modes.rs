//! The four ways a test's run reaches a model, one function each: its script ([`scripted`]:
//! the loopback model server, offline in every mode), [`live`], record mode ([`record`]: replay
//! the existing cassette or run live and record it) and replay mode ([`replay`]). Each returns a
//! [`ModeRun`], which [`ModeRun::into_record`] turns into the run record the side file keeps.
//! `EvalContext::run_prompts_with` picks the mode; an `Err` is a setup failure (no cassette, a
//! model server that does not start, ...), which ends the test (`EvalContext::setup_failure`).
//! This module knows nothing of the context: what it needs of the test is in [`ModeInput`].

use std::sync::Arc;

use super::record::RecordPolicy;
use super::{Mode, TestConfig, offline};
use crate::cassette::ReplayConfig;
use crate::eval::{CopilotEval, Prompt};
use crate::model_server::{ModelRequest, ModelServer, ScriptCatalog};
use crate::report::{RecordingOutcome, ReplayRecord, ResumedFrom, RunRecord, TrialOf};
use crate::result::{CopilotResult, StopReason};
use crate::run::{RunOptions, run_turns};

/// What every mode is given: the eval, its prompts, the run options' adjustment (the run's home,
/// a resumed session, the test's faults), how many model calls earlier runs of a resumed
/// session made (a resumed replay or script starts after them), and the test: its
/// configuration, trial, name and how many runs it made before this one (which name the run's
/// cassette).
pub(super) struct ModeInput<'a> {
    /// The eval.
    pub(super) eval: &'a CopilotEval,
    /// Its prompts, at least one.
    pub(super) prompts: &'a [Prompt],
    /// Applied to the mode's run options before the run.
    pub(super) adjust: &'a (dyn Fn(RunOptions) -> RunOptions + Sync),
    /// Model calls of the earlier runs of a resumed session (0 when not resuming).
    pub(super) earlier_calls: u64,
    /// The test's configuration (its cassette paths).
    pub(super) config: &'a TestConfig,
    /// The test's trial, under `--trials`.
    pub(super) trial: Option<TrialOf>,
    /// The test's name (the cassette's header).
    pub(super) test: String,
    /// The runs the test made before this one.
    pub(super) index: usize,
    /// The run is a judge session (`ctx.judge`, `ctx.judge_pair`): `--record=judges` records
    /// it again.
    pub(super) judge: bool,
}

impl ModeInput<'_> {
    fn replay_config(&self) -> ReplayConfig {
        ReplayConfig::default().earlier_calls(self.earlier_calls)
    }

    /// This run's cassette in `mode`.
    fn cassette(&self, mode: Mode) -> std::path::PathBuf {
        self.config
            .cassette_path_in_trial(self.index, self.trial, mode)
    }
}

/// What a mode's run gave: the result, the run record's `mode` (`scripted`, `live` or
/// `replay`), the replay's record when a cassette was replayed, the recording with whether its
/// failure fails the test (record mode, when the run was recorded), and the model requests a
/// scripted run's server saw.
pub(super) struct ModeRun {
    /// The run's result.
    pub(super) result: CopilotResult,
    /// `scripted`, `live` or `replay`.
    pub(super) mode: &'static str,
    /// The replay's record, when a cassette was replayed.
    pub(super) replay: Option<ReplayRecord>,
    /// The recording, and whether its failure fails the test.
    pub(super) recording: Option<(RecordingOutcome, bool)>,
    /// The requests the scripted model server saw (empty in other modes).
    pub(super) model_requests: Vec<ModelRequest>,
}

impl ModeRun {
    fn new(result: CopilotResult, mode: &'static str) -> Self {
        Self {
            result,
            mode,
            replay: None,
            recording: None,
            model_requests: Vec::new(),
        }
    }

    /// The run's record (its mode, replay and recording), and the test's failure when the
    /// recording failed fatally (`record mode: <error> (<cassette>)`).
    pub(super) fn into_record(
        self,
        resumed_from: Option<ResumedFrom>,
        expected_stop: Option<StopReason>,
    ) -> (CopilotResult, RunRecord, Option<String>) {
        let mut record = RunRecord::from_result(&self.result, self.mode);
        record.replay = self.replay;
        record.resumed_from = resumed_from;
        record.expected_stop = expected_stop;
        let recording_failure =
            self.recording
                .as_ref()
                .filter(|(_, fatal)| *fatal)
                .map(|(r, _)| {
                    format!(
                        "record mode: {} ({})",
                        r.error.clone().unwrap_or_default(),
                        r.cassette
                    )
                });
        record.recording = self.recording.map(|(r, _)| r);
        (self.result, record, recording_failure)
    }
}

/// The run against the test's script: the loopback model server serving `catalog` (its
/// warnings about agent models printed and kept on the result), the model requests it saw kept
/// for `ctx.model_requests()`, and an `execution_error` while the script ran out of replies
/// turned into `script_exhausted` naming the script's turns.
///
/// Errors: the model server does not start.
pub(super) async fn scripted(
    input: &ModeInput<'_>,
    catalog: Arc<ScriptCatalog>,
) -> Result<ModeRun, String> {
    let eval = input.eval;
    let config = offline::server_config(eval, catalog.clone(), input.earlier_calls + 1);
    let warnings = offline::agent_model_warnings(eval, &config.models());
    for warning in &warnings {
        eprintln!("copilot-eval: warning: {}: {warning}", eval.name());
    }
    let server = ModelServer::start(config).await.map_err(|e| {
        format!("cannot start the loopback model server for the scripted model: {e}")
    })?;
    let overruns = offline::overruns(&catalog);
    let options = (input.adjust)(RunOptions::offline(server.base_url()));
    let mut result = run_turns(eval, input.prompts, &options).await;
    let model_requests = server.model_requests();
    result.warnings.splice(0..0, warnings);
    if offline::overruns(&catalog) != overruns && result.stop_reason == StopReason::ExecutionError {
        let cause = result.error.take().unwrap_or_default();
        result.stop_reason = StopReason::ScriptExhausted;
        result.error = Some(offline::exhausted(&catalog, &overruns, &cause));
    }
    Ok(ModeRun {
        model_requests,
        ..ModeRun::new(result, "scripted")
    })
}

/// The live run: GitHub Copilot, or the loopback stand-in of `COPILOT_EVAL_LIVE_BASE_URL`.
///
/// Errors: `COPILOT_EVAL_LIVE_BASE_URL` is not a loopback URL.
pub(super) async fn live(input: &ModeInput<'_>) -> Result<ModeRun, String> {
    let options = super::record::live_options().map_err(|e| e.to_string())?;
    let result = run_turns(input.eval, input.prompts, &(input.adjust)(options)).await;
    Ok(ModeRun::new(result, "live"))
}

/// The run in record mode: the run's cassette replayed when `policy` keeps an existing one,
/// else a live run recorded into it.
///
/// Errors: the existing cassette cannot be loaded; the live run's options cannot be made or
/// its recording cannot be written (see `record::record_run`).
pub(super) async fn record(input: &ModeInput<'_>, policy: RecordPolicy) -> Result<ModeRun, String> {
    match super::record::plan(policy, input.cassette(Mode::Record(policy)), input.judge) {
        super::record::Plan::Replay(cassette) => replayed(input, &cassette).await,
        super::record::Plan::Record(cassette) => {
            let (result, recording, fatal) = super::record::record_run(
                input.eval,
                input.prompts,
                &cassette,
                &input.test,
                input.index + 1,
                input.adjust,
            )
            .await?;
            Ok(ModeRun {
                recording: Some((recording, fatal)),
                ..ModeRun::new(result, "live")
            })
        }
    }
}

/// The run in replay mode: the run's cassette.
///
/// Errors: the cassette is missing (the message says how to record it) or cannot be loaded.
pub(super) async fn replay(input: &ModeInput<'_>) -> Result<ModeRun, String> {
    let cassette = input.cassette(Mode::Replay);
    if !cassette.is_file() {
        return Err(super::replay::missing_cassette(
            input.config,
            &cassette,
            input.trial,
        ));
    }
    replayed(input, &cassette).await
}

/// `cassette` replayed through the cassette engine. Errors: it cannot be loaded.
async fn replayed(input: &ModeInput<'_>, cassette: &std::path::Path) -> Result<ModeRun, String> {
    let (result, replay) = super::replay::run(
        input.eval,
        input.prompts,
        cassette,
        input.replay_config(),
        input.adjust,
    )
    .await?;
    Ok(ModeRun {
        replay: Some(replay),
        ..ModeRun::new(result, "replay")
    })
}
