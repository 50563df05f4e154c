//! The parts of the runtime's system prompt that the user controls, found by the runtime's own
//! section tags, and their hashes: a cassette keeps them on each system message
//! (`prompt_parts:`), so a replay notices when the eval's instructions, an agent's prompt, the
//! custom instruction files or the skill list changed since the recording, while everything
//! else in the system prompt (the date, the OS, the session folder, the runtime's own text)
//! stays `${system}`.
//!
//! Layout measured on runtime 1.0.102 (`tests/tests/prompt_parts.rs` and the unit tests below
//! pin it):
//!
//! - The main agent, default (`append`) system-message mode: the runtime's text with its
//!   `<tools>...</tools>` section; after `</tools>` and before `<system_notifications>` come the
//!   custom instruction files (`<custom_instruction>` blocks of `.github/copilot-instructions.md`
//!   and `AGENTS.md`, the table of `*.instructions.md` files); after `</system_notifications>`
//!   and before `<exploration_and_reading_files>` comes the eval's `instructions` text, verbatim;
//!   the selected agent's prompt is an `<agent_instructions>` block; the skills are `<skill>`
//!   entries of `<available_skills>`, each with a `<location>` (`builtin` for the runtime's
//!   own).
//! - A subagent: its agent's prompt first, then the runtime's `<tools>` section (no
//!   `<system_notifications>`).
//! - `replace` mode: the eval's `instructions` are the whole system prompt (no runtime tags).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// The hashes of the user-controlled parts of one system prompt: part name -> SHA-256 of the
/// part's text (lowercase hex, 64 characters), after every spelling of the working directory
/// became `${workdir}`. Only parts present in the prompt are listed.
pub type PromptParts = BTreeMap<String, String>;

/// Every part name, with how a diagnosis names it.
pub const PROMPT_PARTS: &[(&str, &str)] = &[
    ("instructions", "the eval's instructions"),
    (
        "custom_instructions",
        "the custom instruction files (copilot-instructions.md, AGENTS.md, *.instructions.md)",
    ),
    ("agent_prompt", "the agent prompt"),
    ("skills", "the skill list"),
];

/// How a diagnosis names part `name` (the name itself when unknown).
pub(crate) fn describe(name: &str) -> &str {
    PROMPT_PARTS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(name, |(_, d)| d)
}

/// Whether `value` is a part hash as written: 64 lowercase hexadecimal digits.
pub(crate) fn is_hash(value: &str) -> bool {
    value.len() == 64
        && value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The parts of `prompt` the user controls (see the [module documentation](self)), hashed;
/// `workdirs` are the spellings of the working directory, longest first.
pub(crate) fn prompt_parts(prompt: &str, workdirs: &[String]) -> PromptParts {
    let mut texts: Vec<(&str, String)> = Vec::new();
    let notifications = prompt.find("<system_notifications>");
    if let Some(open) = notifications {
        // The main agent's layout.
        let head = &prompt[..open];
        if let Some(tools_end) = head.rfind("</tools>") {
            texts.push((
                "custom_instructions",
                head[tools_end + "</tools>".len()..].to_owned(),
            ));
        }
        if let Some(close) = prompt[open..].find("</system_notifications>") {
            let rest = &prompt[open + close + "</system_notifications>".len()..];
            let end = rest
                .find("<exploration_and_reading_files>")
                .unwrap_or(rest.len());
            texts.push(("instructions", rest[..end].to_owned()));
        }
        if let Some(agent) = between(prompt, "<agent_instructions>", "</agent_instructions>") {
            texts.push(("agent_prompt", agent.to_owned()));
        }
    } else if let Some(tools) = prompt.find("<tools>") {
        // A subagent: its agent's prompt comes first.
        texts.push(("agent_prompt", prompt[..tools].to_owned()));
    } else {
        // `replace` mode: the whole prompt is the eval's.
        texts.push(("instructions", prompt.to_owned()));
    }
    if let Some(list) = between(prompt, "<available_skills>", "</available_skills>") {
        let custom: Vec<&str> = list
            .split("<skill>")
            .filter_map(|entry| entry.split("</skill>").next())
            .filter(|entry| !entry.trim().is_empty())
            .filter(|entry| {
                between(entry, "<location>", "</location>").map(str::trim) != Some("builtin")
            })
            .collect();
        texts.push(("skills", custom.join("\n")));
    }
    let mut parts = PromptParts::new();
    for (name, text) in texts {
        let mut text = text.trim().to_owned();
        if text.is_empty() {
            continue;
        }
        for dir in workdirs.iter().filter(|d| !d.is_empty()) {
            text = text.replace(dir.as_str(), "${workdir}");
        }
        parts.insert(name.to_owned(), hash(&text));
    }
    parts
}

/// SHA-256 of `text`, lowercase hex.
fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The text between the first `open` and the first `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)?;
    Some(&text[start..start + end])
}

/// The names of the parts that differ between a recorded prompt's parts and a request's
/// (a part present on one side only differs too), in [`PROMPT_PARTS`] order.
pub(crate) fn changed(recorded: &PromptParts, request: &PromptParts) -> Vec<String> {
    let mut names: Vec<&String> = recorded.keys().chain(request.keys()).collect();
    names.sort_by_key(|n| {
        PROMPT_PARTS
            .iter()
            .position(|(p, _)| p == n)
            .unwrap_or(usize::MAX)
    });
    names.dedup();
    names
        .into_iter()
        .filter(|n| recorded.get(*n) != request.get(*n))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The working directory the test prompts name: a folder under the system's temporary one.
    fn workdir() -> String {
        std::env::temp_dir().join("w").display().to_string()
    }

    /// A main-agent prompt in runtime 1.0.102's layout (shortened).
    fn main_prompt(instructions: &str, custom: &str, agent: &str, skills: &str) -> String {
        let work = workdir();
        let home = std::env::temp_dir().join("home-1").display().to_string();
        format!(
            "You are GitHub Copilot.\n<environment_context>\n* Current working directory: {work}\n</environment_context>\n<tools>\n<skill>\n<available_skills>\n<skill>\n  <name>cloud</name>\n  <description>Builtin.</description>\n  <location>builtin</location>\n</skill>\n{skills}</available_skills>\n</skill>\n</tools>\n\n{custom}\n<system_notifications>\nThe runtime may send notifications.\n</system_notifications>\n\n{instructions}\n<exploration_and_reading_files>\nFiles are truncated.\n</exploration_and_reading_files>\n<session_context>\nSession folder: {home}/session-state/5f45b499-74b4-411b-9969-a2fc1daca794\n</session_context>\n{agent}<tool_calling>\nCall tools.\n</tool_calling>\n"
        )
    }

    const SKILL: &str = "<skill>\n  <name>greet</name>\n  <description>Greets.</description>\n  <location>custom</location>\n</skill>\n";

    #[test]
    fn each_user_part_is_found_and_the_runtime_parts_are_not() {
        let plain = prompt_parts(&main_prompt("", "", "", ""), &[]);
        assert!(plain.is_empty(), "{plain:?}");

        let full = prompt_parts(
            &main_prompt(
                "Be terse.",
                "<custom_instruction>\nUse tabs.\n</custom_instruction>\n",
                "<agent_instructions>\nYou write reviews.\n</agent_instructions>\n",
                SKILL,
            ),
            &[],
        );
        let names: Vec<&str> = full.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "agent_prompt",
                "custom_instructions",
                "instructions",
                "skills"
            ]
        );
        assert!(full.values().all(|h| is_hash(h)), "{full:?}");
        assert_eq!(full["instructions"], hash("Be terse."));

        // Each part changes alone when its text changes.
        let edits = [
            (
                "instructions",
                main_prompt(
                    "Be verbose.",
                    "<custom_instruction>\nUse tabs.\n</custom_instruction>\n",
                    "<agent_instructions>\nYou write reviews.\n</agent_instructions>\n",
                    SKILL,
                ),
            ),
            (
                "custom_instructions",
                main_prompt(
                    "Be terse.",
                    "<custom_instruction>\nUse spaces.\n</custom_instruction>\n",
                    "<agent_instructions>\nYou write reviews.\n</agent_instructions>\n",
                    SKILL,
                ),
            ),
            (
                "agent_prompt",
                main_prompt(
                    "Be terse.",
                    "<custom_instruction>\nUse tabs.\n</custom_instruction>\n",
                    "<agent_instructions>\nYou write poems.\n</agent_instructions>\n",
                    SKILL,
                ),
            ),
            (
                "skills",
                main_prompt(
                    "Be terse.",
                    "<custom_instruction>\nUse tabs.\n</custom_instruction>\n",
                    "<agent_instructions>\nYou write reviews.\n</agent_instructions>\n",
                    &SKILL.replace("Greets.", "Greets loudly."),
                ),
            ),
        ];
        for (part, prompt) in edits {
            assert_eq!(changed(&full, &prompt_parts(&prompt, &[])), [part]);
        }
    }

    #[test]
    fn dynamic_parts_and_the_working_directory_do_not_count() {
        let work = workdir();
        let other = std::env::temp_dir().join("other").display().to_string();
        let one = main_prompt(&format!("Work in {work} only."), "", "", "");
        let two = one
            .replace(&work, &other)
            .replace("home-1", "home-2")
            .replace("5f45b499", "0000aaaa");
        assert_eq!(prompt_parts(&one, &[work]), prompt_parts(&two, &[other]));
        // Without the working directory's spellings the instructions differ.
        assert_ne!(prompt_parts(&one, &[]), prompt_parts(&two, &[]));
    }

    #[test]
    fn subagent_and_replace_layouts() {
        let subagent = "You write reviews.\n\n<tools>\n<bash>\nRun.\n</bash>\n</tools>\n";
        let parts = prompt_parts(subagent, &[]);
        assert_eq!(parts.keys().collect::<Vec<_>>(), ["agent_prompt"]);
        assert_eq!(parts["agent_prompt"], hash("You write reviews."));

        let replace = prompt_parts("You are a terse file assistant.", &[]);
        assert_eq!(
            replace["instructions"],
            hash("You are a terse file assistant.")
        );
    }

    #[test]
    fn a_part_on_one_side_only_is_a_change() {
        let none = PromptParts::new();
        let some = prompt_parts(&main_prompt("Be terse.", "", "", ""), &[]);
        assert_eq!(changed(&none, &some), ["instructions"]);
        assert_eq!(changed(&some, &none), ["instructions"]);
        assert!(changed(&some, &some).is_empty());
    }
}
