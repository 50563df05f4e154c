//! Loading Copilot configuration files: skills (`SKILL.md`), custom agents (`*.agent.md`),
//! repository instructions (`.github/copilot-instructions.md`, `*.instructions.md`), and a
//! repository's whole Copilot configuration folder.
//!
//! Every loader validates what it reads and reports **every** problem it finds, not only the
//! first. A [`Problem`] names the file, the line when it is known (1-based, in the file as
//! written, front matter included), the front-matter field (`body` for the Markdown after the
//! front matter, `None` for the file as a whole), a stable rule id (the `rule` column below) and a message that says what is wrong and
//! what is allowed. Problems are errors, warnings or notes ([`Severity`]): an error makes the
//! loader return [`LoadError`]; warnings and notes travel with the loaded value (`warnings`
//! fields) and never fail a load. A note states a fact and asks for no change (`lint` shows it
//! only with `--verbose`).
//!
//! Front matter is the YAML mapping between a first line `---` and the next line `---`, read with
//! `serde-saphyr` (YAML 1.2; a repeated key is its own problem; YAML errors carry the line and
//! say how to fix the common cases).
//!
//! | module | reads | produces |
//! |---|---|---|
//! | [`skill`] | a skill folder holding `SKILL.md` (Agent Skills format) | [`Skill`] |
//! | [`agent`] | a `NAME.agent.md` custom agent | [`AgentFile`] holding the SDK [`CustomAgentConfig`](crate::sdk::CustomAgentConfig) |
//! | [`instructions`] | `copilot-instructions.md` and `NAME.instructions.md` | [`InstructionsFile`] |
//! | [`repo`] | a repository's `.github/` (agents, instructions, skills) | [`RepoConfig`], applied to a [`CopilotEvalBuilder`](crate::eval::CopilotEvalBuilder) |
//!
//! Rules, their severity and where they apply. A rule is an error only where the pinned
//! runtime (1.0.102) refuses the file too (checked row by row by `tests/tests/conformance.rs`
//! of the e2e package); where the runtime loads the file anyway the problem is a warning whose
//! message says what the runtime does instead. Limits count UTF-16 code units, the runtime's unit.
//!
//! | rule | severity | applies to | what it checks |
//! |---|---|---|---|
//! | `read` | error | all | the file can be read |
//! | `utf8` | warning | all | the file is UTF-8 (the runtime reads it with U+FFFD for invalid bytes) |
//! | `front-matter-missing` | error | skills, agents | the file starts with a `---` front matter block |
//! | `front-matter-unclosed` | error (instructions: warning) | all | an opening `---` has its closing `---` line |
//! | `front-matter-yaml` | error (instructions: warning) | all | the front matter is valid YAML; the message says how to quote a value starting with a YAML indicator or holding `: ` |
//! | `front-matter-duplicate-key` | error (instructions: warning) | all | a key appears once (the first is kept and the other problems are still reported) |
//! | `front-matter-not-mapping` | error (agents) / warning (skills, instructions) | all | the front matter is a mapping of keys to values |
//! | `required` | error (agents: `description`) / warning (skills: `name`, `description`) | skills, agents | the field is present |
//! | `type` | error where the runtime refuses the file / warning where it ignores the value | all | the field has the documented type |
//! | `empty` | error for a required key without a value or an empty skill `name` / warning for other empty texts | all | a string field (or list entry) is not empty or blank |
//! | `unknown-key` | warning | all | the key is one the format defines (others are ignored by the runtime) |
//! | `deprecated` | warning | agents (`infer`) | the key is still supported but replaced |
//! | `skill-name-chars` | error | skills | `name` starts with an ASCII letter or digit and holds only ASCII letters, digits, `-`, `_`, `.`, `:` and spaces |
//! | `skill-name-format` | warning | skills | `name` is lowercase ASCII letters, digits and single hyphens, not starting or ending with a hyphen (the Agent Skills format) |
//! | `skill-name-length` | error | skills | `name` has at most 64 UTF-16 code units |
//! | `skill-name-folder` | warning | skills | `name` equals the skill folder's name (the runtime uses `name`) |
//! | `description-length` | error | skills | `description` has at most 1024 UTF-16 code units |
//! | `compatibility-length` | warning | skills | `compatibility` has at most 500 UTF-16 code units |
//! | `metadata-value` | warning | skills, agents | `metadata` values are strings |
//! | `body-empty` | warning | all | there is Markdown text after the front matter |
//! | `not-model-invocable` | warning | skill | `disable-model-invocation` is not `true` (the runtime hides such a skill from the model) |
//! | `prompt-length` | warning | agents | the prompt has at most 30,000 characters |
//! | `reference-escapes` | warning | skills | a relative link in the skill's Markdown (not in comments or code), or a symbolic link in the skill folder, stays inside the skill folder |
//! | `reference-missing` | warning | skills | a relative link in `SKILL.md` names a file that exists |
//! | `agent-name` | error | agents | the file gives a non-empty agent name |
//! | `agent-id` | note | agents | the front-matter `name` (the agent's id) equals the file name's stem; the message names the id the model must use |
//! | `agent-name-chars` | warning | agents | the agent name uses only ASCII letters, digits, spaces, `.`, `_` and `-` (the model passes it as `agent_type`) |
//! | `value` | warning | agents (`target`), instructions (`excludeAgent`) | the value is one of the allowed values |
//! | `model-list` | warning | agents | `model` is one model id (a list is a VS Code feature; the first entry is used) |
//! | `mcp-server` | error | agents (`mcp-servers`) | each MCP server has a known `type` and the `command` or `url` it needs |
//! | `mcp-tool-name-cut` | warning | agents (`mcp-servers.*.tools`) | `<server>-<tool>` of each listed tool fits the runtime's 64 characters; the message names the cut name the model will see |
//! | `apply-to-glob` | warning | path instructions (`applyTo`) | every pattern (split on the commas outside `{...}`) is a valid glob |
//! | `skill-md-missing` | error (requested skill folders) / warning (lint: a folder under `skills/` with no skill below it) | skills | the folder holds `SKILL.md`, or its subfolders do |
//! | `skill-name-duplicate` | error | requested skills | two requested skill folders do not define the same skill name |
//! | `agent-name-duplicate` | error | repository configuration | two agent files do not give the same agent name |
//! | `path-missing` | error | lint, repository configuration, requested skills | a given path exists |
//! | `no-config` | warning | lint | a given folder holds at least one file to check |
//! | `not-config-file` | warning | lint | a file given explicitly is a skill, agent or instructions file |
//! | `evals-invalid` | error | lint (a skill's `evals/evals.json`) | the file parses as the skill-creator format (the `skill_evals` attribute's reader, [`skill::evals_file`]); the message names the entry, the key and what to write |
//! | `evals-duplicate-id` | error | lint (a skill's `evals/evals.json`) | no entry repeats an earlier entry's `id` (or its test name); the message names both entries |
//! | `evals-unknown-field` | warning | lint (a skill's `evals/evals.json`) | every key, top level and per entry, is one the format defines; the message lists them |
//! | `evals-file-missing` | error | lint (a skill's `evals/evals.json`) | each entry's `files` is a relative path inside the skill folder naming an existing file; the message says where it looked |
//! | `evals-skill-name` | error | lint (a skill's `evals/evals.json`) | `skill_name`, when given, is the skill's front-matter `name` |
//! | `triggers-invalid` | error | lint (a skill's `evals/triggers.json`) | the file parses as a trigger set (the `skill_triggers` attribute's reader, [`skill::triggers_file`]); the message names the query, the key and what to write |
//! | `triggers-duplicate-query` | warning | lint (a skill's `evals/triggers.json`) | no query repeats an earlier one; the message names both |
//! | `triggers-unknown-field` | warning | lint (a skill's `evals/triggers.json`) | every key, top level and per query, is one the format defines; the message lists them |
//! | `triggers-skill-name` | error | lint (a skill's `evals/triggers.json`) | `skill_name`, when given, is the skill's name (its folder's name) |
//! | `triggers-no-near-miss` | warning | lint (a skill's `evals/triggers.json`) | some query that should not trigger is a near miss: it shares a word with the skill's name or description (a neighbouring task the description must tell apart) |
//! | `triggers-names-skill` | warning | lint (a skill's `evals/triggers.json`) | not every query that should trigger names the skill (else the model can pick it by its name alone) |
//!
//! The `evals-*` and `triggers-*` rules are copilot-eval's own (the runtime never reads
//! `evals/evals.json` or `evals/triggers.json`): an error is what the `skill_evals` or
//! `skill_triggers` attribute refuses too, or a file written for another skill.

use std::fmt;
use std::path::{Path, PathBuf};

pub mod agent;
pub(crate) mod frontmatter;
pub mod instructions;
pub mod mcp_names;
pub mod repo;
pub mod skill;
#[cfg(test)]
mod tests;

pub use agent::AgentFile;
pub use instructions::{InstructionsFile, InstructionsKind};
pub use repo::RepoConfig;
pub use skill::Skill;

/// How serious a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The file is invalid: a loader returns [`LoadError`] and `lint` exits non-zero.
    Error,
    /// The file loads, but something is likely wrong or ignored by the runtime.
    Warning,
    /// A fact about how the runtime reads the file that is worth knowing but asks for no change
    /// (e.g. `agent-id`: the agent's id comes from its `name`); `lint` shows notes only with
    /// `--verbose` and never counts them as warnings.
    Note,
}

impl Severity {
    /// `error`, `warning` or `note`, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Note => "note",
        }
    }
}

/// One problem found in a configuration file.
///
/// Displayed as `FILE:LINE: SEVERITY[RULE] `FIELD`: MESSAGE` (`:LINE` and the field are left out
/// when unknown or not applicable), e.g.
/// ``skills/pdf/SKILL.md:2: error[skill-name-folder] `name`: "pdf-tools" must equal the skill folder's name "pdf"``.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// Error, warning or note.
    pub severity: Severity,
    /// The file (or folder) the problem is in, as it was reached from the path given to the
    /// loader (not canonicalised).
    pub file: PathBuf,
    /// 1-based line in `file` (front matter included), when known.
    pub line: Option<u32>,
    /// The front-matter field, dotted for nested values (`mcp-servers.db`); `body` for the
    /// Markdown after the front matter; `None` for the file as a whole.
    pub field: Option<String>,
    /// Stable rule id (see the [module table](self)), e.g. `skill-name-format`.
    pub rule: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl Problem {
    pub(crate) fn error(file: &Path, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            file: file.to_path_buf(),
            line: None,
            field: None,
            rule,
            message: message.into(),
        }
    }

    pub(crate) fn warning(file: &Path, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(file, rule, message)
        }
    }

    pub(crate) fn note(file: &Path, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Note,
            ..Self::error(file, rule, message)
        }
    }

    pub(crate) fn at(mut self, line: Option<u32>) -> Self {
        self.line = line;
        self
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Whether this is an error (not a warning or a note).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}[{}]", self.severity.as_str(), self.rule)?;
        if let Some(field) = &self.field {
            write!(f, " `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A configuration that could not be loaded: every problem found, errors first (at least one
/// error), then the warnings seen on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The problems, errors first, each in file order.
    pub problems: Vec<Problem>,
}

impl LoadError {
    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().filter(|p| p.is_error())
    }

    /// Build from a list holding at least one error; `None` when it holds none.
    pub(crate) fn from_problems(mut problems: Vec<Problem>) -> Option<Self> {
        if !problems.iter().any(Problem::is_error) {
            return None;
        }
        problems.sort_by_key(|p| p.severity);
        Some(Self { problems })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: Vec<String> = self.errors().map(ToString::to_string).collect();
        f.write_str(&errors.join("; "))
    }
}

impl std::error::Error for LoadError {}

/// Split `problems` into `Ok(warnings)` or `Err(LoadError)` when any is an error.
pub(crate) fn settle(problems: Vec<Problem>) -> Result<Vec<Problem>, LoadError> {
    match LoadError::from_problems(problems.clone()) {
        Some(error) => Err(error),
        None => Ok(problems),
    }
}

/// Read the file `path` and check its text with `check_text`: a file that cannot be read gives
/// its `read` problem only; a `utf8` warning ([`read_text`]) goes before what the check found.
pub(crate) fn check_file<T>(
    path: &Path,
    check_text: impl FnOnce(&str) -> (Option<T>, Vec<Problem>),
) -> (Option<T>, Vec<Problem>) {
    let (text, utf8) = match read_text(path) {
        Ok(read) => read,
        Err(problem) => return (None, vec![problem]),
    };
    let (checked, mut problems) = check_text(&text);
    problems.splice(0..0, utf8);
    (checked, problems)
}

/// Read a file as text, or the `read` problem. A file that is not UTF-8 is read with each
/// invalid byte replaced by U+FFFD, with a `utf8` warning: the runtime (1.0.102) loads such a
/// file the same way.
pub(crate) fn read_text(path: &Path) -> Result<(String, Option<Problem>), Problem> {
    let bytes = std::fs::read(path)
        .map_err(|e| Problem::error(path, "read", format!("cannot be read: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, None)),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..offset]
                .iter()
                .filter(|b| **b == b'\n')
                .count() as u32
                + 1;
            let problem = Problem::warning(
                path,
                "utf8",
                format!("is not valid UTF-8 (first invalid byte at offset {offset}); the runtime reads it with the invalid bytes replaced by U+FFFD: save it as UTF-8"),
            )
            .at(Some(line));
            Ok((
                String::from_utf8_lossy(e.as_bytes()).into_owned(),
                Some(problem),
            ))
        }
    }
}
