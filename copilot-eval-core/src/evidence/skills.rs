//! Skill evidence: what the run learned about the requested skills before the first model
//! request ([`SkillDiscovery`], filled by the run stage in [`crate::skills`]), and the skill
//! invocations read from the event log ([`skill_invocations`]).
//!
//! Invocations: each `skill.invoked` event (the model called the runtime's built-in `skill` tool
//! with `{"skill": NAME}`, a user invoked it, or an agent preloaded it) is one
//! [`SkillInvocation`] in `result.skill_invocations`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LoggedEvent, SessionEventType};

/// One skill the eval requested through `skill_directories`, as validated locally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestedSkill {
    /// The skill's `name`.
    pub name: String,
    /// Its `SKILL.md`, canonicalised (symbolic links resolved), as the runtime reports paths.
    pub path: PathBuf,
    /// `false` when its front matter says `disable-model-invocation: true`: the runtime then
    /// leaves it out of the model's tool list (the model's `skill` call for it fails "Skill not
    /// found"), although `session.skills.list` lists it enabled; `warnings` says so before the
    /// prompt is sent. Read as `true` from a file written before it was recorded.
    #[serde(default = "invocable")]
    pub model_invocable: bool,
}

/// `model_invocable` of a requested skill read from a file that lacks it: what the runtime
/// assumes of a skill without `disable-model-invocation`.
fn invocable() -> bool {
    true
}

/// One skill the runtime discovered (`session.skills.list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiscoveredSkill {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where the runtime found it: `custom` (a configured skill directory), `project`,
    /// `inherited`, `personal-copilot`, `personal-agents`, `plugin`, `builtin`, `sdk`, or
    /// `unknown`.
    pub source: String,
    /// Its `SKILL.md` (absolute), when it has one.
    pub path: Option<PathBuf>,
    /// Whether it is enabled in the session.
    pub enabled: bool,
    /// Whether a user can invoke it as a slash command.
    pub user_invocable: bool,
}

/// What the run knows about the requested skills before the first model request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillDiscovery {
    /// The skills the eval's `skill_directories` hold (empty when local validation failed).
    pub requested: Vec<RequestedSkill>,
    /// Every skill the runtime listed, in its order (empty when it was not asked).
    pub discovered: Vec<DiscoveredSkill>,
    /// Names of requested skills the runtime did not list at their path.
    pub missing: Vec<String>,
    /// Names of requested skills the runtime listed as disabled although `disabled_skills`
    /// does not name them.
    pub disabled: Vec<String>,
    /// Warnings: the local validation's, then the runtime's load diagnostics (`runtime: ...`).
    pub warnings: Vec<String>,
    /// Errors: the local validation's, the runtime's load diagnostics, a failed request to the
    /// runtime.
    pub errors: Vec<String>,
    /// `true` once the runtime's list was received; `false` when local validation failed (the
    /// runtime was not started) or the runtime could not be asked.
    pub complete: bool,
}

impl SkillDiscovery {
    /// Whether the runtime discovered a skill of this name (enabled or not).
    pub fn discovered(&self, name: &str) -> bool {
        self.discovered.iter().any(|s| s.name == name)
    }
}

/// One `skill.invoked` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillInvocation {
    /// The skill's name (`name`).
    pub name: String,
    /// Its `SKILL.md` (`path`); `None` for a skill without a file (SDK-provided).
    pub path: Option<PathBuf>,
    /// Where the runtime found it (`source`, e.g. `custom`).
    pub source: Option<String>,
    /// What invoked it (`trigger`): `agent-invoked` (the model called the `skill` tool),
    /// `user-invoked`, or `context-load` (preloaded by a custom agent).
    pub trigger: Option<String>,
    /// The agent in whose context it was invoked: `None` for the main agent, else the
    /// subagent's `agentId`.
    pub agent_id: Option<String>,
}

/// Every `skill.invoked` event of the log, in order. Pure.
pub fn skill_invocations(log: &[LoggedEvent]) -> Vec<SkillInvocation> {
    log.iter()
        .filter(|l| l.event.kind() == SessionEventType::SkillInvoked)
        .map(|l| {
            let data = &l.event.data;
            let text = |key: &str| {
                data.get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
            };
            SkillInvocation {
                name: text("name").unwrap_or_default(),
                path: text("path").map(PathBuf::from),
                source: text("source"),
                trigger: text("trigger"),
                agent_id: l.event.agent_id.clone().filter(|a| !a.is_empty()),
            }
        })
        .collect()
}
