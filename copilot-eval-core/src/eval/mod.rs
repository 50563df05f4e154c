//! Eval configuration: [`CopilotEval`] and its validating builder.
//!
//! An eval is everything a run needs besides the prompt: the model, instructions, workspace,
//! budgets, tools and agents. It is built once with [`CopilotEval::builder`] and validated when
//! [`CopilotEvalBuilder::build`] is called: an invalid value is a
//! [`ConfigError`](crate::ConfigError) naming the field and the allowed values, before any
//! runtime process is started. A field whose capability has not been built yet is rejected with
//! "not supported yet", never silently dropped.
//!
//! This module is plain data and validation: the eval ([`CopilotEval`], here), its builder
//! (`builder.rs`), its closed-set options (`options.rs`), the caller guards it stores
//! ([`PreToolGuard`], `guard.rs`) and the session hatch ([`HatchPoint`], `hatch.rs`). Mapping an eval onto the SDK's session configuration is the
//! run's job ([`run`](mod@crate::run)).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use github_copilot_sdk::handler::{PermissionHandler, UserInputHandler};
use github_copilot_sdk::hooks::SessionHooks;
use github_copilot_sdk::{CustomAgentConfig, IndexMap, McpServerConfig, SessionConfig, Tool};

mod builder;
mod guard;
mod hatch;
mod options;
mod paths;
mod pending;
mod prompt;
mod snapshot;
#[cfg(test)]
mod tests;

pub use builder::CopilotEvalBuilder;
pub use guard::{PreToolGuard, guard_fn};
pub use hatch::{HatchError, HatchFuture, HatchPoint, SessionHatchFn};
pub use options::{
    Ablate, ClientMode, ImageDetail, ReasoningEffort, SYSTEM_PROMPT_SECTIONS, SandboxMode,
    SandboxSettings, SandboxValue, SectionAction, SystemMessageMode,
};

pub(crate) use options::{EMPTY_MODE_SETTINGS, check_empty_mode};
pub use prompt::{
    AgentMode, Attachment, AttachmentAt, AttachmentError, GitHubReference, GitHubReferenceKind,
    Prompt,
};
pub use snapshot::{EvalSnapshot, SectionEdit};

/// A custom agent added from a file whose id is not its file name's id: `file_id` is the id the
/// file name gives (`customization::agent::agent_name`), `id` the agent's
/// (its front-matter `name`), `path` the file as resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileNamedAgent {
    /// The id the file name gives (`planner` for `planner.agent.md`).
    pub file_id: String,
    /// The agent's id, from its front-matter `name` (`Planner`).
    pub id: String,
    /// The agent file, absolute.
    pub path: std::path::PathBuf,
}

/// Default `timeout_s`: 300 seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;
/// Default advisory `max_turns`: 25.
pub const DEFAULT_MAX_TURNS: u32 = 25;

/// A function applied to the SDK [`SessionConfig`] after every eval field has been mapped: the
/// escape hatch for SDK session settings that `CopilotEval` has no field for.
pub type SessionConfigFn = Arc<dyn Fn(SessionConfig) -> SessionConfig + Send + Sync>;

/// What [`CopilotEvalBuilder::build`] calls with its error and the caller's source line before
/// returning the error (set by [`EvalContext::eval`](crate::harness::EvalContext::eval): the
/// test then reports an invalid setting as a setup `error`, not as a `failed` from an unwrap).
pub(crate) type ConfigErrorNote =
    Arc<dyn Fn(&crate::ConfigError, &'static std::panic::Location<'static>) + Send + Sync>;

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
    pub(crate) system_message_sections: Vec<(String, SectionAction)>,
    pub(crate) working_directory: Option<PathBuf>,
    pub(crate) reasoning_effort: Option<ReasoningEffort>,
    pub(crate) timeout_s: f64,
    pub(crate) max_tool_calls: Option<u32>,
    pub(crate) max_turns: u32,
    pub(crate) allowed_tools: Option<Vec<String>>,
    pub(crate) excluded_tools: Option<Vec<String>>,
    pub(crate) mcp_servers: IndexMap<String, McpServerConfig>,
    /// The names among `mcp_servers` added with `optional_mcp_server`.
    pub(crate) optional_mcp_servers: Vec<String>,
    /// The in-process MCP mocks among `mcp_servers` (`mcp_mock`): the run tags its requests to
    /// them and claims the calls they received from its session.
    pub(crate) mcp_mocks: Vec<crate::mcp::McpMock>,
    pub(crate) skill_directories: Vec<PathBuf>,
    pub(crate) disabled_skills: Vec<String>,
    pub(crate) custom_agents: Vec<CustomAgentConfig>,
    /// The agents of `custom_agents` added from a file whose id is not the file name's.
    pub(crate) file_named_agents: Vec<FileNamedAgent>,
    /// The files the configuration was read from: each `custom_agent_file` (and a repository's
    /// agent files), a repository's instructions files. With `skill_directories`, the eval's
    /// inputs on disk (`ctx.compare` warns when the other side's session read one).
    pub(crate) input_files: Vec<PathBuf>,
    pub(crate) active_agent: Option<String>,
    pub(crate) default_agent_excluded_tools: Option<Vec<String>>,
    pub(crate) auto_confirm: bool,
    pub(crate) client_mode: ClientMode,
    pub(crate) image_detail: Option<ImageDetail>,
    pub(crate) audit_requests: bool,
    /// Never run on a pooled runtime ([`CopilotEvalBuilder::fresh_runtime`]).
    pub(crate) fresh_runtime: bool,
    /// The session's confinement ([`CopilotEvalBuilder::sandbox`]): its mode, the folders and
    /// ports the eval declares, the package it may read.
    pub(crate) sandbox: SandboxSettings,
    pub(crate) streaming: bool,
    pub(crate) tools: Vec<Tool>,
    pub(crate) permission_handler: Option<Arc<dyn PermissionHandler>>,
    pub(crate) user_input_handler: Option<Arc<dyn UserInputHandler>>,
    pub(crate) hooks: Option<Arc<dyn SessionHooks>>,
    pub(crate) pre_tool_guards: Vec<Arc<dyn PreToolGuard>>,
    pub(crate) session_config_fn: Option<SessionConfigFn>,
    /// The session hatch ([`CopilotEvalBuilder::session_hatch`]).
    pub(crate) session_hatch: Option<SessionHatchFn>,
    /// The tool whose call ends the run, left pending ([`CopilotEvalBuilder::end_at_tool_call`]).
    pub(crate) end_at_tool_call: Option<String>,
}

impl fmt::Debug for CopilotEval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CopilotEval")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("system_message_mode", &self.system_message_mode)
            .field("system_message_sections", &self.system_message_sections)
            .field("working_directory", &self.working_directory)
            .field("reasoning_effort", &self.reasoning_effort)
            .field("timeout_s", &self.timeout_s)
            .field("max_tool_calls", &self.max_tool_calls)
            .field("max_turns", &self.max_turns)
            .field("allowed_tools", &self.allowed_tools)
            .field("excluded_tools", &self.excluded_tools)
            .field("mcp_servers", &self.mcp_servers.keys().collect::<Vec<_>>())
            .field("optional_mcp_servers", &self.optional_mcp_servers)
            .field("mcp_mocks", &self.mcp_mocks)
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
            .field(
                "default_agent_excluded_tools",
                &self.default_agent_excluded_tools,
            )
            .field("auto_confirm", &self.auto_confirm)
            .field("client_mode", &self.client_mode)
            .field("image_detail", &self.image_detail)
            .field("audit_requests", &self.audit_requests)
            .field("fresh_runtime", &self.fresh_runtime)
            .field("sandbox", &self.sandbox)
            .field("streaming", &self.streaming)
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl CopilotEval {
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
    /// The sandbox settings: the mode and what the eval declares (docs/sandbox.md).
    pub fn sandbox(&self) -> &SandboxSettings {
        &self.sandbox
    }

    /// This eval without the inputs of `kinds` (the ablated side of `cargo copilot-eval
    /// --ablate`): [`Ablate::Skills`] empties its skill directories; [`Ablate::Agents`] its
    /// custom agents and active agent; [`Ablate::Instructions`] its `instructions`;
    /// [`Ablate::Mcp`] its MCP servers. Everything else (the model, the prompt's settings, the
    /// tools, the budgets, the working directory) stays.
    pub fn without(&self, kinds: &[Ablate]) -> CopilotEval {
        let mut eval = self.clone();
        for kind in kinds {
            match kind {
                Ablate::Skills => eval.skill_directories.clear(),
                Ablate::Agents => {
                    eval.custom_agents.clear();
                    eval.file_named_agents.clear();
                    eval.active_agent = None;
                }
                Ablate::Instructions => eval.instructions = None,
                Ablate::Mcp => {
                    eval.mcp_servers.clear();
                    eval.optional_mcp_servers.clear();
                    eval.mcp_mocks.clear();
                }
            }
        }
        eval
    }
}
