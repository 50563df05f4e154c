//! The run lifecycle: one attempt of one eval on one prompt ([`run_with`]) or on several prompts
//! in one session ([`run_turns`]).
//!
//! [`run_with`] resolves the runtime, gives it a private home, starts it through the SDK
//! (`Client::start`), creates the session with a live event subscription taken *before* the
//! session starts, sends the prompt, and waits for the root agent's `session.idle`. `timeout_s`
//! bounds all of that, runtime start included; only a first-start unpack of the runtime into the
//! shared cache ([`crate::runtime::unpack::warm`], `timings.runtime_unpack_ms`) comes before the
//! clock starts. A budget stop, a failed caller guard or a panicking tool handler
//! ([`controls`]) ends that wait at once.
//!
//! Then, in every outcome, it cleans up, in this order: close admission (every later tool call is
//! denied, no model request is forwarded); abort a session that is still busy; wait (bounded) for
//! the runtime to report the completion of every tool call it started; wait for every in-process
//! tool handler that already started (bounded, never cancelled); disconnect; stop the runtime (forcing it
//! when a graceful stop fails); and check that no process carrying the run's private home is left
//! (killing and reporting any). Cleanup may outlast `timeout_s`; `timings.cleanup_ms` says how
//! long it took. There is exactly one attempt: nothing is retried.
//!
//! Errors never escape as `Err`: every failure is a [`CopilotResult`] with its
//! [`StopReason`], error text and the evidence gathered so far.
//!
//! The stages, one file each: `prepare.rs` (prompts, skills checked locally, working directory,
//! runtime, private home, cache, client options, authentication), `session.rs` (the SDK session
//! configuration mapped from the eval, the session, event recording, the turns and the wait),
//! `cleanup.rs` (the ordered stop above, then what the proxy, the controls and a replay check
//! report), `state.rs` (what the run accumulates, turned into the result). Around them:
//! [`controls`] (one module per concern: the budget, the caller's guards, the in-process tool
//! handlers with the drain and the panic stop, the SDK hooks; one "close and stop"), [`proxy`]
//! (the request proxy through the SDK's
//! request handler) and the interfaces observers implement ([`ReplayCheck`], [`ExchangeTap`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::{CopilotEval, Prompt};
use crate::result::CopilotResult;
#[cfg(doc)]
use crate::result::StopReason;

mod ablate;
pub(crate) mod agent_ids;
mod cleanup;
pub mod controls;
mod hooks;
mod mcp_check;
mod pending;
pub mod permissions;
pub mod pool;
mod pooled;
mod prepare;
pub mod proxy;
mod resume;
pub mod sandbox;
mod session;
pub mod skills;
mod state;
mod test_faults;
mod turns;

pub use hooks::{ExchangeTap, ReplayCheck, RunFolders};
/// What `doctor` (feature `runner`) asks of a run's preparation.
#[cfg(feature = "runner")]
pub(crate) use prepare::{client_options, gh_token};
pub(crate) use prepare::{live_token, runtime_env};
pub use proxy::ProxyContext;
#[doc(hidden)]
pub use test_faults::{SessionClock, TestFaults};

use controls::Controls;
use prepare::{Prepared, SetupFailure};
use proxy::{ProxyOptions, RequestProxy};
use session::Slots;
use state::RunState;

/// Placeholder token given to the runtime in offline runs (the loopback server accepts any).
pub const OFFLINE_TOKEN: &str = "copilot-eval-offline-placeholder";

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
    home: Option<PathBuf>,
    resume: Option<String>,
    continue_pending_work: Option<bool>,
    workdir_root: Option<PathBuf>,
    replay: Option<Arc<dyn ReplayCheck>>,
    tap: Option<Arc<dyn ExchangeTap>>,
    pool: Option<crate::run::pool::PoolSource>,
    ablate: Vec<crate::eval::Ablate>,
    faults: TestFaults,
}

impl RunOptions {
    /// Run against GitHub's Copilot service (live model requests; needs authentication:
    /// `GITHUB_TOKEN`, then `GH_TOKEN`, then the signed-in user).
    pub fn live() -> Self {
        Self::with_target(Target::Live)
    }

    /// Options for `target`, everything else at its default.
    fn with_target(target: Target) -> Self {
        Self {
            target,
            runtime_path: None,
            home_seed: None,
            home: None,
            resume: None,
            continue_pending_work: None,
            workdir_root: None,
            replay: None,
            tap: None,
            pool: None,
            ablate: Vec::new(),
            faults: TestFaults::default(),
        }
    }

    /// Run offline against a loopback model server, e.g.
    /// `RunOptions::offline(server.base_url())` for a
    /// [`ModelServer`](crate::model_server::ModelServer). The runtime gets the server as its
    /// API and GitHub endpoints and a placeholder token.
    pub fn offline(base_url: impl Into<String>) -> Self {
        Self::with_target(Target::Offline {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
        })
    }

    /// Copy this folder's contents into the run's private runtime home (`COPILOT_HOME`) before
    /// the runtime starts: user-level configuration for the run, such as
    /// `copilot-instructions.md`, `skills/<name>/SKILL.md` or `hooks/`, or an earlier run's
    /// kept home to [`resume`](Self::resume) its session from. The home itself stays private
    /// and is removed after the run (unless given with [`home`](Self::home)).
    pub fn home_seed(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home_seed = Some(dir.into());
        self
    }

    /// Use `dir` as the run's runtime home (`COPILOT_HOME`, where the runtime stores its
    /// sessions) instead of a fresh temporary folder, and leave it in place after the run (the
    /// caller removes it). The folder is created when missing; a [`home_seed`](Self::home_seed)
    /// is copied into it. A later run can then resume the run's session from a copy of it
    /// ([`resume`](Self::resume)).
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Resume the session with this id (the earlier run's
    /// [`CopilotResult::session_id`]) instead of creating one: the runtime finds it in its home,
    /// so the home must hold that session's state, e.g. seeded from the earlier run's kept home
    /// (`.home_seed(earlier_home)`, see [`home`](Self::home)). The session keeps its id, the
    /// model sees the earlier conversation as history, and the result has `resumed = true`. A
    /// session the runtime cannot find or resume ends the run with `execution_error` ("resuming
    /// the session failed: ...").
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.resume = Some(session_id.into());
        self
    }

    /// With [`resume`](Self::resume): the SDK's `continue_pending_work` for the resumed session
    /// (`ResumeSessionConfig::continue_pending_work`). `true` asks the runtime to continue the
    /// tool calls and permission requests that were pending when the earlier run ended; `false`
    /// (the runtime's default when unset) treats them as interrupted, keeping the tool results
    /// it already recorded. The runtime's `session.resume` event (the result's first raw event)
    /// says what it was given. Without `resume` the run ends with `execution_error` before the
    /// runtime starts, naming this setting.
    pub fn continue_pending_work(mut self, continue_pending: bool) -> Self {
        self.continue_pending_work = Some(continue_pending);
        self
    }

    /// The test's root folder: what a cassette's `${workdir}` stands for when the run records
    /// or replays, the copilot-sdk's meaning ([`RunFolders::root`]). The test context sets its
    /// own `ctx.workdir()`; unset, or when the session's working directory is not inside it,
    /// `${workdir}` stands for the session's working directory.
    pub fn workdir_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir_root = Some(dir.into());
        self
    }

    /// Use this runtime executable instead of resolving one
    /// ([`runtime::resolve`](crate::runtime::resolve)).
    pub fn runtime_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.runtime_path = Some(path.into());
        self
    }

    /// Ask `check` after the turns (and cleanup) for a model-side replay failure; a failure
    /// ends the run with [`StopReason::ReplayMismatch`] and its text in `error`. Set by
    /// [`ReplaySession::run_options`](crate::cassette::ReplaySession::run_options).
    pub fn replay_check(mut self, check: Arc<dyn ReplayCheck>) -> Self {
        self.replay = Some(check);
        self
    }

    /// Record the run's model exchanges into `recorder`, typically a
    /// [`cassette::Recorder`](crate::cassette::Recorder) (any [`ExchangeTap`]): the request
    /// proxy is installed and hands it every model request and answer it forwards. The answers
    /// reach the runtime unchanged; build the cassette afterwards with
    /// [`Recorder::cassette`](crate::cassette::Recorder::cassette).
    pub fn record(mut self, recorder: Arc<dyn ExchangeTap>) -> Self {
        self.tap = Some(recorder);
        self
    }

    /// Lease warm runtimes from `pool` ([`crate::run::pool`]) instead of starting a private one,
    /// when the eval can share a runtime: offline, not in empty client mode, not
    /// `fresh_runtime`, no session hatch, no resume, no home seed, no MCP servers but in-process mocks (which the runtime reaches
    /// through the pool's MCP relay, [`crate::run::pool::Lease::relay_mcp`]; see
    /// docs/performance.md, "Warm runtimes"). Any other eval starts its private runtime. The lease is released when
    /// the run ends (clean when its turns finished; otherwise the runtime is retired): the
    /// processes the session left running are killed and become the run's cleanup errors, and
    /// the runtime's folders are reset ([`crate::run::pool::LeaseEnd`]). Without this call, a run in a test process of `cargo copilot-eval`
    /// leases from the runner's pool ([`crate::run::pool::RunnerPool::from_env`]).
    pub fn pooled(mut self, pool: crate::run::pool::PoolSource) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Run the eval without the inputs of `kinds` (the ablated side of `cargo copilot-eval
    /// --ablate`): the session gets [`CopilotEval::without`] them, the run's runtime home is
    /// cleared of them after any [`home_seed`](Self::home_seed) (`skills/`, `agents/`,
    /// `copilot-instructions.md` and `instructions/`, `mcp-config.json`), and a working
    /// directory that holds a copy of one (a `SKILL.md`, an `*.agent.md`, an instructions file,
    /// an MCP configuration) ends the run with `execution_error` naming the file before the
    /// runtime starts. The result's `ablated` lists the kinds. Empty: nothing is removed.
    pub fn ablate(mut self, kinds: Vec<crate::eval::Ablate>) -> Self {
        self.ablate = kinds;
        self
    }

    /// Test-only: break parts of the run's own machinery ([`TestFaults`]).
    #[doc(hidden)]
    pub fn test_faults(mut self, faults: TestFaults) -> Self {
        self.faults = faults;
        self
    }
}

/// Run `eval` on `prompt` live (see [`RunOptions::live`]). Exactly one attempt. `prompt` is a
/// `&str`, a `String` or a [`Prompt`] with attachments and an agent mode.
pub async fn run(eval: &CopilotEval, prompt: impl Into<Prompt>) -> CopilotResult {
    run_with(eval, prompt, &RunOptions::live()).await
}

/// Run `eval` on `prompt` with `options`. Exactly one attempt; the runtime process is stopped
/// before this returns, in every outcome. `prompt` is a `&str`, a `String` or a [`Prompt`]:
/// its attachments' paths are relative to the eval's working directory, and a missing one ends
/// the run with `execution_error` naming the path before the runtime starts.
///
/// An offline run against a scripted loopback model (needs the installed runtime, so not run
/// here):
///
/// ```no_run
/// use std::sync::Arc;
///
/// use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
/// use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
///
/// # async fn example() {
/// let script = Script::new([]).turn(ScriptedTurn::text("Hello!"));
/// let server = ModelServer::start(ServerConfig::new(Arc::new(script))).await.unwrap();
/// let eval = CopilotEval::builder().build().unwrap();
/// let result = run_with(&eval, "Say hello.", &RunOptions::offline(server.base_url())).await;
/// assert_eq!(result.stop_reason, StopReason::Completed, "{:?}", result.error);
/// assert_eq!(result.final_response.as_deref(), Some("Hello!"));
/// # }
/// ```
pub async fn run_with(
    eval: &CopilotEval,
    prompt: impl Into<Prompt>,
    options: &RunOptions,
) -> CopilotResult {
    run_turns(eval, [prompt.into()], options).await
}

/// Run `eval` on several prompts, one turn each, in ONE session: each prompt is sent once the
/// previous turn went idle. After a `session.error` no further prompt is sent. `timeout_s`
/// bounds all turns together. No prompt at all is an `execution_error`, and so is an
/// attachment whose file or folder is missing (checked before anything starts). Each prompt is
/// a `&str`, a `String` or a [`Prompt`]; `result.prompts` holds them as sent. Otherwise as
/// [`run_with`].
pub async fn run_turns<I>(eval: &CopilotEval, prompts: I, options: &RunOptions) -> CopilotResult
where
    I: IntoIterator,
    I::Item: Into<Prompt>,
{
    let started = Instant::now();
    let prompts: Vec<Prompt> = prompts.into_iter().map(Into::into).collect();
    run_prompts(eval, prompts, options, started).await
}

/// [`run_turns`]'s work, boxed in this crate: a user's test binary calls it through the
/// future's vtable instead of compiling the whole run (session, proxy, model server, pooled
/// endpoint) again, as it would for an `async fn` of ours it awaits (docs/performance.md,
/// "The edit loop").
pub(crate) fn run_prompts<'a>(
    eval: &'a CopilotEval,
    prompts: Vec<Prompt>,
    options: &'a RunOptions,
    started: Instant,
) -> futures::future::BoxFuture<'a, CopilotResult> {
    Box::pin(run_prompts_unboxed(eval, prompts, options, started))
}

// One piece: the run's steps in their order (prepare, lease, proxy, session client, the turns,
// cleanup, settle, the lease's end, the result), each one call; what stays here are the early
// stops between them, which share the run's state, folder, clock and prompts.
async fn run_prompts_unboxed(
    eval: &CopilotEval,
    prompts: Vec<Prompt>,
    options: &RunOptions,
    started: Instant,
) -> CopilotResult {
    let ablated_eval;
    let eval = if options.ablate.is_empty() {
        eval
    } else {
        ablated_eval = eval.without(&options.ablate);
        &ablated_eval
    };
    let mut run = RunState::new(eval);
    run.ablated = options.ablate.clone();
    let Prepared {
        working_directory,
        home,
        client_options,
        prompts,
    } = match prepare::prepare(eval, prompts.clone(), options, &mut run) {
        Ok(prepared) => prepared,
        Err(SetupFailure {
            reason,
            error,
            working_directory,
        }) => {
            run.fail(reason, error);
            return stopped_early(run, working_directory, started, prompts);
        }
    };

    // A first-start unpack of the runtime (in `prepare`) is not the eval's time.
    let started = started + Duration::from_millis(run.timings.runtime_unpack_ms.unwrap_or(0));

    tell_hooks_working_directory(options, &working_directory);
    let controls = Controls::for_eval(eval);
    let lease = match pooled::lease(eval, options, &mut run).await {
        Ok(lease) => lease,
        Err(e) => {
            run.fail(crate::StopReason::ExecutionError, e.to_string());
            return stopped_early(run, working_directory, started, prompts);
        }
    };
    let lease = lease.as_ref();
    // On a pooled runtime the record says what the pool's domain allowed: it covers the run's
    // own and is wider (the pool folder holds every lease's folders).
    if let Some(lease) = lease {
        if let (Some(record), Some(policy)) = (run.sandbox.as_mut(), &lease.sandbox) {
            *record = policy.record(record.mode, record.abi);
        }
        run.confine = None;
    }
    let (proxy_options, proxy) = request_proxy(eval, options, lease.is_some(), &controls);
    let Some((client_options, pooled_session, endpoint)) = session_client(
        eval,
        client_options,
        lease,
        proxy.as_ref(),
        options,
        &home,
        &mut run,
    )
    .await
    else {
        return stopped_early(run, working_directory, started, prompts);
    };

    let deadline = started + Duration::from_secs_f64(eval.timeout_s);
    let slots = Slots::default();
    // The calls an earlier run left pending, continued before the first prompt.
    let pending = match (options.resume.as_deref(), options.continue_pending_work) {
        (Some(session_id), Some(true)) => pending::pending_calls(home.path(), session_id),
        _ => Ok(Vec::new()),
    };
    let turns_finished = session::drive(
        eval,
        &prompts,
        &working_directory,
        client_options,
        &options.target,
        options.resume.as_deref().map(|session_id| resume::Resume {
            session_id,
            continue_pending_work: options.continue_pending_work,
            pending: &pending,
        }),
        &options.faults,
        &controls,
        &slots,
        &mut run,
        deadline,
        pooled_session.as_ref(),
    )
    .await;

    if let Some(lease) = lease {
        check_pooled_runtime_alive(&mut run, lease).await;
    }
    let cleanup_started = Instant::now();
    cleanup::cleanup(
        &slots,
        &controls,
        proxy.as_deref(),
        &mut run,
        home.path(),
        lease.is_some(),
    )
    .await;
    cleanup::settle(
        &mut run,
        &controls,
        proxy.as_deref().map(|proxy| (proxy, proxy_options)),
        options.replay.as_deref(),
        turns_finished,
        home,
    );
    // The pool undoes what the session left on its runtime, and says what it found: reported
    // as a private runtime's sweep reports it.
    if let Some(lease) = lease {
        drop(endpoint);
        let end = lease.release(turns_finished).await;
        cleanup::record_lease_end(&mut run, end);
    }
    run.timings.cleanup_ms = cleanup_started.elapsed().as_millis() as u64;
    let mut result = run.finish(working_directory, started);
    result.prompts = prompts;
    add_run_warnings(&mut result, eval, options);
    result
}

/// Hand the run's working directory to the replay check and the exchange tap, before the
/// session starts.
fn tell_hooks_working_directory(options: &RunOptions, working_directory: &std::path::Path) {
    let folders = RunFolders::new(working_directory, options.workdir_root.as_deref());
    if let Some(replay) = &options.replay {
        replay.working_directory(&folders);
    }
    if let Some(tap) = &options.tap {
        tap.working_directory(&folders);
    }
}

/// The result of a run that stopped before its session (setup, the pool lease or the pooled
/// connection failed; the stop is already on `run`), with its prompts.
fn stopped_early(
    run: RunState,
    working_directory: PathBuf,
    started: Instant,
    prompts: Vec<Prompt>,
) -> CopilotResult {
    let mut result = run.finish(working_directory, started);
    result.prompts = prompts;
    result
}

/// The request proxy's options for `eval`, and the proxy itself when the run needs one.
fn request_proxy(
    eval: &CopilotEval,
    options: &RunOptions,
    pooled: bool,
    controls: &Arc<Controls>,
) -> (ProxyOptions, Option<Arc<RequestProxy>>) {
    let proxy_options = ProxyOptions {
        audit: eval.audit_requests,
        image_detail: eval.image_detail,
        offers: !eval.skill_directories.is_empty()
            || !eval.mcp_servers.is_empty()
            || !eval.custom_agents.is_empty(),
        reader_waits_for_send: options.faults.websocket_reader_waits_for_send,
    };
    // Installed whenever something must see the model traffic (what the skills, an MCP server
    // or a custom agent gave the model included), or a control can close the gate mid-session (the proxy is
    // the gate's only reader); on a pooled runtime always (its endpoint is how requests reach
    // the model server).
    let proxy = (pooled
        || Controls::can_stop_mid_session(eval)
        || proxy_options.inspects()
        || proxy_options.offers
        || options.tap.is_some())
    .then(|| RequestProxy::with_tap(proxy_options, controls.clone(), options.tap.clone()));
    (proxy_options, proxy)
}

/// The pooled runtime's endpoint (served endpoint and relay), kept alive until the lease is
/// released.
type PooledEndpoint = (pooled::Endpoint, pool::relay::Relay);

/// The client options for the session: on a pooled runtime, connected to it through the run's
/// endpoint ([`connect_pooled`]; with the session to use and the endpoint to keep); else with
/// the request proxy as request handler when there is one. `None`: connecting to the pooled
/// runtime failed; the lease is released and the stop recorded on `run`.
async fn session_client(
    eval: &CopilotEval,
    client_options: github_copilot_sdk::ClientOptions,
    lease: Option<&pool::Lease>,
    proxy: Option<&Arc<RequestProxy>>,
    options: &RunOptions,
    home: &resume::RunHome,
    run: &mut RunState,
) -> Option<(
    github_copilot_sdk::ClientOptions,
    Option<session::PooledSession>,
    Option<PooledEndpoint>,
)> {
    match (lease, proxy, &options.target) {
        (Some(lease), Some(proxy), Target::Offline { base_url }) => {
            match connect_pooled(eval, lease, proxy, base_url, home, run).await {
                Ok((options, session, served)) => {
                    run.pooled_runtime = true;
                    Some((options, Some(session), Some(served)))
                }
                Err(e) => {
                    let end = lease.release(true).await;
                    cleanup::record_lease_end(run, end);
                    run.fail(crate::StopReason::ExecutionError, e);
                    None
                }
            }
        }
        (_, Some(proxy), _) => Some((
            client_options.with_request_handler(proxy.clone()),
            None,
            None,
        )),
        _ => Some((client_options, None, None)),
    }
}

/// Serve the run's endpoint for a pooled runtime, bind the lease to it, relay the eval's MCP
/// mocks through the pool ([`pooled::relay_mocks`]) and connect a relay to the runtime: the
/// client options and session to use, and the endpoint (served endpoint and relay) to keep
/// alive until the lease is released. The error says which step failed.
async fn connect_pooled(
    eval: &CopilotEval,
    lease: &pool::Lease,
    proxy: &Arc<RequestProxy>,
    base_url: &str,
    home: &resume::RunHome,
    run: &RunState,
) -> Result<
    (
        github_copilot_sdk::ClientOptions,
        session::PooledSession,
        PooledEndpoint,
    ),
    String,
> {
    let served = match pooled::serve(proxy.clone(), base_url).await {
        Ok(served) => lease
            .bind(served.port(), base_url)
            .await
            .map(|()| served)
            .map_err(|e| e.to_string()),
        Err(e) => Err(format!("cannot serve the pooled runtime's endpoint: {e}")),
    }?;
    let mcp_urls = pooled::relay_mocks(eval, lease).await?;
    let relay = crate::run::pool::relay::to_runtime(lease.port)
        .await
        .map_err(|e| {
            format!(
                "cannot connect to the pooled runtime (pid {}) on 127.0.0.1:{}: {e}",
                lease.pid, lease.port
            )
        })?;
    let session = session::PooledSession {
        session_id: crate::run::pool::wire::session_id(served.port()),
        config_directory: home.path().to_path_buf(),
        port: relay.port(),
        mcp_urls,
    };
    let options = pooled::client_options(
        run.runtime_path
            .as_deref()
            .unwrap_or(std::path::Path::new("copilot")),
        lease,
        &relay,
    );
    Ok((options, session, (served, relay)))
}

/// A pooled runtime that died during the session ended it: said as such (the runtime is the
/// pool's process, so its exit status is the pool's to read; it is retired on release). A
/// killed process closes its sockets before it has ended, so its end is waited for.
async fn check_pooled_runtime_alive(run: &mut RunState, lease: &pool::Lease) {
    if run
        .stops
        .iter()
        .any(|(_, e)| e.as_deref() == Some(turns::STREAM_CLOSED))
        && crate::runtime::wait_for_exits(vec![lease.pid], POOLED_EXIT_BOUND)
            .await
            .is_empty()
    {
        run.fail(
            crate::StopReason::ExecutionError,
            format!(
                "the pooled runtime (pid {}) exited during the session; the pool retires it",
                lease.pid
            ),
        );
    }
}

/// The warnings a finished run adds from its evidence (agents dispatched by file name,
/// subagents without tools) and, on a live run, the authentication hint.
fn add_run_warnings(result: &mut CopilotResult, eval: &CopilotEval, options: &RunOptions) {
    result.warnings.extend(agent_ids::file_name_dispatches(
        &eval.file_named_agents,
        &result.subagent_invocations,
    ));
    let mcp_servers: Vec<String> = eval.mcp_servers.keys().cloned().collect();
    result.warnings.extend(agent_ids::toolless_subagents(
        &eval.custom_agents,
        &mcp_servers,
        &result.subagent_invocations,
    ));
    if options.target == Target::Live {
        add_auth_hint(result);
    }
}

/// What a live run's error says when the runtime could not authenticate
/// (`add_auth_hint`).
pub const AUTH_HINT: &str = "the live run could not authenticate to GitHub Copilot: set GITHUB_TOKEN or GH_TOKEN to a token the Copilot runtime accepts, or sign in with `gh auth login` (`cargo copilot-eval doctor` checks the setup), or run offline against the recorded cassettes with `cargo copilot-eval --replay`";

/// Texts of the runtime's errors that mean it had no usable credential, lowercase (runtime
/// 1.0.102 says `No GitHub OAuth token or Copilot HMAC key provided` without one).
/// How long a run whose pooled runtime closed the event stream waits for that runtime to have
/// ended before it reports the stream's close as it is (a loaded machine can take a moment).
const POOLED_EXIT_BOUND: Duration = Duration::from_secs(10);

const AUTH_FAILURES: [&str; 4] = [
    "no github oauth token",
    "not authenticated",
    "unauthorized",
    "authentication failed",
];

/// Appends [`AUTH_HINT`] as a cause of its own to the error of a failed live run whose error
/// says the runtime could not authenticate.
fn add_auth_hint(result: &mut CopilotResult) {
    let Some(error) = result.error.as_mut() else {
        return;
    };
    let lower = error.to_lowercase();
    if AUTH_FAILURES.iter().any(|marker| lower.contains(marker)) {
        error.push_str("; ");
        error.push_str(AUTH_HINT);
    }
}

/// The result of a run that never started (no session, no events) in `working_directory`:
/// the base of a check's control (`harness::checks::controls`) and of unit tests.
pub(crate) fn result_without_session(
    eval: &CopilotEval,
    working_directory: PathBuf,
) -> CopilotResult {
    RunState::new(eval).finish(working_directory, Instant::now())
}

/// Test-only: the result of a run that never started (no session, no events).
#[cfg(test)]
pub(crate) fn result_for_tests(eval: &CopilotEval) -> CopilotResult {
    result_without_session(eval, PathBuf::new())
}
