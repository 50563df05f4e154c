//! The session stage of a run: the SDK session configuration mapped from the eval
//! ([`session_config`]), the runtime and session started, the live event recording, the turns
//! sent one by one (`turns.rs`: with the session hatch at its points), and the wait for each
//! turn's `session.idle`, all bounded by the eval's
//! `timeout_s` and cut short by a control stop ([`drive`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use github_copilot_sdk::session::Session;
use github_copilot_sdk::subscription::RecvErrorKind;
use github_copilot_sdk::{Client, ClientOptions, SessionConfig};
use tokio::sync::watch;

use super::controls::{ControlHooks, Controls};
use super::state::{Progress, RunState, control_stop};
use super::test_faults::{SessionClock, TestFaults};
use super::{OFFLINE_TOKEN, Target, live_token};
use crate::error::ConfigError;
use crate::eval::{ClientMode, CopilotEval, EMPTY_MODE_SETTINGS, Prompt, check_empty_mode};
use crate::evidence::mcp::is_server_event;
use crate::evidence::{LoggedEvent, SessionEventType as Kind};
use crate::result::{RawEvent, RuntimeStartup, StopReason};

/// Event buffer of the live subscription (events; a slower recorder would lose events).
const EVENT_BUFFER: usize = 4096;

/// What the execution stores for cleanup, even when it is cut short by the timeout.
#[derive(Default)]
pub(super) struct Slots {
    pub(super) client: Mutex<Option<Client>>,
    pub(super) session: Mutex<Option<Arc<Session>>>,
    pub(super) recorder: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Set to true once the root `session.idle` was seen (the session is not busy).
    pub(super) idle: Mutex<Option<watch::Receiver<Progress>>>,
}

/// Map the eval onto the SDK's session configuration (without credentials, which the run adds).
///
/// Errors: the extra session-config function changed a field that the eval sets itself.
pub(super) fn session_config(
    eval: &CopilotEval,
    working_directory: &std::path::Path,
    controls: &Arc<Controls>,
) -> Result<SessionConfig, ConfigError> {
    let mut config = SessionConfig::default()
        .with_working_directory(working_directory.to_path_buf())
        .with_streaming(eval.streaming);
    if let Some(model) = &eval.model {
        config = config.with_model(model.clone());
    }
    if let Some(effort) = eval.reasoning_effort {
        config = config.with_reasoning_effort(effort.as_str());
    }
    if let Some(message) = system_message(eval) {
        config = config.with_system_message(message);
    }
    if let Some(allowed) = &eval.allowed_tools {
        config = config.with_available_tools(allowed.clone());
    }
    if let Some(excluded) = &eval.excluded_tools {
        config = config.with_excluded_tools(excluded.clone());
    }
    if !eval.mcp_servers.is_empty() {
        config = config.with_mcp_servers(eval.mcp_servers.clone());
    }
    if !eval.skill_directories.is_empty() {
        config = config
            .with_skill_directories(eval.skill_directories.clone())
            .with_enable_skills(true);
    }
    if !eval.disabled_skills.is_empty() {
        config = config.with_disabled_skills(eval.disabled_skills.clone());
    }
    if !eval.custom_agents.is_empty() {
        config = config.with_custom_agents(eval.custom_agents.clone());
    }
    if let Some(agent) = &eval.active_agent {
        config = config.with_agent(agent.clone());
    }
    if let Some(excluded) = &eval.default_agent_excluded_tools {
        config = config.with_default_agent(github_copilot_sdk::DefaultAgentConfig {
            excluded_tools: Some(excluded.clone()),
        });
    }
    if !eval.tools.is_empty() {
        config = config.with_tools(controls.wrap_tools(&eval.tools));
    }
    config = config.with_hooks(Arc::new(ControlHooks(controls.clone())));
    match (&eval.permission_handler, eval.auto_confirm) {
        (Some(handler), _) => config = config.with_permission_handler(handler.clone()),
        (None, true) => {
            config = config
                .with_permission_handler(Arc::new(github_copilot_sdk::handler::ApproveAllHandler))
        }
        (None, false) => {}
    }
    if let Some(handler) = &eval.user_input_handler {
        config = config.with_user_input_handler(handler.clone());
    }
    if eval.client_mode == ClientMode::Empty {
        config.available_tools = Some(eval.allowed_tools.clone().unwrap_or_default());
    }
    if let Some(extra) = &eval.session_config_fn {
        let before = MappedFields::of(&config);
        config = extra(config);
        MappedFields::of(&config).check_unchanged(&before)?;
    }
    if eval.client_mode == ClientMode::Empty {
        check_empty_mode(&config)?;
        for (_, _, set) in EMPTY_MODE_SETTINGS {
            set(&mut config);
        }
    }
    Ok(config)
}

/// The session's system message: the eval's sections and instructions in `customize` mode,
/// else its instructions in its mode (`None` without instructions).
fn system_message(eval: &CopilotEval) -> Option<github_copilot_sdk::SystemMessageConfig> {
    if eval.system_message_mode == crate::eval::SystemMessageMode::Customize {
        let sections = eval
            .system_message_sections
            .iter()
            .map(|(id, action)| {
                (
                    id.clone(),
                    github_copilot_sdk::SectionOverride {
                        action: Some(action.as_str().to_owned()),
                        content: action.content().map(str::to_owned),
                    },
                )
            })
            .collect();
        let mut message = github_copilot_sdk::SystemMessageConfig::new().with_mode("customize");
        if !eval.system_message_sections.is_empty() {
            message = message.with_sections(sections);
        }
        if let Some(instructions) = &eval.instructions {
            message = message.with_content(instructions.clone());
        }
        Some(message)
    } else {
        eval.instructions.as_ref().map(|instructions| {
            github_copilot_sdk::SystemMessageConfig::new()
                .with_mode(eval.system_message_mode.as_str())
                .with_content(instructions.clone())
        })
    }
}

/// The mapped fields that the escape hatch must not override (set them on the eval instead).
#[derive(PartialEq)]
struct MappedFields {
    model: Option<String>,
    reasoning_effort: Option<String>,
    working_directory: Option<PathBuf>,
    streaming: Option<bool>,
    available_tools: Option<Vec<String>>,
    excluded_tools: Option<Vec<String>>,
    skill_directories: Option<Vec<PathBuf>>,
    disabled_skills: Option<Vec<String>>,
    agent: Option<String>,
    default_agent_excluded_tools: Option<Vec<String>>,
    tool_names: Option<Vec<String>>,
    /// Mode, content and the section edits (as sorted JSON).
    system_message: Option<(Option<String>, Option<String>, Option<String>)>,
}

impl MappedFields {
    fn of(config: &SessionConfig) -> Self {
        Self {
            model: config.model.clone(),
            reasoning_effort: config.reasoning_effort.clone(),
            working_directory: config.working_directory.clone(),
            streaming: config.streaming,
            available_tools: config.available_tools.clone(),
            excluded_tools: config.excluded_tools.clone(),
            skill_directories: config.skill_directories.clone(),
            disabled_skills: config.disabled_skills.clone(),
            agent: config.agent.clone(),
            default_agent_excluded_tools: config
                .default_agent
                .as_ref()
                .and_then(|agent| agent.excluded_tools.clone()),
            tool_names: config
                .tools
                .as_ref()
                .map(|tools| tools.iter().map(|t| t.name.clone()).collect()),
            system_message: config.system_message.as_ref().map(|m| {
                let sections = m.sections.as_ref().map(|sections| {
                    let sorted: std::collections::BTreeMap<_, _> = sections.iter().collect();
                    serde_json::to_string(&sorted).unwrap_or_default()
                });
                (m.mode.clone(), m.content.clone(), sections)
            }),
        }
    }

    fn check_unchanged(&self, before: &Self) -> Result<(), ConfigError> {
        let changed = [
            ("model", self.model != before.model),
            (
                "reasoning_effort",
                self.reasoning_effort != before.reasoning_effort,
            ),
            (
                "working_directory",
                self.working_directory != before.working_directory,
            ),
            ("streaming", self.streaming != before.streaming),
            (
                "allowed_tools",
                self.available_tools != before.available_tools,
            ),
            (
                "excluded_tools",
                self.excluded_tools != before.excluded_tools,
            ),
            (
                "skill_directories",
                self.skill_directories != before.skill_directories,
            ),
            (
                "disabled_skills",
                self.disabled_skills != before.disabled_skills,
            ),
            ("active_agent", self.agent != before.agent),
            (
                "default_agent_excluded_tools",
                self.default_agent_excluded_tools != before.default_agent_excluded_tools,
            ),
            ("tools", self.tool_names != before.tool_names),
            ("instructions", self.system_message != before.system_message),
        ];
        match changed.iter().find(|(_, changed)| *changed) {
            Some((field, _)) => Err(ConfigError::new(
                "extra_session_config",
                format!(
                    "the function overrides `{field}`, which the eval sets itself; set `{field}` on the eval instead"
                ),
            )),
            None => Ok(()),
        }
    }
}

/// Where a session on a pooled runtime lives: a session id naming the run's endpoint
/// ([`crate::run::pool::wire::session_id`]) and the run's private home as its config directory.
pub(super) struct PooledSession {
    pub(super) session_id: String,
    pub(super) config_directory: std::path::PathBuf,
    /// The 127.0.0.1 port the client connects to: the relay to the pooled runtime.
    pub(super) port: u16,
    /// Per MCP mock of the eval, its name and the URL the runtime reaches it at: the pool's MCP
    /// relay ([`super::pooled::relay_mocks`]).
    pub(super) mcp_urls: Vec<(String, String)>,
}

/// Start the runtime and the session and run the turns ([`execute`]), bounded by `deadline` and
/// cut short by a control stop; record the outcome on `run`. Returns whether the turns finished
/// on their own (no timeout, no stop, no execution error).
#[allow(clippy::too_many_arguments)]
pub(super) async fn drive(
    eval: &CopilotEval,
    prompts: &[Prompt],
    working_directory: &std::path::Path,
    client_options: ClientOptions,
    target: &Target,
    resume: Option<super::resume::Resume<'_>>,
    faults: &TestFaults,
    controls: &Arc<Controls>,
    slots: &Slots,
    run: &mut RunState,
    deadline: Instant,
    pooled: Option<&PooledSession>,
) -> bool {
    let mut stop_signal = controls.stop_signal();
    let outcome = tokio::select! {
        biased;
        stop = stop_signal.wait_for(Option::is_some) => {
            stop.ok().and_then(|s| s.clone())
                .map(|stop| control_stop(&stop))
        }
        outcome = timed(
            execute(eval, prompts, working_directory, client_options, target, resume, faults, controls, slots, run, pooled),
            deadline,
            faults.clock_starts_at_session.as_ref(),
            Duration::from_secs_f64(eval.timeout_s),
        ) => match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some((StopReason::ExecutionError, Some(error))),
            Err(_) => Some((
                StopReason::Timeout,
                Some(format!("timed out after {}s (eval timeout_s)", eval.timeout_s)),
            )),
        },
    };
    // The timeout while the MCP check still waits for a server: a setup error naming it. A
    // timeout before the prompt was sent (the runtime still starting, the session not created
    // yet, the skill check) is the infrastructure's, not the agent's: an execution error. Any
    // timeout says in which phase it struck.
    let outcome = match outcome {
        Some((StopReason::Timeout, _)) if run.mcp_checking => Some((
            StopReason::McpSetupError,
            Some(super::mcp_check::mcp_timeout_error(run, eval.timeout_s)),
        )),
        Some((StopReason::Timeout, Some(error))) if !run.prompt_sent => Some((
            StopReason::ExecutionError,
            Some(format!(
                "{error} {}; {BEFORE_THE_PROMPT}",
                timeout_phase(run, &controls.handlers_running())
            )),
        )),
        Some((StopReason::Timeout, Some(error))) => Some((
            StopReason::Timeout,
            Some(format!(
                "{error} {}",
                timeout_phase(run, &controls.handlers_running())
            )),
        )),
        other => other,
    };
    let turns_finished = outcome.is_none();
    if let Some((reason, error)) = outcome {
        run.stop(reason, error);
    }
    // A control stop that raced with the end of the turns still decides the reason.
    if let Some(stop) = controls.stop_requested() {
        let (reason, error) = control_stop(&stop);
        run.stop(reason, error);
    }
    turns_finished
}

/// What the error of a timeout that struck before the prompt was sent adds: why the run is an
/// infrastructure stop (`execution_error`) rather than the agent's `timeout`.
pub(super) const BEFORE_THE_PROMPT: &str = "the prompt was never sent, so the agent was not tested: an infrastructure stop (execution_error), not the agent's timeout; give the eval a larger timeout_s, or run fewer tests at once on a loaded machine";

/// Where a timeout struck, from the phases the run had finished (their timings are recorded as
/// each ends), whether the prompt was sent, and the in-process tool handlers still `running`:
/// `during runtime start`, `during session creation`, `in the session hatch <point>`, `before
/// the prompt was sent`, `in the tool handler of `x`` or `during a model turn`.
fn timeout_phase(run: &RunState, running: &[String]) -> String {
    if run.timings.runtime_start_ms.is_none() {
        "during runtime start (the runtime had not answered the protocol handshake)".to_owned()
    } else if run.timings.create_session_ms.is_none() {
        "during session creation (the session was not created yet)".to_owned()
    } else if let Some(at) = run.hatch_running {
        format!("in the session hatch {at} (still running)")
    } else if !run.prompt_sent {
        "before the prompt was sent (the session was created; the checks before the prompt were still running)".to_owned()
    } else if let Some(tool) = running.first() {
        format!("in the tool handler of `{tool}` (still running)")
    } else {
        "during a model turn (waiting for the model or the runtime; no tool handler was running)"
            .to_owned()
    }
}

/// `work` bounded by `deadline`; with the test-only [`SessionClock`], by `timeout` from the
/// moment the session was created instead (no bound before it). `Err(())`: the bound elapsed.
async fn timed<F: std::future::Future>(
    work: F,
    deadline: Instant,
    clock: Option<&SessionClock>,
    timeout: Duration,
) -> Result<F::Output, ()> {
    let Some(clock) = clock else {
        return tokio::time::timeout_at(deadline.into(), work)
            .await
            .map_err(|_| ());
    };
    clock.reset();
    tokio::pin!(work);
    let started = tokio::select! {
        output = &mut work => return Ok(output),
        started = clock.wait() => started,
    };
    tokio::time::timeout_at((started + timeout).into(), work)
        .await
        .map_err(|_| ())
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    eval: &CopilotEval,
    prompts: &[Prompt],
    working_directory: &std::path::Path,
    client_options: ClientOptions,
    target: &Target,
    resume: Option<super::resume::Resume<'_>>,
    faults: &TestFaults,
    controls: &Arc<Controls>,
    slots: &Slots,
    run: &mut RunState,
    pooled: Option<&PooledSession>,
) -> Result<(), String> {
    let mut config = run_config(eval, working_directory, controls, target, faults, pooled)?;
    super::mcp_check::tag_mock_requests(&mut config, eval, &run.mock_tag);
    let client = start_client(client_options, pooled, slots, run).await?;

    let t = Instant::now();
    let prepared = match resume {
        Some(resume) => {
            client.prepare_resume_session(super::resume::resume_config(config, resume)?)
        }
        None => client.prepare_session(config),
    }
    .map_err(|e| format!("invalid session configuration: {e}"))?;
    let subscription = prepared.subscribe();
    let (progress_tx, progress_rx) = watch::channel(Progress::default());
    *slots.idle.lock().expect("slot") = Some(progress_rx.clone());
    let recorder = tokio::spawn(record(
        subscription,
        run.log.clone(),
        run.capture_errors.clone(),
        progress_tx,
        faults.clone(),
    ));
    *slots.recorder.lock().expect("slot") = Some(recorder);
    let session = Arc::new(prepared.start().await.map_err(|e| match resume {
        Some(super::resume::Resume { session_id, .. }) => format!(
            "resuming the session failed: the runtime could not resume session {session_id} from the run's home: {e}"
        ),
        None => format!("creating the session failed: {e}"),
    })?);
    run.session_id = Some(session.id().to_string());
    run.resumed = resume.is_some();
    run.timings.create_session_ms = Some(t.elapsed().as_millis() as u64);
    if let Some(clock) = &faults.clock_starts_at_session
        && !clock.starts_at_prompt()
    {
        clock.start();
    }
    *slots.session.lock().expect("slot") = Some(session.clone());
    check_before_prompt(eval, &session, run, &progress_rx).await?;

    let t = Instant::now();
    if let Some(resume) = resume {
        let calls = resume.pending.as_ref().map_err(Clone::clone)?;
        let tools = controls.wrap_tools(&eval.tools);
        super::pending::continue_calls(calls, &tools, &session, run, &progress_rx).await?;
    }
    let result = super::turns::send_prompts(
        prompts,
        working_directory,
        faults,
        eval.session_hatch.as_ref(),
        &session,
        run,
        &progress_rx,
    )
    .await;
    run.timings.turns_ms = Some(t.elapsed().as_millis() as u64);
    result
}

/// The session's configuration for this run: the eval's ([`session_config`]), on a pooled
/// runtime the run's session id and config directory, the event buffer, and the token.
fn run_config(
    eval: &CopilotEval,
    working_directory: &std::path::Path,
    controls: &Arc<Controls>,
    target: &Target,
    faults: &TestFaults,
    pooled: Option<&PooledSession>,
) -> Result<SessionConfig, String> {
    let mut config =
        session_config(eval, working_directory, controls).map_err(|e| e.to_string())?;
    if let Some(pooled) = pooled {
        config = config
            .with_session_id(pooled.session_id.clone())
            .with_config_directory(pooled.config_directory.clone());
        relay_mock_urls(&mut config, &pooled.mcp_urls);
    }
    config.event_buffer_capacity = Some(faults.event_buffer.unwrap_or(EVENT_BUFFER));
    Ok(match target {
        Target::Offline { .. } => offline_settings(config, eval).with_github_token(OFFLINE_TOKEN),
        Target::Live => match live_token() {
            Some(token) => config.with_github_token(token),
            None => config,
        },
    })
}

/// The name of the runtime's builtin GitHub MCP server.
const BUILTIN_GITHUB_MCP_SERVER: &str = "github-mcp-server";

/// An offline session leaves out two things of the runtime's own that cannot work against the
/// loopback model server and cost the runtime CPU in every session: the builtin GitHub MCP
/// server (its endpoint, `POST /mcp/readonly`, answers 404, so it never offers a tool) and the
/// session telemetry (its endpoint is unreachable). What reaches the model is the same either
/// way (`tests/tests/offline_settings.rs` runs both through the runtime). An eval whose
/// extra session config sets `disabled_mcp_servers` or `enable_session_telemetry` keeps its
/// value, and an eval with an MCP server of that name keeps its server.
fn offline_settings(mut config: SessionConfig, eval: &CopilotEval) -> SessionConfig {
    if config.disabled_mcp_servers.is_none()
        && !eval.mcp_servers.contains_key(BUILTIN_GITHUB_MCP_SERVER)
    {
        config.disabled_mcp_servers = Some(vec![BUILTIN_GITHUB_MCP_SERVER.to_owned()]);
    }
    if config.enable_session_telemetry.is_none() {
        config.enable_session_telemetry = Some(false);
    }
    config
}

/// Point each MCP mock's server configuration at its URL on the pool's MCP relay (`urls`: name
/// and URL). Only the URL changes: the headers (the run's tag among them), tools and timeout
/// stay the mock's.
fn relay_mock_urls(config: &mut SessionConfig, urls: &[(String, String)]) {
    let Some(servers) = config.mcp_servers.as_mut() else {
        return;
    };
    for (name, url) in urls {
        if let Some(github_copilot_sdk::McpServerConfig::Http(http)) = servers.get_mut(name) {
            http.url = url.clone();
        }
    }
}

/// Start the SDK client (the runtime, or the connection to a pooled one) and record its start
/// timings and pid on `run`; the client goes in its slot for cleanup.
async fn start_client(
    client_options: ClientOptions,
    pooled: Option<&PooledSession>,
    slots: &Slots,
    run: &mut RunState,
) -> Result<Client, String> {
    let t = Instant::now();
    // A pooled runtime was confined by the pool when it started; a private one is confined
    // here, as it starts.
    let client = match (pooled, run.confine.take()) {
        (None, Some(policy)) => super::sandbox::start_confined(client_options, policy).await?,
        _ => Client::start(client_options)
            .await
            .map_err(|e| format!("starting the runtime failed: {e}"))?,
    };
    run.timings.runtime_start_ms = Some(t.elapsed().as_millis() as u64);
    if let Some(pooled) = pooled {
        crate::run::pool::nodelay::to_port(pooled.port);
    }
    run.runtime_pid = client.pid();
    run.timings.runtime_startup = client.startup_timings().map(|s| RuntimeStartup {
        total_ms: s.total_ms,
        program_resolve_ms: s.program_resolve_ms,
        process_spawn_ms: s.process_spawn_ms,
        transport_setup_ms: s.transport_setup_ms,
        handshake_ms: s.handshake_ms,
    });
    *slots.client.lock().expect("slot") = Some(client.clone());
    Ok(client)
}

/// The checks before the prompt: the runtime must have discovered every requested skill, and
/// every MCP server the eval configured must be connected. A failed check is the run's stop.
async fn check_before_prompt(
    eval: &CopilotEval,
    session: &Session,
    run: &mut RunState,
    progress_rx: &watch::Receiver<Progress>,
) -> Result<(), String> {
    if let Some(discovery) = run.skill_discovery.as_mut()
        && let Some(error) = super::skills::discover(
            session,
            discovery,
            &eval.skill_directories,
            &eval.disabled_skills,
        )
        .await
    {
        run.fail(StopReason::SkillSetupError, error.clone());
        return Err(error);
    }
    run.mcp_checking = true;
    let (states, error) = super::mcp_check::check_mcp(
        session,
        &run.mcp_configured,
        &run.mcp_optional,
        &run.log,
        progress_rx.clone(),
    )
    .await;
    run.mcp_checking = false;
    run.mcp_checked = states;
    if let Some(error) = error {
        run.fail(StopReason::McpSetupError, error.clone());
        return Err(error);
    }
    Ok(())
}

/// Copy every event of the live subscription into the log until the stream closes. Events the
/// subscription dropped because the recorder fell behind (`Lagged`) are reported as a capture
/// error with their number (the evidence is then incomplete). `faults` (test-only) can hold the
/// recorder before its first read, or make it hang after the first root `session.idle`.
async fn record(
    mut subscription: github_copilot_sdk::EventSubscription,
    log: Arc<Mutex<Vec<LoggedEvent>>>,
    capture_errors: Arc<Mutex<Vec<String>>>,
    progress: watch::Sender<Progress>,
    faults: TestFaults,
) {
    if let Some(hold) = &faults.hold_event_recorder {
        hold.notified().await;
    }
    loop {
        if faults.event_recorder_hangs_after_idle && progress.borrow().idles > 0 {
            std::future::pending::<()>().await;
        }
        match subscription.recv().await {
            Ok(event) => {
                let received = Instant::now();
                let agent_id = event.agent_id.clone().filter(|a| !a.is_empty());
                let root = agent_id.is_none();
                let event = RawEvent {
                    event_type: event.event_type,
                    id: event.id,
                    timestamp: event.timestamp,
                    agent_id,
                    ephemeral: event.ephemeral.unwrap_or(false),
                    data: event.data,
                };
                let kind = event.kind();
                let mcp = is_server_event(&kind);
                match kind {
                    Kind::SessionIdle if root => progress.send_modify(|p| {
                        p.idle = true;
                        p.idles += 1;
                    }),
                    Kind::UserMessage if root => progress.send_modify(|p| p.idle = false),
                    Kind::SessionError => progress.send_modify(|p| p.session_error = true),
                    _ => {}
                }
                log.lock()
                    .expect("log lock")
                    .push(LoggedEvent { event, received });
                // After the push: the MCP check reads the log when woken.
                if mcp {
                    progress.send_modify(|p| p.mcp_events += 1);
                }
            }
            Err(e) => match e.kind() {
                RecvErrorKind::Lagged(lagged) => {
                    capture_errors.lock().expect("lock").push(format!(
                        "the event subscription lagged: {} events were lost (the recorder fell more than {} events behind the runtime)",
                        lagged.skipped(),
                        faults.event_buffer.unwrap_or(EVENT_BUFFER)
                    ))
                }
                _ => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use github_copilot_sdk::handler::PermissionHandler;

    use super::*;

    fn controls() -> Arc<Controls> {
        Controls::new(None, vec![], None)
    }

    #[test]
    fn a_caller_permission_handler_is_never_replaced() {
        struct Deny;
        #[async_trait::async_trait]
        impl PermissionHandler for Deny {
            async fn handle(
                &self,
                _session_id: github_copilot_sdk::SessionId,
                _request_id: github_copilot_sdk::RequestId,
                _data: github_copilot_sdk::PermissionRequestData,
            ) -> github_copilot_sdk::handler::PermissionResult {
                github_copilot_sdk::handler::PermissionResult::NoResult
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let handler: Arc<dyn PermissionHandler> = Arc::new(Deny);
        let eval = CopilotEval::builder()
            .auto_confirm(true)
            .permission_handler(handler.clone())
            .build()
            .unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert!(Arc::ptr_eq(
            config.permission_handler.as_ref().unwrap(),
            &handler
        ));
        // Without a handler and without auto_confirm, none is installed.
        let eval = CopilotEval::builder().auto_confirm(false).build().unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert!(config.permission_handler.is_none());
    }

    #[test]
    fn empty_mode_forces_isolation_and_rejects_contradictions() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder().client_mode("empty").build().unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert_eq!(
            config.available_tools,
            Some(vec![]),
            "no tools unless listed"
        );
        assert_eq!(config.enable_config_discovery, Some(false));
        assert_eq!(config.enable_file_hooks, Some(false));
        assert_eq!(config.enable_on_demand_instruction_discovery, Some(false));
        assert_eq!(config.skip_custom_instructions, Some(true));
        assert_eq!(config.enable_managed_settings, Some(false));

        let eval = CopilotEval::builder()
            .client_mode("empty")
            .allowed_tools(["view"])
            .build()
            .unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert_eq!(config.available_tools, Some(vec!["view".to_owned()]));

        let err = CopilotEval::builder()
            .client_mode("empty")
            .extra_session_config(|c| c.with_enable_file_hooks(true))
            .build()
            .unwrap_err();
        assert_eq!(err.field, "extra_session_config");
        assert!(err.message.contains("enable_file_hooks = true"), "{err}");
        // The same setting is fine in the default mode.
        CopilotEval::builder()
            .extra_session_config(|c| c.with_enable_file_hooks(true))
            .build()
            .unwrap();
    }

    #[test]
    fn mapping_sets_the_session_fields() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder()
            .model("gpt-test")
            .reasoning_effort("high")
            .instructions("Be brief.")
            .system_message_mode("replace")
            .allowed_tools(["create"])
            .streaming(true)
            .build()
            .unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert_eq!(config.model.as_deref(), Some("gpt-test"));
        assert_eq!(config.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(config.streaming, Some(true));
        assert_eq!(config.available_tools, Some(vec!["create".to_owned()]));
        let system = config.system_message.unwrap();
        assert_eq!(system.mode.as_deref(), Some("replace"));
        assert_eq!(system.content.as_deref(), Some("Be brief."));
        assert!(
            config.permission_handler.is_some(),
            "auto_confirm installs approval"
        );
    }

    #[test]
    fn escape_hatch_may_not_override_mapped_fields() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder()
            .model("gpt-test")
            .extra_session_config(|c| c.with_model("other"))
            .build()
            .unwrap();
        let err = session_config(&eval, dir.path(), &controls()).unwrap_err();
        assert_eq!(err.field, "extra_session_config");
        assert!(err.message.contains("`model`"), "{err}");

        let eval = CopilotEval::builder()
            .extra_session_config(|c| c.with_client_name("copilot-eval-test"))
            .build()
            .unwrap();
        let config = session_config(&eval, dir.path(), &controls()).unwrap();
        assert_eq!(config.client_name.as_deref(), Some("copilot-eval-test"));
    }
}
