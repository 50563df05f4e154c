use std::time::Duration;

use serde_json::json;

use super::*;
use crate::evidence::{RawEvent, map_events};

fn log(events: &[(&str, Option<&str>, Value)]) -> Vec<LoggedEvent> {
    let start = Instant::now();
    events
        .iter()
        .enumerate()
        .map(|(i, (kind, agent, data))| LoggedEvent {
            event: RawEvent {
                event_type: (*kind).to_owned(),
                id: format!("e{i}"),
                timestamp: String::new(),
                agent_id: agent.map(str::to_owned),
                ephemeral: false,
                data: data.clone(),
            },
            received: start + Duration::from_millis(10 * i as u64),
        })
        .collect()
}

fn dispatch(id: &str, agent_type: &str) -> [(&'static str, Option<&'static str>, Value); 2] {
    let args = json!({"agent_type": agent_type, "name": agent_type, "prompt": "Do it.", "description": "d"});
    [
        (
            "assistant.message",
            None,
            json!({"content": "", "toolRequests": [{"toolCallId": id, "name": "task", "arguments": args}]}),
        ),
        (
            "tool.execution_start",
            None,
            json!({"toolCallId": id, "toolName": "task", "arguments": args}),
        ),
    ]
}

#[test]
fn a_completed_dispatch_carries_the_child_evidence() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.extend([
        ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "agentDisplayName": "Helper", "agentType": "helper", "model": "m"})),
        ("subagent.selected", Some("A"), json!({"agentName": "helper", "agentDisplayName": "Helper", "tools": null})),
        ("assistant.message", Some("A"), json!({"content": "", "toolRequests": [{"toolCallId": "c2", "name": "create", "arguments": {"path": "f"}}]})),
        ("tool.execution_start", Some("A"), json!({"toolCallId": "c2", "toolName": "create", "arguments": {"path": "f"}})),
        ("tool.execution_complete", Some("A"), json!({"toolCallId": "c2", "success": true, "result": {"content": "ok"}})),
        ("assistant.message", Some("A"), json!({"content": "child done", "toolRequests": []})),
        ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "agentDisplayName": "Helper", "durationMs": 135, "totalToolCalls": 1, "totalTokens": 240})),
        ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": true, "result": {"content": "child done"}})),
        ("assistant.message", None, json!({"content": "parent done"})),
        ("session.idle", None, json!({})),
    ]);
    let ev = map_events(&log(&events));
    assert!(ev.complete(), "{:?}", ev.capture_errors);
    assert_eq!(ev.subagent_invocations.len(), 1);
    let s = &ev.subagent_invocations[0];
    assert_eq!(s.agent_id.as_deref(), Some("A"));
    assert_eq!(s.name, "helper");
    assert_eq!(s.display_name.as_deref(), Some("Helper"));
    assert_eq!(s.agent_type.as_deref(), Some("helper"));
    assert_eq!(
        s.status,
        SubagentStatus::Completed,
        "started then selected stays past selected"
    );
    assert_eq!(s.dispatch_tool_call_id.as_deref(), Some("c1"));
    assert_eq!(s.parent_agent_id, None);
    assert_eq!(s.prompt.as_deref(), Some("Do it."));
    assert_eq!(s.duration_ms, Some(135));
    assert_eq!(s.model.as_deref(), Some("m"));
    assert_eq!((s.total_tool_calls, s.total_tokens), (Some(1), Some(240)));
    assert_eq!(s.tool_calls.len(), 1);
    assert_eq!(s.tool_calls[0].name, "create");
    assert!(s.tool_was_called("create"));
    assert_eq!(s.final_response.as_deref(), Some("child done"));
    assert_eq!(ev.final_response.as_deref(), Some("parent done"));
}

#[test]
fn a_dispatch_that_never_ends_is_incomplete_evidence() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.push((
        "subagent.started",
        Some("A"),
        json!({"toolCallId": "c1", "agentName": "helper"}),
    ));
    let ev = map_events(&log(&events));
    let s = &ev.subagent_invocations[0];
    assert_eq!(s.status, SubagentStatus::Started);
    assert_eq!(s.duration_ms, None);
    assert!(
        ev.capture_errors.iter().any(|e| e == "subagent helper (A), dispatched by tool call c1, never reported completion or failure"),
        "{:?}",
        ev.capture_errors
    );
}

#[test]
fn failures_conflicts_and_unattributed_events() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.extend(dispatch("c9", "ghost"));
    events.extend([
        ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "helper"})),
        ("subagent.failed", Some("A"), json!({"toolCallId": "c1", "agentName": "helper", "error": "model error"})),
        ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "renamed"})),
        ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": false, "error": {"message": "model error"}})),
        ("tool.execution_complete", None, json!({"toolCallId": "c9", "success": false, "error": {"message": "unknown agent ghost"}})),
        ("subagent.completed", None, json!({"toolCallId": "c1"})),
        ("subagent.selected", None, json!({"agentName": "active"})),
    ]);
    let ev = map_events(&log(&events));
    let names: Vec<(&str, SubagentStatus)> = ev
        .subagent_invocations
        .iter()
        .map(|s| (s.name.as_str(), s.status))
        .collect();
    // `helper` ended twice (a capture error below); its `task` call failed, which decides.
    assert_eq!(
        names,
        [
            ("helper", SubagentStatus::Failed),
            ("ghost", SubagentStatus::Failed)
        ]
    );
    let ghost = &ev.subagent_invocations[1];
    assert_eq!(ghost.agent_id, None);
    assert_eq!(ghost.error.as_deref(), Some("unknown agent ghost"));
    assert_eq!(ghost.dispatch_tool_call_id.as_deref(), Some("c9"));
    let errors = ev.capture_errors.join("\n");
    assert!(
        errors.contains("subagent A changed name from helper to renamed"),
        "{errors}"
    );
    assert!(
        errors.contains("ended twice with conflicting states"),
        "{errors}"
    );
    assert!(
        errors.contains("subagent.completed has no agent id"),
        "{errors}"
    );
    assert!(
        !errors.contains("selected"),
        "the main agent's own selection is no dispatch: {errors}"
    );
}

/// Runtime 1.0.102: a subagent whose last message has no text gets `subagent.completed`,
/// then its `task` call fails; the dispatch is `failed` with the call's error, and the run
/// warns that it ended without a response.
#[test]
fn a_completed_subagent_whose_task_call_failed_is_failed_and_warned_of() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "writer").into();
    events.extend([
        ("subagent.started", Some("A"), json!({"toolCallId": "c1", "agentName": "writer"})),
        ("assistant.message", Some("A"), json!({"content": "", "toolRequests": []})),
        ("subagent.completed", Some("A"), json!({"toolCallId": "c1", "agentName": "writer", "durationMs": 5})),
        ("tool.execution_complete", None, json!({"toolCallId": "c1", "success": false, "error": {"message": "Agent completed but produced no response.", "code": "failure"}})),
    ]);
    let ev = map_events(&log(&events));
    assert!(ev.complete(), "{:?}", ev.capture_errors);
    let s = &ev.subagent_invocations[0];
    assert_eq!(s.status, SubagentStatus::Failed);
    assert!(!s.cancelled);
    assert_eq!(s.final_response, None);
    let error = s.error.as_deref().unwrap();
    assert!(
        error.starts_with("Agent completed but produced no response."),
        "{error}"
    );
    assert_eq!(
        ended_without_response(&ev.subagent_invocations),
        [format!(
            "subagent `writer` (task call c1) ended without a response (the runtime: {error}): the agent that dispatched it got no answer from it"
        )]
    );
}

#[test]
fn only_a_subagent_that_ended_without_an_answer_is_warned_of() {
    let mut answered = SubagentInvocation::new(Some("A".into()), "a".into());
    answered.status = SubagentStatus::Completed;
    answered.final_response = Some("done".into());
    let mut silent = SubagentInvocation::new(Some("B".into()), "b".into());
    silent.status = SubagentStatus::Completed;
    let mut cancelled = silent.clone();
    cancelled.cancelled = true;
    let mut running = silent.clone();
    running.status = SubagentStatus::Started;
    let mut never_started = SubagentInvocation::new(None, "c".into());
    never_started.status = SubagentStatus::Failed;
    let warnings = ended_without_response(&[answered, silent, cancelled, running, never_started]);
    assert_eq!(
        warnings,
        [
            "subagent `b` ended without a response (its last message had no text): the agent that dispatched it got no answer from it"
        ]
    );
}

#[test]
fn a_successful_task_call_without_subagent_events_is_a_capture_error() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.push((
        "tool.execution_complete",
        None,
        json!({"toolCallId": "c1", "success": true, "result": {"content": "?"}}),
    ));
    let ev = map_events(&log(&events));
    assert!(ev.subagent_invocations.is_empty());
    assert_eq!(
        ev.capture_errors,
        ["task call c1 completed, but no subagent event names it"]
    );
}

#[test]
fn the_duration_is_measured_when_the_runtime_gives_none() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.extend([
        (
            "subagent.started",
            Some("A"),
            json!({"toolCallId": "c1", "agentName": "helper"}),
        ),
        (
            "subagent.completed",
            Some("A"),
            json!({"toolCallId": "c1", "agentName": "helper"}),
        ),
    ]);
    let ev = map_events(&log(&events));
    assert_eq!(ev.subagent_invocations[0].duration_ms, Some(10));
    assert!(!ev.subagent_invocations[0].cancelled);
}

#[test]
fn a_cancelled_completion_is_marked() {
    let mut events: Vec<(&str, Option<&str>, Value)> = dispatch("c1", "helper").into();
    events.extend([
        (
            "subagent.started",
            Some("A"),
            json!({"toolCallId": "c1", "agentName": "helper"}),
        ),
        (
            "subagent.completed",
            Some("A"),
            json!({"toolCallId": "c1", "agentName": "helper", "cancelled": true}),
        ),
    ]);
    let ev = map_events(&log(&events));
    let s = &ev.subagent_invocations[0];
    assert_eq!((s.status, s.cancelled), (SubagentStatus::Completed, true));
}

#[test]
fn skill_invocations_are_read_from_the_log() {
    let ev = map_events(&log(&[
        (
            "skill.invoked",
            None,
            json!({"name": "greet", "path": "/s/greet/SKILL.md", "content": "x", "source": "custom", "trigger": "agent-invoked"}),
        ),
        (
            "skill.invoked",
            Some("A"),
            json!({"name": "sdk-skill", "path": "", "content": "x"}),
        ),
    ]));
    let names: Vec<(&str, Option<&str>)> = ev
        .skill_invocations
        .iter()
        .map(|s| (s.name.as_str(), s.agent_id.as_deref()))
        .collect();
    assert_eq!(names, [("greet", None), ("sdk-skill", Some("A"))]);
    assert_eq!(
        ev.skill_invocations[0].trigger.as_deref(),
        Some("agent-invoked")
    );
    assert_eq!(ev.skill_invocations[0].source.as_deref(), Some("custom"));
    assert_eq!(ev.skill_invocations[1].path, None);
}
