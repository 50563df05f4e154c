//! Eval configuration: [`CopilotEval`] and its validating builder.
//!
//! An eval is everything a run needs besides the prompt: the model, instructions, workspace,
//! budgets, tools and agents. It is built once with [`CopilotEval::builder`] and validated when
//! [`CopilotEvalBuilder::build`] is called: an invalid value is a [`ConfigError`] naming the
//! field and the allowed values, before any runtime process is started. A field whose capability
//! has not been built yet is rejected with "not supported yet", never silently dropped.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use github_copilot_sdk::handler::PermissionHandler;
use github_copilot_sdk::hooks::SessionHooks;
use github_copilot_sdk::{CustomAgentConfig, IndexMap, McpServerConfig, SessionConfig, Tool};

use crate::controls::{ControlHooks, Controls, PreToolGuard};
use crate::error::ConfigError;

/// Default `timeout_s`: 300 seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;
/// Default advisory `max_turns`: 25.
pub const DEFAULT_MAX_TURNS: u32 = 25;

/// How `instructions` combine with the runtime's built-in system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemMessageMode {
    /// Add the instructions after the runtime's system prompt (default).
    #[default]
    Append,
    /// Replace the runtime's whole system prompt, including its guardrails, with the instructions.
    Replace,
}

impl SystemMessageMode {
    const ALLOWED: &'static [&'static str] = &["append", "replace"];

    /// The value as written in configuration: `append` or `replace`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Append => "append",
            Self::Replace => "replace",
        }
    }

    fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "append" => Ok(Self::Append),
            "replace" => Ok(Self::Replace),
            other => Err(ConfigError::not_one_of(
                "system_message_mode",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// Reasoning effort requested from the model (sent as the session's `reasoningEffort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// `low`
    Low,
    /// `medium`
    Medium,
    /// `high`
    High,
    /// `xhigh`
    Xhigh,
    /// `max`
    Max,
}

impl ReasoningEffort {
    /// The values accepted by the SDK's session configuration.
    pub const ALLOWED: &'static [&'static str] = &["low", "medium", "high", "xhigh", "max"];

    /// The value as sent to the runtime.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "xhigh" => Ok(Self::Xhigh),
            "max" => Ok(Self::Max),
            other => Err(ConfigError::not_one_of(
                "reasoning_effort",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// Which runtime client mode a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMode {
    /// The runtime as a user runs it: ambient configuration, instructions and tools (default).
    #[default]
    CopilotCli,
    /// Framework-owned storage, no ambient configuration, no tools unless listed.
    Empty,
}

impl ClientMode {
    const ALLOWED: &'static [&'static str] = &["copilot-cli", "empty"];

    /// The value as written in configuration: `copilot-cli` or `empty`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CopilotCli => "copilot-cli",
            Self::Empty => "empty",
        }
    }

    fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "copilot-cli" => Ok(Self::CopilotCli),
            "empty" => Ok(Self::Empty),
            other => Err(ConfigError::not_one_of("client_mode", other, Self::ALLOWED)),
        }
    }
}

/// The `detail` written into every outgoing OpenAI image part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageDetail {
    /// `auto`
    Auto,
    /// `low`
    Low,
    /// `high`
    High,
}

impl ImageDetail {
    const ALLOWED: &'static [&'static str] = &["auto", "low", "high"];

    /// The value as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Low => "low",
            Self::High => "high",
        }
    }

    fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "auto" => Ok(Self::Auto),
            "low" => Ok(Self::Low),
            "high" => Ok(Self::High),
            other => Err(ConfigError::not_one_of(
                "image_detail",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// A function applied to the SDK [`SessionConfig`] after every eval field has been mapped: the
/// escape hatch for SDK session settings that `CopilotEval` has no field for.
pub type SessionConfigFn = Arc<dyn Fn(SessionConfig) -> SessionConfig + Send + Sync>;

/// A validated eval configuration. Build it with [`CopilotEval::builder`].
///
/// Every field is documented on its builder method. Values are read-only after building; use
/// [`CopilotEval::to_builder`] to derive a variant (for example a baseline and a treatment).
#[derive(Clone)]
pub struct CopilotEval {
    pub(crate) name: String,
    pub(crate) model: Option<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) system_message_mode: SystemMessageMode,
    pub(crate) working_directory: Option<PathBuf>,
    pub(crate) reasoning_effort: Option<ReasoningEffort>,
    pub(crate) timeout_s: f64,
    pub(crate) max_tool_calls: Option<u32>,
    pub(crate) max_turns: u32,
    pub(crate) allowed_tools: Option<Vec<String>>,
    pub(crate) excluded_tools: Option<Vec<String>>,
    pub(crate) mcp_servers: IndexMap<String, McpServerConfig>,
    pub(crate) skill_directories: Vec<PathBuf>,
    pub(crate) disabled_skills: Vec<String>,
    pub(crate) custom_agents: Vec<CustomAgentConfig>,
    pub(crate) active_agent: Option<String>,
    pub(crate) auto_confirm: bool,
    pub(crate) client_mode: ClientMode,
    pub(crate) image_detail: Option<ImageDetail>,
    pub(crate) audit_requests: bool,
    pub(crate) streaming: bool,
    pub(crate) tools: Vec<Tool>,
    pub(crate) permission_handler: Option<Arc<dyn PermissionHandler>>,
    pub(crate) hooks: Option<Arc<dyn SessionHooks>>,
    pub(crate) pre_tool_guards: Vec<Arc<dyn PreToolGuard>>,
    pub(crate) session_config_fn: Option<SessionConfigFn>,
}

impl fmt::Debug for CopilotEval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CopilotEval")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("system_message_mode", &self.system_message_mode)
            .field("working_directory", &self.working_directory)
            .field("reasoning_effort", &self.reasoning_effort)
            .field("timeout_s", &self.timeout_s)
            .field("max_tool_calls", &self.max_tool_calls)
            .field("max_turns", &self.max_turns)
            .field("allowed_tools", &self.allowed_tools)
            .field("excluded_tools", &self.excluded_tools)
            .field("mcp_servers", &self.mcp_servers.keys().collect::<Vec<_>>())
            .field("skill_directories", &self.skill_directories)
            .field("disabled_skills", &self.disabled_skills)
            .field(
                "custom_agents",
                &self
                    .custom_agents
                    .iter()
                    .map(|a| &a.name)
                    .collect::<Vec<_>>(),
            )
            .field("active_agent", &self.active_agent)
            .field("auto_confirm", &self.auto_confirm)
            .field("client_mode", &self.client_mode)
            .field("image_detail", &self.image_detail)
            .field("audit_requests", &self.audit_requests)
            .field("streaming", &self.streaming)
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl CopilotEval {
    /// Start a builder with every field at its default.
    pub fn builder() -> CopilotEvalBuilder {
        CopilotEvalBuilder::default()
    }

    /// A builder holding this eval's values, to derive a variant.
    pub fn to_builder(&self) -> CopilotEvalBuilder {
        CopilotEvalBuilder {
            name: Some(self.name.clone()),
            model: self.model.clone(),
            instructions: self.instructions.clone(),
            system_message_mode: Some(self.system_message_mode.as_str().to_owned()),
            working_directory: self.working_directory.clone(),
            reasoning_effort: self.reasoning_effort.map(|e| e.as_str().to_owned()),
            timeout_s: Some(self.timeout_s),
            max_tool_calls: self.max_tool_calls,
            max_turns: Some(self.max_turns),
            allowed_tools: self.allowed_tools.clone(),
            excluded_tools: self.excluded_tools.clone(),
            mcp_servers: self.mcp_servers.clone(),
            skill_directories: self.skill_directories.clone(),
            disabled_skills: self.disabled_skills.clone(),
            custom_agents: self.custom_agents.clone(),
            active_agent: self.active_agent.clone(),
            auto_confirm: Some(self.auto_confirm),
            client_mode: Some(self.client_mode.as_str().to_owned()),
            image_detail: self.image_detail.map(|d| d.as_str().to_owned()),
            audit_requests: self.audit_requests,
            streaming: self.streaming,
            tools: self.tools.clone(),
            permission_handler: self.permission_handler.clone(),
            hooks: self.hooks.clone(),
            hooks_given_twice: false,
            pre_tool_guards: self.pre_tool_guards.clone(),
            session_config_fn: self.session_config_fn.clone(),
        }
    }

    /// The eval's name (reports use it as the eval id). Default `copilot`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The requested model id, or `None` for the runtime's default.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
    /// The wall-clock bound of one run in seconds, covering runtime start, session creation and
    /// the turns (cleanup may take longer; the result says how long it took).
    pub fn timeout_s(&self) -> f64 {
        self.timeout_s
    }
    /// The workspace given to the runtime, if one was set. When `None`, each run creates a fresh
    /// temporary directory (kept after the run; its path is on the result).
    pub fn working_directory(&self) -> Option<&std::path::Path> {
        self.working_directory.as_deref()
    }
    /// Advisory turn count (recorded, never enforced; `max_tool_calls` is the hard budget).
    pub fn max_turns(&self) -> u32 {
        self.max_turns
    }
    /// Whether the session streams token deltas (`stream: true` on Chat Completions requests).
    pub fn streaming(&self) -> bool {
        self.streaming
    }
    /// The configured client mode.
    pub fn client_mode(&self) -> ClientMode {
        self.client_mode
    }

    /// A JSON snapshot of the configuration for reports: every plain field, tool and agent names,
    /// MCP server names only (no commands, environment, URLs or headers).
    pub fn snapshot(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "model": self.model,
            "instructions": self.instructions,
            "system_message_mode": self.system_message_mode,
            "working_directory": self.working_directory,
            "reasoning_effort": self.reasoning_effort,
            "timeout_s": self.timeout_s,
            "max_tool_calls": self.max_tool_calls,
            "max_turns": self.max_turns,
            "allowed_tools": self.allowed_tools,
            "excluded_tools": self.excluded_tools,
            "mcp_servers": self.mcp_servers.keys().collect::<Vec<_>>(),
            "skill_directories": self.skill_directories,
            "disabled_skills": self.disabled_skills,
            "custom_agents": self.custom_agents.iter().map(|a| &a.name).collect::<Vec<_>>(),
            "active_agent": self.active_agent,
            "auto_confirm": self.auto_confirm,
            "client_mode": self.client_mode,
            "image_detail": self.image_detail,
            "audit_requests": self.audit_requests,
            "streaming": self.streaming,
            "tools": self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            "permission_handler": self.permission_handler.is_some(),
            "hooks": self.hooks.is_some(),
            "pre_tool_guards": self.pre_tool_guards.len(),
            "extra_session_config": self.session_config_fn.is_some(),
        })
    }

    /// Map the eval onto the SDK's session configuration (without credentials, which the run adds).
    ///
    /// Errors: the extra session-config function changed a field that this eval sets itself.
    pub(crate) fn session_config(
        &self,
        working_directory: &std::path::Path,
        controls: &Arc<Controls>,
    ) -> Result<SessionConfig, ConfigError> {
        let mut config = SessionConfig::default()
            .with_working_directory(working_directory.to_path_buf())
            .with_streaming(self.streaming);
        if let Some(model) = &self.model {
            config = config.with_model(model.clone());
        }
        if let Some(effort) = self.reasoning_effort {
            config = config.with_reasoning_effort(effort.as_str());
        }
        if let Some(instructions) = &self.instructions {
            config = config.with_system_message(
                github_copilot_sdk::SystemMessageConfig::new()
                    .with_mode(self.system_message_mode.as_str())
                    .with_content(instructions.clone()),
            );
        }
        if let Some(allowed) = &self.allowed_tools {
            config = config.with_available_tools(allowed.clone());
        }
        if let Some(excluded) = &self.excluded_tools {
            config = config.with_excluded_tools(excluded.clone());
        }
        if !self.mcp_servers.is_empty() {
            config = config.with_mcp_servers(self.mcp_servers.clone());
        }
        if !self.skill_directories.is_empty() {
            config = config
                .with_skill_directories(self.skill_directories.clone())
                .with_enable_skills(true);
        }
        if !self.disabled_skills.is_empty() {
            config = config.with_disabled_skills(self.disabled_skills.clone());
        }
        if !self.custom_agents.is_empty() {
            config = config.with_custom_agents(self.custom_agents.clone());
        }
        if let Some(agent) = &self.active_agent {
            config = config.with_agent(agent.clone());
        }
        if !self.tools.is_empty() {
            config = config.with_tools(controls.wrap_tools(&self.tools));
        }
        config = config.with_hooks(Arc::new(ControlHooks(controls.clone())));
        match (&self.permission_handler, self.auto_confirm) {
            (Some(handler), _) => config = config.with_permission_handler(handler.clone()),
            (None, true) => {
                config = config.with_permission_handler(Arc::new(
                    github_copilot_sdk::handler::ApproveAllHandler,
                ))
            }
            (None, false) => {}
        }
        if self.client_mode == ClientMode::Empty {
            config.available_tools = Some(self.allowed_tools.clone().unwrap_or_default());
        }
        if let Some(extra) = &self.session_config_fn {
            let before = MappedFields::of(&config);
            config = extra(config);
            MappedFields::of(&config).check_unchanged(&before)?;
        }
        if self.client_mode == ClientMode::Empty {
            check_empty_mode(&config)?;
            for (_, _, set) in EMPTY_MODE_SETTINGS {
                set(&mut config);
            }
        }
        Ok(config)
    }
}

/// The session settings empty mode forces: (name, required value, setter). The SDK's own empty
/// mode adds more defaults on top (telemetry, memory, session store, host git, experimental
/// features off; custom agents local only; no runtime-bundled skills).
type EmptyModeSetting = (&'static str, bool, fn(&mut SessionConfig));
const EMPTY_MODE_SETTINGS: [EmptyModeSetting; 5] = [
    ("enable_config_discovery", false, |c| {
        c.enable_config_discovery = Some(false)
    }),
    ("enable_file_hooks", false, |c| {
        c.enable_file_hooks = Some(false)
    }),
    ("enable_on_demand_instruction_discovery", false, |c| {
        c.enable_on_demand_instruction_discovery = Some(false)
    }),
    ("skip_custom_instructions", true, |c| {
        c.skip_custom_instructions = Some(true)
    }),
    ("enable_managed_settings", false, |c| {
        c.enable_managed_settings = Some(false)
    }),
];

/// Empty mode's settings may be left unset or set to the value empty mode needs; anything else
/// is a contradiction.
fn check_empty_mode(config: &SessionConfig) -> Result<(), ConfigError> {
    let values = [
        config.enable_config_discovery,
        config.enable_file_hooks,
        config.enable_on_demand_instruction_discovery,
        config.skip_custom_instructions,
        config.enable_managed_settings,
    ];
    for ((name, required, _), value) in EMPTY_MODE_SETTINGS.iter().zip(values) {
        if let Some(value) = value
            && value != *required
        {
            return Err(ConfigError::new(
                "extra_session_config",
                format!(
                    "sets {name} = {value}, which contradicts client_mode = \"empty\" (it needs {name} = {required}); remove the setting or use client_mode = \"copilot-cli\""
                ),
            ));
        }
    }
    Ok(())
}

/// The mapped fields that the escape hatch must not override (set them on the eval instead).
#[derive(PartialEq)]
struct MappedFields {
    model: Option<String>,
    reasoning_effort: Option<String>,
    working_directory: Option<PathBuf>,
    streaming: Option<bool>,
    available_tools: Option<Vec<String>>,
    excluded_tools: Option<Vec<String>>,
    skill_directories: Option<Vec<PathBuf>>,
    disabled_skills: Option<Vec<String>>,
    agent: Option<String>,
    tool_names: Option<Vec<String>>,
    system_message: Option<(Option<String>, Option<String>)>,
}

impl MappedFields {
    fn of(config: &SessionConfig) -> Self {
        Self {
            model: config.model.clone(),
            reasoning_effort: config.reasoning_effort.clone(),
            working_directory: config.working_directory.clone(),
            streaming: config.streaming,
            available_tools: config.available_tools.clone(),
            excluded_tools: config.excluded_tools.clone(),
            skill_directories: config.skill_directories.clone(),
            disabled_skills: config.disabled_skills.clone(),
            agent: config.agent.clone(),
            tool_names: config
                .tools
                .as_ref()
                .map(|tools| tools.iter().map(|t| t.name.clone()).collect()),
            system_message: config
                .system_message
                .as_ref()
                .map(|m| (m.mode.clone(), m.content.clone())),
        }
    }

    fn check_unchanged(&self, before: &Self) -> Result<(), ConfigError> {
        let changed = [
            ("model", self.model != before.model),
            (
                "reasoning_effort",
                self.reasoning_effort != before.reasoning_effort,
            ),
            (
                "working_directory",
                self.working_directory != before.working_directory,
            ),
            ("streaming", self.streaming != before.streaming),
            (
                "allowed_tools",
                self.available_tools != before.available_tools,
            ),
            (
                "excluded_tools",
                self.excluded_tools != before.excluded_tools,
            ),
            (
                "skill_directories",
                self.skill_directories != before.skill_directories,
            ),
            (
                "disabled_skills",
                self.disabled_skills != before.disabled_skills,
            ),
            ("active_agent", self.agent != before.agent),
            ("tools", self.tool_names != before.tool_names),
            ("instructions", self.system_message != before.system_message),
        ];
        match changed.iter().find(|(_, changed)| *changed) {
            Some((field, _)) => Err(ConfigError::new(
                "extra_session_config",
                format!(
                    "the function overrides `{field}`, which the eval sets itself; set `{field}` on the eval instead"
                ),
            )),
            None => Ok(()),
        }
    }
}

/// Builder of [`CopilotEval`]. Every setter records a value; [`build`](Self::build) validates
/// them all at once and reports the first invalid field.
#[derive(Default, Clone)]
pub struct CopilotEvalBuilder {
    name: Option<String>,
    model: Option<String>,
    instructions: Option<String>,
    system_message_mode: Option<String>,
    working_directory: Option<PathBuf>,
    reasoning_effort: Option<String>,
    timeout_s: Option<f64>,
    max_tool_calls: Option<u32>,
    max_turns: Option<u32>,
    allowed_tools: Option<Vec<String>>,
    excluded_tools: Option<Vec<String>>,
    mcp_servers: IndexMap<String, McpServerConfig>,
    skill_directories: Vec<PathBuf>,
    disabled_skills: Vec<String>,
    custom_agents: Vec<CustomAgentConfig>,
    active_agent: Option<String>,
    auto_confirm: Option<bool>,
    client_mode: Option<String>,
    image_detail: Option<String>,
    audit_requests: bool,
    streaming: bool,
    tools: Vec<Tool>,
    permission_handler: Option<Arc<dyn PermissionHandler>>,
    hooks: Option<Arc<dyn SessionHooks>>,
    hooks_given_twice: bool,
    pre_tool_guards: Vec<Arc<dyn PreToolGuard>>,
    session_config_fn: Option<SessionConfigFn>,
}

impl CopilotEvalBuilder {
    /// The eval's name, used as its id in reports. Non-empty; default `copilot`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// The model id to request (sent as the session's `model`; must be in the runtime's model
    /// catalog). Unset: the runtime's default.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
    /// System instructions; combined with the runtime's prompt per
    /// [`system_message_mode`](Self::system_message_mode). The user task is the run's prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
    /// `append` (default) or `replace`; used only with `instructions`.
    pub fn system_message_mode(mut self, mode: impl Into<String>) -> Self {
        self.system_message_mode = Some(mode.into());
        self
    }
    /// The workspace directory: the runtime process's cwd and the session's working directory,
    /// and the root of the result's file helpers. Must exist. Not a security sandbox.
    pub fn working_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_directory = Some(dir.into());
        self
    }
    /// `low`, `medium`, `high`, `xhigh` or `max`.
    pub fn reasoning_effort(mut self, effort: impl Into<String>) -> Self {
        self.reasoning_effort = Some(effort.into());
        self
    }
    /// Wall-clock bound of the run in seconds (finite, > 0; default 300), covering runtime start,
    /// session creation and all turns.
    pub fn timeout_s(mut self, seconds: f64) -> Self {
        self.timeout_s = Some(seconds);
        self
    }
    /// Hard cap on tool calls admitted after the caller's guards (0 admits none). The first call
    /// past it is denied, no further model request is forwarded, the session is aborted and the
    /// run ends with `tool_budget_exceeded`. Unset: no cap.
    pub fn max_tool_calls(mut self, max: u32) -> Self {
        self.max_tool_calls = Some(max);
        self
    }
    /// Advisory turn count, recorded in the snapshot and never enforced (default 25).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }
    /// Allowlist of tool names (built-in, MCP as `server-tool`, custom); sent as
    /// `availableTools`. Takes precedence over `excluded_tools` in the runtime.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }
    /// Blocklist of tool names; sent as `excludedTools`.
    pub fn excluded_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.excluded_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }
    /// Add an MCP server (SDK configuration, passed through). Its tools appear as `name-tool`.
    pub fn mcp_server(mut self, name: impl Into<String>, config: McpServerConfig) -> Self {
        self.mcp_servers.insert(name.into(), config);
        self
    }
    /// Add a skill directory (a skill folder holding `SKILL.md`, or a folder of skill folders).
    /// Must exist. Turns skills on for the session. Every run then validates the skills before
    /// the runtime starts and checks that the runtime discovered them before the prompt is sent;
    /// either failure ends the run with `skill_setup_error` ([`crate::skills`]).
    pub fn skill_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skill_directories.push(dir.into());
        self
    }
    /// Disable a skill by name.
    pub fn disabled_skill(mut self, name: impl Into<String>) -> Self {
        self.disabled_skills.push(name.into());
        self
    }
    /// Add a custom agent (SDK `CustomAgentConfig`). Names must be unique and non-empty.
    pub fn custom_agent(mut self, agent: CustomAgentConfig) -> Self {
        self.custom_agents.push(agent);
        self
    }
    /// The custom agent active when the session starts; must name one of `custom_agents`.
    pub fn active_agent(mut self, name: impl Into<String>) -> Self {
        self.active_agent = Some(name.into());
        self
    }
    /// Approve every permission request automatically when no permission handler is given
    /// (default `true`). A given handler is never replaced.
    pub fn auto_confirm(mut self, auto_confirm: bool) -> Self {
        self.auto_confirm = Some(auto_confirm);
        self
    }
    /// `copilot-cli` (default) or `empty`. Empty mode isolates the session's configuration: the
    /// run's runtime storage is private and removed afterwards; ambient configuration discovery,
    /// custom instructions (repository and user-level), file hooks and managed settings are off;
    /// no tools are available unless listed in `allowed_tools`; explicit skill directories still
    /// load. It isolates configuration, not the machine or the network.
    pub fn client_mode(mut self, mode: impl Into<String>) -> Self {
        self.client_mode = Some(mode.into());
        self
    }
    /// `auto`, `low` or `high`: rewrite the `detail` of every OpenAI image part of every model
    /// request before it is sent (HTTP and WebSocket); the audit records the value sent.
    pub fn image_detail(mut self, detail: impl Into<String>) -> Self {
        self.image_detail = Some(detail.into());
        self
    }
    /// Record what goes on the wire for each model request ([`crate::audit`]); a request that
    /// cannot be audited ends the run with `request_audit_error`.
    pub fn audit_requests(mut self, audit: bool) -> Self {
        self.audit_requests = audit;
        self
    }
    /// Stream token deltas (`assistant.message_delta` events; Chat Completions requests carry
    /// `stream: true`). Default `false`.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }
    /// Add an SDK tool with an in-process handler ([`Tool::with_handler`]). Names must be unique.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }
    /// The SDK permission handler for this session; it is never replaced by auto-approval.
    pub fn permission_handler(mut self, handler: Arc<dyn PermissionHandler>) -> Self {
        self.permission_handler = Some(handler);
        self
    }
    /// SDK session hooks. Its `on_pre_tool_use` runs as the first pre-tool guard (see
    /// [`pre_tool_guard`](Self::pre_tool_guard)); every other hook is passed to it unchanged.
    /// One hooks object per eval: a second call is a build error (combine them into one).
    pub fn hooks(mut self, hooks: Arc<dyn SessionHooks>) -> Self {
        if self.hooks.is_some() {
            self.hooks_given_twice = true;
        }
        self.hooks = Some(hooks);
        self
    }
    /// Add a caller pre-tool-use guard; guards run in the order added, after the `hooks`
    /// object's `on_pre_tool_use` and before the tool-call budget. Composition rules:
    /// [`controls`](crate::controls).
    pub fn pre_tool_guard(mut self, guard: Arc<dyn PreToolGuard>) -> Self {
        self.pre_tool_guards.push(guard);
        self
    }
    /// Escape hatch: a function applied to the SDK [`SessionConfig`] after every field above is
    /// mapped, for settings `CopilotEval` has no field for. It may not change a field the eval
    /// maps itself (model, instructions, tools, ...): the run then fails with a `ConfigError`
    /// naming that field.
    pub fn extra_session_config(
        mut self,
        f: impl Fn(SessionConfig) -> SessionConfig + Send + Sync + 'static,
    ) -> Self {
        self.session_config_fn = Some(Arc::new(f));
        self
    }

    /// Validate every field and build the eval.
    ///
    /// Errors ([`ConfigError`], naming the field): empty `name` or `model`; `timeout_s` not
    /// finite or not > 0; an unknown `system_message_mode`,
    /// `reasoning_effort`, `client_mode` or `image_detail`; a `working_directory` or skill
    /// directory that is not an existing directory; empty or duplicate tool names, custom agent
    /// names or allowlist entries; an `active_agent` that names no custom agent; and fields whose
    /// `hooks` given twice; with `client_mode = empty`, an `extra_session_config` that turns
    /// config discovery, file hooks, on-demand instructions or managed settings on, or custom
    /// instructions back on.
    pub fn build(self) -> Result<CopilotEval, ConfigError> {
        let name = self.name.unwrap_or_else(|| "copilot".to_owned());
        if name.trim().is_empty() {
            return Err(ConfigError::new(
                "name",
                "must not be empty; give the eval a name",
            ));
        }
        if let Some(model) = &self.model
            && model.trim().is_empty()
        {
            return Err(ConfigError::new(
                "model",
                "must not be empty; omit it to use the runtime's default model",
            ));
        }
        let timeout_s = self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        if !timeout_s.is_finite() || timeout_s <= 0.0 {
            return Err(ConfigError::new(
                "timeout_s",
                format!("{timeout_s} is not a positive number of seconds"),
            ));
        }
        let max_tool_calls = self.max_tool_calls;
        if self.hooks_given_twice {
            return Err(ConfigError::new(
                "hooks",
                "was given twice; hooks of the same kind would conflict, so combine them into one SessionHooks object (pre-tool checks can also be added with pre_tool_guard)",
            ));
        }
        let system_message_mode = self
            .system_message_mode
            .as_deref()
            .map(SystemMessageMode::parse)
            .transpose()?
            .unwrap_or_default();
        let reasoning_effort = self
            .reasoning_effort
            .as_deref()
            .map(ReasoningEffort::parse)
            .transpose()?;
        let client_mode = self
            .client_mode
            .as_deref()
            .map(ClientMode::parse)
            .transpose()?
            .unwrap_or_default();
        if client_mode == ClientMode::Empty
            && let Some(extra) = &self.session_config_fn
        {
            // Settings that contradict empty mode fail now, not at run time.
            check_empty_mode(&extra(SessionConfig::default()))?;
        }
        let image_detail = self
            .image_detail
            .as_deref()
            .map(ImageDetail::parse)
            .transpose()?;
        if let Some(dir) = &self.working_directory
            && !dir.is_dir()
        {
            return Err(ConfigError::new(
                "working_directory",
                format!(
                    "{} is not an existing directory; create it first",
                    dir.display()
                ),
            ));
        }
        for dir in &self.skill_directories {
            if !dir.is_dir() {
                return Err(ConfigError::new(
                    "skill_directories",
                    format!(
                        "{} is not an existing directory; pass a skill folder (holding SKILL.md) or a folder of them",
                        dir.display()
                    ),
                ));
            }
        }
        check_names("tools", self.tools.iter().map(|t| t.name.as_str()))?;
        check_names(
            "custom_agents",
            self.custom_agents.iter().map(|a| a.name.as_str()),
        )?;
        if let Some(allowed) = &self.allowed_tools {
            check_names("allowed_tools", allowed.iter().map(String::as_str))?;
        }
        if let Some(excluded) = &self.excluded_tools {
            check_names("excluded_tools", excluded.iter().map(String::as_str))?;
        }
        check_names(
            "disabled_skills",
            self.disabled_skills.iter().map(String::as_str),
        )?;
        if let Some(agent) = &self.active_agent
            && !self.custom_agents.iter().any(|a| &a.name == agent)
        {
            let known: Vec<&str> = self.custom_agents.iter().map(|a| a.name.as_str()).collect();
            return Err(ConfigError::new(
                "active_agent",
                format!(
                    "{agent:?} names no custom agent (known: {}); add it with custom_agent(...)",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
        Ok(CopilotEval {
            name,
            model: self.model,
            instructions: self.instructions.filter(|s| !s.is_empty()),
            system_message_mode,
            working_directory: self.working_directory,
            reasoning_effort,
            timeout_s,
            max_tool_calls,
            max_turns: self.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            allowed_tools: self.allowed_tools,
            excluded_tools: self.excluded_tools,
            mcp_servers: self.mcp_servers,
            skill_directories: self.skill_directories,
            disabled_skills: self.disabled_skills,
            custom_agents: self.custom_agents,
            active_agent: self.active_agent,
            auto_confirm: self.auto_confirm.unwrap_or(true),
            client_mode,
            image_detail,
            audit_requests: self.audit_requests,
            streaming: self.streaming,
            tools: self.tools,
            permission_handler: self.permission_handler,
            hooks: self.hooks,
            pre_tool_guards: self.pre_tool_guards,
            session_config_fn: self.session_config_fn,
        })
    }
}

/// Names in a list must be non-empty and unique.
fn check_names<'a>(
    field: &'static str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), ConfigError> {
    let mut seen = std::collections::BTreeSet::new();
    for name in names {
        if name.trim().is_empty() {
            return Err(ConfigError::new(field, "contains an empty name"));
        }
        if !seen.insert(name) {
            return Err(ConfigError::new(
                field,
                format!("names {name:?} twice; names must be unique"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controls() -> Arc<Controls> {
        Controls::new(None, vec![], None)
    }

    #[test]
    fn a_caller_permission_handler_is_never_replaced() {
        struct Deny;
        #[async_trait::async_trait]
        impl PermissionHandler for Deny {
            async fn handle(
                &self,
                _session_id: github_copilot_sdk::SessionId,
                _request_id: github_copilot_sdk::RequestId,
                _data: github_copilot_sdk::PermissionRequestData,
            ) -> github_copilot_sdk::handler::PermissionResult {
                github_copilot_sdk::handler::PermissionResult::NoResult
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let handler: Arc<dyn PermissionHandler> = Arc::new(Deny);
        let eval = CopilotEval::builder()
            .auto_confirm(true)
            .permission_handler(handler.clone())
            .build()
            .unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert!(Arc::ptr_eq(
            config.permission_handler.as_ref().unwrap(),
            &handler
        ));
        // Without a handler and without auto_confirm, none is installed.
        let eval = CopilotEval::builder().auto_confirm(false).build().unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert!(config.permission_handler.is_none());
    }

    #[test]
    fn hooks_twice_is_a_conflict() {
        struct NoHooks;
        impl SessionHooks for NoHooks {}
        let err = CopilotEval::builder()
            .hooks(Arc::new(NoHooks))
            .hooks(Arc::new(NoHooks))
            .build()
            .unwrap_err();
        assert_eq!(err.field, "hooks");
    }

    #[test]
    fn defaults_are_documented_values() {
        let eval = CopilotEval::builder().build().unwrap();
        assert_eq!(eval.name(), "copilot");
        assert_eq!(eval.timeout_s(), DEFAULT_TIMEOUT_S);
        assert_eq!(eval.max_turns(), DEFAULT_MAX_TURNS);
        assert!(eval.auto_confirm);
        assert_eq!(eval.client_mode(), ClientMode::CopilotCli);
    }

    #[test]
    fn closed_sets_name_the_field_and_allowed_values() {
        let err = CopilotEval::builder()
            .reasoning_effort("extreme")
            .build()
            .unwrap_err();
        assert_eq!(err.field, "reasoning_effort");
        assert_eq!(
            err.to_string(),
            "invalid eval field `reasoning_effort`: \"extreme\" is not one of: low, medium, high, xhigh, max"
        );
        let err = CopilotEval::builder()
            .system_message_mode("prepend")
            .build()
            .unwrap_err();
        assert_eq!(err.field, "system_message_mode");
        let err = CopilotEval::builder()
            .client_mode("sandbox")
            .build()
            .unwrap_err();
        assert!(err.message.contains("copilot-cli, empty"), "{err}");
        let err = CopilotEval::builder()
            .image_detail("ultra")
            .build()
            .unwrap_err();
        assert!(err.message.contains("auto, low, high"), "{err}");
    }

    #[test]
    fn numbers_are_range_checked() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = CopilotEval::builder().timeout_s(bad).build().unwrap_err();
            assert_eq!(err.field, "timeout_s");
        }
    }

    #[test]
    fn empty_mode_forces_isolation_and_rejects_contradictions() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder().client_mode("empty").build().unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert_eq!(
            config.available_tools,
            Some(vec![]),
            "no tools unless listed"
        );
        assert_eq!(config.enable_config_discovery, Some(false));
        assert_eq!(config.enable_file_hooks, Some(false));
        assert_eq!(config.enable_on_demand_instruction_discovery, Some(false));
        assert_eq!(config.skip_custom_instructions, Some(true));
        assert_eq!(config.enable_managed_settings, Some(false));

        let eval = CopilotEval::builder()
            .client_mode("empty")
            .allowed_tools(["view"])
            .build()
            .unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert_eq!(config.available_tools, Some(vec!["view".to_owned()]));

        let err = CopilotEval::builder()
            .client_mode("empty")
            .extra_session_config(|c| c.with_enable_file_hooks(true))
            .build()
            .unwrap_err();
        assert_eq!(err.field, "extra_session_config");
        assert!(err.message.contains("enable_file_hooks = true"), "{err}");
        // The same setting is fine in the default mode.
        CopilotEval::builder()
            .extra_session_config(|c| c.with_enable_file_hooks(true))
            .build()
            .unwrap();
    }

    #[test]
    fn paths_must_exist() {
        let err = CopilotEval::builder()
            .working_directory("/definitely/not/here")
            .build()
            .unwrap_err();
        assert_eq!(err.field, "working_directory");
        let err = CopilotEval::builder()
            .skill_directory("/definitely/not/here")
            .build()
            .unwrap_err();
        assert_eq!(err.field, "skill_directories");
    }

    #[test]
    fn names_are_unique_and_active_agent_must_exist() {
        let err = CopilotEval::builder()
            .allowed_tools(["view", "view"])
            .build()
            .unwrap_err();
        assert_eq!(err.field, "allowed_tools");
        let err = CopilotEval::builder()
            .custom_agent(CustomAgentConfig::new("reviewer", "Review."))
            .active_agent("writer")
            .build()
            .unwrap_err();
        assert_eq!(err.field, "active_agent");
        assert!(err.message.contains("reviewer"), "{err}");
    }

    #[test]
    fn mapping_sets_the_session_fields() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder()
            .model("gpt-test")
            .reasoning_effort("high")
            .instructions("Be brief.")
            .system_message_mode("replace")
            .allowed_tools(["create"])
            .streaming(true)
            .build()
            .unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert_eq!(config.model.as_deref(), Some("gpt-test"));
        assert_eq!(config.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(config.streaming, Some(true));
        assert_eq!(config.available_tools, Some(vec!["create".to_owned()]));
        let system = config.system_message.unwrap();
        assert_eq!(system.mode.as_deref(), Some("replace"));
        assert_eq!(system.content.as_deref(), Some("Be brief."));
        assert!(
            config.permission_handler.is_some(),
            "auto_confirm installs approval"
        );
    }

    #[test]
    fn escape_hatch_may_not_override_mapped_fields() {
        let dir = tempfile::tempdir().unwrap();
        let eval = CopilotEval::builder()
            .model("gpt-test")
            .extra_session_config(|c| c.with_model("other"))
            .build()
            .unwrap();
        let err = eval.session_config(dir.path(), &controls()).unwrap_err();
        assert_eq!(err.field, "extra_session_config");
        assert!(err.message.contains("`model`"), "{err}");

        let eval = CopilotEval::builder()
            .extra_session_config(|c| c.with_client_name("copilot-eval-test"))
            .build()
            .unwrap();
        let config = eval.session_config(dir.path(), &controls()).unwrap();
        assert_eq!(config.client_name.as_deref(), Some("copilot-eval-test"));
    }
}
