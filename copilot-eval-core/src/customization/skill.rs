//! Skills in the Agent Skills format: a folder holding `SKILL.md` (front matter + instructions)
//! and any files the instructions refer to.
//!
//! `SKILL.md` front matter:
//!
//! | key | type | rule |
//! |---|---|---|
//! | `name` | string, required | 1-64 characters: lowercase ASCII letters, digits and hyphens, no leading, trailing or doubled hyphen; equal to the folder's name |
//! | `description` | string, required | 1-1024 characters: what the skill does and when to use it |
//! | `license` | string | |
//! | `compatibility` | string | at most 500 characters |
//! | `metadata` | mapping of strings to strings | |
//! | `allowed-tools` | list of strings, or one space-separated string | |
//! | `argument-hint` | string | shown when the user invokes the skill |
//! | `user-invocable` | boolean | whether users can invoke it as a slash command |
//! | `disable-model-invocation` | boolean | whether the model may not invoke it on its own |
//!
//! Other keys are `unknown-key` warnings. The body (the instructions) should not be empty.
//! References: every relative Markdown link or image in the body (`[text](references/a.md)`,
//! outside code blocks) must stay inside the skill folder (`reference-escapes`, an error: a skill
//! may not reach files outside its folder) and should name an existing file
//! (`reference-missing`, a warning); every symbolic link in the folder must resolve inside it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use github_copilot_sdk::IndexMap;

use super::frontmatter::{self, Checker};
use super::{LoadError, Problem, read_text, settle};

/// The file name of a skill's definition.
pub const SKILL_FILE: &str = "SKILL.md";

/// The front-matter keys of `SKILL.md`.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "argument-hint",
    "user-invocable",
    "disable-model-invocation",
];

/// Most entries walked in one skill folder (a guard against pointing at a huge tree).
const MAX_ENTRIES: usize = 10_000;

/// A validated skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// `name`: the skill's id (equal to its folder's name).
    pub name: String,
    /// `description`.
    pub description: String,
    /// The skill folder, as given (joined with `SKILL.md` it is [`path`](Self::path)).
    pub directory: PathBuf,
    /// The `SKILL.md` file.
    pub path: PathBuf,
    /// `license`, when given.
    pub license: Option<String>,
    /// `compatibility`, when given.
    pub compatibility: Option<String>,
    /// `metadata` (a non-text value is kept as its JSON text, with a warning).
    pub metadata: IndexMap<String, String>,
    /// `allowed-tools` (empty when not given).
    pub allowed_tools: Vec<String>,
    /// `argument-hint`, when given.
    pub argument_hint: Option<String>,
    /// `user-invocable`, when given.
    pub user_invocable: Option<bool>,
    /// `disable-model-invocation`, when given.
    pub disable_model_invocation: Option<bool>,
    /// The instructions: the body after the front matter, trimmed.
    pub body: String,
    /// Every other file in the skill folder, relative to it, `/`-separated, sorted.
    pub files: Vec<String>,
    /// Warnings found while loading.
    pub warnings: Vec<crate::customization::Problem>,
}

impl Skill {
    /// Load and validate a skill from its folder, or from its `SKILL.md` path.
    ///
    /// Errors: [`LoadError`] with every error found (and the warnings), e.g. `skill-md-missing`
    /// when the folder has no `SKILL.md`, `required`, `skill-name-folder`,
    /// `reference-escapes`; see the [rules](crate::customization).
    pub fn load(path: impl AsRef<Path>) -> Result<Skill, LoadError> {
        let path = path.as_ref();
        let (directory, file) =
            if path.file_name().is_some_and(|n| n == SKILL_FILE) && path.is_file() {
                (
                    path.parent().map(Path::to_path_buf).unwrap_or_default(),
                    path.to_path_buf(),
                )
            } else {
                (path.to_path_buf(), path.join(SKILL_FILE))
            };
        if !directory.is_dir() {
            return Err(LoadError {
                problems: vec![Problem::error(
                    path,
                    "path-missing",
                    "is not an existing skill folder",
                )],
            });
        }
        if !file.is_file() {
            return Err(LoadError {
                problems: vec![Problem::error(
                    &directory,
                    "skill-md-missing",
                    format!(
                        "has no {SKILL_FILE}; a skill folder holds a {SKILL_FILE} with `name` and `description` front matter"
                    ),
                )],
            });
        }
        let (skill, problems) = check(&directory, &file);
        let warnings = settle(problems)?;
        let mut skill = skill.expect("a skill is built when there is no error");
        skill.warnings = warnings;
        Ok(skill)
    }
}

/// Validate the skill at `directory`/`file`; the skill is `Some` when no error was found.
pub(crate) fn check(directory: &Path, file: &Path) -> (Option<Skill>, Vec<Problem>) {
    let text = match read_text(file) {
        Ok(text) => text,
        Err(problem) => return (None, vec![problem]),
    };
    let document = match frontmatter::parse(file, &text) {
        Ok(document) => document,
        Err(problem) => return (None, vec![problem]),
    };
    let Some(fields) = &document.fields else {
        return (
            None,
            vec![
                Problem::error(
                    file,
                    "front-matter-missing",
                    "must start with a `---` front matter block holding `name` and `description`",
                )
                .at(Some(1)),
            ],
        );
    };
    let mut c = Checker::new(file, fields);
    let name = c.string("name", true);
    if let Some(name) = &name {
        check_name(&mut c, name, directory);
    }
    let description = c.string("description", true);
    if let Some(d) = &description
        && d.chars().count() > 1024
    {
        let n = d.chars().count();
        c.error(
            "description",
            "description-length",
            format!("has {n} characters; at most 1024 are allowed"),
        );
    }
    let license = c.string("license", false);
    let compatibility = c.string("compatibility", false);
    if let Some(s) = &compatibility
        && s.chars().count() > 500
    {
        let n = s.chars().count();
        c.error(
            "compatibility",
            "compatibility-length",
            format!("has {n} characters; at most 500 are allowed"),
        );
    }
    let metadata = c.string_map("metadata").unwrap_or_default();
    let allowed_tools = c.string_list("allowed-tools", &[' ']).unwrap_or_default();
    let argument_hint = c.string("argument-hint", false);
    let user_invocable = c.boolean("user-invocable");
    let disable_model_invocation = c.boolean("disable-model-invocation");
    c.unknown_keys(KNOWN_KEYS, "SKILL.md");
    let mut problems = std::mem::take(&mut c.problems);

    let body = document.body.trim().to_owned();
    if body.is_empty() {
        problems.push(
            Problem::warning(
                file,
                "body-empty",
                "has no instructions after the front matter; the skill gives the model nothing to follow",
            )
            .at(Some(document.body_line))
            .field("body"),
        );
    }
    problems.extend(check_links(
        directory,
        file,
        &document.body,
        document.body_line,
        true,
    ));
    let (files, walk_problems) = walk(directory);
    problems.extend(walk_problems);
    // The skill's other Markdown files may not lead out of its folder either.
    for relative in files.iter().filter(|f| f.ends_with(".md")) {
        let path = directory.join(relative);
        if let Ok(text) = std::fs::read_to_string(&path) {
            problems.extend(check_links(directory, &path, &text, 1, false));
        }
    }

    let has_error = problems.iter().any(Problem::is_error);
    let skill = match (name, description) {
        (Some(name), Some(description)) if !has_error => Some(Skill {
            name,
            description,
            directory: directory.to_path_buf(),
            path: file.to_path_buf(),
            license,
            compatibility,
            metadata,
            allowed_tools,
            argument_hint,
            user_invocable,
            disable_model_invocation,
            body,
            files,
            warnings: Vec::new(),
        }),
        _ => None,
    };
    (skill, problems)
}

/// The name rules of the Agent Skills format.
fn check_name(c: &mut Checker<'_>, name: &str, directory: &Path) {
    let count = name.chars().count();
    if count > 64 {
        c.error(
            "name",
            "skill-name-length",
            format!("has {count} characters; at most 64 are allowed"),
        );
    }
    let charset_ok = name
        .chars()
        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
    if !charset_ok || name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        c.error(
            "name",
            "skill-name-format",
            format!(
                "{name:?} must be lowercase ASCII letters, digits and single hyphens, not starting or ending with a hyphen (e.g. \"pdf-tools\")"
            ),
        );
    }
    let folder = directory
        .canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| directory.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    if let Some(folder) = folder
        && folder != name
    {
        c.error(
            "name",
            "skill-name-folder",
            format!("{name:?} must equal the skill folder's name {folder:?}; rename one of them"),
        );
    }
}

/// Relative links in `body` (of `file`, starting on `body_line`): they must stay inside the skill
/// folder (error) and, with `check_missing`, name existing files (warning). Targets are relative
/// to the folder of `file`.
fn check_links(
    directory: &Path,
    file: &Path,
    body: &str,
    body_line: u32,
    check_missing: bool,
) -> Vec<Problem> {
    let base = file
        .parent()
        .and_then(|p| p.strip_prefix(directory).ok())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut problems = Vec::new();
    let root = directory.canonicalize().ok();
    let mut fence: Option<&str> = None;
    for (i, line) in body.lines().enumerate() {
        let trimmed = line.trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                fence = match fence {
                    None => Some(marker),
                    Some(open) if open == marker => None,
                    other => other,
                };
            }
        }
        if fence.is_some() || trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            continue;
        }
        let line_no = body_line + i as u32;
        let mut targets = link_targets(line);
        // A link reference definition: `[id]: path "title"`.
        if let Some(rest) = trimmed.strip_prefix('[')
            && let Some((label, target)) = rest.split_once("]:")
            && !label.is_empty()
            && let Some(target) = target.split_whitespace().next()
        {
            targets.push(target.trim_matches(['<', '>']).to_owned());
        }
        for target in targets {
            let Some(relative) = local_target(&target) else {
                continue;
            };
            let at = |p: Problem| p.at(Some(line_no)).field("body");
            if relative.starts_with('/') || Path::new(&relative).is_absolute() {
                problems.push(at(Problem::error(
                    file,
                    "reference-escapes",
                    format!("links to the absolute path {relative:?}; a skill may only refer to files inside its folder (use a path relative to it)"),
                )));
                continue;
            }
            let Some(normal) = normalize(&base.join(&relative)) else {
                problems.push(at(Problem::error(
                    file,
                    "reference-escapes",
                    format!("links to {relative:?}, which leaves the skill folder; a skill may only refer to files inside its folder"),
                )));
                continue;
            };
            let full = directory.join(&normal);
            match (full.canonicalize(), &root) {
                (Ok(real), Some(root)) if !real.starts_with(root) => {
                    problems.push(at(Problem::error(
                        file,
                        "reference-escapes",
                        format!("links to {relative:?}, which resolves to {} outside the skill folder (through a symbolic link)", real.display()),
                    )));
                }
                (Ok(_), _) => {}
                (Err(_), _) if !check_missing => {}
                (Err(_), _) => problems.push(at(Problem::warning(
                    file,
                    "reference-missing",
                    format!("links to {relative:?}, which does not exist in the skill folder"),
                ))),
            }
        }
    }
    problems
}

/// Targets of inline Markdown links and images on one line: `[text](target "title")`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(pos) = line[i..].find("](") {
        let start = i + pos + 2;
        // Skip inline code spans: a link inside backticks is an example, not a reference.
        let ticks = line[..i + pos].matches('`').count();
        let mut depth = 0usize;
        let mut end = None;
        for (j, &b) in bytes.iter().enumerate().skip(start) {
            match b {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                b')' => depth -= 1,
                _ => {}
            }
        }
        let Some(end) = end else { break };
        if ticks.is_multiple_of(2) {
            let mut target = line[start..end].trim();
            if let Some(inner) = target.strip_prefix('<').and_then(|t| t.split_once('>')) {
                target = inner.0;
            } else if let Some((path, _title)) = target.split_once([' ', '\t']) {
                target = path;
            }
            out.push(target.to_owned());
        }
        i = end + 1;
    }
    out
}

/// The local path of a link target, or `None` for URLs, anchors and empty targets.
fn local_target(target: &str) -> Option<String> {
    let target = target.split(['#', '?']).next().unwrap_or_default().trim();
    if target.is_empty() {
        return None;
    }
    // A URL scheme (`https:`, `mailto:`), but not a Windows drive letter.
    if let Some((scheme, _)) = target.split_once(':')
        && scheme.len() > 1
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    Some(target.replace("%20", " "))
}

/// Lexically normalise a relative path; `None` when `..` climbs above its start.
pub(crate) fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.iter().collect())
}

/// Every file in the skill folder (relative, sorted), and symbolic links that leave it.
fn walk(directory: &Path) -> (Vec<String>, Vec<Problem>) {
    let mut files = BTreeSet::new();
    let mut problems = Vec::new();
    let Ok(root) = directory.canonicalize() else {
        return (Vec::new(), problems);
    };
    let mut stack = vec![directory.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return (files.into_iter().collect(), problems);
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                match path.canonicalize() {
                    Ok(real) if !real.starts_with(&root) => problems.push(Problem::error(
                        &path,
                        "reference-escapes",
                        format!(
                            "is a symbolic link to {}, outside the skill folder; a skill may only hold files inside its folder",
                            real.display()
                        ),
                    )),
                    Ok(real) if real.is_file() => {
                        files.insert(relative(directory, &path));
                    }
                    // Links to folders inside the skill are not followed (no cycles).
                    Ok(_) => {}
                    Err(_) => problems.push(Problem::warning(
                        &path,
                        "reference-missing",
                        "is a symbolic link to nothing (its target does not exist)",
                    )),
                }
            } else if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && path
                    .file_name()
                    .is_none_or(|n| n != SKILL_FILE || dir != directory)
            {
                files.insert(relative(directory, &path));
            }
        }
    }
    (files.into_iter().collect(), problems)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The skills under requested skill directories, each fully validated.
///
/// Each entry is either a skill folder (it holds `SKILL.md`) or a folder of skill folders (its
/// immediate subfolders holding `SKILL.md`; other subfolders are ignored, as the runtime
/// ignores them). Returns every skill with its warnings, in order (entries in the given order,
/// subfolders by name).
///
/// Errors: [`LoadError`] with every error: `path-missing` (an entry is not a directory),
/// `skill-md-missing` (an entry holds no skill at all), any error of any skill, and
/// `skill-name-duplicate` (two skills with one name).
pub fn requested_skills(directories: &[PathBuf]) -> Result<Vec<Skill>, LoadError> {
    let mut problems = Vec::new();
    let mut skills: Vec<Skill> = Vec::new();
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    for directory in directories {
        if !directory.is_dir() {
            problems.push(Problem::error(
                directory,
                "path-missing",
                "is not an existing directory (skill_directories entries are skill folders or folders of them)",
            ));
            continue;
        }
        let candidates: Vec<PathBuf> = if directory.join(SKILL_FILE).is_file() {
            vec![directory.clone()]
        } else {
            let mut children: Vec<PathBuf> = std::fs::read_dir(directory)
                .map(|entries| {
                    entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.join(SKILL_FILE).is_file())
                        .collect()
                })
                .unwrap_or_default();
            children.sort();
            children
        };
        if candidates.is_empty() {
            problems.push(Problem::error(
                directory,
                "skill-md-missing",
                format!("holds no skill: neither it nor any of its immediate subfolders has a {SKILL_FILE}"),
            ));
            continue;
        }
        for candidate in candidates {
            let file = candidate.join(SKILL_FILE);
            let (skill, mut found) = check(&candidate, &file);
            let warnings: Vec<Problem> = found.iter().filter(|p| !p.is_error()).cloned().collect();
            if let Some(mut skill) = skill {
                if let Some(first) = by_name.get(&skill.name) {
                    found.push(
                        Problem::error(
                            &file,
                            "skill-name-duplicate",
                            format!(
                                "defines the skill {:?}, which {} already defines; skill names must be unique",
                                skill.name,
                                first.display()
                            ),
                        )
                        .field("name"),
                    );
                } else {
                    by_name.insert(skill.name.clone(), file.clone());
                    skill.warnings = warnings;
                    skills.push(skill);
                }
            }
            problems.extend(found);
        }
    }
    match LoadError::from_problems(problems) {
        Some(error) => Err(error),
        None => Ok(skills),
    }
}
