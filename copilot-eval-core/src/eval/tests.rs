//! Unit tests of the eval's builder validation.

use std::sync::Arc;

use github_copilot_sdk::CustomAgentConfig;
use github_copilot_sdk::hooks::SessionHooks;

use super::*;

#[test]
fn hooks_twice_is_a_conflict() {
    struct NoHooks;
    impl SessionHooks for NoHooks {}
    let err = CopilotEval::builder()
        .hooks(Arc::new(NoHooks))
        .hooks(Arc::new(NoHooks))
        .build()
        .unwrap_err();
    assert_eq!(err.field, "hooks");
}

#[test]
fn defaults_are_documented_values() {
    let eval = CopilotEval::builder().build().unwrap();
    assert_eq!(eval.name(), "copilot");
    assert_eq!(eval.timeout_s(), DEFAULT_TIMEOUT_S);
    assert_eq!(eval.max_turns(), DEFAULT_MAX_TURNS);
    assert!(eval.auto_confirm);
    assert_eq!(eval.client_mode(), ClientMode::CopilotCli);
}

#[test]
fn closed_sets_name_the_field_and_allowed_values() {
    let err = CopilotEval::builder()
        .reasoning_effort("extreme")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "reasoning_effort");
    assert_eq!(
        err.to_string(),
        "invalid eval field `reasoning_effort`: \"extreme\" is not one of: low, medium, high, xhigh, max"
    );
    let err = CopilotEval::builder()
        .system_message_mode("prepend")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "system_message_mode");
    let err = CopilotEval::builder()
        .client_mode("sandbox")
        .build()
        .unwrap_err();
    assert!(err.message.contains("copilot-cli, empty"), "{err}");
    let err = CopilotEval::builder()
        .image_detail("ultra")
        .build()
        .unwrap_err();
    assert!(err.message.contains("auto, low, high"), "{err}");
}

#[test]
fn numbers_are_range_checked() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = CopilotEval::builder().timeout_s(bad).build().unwrap_err();
        assert_eq!(err.field, "timeout_s");
    }
}

#[test]
fn paths_must_exist() {
    let err = CopilotEval::builder()
        .working_directory("/definitely/not/here")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "working_directory");
    let err = CopilotEval::builder()
        .skill_directory("/definitely/not/here")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "skill_directories");
}

#[test]
fn names_are_unique_and_active_agent_must_exist() {
    let err = CopilotEval::builder()
        .allowed_tools(["view", "view"])
        .build()
        .unwrap_err();
    assert_eq!(err.field, "allowed_tools");
    let err = CopilotEval::builder()
        .custom_agent(CustomAgentConfig::new("reviewer", "Review."))
        .active_agent("writer")
        .build()
        .unwrap_err();
    assert_eq!(err.field, "active_agent");
    assert!(err.message.contains("reviewer"), "{err}");
}

#[test]
fn customize_mode_and_its_section_edits_are_checked_together() {
    let customize = || {
        CopilotEval::builder()
            .system_message_mode("customize")
            .system_message_section(
                "identity",
                SectionAction::Replace("You are Botanica.".into()),
            )
    };
    let eval = customize()
        .system_message_section("safety", SectionAction::Preserve)
        .build()
        .unwrap();
    assert_eq!(eval.system_message_mode, SystemMessageMode::Customize);
    assert_eq!(eval.system_message_sections.len(), 2);
    // The derived builder keeps the edits.
    assert_eq!(
        eval.to_builder().build().unwrap().system_message_sections,
        eval.system_message_sections
    );

    let field = |builder: CopilotEvalBuilder| builder.build().unwrap_err();
    let err = field(CopilotEval::builder().system_message_mode("customize"));
    assert_eq!(err.field, "system_message_mode");
    assert!(
        err.message.contains("system_message_section") && err.message.contains("instructions"),
        "{err}"
    );
    let err = field(
        CopilotEval::builder()
            .instructions("Be brief.")
            .system_message_section("tone", SectionAction::Remove),
    );
    assert_eq!(err.field, "system_message_sections");
    assert!(err.message.contains("\"append\""), "{err}");
    // Instructions in customize mode are added after the sections, with or without edits.
    customize().instructions("Be brief.").build().unwrap();
    CopilotEval::builder()
        .system_message_mode("customize")
        .instructions("Be brief.")
        .build()
        .unwrap();
    let err = field(customize().system_message_section("persona", SectionAction::Remove));
    assert_eq!(err.field, "system_message_sections");
    assert!(err.message.contains("\"persona\"") && err.message.contains("last_instructions"));
    let err = field(customize().system_message_section("identity", SectionAction::Remove));
    assert!(err.message.contains("twice"), "{err}");
}
