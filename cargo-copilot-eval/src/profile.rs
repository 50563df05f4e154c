//! `--profile NAME` (or `COPILOT_EVAL_PROFILE`): a suite run's options from the profiles file
//! `.config/copilot-eval.toml` (`copilot_eval_core::suite::profile`), placed before the command
//! line's own options so that those win.

use std::ffi::OsString;
use std::path::Path;

use copilot_eval_core::suite::profile::{
    DEFAULT_PROFILE, PROFILE_ENV, PROFILE_FILE, find, profile_args,
};

/// The arguments with the profile's options inserted after `args[..at]` (a suite run: after
/// the subcommand name `args[1]`, `at` 2; `plan`: after its own name): `Ok(None)` when no
/// profile applies (no `--profile`, no `COPILOT_EVAL_PROFILE`, and no
/// profiles file or no `[profile.default]` in it). The file is the nearest one from the current
/// folder up, else from the `--manifest-path` package's folder up. Errors: a profile named but
/// no file, and the file's own errors (file, line, valid keys). A line on stderr names the
/// profile, its file and the options it gave.
pub(crate) fn apply(
    args: &[OsString],
    at: usize,
    named: Option<&str>,
    manifest_path: Option<&Path>,
) -> Result<Option<Vec<OsString>>, String> {
    let from_env = std::env::var(PROFILE_ENV).ok().filter(|v| !v.is_empty());
    let named = named.map(str::to_owned).or(from_env);
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let file = find(&cwd).or_else(|| {
        let manifest = cwd.join(manifest_path?);
        find(manifest.parent()?)
    });
    let Some(file) = file else {
        return match named {
            Some(name) => Err(format!(
                "--profile {name}: no {PROFILE_FILE} in {} or above (write [profile.{name}] there; docs/command.md, \"Profiles\")",
                cwd.display()
            )),
            None => Ok(None),
        };
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let name = named.unwrap_or_else(|| DEFAULT_PROFILE.to_owned());
    let mut extra = profile_args(&file, &text, &name).map_err(|e| e.to_string())?;
    // `--record` on the command line wins over a profile's `replay` (clap refuses both).
    let recording = args
        .iter()
        .any(|a| a.to_string_lossy().starts_with("--record"));
    if recording {
        extra.retain(|a| a != "--replay");
    }
    if extra.is_empty() {
        return Ok(None);
    }
    eprintln!("profile {name} ({}): {}", file.display(), extra.join(" "));
    let at = at.min(args.len());
    let mut out = args[..at].to_vec();
    out.extend(extra.into_iter().map(OsString::from));
    out.extend(args.iter().skip(at).cloned());
    Ok(Some(out))
}

/// The command line's way to turn off a flag a profile turned on (a profile's options come
/// before the command line's; of a flag and its negation the last one given wins).
#[derive(clap::Args)]
// Clap alone reads these: each cancels its flag (`overrides_with`) and is then false.
#[allow(dead_code)]
pub(crate) struct Negations {
    /// Undo `--replay` (a profile's `replay = true`): run live.
    #[arg(long, overrides_with = "replay")]
    no_replay: bool,
    /// Undo `--no-fail-fast`: stop launching evals after an infrastructure error.
    #[arg(long, overrides_with = "no_fail_fast")]
    fail_fast: bool,
    /// Undo `--plain`: the progress bar on a terminal.
    #[arg(long, overrides_with = "plain")]
    no_plain: bool,
    /// Undo `--fresh-runtime`: offline evals on warm pooled runtimes.
    #[arg(long, overrides_with = "fresh_runtime")]
    no_fresh_runtime: bool,
    /// Undo `--stop-early`: run every trial.
    #[arg(long, overrides_with = "stop_early")]
    no_stop_early: bool,
    /// Undo `--fail-on-regression`: a regression against the baseline does not change the
    /// exit status.
    #[arg(long, overrides_with = "fail_on_regression")]
    no_fail_on_regression: bool,
}
