//! Preparing a run, before anything starts: the prompts, the requested skills checked locally,
//! the working directory, the runtime executable, the private runtime home (seeded), the
//! runtime cache, and the SDK client options with the run's authentication.
//!
//! [`prepare`] returns one result: everything the later stages need ([`Prepared`]), or the
//! failure that ends the run before any process starts ([`SetupFailure`]).

use std::path::PathBuf;

use github_copilot_sdk::{CliProgram, ClientOptions};

use super::resume::RunHome;
use super::state::RunState;
use super::{OFFLINE_TOKEN, RunOptions, Target};
use crate::eval::{CopilotEval, Prompt};
use crate::result::StopReason;
use crate::runtime;

/// What the later stages of a run need; the run owns it until the end.
pub(super) struct Prepared {
    /// The workspace: the eval's, or a fresh temporary directory (kept after the run).
    pub(super) working_directory: PathBuf,
    /// The run's private runtime home (`COPILOT_HOME`): removed after the run, unless the
    /// caller gave it ([`RunOptions::home`]).
    pub(super) home: RunHome,
    /// The SDK client options (runtime, cwd, environment, token, client mode), without the
    /// request handler.
    pub(super) client_options: ClientOptions,
    /// The prompts, resolved against the working directory ([`Prompt::resolve`]).
    pub(super) prompts: Vec<Prompt>,
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
    prompts: Vec<Prompt>,
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
    if options.continue_pending_work.is_some() && options.resume.is_none() {
        return Err(SetupFailure::new(
            StopReason::ExecutionError,
            "RunOptions::continue_pending_work is set, but the run resumes no session (it is an option of a resume): add RunOptions::resume(session_id), or remove it".to_owned(),
            PathBuf::new(),
        ));
    }
    check_skills(eval, options, run)?;
    let working_directory = working_directory(eval)?;
    let fail = |error: String| {
        SetupFailure::new(StopReason::ExecutionError, error, working_directory.clone())
    };
    if let Some(error) =
        super::ablate::copies_in_working_directory(&working_directory, &options.ablate)
    {
        return Err(fail(error));
    }
    // Attachments are checked before the runtime starts.
    let prompts = prompts
        .iter()
        .enumerate()
        .map(|(index, prompt)| prompt.resolve(index + 1, &working_directory))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(format!("a prompt's attachment cannot be sent: {e}")))?;
    let runtime_path = runtime_path(options, run).map_err(fail)?;
    let (home, cache) = home_and_cache(options).map_err(fail)?;
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
    sandbox(
        eval,
        options,
        &runtime_path,
        &working_directory,
        home.path(),
        run,
    )
    .map_err(fail)?;
    if run.confine.is_some() {
        // The run's temporary files go to its private home, which the sandbox lets it write,
        // and so does `HOME`: the user's home is not readable (git, for one, refuses to run
        // when it cannot read `~/.gitconfig`; a missing one is fine).
        let temp = home.path().join("tmp");
        std::fs::create_dir_all(&temp)
            .map_err(|e| fail(format!("cannot create {}: {e}", temp.display())))?;
        client_options
            .env
            .push(("TMPDIR".into(), temp.into_os_string()));
        client_options
            .env
            .push(("HOME".into(), home.path().as_os_str().to_owned()));
    }
    Ok(Prepared {
        working_directory,
        home,
        client_options,
        prompts,
    })
}

/// Decide the run's sandbox ([`super::sandbox::decide`]): its record goes on `run`, and the
/// policy to confine the runtime with when there is one. The policy lets the session write its
/// working directory and private home and connect to its model server's port (live: 443).
///
/// # Errors
/// The sandbox is required and the kernel cannot confine (nothing has started yet).
fn sandbox(
    eval: &CopilotEval,
    options: &RunOptions,
    runtime_path: &std::path::Path,
    working_directory: &std::path::Path,
    home: &std::path::Path,
    run: &mut RunState,
) -> Result<(), String> {
    let mode = eval
        .sandbox
        .mode
        .under_runner(super::sandbox::runner_mode());
    let port = match &options.target {
        Target::Offline { base_url } => super::sandbox::url_port(base_url),
        Target::Live => Some(443),
    };
    let mut policy = super::sandbox::Policy::base(runtime_path)
        .with_eval(eval)
        .with_writable([working_directory.to_path_buf(), home.to_path_buf()]);
    if let Some(port) = port {
        policy = policy.with_port(port);
    }
    let kernel = match options.faults.landlock_abi {
        Some(abi) => super::sandbox::kernel_for(abi),
        None => super::sandbox::kernel(),
    };
    let (decision, record) = super::sandbox::decide(mode, &kernel, policy)?;
    run.sandbox = Some(record);
    if let super::sandbox::Decision::Confine(policy) = decision {
        run.confine = Some(policy);
    }
    Ok(())
}

/// Requested skills are validated before anything starts (super::skills); the discovery is
/// recorded on `run`.
fn check_skills(
    eval: &CopilotEval,
    options: &RunOptions,
    run: &mut RunState,
) -> Result<(), SetupFailure> {
    if eval.skill_directories.is_empty() {
        return Ok(());
    }
    let (discovery, failure) = super::skills::check_locally(&eval.skill_directories);
    run.skill_discovery = Some(discovery);
    if let Some((path, content)) = &options.faults.write_after_local_skill_check {
        // Test-only: the folder changes once checked.
        let _ = std::fs::create_dir_all(path.parent().unwrap_or(path));
        let _ = std::fs::write(path, content);
    }
    match failure {
        Some(error) => Err(SetupFailure::new(
            StopReason::SkillSetupError,
            error,
            eval.working_directory.clone().unwrap_or_default(),
        )),
        None => Ok(()),
    }
}

/// The eval's working directory, or a fresh temporary one (kept after the run).
fn working_directory(eval: &CopilotEval) -> Result<PathBuf, SetupFailure> {
    match &eval.working_directory {
        Some(dir) => Ok(dir.clone()),
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
            }),
    }
}

/// The runtime to run (given, else resolved), recorded on `run`; it must be a file. Its
/// first-start unpack (about 235 MB) happens here, before the eval's clock starts; a failure
/// there is left to the session's own start to report with its cause.
fn runtime_path(options: &RunOptions, run: &mut RunState) -> Result<PathBuf, String> {
    let runtime_path = match &options.runtime_path {
        Some(path) => path.clone(),
        None => runtime::resolve()
            .map(|resolved| resolved.path)
            .map_err(|e| e.to_string())?,
    };
    run.runtime_path = Some(runtime_path.clone());
    if !runtime_path.is_file() {
        return Err(format!(
            "no Copilot runtime at {} (given with RunOptions::runtime_path): run `cargo copilot-eval runtime install` and pass the path `cargo copilot-eval runtime path` prints",
            runtime_path.display()
        ));
    }
    match runtime::unpack::warm(&runtime_path) {
        Ok(runtime::unpack::Warmed::Started { ms, .. }) => run.timings.runtime_unpack_ms = Some(ms),
        Ok(_) => {}
        Err(e) => tracing::debug!("runtime warm-up: {e}"),
    }
    Ok(runtime_path)
}

/// The run's runtime home (the caller's, created if missing, else a temporary one), seeded
/// when asked, and the shared runtime cache (created if missing).
fn home_and_cache(options: &RunOptions) -> Result<(RunHome, PathBuf), String> {
    let home = match &options.home {
        Some(dir) => std::fs::create_dir_all(dir)
            .map(|()| RunHome::Kept(dir.clone()))
            .map_err(|e| format!("cannot create the runtime home {}: {e}", dir.display()))?,
        None => tempfile::Builder::new()
            .prefix("copilot-eval-home-")
            .tempdir()
            .map(RunHome::Temporary)
            .map_err(|e| format!("cannot create the runtime home: {e}"))?,
    };
    let cache = runtime::runtime_cache_dir();
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create the runtime cache {}: {e}", cache.display()))?;
    if let Some(seed) = &options.home_seed {
        copy_tree(seed, home.path())
            .map_err(|e| format!("cannot seed the runtime home from {}: {e}", seed.display()))?;
    }
    super::ablate::clear_home(home.path(), &options.ablate)?;
    Ok((home, cache))
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
    let mut options = ClientOptions::new()
        .with_program(CliProgram::Path(runtime_path.to_path_buf()))
        .with_cwd(working_directory.to_path_buf());
    match target {
        Target::Offline { .. } => options = options.with_github_token(OFFLINE_TOKEN),
        Target::Live => {
            if let Some(token) = live_token() {
                options = options.with_github_token(token);
            }
        }
    }
    options.with_env(runtime_env(home, cache, target))
}

/// The environment a run's runtime gets (a private one through [`client_options`], a pooled
/// one in `crate::run::pool`): its home and cache, telemetry off, and offline the loopback server
/// as its API and GitHub endpoints with placeholder tokens (HMAC keys and enterprise tokens
/// emptied).
pub(crate) fn runtime_env(
    home: &std::path::Path,
    cache: &std::path::Path,
    target: &Target,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
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
    if let Target::Offline { base_url } = target {
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
    }
    env
}

/// The token of a live run: `GITHUB_TOKEN`, then `GH_TOKEN` (empty counts as unset), then the
/// GitHub CLI's signed-in user ([`gh_token`], asked once per process); `None`: the runtime's
/// own signed-in user, which a run's private home hides. The token is handed to the SDK
/// (`with_github_token`), never written to a file or an artifact.
pub(crate) fn live_token() -> Option<String> {
    static GH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    env_token(&|name| std::env::var(name).ok()).or_else(|| {
        GH.get_or_init(|| gh_token(std::env::var_os("PATH").as_deref()))
            .clone()
    })
}

/// `GITHUB_TOKEN`, then `GH_TOKEN`, from `var`; an empty value counts as unset.
pub(crate) fn env_token(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    ["GITHUB_TOKEN", "GH_TOKEN"]
        .iter()
        .filter_map(|name| var(name))
        .find(|token| !token.is_empty())
}

/// How long `gh auth token` may take before it is killed and taken as "no token".
const GH_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// The token of the user signed in to the GitHub CLI: `gh auth token --hostname github.com`,
/// `gh` found on `path` (a `PATH` value), run with this process's environment (so the user's
/// own `GH_CONFIG_DIR`, not a run's private one). `None` when there is no `gh`, it fails, prints
/// nothing, or takes longer than 10 s (then it is killed). A token found is added to this
/// process's obtained secrets (`crate::secrets`), which the artifacts' redactor treats like an
/// environment token.
pub(crate) fn gh_token(path: Option<&std::ffi::OsStr>) -> Option<String> {
    let program = std::env::split_paths(path?)
        .map(|dir| dir.join(if cfg!(windows) { "gh.exe" } else { "gh" }))
        .find(|candidate| candidate.is_file())?;
    let mut child = std::process::Command::new(program)
        .args(["auth", "token", "--hostname", "github.com"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let began = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if began.elapsed() < GH_BOUND => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    let token = out.trim();
    let valid = status.success() && !token.is_empty() && !token.contains(char::is_whitespace);
    valid.then(|| {
        crate::secrets::remember(token);
        token.to_owned()
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder holding a stand-in `gh` that runs `body` (a shell script body).
    fn stand_in_gh(body: &str) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let gh = dir.path().join("gh");
        std::fs::write(&gh, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    fn path_with(dir: &std::path::Path) -> std::ffi::OsString {
        std::env::join_paths([
            dir,
            std::path::Path::new("/usr/bin"),
            std::path::Path::new("/bin"),
        ])
        .unwrap()
    }

    #[test]
    fn environment_tokens_come_first_and_empty_ones_count_as_unset() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }
        };
        let both = env(&[("GITHUB_TOKEN", "a"), ("GH_TOKEN", "b")]);
        assert_eq!(env_token(&both).as_deref(), Some("a"));
        let empty_first = env(&[("GITHUB_TOKEN", ""), ("GH_TOKEN", "b")]);
        assert_eq!(env_token(&empty_first).as_deref(), Some("b"));
        assert_eq!(env_token(&env(&[("GH_TOKEN", "")])), None);
    }

    #[test]
    #[cfg(unix)]
    fn the_signed_in_gh_user_token_comes_from_gh_on_path() {
        // The stand-in answers only the exact question a run asks.
        let gh = stand_in_gh(
            r#"[ "$*" = "auth token --hostname github.com" ] && echo gho_standin123 && exit 0; exit 4"#,
        );
        assert_eq!(
            gh_token(Some(&path_with(gh.path()))).as_deref(),
            Some("gho_standin123")
        );
        // Never written: every artifact this process writes redacts it from now on.
        assert!(crate::secrets::obtained().contains(&"gho_standin123".to_owned()));
        // Not signed in: gh exits 1 with a message on stderr.
        let signed_out = stand_in_gh("echo 'no oauth token' >&2; exit 1");
        assert_eq!(gh_token(Some(&path_with(signed_out.path()))), None);
        // Prints nothing.
        let silent = stand_in_gh("exit 0");
        assert_eq!(gh_token(Some(&path_with(silent.path()))), None);
        // No gh on PATH at all.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(gh_token(Some(empty.path().as_os_str())), None);
        assert_eq!(gh_token(None), None);
    }
}
