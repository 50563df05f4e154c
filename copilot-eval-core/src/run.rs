//! The run lifecycle: one attempt of one eval on one prompt ([`run_with`]) or on several prompts
//! in one session ([`run_turns`]).
//!
//! [`run_with`] resolves the runtime, gives it a private home, starts it through the SDK
//! (`Client::start`), creates the session with a live event subscription taken *before* the
//! session starts, sends the prompt, and waits for the root agent's `session.idle`. `timeout_s`
//! bounds all of that, runtime start included. A budget stop or a failed caller guard
//! ([`controls`](crate::controls)) ends that wait at once.
//!
//! Then, in every outcome, it cleans up, in this order: close admission (every later tool call is
//! denied, no model request is forwarded); abort a session that is still busy; wait (bounded) for
//! the runtime to report the completion of every tool call it started; wait for every in-process
//! tool handler that already started (never cancelled); disconnect; stop the runtime (forcing it
//! when a graceful stop fails); and check that no process carrying the run's private home is left
//! (killing and reporting any). Cleanup may outlast `timeout_s`; `timings.cleanup_ms` says how
//! long it took. There is exactly one attempt: nothing is retried.
//!
//! Errors never escape as `Err`: every failure is a [`CopilotResult`] with its
//! [`StopReason`], error text and the evidence gathered so far.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use github_copilot_sdk::session::Session;
use github_copilot_sdk::subscription::RecvErrorKind;
use github_copilot_sdk::{CliProgram, Client, ClientOptions};
use tokio::sync::watch;

use crate::controls::{ControlStop, Controls};
use crate::eval::CopilotEval;
use crate::evidence::{LoggedEvent, map_events};
use crate::result::{CopilotResult, RawEvent, RuntimeStartup, StopReason, Timings};
use crate::runtime;
use crate::seam::{Seam, SeamOptions};

/// Placeholder token given to the runtime in offline runs (the loopback server accepts any).
pub const OFFLINE_TOKEN: &str = "copilot-eval-offline-placeholder";

/// How long cleanup waits for each step before forcing it.
const ABORT_BOUND: Duration = Duration::from_secs(5);
const DISCONNECT_BOUND: Duration = Duration::from_secs(5);
const STOP_BOUND: Duration = Duration::from_secs(15);
/// After a stop, how long to wait for the runtime to report the completion of started tool calls.
const COMPLETION_BOUND: Duration = Duration::from_secs(10);
/// After a `session.error`, how long to wait for the `session.idle` that normally follows.
const ERROR_IDLE_GRACE: Duration = Duration::from_secs(3);
/// Event buffer of the live subscription (events; a slower recorder would lose events).
const EVENT_BUFFER: usize = 4096;

/// Where the runtime sends its model requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// GitHub's Copilot service, with the user's authentication.
    Live,
    /// A loopback model server at this base URL (`http://127.0.0.1:PORT`); no request leaves the
    /// machine.
    Offline { base_url: String },
}

/// Options of one run besides the eval: where model requests go, and which runtime runs it.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub(crate) target: Target,
    runtime_path: Option<PathBuf>,
    home_seed: Option<PathBuf>,
    replay: Option<Arc<dyn crate::cassette::ReplayCheck>>,
    recorder: Option<Arc<crate::cassette::Recorder>>,
}

impl RunOptions {
    /// Run against GitHub's Copilot service (live model requests; needs authentication:
    /// `GITHUB_TOKEN`, then `GH_TOKEN`, then the signed-in user).
    pub fn live() -> Self {
        Self {
            target: Target::Live,
            runtime_path: None,
            home_seed: None,
            replay: None,
            recorder: None,
        }
    }

    /// Run offline against a loopback model server, e.g.
    /// `RunOptions::offline(server.base_url())` for a
    /// [`ModelServer`](crate::model_server::ModelServer). The runtime gets the server as its
    /// API and GitHub endpoints and a placeholder token.
    pub fn offline(base_url: impl Into<String>) -> Self {
        Self {
            target: Target::Offline {
                base_url: base_url.into().trim_end_matches('/').to_owned(),
            },
            runtime_path: None,
            home_seed: None,
            replay: None,
            recorder: None,
        }
    }

    /// Copy this folder's contents into the run's private runtime home (`COPILOT_HOME`) before
    /// the runtime starts: user-level configuration for the run, such as
    /// `copilot-instructions.md`, `skills/<name>/SKILL.md` or `hooks/`. The home itself stays
    /// private and is removed after the run.
    pub fn home_seed(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home_seed = Some(dir.into());
        self
    }

    /// Use this runtime executable instead of resolving one ([`runtime::resolve`]).
    pub fn runtime_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.runtime_path = Some(path.into());
        self
    }

    /// Ask `check` after the turns (and cleanup) for a model-side replay failure; a failure
    /// ends the run with [`StopReason::ReplayMismatch`] and its text in `error`. Set by
    /// [`ReplaySession::run_options`](crate::cassette::ReplaySession::run_options).
    pub fn replay_check(mut self, check: Arc<dyn crate::cassette::ReplayCheck>) -> Self {
        self.replay = Some(check);
        self
    }

    /// Record the run's model exchanges into `recorder` (see
    /// [`cassette::Recorder`](crate::cassette::Recorder)): the request seam is installed and
    /// hands it every model request and answer it forwards. The answers reach the runtime
    /// unchanged; build the cassette afterwards with
    /// [`Recorder::cassette`](crate::cassette::Recorder::cassette).
    pub fn record(mut self, recorder: Arc<crate::cassette::Recorder>) -> Self {
        self.recorder = Some(recorder);
        self
    }
}

/// Run `eval` on `prompt` live (see [`RunOptions::live`]). Exactly one attempt.
pub async fn run(eval: &CopilotEval, prompt: impl Into<String>) -> CopilotResult {
    run_with(eval, prompt, &RunOptions::live()).await
}

/// Run `eval` on `prompt` with `options`. Exactly one attempt; the runtime process is stopped
/// before this returns, in every outcome.
pub async fn run_with(
    eval: &CopilotEval,
    prompt: impl Into<String>,
    options: &RunOptions,
) -> CopilotResult {
    run_turns(eval, &[prompt.into()], options).await
}

/// Run `eval` on several prompts, one turn each, in ONE session: each prompt is sent once the
/// previous turn went idle. After a `session.error` no further prompt is sent. `timeout_s`
/// bounds all turns together. No prompt at all is an `execution_error`. Otherwise as
/// [`run_with`].
pub async fn run_turns(
    eval: &CopilotEval,
    prompts: &[String],
    options: &RunOptions,
) -> CopilotResult {
    let started = Instant::now();
    let mut run = RunState::new(eval);
    if prompts.is_empty() {
        run.fail(StopReason::ExecutionError, "no prompt to send".to_owned());
        return run.finish(PathBuf::new(), started);
    }
    // Requested skills are validated before anything starts (crate::skills).
    if !eval.skill_directories.is_empty() {
        let (discovery, failure) = crate::skills::check_locally(&eval.skill_directories);
        run.skill_discovery = Some(discovery);
        if let Some(error) = failure {
            run.fail(StopReason::SkillSetupError, error);
            return run.finish(eval.working_directory.clone().unwrap_or_default(), started);
        }
    }

    let working_directory = match &eval.working_directory {
        Some(dir) => dir.clone(),
        None => match tempfile::Builder::new()
            .prefix("copilot-eval-work-")
            .tempdir()
        {
            Ok(dir) => dir.keep(),
            Err(e) => {
                run.fail(
                    StopReason::ExecutionError,
                    format!("cannot create a working directory: {e}"),
                );
                return run.finish(PathBuf::new(), started);
            }
        },
    };

    let runtime_path = match &options.runtime_path {
        Some(path) => path.clone(),
        None => match runtime::resolve() {
            Ok(resolved) => resolved.path,
            Err(e) => {
                run.fail(StopReason::ExecutionError, e.to_string());
                return run.finish(working_directory, started);
            }
        },
    };
    run.runtime_path = Some(runtime_path.clone());

    let home = match tempfile::Builder::new()
        .prefix("copilot-eval-home-")
        .tempdir()
    {
        Ok(home) => home,
        Err(e) => {
            run.fail(
                StopReason::ExecutionError,
                format!("cannot create the runtime home: {e}"),
            );
            return run.finish(working_directory, started);
        }
    };
    let cache = runtime::runtime_cache_dir();
    if let Err(e) = std::fs::create_dir_all(&cache) {
        run.fail(
            StopReason::ExecutionError,
            format!("cannot create the runtime cache {}: {e}", cache.display()),
        );
        return run.finish(working_directory, started);
    }
    if let Some(seed) = &options.home_seed
        && let Err(e) = copy_tree(seed, home.path())
    {
        run.fail(
            StopReason::ExecutionError,
            format!("cannot seed the runtime home from {}: {e}", seed.display()),
        );
        return run.finish(working_directory, started);
    }
    let mut client_options = client_options(
        &runtime_path,
        &working_directory,
        home.path(),
        &cache,
        &options.target,
    );
    if eval.client_mode == crate::eval::ClientMode::Empty {
        // Framework-owned storage: the private home, removed after the run.
        client_options = client_options
            .with_mode(github_copilot_sdk::ClientMode::Empty)
            .with_base_directory(home.path().to_path_buf());
    }

    let controls = Controls::new(
        eval.max_tool_calls,
        eval.pre_tool_guards.clone(),
        eval.hooks.clone(),
    );
    let seam_options = SeamOptions {
        audit: eval.audit_requests,
        image_detail: eval.image_detail,
    };
    let seam =
        (eval.max_tool_calls.is_some() || seam_options.inspects() || options.recorder.is_some())
            .then(|| Seam::with_recorder(seam_options, controls.clone(), options.recorder.clone()));
    let client_options = match &seam {
        Some(seam) => client_options.with_request_handler(seam.clone()),
        None => client_options,
    };

    let deadline = started + Duration::from_secs_f64(eval.timeout_s);
    let slots = Slots::default();
    let mut stop_signal = controls.stop_signal();
    let outcome = tokio::select! {
        biased;
        stop = stop_signal.wait_for(Option::is_some) => {
            stop.ok().and_then(|s| s.clone())
                .map(|stop| control_stop(&stop))
        }
        outcome = tokio::time::timeout_at(
            deadline.into(),
            execute(eval, prompts, &working_directory, client_options, &options.target, &controls, &slots, &mut run),
        ) => match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some((StopReason::ExecutionError, error)),
            Err(_) => Some((
                StopReason::Timeout,
                format!("timed out after {}s (eval timeout_s)", eval.timeout_s),
            )),
        },
    };
    let turns_finished = outcome.is_none();
    if let Some((reason, error)) = outcome {
        run.fail(reason, error);
    }
    // A control stop that raced with the end of the turns still decides the reason.
    if let Some(stop) = controls.stop_requested() {
        let (reason, error) = control_stop(&stop);
        run.fail(reason, error);
    }

    let cleanup_started = Instant::now();
    let budget_stop = matches!(
        controls.stop_requested(),
        Some(ControlStop::BudgetExceeded { .. })
    );
    cleanup(
        &slots,
        &controls,
        seam.as_deref(),
        &mut run,
        home.path(),
        budget_stop,
    )
    .await;
    if let Some(seam) = &seam {
        run.model_requests_held_back = seam.held_back();
        if seam_options.audit {
            run.request_audit = seam.records();
        }
        if let Some(failure) = seam.failure() {
            run.fail(
                StopReason::RequestAuditError,
                format!("request audit: {failure}"),
            );
        } else if seam_options.inspects() && run.prompt_sent && seam.observed() == 0 {
            run.fail(
                StopReason::RequestAuditError,
                "request audit: no model request was observed; the audit cannot vouch for this run"
                    .to_owned(),
            );
        }
    }
    if let Some(failure) = options
        .replay
        .as_ref()
        .and_then(|r| r.failure(turns_finished && controls.stop_requested().is_none()))
    {
        run.fail(StopReason::ReplayMismatch, failure);
    }
    run.tool_calls_admitted = controls.admitted();
    run.denials = controls.denied();
    if let Err(e) = home.close() {
        run.cleanup_errors
            .push(format!("removing the runtime home failed: {e}"));
    }
    run.timings.cleanup_ms = cleanup_started.elapsed().as_millis() as u64;
    run.finish(working_directory, started)
}

/// What the execution stores for cleanup, even when it is cut short by the timeout.
#[derive(Default)]
struct Slots {
    client: Mutex<Option<Client>>,
    session: Mutex<Option<Arc<Session>>>,
    recorder: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Set to true once the root `session.idle` was seen (the session is not busy).
    idle: Mutex<Option<watch::Receiver<Progress>>>,
}

/// What the recorder has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Progress {
    idle: bool,
    session_error: bool,
    /// Root `session.idle` events seen (one per finished turn).
    idles: u32,
}

/// Everything the run accumulates; turned into the result by [`RunState::finish`].
struct RunState {
    eval_name: String,
    model_requested: Option<String>,
    configuration: serde_json::Value,
    log: Arc<Mutex<Vec<LoggedEvent>>>,
    stops: Vec<(StopReason, String)>,
    timings: Timings,
    runtime_path: Option<PathBuf>,
    runtime_pid: Option<u32>,
    capture_errors: Arc<Mutex<Vec<String>>>,
    cleanup_errors: Vec<String>,
    tool_calls_admitted: u32,
    model_requests_held_back: usize,
    tool_handler_failures: Vec<String>,
    denials: Vec<crate::controls::Denial>,
    request_audit: Vec<crate::audit::RequestAudit>,
    prompt_sent: bool,
    skill_discovery: Option<crate::skills::SkillDiscovery>,
}

impl RunState {
    fn new(eval: &CopilotEval) -> Self {
        Self {
            eval_name: eval.name.clone(),
            model_requested: eval.model.clone(),
            configuration: eval.snapshot(),
            log: Arc::default(),
            stops: Vec::new(),
            timings: Timings::default(),
            runtime_path: None,
            runtime_pid: None,
            capture_errors: Arc::default(),
            cleanup_errors: Vec::new(),
            tool_calls_admitted: 0,
            model_requests_held_back: 0,
            tool_handler_failures: Vec::new(),
            denials: Vec::new(),
            request_audit: Vec::new(),
            prompt_sent: false,
            skill_discovery: None,
        }
    }

    /// Record a stop cause. The reason is decided at the end by [`StopReason::PRECEDENCE`].
    fn fail(&mut self, reason: StopReason, error: String) {
        if !self.stops.iter().any(|(r, e)| *r == reason && *e == error) {
            self.stops.push((reason, error));
        }
    }

    fn finish(self, working_directory: PathBuf, started: Instant) -> CopilotResult {
        let log = std::mem::take(&mut *self.log.lock().expect("log lock"));
        let mut evidence = map_events(&log);
        for denial in &self.denials {
            if let Some(call) = evidence.tool_calls.iter_mut().find(|c| {
                c.denied.is_none() && c.name == denial.tool && c.arguments == denial.arguments
            }) {
                call.denied = Some(denial.reason.clone());
            }
        }
        let mut capture_errors = self.capture_errors.lock().expect("errors lock").clone();
        capture_errors.extend(evidence.capture_errors.iter().cloned());
        let mut errors: Vec<String> = Vec::new();
        let mut push = |line: String| {
            if !errors.contains(&line) {
                errors.push(line);
            }
        };
        let mut stop_reason = StopReason::Completed;
        for (reason, error) in &self.stops {
            stop_reason = stop_reason.max(*reason);
            push(error.clone());
        }
        for e in &evidence.session_errors {
            stop_reason = stop_reason.max(StopReason::ExecutionError);
            push(format!("session.error: {e}"));
        }
        if stop_reason == StopReason::Completed && !evidence.idle {
            stop_reason = StopReason::ExecutionError;
            push("the session ended without session.idle".to_owned());
        }
        for e in &self.cleanup_errors {
            stop_reason = stop_reason.max(StopReason::CleanupError);
            push(format!("cleanup: {e}"));
        }
        let error = (!errors.is_empty()).then(|| errors.join("; "));
        let success = stop_reason == StopReason::Completed && error.is_none();
        let evidence_complete = capture_errors.is_empty();
        CopilotResult {
            eval_name: self.eval_name,
            model_requested: self.model_requested,
            model_used: evidence.model_used,
            success,
            stop_reason,
            error,
            turns: evidence.turns,
            tool_calls: evidence.tool_calls,
            final_response: evidence.final_response,
            skill_discovery: self.skill_discovery,
            skill_invocations: evidence.skill_invocations,
            subagent_invocations: evidence.subagent_invocations,
            usage: evidence.usage,
            duration_ms: started.elapsed().as_millis() as u64,
            timings: self.timings,
            working_directory,
            runtime_path: self.runtime_path,
            runtime_pid: self.runtime_pid,
            request_audit: self.request_audit,
            tool_calls_admitted: self.tool_calls_admitted,
            model_requests_held_back: self.model_requests_held_back,
            tool_handler_failures: self.tool_handler_failures,
            cleanup_errors: self.cleanup_errors,
            capture_errors,
            evidence_complete,
            raw_events: log.into_iter().map(|l| l.event).collect(),
            configuration: self.configuration,
        }
    }
}

pub(crate) fn client_options(
    runtime_path: &std::path::Path,
    working_directory: &std::path::Path,
    home: &std::path::Path,
    cache: &std::path::Path,
    target: &Target,
) -> ClientOptions {
    let home = home.as_os_str().to_owned();
    let cache = cache.as_os_str().to_owned();
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("COPILOT_HOME".into(), home.clone()),
        ("GH_CONFIG_DIR".into(), home.clone()),
        ("XDG_CONFIG_HOME".into(), home.clone()),
        ("XDG_STATE_HOME".into(), home),
        ("XDG_CACHE_HOME".into(), cache.clone()),
        ("COPILOT_CACHE_HOME".into(), cache),
        ("COPILOT_GITHUB_TELEMETRY_DISABLED".into(), "true".into()),
    ];
    let mut options = ClientOptions::new()
        .with_program(CliProgram::Path(runtime_path.to_path_buf()))
        .with_cwd(working_directory.to_path_buf());
    match target {
        Target::Offline { base_url } => {
            env.extend([
                ("COPILOT_API_URL".into(), base_url.into()),
                ("COPILOT_DEBUG_GITHUB_API_URL".into(), base_url.into()),
                ("GH_TOKEN".into(), OFFLINE_TOKEN.into()),
                ("GITHUB_TOKEN".into(), OFFLINE_TOKEN.into()),
                ("GH_ENTERPRISE_TOKEN".into(), "".into()),
                ("GITHUB_ENTERPRISE_TOKEN".into(), "".into()),
                ("COPILOT_HMAC_KEY".into(), "".into()),
                ("CAPI_HMAC_KEY".into(), "".into()),
            ]);
            options = options.with_github_token(OFFLINE_TOKEN);
        }
        Target::Live => {
            if let Some(token) = live_token() {
                options = options.with_github_token(token);
            }
        }
    }
    options.with_env(env)
}

/// `GITHUB_TOKEN`, then `GH_TOKEN` (empty counts as unset); `None`: the signed-in user.
pub(crate) fn live_token() -> Option<String> {
    ["GITHUB_TOKEN", "GH_TOKEN"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|t| !t.is_empty())
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    eval: &CopilotEval,
    prompts: &[String],
    working_directory: &std::path::Path,
    client_options: ClientOptions,
    target: &Target,
    controls: &Arc<Controls>,
    slots: &Slots,
    run: &mut RunState,
) -> Result<(), String> {
    let mut config = eval
        .session_config(working_directory, controls)
        .map_err(|e| e.to_string())?;
    config.event_buffer_capacity = Some(EVENT_BUFFER);
    config = match target {
        Target::Offline { .. } => config.with_github_token(OFFLINE_TOKEN),
        Target::Live => match live_token() {
            Some(token) => config.with_github_token(token),
            None => config,
        },
    };

    let t = Instant::now();
    let client = Client::start(client_options)
        .await
        .map_err(|e| format!("starting the runtime failed: {e}"))?;
    run.timings.runtime_start_ms = Some(t.elapsed().as_millis() as u64);
    run.runtime_pid = client.pid();
    run.timings.runtime_startup = client.startup_timings().map(|s| RuntimeStartup {
        total_ms: s.total_ms,
        program_resolve_ms: s.program_resolve_ms,
        process_spawn_ms: s.process_spawn_ms,
        transport_setup_ms: s.transport_setup_ms,
        handshake_ms: s.handshake_ms,
    });
    *slots.client.lock().expect("slot") = Some(client.clone());

    let t = Instant::now();
    let prepared = client
        .prepare_session(config)
        .map_err(|e| format!("invalid session configuration: {e}"))?;
    let subscription = prepared.subscribe();
    let (progress_tx, progress_rx) = watch::channel(Progress::default());
    *slots.idle.lock().expect("slot") = Some(progress_rx.clone());
    let recorder = tokio::spawn(record(
        subscription,
        run.log.clone(),
        run.capture_errors.clone(),
        progress_tx,
    ));
    *slots.recorder.lock().expect("slot") = Some(recorder);
    let session = Arc::new(
        prepared
            .start()
            .await
            .map_err(|e| format!("creating the session failed: {e}"))?,
    );
    run.timings.create_session_ms = Some(t.elapsed().as_millis() as u64);
    *slots.session.lock().expect("slot") = Some(session.clone());
    // Before the prompt: the runtime must have discovered every requested skill.
    if let Some(discovery) = run.skill_discovery.as_mut()
        && let Some(error) =
            crate::skills::discover(&session, discovery, &eval.disabled_skills).await
    {
        run.fail(StopReason::SkillSetupError, error.clone());
        return Err(error);
    }

    let t = Instant::now();
    let result = async {
        run.prompt_sent = true;
        for prompt in prompts {
            let now = *progress_rx.borrow();
            if now.session_error {
                break;
            }
            session
                .send(prompt.as_str())
                .await
                .map_err(|e| format!("sending the prompt failed: {e}"))?;
            wait_until_done(progress_rx.clone(), now.idles).await?;
        }
        Ok(())
    }
    .await;
    run.timings.turns_ms = Some(t.elapsed().as_millis() as u64);
    result
}

/// Wait for the root `session.idle` that ends the turn (the first after `idles_before` were
/// seen); after a `session.error`, wait at most a short grace for it.
async fn wait_until_done(
    mut progress: watch::Receiver<Progress>,
    idles_before: u32,
) -> Result<(), String> {
    loop {
        let now = *progress.borrow_and_update();
        if now.idles > idles_before {
            return Ok(());
        }
        if now.session_error {
            let _ = tokio::time::timeout(
                ERROR_IDLE_GRACE,
                progress.wait_for(|p| p.idles > idles_before),
            )
            .await;
            return Ok(());
        }
        if progress.changed().await.is_err() {
            // The recorder stopped: the event stream closed before idle.
            let last = *progress.borrow();
            return if last.idles > idles_before || last.session_error {
                Ok(())
            } else {
                Err("the runtime closed the event stream before session.idle".to_owned())
            };
        }
    }
}

/// Copy every event of the live subscription into the log until the stream closes.
async fn record(
    mut subscription: github_copilot_sdk::EventSubscription,
    log: Arc<Mutex<Vec<LoggedEvent>>>,
    capture_errors: Arc<Mutex<Vec<String>>>,
    progress: watch::Sender<Progress>,
) {
    loop {
        match subscription.recv().await {
            Ok(event) => {
                let received = Instant::now();
                let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
                let root = agent_id.is_none();
                match event.event_type.as_str() {
                    "session.idle" if root => progress.send_modify(|p| {
                        p.idle = true;
                        p.idles += 1;
                    }),
                    "user.message" if root => progress.send_modify(|p| p.idle = false),
                    "session.error" => progress.send_modify(|p| p.session_error = true),
                    _ => {}
                }
                log.lock().expect("log lock").push(LoggedEvent {
                    event: RawEvent {
                        event_type: event.event_type,
                        id: event.id,
                        timestamp: event.timestamp,
                        agent_id,
                        ephemeral: event.ephemeral.unwrap_or(false),
                        data: event.data,
                    },
                    received,
                });
            }
            Err(e) => match e.kind() {
                RecvErrorKind::Lagged(lagged) => {
                    capture_errors.lock().expect("lock").push(format!(
                        "the event subscription lagged: {} events were lost",
                        lagged.skipped()
                    ))
                }
                _ => return,
            },
        }
    }
}

/// The stop reason and error text of a control stop.
fn control_stop(stop: &ControlStop) -> (StopReason, String) {
    match stop {
        ControlStop::BudgetExceeded { max, tool } => (
            StopReason::ToolBudgetExceeded,
            format!(
                "tool-call budget exhausted: max_tool_calls = {max}; the next call ({tool}) was denied and the session aborted"
            ),
        ),
        ControlStop::GuardFailed(message) => (StopReason::ExecutionError, message.clone()),
        ControlStop::AuditFailed(message) => (
            StopReason::RequestAuditError,
            format!("request audit: {message}"),
        ),
    }
}

/// Stop everything the execution started, in order, each runtime-facing step bounded.
///
/// After a budget stop (`let_admitted_finish`), the calls admitted before it are allowed to run
/// to completion first: the gate already holds the model request that would carry their results,
/// so the session cannot move on; then the session is aborted. After any other stop, admission
/// closes at once and the session is aborted right away.
async fn cleanup(
    slots: &Slots,
    controls: &Controls,
    seam: Option<&Seam>,
    run: &mut RunState,
    home: &std::path::Path,
    let_admitted_finish: bool,
) {
    controls.gate().close();
    if let_admitted_finish && slots.session.lock().expect("slot").is_some() {
        let waited = tokio::time::timeout(COMPLETION_BOUND, async {
            while has_open_tool_calls(&run.log) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::debug!("admitted tool calls did not complete before the abort");
        }
    }
    // 1. Close admission: no further tool call runs, no further model request is forwarded.
    controls.close();
    let session = slots.session.lock().expect("slot").take();
    let client = slots.client.lock().expect("slot").take();
    let idle = slots
        .idle
        .lock()
        .expect("slot")
        .as_ref()
        .is_some_and(|p| p.borrow().idle);
    // 2. Abort a session that is still busy.
    if let Some(session) = &session
        && !idle
    {
        match tokio::time::timeout(ABORT_BOUND, session.abort()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => run
                .cleanup_errors
                .push(format!("session abort failed: {e}")),
            Err(_) => run
                .cleanup_errors
                .push(format!("session abort took longer than {ABORT_BOUND:?}")),
        }
    }
    // 3. Wait (bounded) for the runtime to report every started tool call's completion, or to
    //    go idle (after an abort it reports no more completions).
    if session.is_some() {
        let progress = slots.idle.lock().expect("slot").clone();
        let waited = tokio::time::timeout(COMPLETION_BOUND, async {
            while has_open_tool_calls(&run.log)
                && !progress.as_ref().is_some_and(|p| p.borrow().idle)
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::debug!("some tool calls never reported a completion");
        }
    }
    // 4. Wait for every in-process tool handler that started; never cancel one.
    run.tool_handler_failures = controls.drain().await;
    // 5. Disconnect and stop the runtime.
    if let Some(session) = &session {
        match tokio::time::timeout(DISCONNECT_BOUND, session.disconnect()).await {
            Ok(Ok(())) | Err(_) => {}
            Ok(Err(e)) => {
                tracing::debug!("session disconnect failed: {e}");
            }
        }
    }
    drop(session);
    // The audited transport closes before the SDK client stops.
    if let Some(seam) = seam {
        seam.close().await;
    }
    if let Some(client) = client {
        match tokio::time::timeout(STOP_BOUND, client.stop()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!("runtime stop reported: {e}");
                client.force_stop();
            }
            Err(_) => {
                run.cleanup_errors.push(format!(
                    "the runtime did not stop within {STOP_BOUND:?}; it was killed"
                ));
                client.force_stop();
            }
        }
    }
    // The recorder ends when the stream closes; give it a moment, then stop it.
    let recorder = slots.recorder.lock().expect("slot").take();
    if let Some(recorder) = recorder {
        let abort = recorder.abort_handle();
        if tokio::time::timeout(Duration::from_secs(2), recorder)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    // 6. No runtime process may outlive the run.
    kill_leftovers(run, home).await;
}

/// Whether some `tool.execution_start` in the log has no `tool.execution_complete` yet.
fn has_open_tool_calls(log: &Mutex<Vec<LoggedEvent>>) -> bool {
    let log = log.lock().expect("log lock");
    let mut open = std::collections::HashSet::new();
    for logged in log.iter() {
        let id = logged.event.data.get("toolCallId").and_then(|v| v.as_str());
        match (logged.event.event_type.as_str(), id) {
            ("tool.execution_start", Some(id)) => {
                open.insert(id.to_owned());
            }
            ("tool.execution_complete", Some(id)) => {
                open.remove(id);
            }
            _ => {}
        }
    }
    !open.is_empty()
}

/// Copy the files and folders under `from` into `to` (which exists), recursively.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Every process whose environment carries this run's private home is the runtime or one of its
/// children. Any still alive now outlived the stop: kill it and report it.
async fn kill_leftovers(run: &mut RunState, home: &std::path::Path) {
    let marker = format!("COPILOT_HOME={}", home.display());
    // A stopped process can take a moment to be reaped.
    let mut left = runtime::processes_with_env(&marker);
    for _ in 0..20 {
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = runtime::processes_with_env(&marker);
    }
    for pid in &left {
        #[cfg(unix)]
        // SAFETY: kill(2) with a pid we just read from /proc; no memory is involved.
        unsafe {
            libc::kill(*pid as libc::pid_t, libc::SIGKILL);
        }
    }
    run.cleanup_errors.push(format!(
        "runtime processes outlived the stop and were killed: {left:?}"
    ));
}
