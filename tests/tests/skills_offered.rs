//! What the model really received of the requested skills, end to end through the real runtime
//! (1.0.102) and a scripted loopback model. The oracle is the model request the loopback server
//! received: its system prompt's `<available_skills>` block.
//!
//! - Many skills: the runtime describes only its first ones and lists the rest by name, or
//!   leaves them out; the run records per requested skill how the model was offered it
//!   (`offered`) and warns naming the skills cut, while discovery alone says "discovered".
//! - A skill the runtime loads from a requested folder that the check before the runtime did not
//!   see (a nested skill folder; a skill that appears once the check is done) is named in
//!   `unchecked` and warned of: the model is offered it.
//! - A custom agent's `skills:` preload (a `skill.invoked` event with trigger `context-load`) is
//!   evidence of its own, never a trigger: `ctx.expect_trigger`, the result's helpers and the run
//!   record keep it apart.

use std::path::Path;
use std::sync::Arc;

use copilot_eval_core::harness::{EvalContext, TestConfig, Trigger};
use copilot_eval_core::model_server::{ModelServer, Script, ScriptedTurn, ServerConfig};
use copilot_eval_core::report::RunRecord;
use copilot_eval_core::run::TestFaults;
use copilot_eval_core::run::skills::SkillOffer;
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";

/// Write a skill folder `name` under `root` with `description`.
fn skill(root: &Path, name: &str, description: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\nFollow the {name} steps.\n"),
    )
    .unwrap();
}

/// A description as long as real ones (about 330 characters).
fn description(n: usize) -> String {
    format!(
        "Skill number {n} writes and reviews the release artefacts of the team's services. Use it \
         when the user asks for release notes, changelog entries, version bumps, migration guides \
         or an announcement for a service, and when a pull request changes a public interface that \
         must be documented before it ships. Do not use it for unrelated questions."
    )
}

/// Run `eval` (with the model and a timeout) on "hi" against a model that answers "ok"; the
/// result and the model requests the server received.
async fn answered(
    eval: copilot_eval_core::eval::CopilotEvalBuilder,
    work: &Path,
    runtime: &Path,
) -> (
    CopilotResult,
    Vec<copilot_eval_core::model_server::ModelRequest>,
) {
    let script = Script::new([]).turn(ScriptedTurn::text("ok"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = eval
        .model(MODEL)
        .working_directory(work)
        .timeout_s(120.0)
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "hi",
        &RunOptions::offline(server.base_url()).runtime_path(runtime),
    )
    .await;
    assert_no_runtime_left(&result);
    (result, server.model_requests())
}

/// The system prompt the model received.
fn system_prompt(request: &copilot_eval_core::model_server::ModelRequest) -> String {
    request
        .messages
        .iter()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names the prompt lists without a description: its "Additional skills" line, split.
fn listed_by_name(prompt: &str) -> Vec<String> {
    let Some(at) = prompt.find("Additional skills available (invoke by name): ") else {
        return Vec::new();
    };
    let line = prompt[at..].lines().next().unwrap();
    let names = line
        .trim_start_matches("Additional skills available (invoke by name): ")
        .split("... and ")
        .next()
        .unwrap();
    names.split(", ").map(str::to_owned).collect()
}

/// Sixty skills with real-length descriptions: the model is given the description of only the
/// first ones. Each requested skill's `offered` agrees with the prompt the model received, and a
/// warning names the skills cut to their name.
#[tokio::test]
async fn with_many_skills_the_run_says_which_ones_the_model_saw_described() {
    let Some(runtime) =
        runtime_for("with_many_skills_the_run_says_which_ones_the_model_saw_described")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let skills = work.path().join("skills");
    let names: Vec<String> = (0..60).map(|n| format!("release-skill-{n:02}")).collect();
    for (n, name) in names.iter().enumerate() {
        skill(&skills, name, &description(n));
    }
    let (result, requests) = answered(
        CopilotEval::builder().skill_directory(&skills),
        work.path(),
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let discovery = result.skill_discovery.as_ref().unwrap();
    // Discovery alone says every skill was found and enabled.
    assert!(discovery.complete && discovery.missing.is_empty());
    assert!(names.iter().all(|n| result.skill_was_discovered(n)));

    // The truth: what the first model request's system prompt held.
    let prompt = system_prompt(&requests[0]);
    let by_name = listed_by_name(&prompt);
    let mut described = Vec::new();
    let mut name_only = Vec::new();
    for requested in &discovery.requested {
        let in_prompt_described = prompt.contains(&format!("<name>{}</name>", requested.name));
        let in_prompt_by_name = by_name.contains(&requested.name);
        match requested.offered {
            Some(SkillOffer::Described) => {
                assert!(
                    in_prompt_described && !in_prompt_by_name,
                    "{}",
                    requested.name
                );
                described.push(requested.name.clone());
            }
            Some(SkillOffer::NameOnly) => {
                assert!(
                    !in_prompt_described && in_prompt_by_name,
                    "{}",
                    requested.name
                );
                name_only.push(requested.name.clone());
            }
            other => panic!("{}: {other:?}", requested.name),
        }
    }
    // Measured: the first skills in the runtime's order (here alphabetical) are described.
    assert!(
        !described.is_empty() && !name_only.is_empty(),
        "{described:?}"
    );
    assert_eq!(described, names[..described.len()], "{described:?}");
    let saw = discovery.model_saw.as_ref().expect("the model's view");
    assert_eq!(saw.described, described);
    // The warning names every skill cut to its name.
    let warning = result
        .warnings
        .iter()
        .find(|w| w.contains("reached the model by name only"))
        .unwrap_or_else(|| panic!("no warning: {:#?}", result.warnings));
    assert!(
        warning.starts_with(&format!(
            "skills: {} of the 60 requested skills reached the model by name only",
            name_only.len()
        )),
        "{warning}"
    );
    for name in name_only.iter().take(30) {
        assert!(warning.contains(name.as_str()), "{name}: {warning}");
    }
    // The run record carries the same.
    let record = RunRecord::from_result(&result, "scripted");
    assert_eq!(record.warnings, result.warnings);
    let offered = &record.skill_discovery.as_ref().unwrap().requested[59];
    assert_eq!(offered.offered, Some(SkillOffer::NameOnly));
}

/// Eight hundred skills: past the budget of names the runtime leaves skills out of the prompt
/// altogether ("... and N more"); those requested skills are `not_offered`, never in the prompt,
/// and a warning names them.
#[tokio::test]
async fn past_the_names_budget_a_requested_skill_is_not_offered_and_said_so() {
    let Some(runtime) =
        runtime_for("past_the_names_budget_a_requested_skill_is_not_offered_and_said_so")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let skills = work.path().join("skills");
    for n in 0..800 {
        skill(
            &skills,
            &format!("synthetic-skill-with-a-long-name-number-{n:04}"),
            &format!("Synthetic skill {n}."),
        );
    }
    let (result, requests) = answered(
        CopilotEval::builder().skill_directory(&skills),
        work.path(),
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    let discovery = result.skill_discovery.as_ref().unwrap();
    let saw = discovery.model_saw.as_ref().unwrap();
    assert!(saw.left_out > 0, "{saw:?}");
    let body = serde_json::to_string(&requests[0].body).unwrap();
    let not_offered: Vec<&str> = discovery
        .requested
        .iter()
        .filter(|r| r.offered == Some(SkillOffer::NotOffered))
        .map(|r| r.name.as_str())
        .collect();
    assert!(!not_offered.is_empty());
    for name in &not_offered {
        assert!(!body.contains(name), "{name} is in the request");
    }
    let warning = result
        .warnings
        .iter()
        .find(|w| w.contains("were not offered to the model at all"))
        .unwrap_or_else(|| panic!("no warning: {:#?}", result.warnings));
    assert!(
        warning.starts_with(&format!(
            "skills: {} of the 800 requested skills were not offered to the model at all (the runtime's list of skill names was cut: \"... and {} more\")",
            not_offered.len(),
            saw.left_out
        )),
        "{warning}"
    );
    assert!(warning.contains(not_offered[0]), "{warning}");
}

/// A skill folder nested below the requested folder's immediate subfolders: the check before the
/// runtime does not see it, the runtime loads it and offers it to the model. The run names it.
#[tokio::test]
async fn a_nested_skill_the_check_did_not_see_is_named_when_the_runtime_offers_it() {
    let Some(runtime) =
        runtime_for("a_nested_skill_the_check_did_not_see_is_named_when_the_runtime_offers_it")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let skills = work.path().join("skills");
    skill(&skills, "greet", "Greets the user.");
    skill(
        &skills.join("group"),
        "deep",
        "A nested skill DEEP-DESCRIPTION.",
    );
    let (result, requests) = answered(
        CopilotEval::builder().skill_directory(&skills),
        work.path(),
        &runtime.path,
    )
    .await;
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    // The model was offered the nested skill (the oracle: its request).
    assert!(requests[0].mentions("<name>deep</name>"));
    assert!(requests[0].mentions("DEEP-DESCRIPTION"));
    let discovery = result.skill_discovery.as_ref().unwrap();
    let requested: Vec<&str> = discovery
        .requested
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(requested, ["greet"], "the check saw only greet");
    assert_eq!(discovery.unchecked, ["deep"]);
    let deep_md = skills.join("group/deep/SKILL.md").canonicalize().unwrap();
    let expected = format!(
        "skills: the runtime loaded skill `deep` ({}) from the requested folder {}, which the check before the runtime did not see",
        deep_md.display(),
        skills.canonicalize().unwrap().display()
    );
    assert!(
        result.warnings.iter().any(|w| w.starts_with(&expected)),
        "{expected}\n{:#?}",
        result.warnings
    );
}

/// A skill that appears in the requested folder once the check before the runtime is done (the
/// test fault writes it at that moment): the runtime loads it and the model is offered it; the
/// run names it instead of passing it in silence.
#[tokio::test]
async fn a_skill_that_appears_after_the_check_is_named_when_the_model_is_offered_it() {
    let Some(runtime) =
        runtime_for("a_skill_that_appears_after_the_check_is_named_when_the_model_is_offered_it")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let skills = work.path().join("skills");
    skill(&skills, "greet", "Greets the user.");
    let late = skills.join("late/SKILL.md");
    let script = Script::new([]).turn(ScriptedTurn::text("ok"));
    let server = ModelServer::start(ServerConfig::new(Arc::new(script)).model(MODEL))
        .await
        .unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .skill_directory(&skills)
        .timeout_s(120.0)
        .build()
        .unwrap();
    let faults = TestFaults {
        write_after_local_skill_check: Some((
            late.clone(),
            "---\nname: late\ndescription: LATE-DESCRIPTION arrived after the check.\n---\nBody.\n"
                .to_owned(),
        )),
        ..TestFaults::default()
    };
    let result = run_with(
        &eval,
        "hi",
        &RunOptions::offline(server.base_url())
            .runtime_path(&runtime.path)
            .test_faults(faults),
    )
    .await;
    assert_no_runtime_left(&result);
    assert!(result.success, "{}: {:?}", result.stop_reason, result.error);
    assert!(server.model_requests()[0].mentions("LATE-DESCRIPTION"));
    let discovery = result.skill_discovery.as_ref().unwrap();
    assert!(discovery.requested.iter().all(|r| r.name != "late"));
    assert!(result.skill_was_discovered("late"));
    assert_eq!(discovery.unchecked, ["late"]);
    assert!(
        result.warnings.iter().any(|w| w.starts_with(&format!(
            "skills: the runtime loaded skill `late` ({})",
            late.canonicalize().unwrap().display()
        ))),
        "{:#?}",
        result.warnings
    );
}

/// A custom agent that preloads a skill (`skills: [greet]`): the runtime reports a
/// `skill.invoked` with trigger `context-load` when the agent starts. That is no trigger: a
/// dormancy check holds (the preload recorded apart), an invocation check does not, and the run
/// record lists the skill as preloaded, not invoked.
#[tokio::test]
async fn an_agents_skill_preload_is_evidence_of_its_own_never_a_trigger() {
    let Some(_runtime) =
        runtime_for("an_agents_skill_preload_is_evidence_of_its_own_never_a_trigger")
    else {
        return;
    };
    let ctx = EvalContext::new(TestConfig::new(
        "an_agents_skill_preload_is_evidence_of_its_own_never_a_trigger",
        "skills_offered::an_agents_skill_preload_is_evidence_of_its_own_never_a_trigger",
        env!("CARGO_MANIFEST_DIR"),
    ));
    let skills = ctx.workdir().join("skills");
    skill(&skills, "greet", "Greets the user with the team's marker.");
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "task",
                json!({"agent_type": "greeter", "name": "greeter", "prompt": "Greet.", "description": "Greet"}),
            ))
            .turn(ScriptedTurn::text("Hello from the greeter."))
            .turn(ScriptedTurn::text("The greeter said hello.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(120.0)
        .skill_directory(&skills)
        .custom_agent(
            CustomAgentConfig::new("greeter", "You greet.")
                .with_description("Greets")
                .with_skills(["greet"]),
        )
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Have the greeter greet me.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    // The runtime's event: the preload, in the subagent's context.
    let preload = result
        .skill_invocations
        .iter()
        .find(|i| i.name == "greet")
        .unwrap_or_else(|| panic!("no skill.invoked: {:#?}", result.skill_invocations));
    assert_eq!(preload.trigger.as_deref(), Some("context-load"));
    assert!(preload.agent_id.is_some(), "{preload:?}");
    assert!(
        !result.tool_was_called("skill"),
        "the model never called the skill tool"
    );
    // Never a trigger.
    assert!(!result.skill_was_invoked("greet"));
    assert!(result.skill_was_preloaded("greet"));
    let dormant = ctx.expect_trigger(&result, "greet", Trigger::Dormant);
    assert!(dormant.held(), "{dormant}");
    assert!(dormant.preloaded && !dormant.invoked, "{dormant:?}");
    assert_eq!(
        dormant.to_string(),
        "greet stayed dormant, as the prompt should not trigger it (greet was preloaded by a custom agent's `skills:`, which is not a trigger)"
    );
    let invoke = ctx.expect_trigger(&result, "greet", Trigger::Invoke);
    assert!(!invoke.held(), "{invoke}");
    // The run record: preloaded, not invoked.
    let record = RunRecord::from_result(&result, "scripted");
    assert!(
        record.skills_invoked.is_empty(),
        "{:?}",
        record.skills_invoked
    );
    assert_eq!(record.skills_preloaded, ["greet"]);
}
