//! The runtime's first-start unpack into the shared cache, done before any eval's clock starts.
//!
//! The runtime executable is a self-extracting package: on its first start with a cache folder
//! (`XDG_CACHE_HOME` / `COPILOT_CACHE_HOME`, here [`runtime_cache_dir`]) it unpacks about 235 MB
//! into `pkg/<platform>/<version>/` and marks the folder complete with an empty
//! `.extraction-complete` file. It unpacks into `pkg/<platform>/.extracting-<version>-<pid>-...`
//! first and renames that folder when done; a start that is killed mid-unpack leaves the
//! `.extracting-*` folder behind (and an interrupted replacement a `.replaced-*` folder). The
//! runtime never removes those itself.
//!
//! [`warm`] unpacks before an eval starts (the runner calls it once before launching tests, each
//! run calls it in its preparation), so the unpack is never charged to an eval's `timeout_s`;
//! it removes the leftovers of interrupted unpacks whose process is gone. [`partial_extractions`]
//! lists the leftovers for `doctor`.
//!
//! Each start of the runtime also writes two in-use markers into its version folder,
//! `inuse.<pid>.lock` (its pid) and `inuse.<pid>.hold`, and removes them when it exits on
//! SIGTERM; a runtime killed with SIGKILL leaves them (measured with 1.0.102; the
//! `runtime_cache` e2e test checks it). [`remove_stale_in_use_markers`] removes those of
//! processes that are gone: the runner does it once before launching tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{RuntimeError, npm_platform, runtime_cache_dir};

/// The file the runtime writes into an unpacked version folder once the unpack is complete.
pub const COMPLETE_MARKER: &str = ".extraction-complete";

/// How long [`warm`] waits for the runtime's `--version` start (unpack included) before it kills
/// it: 10 minutes, far above the few seconds an unpack takes on a loaded machine.
const WARM_BOUND: Duration = Duration::from_secs(600);

/// The folder the runtime unpacks its versions into: `<runtime cache>/pkg/<npm platform>/`.
pub fn platform_dir() -> PathBuf {
    runtime_cache_dir().join("pkg").join(npm_platform())
}

/// The version of the npm package an executable was installed from, read from the
/// `package.json` beside it (`node_modules/@github/copilot-<platform>/package.json`); `None`
/// when there is none (an executable outside an npm install) or it holds no `version`.
pub fn package_version(executable: &Path) -> Option<String> {
    let manifest = executable.parent()?.join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

/// Whether `version` is completely unpacked in the shared cache (its folder holds
/// [`COMPLETE_MARKER`]).
pub fn is_unpacked(version: &str) -> bool {
    platform_dir().join(version).join(COMPLETE_MARKER).is_file()
}

/// A folder an unpack or a replacement left in [`platform_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The folder (`.extracting-<version>-<pid>-<ms>-<attempt>` or
    /// `.replaced-<version>-<pid>-<ms>`).
    pub path: PathBuf,
    /// The process that made it, from its name; `None` when the name holds no pid.
    pub pid: Option<u32>,
    /// Whether that process is still running (an unpack in progress, not a leftover).
    pub running: bool,
}

/// The `.extracting-*` and `.replaced-*` folders in [`platform_dir`], sorted by path. An
/// unreadable or missing folder lists nothing.
pub fn partial_extractions() -> Vec<Partial> {
    let Ok(entries) = std::fs::read_dir(platform_dir()) else {
        return Vec::new();
    };
    let mut partials: Vec<Partial> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rest = name
                .strip_prefix(".extracting-")
                .or_else(|| name.strip_prefix(".replaced-"))?;
            let pid = pid_in(rest);
            Some(Partial {
                path: entry.path(),
                pid,
                running: pid.is_some_and(process_running),
            })
        })
        .collect();
    partials.sort_by(|a, b| a.path.cmp(&b.path));
    partials
}

/// The pid in `<version>-<pid>-<ms>[-<attempt>]`: the first all-digit dash-separated field after
/// the version (a version holds dots, never a bare number field).
fn pid_in(rest: &str) -> Option<u32> {
    rest.split('-')
        .skip(1)
        .find(|field| !field.is_empty() && field.chars().all(|c| c.is_ascii_digit()))?
        .parse()
        .ok()
}

#[cfg(unix)]
fn process_running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_running(_pid: u32) -> bool {
    // Without a cheap check, a leftover is kept (the runtime ignores it; doctor lists it).
    true
}

/// The bytes of the files under `path` (symbolic links not followed); unreadable entries count 0.
pub fn folder_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_bytes(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// Remove the [`partial_extractions`] whose process is gone; returns what was removed and what
/// could not be (with the error text).
pub fn remove_leftovers() -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut removed = Vec::new();
    let mut failed = Vec::new();
    for partial in partial_extractions() {
        if partial.running || partial.pid.is_none() {
            continue;
        }
        match std::fs::remove_dir_all(&partial.path) {
            Ok(()) => removed.push(partial.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => failed.push((partial.path, e.to_string())),
        }
    }
    (removed, failed)
}

/// Remove the runtime's in-use markers (`inuse.<pid>.lock`, `inuse.<pid>.hold`) of `version`'s
/// folder in [`platform_dir`] whose process is gone; a marker of a running process, and any
/// other file, is kept. Returns how many files were removed; a missing or unreadable folder,
/// or a file that cannot be removed, removes nothing more (the runtime ignores stale markers:
/// they only take room in the folder).
pub fn remove_stale_in_use_markers(version: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(platform_dir().join(version)) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("inuse.")) else {
                return false;
            };
            let pid = rest
                .strip_suffix(".lock")
                .or_else(|| rest.strip_suffix(".hold"))
                .and_then(|pid| pid.parse::<u32>().ok());
            pid.is_some_and(|pid| !process_running(pid))
        })
        .filter(|entry| std::fs::remove_file(entry.path()).is_ok())
        .count()
}

/// What [`warm`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warmed {
    /// The executable's version was already unpacked (known from its `package.json`): nothing
    /// was started.
    AlreadyUnpacked,
    /// The executable is not in an npm install (no `package.json` with a version beside it, e.g.
    /// a wrapper script named by `COPILOT_EVAL_RUNTIME_PATH`): its version, and so its unpack
    /// folder, is unknown, and an unknown executable is not started outside a run.
    NotAnInstall,
    /// The executable was started once with `--version` so that it unpacked its files.
    Started {
        /// Wall time of that start, unpack included, in ms.
        ms: u64,
        /// Leftover folders of interrupted unpacks removed first.
        removed: Vec<PathBuf>,
    },
}

/// Make sure the runtime at `executable` is unpacked in the shared cache before a session uses
/// it. Its version comes from the `package.json` beside it ([`package_version`]); when that
/// version is already unpacked this only checks a file. Otherwise it removes leftovers of
/// interrupted unpacks ([`remove_leftovers`]) and starts the executable once with
/// `--version --no-auto-update`, the cache variables pointing at [`runtime_cache_dir`] and a
/// temporary `COPILOT_HOME`, and waits for it (at most 10 minutes). Concurrent callers are
/// safe: the runtime unpacks into a private folder and renames it.
///
/// Errors: [`RuntimeError::Version`] when the start fails, exits non-zero, or outlasts the
/// bound (it is killed). Callers treat that as advice: the session's own start reports the cause.
pub fn warm(executable: &Path) -> Result<Warmed, RuntimeError> {
    let Some(version) = package_version(executable) else {
        return Ok(Warmed::NotAnInstall);
    };
    if is_unpacked(&version) {
        return Ok(Warmed::AlreadyUnpacked);
    }
    let (removed, _) = remove_leftovers();
    let began = Instant::now();
    start_once(executable)?;
    Ok(Warmed::Started {
        ms: began.elapsed().as_millis() as u64,
        removed,
    })
}

fn start_once(executable: &Path) -> Result<(), RuntimeError> {
    let error = |detail: String| RuntimeError::Version {
        path: executable.to_path_buf(),
        detail,
    };
    let cache = runtime_cache_dir();
    std::fs::create_dir_all(&cache)
        .map_err(|e| error(format!("cannot create the cache {}: {e}", cache.display())))?;
    let home = tempfile::Builder::new()
        .prefix("copilot-eval-unpack-")
        .tempdir()
        .map_err(|e| error(format!("cannot create a temporary home: {e}")))?;
    let mut child = Command::new(executable)
        .args(["--version", "--no-auto-update"])
        .env("XDG_CACHE_HOME", &cache)
        .env("COPILOT_CACHE_HOME", &cache)
        .env("COPILOT_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| error(e.to_string()))?;
    let began = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
                }
                return Err(error(format!(
                    "first start (unpack into {}) exited {status}: {}",
                    cache.display(),
                    stderr.trim()
                )));
            }
            Ok(None) if began.elapsed() > WARM_BOUND => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(error(format!(
                    "first start (unpack into {}) did not end within {} s; it was killed",
                    cache.display(),
                    WARM_BOUND.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(error(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_is_the_first_number_field_after_the_version() {
        assert_eq!(pid_in("1.0.102-4242-1764561234567-1"), Some(4242));
        assert_eq!(pid_in("1.0.102-4242-1764561234567"), Some(4242));
        assert_eq!(pid_in("1.0.102-beta.1-77-1"), Some(77));
        assert_eq!(pid_in("1.0.102"), None);
        assert_eq!(pid_in("1.0.102-x-y"), None);
    }

    #[test]
    fn this_process_is_running_and_a_reaped_child_is_not() {
        assert!(process_running(std::process::id()));
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_running(pid));
    }

    #[test]
    fn the_package_version_is_read_beside_the_executable() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("copilot");
        std::fs::write(&exe, b"").unwrap();
        assert_eq!(package_version(&exe), None);
        std::fs::write(
            dir.path().join("package.json"),
            br#"{"name":"@github/copilot-linux-x64","version":"1.2.3"}"#,
        )
        .unwrap();
        assert_eq!(package_version(&exe).as_deref(), Some("1.2.3"));
    }
}
