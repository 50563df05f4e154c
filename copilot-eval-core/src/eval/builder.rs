//! [`CopilotEvalBuilder`]: the setters of every eval field and [`build`](CopilotEvalBuilder::build),
//! which validates them all at once.

use std::path::PathBuf;
use std::sync::Arc;

use github_copilot_sdk::handler::{PermissionHandler, UserInputHandler};
use github_copilot_sdk::hooks::SessionHooks;
use github_copilot_sdk::{CustomAgentConfig, IndexMap, McpServerConfig, SessionConfig, Tool};

use super::{
    ClientMode, CopilotEval, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_S, ImageDetail, PreToolGuard,
    ReasoningEffort, SectionAction, SessionConfigFn, SystemMessageMode, check_empty_mode,
    options::check_sections, paths::Base,
};
use crate::error::ConfigError;

impl CopilotEval {
    /// Start a builder with every field at its default.
    ///
    /// ```
    /// use copilot_eval_core::CopilotEval;
    ///
    /// let eval = CopilotEval::builder()
    ///     .name("greets")
    ///     .model("claude-sonnet-4.5")
    ///     .timeout_s(120.0)
    ///     .max_tool_calls(3)
    ///     .build()
    ///     .expect("a valid eval");
    /// assert_eq!(eval.name(), "greets");
    /// assert_eq!(eval.model(), Some("claude-sonnet-4.5"));
    ///
    /// // Invalid values are refused by `build`, naming the field.
    /// let err = CopilotEval::builder().timeout_s(-1.0).build().unwrap_err();
    /// assert!(err.to_string().contains("timeout_s"), "{err}");
    /// ```
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
            system_message_sections: self.system_message_sections.clone(),
            working_directory: self.working_directory.clone(),
            reasoning_effort: self.reasoning_effort.map(|e| e.as_str().to_owned()),
            timeout_s: Some(self.timeout_s),
            max_tool_calls: self.max_tool_calls,
            max_turns: Some(self.max_turns),
            allowed_tools: self.allowed_tools.clone(),
            excluded_tools: self.excluded_tools.clone(),
            mcp_servers: self.mcp_servers.clone(),
            optional_mcp_servers: self.optional_mcp_servers.clone(),
            mcp_mocks: self.mcp_mocks.clone(),
            skill_directories: self.skill_directories.clone(),
            disabled_skills: self.disabled_skills.clone(),
            custom_agents: self.custom_agents.clone(),
            file_named_agents: self.file_named_agents.clone(),
            input_files: self.input_files.clone(),
            active_agent: self.active_agent.clone(),
            default_agent_excluded_tools: self.default_agent_excluded_tools.clone(),
            auto_confirm: Some(self.auto_confirm),
            client_mode: Some(self.client_mode.as_str().to_owned()),
            image_detail: self.image_detail.map(|d| d.as_str().to_owned()),
            audit_requests: self.audit_requests,
            fresh_runtime: self.fresh_runtime,
            sandbox: Some(self.sandbox.mode.as_str().to_owned()),
            sandbox_allow_read: self.sandbox.allow_read.clone(),
            sandbox_allow_write: self.sandbox.allow_write.clone(),
            sandbox_allow_connect: self
                .sandbox
                .allow_connect
                .iter()
                .map(|p| u32::from(*p))
                .collect(),
            streaming: self.streaming,
            tools: self.tools.clone(),
            permission_handler: self.permission_handler.clone(),
            user_input_handler: self.user_input_handler.clone(),
            hooks: self.hooks.clone(),
            hooks_given_twice: false,
            pre_tool_guards: self.pre_tool_guards.clone(),
            session_config_fn: self.session_config_fn.clone(),
            session_hatch: self.session_hatch.clone(),
            end_at_tool_call: self.end_at_tool_call.clone(),
            base: None,
            deferred_error: None,
            on_config_error: None,
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
    system_message_sections: Vec<(String, SectionAction)>,
    working_directory: Option<PathBuf>,
    reasoning_effort: Option<String>,
    timeout_s: Option<f64>,
    max_tool_calls: Option<u32>,
    max_turns: Option<u32>,
    allowed_tools: Option<Vec<String>>,
    excluded_tools: Option<Vec<String>>,
    mcp_servers: IndexMap<String, McpServerConfig>,
    optional_mcp_servers: Vec<String>,
    mcp_mocks: Vec<crate::mcp::McpMock>,
    skill_directories: Vec<PathBuf>,
    disabled_skills: Vec<String>,
    custom_agents: Vec<CustomAgentConfig>,
    /// The agents added by `custom_agent_file` whose id is not their file name's.
    pub(crate) file_named_agents: Vec<crate::eval::FileNamedAgent>,
    /// The files the eval's configuration was read from (agent files, instructions files).
    pub(crate) input_files: Vec<PathBuf>,
    active_agent: Option<String>,
    default_agent_excluded_tools: Option<Vec<String>>,
    auto_confirm: Option<bool>,
    client_mode: Option<String>,
    image_detail: Option<String>,
    audit_requests: bool,
    fresh_runtime: bool,
    sandbox: Option<String>,
    sandbox_allow_read: Vec<PathBuf>,
    sandbox_allow_write: Vec<PathBuf>,
    sandbox_allow_connect: Vec<u32>,
    streaming: bool,
    pub(super) tools: Vec<Tool>,
    permission_handler: Option<Arc<dyn PermissionHandler>>,
    user_input_handler: Option<Arc<dyn UserInputHandler>>,
    hooks: Option<Arc<dyn SessionHooks>>,
    hooks_given_twice: bool,
    pre_tool_guards: Vec<Arc<dyn PreToolGuard>>,
    session_config_fn: Option<SessionConfigFn>,
    /// Set by `session_hatch` (`hatch.rs`).
    pub(super) session_hatch: Option<super::SessionHatchFn>,
    /// Set by `end_at_tool_call` (`pending.rs`).
    pub(super) end_at_tool_call: Option<String>,
    base: Option<Base>,
    /// The first error of a setter that can fail (`custom_agent_file`), reported by `build()`.
    deferred_error: Option<ConfigError>,
    /// Told of `build()`'s error, with the caller's line ([`super::ConfigErrorNote`]).
    pub(crate) on_config_error: Option<super::ConfigErrorNote>,
}

impl CopilotEvalBuilder {
    /// The folder [`build`](Self::build) resolves the eval's relative paths against
    /// (`working_directory`, `skill_directory`, and stdio MCP servers' `working_directory`,
    /// the custom agents' included), once, before any of them reaches the runtime. Default: the
    /// package root for a builder from
    /// [`EvalContext::eval`](crate::harness::EvalContext::eval), else the process's current
    /// directory (cargo runs a test binary in its package root). Attachments are relative to the
    /// working directory instead ([`Prompt`](super::Prompt)).
    pub fn base_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base = Some(Base::new(dir, "the base directory"));
        self
    }
    /// `path` made absolute against the base of relative paths, with the text naming it for
    /// messages ([`Base::describe`]).
    pub(crate) fn resolve_path(&self, path: &std::path::Path) -> (PathBuf, String) {
        let base = self.base.clone().unwrap_or_else(Base::current);
        (base.resolve(path), base.describe(path))
    }
    /// Keep the first error of a setter that can fail; [`build`](Self::build) returns it.
    pub(crate) fn defer_error(mut self, error: ConfigError) -> Self {
        self.deferred_error.get_or_insert(error);
        self
    }
    /// The package root as the base of relative paths (what `ctx.eval()` sets).
    pub(crate) fn package_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base = Some(Base::new(dir, "the package root"));
        self
    }

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
    /// `append` (default) or `replace`, used only with `instructions`; or `customize`, which
    /// keeps the runtime's system prompt, applies the
    /// [`system_message_section`](Self::system_message_section) edits and adds the
    /// `instructions`, if any, after all sections (sent as the session's `systemMessage` with
    /// `mode: "customize"`, its `sections` and its `content`). Customize needs at least one edit
    /// or instructions.
    pub fn system_message_mode(mut self, mode: impl Into<String>) -> Self {
        self.system_message_mode = Some(mode.into());
        self
    }
    /// With `system_message_mode("customize")`: edit the section `id` of the runtime's system
    /// prompt (one of [`SYSTEM_PROMPT_SECTIONS`](super::SYSTEM_PROMPT_SECTIONS), e.g.
    /// `identity`, `tone`, `safety`). Each section at most once.
    ///
    /// ```
    /// use copilot_eval_core::{CopilotEval, SectionAction};
    ///
    /// let eval = CopilotEval::builder()
    ///     .system_message_mode("customize")
    ///     .system_message_section("identity", SectionAction::Replace("You are Botanica.".into()))
    ///     .system_message_section("tone", SectionAction::Append("Answer in one line.".into()))
    ///     .build()
    ///     .unwrap();
    /// # let _ = eval;
    /// // Edits without customize mode are refused before anything runs.
    /// let err = CopilotEval::builder()
    ///     .system_message_section("tone", SectionAction::Remove)
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("customize"), "{err}");
    /// ```
    pub fn system_message_section(mut self, id: impl Into<String>, action: SectionAction) -> Self {
        self.system_message_sections.push((id.into(), action));
        self
    }
    /// The workspace directory: the runtime process's cwd and the session's working directory,
    /// and the root of the result's file helpers. Must exist; a relative path is resolved
    /// against the [`base_directory`](Self::base_directory). Not a security sandbox.
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
    /// session creation and all turns. A timeout before the prompt was sent (the runtime still
    /// starting, the session not created yet) ends the run `execution_error`, an infrastructure
    /// stop; only one after it is the agent's `timeout`.
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
    /// Add an MCP server (SDK configuration, passed through), required: the runtime gives the
    /// model its tools as `name-tool`, cut to 64 characters. Before the prompt the run checks
    /// that the runtime connected it; a server that is not connected ends the run
    /// `mcp_setup_error` before any model request. Replaces a server of the same name (and makes
    /// it required).
    pub fn mcp_server(mut self, name: impl Into<String>, config: McpServerConfig) -> Self {
        let name = name.into();
        self.optional_mcp_servers.retain(|n| *n != name);
        self.mcp_mocks.retain(|m| m.name() != name);
        self.mcp_servers.insert(name, config);
        self
    }
    /// Add an MCP server the run may go on without, as the runtime itself does: the check
    /// before the prompt still records its status (`mcp_servers[].optional` is `true`), but
    /// only a required server ([`mcp_server`](Self::mcp_server)) that is not connected ends the
    /// run `mcp_setup_error`; the check does not wait for an optional server still starting.
    /// Replaces a server of the same name.
    pub fn optional_mcp_server(mut self, name: impl Into<String>, config: McpServerConfig) -> Self {
        let name = name.into();
        self.mcp_mocks.retain(|m| m.name() != name);
        if !self.optional_mcp_servers.contains(&name) {
            self.optional_mcp_servers.push(name.clone());
        }
        self.mcp_servers.insert(name, config);
        self
    }
    /// Add an in-process MCP mock server ([`McpMock`](crate::mcp::McpMock)), required, under
    /// its own name: as [`mcp_server`](Self::mcp_server) with the mock's HTTP configuration
    /// (127.0.0.1, its port allowed by the sandbox like any HTTP server's; a pooled runtime
    /// reaches it through the pool's MCP relay, docs/mcp.md), starting the mock if
    /// it is not running. After the run, the calls the mock received from the run's session are
    /// in its `mcp_servers[].received_calls`. Errors (at `build()`): the mock could not bind a
    /// loopback port or start.
    pub fn mcp_mock(self, mock: &crate::mcp::McpMock) -> Self {
        self.add_mock(mock, false)
    }
    /// Add an in-process MCP mock server the run may go on without: as
    /// [`optional_mcp_server`](Self::optional_mcp_server), otherwise as
    /// [`mcp_mock`](Self::mcp_mock).
    pub fn optional_mcp_mock(self, mock: &crate::mcp::McpMock) -> Self {
        self.add_mock(mock, true)
    }
    fn add_mock(self, mock: &crate::mcp::McpMock, optional: bool) -> Self {
        let config = match mock.config() {
            Ok(config) => config,
            Err(e) => {
                let message = format!(
                    "the MCP mock `{}` could not start on 127.0.0.1: {e} (is the loopback interface up?)",
                    mock.name()
                );
                return self.defer_error(ConfigError::new("mcp_servers", message));
            }
        };
        let mut builder = if optional {
            self.optional_mcp_server(mock.name(), config)
        } else {
            self.mcp_server(mock.name(), config)
        };
        builder.mcp_mocks.push(mock.clone());
        builder
    }
    /// Add a skill directory (a skill folder holding `SKILL.md`, or a folder of skill folders).
    /// Must exist. A relative path is resolved against the package root (for `ctx.eval()`; see
    /// [`base_directory`](Self::base_directory)) and handed to the runtime absolute. Turns skills on for the session. Every run then validates the skills before
    /// the runtime starts and checks that the runtime discovered them before the prompt is sent;
    /// either failure ends the run with `skill_setup_error` ([`crate::run::skills`]).
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
    /// Tools hidden from the default agent (the session's main agent, when no `active_agent` is
    /// set) while custom agents that list them in their `tools` keep them; sent as the session's
    /// `defaultAgent.excludedTools` (SDK `DefaultAgentConfig`). Names must be non-empty and
    /// unique. Unlike `excluded_tools`, which removes a tool from the whole session, this lets a
    /// test check that the main agent delegates the work to a custom agent.
    pub fn default_agent_excluded_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.default_agent_excluded_tools = Some(tools.into_iter().map(Into::into).collect());
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
    /// Record what goes on the wire for each model request ([`crate::run::proxy::audit`]); a request that
    /// cannot be audited ends the run with `request_audit_error`.
    pub fn audit_requests(mut self, audit: bool) -> Self {
        self.audit_requests = audit;
        self
    }
    /// `true`: run on a runtime started for this eval alone, even under `cargo copilot-eval`,
    /// which otherwise runs offline evals on warm pooled runtimes (docs/performance.md, "Warm
    /// runtimes"). Default `false`.
    pub fn fresh_runtime(mut self, fresh: bool) -> Self {
        self.fresh_runtime = fresh;
        self
    }
    /// The session's sandbox (docs/sandbox.md): `"on"` (default: the runtime and everything it
    /// starts run under a Landlock domain where the kernel has one, else unconfined with the
    /// warning `unsandboxed: <why>`), `"off"` (also `false`: never confined) or `"required"`
    /// (confined, or the run fails before its session starts). Takes a `bool` or a text.
    pub fn sandbox(mut self, mode: impl super::SandboxValue) -> Self {
        self.sandbox = Some(mode.sandbox_text());
        self
    }
    /// A folder (or file) the sandboxed session may read besides the defaults; relative paths
    /// are resolved against the package root; one that does not exist when the run starts
    /// grants nothing. Repeat for more.
    pub fn sandbox_allow_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.sandbox_allow_read.push(path.into());
        self
    }
    /// A folder (or file) the sandboxed session may write (and read) besides its working
    /// directory and its private home; relative paths are resolved against the package root;
    /// one that does not exist when the run starts grants nothing. Repeat for more.
    pub fn sandbox_allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.sandbox_allow_write.push(path.into());
        self
    }
    /// A TCP port (1 to 65535) the sandboxed session may connect to besides the ports it needs
    /// (its model server's, its MCP HTTP servers'). Landlock rules name ports, not hosts: the
    /// port is allowed on every address. Repeat for more.
    pub fn sandbox_allow_connect(mut self, port: u32) -> Self {
        self.sandbox_allow_connect.push(port);
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
    /// The SDK user-input handler for this session: with one, the runtime offers the model its
    /// `ask_user` tool and each call reaches `handler` (the question, its choices, whether a
    /// free-form answer is allowed); the handler's answer is the tool's result. Without one,
    /// the model is not offered `ask_user`. A resumed session (`ctx.resume`) keeps it.
    pub fn user_input_handler(mut self, handler: Arc<dyn UserInputHandler>) -> Self {
        self.user_input_handler = Some(handler);
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
    /// [`controls`](crate::run::controls).
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
    ///
    /// From [`EvalContext::eval`](crate::harness::EvalContext::eval), an error is also noted
    /// with the line that called `build`: if the test then fails (typically its `.unwrap()`),
    /// its outcome is an `error` of kind `setup` naming that line and the invalid field.
    #[track_caller]
    pub fn build(mut self) -> Result<CopilotEval, ConfigError> {
        let (at, note) = (std::panic::Location::caller(), self.on_config_error.take());
        let built = self.validate();
        if let (Err(error), Some(note)) = (&built, note) {
            note(error, at);
        }
        built
    }

    /// Every check of [`build`](Self::build), and the eval.
    fn validate(mut self) -> Result<CopilotEval, ConfigError> {
        if let Some(error) = self.deferred_error.take() {
            return Err(error);
        }
        let name = self.name.take().unwrap_or_else(|| "copilot".to_owned());
        let timeout_s = self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        self.check_scalars(&name, timeout_s)?;
        let max_tool_calls = self.max_tool_calls;
        let Choices {
            system_message_mode,
            reasoning_effort,
            client_mode,
            image_detail,
        } = self.choices()?;
        let base = self.base.clone().unwrap_or_else(Base::current);
        let working_directory = self
            .working_directory
            .as_deref()
            .map(|dir| base.existing_dir("working_directory", dir, "create it first"))
            .transpose()?;
        let skill_directories = self
            .skill_directories
            .iter()
            .map(|dir| {
                base.existing_dir(
                    "skill_directories",
                    dir,
                    "pass a skill folder (holding SKILL.md) or a folder of them",
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut mcp_servers = std::mem::take(&mut self.mcp_servers);
        base.mcp_servers("mcp_servers", "", &mut mcp_servers)?;
        let mut custom_agents = std::mem::take(&mut self.custom_agents);
        for agent in &mut custom_agents {
            let owner = format!("custom agent {:?}'s ", agent.name);
            if let Some(servers) = &mut agent.mcp_servers {
                base.mcp_servers("custom_agents", &owner, servers)?;
            }
        }
        self.check_lists(&custom_agents)?;
        self.check_end_at_tool_call()?;
        let sandbox = super::options::sandbox_settings(
            self.sandbox.as_deref(),
            [&self.sandbox_allow_read, &self.sandbox_allow_write],
            &self.sandbox_allow_connect,
            &base,
        )?;
        Ok(CopilotEval {
            name,
            model: self.model,
            instructions: self.instructions.filter(|s| !s.is_empty()),
            system_message_mode,
            system_message_sections: self.system_message_sections,
            working_directory,
            reasoning_effort,
            timeout_s,
            max_tool_calls,
            max_turns: self.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            allowed_tools: self.allowed_tools,
            excluded_tools: self.excluded_tools,
            mcp_servers,
            optional_mcp_servers: self.optional_mcp_servers,
            mcp_mocks: self.mcp_mocks,
            skill_directories,
            disabled_skills: self.disabled_skills,
            custom_agents,
            file_named_agents: self.file_named_agents,
            input_files: self.input_files,
            active_agent: self.active_agent,
            default_agent_excluded_tools: self.default_agent_excluded_tools,
            auto_confirm: self.auto_confirm.unwrap_or(true),
            client_mode,
            image_detail,
            audit_requests: self.audit_requests,
            fresh_runtime: self.fresh_runtime,
            sandbox,
            streaming: self.streaming,
            tools: self.tools,
            permission_handler: self.permission_handler,
            user_input_handler: self.user_input_handler,
            hooks: self.hooks,
            pre_tool_guards: self.pre_tool_guards,
            session_config_fn: self.session_config_fn,
            session_hatch: self.session_hatch,
            end_at_tool_call: self.end_at_tool_call,
        })
    }
}

/// The eval's settings that take one of a closed set of values, parsed by
/// [`build`](CopilotEvalBuilder::build).
struct Choices {
    system_message_mode: SystemMessageMode,
    reasoning_effort: Option<ReasoningEffort>,
    client_mode: ClientMode,
    image_detail: Option<ImageDetail>,
}

impl CopilotEvalBuilder {
    /// `build()`'s parse of the settings with a closed set of values, in order:
    /// `system_message_mode` (and the sections it allows), `reasoning_effort`, `client_mode`
    /// (with `empty`, the `extra_session_config` settings that contradict it fail now, not at
    /// run time), `image_detail`.
    fn choices(&self) -> Result<Choices, ConfigError> {
        let system_message_mode = self
            .system_message_mode
            .as_deref()
            .map(SystemMessageMode::parse)
            .transpose()?
            .unwrap_or_default();
        check_sections(
            system_message_mode,
            &self.system_message_sections,
            self.instructions.as_deref(),
        )?;
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
            check_empty_mode(&extra(SessionConfig::default()))?;
        }
        let image_detail = self
            .image_detail
            .as_deref()
            .map(ImageDetail::parse)
            .transpose()?;
        Ok(Choices {
            system_message_mode,
            reasoning_effort,
            client_mode,
            image_detail,
        })
    }

    /// `build()`'s checks of single values: a non-empty `name` and `model`, a positive finite
    /// `timeout_s`, `hooks` given once.
    fn check_scalars(&self, name: &str, timeout_s: f64) -> Result<(), ConfigError> {
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
        if !timeout_s.is_finite() || timeout_s <= 0.0 {
            return Err(ConfigError::new(
                "timeout_s",
                format!("{timeout_s} is not a positive number of seconds"),
            ));
        }
        if self.hooks_given_twice {
            return Err(ConfigError::new(
                "hooks",
                "was given twice; hooks of the same kind would conflict, so combine them into one SessionHooks object (pre-tool checks can also be added with pre_tool_guard)",
            ));
        }
        Ok(())
    }

    /// `build()`'s checks of the name lists (tools, custom agents, tool allow and deny lists,
    /// disabled skills: no empty or duplicate name) and of `active_agent` (one of
    /// `custom_agents`).
    fn check_lists(&self, custom_agents: &[CustomAgentConfig]) -> Result<(), ConfigError> {
        check_names("tools", self.tools.iter().map(|t| t.name.as_str()))?;
        check_names(
            "custom_agents",
            custom_agents.iter().map(|a| a.name.as_str()),
        )?;
        if let Some(allowed) = &self.allowed_tools {
            check_names("allowed_tools", allowed.iter().map(String::as_str))?;
        }
        if let Some(excluded) = &self.excluded_tools {
            check_names("excluded_tools", excluded.iter().map(String::as_str))?;
        }
        if let Some(excluded) = &self.default_agent_excluded_tools {
            check_names(
                "default_agent_excluded_tools",
                excluded.iter().map(String::as_str),
            )?;
        }
        check_names(
            "disabled_skills",
            self.disabled_skills.iter().map(String::as_str),
        )?;
        if let Some(agent) = &self.active_agent
            && !custom_agents.iter().any(|a| &a.name == agent)
        {
            let known: Vec<&str> = custom_agents.iter().map(|a| a.name.as_str()).collect();
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
        Ok(())
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
