//! Offline authoring and the runtime's silent changes, through the real runtime and the
//! scripted loopback model of `ctx.offline`:
//!
//! - a catalog of several models (`ScriptCatalog`): a custom agent on another model is answered
//!   by that model's own script, and `ctx.model_requests()` shows what reached each model;
//! - a custom agent whose model the catalog lacks: a warning before the prompt, and the run ends
//!   `model_unavailable` instead of `completed`;
//! - a requested skill with `disable-model-invocation: true`: skill discovery marks it not
//!   model-invocable and warns before the prompt (the runtime hides it from the model);
//! - a pre-tool guard that denies without a reason: the model reads the runtime's own words;
//! - replies left unused when the test ends: a warning on the last run record; a strict script
//!   fails the test.
//!
//! Nothing waits on the clock: every run waits for its session's events, bounded by an ample
//! timeout.

use std::sync::{Arc, Mutex};

use copilot_eval_core::harness::{EvalContext, TestConfig, run_test};
use copilot_eval_core::model_server::{Script, ScriptCatalog, ScriptedTurn};
use copilot_eval_core::sdk::CustomAgentConfig;
use copilot_eval_core::sdk::hooks::PreToolUseOutput;
use copilot_eval_core::{StopReason, guard_fn};
use copilot_eval_e2e::runtime_for;
use serde_json::json;

const MODEL: &str = "claude-sonnet-4.5";
/// The custom agent's own model, a second catalog entry.
const AGENT_MODEL: &str = "claude-haiku-4.5";
/// Ample for a runtime start and a few turns on a loaded machine.
const TIMEOUT_S: f64 = 120.0;

/// The test configuration of the test function `$function` in this file.
macro_rules! config {
    ($function:literal) => {
        TestConfig::new(
            $function,
            concat!("offline_catalog::", $function),
            env!("CARGO_MANIFEST_DIR"),
        )
    };
}

fn context(config: TestConfig) -> EvalContext {
    EvalContext::new(config)
}

fn reviewer(model: &str) -> CustomAgentConfig {
    let mut agent = CustomAgentConfig::new("reviewer", "You review release notes. Answer briefly.");
    agent.description = Some("Reviews release notes".into());
    agent.model = Some(model.into());
    agent
}

fn dispatch() -> ScriptedTurn {
    ScriptedTurn::tool_call(
        "task",
        json!({"agent_type": "reviewer", "name": "reviewer", "prompt": "Review: - fixed a bug", "description": "Review notes"}),
    )
}

/// A custom agent on another catalog model is answered by that model's script; the requests
/// each model received are in `ctx.model_requests()`, the subagent's marked as such with the
/// tools it was offered.
#[tokio::test]
async fn a_custom_agent_on_another_catalog_model_gets_its_own_script() {
    let Some(_runtime) = runtime_for("a_custom_agent_on_another_catalog_model_gets_its_own_script")
    else {
        return;
    };
    let ctx = context(config!(
        "a_custom_agent_on_another_catalog_model_gets_its_own_script"
    ));
    ctx.offline(
        ScriptCatalog::new(
            Script::new([])
                .turn(dispatch())
                .turn(ScriptedTurn::text("The reviewer approved.")),
        )
        .model(
            AGENT_MODEL,
            Script::new([]).turn(ScriptedTurn::text("APPROVED-BY-HAIKU")),
        ),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .custom_agent(reviewer(AGENT_MODEL))
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Have the reviewer check my notes.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
    let invocation = &result.subagent_invocations[0];
    assert_eq!(invocation.model.as_deref(), Some(AGENT_MODEL));
    assert_eq!(
        invocation.final_response.as_deref(),
        Some("APPROVED-BY-HAIKU")
    );
    assert_eq!(
        result.final_response.as_deref(),
        Some("The reviewer approved.")
    );

    let requests = ctx.model_requests();
    let models: Vec<(Option<&str>, bool)> = requests
        .iter()
        .map(|r| (r.model.as_deref(), r.is_subagent()))
        .collect();
    assert_eq!(
        models,
        [
            (Some(MODEL), false),
            (Some(AGENT_MODEL), true),
            (Some(MODEL), false)
        ],
        "{requests:#?}"
    );
    let subagent = &requests[1];
    assert!(subagent.mentions("Review: - fixed a bug"), "{subagent:#?}");
    assert!(requests[0].has_tool("task"), "{:?}", requests[0].tool_names);
    assert!(subagent.has_tool("view"), "{:?}", subagent.tool_names);
}

/// What reached the model: the instructions' canary did, a file's canary (never read) did not.
#[tokio::test]
async fn the_request_log_shows_what_reached_the_model() {
    let Some(_runtime) = runtime_for("the_request_log_shows_what_reached_the_model") else {
        return;
    };
    let ctx = context(config!("the_request_log_shows_what_reached_the_model"));
    std::fs::write(ctx.workdir().join("secret.txt"), "CANARY-IN-A-FILE-7731").unwrap();
    ctx.offline(Script::new([]).turn(ScriptedTurn::text("Hello.")));
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .instructions("Sign every answer with CANARY-IN-INSTRUCTIONS-4410.")
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Say hello.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    let requests = ctx.model_requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert!(requests[0].mentions("CANARY-IN-INSTRUCTIONS-4410"));
    assert!(requests[0].mentions("Say hello."));
    assert!(!requests.iter().any(|r| r.mentions("CANARY-IN-A-FILE-7731")));
}

/// A custom agent whose model the offline catalog lacks: a warning before the prompt, then the
/// runtime fails the dispatch and the run ends `model_unavailable` (before: `completed`, with
/// the main script's next turn as the answer).
#[tokio::test]
async fn an_agent_model_missing_from_the_catalog_stops_the_run_as_model_unavailable() {
    let Some(_runtime) =
        runtime_for("an_agent_model_missing_from_the_catalog_stops_the_run_as_model_unavailable")
    else {
        return;
    };
    let ctx = context(config!(
        "an_agent_model_missing_from_the_catalog_stops_the_run_as_model_unavailable"
    ));
    ctx.offline(
        Script::new([])
            .turn(dispatch())
            .turn(ScriptedTurn::text("The reviewer approved.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .custom_agent(reviewer("not-in-the-catalog-1"))
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Have the reviewer check my notes.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::ModelUnavailable,
        "{:?} {:#?}",
        result.error,
        result.subagent_invocations
    );
    assert!(!result.success);
    let error = result.error.clone().unwrap_or_default();
    assert!(
        error.contains("custom agent `reviewer`") && error.contains("not-in-the-catalog-1"),
        "{error}"
    );
    assert_eq!(result.warnings.len(), 1, "{:?}", result.warnings);
    assert!(
        result.warnings[0].starts_with(
            "custom agent `reviewer` asks for model `not-in-the-catalog-1`, which the offline catalog lacks"
        ),
        "{:?}",
        result.warnings
    );
    let record = &ctx.evidence().runs[0];
    assert_eq!(record.stop_reason, StopReason::ModelUnavailable);
    assert!(record.is_infrastructure_stop());
    assert_eq!(record.warnings, result.warnings);
}

/// A requested skill that is not model-invocable: discovery marks it and warns before the
/// prompt; the runtime indeed hides it (the model's `skill` call fails).
#[tokio::test]
async fn a_skill_hidden_from_the_model_is_marked_and_warned_about() {
    let Some(_runtime) = runtime_for("a_skill_hidden_from_the_model_is_marked_and_warned_about")
    else {
        return;
    };
    let ctx = context(config!(
        "a_skill_hidden_from_the_model_is_marked_and_warned_about"
    ));
    let skill = ctx.workdir().join("skills/hidden-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: hidden-notes\ndescription: Writes notes\ndisable-model-invocation: true\n---\n\nStart with HIDDEN.\n",
    )
    .unwrap();
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call(
                "skill",
                json!({"skill": "hidden-notes"}),
            ))
            .turn(ScriptedTurn::text("No skill.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .skill_directory(ctx.workdir().join("skills"))
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Write notes.").await;
    let discovery = result
        .skill_discovery
        .clone()
        .expect("a skill was requested");
    assert_eq!(discovery.requested.len(), 1);
    assert!(!discovery.requested[0].model_invocable, "{discovery:#?}");
    assert!(
        discovery
            .warnings
            .iter()
            .any(|w| w.contains("warning[not-model-invocable]")),
        "{:?}",
        discovery.warnings
    );
    // The runtime's own behaviour, which the warning announces.
    let call = &result.tool_calls_for("skill")[0];
    assert_eq!(call.success, Some(false), "{call:#?}");
    assert!(result.skill_invocations.is_empty());
}

/// A guard that denies without a reason: the runtime's own words reach the model, not ours;
/// the evidence still says who denied.
#[tokio::test]
async fn a_guard_denial_without_a_reason_reaches_the_model_in_the_runtimes_words() {
    let Some(_runtime) =
        runtime_for("a_guard_denial_without_a_reason_reaches_the_model_in_the_runtimes_words")
    else {
        return;
    };
    let ctx = context(config!(
        "a_guard_denial_without_a_reason_reaches_the_model_in_the_runtimes_words"
    ));
    let file = ctx.workdir().join("notes.txt");
    std::fs::write(&file, "notes").unwrap();
    ctx.offline(
        Script::new([])
            .turn(ScriptedTurn::tool_call("view", json!({"path": file})))
            .turn(ScriptedTurn::text("I may not read it.")),
    );
    let eval = ctx
        .eval()
        .model(MODEL)
        .timeout_s(TIMEOUT_S)
        .pre_tool_guard(guard_fn(|_| {
            Ok(Some(PreToolUseOutput {
                permission_decision: Some("deny".into()),
                ..Default::default()
            }))
        }))
        .build()
        .unwrap();
    let result = ctx.run(&eval, "Read notes.txt.").await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert_eq!(
        result.tool_calls[0]
            .denied
            .as_ref()
            .map(|d| d.reason.as_str()),
        Some("denied by a pre-tool guard (no reason given)")
    );
    let requests = ctx.model_requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 1, "{requests:#?}");
    let text = results[0].to_string();
    assert!(text.contains("No reason provided"), "{text}");
    assert!(
        !requests[1].mentions("denied by a pre-tool guard"),
        "{text}"
    );
}

/// Runs `body` as a whole eval test (as `#[copilot_eval]` does) and returns its context and
/// whether the test passed.
fn whole_test(
    config: TestConfig,
    body: impl FnOnce(EvalContext) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>
    + std::panic::UnwindSafe,
) -> (EvalContext, Result<(), String>) {
    let kept: Arc<Mutex<Option<EvalContext>>> = Arc::default();
    let keep = kept.clone();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        run_test(config, move |ctx: EvalContext| {
            *keep.lock().unwrap() = Some(ctx.clone());
            body(ctx)
        })
    }));
    let ctx = kept.lock().unwrap().take().expect("the test body ran");
    (
        ctx,
        outcome.map_err(|p| copilot_eval_core::harness::panic_message(p.as_ref())),
    )
}

fn one_turn_too_many(strict: bool) -> Script {
    let script = Script::new([])
        .turn(ScriptedTurn::text("Hello."))
        .turn(ScriptedTurn::text("Never asked for."));
    if strict { script.strict() } else { script }
}

/// A reply left unused when the test ends: a warning on the last run record; a strict script
/// fails the test naming it.
#[test]
fn replies_left_unused_are_a_warning_and_fail_a_strict_script() {
    let Some(_runtime) = runtime_for("replies_left_unused_are_a_warning_and_fail_a_strict_script")
    else {
        return;
    };
    for strict in [false, true] {
        let (ctx, outcome) = whole_test(
            config!("replies_left_unused_are_a_warning_and_fail_a_strict_script"),
            move |ctx| {
                Box::pin(async move {
                    ctx.offline(one_turn_too_many(strict));
                    let eval = ctx
                        .eval()
                        .model(MODEL)
                        .timeout_s(TIMEOUT_S)
                        .build()
                        .unwrap();
                    let result = ctx.run(&eval, "Say hello.").await;
                    assert_eq!(
                        result.stop_reason,
                        StopReason::Completed,
                        "{:?}",
                        result.error
                    );
                })
            },
        );
        let evidence = ctx.evidence();
        let warnings = &evidence.runs[0].warnings;
        assert_eq!(warnings.len(), 1, "strict {strict}: {warnings:?}");
        assert!(
            warnings[0].starts_with(
                "scripted model: 1 of 2 replies of the main script left unused when the test ended"
            ),
            "{warnings:?}"
        );
        match (strict, outcome) {
            (false, Ok(())) => {}
            (true, Err(message)) => {
                assert!(message.contains("(the script is strict)"), "{message}");
                assert_eq!(evidence.failure.as_deref(), Some(message.as_str()));
            }
            (strict, outcome) => panic!("strict {strict}: {outcome:?}"),
        }
    }
}
