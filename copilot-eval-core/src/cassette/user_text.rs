//! The user-message normalisers, re-implemented from what the copilot-sdk's replay proxy does to
//! the text of every user message (its `normalizeUserMessage`), in its order: skill front matter
//! out, subagent completion notices in one wording, the `<current_datetime>` tag and the
//! reminder, system-reminder and agent-instruction blocks out, a leading `[[PLAN]]` out, the
//! compaction prompt as `${compaction_prompt}`, and the text trimmed.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// The placeholder the compaction prompt becomes.
pub const COMPACTION_PLACEHOLDER: &str = "${compaction_prompt}";

/// Compiles one of this module's fixed patterns.
fn pattern(text: &str) -> Regex {
    Regex::new(text).expect("a fixed pattern compiles")
}

static SKILL_FRONT_MATTER: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"(<skill-context\b[^>]*>\s*Base directory for this skill:[^\r\n]*(?:\r?\n)+)---\r?\n([\s\S]*?)\r?\n---(?:\r?\n)+",
    )
});
static TASK_NOTICE: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"Agent "([^"]+)" \(([^)]+)\) (?:has completed successfully|has finished processing and is now idle)\. Use read_agent with agent_id "[^"]+" to (?:retrieve (?:unread results|the full results)|read the results, or write_agent to send follow-up messages)\."#,
    )
});
static DATETIME: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"<current_datetime>.*?</current_datetime>"));
static REMINDER: LazyLock<Regex> = LazyLock::new(|| pattern(r"<reminder>[\s\S]*?</reminder>"));
static SYSTEM_REMINDER: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"<system_reminder>[\s\S]*?</system_reminder>"));
static AGENT_INSTRUCTIONS: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"<agent_instructions>[\s\S]*?</agent_instructions>"));
static PLAN_PREFIX: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\s*\[\[PLAN\]\]\s*"));
static COMPACTION: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r"Please create a detailed summary of the conversation so far\. The history is being compacted[\s\S]*",
    )
});

/// `skill_context_front_matter`: inside a `<skill-context>` whose first line names the skill's
/// base directory, the `---` front-matter block that follows is removed (runtimes differ in
/// whether they show it). A block that would reach past `</skill-context>` is kept.
pub(super) fn skill_context_front_matter(text: &str) -> String {
    SKILL_FRONT_MATTER
        .replace_all(text, |c: &Captures<'_>| {
            if c[2].contains("</skill-context>") {
                c[0].to_owned()
            } else {
                c[1].to_owned()
            }
        })
        .into_owned()
}

/// `task_completion_notice`: a subagent's completion notice in any of its wordings becomes
/// `Agent "<id>" (<type>) has completed successfully. Use read_agent with agent_id "<id>" to
/// retrieve the full results.`
pub(super) fn task_completion_notice(text: &str) -> String {
    TASK_NOTICE
        .replace_all(
            text,
            r#"Agent "$1" ($2) has completed successfully. Use read_agent with agent_id "$1" to retrieve the full results."#,
        )
        .into_owned()
}

/// `datetime_tag`: every `<current_datetime>...</current_datetime>` (on one line) is removed;
/// the line breaks around it stay (the trim at the end takes those at the text's ends).
pub(super) fn datetime_tag(text: &str) -> String {
    DATETIME.replace_all(text, "").into_owned()
}

/// `reminder_block`: every `<reminder>...</reminder>` block is removed.
pub(super) fn reminder_block(text: &str) -> String {
    REMINDER.replace_all(text, "").into_owned()
}

/// `system_reminder_block`: every `<system_reminder>...</system_reminder>` block is removed.
pub(super) fn system_reminder_block(text: &str) -> String {
    SYSTEM_REMINDER.replace_all(text, "").into_owned()
}

/// `agent_instructions_block`: every `<agent_instructions>...</agent_instructions>` block is
/// removed.
pub(super) fn agent_instructions_block(text: &str) -> String {
    AGENT_INSTRUCTIONS.replace_all(text, "").into_owned()
}

/// `plan_prefix`: a leading `[[PLAN]]` (with the whitespace around it) is removed.
pub(super) fn plan_prefix(text: &str) -> String {
    PLAN_PREFIX.replace(text, "").into_owned()
}

/// `compaction_prompt`: the runtime's compaction request (`Please create a detailed summary of
/// the conversation so far. The history is being compacted...`) and everything after it
/// becomes `${compaction_prompt}`.
pub(super) fn compaction_prompt(text: &str) -> String {
    COMPACTION
        .replace(text, regex::NoExpand(COMPACTION_PLACEHOLDER))
        .into_owned()
}

/// `user_text_trim`: whitespace at both ends of a user message's text is removed.
pub(super) fn user_text_trim(text: &str) -> String {
    text.trim().to_owned()
}
