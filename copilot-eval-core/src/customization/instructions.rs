//! Instructions: the repository-wide `.github/copilot-instructions.md` (plain Markdown) and
//! path-specific `NAME.instructions.md` files.
//!
//! `NAME.instructions.md` front matter:
//!
//! | key | type | rule |
//! |---|---|---|
//! | `applyTo` | string, or list of strings | comma-separated glob patterns of the files the instructions apply to (a comma inside `{...}` belongs to the pattern: `**/*.{ts,tsx}` is one pattern, as the runtime reads it); each should be a valid glob (`apply-to-glob`) |
//! | `description` | string | |
//! | `name` | string | |
//! | `excludeAgent` | `code-review` or `coding-agent` | |
//!
//! `copilot-instructions.md` takes no front matter: any key in one is an `unknown-key` warning
//! (the block is not part of the instructions text). An empty text is a `body-empty` warning.
//!
//! The runtime (1.0.102) loads every instructions file, whatever its front matter: a problem in
//! one is a warning that says what the runtime does instead (with an unreadable front matter,
//! a wrong type or an unknown `excludeAgent` it takes no `applyTo` from the file; an invalid
//! glob it keeps as written). Only an unreadable file is an error.

use std::path::{Path, PathBuf};

use super::frontmatter::{self, Checker};
use super::{LoadError, Problem, read_text, settle};

/// The repository-wide instructions file name.
pub const REPOSITORY_FILE: &str = "copilot-instructions.md";
/// The file-name suffix of path-specific instructions.
pub const PATH_SUFFIX: &str = ".instructions.md";
/// The front-matter keys of path-specific instructions.
pub const KNOWN_KEYS: &[&str] = &["applyTo", "description", "name", "excludeAgent"];

/// Which kind of instructions file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionsKind {
    /// `copilot-instructions.md`: applies to every request in the repository.
    Repository,
    /// `NAME.instructions.md`: applies to the files matching `applyTo`.
    Path,
}

/// A validated instructions file.
#[derive(Debug, Clone, PartialEq)]
pub struct InstructionsFile {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// Which kind it is (from the file name).
    pub kind: InstructionsKind,
    /// The instructions: the text after any front matter, trimmed.
    pub text: String,
    /// `applyTo`: the patterns, split on the commas outside `{...}` and trimmed, or the list as
    /// given (path instructions; empty when not given or not readable).
    pub apply_to: Vec<String>,
    /// `description`, when given.
    pub description: Option<String>,
    /// `excludeAgent`, when given.
    pub exclude_agent: Option<String>,
    /// Warnings found while loading.
    pub warnings: Vec<Problem>,
}

impl InstructionsFile {
    /// Load and validate an instructions file; its kind comes from its name
    /// (`NAME.instructions.md` is path-specific, anything else repository-wide).
    ///
    /// Errors: [`LoadError`]: the file cannot be read or is not UTF-8. Every front-matter
    /// problem is a warning (the runtime loads such files too).
    pub fn load(path: impl AsRef<Path>) -> Result<InstructionsFile, LoadError> {
        let path = path.as_ref();
        let (file, problems) = check(path);
        let warnings = settle(problems)?;
        let mut file = file.expect("built when there is no error");
        file.warnings = warnings;
        Ok(file)
    }
}

/// The kind an instructions file name gives, or `None` for other files.
pub fn kind_of_file(path: &Path) -> Option<InstructionsKind> {
    let name = path.file_name()?.to_str()?;
    if name == REPOSITORY_FILE {
        Some(InstructionsKind::Repository)
    } else if name.ends_with(PATH_SUFFIX) && name.len() > PATH_SUFFIX.len() {
        Some(InstructionsKind::Path)
    } else {
        None
    }
}

/// Validate an instructions file; it is `Some` when no error was found.
pub(crate) fn check(path: &Path) -> (Option<InstructionsFile>, Vec<Problem>) {
    let (text, utf8) = match read_text(path) {
        Ok(read) => read,
        Err(problem) => return (None, vec![problem]),
    };
    let (file, mut problems) = check_text(path, &text);
    problems.splice(0..0, utf8);
    (file, problems)
}

fn check_text(path: &Path, text: &str) -> (Option<InstructionsFile>, Vec<Problem>) {
    let kind = kind_of_file(path).unwrap_or(InstructionsKind::Repository);
    let document = match frontmatter::parse(path, text) {
        Ok(document) => document,
        Err(problem) => {
            // The runtime still loads the file (as text, without `applyTo`).
            let mut problems = vec![problem];
            demote_all(&mut problems);
            let file = InstructionsFile {
                path: path.to_path_buf(),
                kind,
                text: text.trim_start_matches('\u{feff}').trim().to_owned(),
                apply_to: Vec::new(),
                description: None,
                exclude_agent: None,
                warnings: Vec::new(),
            };
            return (Some(file), problems);
        }
    };
    let fields = document.fields.clone().unwrap_or_default();
    let mut c = Checker::new(path, &fields);
    c.problems.extend(document.problems.iter().cloned());
    let (mut apply_to, mut description, mut exclude_agent) = (Vec::new(), None, None);
    match kind {
        InstructionsKind::Repository => {
            c.unknown_keys(&[], "copilot-instructions.md (it takes no front matter)");
        }
        InstructionsKind::Path => {
            let list = c.get("applyTo").is_some_and(|f| f.value.is_array());
            let globs = if list {
                c.string_list("applyTo", &[])
            } else {
                c.string("applyTo", false).map(|g| split_patterns(&g))
            };
            if let Some(globs) = globs {
                apply_to = globs;
                for glob in &apply_to {
                    if let Err(e) = globset::Glob::new(glob) {
                        c.error(
                            "applyTo",
                            "apply-to-glob",
                            format!("{glob:?} is not a valid glob pattern: {}; the runtime keeps it as written, and it may match no file", e.kind()),
                        );
                    }
                }
            }
            description = c.string("description", false);
            c.string("name", false);
            exclude_agent = c.string("excludeAgent", false);
            if let Some(agent) = &exclude_agent
                && !["code-review", "coding-agent"].contains(&agent.as_str())
            {
                c.error(
                    "excludeAgent",
                    "value",
                    format!("{agent:?} is not one of: code-review, coding-agent"),
                );
            }
            c.unknown_keys(KNOWN_KEYS, "instructions");
        }
    }
    let mut problems = std::mem::take(&mut c.problems);
    let unreadable = problems
        .iter()
        .any(|p| p.is_error() && p.rule != "apply-to-glob");
    if unreadable {
        // The runtime takes no `applyTo` from a front matter with such a problem.
        apply_to.clear();
    }
    demote_all(&mut problems);
    let body = document.body.trim().to_owned();
    if body.is_empty() {
        problems.push(
            Problem::warning(path, "body-empty", "has no instructions text")
                .at(Some(document.body_line))
                .field("body"),
        );
    }
    if problems.iter().any(Problem::is_error) {
        return (None, problems);
    }
    (
        Some(InstructionsFile {
            path: path.to_path_buf(),
            kind,
            text: body,
            apply_to,
            description,
            exclude_agent,
            warnings: Vec::new(),
        }),
        problems,
    )
}

/// Instructions problems are never errors: the runtime loads the file anyway (see the module
/// documentation).
fn demote_all(problems: &mut [Problem]) {
    frontmatter::demote(
        problems,
        |p| matches!(p.rule, "front-matter-yaml" | "front-matter-duplicate-key"),
        "the runtime still loads the file, reading what it can of the front matter",
    );
    frontmatter::demote(problems, |p| p.rule == "apply-to-glob", "");
    frontmatter::demote(
        problems,
        |p| !matches!(p.rule, "read" | "utf8"),
        "the runtime still loads the file but takes no `applyTo` from it",
    );
    for p in problems.iter_mut() {
        if let Some(m) = p.message.strip_suffix("; ") {
            p.message = m.to_owned();
        }
    }
}

/// `applyTo` patterns: split on the commas outside `{...}` (a brace group's commas belong to its
/// pattern, as the runtime reads them), trimmed, empty ones dropped.
pub fn split_patterns(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}
