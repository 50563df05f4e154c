//! Skill evidence: what the run learned about the requested skills before the first model
//! request ([`SkillDiscovery`], filled by the run stage in [`crate::run::skills`]), and the skill
//! invocations read from the event log ([`skill_invocations`]).
//!
//! Invocations: each `skill.invoked` event (the model called the runtime's built-in `skill` tool
//! with `{"skill": NAME}`, a user invoked it, or an agent preloaded it) is one
//! [`SkillInvocation`] in `result.skill_invocations`. A preload (trigger [`CONTEXT_LOAD`]: a
//! custom agent's `skills:` list loaded into its context when it starts) is evidence of its own,
//! never a trigger: the model did not reach for the skill ([`SkillInvocation::is_preload`]).

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
    /// How the main agent's first model request offered it to the model, read from what the
    /// model received (the `<available_skills>` block of the prompt): `described` (its name and
    /// description), `name_only` (in the runtime's list of further skills, by name: the
    /// runtime's budget for descriptions ran out before it), or `not_offered`. Absent when no
    /// model request was seen (the run stopped before one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered: Option<SkillOffer>,
}

/// How a model request offered a skill to the model ([`RequestedSkill::offered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkillOffer {
    /// By name and description.
    Described,
    /// By name only, without its description.
    NameOnly,
    /// Not at all: neither its name nor its description reached the model.
    NotOffered,
}

impl SkillOffer {
    /// The value as written: `described`, `name_only`, `not_offered`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Described => "described",
            Self::NameOnly => "name_only",
            Self::NotOffered => "not_offered",
        }
    }
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
    /// Skills the runtime listed from a requested folder (its `SKILL.md` under one) that the
    /// check before the runtime did not see: a skill folder deeper than the folder's immediate
    /// subfolders (the runtime searches deeper), or one that appeared after that check. The
    /// model is offered them; the run warns of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// What the main agent's first model request offered the model (the `<available_skills>`
    /// block of its prompt); absent when no model request was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_saw: Option<OfferedSkills>,
}

/// The skills one model request offered the model, read from the `<available_skills>` block of
/// its prompt (its system and developer messages, the Responses `instructions`, and the
/// `skill` tool's description). Measured on runtime 1.0.102: the runtime renders the first
/// skills, in its order, with their description until a character budget runs out, then lists
/// further ones by name (`Additional skills available (invoke by name): a, b`) until a second
/// budget runs out, and counts the rest (`... and 641 more`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OfferedSkills {
    /// Skills offered with their description, in order.
    pub described: Vec<String>,
    /// Skills offered by name only, in order.
    pub name_only: Vec<String>,
    /// How many further skills the runtime said it left out (`... and N more`); 0 when none.
    #[serde(default)]
    pub left_out: u64,
}

impl OfferedSkills {
    /// How this request offered the skill `name`.
    pub fn offer(&self, name: &str) -> SkillOffer {
        if self.described.iter().any(|n| n == name) {
            SkillOffer::Described
        } else if self.name_only.iter().any(|n| n == name) {
            SkillOffer::NameOnly
        } else {
            SkillOffer::NotOffered
        }
    }

    /// Whether the request offered the skill `name` at all.
    pub fn offers(&self, name: &str) -> bool {
        self.offer(name) != SkillOffer::NotOffered
    }
}

/// The skills the model request `body` (its JSON: Chat Completions or Responses) offered the
/// model ([`OfferedSkills`]): empty when it holds no `<available_skills>` block. Pure.
pub fn offered_skills(body: &Value) -> OfferedSkills {
    let mut texts: Vec<&str> = Vec::new();
    if let Some(text) = body.get("instructions").and_then(Value::as_str) {
        texts.push(text);
    }
    for key in ["messages", "input"] {
        for item in body
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = item.get("role").and_then(Value::as_str).unwrap_or("");
            if role != "system" && role != "developer" {
                continue;
            }
            match item.get("content") {
                Some(Value::String(text)) => texts.push(text),
                Some(Value::Array(parts)) => texts.extend(
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str)),
                ),
                _ => {}
            }
        }
    }
    for tool in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = tool.get("function").unwrap_or(tool);
        if function.get("name").and_then(Value::as_str) == Some("skill")
            && let Some(text) = function.get("description").and_then(Value::as_str)
        {
            texts.push(text);
        }
    }
    let mut offered = OfferedSkills::default();
    for text in texts {
        let mut rest = text;
        while let Some(start) = rest.find("<available_skills>") {
            let block = &rest[start + "<available_skills>".len()..];
            let end = block.find("</available_skills>").unwrap_or(block.len());
            read_block(&block[..end], &mut offered);
            rest = &block[end..];
        }
    }
    offered
}

/// The line that lists further skills by name.
const BY_NAME: &str = "Additional skills available (invoke by name):";

/// Read one `<available_skills>` block into `offered`.
fn read_block(block: &str, offered: &mut OfferedSkills) {
    let mut rest = block;
    while let Some(start) = rest.find("<skill>") {
        let entry = &rest[start..];
        let end = entry.find("</skill>").unwrap_or(entry.len());
        let entry_text = &entry[..end];
        let name = between(entry_text, "<name>", "</name>").map(unescape);
        let described = between(entry_text, "<description>", "</description>")
            .is_some_and(|d| !d.trim().is_empty());
        if let Some(name) = name {
            if described {
                offered.described.push(name);
            } else {
                offered.name_only.push(name);
            }
        }
        rest = &entry[end..];
    }
    if let Some(at) = block.find(BY_NAME) {
        let line = block[at + BY_NAME.len()..]
            .lines()
            .next()
            .unwrap_or("")
            .trim();
        let (names, more) = match line.rsplit_once("... and ") {
            Some((names, more)) => (
                names,
                more.trim_end_matches(" more").trim().parse().unwrap_or(0),
            ),
            None => (line, 0),
        };
        offered.left_out += more;
        offered.name_only.extend(
            names
                .split(", ")
                .map(|n| unescape(n.trim()))
                .filter(|n| !n.is_empty()),
        );
    }
}

/// The text between the first `open` and the next `close`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// XML's five entities decoded (`&amp;` last).
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

impl SkillDiscovery {
    /// Whether the runtime discovered a skill of this name (enabled or not).
    pub fn discovered(&self, name: &str) -> bool {
        self.discovered.iter().any(|s| s.name == name)
    }
}

/// The `trigger` of a `skill.invoked` event for a custom agent's preload: the runtime loads
/// each skill of the agent's `skills:` list into its context when the agent starts.
pub const CONTEXT_LOAD: &str = "context-load";

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

impl SkillInvocation {
    /// Whether this is a custom agent's preload (trigger [`CONTEXT_LOAD`]) rather than a
    /// trigger: the runtime loaded the skill because the agent lists it in `skills:`, not
    /// because the model (or a user) invoked it.
    pub fn is_preload(&self) -> bool {
        self.trigger.as_deref() == Some(CONTEXT_LOAD)
    }
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
