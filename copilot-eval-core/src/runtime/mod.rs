//! The Copilot runtime: which executable runs sessions, how it is installed, and where it keeps
//! its files.
//!
//! The runtime is the real Copilot CLI from the npm package `@github/copilot`, pinned to
//! [`PINNED_RUNTIME_VERSION`]. [`install`] puts it in a per-user cache folder with npm
//! (`cargo copilot-eval runtime install`); nothing is ever downloaded implicitly during a run.
//!
//! Resolution order ([`resolve`]): `COPILOT_EVAL_RUNTIME_PATH` (an explicit executable), then
//! `COPILOT_CLI_PATH`, then the installed pinned runtime.
//!
//! Folders (all under [`cache_root`], default `$XDG_CACHE_HOME/copilot-eval`, overridable with
//! `COPILOT_EVAL_CACHE_DIR`):
//! - `runtime/<version>/`: the npm install of the pinned runtime;
//! - `runtime-cache/`: the runtime's own unpack cache (`XDG_CACHE_HOME` / `COPILOT_CACHE_HOME` of
//!   every run; the runtime unpacks about 235 MB there on its first start), shared by all runs.
//!   [`unpack::warm`] does that unpack before an eval's clock starts.
//!
//! Each run gets a private, temporary runtime home (`COPILOT_HOME`, `GH_CONFIG_DIR`,
//! `XDG_CONFIG_HOME`, `XDG_STATE_HOME`), removed after the run.

use std::path::{Path, PathBuf};
use std::process::Command;

mod processes;
mod skip;
pub mod unpack;

pub use processes::{
    Leftover, describe_leftovers, kill_process, process_alive, processes_with_env, wait_for_exits,
};
pub use skip::write_skip;

/// The `@github/copilot` npm version this release of copilot-eval is built and tested against.
pub const PINNED_RUNTIME_VERSION: &str = "1.0.102";
/// The npm package of the runtime.
pub const RUNTIME_PACKAGE: &str = "@github/copilot";
/// Environment variable naming an explicit runtime executable (checked first).
pub const RUNTIME_PATH_ENV: &str = "COPILOT_EVAL_RUNTIME_PATH";
/// The SDK's own variable naming a runtime executable (checked second).
pub const CLI_PATH_ENV: &str = "COPILOT_CLI_PATH";
/// Selects an installed runtime version other than the pinned one for a run (`cargo copilot-eval
/// --runtime-version X` sets it for the runner and its test processes); install the version first
/// with `cargo copilot-eval runtime install --version X`.
pub const RUNTIME_VERSION_ENV: &str = "COPILOT_EVAL_RUNTIME_VERSION";
/// Environment variable overriding [`cache_root`].
pub const CACHE_DIR_ENV: &str = "COPILOT_EVAL_CACHE_DIR";
/// When set to `1`, tests that need the runtime fail instead of skipping when none resolves.
pub const REQUIRE_RUNTIME_ENV: &str = "COPILOT_EVAL_REQUIRE_RUNTIME";

/// Where a resolved runtime came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeSource {
    /// `COPILOT_EVAL_RUNTIME_PATH`.
    EvalRuntimePath,
    /// `COPILOT_CLI_PATH`.
    CliPath,
    /// The pinned runtime installed by `cargo copilot-eval runtime install`.
    Installed,
    /// Another installed version, chosen with `COPILOT_EVAL_RUNTIME_VERSION`
    /// (`cargo copilot-eval --runtime-version X`).
    InstalledVersion,
}

impl RuntimeSource {
    /// A short description for messages, e.g. `COPILOT_EVAL_RUNTIME_PATH`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::EvalRuntimePath => RUNTIME_PATH_ENV,
            Self::CliPath => CLI_PATH_ENV,
            Self::Installed => "installed pinned runtime",
            Self::InstalledVersion => RUNTIME_VERSION_ENV,
        }
    }
}

/// A runtime executable that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRuntime {
    /// The executable.
    pub path: PathBuf,
    /// Where it was found.
    pub source: RuntimeSource,
}

/// Errors locating, installing or querying the runtime. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No runtime resolves.
    #[error(
        "no Copilot runtime found: {RUNTIME_PATH_ENV} and {CLI_PATH_ENV} are unset and the pinned runtime {PINNED_RUNTIME_VERSION} is not installed at {expected}; run `cargo copilot-eval runtime install`"
    )]
    NotFound {
        /// Where the installed runtime would be.
        expected: PathBuf,
    },
    /// `COPILOT_EVAL_RUNTIME_VERSION` names a version that is not installed.
    #[error(
        "{RUNTIME_VERSION_ENV} (--runtime-version) asks for runtime {version}, which is not installed at {expected}; run `cargo copilot-eval runtime install --version {version}` (`runtime list` shows what is installed)"
    )]
    VersionNotInstalled {
        /// The version asked for.
        version: String,
        /// Where its executable would be.
        expected: PathBuf,
    },
    /// A version string that is not `MAJOR.MINOR.PATCH` (with an optional `-prerelease`).
    #[error(
        "{version:?} is not a runtime version: give MAJOR.MINOR.PATCH as npm publishes it, e.g. {PINNED_RUNTIME_VERSION}"
    )]
    BadVersion {
        /// What was given.
        version: String,
    },
    /// An environment variable names a path that is not an executable file.
    #[error("{variable} is set to {path}, which is not an executable file; fix or unset it")]
    BadPath {
        /// The variable.
        variable: &'static str,
        /// Its value.
        path: PathBuf,
    },
    /// npm is not on PATH.
    #[error(
        "npm was not found on PATH; install Node.js 20 or newer with npm (e.g. `apt-get install nodejs npm`), then run `cargo copilot-eval runtime install` again"
    )]
    NpmMissing,
    /// npm ran and failed.
    #[error("`npm install {RUNTIME_PACKAGE}@{version}` failed ({status}): {output}")]
    InstallFailed {
        /// The version requested.
        version: String,
        /// npm's exit status.
        status: String,
        /// The tail of npm's output.
        output: String,
    },
    /// The install finished but holds no executable for this platform.
    #[error(
        "the npm install finished but {path} is missing; is this platform ({platform}) supported by {RUNTIME_PACKAGE}?"
    )]
    NoPlatformBinary {
        /// The expected executable.
        path: PathBuf,
        /// `os-arch` as npm names it.
        platform: String,
    },
    /// `--version` failed or printed something unexpected.
    #[error("`{path} --version` failed: {detail}")]
    Version {
        /// The executable.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// A test needs the runtime and cannot use it ([`decide_for_test`]): `source` says why.
    #[error("{test} needs the Copilot runtime: {source}")]
    NeededBy {
        /// The test's name.
        test: String,
        /// Why the runtime cannot be used.
        source: Box<RuntimeError>,
    },
    /// The installed SDK cannot drive this version; nothing was installed.
    #[error("refusing to install {RUNTIME_PACKAGE}@{version}: {reason}; nothing was installed")]
    Refused {
        /// The version requested.
        version: String,
        /// Why, e.g. its protocol version against the SDK's supported range.
        reason: String,
    },
    /// A file system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

fn io_error(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> RuntimeError {
    let context = context.into();
    move |source| RuntimeError::Io { context, source }
}

/// The per-user cache folder of copilot-eval: `COPILOT_EVAL_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/copilot-eval` (`~/.cache/copilot-eval` on Linux), else a folder in the
/// system temp directory.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("copilot-eval")
}

/// The runtime's shared unpack cache, given to every run as `XDG_CACHE_HOME` and
/// `COPILOT_CACHE_HOME`.
pub fn runtime_cache_dir() -> PathBuf {
    cache_root().join("runtime-cache")
}

/// The folder holding the npm install of `version`.
pub fn install_dir(version: &str) -> PathBuf {
    cache_root().join("runtime").join(version)
}

/// npm's name for this platform's package suffix (`linux-x64`, `darwin-arm64`, ...).
pub fn npm_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{arch}")
}

/// The executable inside an npm install folder: `node_modules/@github/copilot-<platform>/copilot`.
pub fn executable_in(install_dir: &Path) -> PathBuf {
    let exe = if cfg!(windows) {
        "copilot.exe"
    } else {
        "copilot"
    };
    install_dir
        .join("node_modules")
        .join("@github")
        .join(format!("copilot-{}", npm_platform()))
        .join(exe)
}

/// The executable of the installed pinned runtime (it may not exist).
pub fn installed_executable() -> PathBuf {
    executable_in(&install_dir(PINNED_RUNTIME_VERSION))
}

/// Resolve the runtime: `COPILOT_EVAL_RUNTIME_PATH`, `COPILOT_CLI_PATH`, then the installed
/// version named by `COPILOT_EVAL_RUNTIME_VERSION`, then the installed pinned runtime. A set
/// variable that names no executable file (or a version not installed) is an error, not skipped.
pub fn resolve() -> Result<ResolvedRuntime, RuntimeError> {
    resolve_with(&|name| std::env::var_os(name), &cache_root())
}

/// [`resolve`] with the environment read through `env` and the cache at `cache`: the same
/// order and errors, testable without touching the process's environment.
pub fn resolve_with(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    cache: &Path,
) -> Result<ResolvedRuntime, RuntimeError> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    for (variable, source) in [
        (RUNTIME_PATH_ENV, RuntimeSource::EvalRuntimePath),
        (CLI_PATH_ENV, RuntimeSource::CliPath),
    ] {
        if let Some(value) = set(variable) {
            let path = PathBuf::from(value);
            if !is_executable(&path) {
                return Err(RuntimeError::BadPath { variable, path });
            }
            return Ok(ResolvedRuntime { path, source });
        }
    }
    let installed_in = |version: &str| executable_in(&cache.join("runtime").join(version));
    if let Some(version) = set(RUNTIME_VERSION_ENV) {
        let version = version.to_string_lossy().into_owned();
        check_version_text(&version)?;
        let path = installed_in(&version);
        return if is_executable(&path) {
            Ok(ResolvedRuntime {
                path,
                source: RuntimeSource::InstalledVersion,
            })
        } else {
            Err(RuntimeError::VersionNotInstalled {
                version,
                expected: path,
            })
        };
    }
    let path = installed_in(PINNED_RUNTIME_VERSION);
    if is_executable(&path) {
        Ok(ResolvedRuntime {
            path,
            source: RuntimeSource::Installed,
        })
    } else {
        Err(RuntimeError::NotFound { expected: path })
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// The version the executable prints with `--version` (`GitHub Copilot CLI 1.0.102.` → `1.0.102`).
///
/// Asked with `--no-auto-update`, as the SDK starts its server: without it an older executable
/// reports (and runs) a newer version it finds unpacked in the user's own runtime cache
/// (`~/.cache/copilot/pkg/`), so runtime 1.0.92 would claim to be 1.0.102. It runs with the
/// shared [`runtime_cache_dir`] as its cache, like a session, so a first call unpacks the runtime
/// there (see [`unpack`]), never into the user's own cache.
pub fn version(path: &Path) -> Result<String, RuntimeError> {
    let cache = runtime_cache_dir();
    let output = Command::new(path)
        .args(["--version", "--no-auto-update"])
        .env("XDG_CACHE_HOME", &cache)
        .env("COPILOT_CACHE_HOME", &cache)
        .output()
        .map_err(|e| RuntimeError::Version {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(RuntimeError::Version {
            path: path.to_path_buf(),
            detail: format!("exit {}: {}", output.status, text.trim()),
        });
    }
    parse_version(&text).ok_or_else(|| RuntimeError::Version {
        path: path.to_path_buf(),
        detail: format!("no version in {:?}", text.trim()),
    })
}

fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|word| word.trim_end_matches('.'))
        .find(|word| {
            let parts: Vec<_> = word.split('.').collect();
            parts.len() >= 3 && parts[0].chars().all(|c| c.is_ascii_digit()) && !parts[0].is_empty()
        })
        .map(str::to_owned)
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The executable.
    pub path: PathBuf,
    /// What it reports with `--version`.
    pub version: String,
    /// `false` when the pinned version was already installed and nothing was done.
    pub changed: bool,
}

/// Install the pinned runtime with npm into [`install_dir`], idempotently.
///
/// When the executable exists and reports the pinned version, nothing is done. Otherwise npm
/// installs `@github/copilot@<pinned>` into a fresh temporary folder beside the target, which then
/// replaces the target in one rename, so an interrupted install never leaves a half-installed
/// runtime that resolves.
///
/// Errors: npm missing ([`RuntimeError::NpmMissing`]), npm failing, no binary for this platform,
/// or a version mismatch after install.
pub fn install() -> Result<Installed, RuntimeError> {
    install_version(PINNED_RUNTIME_VERSION)
}

/// Install `version_wanted` of the runtime beside the pinned one (same rules as [`install`]).
///
/// Errors: as [`install`], and [`RuntimeError::BadVersion`] for a version that is not
/// `MAJOR.MINOR.PATCH[-pre]`.
pub fn install_version(version_wanted: &str) -> Result<Installed, RuntimeError> {
    install_version_checked(version_wanted, &|_| Ok(()))
}

/// [`install_version`], with `check` run on the freshly installed executable before it replaces
/// anything: an `Err(reason)` discards the install ([`RuntimeError::Refused`]).
/// `runtime install` checks the SDK protocol (`doctor::check_protocol`).
pub fn install_version_checked(
    version_wanted: &str,
    check: &dyn Fn(&Path) -> Result<(), String>,
) -> Result<Installed, RuntimeError> {
    check_version_text(version_wanted)?;
    if let Some(found) = installed(version_wanted) {
        return Ok(found);
    }
    let target = install_dir(version_wanted);
    let npm = which_npm().ok_or(RuntimeError::NpmMissing)?;
    let parent = target.parent().expect("install dir has a parent");
    std::fs::create_dir_all(parent).map_err(io_error(format!("creating {}", parent.display())))?;
    let staging = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(parent)
        .map_err(io_error(format!(
            "creating a staging folder in {}",
            parent.display()
        )))?;
    let output = Command::new(npm)
        .arg("install")
        .arg("--prefix")
        .arg(staging.path())
        .args(["--no-audit", "--no-fund", "--no-save", "--loglevel=error"])
        .arg(format!("{RUNTIME_PACKAGE}@{version_wanted}"))
        .output()
        .map_err(|_| RuntimeError::NpmMissing)?;
    if !output.status.success() {
        let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stdout));
        let tail: String = text
            .lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(RuntimeError::InstallFailed {
            version: version_wanted.to_owned(),
            status: output.status.to_string(),
            output: tail,
        });
    }
    let staged_exe = executable_in(staging.path());
    if !is_executable(&staged_exe) {
        return Err(RuntimeError::NoPlatformBinary {
            path: staged_exe,
            platform: npm_platform(),
        });
    }
    let found = version(&staged_exe)?;
    if found != version_wanted {
        return Err(RuntimeError::Version {
            path: staged_exe,
            detail: format!("installed {found}, expected {version_wanted}"),
        });
    }
    check(&staged_exe).map_err(|reason| RuntimeError::Refused {
        version: version_wanted.to_owned(),
        reason,
    })?;
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .map_err(io_error(format!("removing the old {}", target.display())))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, &target).map_err(io_error(format!(
        "moving {} to {}",
        staged.display(),
        target.display()
    )))?;
    Ok(Installed {
        path: executable_in(&target),
        version: found,
        changed: true,
    })
}

/// The installed runtime of `version`, when its executable exists and reports that version
/// (`changed` is `false`); `None` otherwise. Never installs anything.
pub fn installed(version_wanted: &str) -> Option<Installed> {
    check_version_text(version_wanted).ok()?;
    let exe = executable_in(&install_dir(version_wanted));
    if !is_executable(&exe) {
        return None;
    }
    let found = version(&exe).ok()?;
    (found == version_wanted).then_some(Installed {
        path: exe,
        version: found,
        changed: false,
    })
}

/// The versions installed in the cache (folders of `<cache>/runtime/` that hold this platform's
/// executable), sorted by version number; staging folders of an install in progress or
/// interrupted (`.install-*`) are not versions and are left out.
pub fn installed_versions() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache_root().join("runtime")) else {
        return Vec::new();
    };
    let mut versions: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| check_version_text(name).is_ok())
        .filter(|name| is_executable(&executable_in(&install_dir(name))))
        .collect();
    versions.sort_by_key(|v| version_key(v));
    versions
}

/// Sort key of a version: its numeric parts, then the text (so 1.0.9 < 1.0.10).
pub(crate) fn version_key(version: &str) -> (Vec<u64>, String) {
    let core = version.split('-').next().unwrap_or(version);
    (
        core.split('.').map(|p| p.parse().unwrap_or(0)).collect(),
        version.to_owned(),
    )
}

/// Check a runtime version's text: `MAJOR.MINOR.PATCH` with an optional `-prerelease` of
/// letters, digits, `.` and `-` is the only text allowed (it becomes a folder name).
///
/// Errors: [`RuntimeError::BadVersion`] naming the text and the expected shape.
pub fn check_version_text(version: &str) -> Result<(), RuntimeError> {
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let core_ok = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let pre_ok = pre.is_none_or(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    });
    if core_ok && pre_ok {
        Ok(())
    } else {
        Err(RuntimeError::BadVersion {
            version: version.to_owned(),
        })
    }
}

fn which_npm() -> Option<PathBuf> {
    let name = if cfg!(windows) { "npm.cmd" } else { "npm" };
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// When set, [`write_skip`] (so [`require_for_test`]) appends one line per skipped test to this
/// file (`.ci/run` counts them and prints the total).
pub const SKIP_LOG_ENV: &str = "COPILOT_EVAL_SKIP_LOG";

/// For tests that need the runtime: the resolved runtime, or `None` after saying the test is
/// skipped and how to install the runtime.
///
/// The skip line (`skipped TEST: no Copilot runtime; ...`) is written by [`write_skip`]: to the
/// process's stderr past libtest's output capture, and to `COPILOT_EVAL_SKIP_LOG` when set.
///
/// When `COPILOT_EVAL_REQUIRE_RUNTIME=1` (CI sets it), a missing runtime panics instead, so a
/// runtime test can never pass by skipping there. A set but broken `COPILOT_EVAL_RUNTIME_PATH`,
/// `COPILOT_CLI_PATH` or `COPILOT_EVAL_RUNTIME_VERSION` always panics.
pub fn require_for_test(test: &str) -> Option<ResolvedRuntime> {
    let required = std::env::var(REQUIRE_RUNTIME_ENV).as_deref() == Ok("1");
    match decide_for_test(test, resolve(), required) {
        Ok(Some(resolved)) => Some(resolved),
        Ok(None) => {
            write_skip(
                test,
                &format!(
                    "no Copilot runtime; run `cargo copilot-eval runtime install` (set {REQUIRE_RUNTIME_ENV}=1 to fail instead)"
                ),
            );
            None
        }
        Err(message) => panic!("{message}"),
    }
}

/// What [`require_for_test`] decides: run with the runtime (`Ok(Some)`), skip (`Ok(None)`: no
/// runtime installed and none required), or fail ([`RuntimeError::NeededBy`]: a required runtime
/// is missing, or a variable names a broken runtime).
pub fn decide_for_test(
    test: &str,
    resolved: Result<ResolvedRuntime, RuntimeError>,
    required: bool,
) -> Result<Option<ResolvedRuntime>, RuntimeError> {
    match resolved {
        Ok(resolved) => Ok(Some(resolved)),
        Err(RuntimeError::NotFound { .. }) if !required => Ok(None),
        Err(e) => Err(RuntimeError::NeededBy {
            test: test.to_owned(),
            source: Box::new(e),
        }),
    }
}

#[cfg(test)]
mod tests;
