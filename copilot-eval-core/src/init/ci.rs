//! `cargo copilot-eval init --ci github`: a GitHub Actions workflow that replays the evals in CI.
//!
//! [`init_ci`] writes `.github/workflows/copilot-eval.yml` at the root of the package's git
//! repository (the nearest folder at or above the package holding `.git`; the package's own
//! folder when there is none), with read-only `permissions`. The workflow ([`github_workflow`])
//! installs Rust, Node.js 24 and the `cargo-copilot-eval` command from the very revision or
//! version of the package's copilot-eval-core ([`pin`]: its lock file's), caching the command
//! under a key naming that revision; caches cargo's registry and the build folder, and the
//! runtime as installed and unpacked by `cargo copilot-eval runtime install`; replays the evals
//! of the workspace with the profile `ci` (which it adds to `.config/copilot-eval.toml` at the
//! repository root, unless there is one) sharded over a matrix (`--partition hash:K/N`); and
//! merges the shards' JSON into one report whose JSON, JUnit and HTML files are uploaded as the
//! artifact `copilot-eval-report`. Its actions are at their current majors (node24).
//!
//! A copilot-eval-core path dependency outside the repository cannot build in CI: `init_ci`
//! warns naming the manifest's line, and with `--core-git URL` rewrites it to
//! `{ git = URL, rev = <the path's commit> }`.

use std::path::{Path, PathBuf};

use super::InitError;
use super::pin::{self, CoreDependency, Pin};
use crate::suite::profile::{CI_PROFILE, PROFILE_FILE};

/// Where the workflow goes, relative to the repository's root.
pub const WORKFLOW_PATH: &str = ".github/workflows/copilot-eval.yml";
/// The workflow's text, with `@NAME@` placeholders filled by [`github_workflow`].
const TEMPLATE: &str = include_str!("templates/github_workflow.yml");

/// Which CI the workflow is for (`--ci`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ci {
    /// GitHub Actions: `.github/workflows/copilot-eval.yml`.
    Github,
}

/// What [`init_ci`] writes, and where.
#[derive(Debug, Clone, Default)]
pub struct CiOptions {
    /// The package's `Cargo.toml`; `None`: the nearest `Cargo.toml` in [`Self::cwd`] or above.
    pub manifest_path: Option<PathBuf>,
    /// The folder to start from (default: the process's current folder).
    pub cwd: Option<PathBuf>,
    /// Replace an existing workflow file (`--force`); without it an existing file is an error.
    pub force: bool,
    /// `--core-git URL`: when the package depends on copilot-eval-core by a path outside the
    /// repository (which CI cannot build), rewrite that dependency to `{ git = URL, rev = REV }`,
    /// REV the commit the path's checkout is at (formatting and comments kept). Also the
    /// repository the command is installed from for such a path when it is not rewritten
    /// (default: this program's repository).
    pub core_git: Option<String>,
}

/// The workflow's text: `manifest` is the package's `Cargo.toml` relative to the repository's
/// root (`None`: the package is at the root, the command finds it there), `pin` the command's
/// install and cache key (the copilot-eval-core the package uses), `target` the build folder to
/// cache, relative to the root.
pub fn github_workflow(manifest: Option<&Path>, pin: &Pin, target: &str) -> String {
    let selection = match manifest {
        Some(path) => format!("--manifest-path {} --workspace ", pin::slash_path(path)),
        None => "--workspace ".to_owned(),
    };
    TEMPLATE
        .replace("@TOOL_VERSION@", env!("CARGO_PKG_VERSION"))
        .replace("@PIN_KEY@", &pin.key)
        .replace("@PIN@", &pin.describe)
        .replace("@INSTALL@", &pin.install)
        .replace("@TARGET@", target)
        .replace("@SELECTION@", &selection)
}

/// Where the workflow is written: the package's manifest (canonical), the repository root,
/// whether a git repository was found.
struct Place {
    manifest: PathBuf,
    package: PathBuf,
    root: PathBuf,
    in_repository: bool,
}

/// Find the package's manifest and its repository. Error: no manifest.
fn place(options: &CiOptions) -> Result<Place, InitError> {
    let cwd = match &options.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(InitError::CurrentDir)?,
    };
    let manifest = match &options.manifest_path {
        Some(path) => cwd.join(path),
        None => super::find_manifest(&cwd).ok_or_else(|| {
            InitError::Refused(format!(
                "no Cargo.toml in {} or above: run `cargo copilot-eval init` first (it creates the package and its starter eval), then `init --ci github`",
                cwd.display()
            ))
        })?,
    };
    let manifest = manifest
        .canonicalize()
        .map_err(|e| InitError::Refused(format!("cannot read {}: {e}", manifest.display())))?;
    let package = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let repository = package.ancestors().find(|d| d.join(".git").exists());
    let root = repository.unwrap_or(&package).to_path_buf();
    Ok(Place {
        in_repository: repository.is_some(),
        manifest,
        package,
        root,
    })
}

/// Write the workflow and the `ci` profile (see the module documentation); returns the lines to
/// show the user.
///
/// Errors (a message naming the file and the fix; nothing was written): no `Cargo.toml` in the
/// folder or above (run `cargo copilot-eval init` first), no copilot-eval-core dependency, one
/// whose revision cannot be told, an existing workflow file without [`CiOptions::force`], a
/// write that failed.
pub fn init_ci(ci: Ci, options: &CiOptions) -> Result<Vec<String>, InitError> {
    let Ci::Github = ci;
    let place = place(options)?;
    let workflow = place.root.join(WORKFLOW_PATH);
    let existed = workflow.exists();
    if existed && !options.force {
        return Err(InitError::Refused(format!(
            "{} already exists; init never overwrites a file (nothing was changed). Replace it with --force, or move it away.",
            workflow.display()
        )));
    }
    let profile = ci_profile(&place.root)?;
    let mut lines = Vec::new();
    let pin = dependency_pin(&place, options, &mut lines)?;
    let relative = place
        .manifest
        .strip_prefix(&place.root)
        .unwrap_or(&place.manifest);
    let at_root = relative == Path::new("Cargo.toml");
    let text = github_workflow((!at_root).then_some(relative), &pin, &target(&place));
    let write = |path: &Path, text: &str| {
        crate::report::write_atomically(path, text.as_bytes()).map_err(|source| InitError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    write(&workflow, &text)?;
    lines.insert(0, format!(
        "{} {}: replays the evals in GitHub Actions over 2 shards with the profile `ci`, then merges them into one report (JSON, JUnit, HTML); the command is installed from {}, as the evals' copilot-eval-core",
        if existed { "replaced" } else { "created" },
        workflow.display(),
        pin.describe
    ));
    match profile {
        Some((path, text)) => {
            write(&path, &text)?;
            lines.push(format!("wrote the profile `ci` to {}", path.display()));
        }
        None => lines.push(format!(
            "kept the profile `ci` of {}",
            place.root.join(PROFILE_FILE).display()
        )),
    }
    if !place.in_repository {
        lines.push(format!(
            "note: no git repository at or above {}; the workflow is in the package's folder (GitHub reads .github/ at the repository's root)",
            place.package.display()
        ));
    }
    lines.push(format!(
        "next: commit {WORKFLOW_PATH} and {PROFILE_FILE} with your cassettes; record missing ones first with `cargo copilot-eval --record`"
    ));
    Ok(lines)
}

/// The pin of the package's copilot-eval-core; a path dependency outside the repository is
/// rewritten to git with `--core-git`, else warned about with its manifest line.
fn dependency_pin(
    place: &Place,
    options: &CiOptions,
    lines: &mut Vec<String>,
) -> Result<Pin, InitError> {
    let manifest = &place.manifest;
    let declared = pin::declared(manifest).ok_or_else(|| {
        InitError::Refused(format!(
            "{} does not depend on copilot-eval-core: run `cargo copilot-eval init` first (it adds the dependency and a starter eval), then `init --ci github`",
            manifest.display()
        ))
    })?;
    let fallback = options
        .core_git
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_REPOSITORY").to_owned());
    let pin = pin::pin(&declared.source, &place.root, &fallback).map_err(|e| {
        InitError::Refused(format!("{}:{}: {e}", manifest.display(), declared.line))
    })?;
    let CoreDependency::Path { folder } = &declared.source else {
        return Ok(pin);
    };
    if folder.starts_with(&place.root) {
        return Ok(pin);
    }
    match &options.core_git {
        Some(url) => {
            let rev = pin::head_commit(folder).map_err(InitError::Refused)?;
            let text = std::fs::read_to_string(manifest)
                .map_err(|e| InitError::Refused(format!("cannot read {}: {e}", manifest.display())))?;
            let rewritten = pin::rewrite_to_git(&text, url, Some(&rev))
                .map_err(|e| InitError::Refused(format!("{}: {e}", manifest.display())))?;
            crate::report::write_atomically(manifest, rewritten.as_bytes()).map_err(
                |source| InitError::Write {
                    path: manifest.clone(),
                    source,
                },
            )?;
            lines.push(format!(
                "rewrote {}:{}: copilot-eval-core = {{ git = \"{url}\", rev = \"{rev}\" }} (was `{}`), so CI can build it",
                manifest.display(),
                declared.line,
                declared.text.trim()
            ));
        }
        None => lines.push(format!(
            "warning: {}:{}: `{}` is a path outside the repository; CI cannot build the package. Depend on copilot-eval-core from git at the same commit: run `cargo copilot-eval init --ci github --force --core-git URL` (it rewrites that line to `{{ git = URL, rev = \"{}\" }}`)",
            manifest.display(),
            declared.line,
            declared.text.trim(),
            pin.key.trim_start_matches("git-")
        )),
    }
    Ok(pin)
}

/// The build folder to cache, relative to the repository root: the `target` of the workspace
/// holding the package (the nearest manifest at or above it, inside the root, with a
/// `[workspace]`), else the package's own.
fn target(place: &Place) -> String {
    let workspace = place
        .package
        .ancestors()
        .take_while(|d| d.starts_with(&place.root))
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml"))
                .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
        })
        .unwrap_or(&place.package);
    match workspace.strip_prefix(&place.root) {
        Ok(p) if p != Path::new("") => format!("{}/target", pin::slash_path(p)),
        _ => "target".to_owned(),
    }
}

/// The profiles file with a `ci` profile added, when it has none: `None` when it has one
/// (kept). Error: the file exists and is not valid TOML.
fn ci_profile(root: &Path) -> Result<Option<(PathBuf, String)>, InitError> {
    let path = root.join(PROFILE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(InitError::Refused(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| InitError::Refused(format!("{} is not valid TOML: {e}", path.display())))?;
    if doc.get("profile").and_then(|p| p.get("ci")).is_some() {
        return Ok(None);
    }
    let mut text = text;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(CI_PROFILE);
    Ok(Some((path, text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placeholder is filled; a package below the root is selected by its manifest; the
    /// pin is the install's and the cache key's.
    #[test]
    fn the_workflow_fills_every_placeholder() {
        let pin = Pin {
            install: "--git https://x/y --rev abc".into(),
            key: "git-abc".into(),
            describe: "git https://x/y at abc".into(),
        };
        let text = github_workflow(Some(Path::new("crates/evals/Cargo.toml")), &pin, "target");
        for placeholder in [
            "@TOOL_VERSION@",
            "@PIN_KEY@",
            "@PIN@",
            "@INSTALL@",
            "@TARGET@",
            "@SELECTION@",
        ] {
            assert!(!text.contains(placeholder), "{text}");
        }
        assert!(text.contains(
            "run: cargo copilot-eval --manifest-path crates/evals/Cargo.toml --workspace --profile ci --partition hash:"
        ));
        assert!(
            text.contains("cargo install --locked --git https://x/y --rev abc cargo-copilot-eval")
        );
        assert!(text.contains("key: cargo-copilot-eval-git-abc-${{ runner.os }}"));
        let root = github_workflow(None, &pin, "target");
        assert!(root.contains("run: cargo copilot-eval --workspace --profile ci --partition"));
    }
}
