//! The run's warning about a subagent dispatched by an agent file's name: a custom agent added
//! with [`custom_agent_file`](crate::eval::CopilotEvalBuilder::custom_agent_file) (or by
//! [`RepoConfig::apply`](crate::customization::RepoConfig::apply) from a `.github/agents`) whose
//! front-matter `name` makes its id differ from its file name is known to the runtime only by
//! that id, so a `task` call (scripted, recorded or live) passing the file name as `agent_type`
//! fails ("Unknown agent_type"). `lint` states the id as an `agent-id` note (shown with
//! `--verbose`); the run turns it into a warning when a dispatch actually used the file name.

use crate::eval::FileNamedAgent;
use crate::evidence::subagents::{SubagentInvocation, SubagentStatus};

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
