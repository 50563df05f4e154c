//! Skills, custom agents and repository configuration, end to end through the real runtime and
//! the loopback model server: skill discovery before the first model request, skill invocation
//! evidence, subagent dispatch evidence, a repository configuration folder, and the two recorded
//! cassette cases (`skill`, `custom-agent`) replayed with their discovery and dispatch evidence.
//! What a subagent's model was offered is read from its own model requests: an agent whose
//! `tools` list gives it none is a warning, and so is a subagent that ends without a response
//! (which the runtime fails after reporting it completed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use copilot_eval_core::cassette::ReplaySession;
use copilot_eval_core::customization::RepoConfig;
use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::evidence::subagents::SubagentStatus;
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, lookup_mock, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";

const GREET_SKILL: &str = "---\nname: greet\ndescription: Greets the user with the team's marker.\n---\n\n# Greeting\n\nEvery greeting includes the marker `TEAM-MARKER-7`.\n";

/// Write `files` (relative path, contents) under `root`.
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

/// Run `eval` (completed with the model, the working directory and a timeout) against a
/// scripted model.
async fn scripted(
    script: Script,
    eval: copilot_eval_core::eval::CopilotEvalBuilder,
    work: &Path,
    prompt: &str,
    runtime: &Path,
) -> (CopilotResult, ModelServer) {
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = eval
        .model(MODEL)
        .working_directory(work)
        .timeout_s(60.0)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        prompt,
        &RunOptions::offline(server.base_url()).runtime_path(runtime),
    )
    .await;
    assert_no_runtime_left(&result);
    (result, server)
}

#[tokio::test]
async fn a_requested_skill_is_discovered_before_the_prompt_and_its_invocation_recorded() {
    let Some(runtime) = runtime_for(
        "a_requested_skill_is_discovered_before_the_prompt_and_its_invocation_recorded",
    ) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    write(work.path(), &[("skills/greet/SKILL.md", GREET_SKILL)]);
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("skill", json!({"skill": "greet"})))
        .turn(ScriptedTurn::text("Hello! TEAM-MARKER-7"));
    let (result, server) = scripted(
        script,
        CopilotEval::builder().skill_directory(work.path().join("skills")),
        work.path(),
        "Greet me with the greet skill.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);

    // Discovery: requested, then listed by the runtime at the same path, before the prompt.
    let skill_md = work
        .path()
        .join("skills/greet/SKILL.md")
        .canonicalize()
        .unwrap();
    let discovery = result
        .skill_discovery
        .as_ref()
        .expect("skill folders were requested");
    assert!(discovery.complete);
    assert_eq!(discovery.requested.len(), 1);
    assert_eq!(discovery.requested[0].name, "greet");
    assert_eq!(discovery.requested[0].path, skill_md);
    let listed = discovery
        .discovered
        .iter()
        .find(|s| s.name == "greet")
        .expect("the runtime listed the skill");
    assert_eq!(listed.source, "custom");
    assert_eq!(
        listed.path.as_deref().map(|p| p.canonicalize().unwrap()),
        Some(skill_md.clone())
    );
    assert!(listed.enabled);
    assert!(discovery.missing.is_empty() && discovery.disabled.is_empty());
    assert!(result.skill_was_discovered("greet"));

    // Invocation: the model called the built-in `skill` tool; the runtime loaded the skill.
    assert!(result.tool_was_called_with("skill", &json!({"skill": "greet"})));
    assert_eq!(
        result.skill_invocations.len(),
        1,
        "{:?}",
        result.skill_invocations
    );
    let invoked = &result.skill_invocations[0];
    assert_eq!(invoked.name, "greet");
    assert_eq!(invoked.trigger.as_deref(), Some("agent-invoked"));
    assert_eq!(invoked.source.as_deref(), Some("custom"));
    assert_eq!(
        invoked.path.as_deref().map(|p| p.canonicalize().unwrap()),
        Some(skill_md)
    );
    assert_eq!(invoked.agent_id, None);
    assert!(result.skill_was_invoked("greet"));
    // Independently: the skill's text reached the model in the next request.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        serde_json::to_string(&requests[1].messages)
            .unwrap()
            .contains("TEAM-MARKER-7"),
        "the second model request carries the skill's instructions"
    );
}

#[tokio::test]
async fn a_skill_folder_without_a_valid_skill_fails_before_any_model_request() {
    // The real runtime is given, so "no runtime started" and "no request made" can fail: the run
    // must stop before it starts the runtime.
    let Some(runtime) =
        runtime_for("a_skill_folder_without_a_valid_skill_fails_before_any_model_request")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    write(
        work.path(),
        &[
            (
                "bad/greet/SKILL.md",
                "---\nname: greet/me\ndescription: Greets.\n---\nHi.\n",
            ),
            ("empty/notes.md", "no skill here"),
        ],
    );
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(Script::new([]).turn(ScriptedTurn::text("never")))).model(MODEL),
    )
    .await
    .unwrap();
    for (folder, rule) in [("bad", "skill-name-chars"), ("empty", "skill-md-missing")] {
        let eval = CopilotEval::builder()
            .model(MODEL)
            .working_directory(work.path())
            .skill_directory(work.path().join(folder))
            .timeout_s(60.0)
            .build()
            .unwrap();
        let result = run_with(
            &eval,
            "Greet me.",
            &RunOptions::offline(server.base_url()).runtime_path(&runtime.path),
        )
        .await;
        assert_eq!(
            result.stop_reason,
            StopReason::SkillSetupError,
            "{:?}",
            result.error
        );
        assert!(!result.success);
        let error = result.error.as_deref().unwrap();
        assert!(
            error.starts_with("skill setup failed before the runtime started: "),
            "{error}"
        );
        assert!(error.contains(&format!("error[{rule}]")), "{error}");
        let discovery = result.skill_discovery.as_ref().unwrap();
        assert!(!discovery.complete, "the runtime was never asked");
        assert!(discovery.discovered.is_empty());
        assert!(!discovery.errors.is_empty());
        assert_eq!(result.runtime_pid, None, "no runtime was started");
        assert!(result.raw_events.is_empty());
    }
    assert!(
        server.model_requests().is_empty(),
        "no model request was made"
    );
    assert!(
        server.requests().is_empty(),
        "the server was never contacted"
    );
}

/// The main agent dispatches `writer`, which creates `target` with "LGTM", then both answer.
fn writer_script(target: &Path) -> Script {
    Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write the review.", "description": "Write a review"}),
        ))
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "LGTM\n"}),
        ))
        .turn(ScriptedTurn::text("review written"))
        .turn(ScriptedTurn::text("The writer wrote the review."))
}

#[tokio::test]
async fn a_scripted_task_dispatch_records_the_subagent_and_its_own_tool_calls() {
    let Some(runtime) =
        runtime_for("a_scripted_task_dispatch_records_the_subagent_and_its_own_tool_calls")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("review.txt");
    let script = writer_script(&target);
    let (result, _server) = scripted(
        script,
        CopilotEval::builder().custom_agent(
            CustomAgentConfig::new("writer", "You write reviews into files.")
                .with_description("Writes reviews"),
        ),
        work.path(),
        "Have the writer write a review.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);
    // Independent verification: the child's file on disk.
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "LGTM\n");

    assert_eq!(
        result.subagent_invocations.len(),
        1,
        "{:#?}",
        result.subagent_invocations
    );
    let invocation = &result.subagent_invocations[0];
    let dispatch = &result.tool_calls_for("task")[0];
    assert_eq!(invocation.name, "writer");
    assert_eq!(invocation.status, SubagentStatus::Completed);
    assert_eq!(
        invocation.dispatch_tool_call_id.as_deref(),
        Some(dispatch.id.as_str())
    );
    assert_eq!(
        invocation.parent_agent_id, None,
        "the main agent dispatched it"
    );
    assert_eq!(invocation.prompt.as_deref(), Some("Write the review."));
    assert!(invocation.duration_ms.is_some());
    assert_eq!(invocation.final_response.as_deref(), Some("review written"));
    assert_eq!(invocation.total_tool_calls, Some(1));
    // The child's own tool call, attributed by its agent id.
    let agent_id = invocation.agent_id.clone().expect("the subagent's id");
    assert_eq!(invocation.tool_calls.len(), 1);
    let child_call = &invocation.tool_calls[0];
    assert_eq!(child_call.name, "create");
    assert_eq!(child_call.agent_id.as_deref(), Some(agent_id.as_str()));
    assert_eq!(child_call.success, Some(true));
    assert!(result.tool_calls.iter().any(|c| c.id == child_call.id));
    assert!(result.subagent_completed("writer"));
    assert_eq!(
        result.final_response.as_deref(),
        Some("The writer wrote the review.")
    );
}

/// A custom agent limited to `create`: the runtime announces its tools on `subagent.selected`
/// and the evidence keeps them (`announced_tools`), which are the tools its model request
/// offered; the subagent's own tool calls carry what the run added to the session's calls
/// (the permission the runtime asked), exactly as in `result.tool_calls`.
#[tokio::test]
async fn a_subagents_announced_tools_and_its_calls_are_in_the_evidence() {
    let Some(runtime) =
        runtime_for("a_subagents_announced_tools_and_its_calls_are_in_the_evidence")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("review.txt");
    let script = writer_script(&target);
    let (result, server) = scripted(
        script,
        CopilotEval::builder().custom_agent(
            CustomAgentConfig::new("writer", "You write reviews into files.")
                .with_description("Writes reviews")
                .with_tools(["create"]),
        ),
        work.path(),
        "Have the writer write a review.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let invocation = &result.subagent_invocations[0];
    let announced = invocation
        .announced_tools
        .clone()
        .expect("subagent.selected announced the tools");
    // What the runtime announced is what the subagent's model request offered.
    let subagent_request = server
        .model_requests()
        .into_iter()
        .find(|r| r.mentions("Write the review.") && !r.mentions("Have the writer"))
        .expect("the subagent's model request");
    let mut offered = subagent_request.tool_names.clone();
    offered.sort();
    let mut announced_sorted = announced.clone();
    announced_sorted.sort();
    assert_eq!(announced_sorted, offered);
    // The run's own record of what the subagent's requests offered says the same.
    let mut recorded = invocation.offered_tools.clone().expect("the offered tools");
    recorded.sort();
    assert_eq!(recorded, offered);
    assert!(announced.iter().any(|t| t == "create"), "{announced:?}");
    assert!(!announced.iter().any(|t| t == "view"), "{announced:?}");
    // The subagent's call is the session's call, with what the run added to it.
    let child_call = &invocation.tool_calls[0];
    let session_call = result
        .tool_calls
        .iter()
        .find(|c| c.id == child_call.id)
        .unwrap();
    assert_eq!(child_call, session_call);
    assert!(child_call.permission.is_some(), "{child_call:?}");
}

/// The quick start's configuration folder: `.github/copilot-instructions.md` and one agent.
fn quickstart_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/copilot-config")
}

#[tokio::test]
async fn a_repository_configuration_folder_gives_the_instructions_and_the_agent() {
    let Some(runtime) =
        runtime_for("a_repository_configuration_folder_gives_the_instructions_and_the_agent")
    else {
        return;
    };
    let config = RepoConfig::load(quickstart_config()).unwrap();
    assert_eq!(config.agent_names(), ["Release Reviewer"]);
    let rules: Vec<&str> = config.warnings().iter().map(|w| w.rule).collect();
    assert_eq!(rules, ["agent-id"], "{:?}", config.warnings());
    let instructions = config.instructions_text.clone().unwrap();
    let work = tempfile::tempdir().unwrap();
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "Release Reviewer", "name": "reviewer", "prompt": "Review: - fixed a bug", "description": "Review notes"}),
        ))
        .turn(ScriptedTurn::text("REVIEWED: add the SHIPPED-WITH-CARE tag line"))
        .turn(ScriptedTurn::text("The reviewer asks for the tag line."));
    let (result, server) = scripted(
        script,
        config.apply(CopilotEval::builder().name("repo-config")),
        work.path(),
        "Have the reviewer check my release notes.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3);
    let text = |i: usize| serde_json::to_string(&requests[i].messages).unwrap();
    // The repository instructions reached the main agent's system prompt; the agent file's body
    // is the subagent's prompt.
    let first_line = instructions.lines().find(|l| l.starts_with("- ")).unwrap();
    assert!(
        text(0).contains(&first_line[2..]),
        "instructions in the main request"
    );
    assert!(
        text(1).contains("You review release notes."),
        "the agent's prompt in its request"
    );
    let invocation = &result.subagent_invocations_for("Release Reviewer")[0];
    assert_eq!(invocation.status, SubagentStatus::Completed);
    assert_eq!(invocation.display_name.as_deref(), Some("Release Reviewer"));
}

fn cassette(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cassettes/copilot-sdk")
        .join(format!("{name}.yaml"))
}

#[tokio::test]
async fn the_recorded_skill_case_shows_discovery_and_invocation() {
    let Some(runtime) = runtime_for("the_recorded_skill_case_shows_discovery_and_invocation")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    write(
        work.path(),
        &[(
            ".test_skills/test-skill/SKILL.md",
            "---\nname: test-skill\ndescription: A test skill that adds a marker to responses\n---\n\n# Test Skill Instructions\n\nIMPORTANT: You MUST include the exact text \"PINEAPPLE_COCONUT_42\" somewhere in EVERY response you give. This is a mandatory requirement. Include it naturally in your response.\n",
        )],
    );
    let replay = ReplaySession::start(&cassette(
        "skills/should_load_and_apply_skill_from_skilldirectories",
    ))
    .await
    .unwrap();
    let eval = CopilotEval::builder()
        .name("skill")
        .model(replay.model())
        .working_directory(work.path())
        .skill_directory(work.path().join(".test_skills"))
        .timeout_s(60.0)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Say hello briefly using the test skill.",
        &replay.run_options().runtime_path(&runtime.path),
    )
    .await;
    replay.shutdown().await;
    assert_no_runtime_left(&result);
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let discovery = result.skill_discovery.as_ref().unwrap();
    assert!(discovery.complete && discovery.missing.is_empty());
    assert!(result.skill_was_discovered("test-skill"));
    let invoked: Vec<&str> = result
        .skill_invocations
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(invoked, ["test-skill"]);
    assert!(
        result
            .final_response
            .unwrap_or_default()
            .contains("PINEAPPLE_COCONUT_42")
    );
}

#[tokio::test]
async fn the_recorded_custom_agent_case_shows_no_dispatch() {
    let Some(runtime) = runtime_for("the_recorded_custom_agent_case_shows_no_dispatch") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let replay = ReplaySession::start(&cassette(
        "mcp_and_agents/should_accept_custom_agent_configuration_on_session_create",
    ))
    .await
    .unwrap();
    let eval = CopilotEval::builder()
        .name("custom-agent")
        .model(replay.model())
        .working_directory(work.path())
        .custom_agent(
            CustomAgentConfig::new("test-agent", "You are a helpful test agent.")
                .with_display_name("Test Agent")
                .with_description("A test agent for SDK testing")
                .with_infer(true),
        )
        .timeout_s(60.0)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "What is 5+5?",
        &replay.run_options().runtime_path(&runtime.path),
    )
    .await;
    replay.shutdown().await;
    assert_no_runtime_left(&result);
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(result.evidence_complete, "{:?}", result.capture_errors);
    // The recording answers directly: the agent was configured but never dispatched, and the
    // evidence says so (no invocation, no `task` call) instead of leaving a gap.
    assert!(
        result.subagent_invocations.is_empty(),
        "{:#?}",
        result.subagent_invocations
    );
    assert!(!result.tool_was_called("task"));
    assert_eq!(result.configuration.custom_agents, ["test-agent"]);
    assert!(result.final_response.unwrap_or_default().contains("10"));
    assert!(
        result.skill_discovery.is_none(),
        "no skill folder was requested"
    );
}

#[tokio::test]
async fn a_dispatch_cut_off_by_the_timeout_is_never_a_silent_gap() {
    let Some(runtime) = runtime_for("a_dispatch_cut_off_by_the_timeout_is_never_a_silent_gap")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // The subagent's model request never gets an answer.
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write.", "description": "Write"}),
        ))
        .hang();
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        // From the session's creation (the runtime's start does not count): ample for the
        // dispatch on a busy machine; the run then waits on the subagent's unanswered model
        // request until this timeout.
        .timeout_s(20.0)
        .custom_agent(CustomAgentConfig::new("writer", "You write.").with_description("Writes"))
        .build()
        .unwrap();
    let faults = TestFaults {
        clock_starts_at_session: Some(SessionClock::default()),
        ..TestFaults::default()
    };
    let result = run_with(
        &eval,
        "Have the writer write.",
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .test_faults(faults),
    )
    .await;
    assert_no_runtime_left(&result);
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.subagent_invocations.len(),
        1,
        "{:#?}",
        result.subagent_invocations
    );
    let invocation = &result.subagent_invocations[0];
    assert_eq!(invocation.name, "writer");
    // Measured: after the abort the runtime reports the subagent completed with
    // `cancelled: true`, and the `task` call never completes (a capture error names it): the
    // dispatch shows as not finished, never as a silent gap or a success.
    assert!(!result.subagent_completed("writer"));
    assert!(invocation.status.is_terminal(), "{invocation:#?}");
    assert!(invocation.cancelled, "{invocation:#?}");
    assert!(
        result
            .capture_errors
            .iter()
            .any(|e| e.contains("(task) has no completion")),
        "{:?}",
        result.capture_errors
    );
    assert!(!result.evidence_complete, "the task call has no completion");
}

/// A custom agent file whose front-matter `name` makes its id differ from its file name
/// (`planner.agent.md`, `name: Planner`): a scripted `task` dispatch by the file name fails in
/// the runtime, and the run says why in a warning naming the file and the id to use; the
/// dispatch by the id warns of nothing. The same for the agent added by `custom_agent_file`
/// and by a repository's `.github/agents` (`RepoConfig`).
#[tokio::test]
async fn a_dispatch_by_an_agent_files_name_is_a_warning_naming_the_id() {
    let Some(runtime) = runtime_for("a_dispatch_by_an_agent_files_name_is_a_warning_naming_the_id")
    else {
        return;
    };
    let files = tempfile::tempdir().unwrap();
    write(
        files.path(),
        &[(
            ".github/agents/planner.agent.md",
            "---\nname: Planner\ndescription: Plans the work.\n---\nPlan the work.\n",
        )],
    );
    let agent_file = files.path().join(".github/agents/planner.agent.md");
    let repo = RepoConfig::load(files.path()).unwrap();
    // The agent added by its file, and by the repository's configuration.
    let cases = [("planner", true), ("Planner", false)]
        .into_iter()
        .flat_map(|case| [(case, false), (case, true)]);
    for ((agent_type, warned), from_repo) in cases {
        let builder = if from_repo {
            repo.builder()
        } else {
            CopilotEval::builder().custom_agent_file(&agent_file)
        };
        let work = tempfile::tempdir().unwrap();
        let script = Script::new([])
            .turn(ScriptedTurn::tool_call(
                "task",
                json!({"agent_type": agent_type, "name": "plan", "prompt": "Plan it.", "description": "Plan"}),
            ))
            .turn(ScriptedTurn::text("PLANNED"))
            .turn(ScriptedTurn::text("done"));
        let (result, _server) =
            scripted(script, builder, work.path(), "Plan.", &runtime.path).await;
        let dispatch = &result.tool_calls_for("task")[0];
        let warnings: Vec<&String> = result
            .warnings
            .iter()
            .filter(|w| w.contains("dispatched `task`"))
            .collect();
        if warned {
            assert_eq!(dispatch.success, Some(false), "{dispatch:#?}");
            assert!(
                dispatch
                    .error
                    .as_deref()
                    .unwrap_or_default()
                    .contains("Unknown agent_type"),
                "{dispatch:#?}"
            );
            assert_eq!(warnings.len(), 1, "{:#?}", result.warnings);
            let expected = format!(
                "the model dispatched `task` with agent_type \"planner\", the file name of the custom agent {}, whose id is \"Planner\"",
                agent_file.canonicalize().unwrap().display()
            );
            assert!(warnings[0].starts_with(&expected), "{}", warnings[0]);
        } else {
            assert_eq!(dispatch.success, Some(true), "{dispatch:#?}");
            assert!(warnings.is_empty(), "{:#?}", result.warnings);
        }
    }
}

/// A custom agent whose `tools` list names the MCP server `fixture` bare: the runtime announces
/// the list as given, its subagent's model requests offer no tool at all (the oracle: the
/// scripted server's record of them), and its call of `fixture-lookup` fails. The run warns,
/// naming the agent and how to list a server's tools; the invocation's `offered_tools` is
/// empty. Listed as `fixture/*` or `fixture-lookup`, the subagent is offered the tool, its call
/// is served and nothing is warned of.
#[tokio::test]
async fn an_agent_whose_tools_give_its_subagent_no_tool_is_warned_of() {
    let Some(runtime) = runtime_for("an_agent_whose_tools_give_its_subagent_no_tool_is_warned_of")
    else {
        return;
    };
    for tools in ["fixture", "fixture/*", "fixture-lookup"] {
        let work = tempfile::tempdir().unwrap();
        let mock = lookup_mock("fixture");
        let script = Script::new([])
            .turn(ScriptedTurn::tool_call(
                "task",
                json!({"agent_type": "looker", "name": "looker", "prompt": "Look up k1.", "description": "Look up"}),
            ))
            .turn(ScriptedTurn::tool_call("fixture-lookup", json!({"key": "k1"})))
            .turn(ScriptedTurn::text("looked up"))
            .turn(ScriptedTurn::text("done"));
        let (result, server) = scripted(
            script,
            CopilotEval::builder().mcp_mock(&mock).custom_agent(
                CustomAgentConfig::new("looker", "You look things up.")
                    .with_description("Looks things up")
                    .with_tools([tools]),
            ),
            work.path(),
            "Have the looker look up k1.",
            &runtime.path,
        )
        .await;
        let subagent_request = server
            .model_requests()
            .into_iter()
            .find(|r| r.mentions("Look up k1.") && !r.mentions("Have the looker"))
            .expect("the subagent's model request");
        let invocation = &result.subagent_invocations[0];
        assert_eq!(
            invocation.announced_tools,
            Some(vec![tools.to_owned()]),
            "{tools}: announced as configured"
        );
        assert_eq!(
            invocation.offered_tools.as_ref(),
            Some(&subagent_request.tool_names),
            "{tools}"
        );
        let call = &invocation.tool_calls[0];
        let warnings: Vec<&String> = result
            .warnings
            .iter()
            .filter(|w| w.starts_with("custom agent `looker`"))
            .collect();
        if tools == "fixture" {
            assert!(
                subagent_request.tool_names.is_empty(),
                "{subagent_request:?}"
            );
            assert!(mock.calls().is_empty(), "{:?}", mock.calls());
            assert!(
                call.error
                    .as_deref()
                    .unwrap_or_default()
                    .contains("does not exist"),
                "{call:?}"
            );
            assert_eq!(warnings.len(), 1, "{:#?}", result.warnings);
            assert!(
                warnings[0].starts_with(
                    "custom agent `looker` lists tools [\"fixture\"], but its subagent's model was offered no tool"
                ),
                "{}",
                warnings[0]
            );
            assert!(
                warnings[0].contains(
                    "list its tools as `fixture/*` (all of them) or `fixture-<tool>` (one)"
                ),
                "{}",
                warnings[0]
            );
        } else {
            assert_eq!(
                subagent_request.tool_names,
                ["fixture-lookup"],
                "{tools}: {subagent_request:?}"
            );
            assert_eq!(
                call.result.as_deref(),
                Some("value-of-k1"),
                "{tools}: {call:?}"
            );
            assert_eq!(mock.calls().len(), 1, "{tools}: the server served the call");
            assert!(warnings.is_empty(), "{tools}: {:#?}", result.warnings);
        }
        assert!(
            result.success,
            "{tools}: {}: {:?}",
            result.stop_reason, result.error
        );
    }
}

/// A subagent whose answer has no text: runtime 1.0.102 reports `subagent.completed`, then
/// fails the `task` call ("Agent completed but produced no response."). The invocation is
/// `failed` with that error (not `completed`), and the run warns that the subagent ended
/// without a response; a subagent that answers is neither.
#[tokio::test]
async fn a_subagent_that_ends_without_a_response_is_failed_and_warned_of() {
    let Some(runtime) =
        runtime_for("a_subagent_that_ends_without_a_response_is_failed_and_warned_of")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "writer", "name": "writer", "prompt": "Write.", "description": "Write"}),
        ))
        .turn(ScriptedTurn::text(""))
        .turn(ScriptedTurn::text("done"));
    let (result, _server) = scripted(
        script,
        CopilotEval::builder().custom_agent(
            CustomAgentConfig::new("writer", "You write.").with_description("Writes"),
        ),
        work.path(),
        "Have the writer write.",
        &runtime.path,
    )
    .await;
    let dispatch = &result.tool_calls_for("task")[0];
    assert_eq!(dispatch.success, Some(false), "{dispatch:?}");
    let completed = result
        .raw_events
        .iter()
        .any(|e| e.kind() == SessionEventType::SubagentCompleted);
    assert!(completed, "the runtime reported the subagent completed");
    let invocation = &result.subagent_invocations[0];
    assert_eq!(invocation.status, SubagentStatus::Failed, "{invocation:#?}");
    assert_eq!(invocation.final_response, None);
    assert!(
        invocation
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("Agent completed but produced no response."),
        "{invocation:#?}"
    );
    assert!(!result.subagent_completed("writer"));
    let warnings: Vec<&String> = result
        .warnings
        .iter()
        .filter(|w| w.contains("ended without a response"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:#?}", result.warnings);
    assert!(
        warnings[0].starts_with(&format!(
            "subagent `writer` (task call {}) ended without a response (the runtime: Agent completed but produced no response.",
            dispatch.id
        )),
        "{}",
        warnings[0]
    );
    // A subagent that answers: completed, nothing warned of.
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("review.txt");
    let (result, _server) = scripted(
        writer_script(&target),
        CopilotEval::builder().custom_agent(
            CustomAgentConfig::new("writer", "You write reviews into files.")
                .with_description("Writes reviews"),
        ),
        work.path(),
        "Have the writer write a review.",
        &runtime.path,
    )
    .await;
    assert_eq!(
        result.subagent_invocations[0].status,
        SubagentStatus::Completed
    );
    assert!(result.warnings.is_empty(), "{:#?}", result.warnings);
}
