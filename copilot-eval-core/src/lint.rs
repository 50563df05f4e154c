//! `cargo copilot-eval lint`: validate every skill, custom agent and instructions file found under
//! some paths, with the loaders of [`config`](crate::customization).
//!
//! What is checked, by file name (in folders, recursively; `.git`, `node_modules` and `target`
//! folders and symbolic links to folders are skipped):
//!
//! | found | checked as |
//! |---|---|
//! | a folder holding `SKILL.md` | a skill ([`Skill`](crate::customization::Skill): front matter, name rules, references), and its own files beside `SKILL.md`: `evals/evals.json` (`skill_evals`: its `evals-*` rules), `evals/triggers.json` (`skill_triggers`: its `triggers-*` rules) |
//! | `NAME.agent.md` | a custom agent ([`AgentFile`](crate::customization::AgentFile)) |
//! | `copilot-instructions.md` | repository instructions |
//! | `NAME.instructions.md` | path-specific instructions |
//! | a folder inside a folder named `skills` without `SKILL.md` | a `skill-md-missing` warning (the runtime ignores it) |
//!
//! A path given explicitly that does not exist is a `path-missing` error; a path under which
//! nothing was found is a `no-config` warning; a file given explicitly that is none of the above
//! is a `not-config-file` warning. Each file is checked once even when several paths reach it.
//!
//! The report lists every [`Problem`] (one line each when displayed) and a [`Summary`]. A file
//! is *accepted* when it has no error (warnings and notes allowed). A note (`agent-id`) states a
//! fact and asks for no change: `cargo copilot-eval lint` prints notes only with `--verbose`, and
//! they are not warnings (`--deny-warnings` ignores them).

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::customization::instructions::{self, InstructionsKind};
use crate::customization::skill::SKILL_FILE;
use crate::customization::{Problem, Severity, agent, skill};

mod skill_evals;
mod skill_triggers;
mod trigger_coverage;

/// Folder names never descended into.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", "target"];

/// A skill folder as the checks of its own files (beside `SKILL.md`) see it.
struct SkillFolder<'a> {
    /// The folder, as reached from the given path.
    directory: &'a Path,
    /// The skill's `name` when its `SKILL.md` loaded (no error), else `None`.
    name: Option<&'a str>,
    /// The skill's `description` when its `SKILL.md` loaded (no error), else `None`.
    description: Option<&'a str>,
}

/// A skill's own file, read and parsed ([`SkillFolder::read_own_file`]).
struct OwnFile<T> {
    /// The file, as reached from the given path.
    path: PathBuf,
    /// What the parser made of it.
    parsed: T,
    /// The problems found reading it (its encoding).
    problems: Vec<Problem>,
}

impl SkillFolder<'_> {
    /// Read and parse the skill's own file at `relative` (e.g. `evals/evals.json`) with
    /// `parse`: `Ok(None)` when the skill has no such file; `Ok(Some(file))` when it parsed; `Err(problems)` when it cannot be read,
    /// or does not parse (an error `invalid`, the parser's message followed by the note that
    /// the `attribute` refuses the file too).
    fn read_own_file<T, E: std::fmt::Display>(
        &self,
        relative: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
        invalid: &'static str,
        attribute: &str,
    ) -> Result<Option<OwnFile<T>>, Vec<Problem>> {
        let path = self.directory.join(relative);
        if !path.is_file() {
            return Ok(None);
        }
        let (text, utf8) = crate::customization::read_text(&path).map_err(|p| vec![p])?;
        let mut problems: Vec<Problem> = utf8.into_iter().collect();
        match parse(&text) {
            Ok(parsed) => Ok(Some(OwnFile {
                path,
                parsed,
                problems,
            })),
            Err(message) => {
                problems.push(Problem::error(
                    &path,
                    invalid,
                    format!("{message} (the `{attribute}` attribute refuses the file too)"),
                ));
                Err(problems)
            }
        }
    }
}

impl<T> OwnFile<T> {
    /// A warning `rule` per key the file's format does not define: the top-level `unknown`
    /// keys first (the format's keys of the `file`, e.g. `evals/evals.json`: `top_keys`), then
    /// each entry's: `(entry, field, keys)`,
    /// the entry as a message names it, its field path (`evals[0]`, `[0]`) and its unknown
    /// keys (what an entry is, `an eval entry`, and the keys it may have).
    fn unknown_keys<'k>(
        &self,
        rule: &'static str,
        file: &str,
        top_keys: &[&str],
        unknown: &[String],
        entries: impl Iterator<Item = (String, String, &'k [String])>,
        (entry_kind, entry_keys): (&str, &[&str]),
    ) -> Vec<Problem> {
        let path = &self.path;
        let top = unknown.iter().map(|key| {
            Problem::warning(
                path,
                rule,
                format!(
                    "is not a top-level key of {file} (known: {}); copilot-eval ignores it: remove it, or fix its spelling",
                    top_keys.join(", ")
                ),
            )
            .field(key.as_str())
        });
        let entries = entries.flat_map(|(entry, field, keys)| {
            keys.iter().map(move |key| {
                Problem::warning(
                    path,
                    rule,
                    format!(
                        "{entry}: `{key}` is not a key of {entry_kind} (known: {}); copilot-eval ignores it: remove it, or fix its spelling",
                        entry_keys.join(", ")
                    ),
                )
                .field(format!("{field}.{key}"))
            })
        });
        top.chain(entries).collect()
    }

    /// The error `rule` when the file's `skill_name` (`written`) is not the skill's `name`,
    /// which `what` describes for the message (`the skill's name "x" (...)`).
    fn skill_name(
        &self,
        rule: &'static str,
        written: Option<&String>,
        name: Option<&str>,
        what: impl Fn(&str) -> String,
    ) -> Option<Problem> {
        let (written, name) = (written?, name?);
        (written != name).then(|| {
            Problem::error(
                &self.path,
                rule,
                format!(
                    "{written:?} is not {}: write \"skill_name\": {name:?}, or remove `skill_name`",
                    what(name)
                ),
            )
            .field("skill_name")
        })
    }
}

/// The checks of the files a skill folder may hold beside `SKILL.md`, one module per file kind;
/// each reports nothing when its file is absent. Their problems count for the skill.
const SKILL_FILE_CHECKS: &[fn(&SkillFolder<'_>) -> Vec<Problem>] =
    &[skill_evals::check, skill_triggers::check];

/// What a checked file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A skill (its `SKILL.md`).
    Skill,
    /// A custom agent (`*.agent.md`).
    Agent,
    /// Repository instructions (`copilot-instructions.md`).
    RepositoryInstructions,
    /// Path-specific instructions (`*.instructions.md`).
    PathInstructions,
}

/// One checked file and how many problems it has.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Checked {
    /// The file (for a skill, its `SKILL.md`), as reached from the given path.
    pub path: PathBuf,
    /// What it was checked as.
    pub kind: FileKind,
    /// Errors found in it (or, for a skill, anywhere in its folder).
    pub errors: usize,
    /// Warnings found in it.
    pub warnings: usize,
    /// Notes found in it (facts that ask for no change, e.g. `agent-id`).
    pub notes: usize,
}

/// The result of a lint.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LintReport {
    /// Every checked file, in walk order (paths in the order given, folders sorted by name).
    pub checked: Vec<Checked>,
    /// Every problem, in walk order, each file's in the order found.
    pub problems: Vec<Problem>,
}

/// Counts of a [`LintReport`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files checked.
    pub files: usize,
    /// Of which skills.
    pub skills: usize,
    /// Of which custom agents.
    pub agents: usize,
    /// Of which instructions files (repository and path-specific).
    pub instructions: usize,
    /// Files with no error.
    pub accepted: usize,
    /// Files with at least one error.
    pub rejected: usize,
    /// Errors in total (files and paths).
    pub errors: usize,
    /// Warnings in total (notes not included).
    pub warnings: usize,
    /// Notes in total: facts that ask for no change (`agent-id`), shown with `lint --verbose`.
    pub notes: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        write!(
            f,
            "{} checked ({}, {}, {}): {} accepted, {} with errors; {}, {}",
            n(self.files, "file", "files"),
            n(self.skills, "skill", "skills"),
            n(self.agents, "agent", "agents"),
            n(self.instructions, "instruction", "instructions"),
            self.accepted,
            self.rejected,
            n(self.errors, "error", "errors"),
            n(self.warnings, "warning", "warnings"),
        )?;
        if self.notes > 0 {
            write!(f, ", {}", n(self.notes, "note", "notes"))?;
        }
        Ok(())
    }
}

impl LintReport {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let count = |kind: FileKind| self.checked.iter().filter(|c| c.kind == kind).count();
        let rejected = self.checked.iter().filter(|c| c.errors > 0).count();
        Summary {
            files: self.checked.len(),
            skills: count(FileKind::Skill),
            agents: count(FileKind::Agent),
            instructions: count(FileKind::RepositoryInstructions)
                + count(FileKind::PathInstructions),
            accepted: self.checked.len() - rejected,
            rejected,
            errors: self.problems.iter().filter(|p| p.is_error()).count(),
            warnings: self.count(Severity::Warning),
            notes: self.count(Severity::Note),
        }
    }

    fn count(&self, severity: Severity) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == severity)
            .count()
    }

    /// `true` when no error was found (warnings allowed).
    pub fn is_clean(&self) -> bool {
        !self.problems.iter().any(Problem::is_error)
    }

    fn record(&mut self, path: &Path, kind: FileKind, problems: Vec<Problem>) {
        self.checked.push(Checked {
            path: path.to_path_buf(),
            kind,
            errors: problems.iter().filter(|p| p.is_error()).count(),
            warnings: problems
                .iter()
                .filter(|p| p.severity == Severity::Warning)
                .count(),
            notes: problems
                .iter()
                .filter(|p| p.severity == Severity::Note)
                .count(),
        });
        self.problems.extend(problems);
    }
}

/// Lint every configuration file found under `paths` (files or folders).
///
/// ```
/// use copilot_eval_core::lint::lint;
///
/// let repo = tempfile::tempdir().unwrap();
/// let skill = repo.path().join(".github/skills/greet");
/// std::fs::create_dir_all(&skill).unwrap();
/// std::fs::write(
///     skill.join("SKILL.md"),
///     "---\nname: greet\ndescription: Greets the user by name.\n---\nSay hello.\n",
/// )
/// .unwrap();
/// let report = lint(&[repo.path().to_path_buf()]);
/// assert_eq!(report.summary().skills, 1);
/// assert!(report.is_clean(), "{:?}", report.problems);
/// ```
pub fn lint(paths: &[PathBuf]) -> LintReport {
    let mut report = LintReport::default();
    let mut seen = HashSet::new();
    for path in paths {
        let before = report.checked.len();
        if path.join(SKILL_FILE).is_file() {
            check_file(&path.join(SKILL_FILE), &mut report, &mut seen);
        } else if path.is_dir() {
            walk(path, &mut report, &mut seen);
            if report.checked.len() == before {
                report.problems.push(Problem::warning(
                    path,
                    "no-config",
                    "holds no skill (SKILL.md), custom agent (*.agent.md) or instructions file (copilot-instructions.md, *.instructions.md)",
                ));
            }
        } else if path.is_file() {
            if !check_file(path, &mut report, &mut seen) {
                report.problems.push(Problem::warning(
                    path,
                    "not-config-file",
                    "is not a SKILL.md, *.agent.md, copilot-instructions.md or *.instructions.md file; not checked",
                ));
            }
        } else {
            report
                .problems
                .push(Problem::error(path, "path-missing", "does not exist"));
        }
    }
    report
}

/// Check one file by its name; `false` when it is no configuration file.
fn check_file(path: &Path, report: &mut LintReport, seen: &mut HashSet<PathBuf>) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if name == SKILL_FILE {
        if let Some(owner) = owning_skill(path) {
            // A SKILL.md inside a skill folder is one of that skill's files: the runtime does
            // not load it as a skill, whichever path is linted.
            report.problems.push(Problem::warning(
                path,
                "not-config-file",
                format!(
                    "is a file of the skill in {}, not a skill of its own (the runtime does not load it); not checked",
                    owner.display()
                ),
            ));
            return true;
        }
        let directory = path.parent().unwrap_or(Path::new("."));
        let directory = if directory.as_os_str().is_empty() {
            Path::new(".")
        } else {
            directory
        };
        if seen.insert(key) {
            let (skill, mut problems) = skill::check(directory, path);
            let folder = SkillFolder {
                directory,
                name: skill.as_ref().map(|s| s.name.as_str()),
                description: skill.as_ref().map(|s| s.description.as_str()),
            };
            for check in SKILL_FILE_CHECKS {
                problems.extend(check(&folder));
            }
            report.record(path, FileKind::Skill, problems);
        }
        true
    } else if name.ends_with(agent::AGENT_SUFFIX) {
        if seen.insert(key) {
            let (_, problems) = agent::check(path);
            report.record(path, FileKind::Agent, problems);
        }
        true
    } else if let Some(kind) = instructions::kind_of_file(path) {
        if seen.insert(key) {
            let (_, problems) = instructions::check(path);
            let kind = match kind {
                InstructionsKind::Repository => FileKind::RepositoryInstructions,
                InstructionsKind::Path => FileKind::PathInstructions,
            };
            report.record(path, kind, problems);
        }
        true
    } else {
        false
    }
}

/// The skill folder holding `skill_md` as one of its files: the nearest folder above its own
/// (below any folder named `skills`) that holds a `SKILL.md`. Resolved through symbolic
/// links, so the answer does not depend on the path given.
fn owning_skill(skill_md: &Path) -> Option<PathBuf> {
    let real = skill_md.canonicalize().ok()?;
    let mut dir = real.parent()?.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "skills") {
            return None;
        }
        if d.join(SKILL_FILE).is_file() {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// Walk a folder in name order.
fn walk(dir: &Path, report: &mut LintReport, seen: &mut HashSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        report
            .problems
            .push(Problem::error(dir, "read", "cannot be read"));
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    let under_skills = dir.file_name().is_some_and(|n| n == "skills");
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let name = entry.file_name();
            if SKIPPED_DIRS.iter().any(|s| name == *s) {
                continue;
            }
            // A skill folder is checked as a whole; its files are the skill's resources.
            let skill_md = path.join(SKILL_FILE);
            if skill_md.is_file() {
                check_file(&skill_md, report, seen);
            } else {
                let before = report.checked.len();
                walk(&path, report, seen);
                // The runtime finds skills in subfolders too (`skills/group/name/SKILL.md`).
                let skills_below = report.checked[before..]
                    .iter()
                    .any(|c| c.kind == FileKind::Skill);
                if under_skills && !skills_below {
                    report.problems.push(Problem::warning(
                        &path,
                        "skill-md-missing",
                        format!("is a folder under skills/ without a {SKILL_FILE}, so it is no skill (the runtime ignores it)"),
                    ));
                }
            }
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            check_file(&path, report, seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, contents) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }
        dir
    }

    #[test]
    fn finds_checks_and_counts_every_kind() {
        let dir = tree(&[
            (
                "skills/good/SKILL.md",
                "---\nname: good\ndescription: Good.\n---\nBody.\n",
            ),
            // A SKILL.md inside a skill folder is one of its resources, not another skill.
            ("skills/good/parts/SKILL.md", "---\nname: other\n---\n"),
            (
                "skills/bad/SKILL.md",
                "---\nname: Bad\ndescription: Bad.\n---\nBody.\n",
            ),
            ("skills/notes/README.md", "no skill here"),
            (
                "agents/helper.agent.md",
                "---\ndescription: Helps.\nmode: agent\n---\nHelp.\n",
            ),
            ("agents/broken.agent.md", "---\nname: Broken\n---\nHelp.\n"),
            (".github/copilot-instructions.md", "Be kind.\n"),
            (
                ".github/instructions/rs.instructions.md",
                "---\napplyTo: '**/*.rs'\n---\nLint.\n",
            ),
            ("node_modules/x/SKILL.md", "ignored"),
            ("README.md", "# not configuration"),
        ]);
        let report = lint(&[dir.path().to_path_buf()]);
        let summary = report.summary();
        assert_eq!(
            summary,
            Summary {
                files: 6,
                skills: 2,
                agents: 2,
                instructions: 2,
                accepted: 5,
                rejected: 1,
                errors: 1,
                warnings: 4,
                notes: 1,
            },
            "{:#?}",
            report.problems
        );
        assert!(!report.is_clean());
        let lines: Vec<String> = report
            .problems
            .iter()
            .map(|p| {
                p.to_string()
                    .replace(&format!("{}/", dir.path().display()), "")
            })
            .collect();
        assert_eq!(
            lines,
            [
                "agents/broken.agent.md:2: note[agent-id] `name`: makes the agent's id \"Broken\", not the file name's \"broken\": the runtime lists the agent as \"Broken\" and the model must pass `agent_type: \"Broken\"` to `task` (a scripted or recorded dispatch too)",
                "agents/broken.agent.md: error[required] `description`: is required; add it to the front matter",
                "agents/helper.agent.md:3: warning[unknown-key] `mode`: is not a custom agent front-matter key (known: name, description, tools, model, mcp-servers, disable-model-invocation, infer, skills, user-invocable, target, argument-hint, metadata, handoffs, agents); the runtime ignores it",
                "skills/bad/SKILL.md:2: warning[skill-name-format] `name`: \"Bad\" should be lowercase ASCII letters, digits and single hyphens, not starting or ending with a hyphen (e.g. \"pdf-tools\"), as the Agent Skills format says; the runtime loads it as written",
                "skills/bad/SKILL.md:2: warning[skill-name-folder] `name`: \"Bad\" differs from the skill folder's name \"bad\"; the runtime loads the skill as \"Bad\" (the Agent Skills format wants them equal)",
                "skills/notes: warning[skill-md-missing]: is a folder under skills/ without a SKILL.md, so it is no skill (the runtime ignores it)",
            ]
        );
        assert_eq!(
            summary.to_string(),
            "6 files checked (2 skills, 2 agents, 2 instructions): 5 accepted, 1 with errors; 1 error, 4 warnings, 1 note"
        );
    }

    #[test]
    fn paths_are_files_skill_folders_or_missing() {
        let dir = tree(&[
            (
                "one/SKILL.md",
                "---\nname: one\ndescription: One.\n---\nBody.\n",
            ),
            ("one/references/a.agent.md", "a resource of the skill"),
            ("x.agent.md", "---\ndescription: X.\n---\nP.\n"),
            ("notes.txt", "text"),
            ("empty/README.md", "nothing"),
        ]);
        let p = |s: &str| dir.path().join(s);
        let report = lint(&[
            p("one"),
            p("x.agent.md"),
            p("x.agent.md"),
            p("notes.txt"),
            p("empty"),
            p("gone"),
        ]);
        assert_eq!(report.checked.len(), 2, "{:#?}", report.checked);
        let found: Vec<&str> = report.problems.iter().map(|p| p.rule).collect();
        assert_eq!(found, ["not-config-file", "no-config", "path-missing"]);
        assert!(!report.is_clean(), "a missing path is an error");
        let report = lint(&[p("one"), p("x.agent.md")]);
        assert!(report.is_clean() && report.problems.is_empty());
    }

    /// An agent's MCP server listing a tool whose `<server>-<tool>` name is over 64 characters:
    /// a warning naming the cut name the model will see (the pinned runtime's cut is checked
    /// through the runtime in tests/tests/mcp.rs).
    #[test]
    fn an_mcp_tool_name_over_64_characters_is_a_warning_naming_the_cut_name() {
        let long = "look_up_the_value_stored_under_a_key_in_the_fixture_store";
        let dir = tree(&[(
            "agents/db.agent.md",
            format!(
                "---\ndescription: Db.\nmcp-servers:\n  fixture:\n    command: node\n    tools: [\"lookup\", \"{long}\", \"*\"]\n---\nP.\n"
            )
            .as_str(),
        )]);
        let report = lint(&[dir.path().to_path_buf()]);
        let found: Vec<(&str, Option<&str>)> = report
            .problems
            .iter()
            .map(|p| (p.rule, p.field.as_deref()))
            .collect();
        assert_eq!(
            found,
            [("mcp-tool-name-cut", Some("mcp-servers.fixture.tools"))],
            "{:#?}",
            report.problems
        );
        let seen: String = format!("fixture-{long}").chars().take(64).collect();
        assert!(
            report.problems[0]
                .message
                .contains(&format!("the model sees it as `{seen}`")),
            "{}",
            report.problems[0]
        );
        assert!(report.is_clean(), "a warning, not an error");
    }
}
