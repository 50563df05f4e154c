//! The copilot-eval-core a package's evals build against, and the `cargo-copilot-eval` command
//! its CI workflow installs to match it ([`Pin`]), read from the package's `Cargo.toml` and
//! `Cargo.lock`; and the rewrite of a path dependency into a git one (`rewrite_to_git`).
//!
//! The runner and the engine must be one revision: the runner writes the environment the engine
//! reads, and the results both write. So the workflow installs the command from the very
//! revision (git) or version (registry) that the package's lock file resolved
//! copilot-eval-core to, and keys its cache on it.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Value};

/// The dependency's name.
const CORE: &str = "copilot-eval-core";
/// The command's package.
const COMMAND: &str = "cargo-copilot-eval";

/// Where a package's copilot-eval-core comes from, as its manifest says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreDependency {
    /// `{ git = URL, .. }`: the revision is the lock file's, else the manifest's `rev`, `tag`
    /// or `branch`.
    Git {
        /// The repository.
        url: String,
        /// The commit the lock file resolved, else the manifest's `rev`, `tag` or `branch`
        /// (`None`: the default branch, unpinned).
        rev: Option<String>,
    },
    /// A version requirement from a registry: the locked version, else the requirement.
    Registry {
        /// The version (`0.1.0`), or the manifest's requirement when there is no lock file.
        version: String,
    },
    /// `{ path = P }`: the folder, canonical.
    Path {
        /// The copilot-eval-core folder.
        folder: PathBuf,
    },
}

/// The manifest's copilot-eval-core dependency: where it comes from, and the manifest's line
/// that declares it (1-based, with its text) for messages.
#[derive(Debug, Clone)]
pub struct Declared {
    /// Where it comes from.
    pub source: CoreDependency,
    /// The 1-based line of `Cargo.toml` declaring it.
    pub line: usize,
    /// That line's text, as written.
    pub text: String,
}

/// Read the copilot-eval-core dependency of the package at `manifest` (`[dev-dependencies]`,
/// else `[dependencies]`); `None` when it has none or the manifest does not parse. A git or
/// registry dependency's revision comes from the package's `Cargo.lock` (in the package's folder
/// or a folder above it) when it names copilot-eval-core.
pub fn declared(manifest: &Path) -> Option<Declared> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let doc = toml_edit::Document::parse(text.as_str()).ok()?;
    let (key, item) = ["dev-dependencies", "dependencies"]
        .iter()
        .find_map(|s| doc.get(s)?.as_table_like()?.get_key_value(CORE))?;
    let start = key.span().map(|s| s.start).unwrap_or(0);
    let line = text[..start].matches('\n').count() + 1;
    let line_text = text.lines().nth(line - 1).unwrap_or_default().to_owned();
    let base = manifest.parent().unwrap_or(Path::new("."));
    let field = |name: &str| item.get(name).and_then(Item::as_str).map(str::to_owned);
    let locked = locked_source(base);
    let source = if let Some(path) = field("path") {
        CoreDependency::Path {
            folder: base.join(path).canonicalize().ok()?,
        }
    } else if let Some(url) = field("git") {
        let rev = locked
            .and_then(|(_, source)| source?.rsplit_once('#').map(|(_, c)| c.to_owned()))
            .or_else(|| field("rev"))
            .or_else(|| field("tag"))
            .or_else(|| field("branch"));
        CoreDependency::Git { url, rev }
    } else {
        let version = match locked {
            Some((version, _)) => version,
            None => item
                .as_str()
                .map(str::to_owned)
                .or_else(|| field("version"))?,
        };
        CoreDependency::Registry { version }
    };
    Some(Declared {
        source,
        line,
        text: line_text,
    })
}

/// copilot-eval-core's `(version, source)` in the nearest `Cargo.lock` at or above `base`.
fn locked_source(base: &Path) -> Option<(String, Option<String>)> {
    let lock = base
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())?;
    let text = std::fs::read_to_string(lock).ok()?;
    let doc: DocumentMut = text.parse().ok()?;
    let package = doc
        .get("package")?
        .as_array_of_tables()?
        .iter()
        .find(|p| p.get("name").and_then(Item::as_str) == Some(CORE))?;
    let version = package.get("version")?.as_str()?.to_owned();
    let source = package
        .get("source")
        .and_then(Item::as_str)
        .map(str::to_owned);
    Some((version, source))
}

/// The `cargo-copilot-eval` command a workflow installs: the `cargo install` arguments before
/// the package name, and the cache key part naming the revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// `--git URL --rev SHA`, `--version =X`, or `--path DIR` (relative to the repository).
    pub install: String,
    /// The cache key's part (`git-<sha>`, `v0.1.0`, or a `hashFiles(..)` expression of the
    /// command's and core's sources for a path inside the repository).
    pub key: String,
    /// What it is, for people: `git URL at SHA`, `version X`, `path DIR`.
    pub describe: String,
}

/// The pin of `dependency` for a workflow at the repository `root`: the same revision (git),
/// version (registry) or sources (a path inside `root`). A path outside `root` is pinned to the
/// commit its git checkout is at (`git rev-parse HEAD`), installed from `fallback_git`: the CI
/// cannot build such a package until the dependency is rewritten (init warns). Errors: a git
/// dependency with no revision anywhere, a path outside `root` not in a git checkout.
pub(crate) fn pin(
    dependency: &CoreDependency,
    root: &Path,
    fallback_git: &str,
) -> Result<Pin, String> {
    match dependency {
        CoreDependency::Git {
            url,
            rev: Some(rev),
        } => Ok(Pin {
            install: format!("--git {url} --rev {rev}"),
            key: format!("git-{rev}"),
            describe: format!("git {url} at {rev}"),
        }),
        CoreDependency::Git { url, rev: None } => Err(format!(
            "copilot-eval-core comes from git {url} with no revision and no Cargo.lock names it: build the package once (`cargo build --tests` writes Cargo.lock), or give the dependency a `rev`, so the workflow can install the command from the same revision"
        )),
        CoreDependency::Registry { version } => {
            let version = version.trim_start_matches('=');
            Ok(Pin {
                install: format!("--version ={version}"),
                key: format!("v{version}"),
                describe: format!("version {version}"),
            })
        }
        CoreDependency::Path { folder } => match folder.strip_prefix(root) {
            Ok(inside) => {
                let core = slash_path(inside);
                let command = match inside.parent() {
                    Some(p) if p != Path::new("") => {
                        format!("{}/{COMMAND}", slash_path(p))
                    }
                    _ => COMMAND.to_owned(),
                };
                Ok(Pin {
                    install: format!("--path {command}"),
                    key: format!("path-${{{{ hashFiles('{core}/**', '{command}/**') }}}}"),
                    describe: format!("path {command}"),
                })
            }
            Err(_) => {
                let rev = head_commit(folder)?;
                Ok(Pin {
                    install: format!("--git {fallback_git} --rev {rev}"),
                    key: format!("git-{rev}"),
                    describe: format!("git {fallback_git} at {rev}"),
                })
            }
        },
    }
}

/// A path with `/` between its parts, as a workflow's shell (bash) and `hashFiles` read it.
pub(super) fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The commit the git checkout holding `folder` is at. Error: not in a git checkout.
pub(crate) fn head_commit(folder: &Path) -> Result<String, String> {
    let output = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(folder)
        .output()
        .map_err(|e| format!("cannot run git in {}: {e}", folder.display()))?;
    let rev = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || rev.is_empty() {
        return Err(format!(
            "copilot-eval-core at {} is in no git checkout, so no revision names it: depend on it from git with a `rev` (`init --ci github --core-git URL` rewrites the dependency)",
            folder.display()
        ));
    }
    Ok(rev)
}

/// The manifest `text` with its copilot-eval-core dependency (in `[dev-dependencies]` or
/// `[dependencies]`) replaced by `{ git = URL, rev = REV }` (`{ git = URL }` without a `rev`),
/// keeping its other keys (features, optional) and the file's formatting and comments. Error:
/// the text does not parse or has no such dependency.
pub(crate) fn rewrite_to_git(text: &str, url: &str, rev: Option<&str>) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not valid TOML: {e}"))?;
    let item = ["dev-dependencies", "dependencies"]
        .iter()
        .find_map(|section| {
            let table = doc.get_mut(section)?.as_table_like_mut()?;
            table.contains_key(CORE).then_some(*section)
        })
        .and_then(|section| doc[section].get_mut(CORE))
        .ok_or_else(|| format!("it has no {CORE} dependency to rewrite"))?;
    let mut table = match item.as_value() {
        Some(Value::InlineTable(t)) => t.clone(),
        _ => match item.as_table_like() {
            Some(t) => {
                let mut inline = toml_edit::InlineTable::new();
                for (k, v) in t.iter() {
                    if let Some(v) = v.as_value() {
                        inline.insert(k, v.clone());
                    }
                }
                inline
            }
            None => toml_edit::InlineTable::new(),
        },
    };
    for key in ["path", "version", "git", "rev", "tag", "branch"] {
        table.remove(key);
    }
    let mut fresh = toml_edit::InlineTable::new();
    fresh.insert("git", url.into());
    if let Some(rev) = rev {
        fresh.insert("rev", rev.into());
    }
    for (k, v) in table.iter() {
        fresh.insert(k, v.clone());
    }
    let decor = item.as_value().map(|v| v.decor().clone());
    let mut value = Value::InlineTable(fresh);
    if let Some(decor) = decor {
        *value.decor_mut() = decor;
    }
    *item = Item::Value(value);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rewrite keeps comments, other keys and the line's trailing comment.
    #[test]
    fn a_path_dependency_is_rewritten_to_git_keeping_the_file() {
        let text = "[package]\nname = \"x\" # mine\n\n[dev-dependencies]\n# the engine\ncopilot-eval-core = { path = \"../core\", features = [\"a\"] } # here\nserde = \"1\"\n";
        let out = rewrite_to_git(text, "https://g/r", Some("abc")).unwrap();
        assert_eq!(
            out,
            "[package]\nname = \"x\" # mine\n\n[dev-dependencies]\n# the engine\ncopilot-eval-core = { git = \"https://g/r\", rev = \"abc\", features = [\"a\"] } # here\nserde = \"1\"\n"
        );
        assert!(rewrite_to_git("[package]\n", "u", None).is_err());
    }

    /// The declared line is named with its number and text; a lock file's commit wins.
    #[test]
    fn the_declaration_names_its_line_and_the_locked_commit() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"x\"\n\n[dev-dependencies]\ncopilot-eval-core = { git = \"https://g/r\", branch = \"main\" }\n",
        )
        .unwrap();
        let found = declared(&manifest).unwrap();
        assert_eq!(found.line, 5);
        assert_eq!(
            found.text,
            "copilot-eval-core = { git = \"https://g/r\", branch = \"main\" }"
        );
        assert_eq!(
            found.source,
            CoreDependency::Git {
                url: "https://g/r".into(),
                rev: Some("main".into())
            }
        );
        std::fs::write(
            dir.path().join("Cargo.lock"),
            "version = 4\n\n[[package]]\nname = \"copilot-eval-core\"\nversion = \"0.3.0\"\nsource = \"git+https://g/r?branch=main#0123abcd\"\n",
        )
        .unwrap();
        let locked = declared(&manifest).unwrap();
        let pin = pin(&locked.source, dir.path(), "unused").unwrap();
        assert_eq!(pin.install, "--git https://g/r --rev 0123abcd");
        assert_eq!(pin.key, "git-0123abcd");
    }
}
