//! Preparing a run, before anything starts: the prompts, the requested skills checked locally,
//! the working directory, the runtime executable, the private runtime home (seeded), the
//! runtime cache, and the SDK client options with the run's authentication.
//!
//! [`prepare`] returns one result: everything the later stages need ([`Prepared`]), or the
//! failure that ends the run before any process starts ([`SetupFailure`]).

use std::path::PathBuf;

use github_copilot_sdk::{CliProgram, ClientOptions};

use super::state::RunState;
use super::{OFFLINE_TOKEN, RunOptions, Target};
use crate::eval::CopilotEval;
use crate::result::StopReason;
use crate::runtime;

/// What the later stages of a run need; the run owns it until the end.
pub(super) struct Prepared {
    /// The workspace: the eval's, or a fresh temporary directory (kept after the run).
    pub(super) working_directory: PathBuf,
    /// The run's private runtime home (`COPILOT_HOME`), removed after the run.
    pub(super) home: tempfile::TempDir,
    /// The SDK client options (runtime, cwd, environment, token, client mode), without the
    /// request handler.
    pub(super) client_options: ClientOptions,
}

/// A failure before anything started: the stop reason, its error text, and the working
/// directory to report (empty when none was chosen yet).
pub(super) struct SetupFailure {
    pub(super) reason: StopReason,
    pub(super) error: String,
    pub(super) working_directory: PathBuf,
}

impl SetupFailure {
    fn new(reason: StopReason, error: String, working_directory: PathBuf) -> Self {
        Self {
            reason,
            error,
            working_directory,
        }
    }
}

/// Prepare a run of `eval` on `prompts`: checks and resources in order, the first failure ends
/// it. Records the skill discovery and the runtime path on `run` as soon as they are known.
pub(super) fn prepare(
    eval: &CopilotEval,
    prompts: &[String],
    options: &RunOptions,
    run: &mut RunState,
) -> Result<Prepared, SetupFailure> {
    if prompts.is_empty() {
        return Err(SetupFailure::new(
            StopReason::ExecutionError,
            "no prompt to send".to_owned(),
            PathBuf::new(),
        ));
    }
    // Requested skills are validated before anything starts (crate::skills).
    if !eval.skill_directories.is_empty() {
        let (discovery, failure) = crate::skills::check_locally(&eval.skill_directories);
        run.skill_discovery = Some(discovery);
        if let Some(error) = failure {
            return Err(SetupFailure::new(
                StopReason::SkillSetupError,
                error,
                eval.working_directory.clone().unwrap_or_default(),
            ));
        }
    }

    let working_directory = match &eval.working_directory {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("copilot-eval-work-")
            .tempdir()
            .map(|dir| dir.keep())
            .map_err(|e| {
                SetupFailure::new(
                    StopReason::ExecutionError,
                    format!("cannot create a working directory: {e}"),
                    PathBuf::new(),
                )
            })?,
    };
    let fail = |error: String| {
        SetupFailure::new(StopReason::ExecutionError, error, working_directory.clone())
    };

    let runtime_path = match &options.runtime_path {
        Some(path) => path.clone(),
        None => runtime::resolve()
            .map(|resolved| resolved.path)
            .map_err(|e| fail(e.to_string()))?,
    };
    run.runtime_path = Some(runtime_path.clone());
    if !runtime_path.is_file() {
        return Err(fail(format!(
            "no Copilot runtime at {} (given with RunOptions::runtime_path): run `cargo copilot-eval runtime install` and pass the path `cargo copilot-eval runtime path` prints",
            runtime_path.display()
        )));
    }

    // The first-start unpack (about 235 MB) happens here, before the eval's clock starts. A
    // failure is left to the session's own start to report with its cause.
    match runtime::unpack::warm(&runtime_path) {
        Ok(runtime::unpack::Warmed::Started { ms, .. }) => run.timings.runtime_unpack_ms = Some(ms),
        Ok(_) => {}
        Err(e) => tracing::debug!("runtime warm-up: {e}"),
    }

    let home = tempfile::Builder::new()
        .prefix("copilot-eval-home-")
        .tempdir()
        .map_err(|e| fail(format!("cannot create the runtime home: {e}")))?;
    let cache = runtime::runtime_cache_dir();
    std::fs::create_dir_all(&cache).map_err(|e| {
        fail(format!(
            "cannot create the runtime cache {}: {e}",
            cache.display()
        ))
    })?;
    if let Some(seed) = &options.home_seed {
        copy_tree(seed, home.path()).map_err(|e| {
            fail(format!(
                "cannot seed the runtime home from {}: {e}",
                seed.display()
            ))
        })?;
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
    Ok(Prepared {
        working_directory,
        home,
        client_options,
    })
}

/// The SDK client options of a run: the runtime executable, its cwd, its private home and
/// cache, telemetry off, and where model requests go (offline: the loopback server and a
/// placeholder token; live: [`live_token`], else the signed-in user).
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
