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
//! References: every relative Markdown link or image in the body (`[text](references/a.md)`; not
//! in HTML comments, code spans of any backtick count, fenced or indented code) should stay
//! inside the skill folder (`reference-escapes`) and name an existing file
//! (`reference-missing`); every symbolic link in the folder should resolve inside it. Both are
//! warnings: the runtime (1.0.102) loads such skills.
//!
//! The runtime's own rules are errors (it refuses the skill): `name` and `description` texts,
//! `name` at most 64 and `description` at most 1,024 UTF-16 code units, `name` starting with an
//! ASCII letter or digit and holding only ASCII letters, digits, `-`, `_`, `.`, `:` and spaces
//! (`skill-name-chars`), `allowed-tools`, `argument-hint`, `user-invocable` and
//! `disable-model-invocation` of their types. The Agent Skills format's stricter rules are
//! warnings saying what the runtime does: lowercase-and-hyphens names (`skill-name-format`),
//! `name` equal to the folder's (`skill-name-folder`; the runtime uses `name`), a missing
//! `name` (the runtime uses the folder's name), a missing `description` (it uses the body's
//! text, [`body_description`]), an empty one, `compatibility` over 500 units.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use github_copilot_sdk::IndexMap;

use super::frontmatter::{self, Checker};
use super::{LoadError, Problem, check_file, settle};

/// A skill's own eval file, `evals/evals.json` (the skill-creator format), read into plain data.
///
/// This file is compiled twice: as `copilot_eval_core::customization::skill::evals_file` (for
/// `lint` and the harness) and, by `include!`, inside the `#[copilot_eval]` attribute, which reads
/// the file at compile time to generate one eval test per entry. So it uses only `std` and
/// `serde_json`, and its errors are plain text: the attribute turns them into spanned compile
/// errors, `lint` into findings.
///
/// The format (every other key is kept in `unknown`, which `lint` reports):
///
/// ```json
/// {
///   "skill_name": "release-notes",
///   "evals": [
///     {
///       "id": 1,
///       "prompt": "Write release notes for the changes in CHANGES.txt.",
///       "expected_output": "RELEASE_NOTES.md listing the two changes",
///       "files": ["evals/files/CHANGES.txt"],
///       "expectations": ["RELEASE_NOTES.md exists", "it names both changes"]
///     }
///   ]
/// }
/// ```
///
/// | key | type | rule |
/// |---|---|---|
/// | `skill_name` | string | optional; equal to the skill's `name` (checked by `lint`) |
/// | `evals` | array of objects | required, at least one entry |
/// | `evals[].id` | non-negative integer, or a string of letters, digits, `-` and `_` | required, unique in the file |
/// | `evals[].prompt` | string | required, not blank |
/// | `evals[].expected_output` | string | optional |
/// | `evals[].files` | array of strings | optional; paths relative to the skill folder, each an existing file inside it |
/// | `evals[].expectations` | array of strings | optional; each not blank |
pub mod evals_file;
mod links;
/// A skill's trigger set, `evals/triggers.json` inside the skill folder: prompts that should
/// and should not make the model invoke the skill. `#[copilot_eval(skill_triggers = "..")]`
/// turns each query into an eval test (`function::invoke_<n>_<slug>` or
/// `function::dormant_<n>_<slug>`) at compile time, and `cargo copilot-eval lint` checks it.
///
/// Two forms are read: the array form of the skill-creator's trigger sets
///
/// ```json
/// [
///   {"query": "Write the changelog for 1.3.0", "should_trigger": true},
///   {"query": "What is the weather in Oslo?", "should_trigger": false}
/// ]
/// ```
///
/// and the object form `{"skill_name": "changelog", "evals": [{"prompt": "...",
/// "should_trigger": true}]}`, whose entries give `prompt` (or `query`).
///
/// | key | type | rule |
/// |---|---|---|
/// | `skill_name` | string | optional (object form); equal to the skill's `name` |
/// | `evals` | array of objects | required in the object form; the array form is the list itself; at least one entry |
/// | `[].query` or `[].prompt` | string | required (one of them), not blank |
/// | `[].should_trigger` | `true` or `false` | required; the same query may not be listed with both |
pub mod triggers_file;
use links::check_links;

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

/// The longest `description` the runtime loads, in UTF-16 code units.
pub const MAX_DESCRIPTION: usize = 1024;

/// The longest `name` the runtime loads, in UTF-16 code units.
pub const MAX_NAME: usize = 64;

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
    ///
    /// ```
    /// use copilot_eval_core::customization::Skill;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let folder = dir.path().join("greet");
    /// std::fs::create_dir(&folder).unwrap();
    /// std::fs::write(
    ///     folder.join("SKILL.md"),
    ///     "---\nname: greet\ndescription: Greets the user.\n---\nSay hello.\n",
    /// )
    /// .unwrap();
    /// let skill = Skill::load(&folder).unwrap();
    /// assert_eq!((skill.name.as_str(), skill.description.as_str()), ("greet", "Greets the user."));
    ///
    /// // A folder without SKILL.md is refused with the rule's name.
    /// let empty = dir.path().join("empty");
    /// std::fs::create_dir(&empty).unwrap();
    /// assert!(Skill::load(&empty).unwrap_err().to_string().contains("skill-md-missing"));
    /// ```
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
    check_file(file, |text| check_text(directory, file, text))
}

fn check_text(directory: &Path, file: &Path, text: &str) -> (Option<Skill>, Vec<Problem>) {
    let (mut c, document) = match Checker::of_text(file, text, "`name` and `description`") {
        Ok(read) => read,
        Err(problem) => return (None, vec![problem]),
    };
    let folder = folder_name(directory);
    let name_present = c.get("name").is_some();
    let mut name = c.string("name", true);
    if let Some(name) = &name {
        check_name(&mut c, name, folder.as_deref());
    } else if !name_present {
        // The runtime names a skill without `name` after its folder.
        name = folder.clone();
    }
    let description = description(&mut c, &document.body);
    let blank_description = c
        .get("description")
        .is_some_and(|f| f.value.as_str().is_some_and(|d| d.trim().is_empty()));
    let optional = OptionalKeys::read(&mut c);
    c.unknown_keys(KNOWN_KEYS, "SKILL.md");
    let mut problems = c.take_problems();
    demote_what_loads(&mut problems, blank_description, folder.as_deref());
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
    let files = files_and_links(directory, file, &document, &mut problems);

    let has_error = problems.iter().any(Problem::is_error);
    let skill = match (name, description) {
        (Some(name), Some(description)) if !has_error => Some(Skill {
            name,
            description,
            directory: directory.to_path_buf(),
            path: file.to_path_buf(),
            license: optional.license,
            compatibility: optional.compatibility,
            metadata: optional.metadata,
            allowed_tools: optional.allowed_tools,
            argument_hint: optional.argument_hint,
            user_invocable: optional.user_invocable,
            disable_model_invocation: optional.disable_model_invocation,
            body,
            files,
            warnings: Vec::new(),
        }),
        _ => None,
    };
    (skill, problems)
}

/// The optional keys of a `SKILL.md` front matter, each as [`Skill`] keeps it.
struct OptionalKeys {
    license: Option<String>,
    compatibility: Option<String>,
    metadata: IndexMap<String, String>,
    allowed_tools: Vec<String>,
    argument_hint: Option<String>,
    user_invocable: Option<bool>,
    disable_model_invocation: Option<bool>,
}

impl OptionalKeys {
    /// Read and check them (their problems go to `c`): a `compatibility` longer than the
    /// format allows, and a skill the model cannot load (`disable-model-invocation: true`).
    fn read(c: &mut Checker<'_>) -> Self {
        let license = c.string("license", false);
        let compatibility = c.string("compatibility", false);
        if let Some(s) = &compatibility
            && frontmatter::utf16_len(s) > 500
        {
            let n = frontmatter::utf16_len(s);
            c.error(
                "compatibility",
                "compatibility-length",
                format!("has {n} UTF-16 code units; the Agent Skills format allows at most 500"),
            );
        }
        let metadata = c.string_map("metadata").unwrap_or_default();
        let allowed_tools = c.string_list("allowed-tools", &[' ']).unwrap_or_default();
        let argument_hint = c.string("argument-hint", false);
        let user_invocable = c.boolean("user-invocable");
        let disable_model_invocation = c.boolean("disable-model-invocation");
        if disable_model_invocation == Some(true) {
            c.warn(
                "disable-model-invocation",
                "not-model-invocable",
                "is true: the runtime leaves the skill out of the model's tool list, so the model cannot load it (a `skill` call for it fails \"Skill not found\"); only a user's slash command can",
            );
        }
        Self {
            license,
            compatibility,
            metadata,
            allowed_tools,
            argument_hint,
            user_invocable,
            disable_model_invocation,
        }
    }
}

/// The skill's description as the runtime loads it: `description` trimmed, a blank one empty,
/// and without the key the body's text ([`body_description`]); an error when it is longer than
/// the runtime accepts.
fn description(c: &mut Checker<'_>, body: &str) -> Option<String> {
    let description_present = c.get("description").is_some();
    let blank_description = c
        .get("description")
        .is_some_and(|f| f.value.as_str().is_some_and(|d| d.trim().is_empty()));
    let mut description = c.string("description", true);
    if let Some(d) = &description
        && frontmatter::utf16_len(d) > MAX_DESCRIPTION
    {
        let n = frontmatter::utf16_len(d);
        c.error(
            "description",
            "description-length",
            format!("has {n} UTF-16 code units (characters outside the Basic Multilingual Plane, such as emoji, count 2); the runtime refuses more than {MAX_DESCRIPTION}"),
        );
    }
    // The runtime trims the description (a folded `>` value ends with a line break).
    description = description.map(|d| d.trim().to_owned());
    if !description_present {
        description = Some(body_description(body));
    } else if blank_description {
        description = Some(String::new());
    }
    description
}

/// Errors the pinned runtime (1.0.102) loads the skill despite, made warnings that say so (see
/// the conformance suite); `folder` is the skill folder's name.
fn demote_what_loads(problems: &mut [Problem], blank_description: bool, folder: Option<&str>) {
    let field_is =
        |p: &Problem, keys: &[&str]| p.field.as_deref().is_some_and(|f| keys.contains(&f));
    frontmatter::demote(
        problems,
        |p| p.rule == "front-matter-not-mapping",
        "the runtime ignores such a front matter and loads the skill with its folder's name and the body's text as description",
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "required" && field_is(p, &["name"]),
        &format!(
            "the runtime loads the skill under its folder's name {:?}",
            folder.unwrap_or_default()
        ),
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "required" && field_is(p, &["description"]),
        "the runtime loads the skill with the body's text as its description, which the model reads to decide when to use it",
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "empty" && blank_description && field_is(p, &["description"]),
        "the runtime loads the skill with an empty description, so the model has nothing to decide by",
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "type" && field_is(p, &["license", "compatibility", "metadata"]),
        "the runtime ignores the value and loads the skill",
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "compatibility-length",
        "the runtime loads the skill anyway",
    );
}

/// The skill folder's files (relative paths), with the problems of its walk and of the links of
/// `SKILL.md` and of its other Markdown files (none may lead out of the folder).
fn files_and_links(
    directory: &Path,
    file: &Path,
    document: &frontmatter::Document,
    problems: &mut Vec<Problem>,
) -> Vec<String> {
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
    files
}

/// The name of the skill folder (resolved through symbolic links, so the verdict does not depend
/// on the path the folder was reached by).
fn folder_name(directory: &Path) -> Option<String> {
    directory
        .canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| directory.file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// The description the runtime gives a skill without `description`: the body's text lines
/// (headings and blank lines left out) joined by spaces (measured with runtime 1.0.102).
pub fn body_description(body: &str) -> String {
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the runtime accepts `name` as a skill name: it starts with an ASCII letter or digit
/// and holds only ASCII letters, digits, `-`, `_`, `.`, `:` and spaces.
pub fn runtime_accepts_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | ' '))
}

/// The name rules: the runtime's (errors: `skill-name-chars`, `skill-name-length`) and the
/// Agent Skills format's stricter ones, which the runtime does not enforce (warnings:
/// `skill-name-format`, `skill-name-folder`).
fn check_name(c: &mut Checker<'_>, name: &str, folder: Option<&str>) {
    let count = frontmatter::utf16_len(name);
    if count > MAX_NAME {
        c.error(
            "name",
            "skill-name-length",
            format!("has {count} UTF-16 code units; the runtime refuses more than {MAX_NAME}"),
        );
    }
    if !runtime_accepts_name(name) {
        c.error(
            "name",
            "skill-name-chars",
            format!(
                "{name:?} must start with an ASCII letter or digit and hold only ASCII letters, digits, `-`, `_`, `.`, `:` and spaces; the runtime refuses it"
            ),
        );
    } else if !name
        .chars()
        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
        || name.starts_with('-')
        || name.ends_with('-')
        || name.contains("--")
    {
        c.warn(
            "name",
            "skill-name-format",
            format!(
                "{name:?} should be lowercase ASCII letters, digits and single hyphens, not starting or ending with a hyphen (e.g. \"pdf-tools\"), as the Agent Skills format says; the runtime loads it as written"
            ),
        );
    }
    if let Some(folder) = folder
        && folder != name
    {
        c.warn(
            "name",
            "skill-name-folder",
            format!("{name:?} differs from the skill folder's name {folder:?}; the runtime loads the skill as {name:?} (the Agent Skills format wants them equal)"),
        );
    }
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
                    Ok(real) if !real.starts_with(&root) => problems.push(Problem::warning(
                        &path,
                        "reference-escapes",
                        format!(
                            "is a symbolic link to {}, outside the skill folder; a skill should only hold files inside its folder; the runtime loads the skill anyway, but the file is not there once the skill is copied elsewhere",
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
