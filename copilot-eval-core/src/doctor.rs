//! `doctor`: check the setup before spending anything.
//!
//! [`doctor`] runs each check and returns one [`Check`] per line: the runtime (path, version
//! against the pinned one, SDK protocol compatibility, by starting it once), its cache folder,
//! npm, the authentication source (never the secret), the model catalog (reachable through the
//! runtime) and the requested models (present in the catalog). Each failed or doubtful check says
//! how to fix it. `cargo copilot-eval doctor [--json]` prints them and exits non-zero when any
//! check failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use futures::future::BoxFuture;
use github_copilot_sdk::Client;
use serde::Serialize;

use crate::run::{RunOptions, Target, client_options, live_token};
use crate::runtime::{self, PINNED_RUNTIME_VERSION};

/// How long doctor waits for the runtime to start and for the model catalog.
const STEP_BOUND: Duration = Duration::from_secs(30);

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Fine.
    Ok,
    /// Works, but something may bite later.
    Warn,
    /// Broken: evals cannot run as configured.
    Fail,
}

impl CheckStatus {
    /// `ok`, `warn` or `fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Fail => "fail",
        }
    }
}

/// One check's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked: `runtime`, `runtime cache`, `runtime unpack`, `npm`, `authentication`, `sandbox`, `model catalog`,
    /// or `model <id>`.
    pub name: String,
    /// The outcome.
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
    /// What to do, for `warn` and `fail`.
    pub fix: Option<String>,
}

impl Check {
    fn new(name: impl Into<String>, status: CheckStatus, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// Where the model requests of the checked setup go, and what to check.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// Live (GitHub) or offline (a loopback model server); see [`RunOptions`].
    pub run: RunOptions,
    /// Model ids the evals request; each must be in the catalog.
    pub models: Vec<String>,
    /// Custom agent files, or folders searched for `*.agent.md`: each agent's front-matter
    /// `model:` must be in the catalog too (a dispatch to a model the catalog lacks fails
    /// "Model ... is not available" and the run ends `model_unavailable`). One check per agent
    /// with a model, named `agent <name> model <model>`; an agent file that does not load is a
    /// warning naming the file (`cargo copilot-eval lint` says why).
    pub agents: Vec<PathBuf>,
    /// Check this runtime executable instead of resolving one.
    pub runtime_path: Option<PathBuf>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            run: RunOptions::live(),
            models: Vec::new(),
            agents: Vec::new(),
            runtime_path: None,
        }
    }
}

/// Which credential a live run would use. Never holds the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthSource {
    /// `GITHUB_TOKEN` is set and non-empty.
    GithubToken,
    /// `GH_TOKEN` is set and non-empty (and `GITHUB_TOKEN` is not).
    GhToken,
    /// Neither, and the GitHub CLI has a signed-in user: its token (`gh auth token --hostname
    /// github.com`, asked at the start of each test process, never stored).
    GhCli,
    /// None of those: the runtime's own signed-in user (`copilot login`), which a run's private
    /// home hides; live runs then fail to authenticate.
    SignedInUser,
}

impl AuthSource {
    /// The source in effect now: `GITHUB_TOKEN`, then `GH_TOKEN`, then the GitHub CLI's
    /// signed-in user (runs `gh auth token`, at most 10 s), then the runtime's signed-in user.
    pub fn current() -> Self {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty());
        if set("GITHUB_TOKEN") {
            Self::GithubToken
        } else if set("GH_TOKEN") {
            Self::GhToken
        } else if crate::run::gh_token(std::env::var_os("PATH").as_deref()).is_some() {
            Self::GhCli
        } else {
            Self::SignedInUser
        }
    }

    /// A description for people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::GithubToken => "GITHUB_TOKEN",
            Self::GhToken => "GH_TOKEN",
            Self::GhCli => {
                "the GitHub CLI's signed-in user (`gh auth token`; no GITHUB_TOKEN or GH_TOKEN set)"
            }
            Self::SignedInUser => {
                "no token: no GITHUB_TOKEN or GH_TOKEN set, and `gh auth token` gave none"
            }
        }
    }
}

/// Run every check. Never fails itself: problems are checks with status `fail`. The future is
/// boxed in this crate, so that a crate awaiting it does not compile the checks again
/// (docs/performance.md, "The edit loop").
pub fn doctor(options: &DoctorOptions) -> BoxFuture<'_, Vec<Check>> {
    Box::pin(doctor_unboxed(options))
}

async fn doctor_unboxed(options: &DoctorOptions) -> Vec<Check> {
    let mut checks = Vec::new();
    let runtime_path = match &options.runtime_path {
        Some(path) => Some(path.clone()),
        None => match runtime::resolve() {
            Ok(resolved) => Some(resolved.path),
            Err(e) => {
                checks.push(
                    Check::new("runtime", CheckStatus::Fail, e.to_string())
                        .fix("run `cargo copilot-eval runtime install`"),
                );
                None
            }
        },
    };
    // Looked at before anything starts the runtime (starting it unpacks it).
    let unpack = runtime_path
        .as_deref()
        .map(unpack_checks)
        .unwrap_or_default();
    let version = runtime_path.as_deref().map(version_check);
    let version_ok = version
        .as_ref()
        .is_some_and(|c| c.status != CheckStatus::Fail);
    checks.extend(version);
    checks.push(cache_check());
    checks.extend(unpack);
    checks.push(npm_check());
    // A newer runtime in the npm registry (asked, never installed).
    checks.push(update_check(latest_published(REGISTRY_BOUND)));
    checks.push(auth_check(&options.run.target));
    checks.push(sandbox_check(&crate::run::sandbox::kernel()));
    // The model catalog, through the runtime: this also proves the protocol handshake.
    if let (Some(path), true) = (&runtime_path, version_ok) {
        catalog_checks(path, options, &mut checks).await;
    }
    unchecked_models(&options.models, &mut checks);
    checks
}

/// The runtime at `path`: its version, the pinned one or another (a warning), or why it has
/// none (it does not run).
fn version_check(path: &Path) -> Check {
    match runtime::version(path) {
        Ok(version) if version == PINNED_RUNTIME_VERSION => Check::new(
            "runtime",
            CheckStatus::Ok,
            format!("{} ({version}, the pinned version)", path.display()),
        ),
        Ok(version) => Check::new(
            "runtime",
            CheckStatus::Warn,
            format!(
                "{} is {version}; copilot-eval is tested with {PINNED_RUNTIME_VERSION}",
                path.display()
            ),
        )
        .fix("run `cargo copilot-eval runtime install` and unset COPILOT_EVAL_RUNTIME_PATH / COPILOT_CLI_PATH"),
        Err(e) => Check::new("runtime", CheckStatus::Fail, e.to_string())
            .fix("run `cargo copilot-eval runtime install`"),
    }
}

/// The shared runtime cache: writable or not.
fn cache_check() -> Check {
    let cache = runtime::runtime_cache_dir();
    // A probe file of its own (two doctors may check the same cache at once), removed when
    // dropped.
    match std::fs::create_dir_all(&cache).and_then(|_| {
        tempfile::Builder::new()
            .prefix(".doctor-write-check")
            .tempfile_in(&cache)
            .and_then(|probe| probe.close())
    }) {
        Ok(()) => Check::new(
            "runtime cache",
            CheckStatus::Ok,
            format!("{} (writable)", cache.display()),
        ),
        Err(e) => Check::new(
            "runtime cache",
            CheckStatus::Fail,
            format!("{} is not writable: {e}", cache.display()),
        )
        .fix("set COPILOT_EVAL_CACHE_DIR to a writable folder"),
    }
}

/// Whether sessions run sandboxed here (docs/sandbox.md): Landlock with an ABI that confines
/// TCP connections, or a warning saying why every result will carry "unsandboxed: <why>".
fn sandbox_check(kernel: &crate::run::sandbox::Kernel) -> Check {
    match kernel {
        crate::run::sandbox::Kernel::Confines { abi } => Check::new(
            "sandbox",
            CheckStatus::Ok,
            format!("Landlock ABI {abi}: sessions run sandboxed (files and TCP connections)"),
        ),
        crate::run::sandbox::Kernel::Cannot { why, .. } => Check::new(
            "sandbox",
            CheckStatus::Warn,
            format!("unsandboxed: {why}; every result says so, and `sandbox = \"required\"` / `--sandbox required` fail before any session"),
        )
        .fix("run on Linux 6.7 or later with Landlock enabled (`lsm=landlock,...` on the kernel command line)"),
    }
}

/// npm on `PATH` (only needed to install the runtime).
fn npm_check() -> Check {
    match Command::new("npm").arg("--version").output() {
        Ok(out) if out.status.success() => Check::new(
            "npm",
            CheckStatus::Ok,
            format!("npm {}", String::from_utf8_lossy(&out.stdout).trim()),
        ),
        _ => Check::new("npm", CheckStatus::Warn, "npm not found on PATH")
            .fix("install Node.js 20+ with npm to install or update the runtime"),
    }
}

/// The credential a run against `target` would use (live only: offline runs use a
/// placeholder).
fn auth_check(target: &Target) -> Check {
    match target {
        Target::Live => {
            let source = AuthSource::current();
            if source == AuthSource::SignedInUser {
                Check::new("authentication", CheckStatus::Warn, source.describe()).fix(
                    "set GITHUB_TOKEN or GH_TOKEN, or sign in with `gh auth login --hostname github.com`",
                )
            } else {
                Check::new("authentication", CheckStatus::Ok, source.describe())
            }
        }
        Target::Offline { base_url } => Check::new(
            "authentication",
            CheckStatus::Ok,
            format!("offline: a placeholder token for the loopback model server {base_url}"),
        ),
    }
}

/// A line for each requested model that no check reached (the runtime or the catalog check
/// failed first): `not checked`, naming the check that failed and its finding.
fn unchecked_models(models: &[String], checks: &mut Vec<Check>) {
    let reason = checks
        .iter()
        .rev()
        .find(|c| c.status == CheckStatus::Fail)
        .map(|c| format!("{} failed ({})", c.name, c.detail))
        .unwrap_or_else(|| "the model catalog was not read".to_owned());
    for wanted in models {
        let name = format!("model {wanted}");
        if !checks.iter().any(|c| c.name == name) {
            checks.push(
                Check::new(name, CheckStatus::Warn, format!("not checked: {reason}"))
                    .fix("fix the failed check above, then run doctor again"),
            );
        }
    }
}

/// `runtime unpack`: whether the runtime's version is unpacked in the shared cache, and one line
/// per folder an interrupted unpack left there (a `warn`: about 200 MB each, never reused by the
/// runtime; the next suite run removes those whose process is gone).
fn unpack_checks(path: &std::path::Path) -> Vec<Check> {
    use runtime::unpack;
    let mut checks = Vec::new();
    match unpack::package_version(path) {
        Some(version) if unpack::is_unpacked(&version) => checks.push(Check::new(
            "runtime unpack",
            CheckStatus::Ok,
            format!(
                "{version} unpacked in {}",
                unpack::platform_dir().join(&version).display()
            ),
        )),
        Some(version) => checks.push(Check::new(
            "runtime unpack",
            CheckStatus::Ok,
            format!(
                "{version} not unpacked yet: the next run unpacks about 235 MB into {} before its first eval starts",
                unpack::platform_dir().display()
            ),
        )),
        None => {}
    }
    for partial in unpack::partial_extractions() {
        let megabytes = unpack::folder_bytes(&partial.path) as f64 / 1e6;
        if partial.running {
            checks.push(Check::new(
                "runtime unpack",
                CheckStatus::Ok,
                format!(
                    "{} ({megabytes:.0} MB): an unpack in progress (process {})",
                    partial.path.display(),
                    partial.pid.unwrap_or_default()
                ),
            ));
        } else {
            checks.push(
                Check::new(
                    "runtime unpack",
                    CheckStatus::Warn,
                    format!(
                        "{} ({megabytes:.0} MB) was left by an interrupted unpack",
                        partial.path.display()
                    ),
                )
                .fix(format!(
                    "the next `cargo copilot-eval` run removes it, or remove it now: rm -rf '{}'",
                    partial.path.display()
                )),
            );
        }
    }
    checks
}

async fn catalog_checks(path: &std::path::Path, options: &DoctorOptions, checks: &mut Vec<Check>) {
    let (home, work) = match (tempfile::tempdir(), tempfile::tempdir()) {
        (Ok(h), Ok(w)) => (h, w),
        (Err(e), _) | (_, Err(e)) => {
            checks.push(Check::new(
                "model catalog",
                CheckStatus::Fail,
                format!("cannot create a temporary folder: {e}"),
            ));
            return;
        }
    };
    let mut client_opts = client_options(
        path,
        work.path(),
        home.path(),
        &runtime::runtime_cache_dir(),
        &options.run.target,
    );
    if matches!(options.run.target, Target::Live) && live_token().is_none() {
        client_opts = client_opts.with_use_logged_in_user(true);
    }
    let client = match tokio::time::timeout(STEP_BOUND, Client::start(client_opts)).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            checks.push(
                Check::new(
                    "runtime protocol",
                    CheckStatus::Fail,
                    format!("the runtime did not start: {e}"),
                )
                .fix("reinstall with `cargo copilot-eval runtime install`"),
            );
            return;
        }
        Err(_) => {
            checks.push(Check::new(
                "runtime protocol",
                CheckStatus::Fail,
                format!("the runtime did not start within {STEP_BOUND:?}"),
            ));
            return;
        }
    };
    let sdk = github_copilot_sdk::SDK_PROTOCOL_VERSION;
    checks.push(match client.protocol_version() {
        Some(v) => Check::new(
            "runtime protocol",
            CheckStatus::Ok,
            format!("SDK protocol {v} negotiated (this SDK speaks {sdk})"),
        ),
        None => Check::new(
            "runtime protocol",
            CheckStatus::Warn,
            format!("the runtime reported no protocol version (this SDK speaks {sdk})"),
        ),
    });
    match tokio::time::timeout(STEP_BOUND, client.list_models()).await {
        Ok(Ok(models)) => {
            let ids: Vec<String> = models.iter().map(|m| m.id.clone()).collect();
            checks.push(Check::new(
                "model catalog",
                CheckStatus::Ok,
                format!("reachable, {} models", ids.len()),
            ));
            for wanted in &options.models {
                checks.push(if ids.contains(wanted) {
                    Check::new(format!("model {wanted}"), CheckStatus::Ok, "available")
                } else {
                    Check::new(
                        format!("model {wanted}"),
                        CheckStatus::Fail,
                        format!("not in the catalog (available: {})", ids.join(", ")),
                    )
                    .fix("request an available model, or check the account's Copilot plan and policies")
                });
            }
            checks.extend(agent_model_checks(&options.agents, &ids));
        }
        Ok(Err(e)) => checks.push(
            Check::new(
                "model catalog",
                CheckStatus::Fail,
                format!("not reachable: {e}"),
            )
            .fix("check authentication and network access to the Copilot API"),
        ),
        Err(_) => checks.push(Check::new(
            "model catalog",
            CheckStatus::Fail,
            format!("no answer within {STEP_BOUND:?}"),
        )),
    }
    if tokio::time::timeout(Duration::from_secs(15), client.stop())
        .await
        .is_err()
    {
        client.force_stop();
    }
}

/// How long `doctor` waits for `npm view` to name the newest published runtime.
const REGISTRY_BOUND: Duration = Duration::from_secs(20);

/// One check per custom agent file (of `paths`, see [`DoctorOptions::agents`]) that names a
/// model: `ok` when `catalog` has it, else `fail` with the catalog; a file that does not load is
/// a warning.
fn agent_model_checks(paths: &[PathBuf], catalog: &[String]) -> Vec<Check> {
    let mut checks = Vec::new();
    for file in crate::customization::agent::agent_files(paths) {
        match crate::customization::AgentFile::load(&file) {
            Ok(agent) => {
                let Some(model) = agent.config.model.clone() else {
                    continue;
                };
                let name = format!("agent {} model {model}", agent.name());
                checks.push(if catalog.contains(&model) {
                    Check::new(name, CheckStatus::Ok, format!("available ({})", file.display()))
                } else {
                    Check::new(
                        name,
                        CheckStatus::Fail,
                        format!(
                            "{}: `model: {model}` is not in the catalog (available: {}); a dispatch to this agent would fail \"Model {model} is not available\" and end the run model_unavailable",
                            file.display(),
                            catalog.join(", ")
                        ),
                    )
                    .fix("set the agent's `model:` to an available model, or remove it so the agent runs on the session's model")
                });
            }
            Err(e) => checks.push(
                Check::new(
                    format!("agent file {}", file.display()),
                    CheckStatus::Warn,
                    format!("does not load, so its model was not checked: {e}"),
                )
                .fix(format!("run `cargo copilot-eval lint {}`", file.display())),
            ),
        }
    }
    checks
}

/// Start the runtime at `path` once (offline: no model request, no credential) and return the
/// SDK protocol version it negotiated (`None`: the runtime reported none).
///
/// Errors: the reason, naming the runtime's protocol and the SDK's supported range when they do
/// not meet (`speaks SDK protocol 4, this SDK (github-copilot-sdk) supports 3–3`), else why the
/// runtime did not start.
///
/// The future is boxed in this crate (as [`doctor`]'s).
pub fn runtime_protocol(
    path: &std::path::Path,
) -> BoxFuture<'_, Result<Option<u32>, ProtocolError>> {
    Box::pin(runtime_protocol_unboxed(path))
}

async fn runtime_protocol_unboxed(path: &std::path::Path) -> Result<Option<u32>, ProtocolError> {
    let (home, work) = match (tempfile::tempdir(), tempfile::tempdir()) {
        (Ok(h), Ok(w)) => (h, w),
        (Err(e), _) | (_, Err(e)) => return Err(ProtocolError::TempFolder(e)),
    };
    let options = client_options(
        path,
        work.path(),
        home.path(),
        &runtime::runtime_cache_dir(),
        &RunOptions::offline("http://127.0.0.1:9").target,
    );
    let client = match tokio::time::timeout(STEP_BOUND, Client::start(options)).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(ProtocolError::Refused(protocol_refusal(&e))),
        Err(_) => return Err(ProtocolError::NoStart { bound: STEP_BOUND }),
    };
    let version = client.protocol_version();
    if tokio::time::timeout(Duration::from_secs(15), client.stop())
        .await
        .is_err()
    {
        client.force_stop();
    }
    Ok(version)
}

/// Why a runtime cannot be driven by this SDK ([`runtime_protocol`], [`check_protocol`]).
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A temporary folder for the runtime's home or working directory cannot be created.
    #[error("cannot create a temporary folder: {0}")]
    TempFolder(#[source] std::io::Error),
    /// The async runtime to start it on cannot be built.
    #[error("cannot start the async runtime: {0}")]
    AsyncRuntime(#[source] std::io::Error),
    /// It did not start within `bound`.
    #[error("the runtime did not start within {bound:?}")]
    NoStart {
        /// How long it was given.
        bound: Duration,
    },
    /// It started and refused the SDK, or did not start: [`protocol_refusal`]'s reason (its
    /// protocol against the SDK's supported range, else the SDK's error).
    #[error("{0}")]
    Refused(String),
}

/// Why `npm view` could not tell the newest published runtime ([`latest_published`]).
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// npm is missing or did not start.
    #[error("npm did not start: {0}")]
    NpmStart(#[source] std::io::Error),
    /// npm gave no answer within `bound`.
    #[error("npm view gave no answer within {bound:?}")]
    NoAnswer {
        /// How long it was given.
        bound: Duration,
    },
    /// Waiting for npm failed.
    #[error("{0}")]
    Wait(#[source] std::io::Error),
    /// npm failed (offline, say) or answered something that is not a version.
    #[error("npm view failed ({status})")]
    Failed {
        /// npm's exit status.
        status: std::process::ExitStatus,
    },
}

/// The reason for an SDK error of starting a runtime: its protocol against the supported range,
/// else the error.
pub fn protocol_refusal(error: &github_copilot_sdk::Error) -> String {
    use github_copilot_sdk::{ErrorKind, ProtocolErrorKind};
    match error.kind() {
        ErrorKind::Protocol(ProtocolErrorKind::VersionMismatch { server, min, max }) => format!(
            "it speaks SDK protocol {server}, and this SDK (github-copilot-sdk) supports protocols {min} to {max}"
        ),
        _ => format!("it did not start: {error}"),
    }
}

/// The check `runtime install` runs on a freshly installed runtime before it is kept: it must
/// start and speak a protocol the SDK supports ([`runtime_protocol`]). Blocking.
///
/// Errors: the reason (see [`runtime_protocol`]).
pub fn check_protocol(path: &std::path::Path) -> Result<(), ProtocolError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProtocolError::AsyncRuntime)?;
    rt.block_on(runtime_protocol(path)).map(|_| ())
}

/// The newest published runtime version, from `npm view @github/copilot version` (never
/// installs anything); bounded by `bound`.
///
/// Errors: npm missing, failing (offline), silent, or slower than `bound`.
pub fn latest_published(bound: Duration) -> Result<String, RegistryError> {
    let mut child = Command::new("npm")
        .args(["view", runtime::RUNTIME_PACKAGE, "version"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(RegistryError::NpmStart)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut out) = stdout {
            let _ = std::io::Read::read_to_string(&mut out, &mut text);
        }
        let _ = tx.send(text);
    });
    let Ok(text) = rx.recv_timeout(bound) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(RegistryError::NoAnswer { bound });
    };
    let status = child.wait().map_err(RegistryError::Wait)?;
    let version = text.trim().to_owned();
    if !status.success() || runtime::check_version_text(&version).is_err() {
        return Err(RegistryError::Failed { status });
    }
    Ok(version)
}

/// The `runtime update` line: whether the registry has a newer runtime than the pinned one.
/// A registry that could not be asked is an `ok` line saying so, never a failure.
pub fn update_check(latest: Result<String, RegistryError>) -> Check {
    match latest {
        Ok(latest)
            if runtime::version_key(&latest) > runtime::version_key(PINNED_RUNTIME_VERSION) =>
        {
            Check::new(
                "runtime update",
                CheckStatus::Warn,
                format!("{} {latest} is published; copilot-eval pins {PINNED_RUNTIME_VERSION}", runtime::RUNTIME_PACKAGE),
            )
            .fix(format!("before moving the pin: `cargo copilot-eval runtime install --version {latest}` and `cargo copilot-eval drift --runtime-version {latest}` (docs/moving-the-runtime-pin.md)"))
        }
        Ok(latest) => Check::new(
            "runtime update",
            CheckStatus::Ok,
            format!("the newest published runtime is {latest}; the pin {PINNED_RUNTIME_VERSION} is current"),
        ),
        Err(reason) => Check::new(
            "runtime update",
            CheckStatus::Ok,
            format!("could not check the npm registry for a newer runtime: {reason}"),
        ),
    }
}

/// Whether any check failed.
pub fn any_failed(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == CheckStatus::Fail)
}

/// The human form: one line per check, `status  name  detail` and the fix indented below.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for check in checks {
        out.push_str(&format!(
            "{:<4}  {:<16}  {}\n",
            check.status.as_str(),
            check.name,
            check.detail
        ));
        if let Some(fix) = &check.fix {
            out.push_str(&format!("      fix: {fix}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_landlock_is_a_sandbox_warning() {
        let none = sandbox_check(&crate::run::sandbox::kernel_for(0));
        assert_eq!(
            (none.name.as_str(), none.status),
            ("sandbox", CheckStatus::Warn)
        );
        assert!(
            none.detail
                .starts_with("unsandboxed: the kernel has no Landlock"),
            "{}",
            none.detail
        );
        assert!(none.fix.is_some());
        let old = sandbox_check(&crate::run::sandbox::kernel_for(3));
        assert_eq!(old.status, CheckStatus::Warn);
        assert!(
            old.detail.contains("does not confine TCP"),
            "{}",
            old.detail
        );
        let confines = sandbox_check(&crate::run::sandbox::kernel_for(7));
        assert_eq!(confines.status, CheckStatus::Ok);
        assert!(confines.detail.contains("Landlock ABI 7"));
    }

    #[test]
    fn a_newer_published_runtime_is_a_warning_with_the_drift_steps() {
        let newer = update_check(Ok("1.0.200".to_owned()));
        assert_eq!(newer.status, CheckStatus::Warn);
        assert_eq!(
            newer.detail,
            format!(
                "@github/copilot 1.0.200 is published; copilot-eval pins {PINNED_RUNTIME_VERSION}"
            )
        );
        assert!(
            newer
                .fix
                .unwrap()
                .contains("drift --runtime-version 1.0.200")
        );
        // 1.0.99 < 1.0.102 by number, not by text.
        for current in [PINNED_RUNTIME_VERSION, "1.0.99"] {
            let check = update_check(Ok(current.to_owned()));
            assert_eq!(check.status, CheckStatus::Ok, "{current}");
            assert!(check.detail.contains("is current"), "{}", check.detail);
        }
        let offline = update_check(Err(RegistryError::NoAnswer {
            bound: Duration::from_secs(3),
        }));
        assert_eq!(offline.status, CheckStatus::Ok);
        assert_eq!(
            offline.detail,
            "could not check the npm registry for a newer runtime: npm view gave no answer within 3s"
        );
    }

    #[test]
    fn a_protocol_outside_the_sdk_range_is_named_with_the_range() {
        use github_copilot_sdk::{Error, ErrorKind, ProtocolErrorKind};
        let mismatch: Error = ErrorKind::Protocol(ProtocolErrorKind::VersionMismatch {
            server: 4,
            min: 3,
            max: 3,
        })
        .into();
        assert_eq!(
            protocol_refusal(&mismatch),
            "it speaks SDK protocol 4, and this SDK (github-copilot-sdk) supports protocols 3 to 3"
        );
        let other: Error = ErrorKind::Protocol(ProtocolErrorKind::CliStartupFailed).into();
        assert!(protocol_refusal(&other).starts_with("it did not start: "));
    }
}
