//! The eval's configuration as a report records it: [`EvalSnapshot`], made by
//! [`CopilotEval::snapshot`] and kept on the result (`configuration`) and the run record.
//!
//! It holds every plain field of the eval, the names of its tools, custom agents and MCP servers
//! (never an MCP server's command, environment, URL or headers), and for each handler, hook and
//! guard only whether there is one (or how many). It has no field for a credential, so nothing
//! needs redacting by key. Fields are written in the order declared here; a field added after
//! the first reports were written reads as its default from a file that lacks it.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    ClientMode, CopilotEval, ImageDetail, ReasoningEffort, SectionAction, SystemMessageMode,
};

/// The eval configuration of a run (names only for tools, agents and MCP servers; no
/// credentials): what the budget, the guards and the session were set to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalSnapshot {
    /// The eval's name (`name` key of the attribute, else the test function's name).
    pub name: String,
    /// The model requested; `null`: the runtime's default.
    pub model: Option<String>,
    /// The instructions given to the session, when any.
    pub instructions: Option<String>,
    /// How the instructions combine with the runtime's system prompt: `append`, `replace` or
    /// `customize`.
    pub system_message_mode: SystemMessageMode,
    /// In `customize` mode, each edited section of the runtime's system prompt, in order.
    #[serde(default)]
    pub system_message_sections: Vec<SectionEdit>,
    /// The session's working directory when the eval set one; `null`: a fresh temporary folder.
    pub working_directory: Option<PathBuf>,
    /// The reasoning effort requested, when any.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The wall-clock bound of one run, seconds.
    pub timeout_s: f64,
    /// The tool-call budget: calls beyond it are denied and the run stops
    /// `tool_budget_exceeded`; `null`: no budget.
    pub max_tool_calls: Option<u32>,
    /// The advisory turn count (recorded, never enforced).
    pub max_turns: u32,
    /// The only tools the session may use, when the eval listed them.
    pub allowed_tools: Option<Vec<String>>,
    /// Tools removed from the session, when the eval listed them.
    pub excluded_tools: Option<Vec<String>>,
    /// The names of the MCP servers configured, in order.
    pub mcp_servers: Vec<String>,
    /// The skill folders given to the session.
    pub skill_directories: Vec<PathBuf>,
    /// The skills disabled by name.
    pub disabled_skills: Vec<String>,
    /// The names of the custom agents, in order.
    pub custom_agents: Vec<String>,
    /// The custom agent the session starts with, when one is chosen.
    pub active_agent: Option<String>,
    /// Tools removed from the default agent only, when the eval listed them.
    #[serde(default)]
    pub default_agent_excluded_tools: Option<Vec<String>>,
    /// Whether permission requests are approved without a handler.
    pub auto_confirm: bool,
    /// The runtime client mode: `copilot_cli` or `empty`.
    pub client_mode: ClientMode,
    /// The `detail` written into every outgoing image part, when set.
    pub image_detail: Option<ImageDetail>,
    /// Whether every model request is audited (the run record's `audit`).
    pub audit_requests: bool,
    /// Whether the run never uses a warm runtime of the runner's pool.
    #[serde(default)]
    pub fresh_runtime: bool,
    /// The sandbox the eval asked for (`on`, `off`, `required`; docs/sandbox.md); the run
    /// record's `sandbox` says what the run got.
    #[serde(default)]
    pub sandbox: crate::eval::SandboxMode,
    /// Whether the session streams token deltas.
    pub streaming: bool,
    /// The names of the eval's own tools, in order.
    pub tools: Vec<String>,
    /// Whether the eval has a permission handler.
    pub permission_handler: bool,
    /// Whether the eval has a user-input handler.
    #[serde(default)]
    pub user_input_handler: bool,
    /// Whether the eval has session hooks.
    pub hooks: bool,
    /// How many pre-tool guards the eval has.
    #[serde(default)]
    pub pre_tool_guards: u64,
    /// Whether the eval changes the SDK's session configuration itself
    /// (`extra_session_config`).
    pub extra_session_config: bool,
    /// Whether the eval hands the run's SDK session to a closure of its own at defined points
    /// (`session_hatch`).
    #[serde(default)]
    pub session_hatch: bool,
    /// The tool whose call ends the run with the call left pending (`end_at_tool_call`);
    /// absent when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at_tool_call: Option<String>,
    /// The names among `mcp_servers` added with `optional_mcp_server`; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optional_mcp_servers: Vec<String>,
}

/// One edited section of the runtime's system prompt (`customize` mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SectionEdit {
    /// The section's id, e.g. `tone`.
    pub section: String,
    /// What is done to it.
    pub edit: SectionAction,
}

impl CopilotEval {
    /// The configuration for reports ([`EvalSnapshot`]): every plain field, tool and agent
    /// names, MCP server names only (no commands, environment, URLs or headers).
    pub fn snapshot(&self) -> EvalSnapshot {
        EvalSnapshot {
            name: self.name.clone(),
            model: self.model.clone(),
            instructions: self.instructions.clone(),
            system_message_mode: self.system_message_mode,
            system_message_sections: self
                .system_message_sections
                .iter()
                .map(|(id, action)| SectionEdit {
                    section: id.clone(),
                    edit: action.clone(),
                })
                .collect(),
            working_directory: self.working_directory.clone(),
            reasoning_effort: self.reasoning_effort,
            timeout_s: self.timeout_s,
            max_tool_calls: self.max_tool_calls,
            max_turns: self.max_turns,
            allowed_tools: self.allowed_tools.clone(),
            excluded_tools: self.excluded_tools.clone(),
            mcp_servers: self.mcp_servers.keys().cloned().collect(),
            skill_directories: self.skill_directories.clone(),
            disabled_skills: self.disabled_skills.clone(),
            custom_agents: self.custom_agents.iter().map(|a| a.name.clone()).collect(),
            active_agent: self.active_agent.clone(),
            default_agent_excluded_tools: self.default_agent_excluded_tools.clone(),
            auto_confirm: self.auto_confirm,
            client_mode: self.client_mode,
            image_detail: self.image_detail,
            audit_requests: self.audit_requests,
            fresh_runtime: self.fresh_runtime,
            sandbox: self.sandbox.mode,
            streaming: self.streaming,
            tools: self.tools.iter().map(|t| t.name.clone()).collect(),
            permission_handler: self.permission_handler.is_some(),
            user_input_handler: self.user_input_handler.is_some(),
            hooks: self.hooks.is_some(),
            pre_tool_guards: self.pre_tool_guards.len() as u64,
            extra_session_config: self.session_config_fn.is_some(),
            session_hatch: self.session_hatch.is_some(),
            end_at_tool_call: self.end_at_tool_call.clone(),
            optional_mcp_servers: self.optional_mcp_servers.clone(),
        }
    }
}
