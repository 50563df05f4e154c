//! `cargo copilot-eval init --ci github`: a GitHub Actions workflow that replays the evals in CI.
//!
//! [`init_ci`] writes `.github/workflows/copilot-eval.yml` at the root of the package's git
//! repository (the nearest folder at or above the package holding `.git`; the package's own
//! folder when there is none). The workflow ([`github_workflow`]) installs Rust, Node.js 20 and
//! the `cargo-copilot-eval` command, installs the pinned runtime with `cargo copilot-eval runtime
//! install` (its install folder cached by `actions/cache`, keyed by the runtime version), replays
//! the evals of the workspace sharded over a matrix (`--partition hash:K/N`), and merges the
//! shards' JSON into one report whose JSON, JUnit and HTML files are uploaded as the artifact
//! `copilot-eval-report`.

use std::path::{Path, PathBuf};

use super::InitError;

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
    /// The git repository the workflow installs the `cargo-copilot-eval` command from (default:
    /// this program's repository).
    pub install_git: Option<String>,
}

/// The workflow's text: `manifest` is the package's `Cargo.toml` relative to the repository's
/// root (`None`: the package is at the root, the command finds it there), `install_git` the git
/// repository of the `cargo-copilot-eval` command. The runtime version is the pinned one
/// ([`crate::runtime::PINNED_RUNTIME_VERSION`]), which `runtime install` installs.
pub fn github_workflow(manifest: Option<&Path>, install_git: &str) -> String {
    let selection = match manifest {
        Some(path) => format!("--manifest-path {} --workspace ", slash_path(path)),
        None => "--workspace ".to_owned(),
    };
    TEMPLATE
        .replace("@TOOL_VERSION@", env!("CARGO_PKG_VERSION"))
        .replace("@RUNTIME_VERSION@", crate::runtime::PINNED_RUNTIME_VERSION)
        .replace("@INSTALL_GIT@", install_git)
        .replace("@SELECTION@", &selection)
}

/// Write the workflow (see the module documentation); returns the lines to show the user.
///
/// Errors (a message naming the file and the fix; nothing was written): no `Cargo.toml` in the
/// folder or above (run `cargo copilot-eval init` first), an existing workflow file without
/// [`CiOptions::force`], a write that failed.
pub fn init_ci(ci: Ci, options: &CiOptions) -> Result<Vec<String>, InitError> {
    let Ci::Github = ci;
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
    let relative = manifest.strip_prefix(&root).unwrap_or(&manifest);
    let at_root = relative == Path::new("Cargo.toml");
    let workflow = root.join(WORKFLOW_PATH);
    let existed = workflow.exists();
    if existed && !options.force {
        return Err(InitError::Refused(format!(
            "{} already exists; init never overwrites a file (nothing was changed). Replace it with --force, or move it away.",
            workflow.display()
        )));
    }
    let install_git = options
        .install_git
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_REPOSITORY").to_owned());
    let text = github_workflow((!at_root).then_some(relative), &install_git);
    crate::report::write_atomically(&workflow, text.as_bytes()).map_err(|source| {
        InitError::Write {
            path: workflow.clone(),
            source,
        }
    })?;
    let mut lines = vec![format!(
        "{} {}: replays the evals in GitHub Actions over 2 shards, then merges them into one report (JSON, JUnit, HTML)",
        if existed { "replaced" } else { "created" },
        workflow.display()
    )];
    if repository.is_none() {
        lines.push(format!(
            "note: no git repository at or above {}; the workflow is in the package's folder (GitHub reads .github/ at the repository's root)",
            package.display()
        ));
    }
    if let Some(path) = local_core_path(&manifest, &root) {
        lines.push(format!(
            "note: {} depends on copilot-eval-core at the path {path}, outside the repository: CI cannot build it; depend on it from git (`init --core-git URL`) or a path inside the repository",
            manifest.display()
        ));
    }
    lines.push(format!(
        "next: commit {WORKFLOW_PATH} with your cassettes; record missing ones first with `cargo copilot-eval --record`"
    ));
    Ok(lines)
}

/// A path with `/` between its parts, as the workflow's shell (bash) reads it.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The `path` of the manifest's copilot-eval-core dependency when it is outside `root` (a CI
/// checkout of the repository would not have it).
fn local_core_path(manifest: &Path, root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let doc: toml_edit::DocumentMut = text.parse().ok()?;
    let path = ["dev-dependencies", "dependencies"]
        .iter()
        .find_map(|section| doc.get(section)?.get("copilot-eval-core")?.get("path"))?
        .as_str()?;
    let base = manifest.parent()?;
    let resolved = base.join(path).canonicalize().ok()?;
    (!resolved.starts_with(root)).then(|| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placeholder is filled; a package below the root is selected by its manifest.
    #[test]
    fn the_workflow_fills_every_placeholder() {
        let text = github_workflow(Some(Path::new("crates/evals/Cargo.toml")), "https://x/y");
        for placeholder in [
            "@TOOL_VERSION@",
            "@RUNTIME_VERSION@",
            "@INSTALL_GIT@",
            "@SELECTION@",
        ] {
            assert!(!text.contains(placeholder), "{text}");
        }
        assert!(text.contains(
            "run: cargo copilot-eval --manifest-path crates/evals/Cargo.toml --workspace --replay --partition hash:"
        ));
        assert!(text.contains("cargo install --locked --git https://x/y cargo-copilot-eval"));
        let root = github_workflow(None, "https://x/y");
        assert!(root.contains("run: cargo copilot-eval --workspace --replay --partition"));
    }
}
