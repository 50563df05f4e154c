//! Custom agents: `NAME.agent.md` files (front matter + prompt), loaded into the SDK's
//! [`CustomAgentConfig`].
//!
//! The agent's name (its id: the `agent_type` the model passes to the `task` tool) is the
//! front-matter `name` when it is a non-empty text, else the file name without `.agent.md` (or
//! `.md`), as the runtime derives it (measured with runtime 1.0.102: `planner.agent.md` with
//! `name: Planner` is dispatched as `Planner`; `planner` is refused as an unknown agent type).
//! A file in a subfolder of an `agents` folder without a `name` is named after its path:
//! `agents/sub/deep.agent.md` is `sub--deep`. When `name` makes the id differ from the file
//! stem, an `agent-id` note says which id the model must use. The body is the agent's prompt.
//!
//! | key | type | maps to |
//! |---|---|---|
//! | `description` | string, **required** | `description` |
//! | `name` | string | `name` (the id) and `display_name` |
//! | `tools` | list of strings, or one comma-separated string | `tools` (unset: all tools) |
//! | `model` | string (a list: the first entry, with a `model-list` warning) | `model` |
//! | `mcp-servers` | mapping of server name to `{type, command, args, env, cwd, url, headers, tools, timeout}` | `mcp_servers` (`type`: `stdio`/`local` need `command`, `http`/`sse` need `url`; without `type`, `command` means `stdio` and `url` means `http`) |
//! | `disable-model-invocation` | boolean | `infer = !value` (wins over `infer`) |
//! | `infer` | boolean (deprecated) | `infer` |
//! | `skills` | list of strings | `skills` (preloaded into the agent's context) |
//! | `user-invocable` | boolean | checked, not mapped (the SDK has no field) |
//! | `target` | `vscode` or `github-copilot` | checked, not mapped |
//! | `argument-hint` | string | checked, not mapped |
//! | `metadata` | mapping of strings to strings | checked, not mapped |
//! | `handoffs` | list of mappings | checked, not mapped (a VS Code feature) |
//! | `agents` | list of strings, or one string | checked, not mapped (a VS Code feature) |
//!
//! Other keys are `unknown-key` warnings. The whole front matter is kept on
//! [`AgentFile::front_matter`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use github_copilot_sdk::{CustomAgentConfig, IndexMap, McpServerConfig};
use serde_json::Value;

use super::frontmatter::{self, Checker, kind_of};
use super::{LoadError, Problem, check_file, settle};

/// The front-matter keys of a `.agent.md` file.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "tools",
    "model",
    "mcp-servers",
    "disable-model-invocation",
    "infer",
    "skills",
    "user-invocable",
    "target",
    "argument-hint",
    "metadata",
    "handoffs",
    "agents",
];

/// The file-name suffix of custom agents.
pub const AGENT_SUFFIX: &str = ".agent.md";

/// Prompt length GitHub Copilot accepts for a custom agent, in characters.
pub const MAX_PROMPT_CHARS: usize = 30_000;

/// A validated custom agent file.
#[derive(Debug, Clone)]
pub struct AgentFile {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The SDK configuration: name from the front-matter `name` (else the file name), prompt
    /// from the body, the rest from the front matter (see the [module table](self)).
    pub config: CustomAgentConfig,
    /// The front matter as written, every key (mapped or not).
    pub front_matter: serde_json::Map<String, Value>,
    /// Warnings found while loading.
    pub warnings: Vec<Problem>,
}

impl AgentFile {
    /// Load and validate a custom agent file.
    ///
    /// Errors: [`LoadError`] with every error found (and the warnings): the file cannot be read
    /// or is not UTF-8, has no front matter, lacks `description`, has a field of the wrong type,
    /// an invalid `mcp-servers` entry, an empty prompt, ... (see the [rules](crate::customization)).
    pub fn load(path: impl AsRef<Path>) -> Result<AgentFile, LoadError> {
        let path = path.as_ref();
        let (agent, problems) = check(path);
        let warnings = settle(problems)?;
        let mut agent = agent.expect("an agent is built when there is no error");
        agent.warnings = warnings;
        Ok(agent)
    }

    /// The agent's name (its id, the `agent_type` of a `task` dispatch): the front-matter
    /// `name`, else from the file name ([`agent_name`]).
    pub fn name(&self) -> &str {
        &self.config.name
    }
}

/// The custom agent files among `paths`: a file is taken as given; a folder is searched
/// recursively for files named `*.agent.md` (sorted, symbolic links not followed). A path that
/// does not exist is returned as given, so loading it names it.
pub fn agent_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(&path, out);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(AGENT_SUFFIX))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut out);
        } else {
            out.push(path.clone());
        }
    }
    out
}

impl crate::eval::CopilotEvalBuilder {
    /// Add the custom agent of an `*.agent.md` file, loaded and checked as
    /// [`AgentFile::load`] does (a relative `path` is resolved against the package root for
    /// `ctx.eval()`, see [`base_directory`](crate::eval::CopilotEvalBuilder::base_directory)).
    /// A file that does not load makes [`build`](crate::eval::CopilotEvalBuilder::build) fail
    /// naming the absolute path and every error.
    pub fn custom_agent_file(self, path: impl AsRef<Path>) -> Self {
        let (resolved, described) = self.resolve_path(path.as_ref());
        match AgentFile::load(&resolved) {
            Ok(agent) => self.custom_agent_of_file(&agent),
            Err(error) => {
                let message = format!("{described} does not load as a custom agent: {error}");
                self.defer_error(crate::ConfigError::new("custom_agents", message))
            }
        }
    }
}

impl crate::eval::CopilotEvalBuilder {
    /// Add `agent`'s custom agent; when its id (`config.name`) differs from the id its file
    /// name gives ([`agent_name`]), remember both, so the run can name a `task` dispatch by
    /// the file name (`run/agent_ids`). Used by `custom_agent_file` and [`RepoConfig::apply`](
    /// crate::customization::RepoConfig::apply).
    pub(crate) fn custom_agent_of_file(mut self, agent: &AgentFile) -> Self {
        let file_id = agent_name(&agent.path);
        self.input_files.push(agent.path.clone());
        if file_id != agent.config.name {
            self.file_named_agents.push(crate::eval::FileNamedAgent {
                file_id,
                id: agent.config.name.clone(),
                path: agent.path.clone(),
            });
        }
        self.custom_agent(agent.config.clone())
    }
}

/// The agent name a file name gives (used when the front matter has no `name`): the file name
/// without `.agent.md`, else without `.md`; for a file in a subfolder of a folder named
/// `agents`, the folders below `agents` come first, joined by `--` (`agents/sub/deep.agent.md`
/// is `sub--deep`, as the runtime names it). The path is resolved through symbolic links first,
/// so the name does not depend on the path the file was reached by.
pub fn agent_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file
        .strip_suffix(AGENT_SUFFIX)
        .or_else(|| file.strip_suffix(".md"))
        .unwrap_or(&file)
        .to_owned();
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut folders = Vec::new();
    let mut dir = real.parent();
    while let Some(d) = dir {
        match d.file_name() {
            Some(n) if n == "agents" => {
                folders.reverse();
                folders.push(stem);
                return folders.join("--");
            }
            Some(n) => folders.push(n.to_string_lossy().into_owned()),
            None => break,
        }
        dir = d.parent();
    }
    stem
}

/// Validate the agent file; the agent is `Some` when no error was found.
pub(crate) fn check(path: &Path) -> (Option<AgentFile>, Vec<Problem>) {
    check_file(path, |text| check_text(path, text))
}

fn check_text(path: &Path, text: &str) -> (Option<AgentFile>, Vec<Problem>) {
    let (mut c, document) = match Checker::of_text(path, text, "at least `description`") {
        Ok(read) => read,
        Err(problem) => return (None, vec![problem]),
    };
    let stem = agent_name(path);
    let mut keys = AgentKeys::read(&mut c);
    let name = keys.display_name.clone().unwrap_or_else(|| stem.clone());
    let mut problems = name_problems(path, &c, &name, keys.display_name.is_some(), &stem);
    let front_matter = c.as_object();
    let blank = |key: &str| {
        c.get(key)
            .is_some_and(|f| f.value.as_str().is_some_and(|v| v.trim().is_empty()))
    };
    let (blank_name, blank_description) = (blank("name"), blank("description"));
    problems.extend(c.take_problems());

    let prompt = document.body.trim().to_owned();
    problems.extend(prompt_problems(path, &prompt, document.body_line));

    demote_what_loads(&mut problems, blank_name, blank_description, &stem);
    if problems.iter().any(Problem::is_error) {
        return (None, problems);
    }
    let description = keys
        .description
        .take()
        .or_else(|| blank_description.then(String::new));
    let Some(description) = description else {
        return (None, problems);
    };
    (
        Some(AgentFile {
            path: path.to_path_buf(),
            config: keys.config(name, prompt, description),
            front_matter,
            warnings: Vec::new(),
        }),
        problems,
    )
}

/// The keys of an agent file's front matter that make its SDK configuration, read (and
/// checked) with every other known key.
struct AgentKeys {
    /// `name`.
    display_name: Option<String>,
    /// `description`.
    description: Option<String>,
    /// `tools`.
    tools: Option<Vec<String>>,
    /// `model`.
    model: Option<String>,
    /// `mcp-servers`.
    mcp_servers: Option<IndexMap<String, McpServerConfig>>,
    /// `disable-model-invocation` (negated), else the deprecated `infer`.
    infer: Option<bool>,
    /// `skills`.
    skills: Option<Vec<String>>,
}

impl AgentKeys {
    /// Read the keys from `c`, checking every key the file gives (their problems go to `c`).
    fn read(c: &mut Checker<'_>) -> Self {
        let display_name = c.string("name", false);
        let description = c.string("description", true);
        let tools = c.string_list("tools", &[',']);
        let model = model(c);
        let mcp_servers = mcp_servers(c);
        let disable_model_invocation = c.boolean("disable-model-invocation");
        let infer = c.boolean("infer");
        if c.get("infer").is_some() {
            c.warn(
                "infer",
                "deprecated",
                "is being replaced by `disable-model-invocation` (infer: false = disable-model-invocation: true) and `user-invocable`",
            );
        }
        let skills = c.string_list("skills", &[',']);
        check_other_keys(c);
        Self {
            display_name,
            description,
            tools,
            model,
            mcp_servers,
            infer: disable_model_invocation.map(|d| !d).or(infer),
            skills,
        }
    }

    /// The SDK configuration of the agent `name` with its `prompt` and `description`.
    fn config(self, name: String, prompt: String, description: String) -> CustomAgentConfig {
        let mut config = CustomAgentConfig::new(name, prompt).with_description(description);
        config.display_name = self.display_name;
        config.tools = self.tools;
        config.model = self.model;
        config.mcp_servers = self.mcp_servers;
        config.infer = self.infer;
        config.skills = self.skills;
        config
    }
}

/// The checks of the keys the SDK configuration does not take (`user-invocable`, `target`,
/// `argument-hint`, `metadata`, `handoffs`, `agents`), and of unknown keys.
fn check_other_keys(c: &mut Checker<'_>) {
    c.boolean("user-invocable");
    if let Some(target) = c.string("target", false)
        && !["vscode", "github-copilot"].contains(&target.as_str())
    {
        c.error(
            "target",
            "value",
            format!("{target:?} is not one of: vscode, github-copilot"),
        );
    }
    c.string("argument-hint", false);
    c.string_map("metadata");
    handoffs(c);
    if let Some(field) = c.get("agents").cloned()
        && !matches!(&field.value, Value::String(_))
    {
        c.string_list("agents", &[',']);
    }
    c.unknown_keys(KNOWN_KEYS, "custom agent");
}

/// The problems of the agent's name (`name`, else the file's stem): none at all, characters
/// a model may not pass back, and an id that differs from the file name.
fn name_problems(
    path: &Path,
    c: &Checker<'_>,
    name: &str,
    named: bool,
    stem: &str,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if name.trim().is_empty() {
        problems.push(Problem::error(
            path,
            "agent-name",
            "gives no agent name; name the file NAME.agent.md or give a `name`",
        ));
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ' '))
    {
        problems.push(Problem::warning(
            path,
            "agent-name-chars",
            format!(
                "gives the agent name {name:?}; the model passes it as `agent_type`, so prefer ASCII letters, digits, spaces, `.`, `_` and `-`"
            ),
        ));
    }
    if named && name != stem {
        let line = c.line("name");
        problems.push(
            Problem::note(
                path,
                "agent-id",
                format!(
                    "makes the agent's id {name:?}, not the file name's {stem:?}: the runtime lists the agent as {name:?} and the model must pass `agent_type: {name:?}` to `task` (a scripted or recorded dispatch too)"
                ),
            )
            .at(line)
            .field("name"),
        );
    }
    problems
}

/// The problems of the agent's prompt (the Markdown after the front matter, starting at
/// `body_line`): none, or longer than GitHub Copilot accepts.
fn prompt_problems(path: &Path, prompt: &str, body_line: u32) -> Vec<Problem> {
    let mut problems = Vec::new();
    if prompt.is_empty() {
        problems.push(
            Problem::error(
                path,
                "body-empty",
                "has no prompt: the Markdown after the front matter is the agent's instructions",
            )
            .at(Some(body_line))
            .field("body"),
        );
    } else if prompt.chars().count() > MAX_PROMPT_CHARS {
        problems.push(
            Problem::warning(
                path,
                "prompt-length",
                format!(
                    "has a prompt of {} characters; GitHub Copilot accepts at most {MAX_PROMPT_CHARS}",
                    prompt.chars().count()
                ),
            )
            .at(Some(body_line))
            .field("body"),
        );
    }

    problems
}

/// Errors the pinned runtime (1.0.102) loads the agent despite, made warnings that say so (see
/// the conformance suite).
fn demote_what_loads(
    problems: &mut [Problem],
    blank_name: bool,
    blank_description: bool,
    stem: &str,
) {
    let field_is =
        |p: &Problem, keys: &[&str]| p.field.as_deref().is_some_and(|f| keys.contains(&f));
    frontmatter::demote(
        problems,
        |p| p.rule == "empty" && blank_name && field_is(p, &["name"]),
        &format!("the runtime names the agent after its file, {stem:?}"),
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "empty" && blank_description && field_is(p, &["description"]),
        "the runtime loads the agent with an empty description, so the model has nothing to choose it by",
    );
    frontmatter::demote(
        problems,
        |p| p.rule == "body-empty",
        "the runtime loads the agent with no instructions of its own",
    );
    frontmatter::demote(
        problems,
        |p| {
            matches!(p.rule, "type" | "value" | "empty")
                && field_is(
                    p,
                    &["target", "argument-hint", "metadata", "handoffs", "agents"],
                )
        },
        "the runtime ignores the value and loads the agent",
    );
}

/// `model`: one string; a list takes its first entry with a warning.
fn model(c: &mut Checker<'_>) -> Option<String> {
    let field = c.get("model")?.clone();
    match &field.value {
        Value::Array(items) => {
            let first = items.first().and_then(Value::as_str).map(str::to_owned);
            match &first {
                Some(m) if !m.trim().is_empty() => c.warn(
                    "model",
                    "model-list",
                    format!(
                        "is a list of {} models (a VS Code feature); the runtime takes one model, so {m:?} is used",
                        items.len()
                    ),
                ),
                _ => c.error("model", "type", "must be a model id, or a list of model ids"),
            }
            first.filter(|m| !m.trim().is_empty())
        }
        _ => c.string("model", false),
    }
}

/// `mcp-servers`: each entry mapped to the SDK configuration.
fn mcp_servers(c: &mut Checker<'_>) -> Option<IndexMap<String, McpServerConfig>> {
    let field = c.get("mcp-servers")?.clone();
    let servers = match &field.value {
        Value::Object(map) => map.clone(),
        Value::Null => return None,
        other => {
            let kind = kind_of(other);
            c.error(
                "mcp-servers",
                "type",
                format!("must be a mapping of server names to server configurations, not {kind}"),
            );
            return None;
        }
    };
    let mut out = IndexMap::new();
    for (name, server) in servers {
        match mcp_server(&server) {
            Ok(config) => {
                let tools = match &config {
                    McpServerConfig::Stdio(s) => s.tools.clone(),
                    McpServerConfig::Http(h) | McpServerConfig::Sse(h) => h.tools.clone(),
                    _ => None,
                };
                for tool in tools.unwrap_or_default().iter().filter(|t| *t != "*") {
                    if let Some(warning) = super::mcp_names::cut_warning(&name, tool) {
                        let line = c.line("mcp-servers");
                        let file = c.file().to_path_buf();
                        c.problems.push(
                            Problem::warning(&file, "mcp-tool-name-cut", warning)
                                .at(line)
                                .field(format!("mcp-servers.{name}.tools")),
                        );
                    }
                }
                out.insert(name, config);
            }
            Err(message) => {
                let line = c.line("mcp-servers");
                let file = c.file().to_path_buf();
                c.problems.push(
                    Problem::error(&file, "mcp-server", message)
                        .at(line)
                        .field(format!("mcp-servers.{name}")),
                );
            }
        }
    }
    Some(out)
}

/// One MCP server entry.
fn mcp_server(server: &Value) -> Result<McpServerConfig, String> {
    let Value::Object(map) = server else {
        return Err(format!("must be a mapping, not {}", kind_of(server)));
    };
    let entry = ServerEntry(map);
    let timeout = match map.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some_and(|t| t > 0) => n.as_i64(),
        Some(other) => {
            return Err(format!(
                "`timeout` must be a positive whole number of milliseconds, not {other}"
            ));
        }
    };
    let command = entry.string("command")?;
    let url = entry.string("url")?;
    let kind = match entry.string("type")? {
        Some(kind) => kind,
        None => match (&command, &url) {
            (Some(_), None) => "stdio".to_owned(),
            (None, Some(_)) => "http".to_owned(),
            (Some(_), Some(_)) => {
                return Err("has both `command` and `url`; give one, and a `type`".to_owned());
            }
            (None, None) => {
                return Err(
                    "needs a `type` and a `command` (stdio, local) or a `url` (http, sse)"
                        .to_owned(),
                );
            }
        },
    };
    let tools = entry.strings("tools")?;
    match kind.as_str() {
        "stdio" | "local" => {
            let Some(command) = command else {
                return Err(format!("`type: {kind}` needs a `command`"));
            };
            Ok(McpServerConfig::Stdio(
                github_copilot_sdk::McpStdioServerConfig {
                    tools,
                    timeout,
                    command,
                    args: entry.strings("args")?.unwrap_or_default(),
                    env: entry.string_map("env")?,
                    working_directory: entry.string("cwd")?,
                },
            ))
        }
        "http" | "sse" => {
            let Some(url) = url else {
                return Err(format!("`type: {kind}` needs a `url`"));
            };
            let config = github_copilot_sdk::McpHttpServerConfig {
                tools,
                timeout,
                url,
                headers: entry.string_map("headers")?,
            };
            Ok(if kind == "http" {
                McpServerConfig::Http(config)
            } else {
                McpServerConfig::Sse(config)
            })
        }
        other => Err(format!(
            "`type` {other:?} is not one of: stdio, local, http, sse"
        )),
    }
}

/// The keys of one MCP server entry, each read with its type checked (an error names the key
/// and what it must be).
struct ServerEntry<'a>(&'a serde_json::Map<String, Value>);

impl ServerEntry<'_> {
    /// A non-empty string, when given.
    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(format!("`{key}` must not be empty")),
            Some(other) => Err(format!("`{key}` must be a string, not {}", kind_of(other))),
        }
    }

    /// A list of strings, when given.
    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("`{key}` must be a list of strings"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(format!(
                "`{key}` must be a list of strings, not {}",
                kind_of(other)
            )),
        }
    }

    /// A mapping of names to strings (empty when not given).
    fn string_map(&self, key: &str) -> Result<HashMap<String, String>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(HashMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(format!(
                        "`{key}.{k}` must be a string, not {}",
                        kind_of(other)
                    )),
                })
                .collect(),
            Some(other) => Err(format!(
                "`{key}` must be a mapping of names to strings, not {}",
                kind_of(other)
            )),
        }
    }
}

/// `handoffs`: a list of mappings, each with a `label` and an `agent`.
fn handoffs(c: &mut Checker<'_>) {
    let Some(field) = c.get("handoffs").cloned() else {
        return;
    };
    let Value::Array(items) = &field.value else {
        let kind = kind_of(&field.value);
        c.error(
            "handoffs",
            "type",
            format!("must be a list of mappings (label, agent, prompt), not {kind}"),
        );
        return;
    };
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() {
            let kind = kind_of(item);
            c.error(
                "handoffs",
                "type",
                format!(
                    "entry {} must be a mapping (label, agent, prompt), not {kind}",
                    i + 1
                ),
            );
        }
    }
}

#[cfg(test)]
mod builder_tests {
    use crate::CopilotEval;

    #[test]
    fn custom_agent_file_adds_the_agent_or_fails_build_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("reviewer.agent.md"),
            "---\nname: reviewer\ndescription: Reviews changes.\n---\nReview the change.\n",
        )
        .unwrap();
        let eval = CopilotEval::builder()
            .base_directory(dir.path())
            .custom_agent_file("reviewer.agent.md")
            .active_agent("reviewer")
            .build()
            .unwrap();
        assert_eq!(eval.custom_agents[0].name, "reviewer");
        assert_eq!(eval.custom_agents[0].prompt.trim(), "Review the change.");

        let err = CopilotEval::builder()
            .base_directory(dir.path())
            .custom_agent_file("missing.agent.md")
            .build()
            .unwrap_err()
            .to_string();
        let looked_at = dir.path().join("missing.agent.md");
        assert!(
            err.starts_with(&format!(
                "invalid eval field `custom_agents`: {} (\"missing.agent.md\" relative to the base directory {}) does not load as a custom agent: ",
                looked_at.display(),
                dir.path().display()
            )),
            "{err}"
        );
    }
}
