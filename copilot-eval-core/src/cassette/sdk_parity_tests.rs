//! Parity with the copilot-sdk's replay proxy: each user-message normaliser against a cassette in
//! the SDK's snapshot format (the text the SDK stores), and recorded error answers (`errors:`).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::model_server::{ModelRequest, Reply, WireApi};

/// A request of `model` with a system prompt and `user` as the runtime sends it.
fn request_of(model: &str, user: &str) -> ModelRequest {
    ModelRequest {
        wire: WireApi::ChatCompletions,
        streaming: false,
        model: Some(model.into()),
        messages: vec![
            json!({"role": "system", "content": "Be good."}),
            json!({"role": "user", "content": user}),
        ],
        tool_names: vec!["bash".into()],
        previous_response_id: None,
        initiator: None,
        interaction_type: None,
        body: Value::Null,
    }
}

/// A cassette in the SDK's format whose one conversation's user text is `recorded` (as the SDK
/// stores it), with an optional `errors:` section before the conversations.
fn sdk_cassette(recorded: &str, errors: &str) -> Arc<Cassette> {
    let quoted = serde_json::to_string(recorded).unwrap();
    let text = format!(
        "models:\n  - claude-sonnet-4.5\n{errors}conversations:\n  - messages:\n      - role: system\n        content: ${{system}}\n      - role: user\n        content: {quoted}\n      - role: assistant\n        content: Done.\n"
    );
    Arc::new(Cassette::parse(&text, Path::new("sdk.yaml")).unwrap())
}

/// Whether the runtime's `sent` user text is answered from a recording that stored `recorded`.
fn replays(recorded: &str, sent: &str) -> bool {
    let responder = ReplayResponder::new(sdk_cassette(recorded, ""));
    matches!(
        responder.answer(&request_of("claude-sonnet-4.5", sent)),
        Reply::Message(_)
    )
}

#[test]
fn skill_context_front_matter_is_removed_as_the_sdk_does() {
    let recorded = "<skill-context name=\"s\">\nBase directory for this skill: /x/s\n\n# Body\n</skill-context>";
    let sent = "<skill-context name=\"s\">\nBase directory for this skill: /x/s\n\n---\nname: s\ndescription: d\n---\n\n# Body\n</skill-context>";
    assert!(replays(recorded, sent));
    // A block that would reach past the skill context is not front matter.
    let across = "<skill-context name=\"s\">\nBase directory for this skill: /x/s\n\n---\n</skill-context>\n---\nrest";
    assert!(replays(across, across));
    assert!(!replays(recorded, across));
}

#[test]
fn task_completion_notices_take_one_wording() {
    let recorded = r#"Agent "a1" (explore) has completed successfully. Use read_agent with agent_id "a1" to retrieve the full results."#;
    let sent = r#"Agent "a1" (explore) has finished processing and is now idle. Use read_agent with agent_id "a1" to read the results, or write_agent to send follow-up messages."#;
    assert!(replays(recorded, sent));
    assert!(!replays(recorded, &sent.replace("a1", "a2")));
}

#[test]
fn the_datetime_tag_goes_and_the_line_breaks_after_a_selection_stay() {
    // The SDK stores the selection with every line break the runtime sent around the tag.
    let recorded = "<ide_selection>\nFile: a.rs (line 2)\n</ide_selection>\n\n\n\nRead it.";
    let sent = "<ide_selection>\nFile: a.rs (line 2)\n</ide_selection>\n\n<current_datetime>2026-12-01T07:27:46.804+00:00</current_datetime>\n\nRead it.";
    assert!(replays(recorded, sent));
    // Anywhere in the text, not only first.
    assert!(replays(
        "Before  after.",
        "Before <current_datetime>x</current_datetime> after."
    ));
    // On one line only: a tag spanning lines is text.
    let spanning = "<current_datetime>a\nb</current_datetime>Go.";
    assert!(!replays("Go.", spanning));
}

#[test]
fn reminder_blocks_are_removed() {
    for tag in ["reminder", "system_reminder", "agent_instructions"] {
        let sent = format!("Do it.\n<{tag}>\nline one\nline two\n</{tag}>\n");
        assert!(replays("Do it.", &sent), "{tag}");
        let other = format!("Do it.\n<{tag}x>\nline\n</{tag}x>");
        assert!(!replays("Do it.", &other), "{tag}: only the exact tag");
    }
}

#[test]
fn a_leading_plan_marker_is_removed() {
    assert!(replays("Make a plan.", "  [[PLAN]]\n Make a plan."));
    assert!(!replays("Make a plan.", "Make a plan. [[PLAN]]"));
}

#[test]
fn the_compaction_prompt_is_a_placeholder() {
    let sent = "Please create a detailed summary of the conversation so far. The history is being compacted so that you can continue.\n\n<summary_format>\n...\n</summary_format>";
    assert!(replays(COMPACTION_PLACEHOLDER, sent));
    assert!(replays(
        &format!("Earlier text. {COMPACTION_PLACEHOLDER}"),
        &format!("Earlier text. {sent}")
    ));
    assert!(!replays(COMPACTION_PLACEHOLDER, "Please summarise."));
}

#[test]
fn user_text_is_trimmed() {
    assert!(replays("Do it.", "  \n Do it. \n\n"));
    assert!(!replays("Do it.", "Do it now."));
}

const RATE_LIMIT: &str = "errors:\n  - model: claude-sonnet-4.5\n    status: 429\n    code: user_weekly_rate_limited\n    message: You've reached your weekly rate limit.\n    retryAfterSeconds: 1\n    messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Explain it.\n";

#[test]
fn a_recorded_error_is_read_and_answers_its_request_for_its_model() {
    let cassette = sdk_cassette("Explain it.", RATE_LIMIT);
    let error = &cassette.errors[0];
    assert_eq!(
        (
            error.status,
            error.code.as_deref(),
            error.retry_after_seconds
        ),
        (429, Some("user_weekly_rate_limited"), Some(1))
    );
    assert_eq!((error.messages.len(), error.line), (2, 4));
    let responder = ReplayResponder::new(cassette.clone());
    let expected = Reply::RecordedError {
        status: 429,
        code: "user_weekly_rate_limited".into(),
        message: "You've reached your weekly rate limit.".into(),
        retry_after_s: Some(1),
    };
    // Every time the same request comes for that model (the runtime's retries).
    for _ in 0..2 {
        let reply = responder.answer(&request_of(
            "claude-sonnet-4.5",
            "<current_datetime>x</current_datetime>\n\nExplain it.",
        ));
        assert_eq!(reply, expected);
    }
    assert_eq!(responder.errors_served(), [2]);
    // Another model (after a switch) gets the recorded conversation's reply.
    assert!(matches!(
        responder.answer(&request_of("auto", "Explain it.")),
        Reply::Message(_)
    ));
    // A longer request is not the recorded one: errors match the whole request, not a prefix.
    let mut longer = request_of("claude-sonnet-4.5", "Explain it.");
    longer
        .messages
        .push(json!({"role": "assistant", "content": "x"}));
    longer
        .messages
        .push(json!({"role": "user", "content": "more"}));
    assert!(matches!(responder.answer(&longer), Reply::Error { .. }));
    assert_eq!(responder.errors_served(), [2]);
}

#[test]
fn a_recorded_error_without_code_or_message_gets_the_sdk_defaults_and_survives_writing() {
    let errors = "errors:\n  - status: 503\n    messages:\n      - role: user\n        content: Explain it.\n";
    let mut cassette = (*sdk_cassette("Explain it.", errors)).clone();
    let responder = ReplayResponder::new(Arc::new(cassette.clone()));
    let mut request = request_of("any", "Explain it.");
    request.messages.remove(0);
    assert_eq!(
        responder.answer(&request),
        Reply::RecordedError {
            status: 503,
            code: DEFAULT_ERROR_CODE.into(),
            message: DEFAULT_ERROR_MESSAGE.into(),
            retry_after_s: None,
        }
    );
    cassette.path = "written.yaml".into();
    let yaml = cassette.to_yaml().unwrap();
    let back = Cassette::parse(&yaml, Path::new("written.yaml")).unwrap();
    assert_eq!(back.errors.len(), 1);
    assert_eq!(back.errors[0].status, 503);
    assert!(yaml.contains("errors:"), "{yaml}");
}

#[test]
fn a_malformed_recorded_error_names_the_line_and_the_fix() {
    for (entry, needle) in [
        (
            "  - status: 200\n    messages:\n      - role: user\n        content: x\n",
            "status: 200",
        ),
        ("  - status: 429\n    messages: []\n", "no `messages`"),
        (
            "  - status: 429\n    retry_after_seconds: 1\n    messages: []\n",
            "unknown field `retry_after_seconds`",
        ),
    ] {
        let text = format!(
            "errors:\n{entry}conversations:\n  - messages:\n      - role: user\n        content: x\n"
        );
        let err = Cassette::parse(&text, Path::new("e.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("e.yaml:"), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
}
