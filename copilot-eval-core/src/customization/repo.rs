//! A repository's whole Copilot configuration, loaded from its `.github/` folder and applied to an
//! eval.
//!
//! [`RepoConfig::load`] reads, from `ROOT/.github/` (or from `ROOT` itself when it is named
//! `.github`):
//!
//! | what | where | applied as |
//! |---|---|---|
//! | repository instructions | `copilot-instructions.md` | the eval's `instructions` (appended to the runtime's system prompt) |
//! | custom agents | `agents/**/*.agent.md` (recursive, sorted by path) | one `custom_agent` each |
//! | skills | `skills/*/SKILL.md` | the eval's `skill_directory` (`.github/skills`), so the run checks their discovery |
//! | path-specific instructions | `instructions/**/*.instructions.md` | validated only: the runtime applies them per file, an eval cannot |
//!
//! Every file is validated; every error of every file is reported at once ([`LoadError`]).
//! Overrides are applied to the loaded configuration before it is applied to a builder:
//! keep or drop agents by name, change an agent's SDK configuration, replace or extend the
//! instructions. Builder calls made after [`apply`](RepoConfig::apply) override the loaded
//! values as usual (`.instructions(..)` replaces them).
//!
//! The runtime does not read a working directory's `.github/` on its own in copilot-eval
//! sessions (they leave the SDK's `enable_config_discovery` unset; measured with runtime
//! 1.0.102: a skill under the working directory's `.github/skills` was not discovered), so this
//! loader is how an eval gets a repository's configuration, from any folder. An eval that turns
//! config discovery on itself should not also apply the same folder, or every agent comes twice.
//!
//! ```no_run
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use copilot_eval_core::customization::RepoConfig;
//! use copilot_eval_core::CopilotEval;
//!
//! let config = RepoConfig::load("examples/quickstart/copilot-config")?
//!     .override_agent("Release Reviewer", |agent| agent.with_model("claude-sonnet-4.5"))?;
//! let eval = config
//!     .apply(CopilotEval::builder().name("review-with-repo-config"))
//!     .model("claude-sonnet-4.5")
//!     .build()?;
//! # let _ = eval; Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use github_copilot_sdk::CustomAgentConfig;

use super::instructions::{self, InstructionsFile, InstructionsKind};
use super::skill::{self, SKILL_FILE, Skill};
use super::{AgentFile, LoadError, Problem, agent};
use crate::error::ConfigError;
use crate::eval::{CopilotEval, CopilotEvalBuilder};

/// A repository's Copilot configuration (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct RepoConfig {
    /// The folder given to [`load`](Self::load).
    pub root: PathBuf,
    /// The `.github` folder read.
    pub github_dir: PathBuf,
    /// `copilot-instructions.md`, when present.
    pub instructions: Option<InstructionsFile>,
    /// The instructions text applied (the file's text, after overrides); `None`: none.
    pub instructions_text: Option<String>,
    /// The custom agents, sorted by name (after overrides).
    pub agents: Vec<AgentFile>,
    /// `.github/skills`, when it holds at least one skill.
    pub skills_directory: Option<PathBuf>,
    /// The skills under `skills_directory`, by folder name.
    pub skills: Vec<Skill>,
    /// Path-specific instructions (validated, not applied).
    pub path_instructions: Vec<InstructionsFile>,
}

impl RepoConfig {
    /// Load and validate the configuration of the repository at `root`.
    ///
    /// A missing `.github` folder, or one without any configuration, loads as empty.
    ///
    /// Errors: [`LoadError`] with every problem of every file: `path-missing` when `root` is not
    /// a directory or `.github` is not one; any error of an agent, instructions or skill file;
    /// `agent-name-duplicate` when two agent files give the same name.
    pub fn load(root: impl AsRef<Path>) -> Result<RepoConfig, LoadError> {
        let root = root.as_ref();
        let github_dir = github_dir(root)?;
        let (instructions, mut problems) = repository_instructions(&github_dir);
        let (agents, found) = agents(&github_dir);
        problems.extend(found);
        let (path_instructions, found) = path_instructions(&github_dir);
        problems.extend(found);
        let (skills_directory, skills, found) = skills(&github_dir);
        problems.extend(found);
        if let Some(error) = LoadError::from_problems(problems) {
            return Err(error);
        }
        Ok(RepoConfig {
            root: root.to_path_buf(),
            github_dir,
            instructions_text: instructions
                .as_ref()
                .map(|f| f.text.clone())
                .filter(|t| !t.is_empty()),
            instructions,
            agents,
            skills_directory,
            skills,
            path_instructions,
        })
    }

    /// The agent called `name`, when loaded.
    pub fn agent(&self, name: &str) -> Option<&AgentFile> {
        self.agents.iter().find(|a| a.config.name == name)
    }

    /// The names of the loaded agents, sorted.
    pub fn agent_names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.config.name.as_str()).collect()
    }

    /// Every warning of every loaded file.
    pub fn warnings(&self) -> Vec<&Problem> {
        self.instructions
            .iter()
            .flat_map(|f| &f.warnings)
            .chain(self.agents.iter().flat_map(|a| &a.warnings))
            .chain(self.skills.iter().flat_map(|s| &s.warnings))
            .chain(self.path_instructions.iter().flat_map(|f| &f.warnings))
            .collect()
    }

    /// Keep only the agents named here.
    ///
    /// Errors: [`ConfigError`] on `custom_agents` when a name names no loaded agent (the message
    /// lists the loaded ones).
    pub fn only_agents<I, S>(self, names: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.keep_agents(names, true)
    }

    /// Drop the agents named here.
    ///
    /// Errors: [`ConfigError`] on `custom_agents` when a name names no loaded agent.
    pub fn without_agents<I, S>(self, names: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.keep_agents(names, false)
    }

    /// Keep the agents named in `names` (`named`), or the others; every name must name a
    /// loaded agent.
    fn keep_agents<I, S>(mut self, names: I, named: bool) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        for name in &names {
            self.require(name)?;
        }
        self.agents
            .retain(|a| names.contains(&a.config.name) == named);
        Ok(self)
    }

    /// Change the SDK configuration of the agent `name` (its model, tools, prompt, ...). The
    /// function may not rename it.
    ///
    /// Errors: [`ConfigError`] on `custom_agents` when `name` names no loaded agent, or the
    /// function changed the name.
    pub fn override_agent(
        mut self,
        name: &str,
        f: impl FnOnce(CustomAgentConfig) -> CustomAgentConfig,
    ) -> Result<Self, ConfigError> {
        self.require(name)?;
        let agent = self
            .agents
            .iter_mut()
            .find(|a| a.config.name == name)
            .expect("checked above");
        let changed = f(agent.config.clone());
        if changed.name != name {
            return Err(ConfigError::new(
                "custom_agents",
                format!(
                    "the override of {name:?} renamed it to {:?}; an override may change everything but the name",
                    changed.name
                ),
            ));
        }
        agent.config = changed;
        Ok(self)
    }

    /// Replace the instructions text (`None`: apply no instructions).
    pub fn with_instructions(mut self, text: Option<String>) -> Self {
        self.instructions_text = text.filter(|t| !t.trim().is_empty());
        self
    }

    /// Append `text` to the instructions, after a blank line.
    pub fn append_instructions(mut self, text: impl AsRef<str>) -> Self {
        let text = text.as_ref().trim();
        if text.is_empty() {
            return self;
        }
        self.instructions_text = Some(match self.instructions_text.take() {
            Some(existing) => format!("{existing}\n\n{text}"),
            None => text.to_owned(),
        });
        self
    }

    /// Apply the configuration to `builder`: the instructions text (when any) as
    /// `instructions`, each agent as a `custom_agent`, and the skills folder (when it holds
    /// skills) as a `skill_directory`. Later builder calls override these. An agent whose id
    /// differs from its file name's is remembered as `custom_agent_file` does, so a failed
    /// `task` dispatch by the file name is a warning on the result naming the id.
    pub fn apply(&self, builder: CopilotEvalBuilder) -> CopilotEvalBuilder {
        let mut builder = builder;
        if let Some(text) = &self.instructions_text {
            builder = builder.instructions(text.clone());
        }
        builder.input_files.extend(
            self.instructions
                .iter()
                .chain(&self.path_instructions)
                .map(|file| file.path.clone()),
        );
        for agent in &self.agents {
            builder = builder.custom_agent_of_file(agent);
        }
        if let Some(dir) = &self.skills_directory {
            builder = builder.skill_directory(dir.clone());
        }
        builder
    }

    /// A fresh eval builder with the configuration applied ([`apply`](Self::apply)).
    pub fn builder(&self) -> CopilotEvalBuilder {
        self.apply(CopilotEval::builder())
    }

    fn require(&self, name: &str) -> Result<(), ConfigError> {
        if self.agent(name).is_some() {
            return Ok(());
        }
        let known = self.agent_names();
        Err(ConfigError::new(
            "custom_agents",
            format!(
                "{name:?} names no agent loaded from {} (loaded: {})",
                self.github_dir.display(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        ))
    }
}

/// The `.github` folder of the repository at `root` (`root` itself when it is named
/// `.github`). Errors: `path-missing` when `root` is not a directory or `.github` is not one.
fn github_dir(root: &Path) -> Result<PathBuf, LoadError> {
    if !root.is_dir() {
        return Err(LoadError {
            problems: vec![Problem::error(
                root,
                "path-missing",
                "is not an existing directory (give the repository folder that holds .github/)",
            )],
        });
    }
    let github_dir = if root.file_name().is_some_and(|n| n == ".github") {
        root.to_path_buf()
    } else {
        root.join(".github")
    };
    if github_dir.exists() && !github_dir.is_dir() {
        return Err(LoadError {
            problems: vec![Problem::error(
                &github_dir,
                "path-missing",
                "is not a directory; Copilot configuration lives in the .github/ folder",
            )],
        });
    }
    Ok(github_dir)
}

/// `copilot-instructions.md`, when present and valid (its warnings kept on it), and the
/// problems found in it.
fn repository_instructions(github_dir: &Path) -> (Option<InstructionsFile>, Vec<Problem>) {
    let path = github_dir.join(instructions::REPOSITORY_FILE);
    if !path.is_file() {
        return (None, Vec::new());
    }
    let (file, problems) = instructions::check(&path);
    let warnings: Vec<Problem> = problems.iter().filter(|p| !p.is_error()).cloned().collect();
    let file = file.map(|mut f| {
        f.warnings = warnings;
        f
    });
    (file, problems)
}

/// The valid agent files under `agents/`, sorted by name (each with its warnings), and the
/// problems found in them: a name two files give is `agent-name-duplicate` (the second file
/// left out).
fn agents(github_dir: &Path) -> (Vec<AgentFile>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut agents: Vec<AgentFile> = Vec::new();
    let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in files_under(&github_dir.join("agents"), |name| {
        name.ends_with(agent::AGENT_SUFFIX)
    }) {
        let (file, found) = agent::check(&path);
        let warnings: Vec<Problem> = found.iter().filter(|p| !p.is_error()).cloned().collect();
        problems.extend(found);
        let Some(mut file) = file else { continue };
        file.warnings = warnings;
        if let Some(first) = names.get(&file.config.name) {
            problems.push(Problem::error(
                &path,
                "agent-name-duplicate",
                format!(
                    "gives the agent name {:?}, which {} already gives; agent names must be unique",
                    file.config.name,
                    first.display()
                ),
            ));
            continue;
        }
        names.insert(file.config.name.clone(), path);
        agents.push(file);
    }
    agents.sort_by(|a, b| a.config.name.cmp(&b.config.name));
    (agents, problems)
}

/// The valid path-specific instructions under `instructions/` (each with its warnings), and the
/// problems found in them.
fn path_instructions(github_dir: &Path) -> (Vec<InstructionsFile>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for path in files_under(&github_dir.join("instructions"), |name| {
        name.ends_with(instructions::PATH_SUFFIX)
    }) {
        let (file, found) = instructions::check(&path);
        let warnings: Vec<Problem> = found.iter().filter(|p| !p.is_error()).cloned().collect();
        problems.extend(found);
        if let Some(mut file) = file
            && file.kind == InstructionsKind::Path
        {
            file.warnings = warnings;
            files.push(file);
        }
    }
    (files, problems)
}

/// `skills/` when it holds at least one skill folder, its skills, and the problems found in
/// them.
fn skills(github_dir: &Path) -> (Option<PathBuf>, Vec<Skill>, Vec<Problem>) {
    let skills_root = github_dir.join("skills");
    let has_skills = skills_root.is_dir()
        && std::fs::read_dir(&skills_root)
            .map(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().join(SKILL_FILE).is_file())
            })
            .unwrap_or(false);
    if !has_skills {
        return (None, Vec::new(), Vec::new());
    }
    match skill::requested_skills(std::slice::from_ref(&skills_root)) {
        Ok(found) => (Some(skills_root), found, Vec::new()),
        Err(e) => (Some(skills_root), Vec::new(), e.problems),
    }
}

/// Files under `dir` (recursive, symbolic links to folders not followed) whose name passes
/// `keep`, sorted by path.
pub(crate) fn files_under(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
                && path.file_name().and_then(|n| n.to_str()).is_some_and(&keep)
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
