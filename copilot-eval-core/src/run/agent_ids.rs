//! The run's warnings about how custom agents were dispatched: by an agent file's name
//! ([`file_name_dispatches`]), or with a `tools` list that gave the subagent no tool
//! ([`toolless_subagents`]).
//!
//! A subagent dispatched by an agent file's name: a custom agent added
//! with [`custom_agent_file`](crate::eval::CopilotEvalBuilder::custom_agent_file) (or by
//! [`RepoConfig::apply`](crate::customization::RepoConfig::apply) from a `.github/agents`) whose
//! front-matter `name` makes its id differ from its file name is known to the runtime only by
//! that id, so a `task` call (scripted, recorded or live) passing the file name as `agent_type`
//! fails ("Unknown agent_type"). `lint` states the id as an `agent-id` note (shown with
//! `--verbose`); the run turns it into a warning when a dispatch actually used the file name.

use github_copilot_sdk::CustomAgentConfig;

use crate::eval::FileNamedAgent;
use crate::evidence::subagents::{SubagentInvocation, SubagentStatus};

/// One warning per custom agent of `agents` whose `tools` list names tools but whose
/// subagent's model requests offered it none (`offered_tools` is empty: what the runtime gave
/// the subagent, seen by the run's request proxy): none of the names matches a tool of the
/// session, so the subagent ran with no tools (runtime 1.0.102 announces the list all the
/// same). A name that is an MCP server's (`mcp_servers`, the session's and the agent's own) is
/// named as such: its tools are `<server>/*` or `<server>-<tool>`, never the bare name. In
/// dispatch order, one per agent; empty when there is none. Pure.
pub(crate) fn toolless_subagents(
    agents: &[CustomAgentConfig],
    mcp_servers: &[String],
    invocations: &[SubagentInvocation],
) -> Vec<String> {
    let mut warned: Vec<&str> = Vec::new();
    let mut warnings = Vec::new();
    for invocation in invocations {
        if !invocation.offered_tools.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        let Some(agent) = agents.iter().find(|a| a.name == invocation.name) else {
            continue;
        };
        let Some(tools) = agent.tools.as_ref().filter(|t| !t.is_empty()) else {
            continue;
        };
        if warned.contains(&agent.name.as_str()) {
            continue;
        }
        warned.push(&agent.name);
        let servers: Vec<&String> = tools
            .iter()
            .filter(|t| {
                mcp_servers.contains(t)
                    || agent
                        .mcp_servers
                        .as_ref()
                        .is_some_and(|own| own.contains_key(t.as_str()))
            })
            .collect();
        let hint = match servers.first() {
            Some(server) => format!(
                "`{server}` is an MCP server's name, which matches no tool: list its tools as `{server}/*` (all of them) or `{server}-<tool>` (one)"
            ),
            None => "name each tool as the model sees it (e.g. `view`, `<server>-<tool>`), or an MCP server's tools as `<server>/*`".to_owned(),
        };
        warnings.push(format!(
            "custom agent `{}` lists tools {tools:?}, but its subagent's model was offered no tool (none of those names matches a tool of the session), so it ran with no tools: {hint}",
            agent.name
        ));
    }
    warnings
}

/// One warning per failed dispatch whose `agent_type` is the file-name id of one of `agents`
/// (not the agent's id), in dispatch order; empty when there is none. Pure.
pub(crate) fn file_name_dispatches(
    agents: &[FileNamedAgent],
    invocations: &[SubagentInvocation],
) -> Vec<String> {
    invocations
        .iter()
        .filter(|invocation| invocation.status == SubagentStatus::Failed)
        .filter_map(|invocation| {
            let asked = invocation.agent_type.as_deref()?;
            let agent = agents.iter().find(|a| a.file_id == asked && a.id != asked)?;
            Some(format!(
                "the model dispatched `task` with agent_type {asked:?}, the file name of the custom agent {}, whose id is {:?} (from its front-matter `name`): the runtime knows the agent only as {:?}, so the dispatch failed; pass `agent_type: {:?}` in the script or cassette, or change the agent's `name` (`cargo copilot-eval lint --verbose` lists such ids as `agent-id` notes)",
                agent.path.display(),
                agent.id,
                agent.id,
                agent.id
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_whose_subagent_was_offered_no_tool_is_named_once() {
        let agent = |name: &str, tools: &[&str]| {
            CustomAgentConfig::new(name, "p").with_tools(tools.iter().copied())
        };
        let agents = [
            agent("looker", &["fixture"]),
            agent("viewer", &["nothing_here"]),
            agent("fine", &["fixture/*"]),
            CustomAgentConfig::new("open", "p"),
        ];
        let ran = |name: &str, offered: Option<&[&str]>| {
            let mut invocation = SubagentInvocation::new(Some(format!("id-{name}")), name.into());
            invocation.status = SubagentStatus::Completed;
            invocation.offered_tools = offered.map(|o| o.iter().map(|t| t.to_string()).collect());
            invocation
        };
        let runs = [
            ran("looker", Some(&[])),
            ran("looker", Some(&[])),
            ran("viewer", Some(&[])),
            ran("fine", Some(&["fixture-lookup"])),
            ran("open", Some(&[])),
            ran("fine", None),
        ];
        let warnings = toolless_subagents(&agents, &["fixture".to_owned()], &runs);
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert!(
            warnings[0].starts_with("custom agent `looker` lists tools [\"fixture\"], but its subagent's model was offered no tool"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[0].contains("`fixture` is an MCP server's name, which matches no tool: list its tools as `fixture/*`"),
            "{}",
            warnings[0]
        );
        assert!(warnings[1].contains("`viewer`"), "{}", warnings[1]);
        assert!(
            warnings[1].contains("name each tool as the model sees it"),
            "{}",
            warnings[1]
        );
        assert!(toolless_subagents(&agents, &[], &runs[3..]).is_empty());
    }

    fn failed(agent_type: &str, status: SubagentStatus) -> SubagentInvocation {
        let mut invocation = SubagentInvocation::new(None, agent_type.to_owned());
        invocation.agent_type = Some(agent_type.to_owned());
        invocation.status = status;
        invocation
    }

    #[test]
    fn only_a_failed_dispatch_by_the_file_name_is_named() {
        let agents = [FileNamedAgent {
            file_id: "planner".into(),
            id: "Planner".into(),
            path: "/p/agents/planner.agent.md".into(),
        }];
        let runs = [
            failed("planner", SubagentStatus::Failed),
            failed("Planner", SubagentStatus::Failed),
            failed("other", SubagentStatus::Failed),
            failed("planner", SubagentStatus::Completed),
        ];
        let warnings = file_name_dispatches(&agents, &runs);
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(
            warnings[0].starts_with("the model dispatched `task` with agent_type \"planner\", the file name of the custom agent /p/agents/planner.agent.md, whose id is \"Planner\""),
            "{}",
            warnings[0]
        );
        assert!(file_name_dispatches(&[], &runs).is_empty());
    }
}
