//! What the model was offered: the tool names and the skills of each model request as the run's
//! request proxy forwarded it, and the agent that sent it ([`ModelOffer`]). The session's configuration and
//! the runtime's own reports (an MCP server `connected` with its tool count, the tools a
//! subagent's `subagent.selected` announces) say what the runtime meant to offer; these records
//! say what the model received, so the checks that must not pass in silence read them: an MCP
//! server that gave the model no tool ([`super::mcp::offered_names`]), a custom agent whose
//! subagent got none of the tools its `tools` list names (`run/agent_ids.rs`).
//!
//! A request comes from a subagent when the request handler's context gives it the interaction
//! type `conversation-subagent` or a parent agent (runtime 1.0.102); its agent id is then the
//! subagent's instance id, the `agentId` its events carry.

/// One model request as the run's request proxy forwarded it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOffer {
    /// The id of the agent instance that sent it (the request handler's context), if any.
    pub agent_id: Option<String>,
    /// Whether a subagent sent it (interaction type `conversation-subagent`, or a parent agent).
    pub subagent: bool,
    /// The names of the tools the request offered the model, in request order (function and
    /// custom tools by name, a provider's built-in tools by `type`).
    pub tools: Vec<String>,
    /// The skills the request's prompt offered the model ([`super::skills::offered_skills`]):
    /// with their description, by name only, or counted as left out.
    pub skills: super::skills::OfferedSkills,
}

impl ModelOffer {
    /// The offer of a request whose JSON is `payload`, sent by `agent_id` (a subagent when
    /// `subagent`). `None` for a continuation that carries no `tools` of its own (a WebSocket
    /// message naming a `previous_response_id`): it offers what the response it continues
    /// offered, which its own record already says.
    pub fn of(
        payload: &serde_json::Value,
        agent_id: Option<String>,
        subagent: bool,
    ) -> Option<Self> {
        let continuation = payload
            .get("previous_response_id")
            .is_some_and(|v| !v.is_null());
        if continuation && payload.get("tools").is_none() {
            return None;
        }
        Some(Self {
            agent_id: agent_id.filter(|a| !a.is_empty()),
            subagent,
            tools: tool_names(payload),
            skills: super::skills::offered_skills(payload),
        })
    }
}

/// The names of the tools a model request's JSON offers, in request order (function/custom
/// tools by name, built-in provider tools by `type`); empty when it has no `tools` list.
pub fn tool_names(payload: &serde_json::Value) -> Vec<String> {
    names_of(payload.get("tools"))
}

/// The names of a `tools` list ([`tool_names`]).
pub(crate) fn names_of(tools: Option<&serde_json::Value>) -> Vec<String> {
    tools
        .and_then(serde_json::Value::as_array)
        .map(|tools| tools.iter().filter_map(tool_name).collect())
        .unwrap_or_default()
}

fn tool_name(tool: &serde_json::Value) -> Option<String> {
    let kind = tool.get("type").and_then(serde_json::Value::as_str);
    tool.get("function")
        .and_then(|f| f.get("name"))
        .or_else(|| tool.get("custom").and_then(|c| c.get("name")))
        .or_else(|| tool.get("name"))
        .and_then(serde_json::Value::as_str)
        .or(kind)
        .map(str::to_owned)
}

/// The names offered to the main agent, over all its requests, each once, in order of first
/// offer; `None` when the main agent made no request the proxy saw.
pub fn main_agent_tools(offers: &[ModelOffer]) -> Option<Vec<String>> {
    union(offers.iter().filter(|o| !o.subagent))
}

/// The names offered to the subagent whose instance id is `agent_id`, over all its requests,
/// each once, in order of first offer; `None` when it made no request the proxy saw.
pub fn subagent_tools(offers: &[ModelOffer], agent_id: &str) -> Option<Vec<String>> {
    union(
        offers
            .iter()
            .filter(|o| o.subagent && o.agent_id.as_deref() == Some(agent_id)),
    )
}

fn union<'a>(offers: impl Iterator<Item = &'a ModelOffer>) -> Option<Vec<String>> {
    let mut any = false;
    let mut names: Vec<String> = Vec::new();
    for offer in offers {
        any = true;
        for tool in &offer.tools {
            if !names.contains(tool) {
                names.push(tool.clone());
            }
        }
    }
    any.then_some(names)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn offers_are_read_per_agent_and_a_bare_continuation_is_no_offer() {
        let chat = json!({"model": "m", "messages": [], "tools": [
            {"type": "function", "function": {"name": "view"}},
            {"type": "custom", "custom": {"name": "apply_patch"}}
        ]});
        let main = ModelOffer::of(&chat, Some(String::new()), false).unwrap();
        assert_eq!(main.agent_id, None);
        assert_eq!(main.tools, ["view", "apply_patch"]);
        let responses =
            json!({"model": "m", "input": [], "tools": [{"type": "function", "name": "create"}]});
        let sub = ModelOffer::of(&responses, Some("A".into()), true).unwrap();
        assert_eq!(sub.tools, ["create"]);
        let empty = ModelOffer::of(
            &json!({"model": "m", "messages": []}),
            Some("B".into()),
            true,
        )
        .unwrap();
        assert!(empty.tools.is_empty(), "no `tools`: nothing offered");
        assert_eq!(
            ModelOffer::of(
                &json!({"model": "m", "previous_response_id": "r1", "input": []}),
                None,
                false
            ),
            None
        );
        let offers = [main.clone(), sub, empty, main];
        assert_eq!(
            main_agent_tools(&offers).unwrap(),
            ["view", "apply_patch"],
            "each name once"
        );
        assert_eq!(subagent_tools(&offers, "A").unwrap(), ["create"]);
        assert_eq!(subagent_tools(&offers, "B").unwrap(), Vec::<String>::new());
        assert_eq!(subagent_tools(&offers, "C"), None, "no request of C");
        assert_eq!(main_agent_tools(&[]), None);
    }
}
