//! What serde derives when a [`CopilotResult`](super::CopilotResult) is written as the JSON
//! run record (`tests[].runs[]` of the results file): its prompts as three keys (`prompt`,
//! `prompts`, `prompt_options`), each turn with the number of the prompt it is or answers, and
//! the working directory as text. Each is read back as the result's own value.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::eval::{AgentMode, Attachment, Prompt};
use crate::evidence::{Role, Turn};

/// The options one prompt of a run was sent with ([`crate::eval::Prompt`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PromptOptionsRecord {
    /// The prompt's number in the run's `prompts` (from 1).
    pub prompt: u64,
    /// The agent mode it was sent in (`interactive`, `plan`, `autopilot`, `shell`); absent: the
    /// session's current mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// Its attachments, in order: `type` is `file`, `directory`, `selection` (with the selected
    /// `text` read from the file) or `github_reference`; paths as the test gave them, relative
    /// to the run's `working_directory` unless absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// A run's prompts as the run record writes them: the first, every prompt's text, and the
/// options of those sent with any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromptsRecord {
    /// The prompt sent (the first one, for a run of several prompts).
    pub prompt: String,
    /// Every prompt sent in the run's session, in order (one for `ctx.run`, each of
    /// `ctx.run_turns`); absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    /// The options of each prompt sent with any (attachments, agent mode), by the prompt's
    /// number in `prompts`; absent when no prompt had options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_options: Vec<PromptOptionsRecord>,
}

/// The result's `prompts`, written as [`PromptsRecord`]'s keys (flattened into the record).
pub(crate) mod prompts {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(prompts: &[Prompt], s: S) -> Result<S::Ok, S::Error> {
        PromptsRecord {
            prompt: prompts.first().map(|p| p.text.clone()).unwrap_or_default(),
            prompts: prompts.iter().map(|p| p.text.clone()).collect(),
            prompt_options: (prompts.iter().enumerate())
                .filter(|(_, p)| p.has_options())
                .map(|(index, p)| PromptOptionsRecord {
                    prompt: index as u64 + 1,
                    mode: p.mode,
                    attachments: p.attachments.clone(),
                })
                .collect(),
        }
        .serialize(s)
    }

    /// The prompts back, with their options; a file written before `prompts` existed has its
    /// one `prompt`.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Prompt>, D::Error> {
        let record = PromptsRecord::deserialize(d)?;
        let texts = if record.prompts.is_empty() && !record.prompt.is_empty() {
            vec![record.prompt]
        } else {
            record.prompts
        };
        Ok(texts
            .into_iter()
            .enumerate()
            .map(|(index, text)| {
                let mut prompt = Prompt::new(text);
                if let Some(options) =
                    (record.prompt_options.iter()).find(|o| o.prompt == index as u64 + 1)
                {
                    prompt.mode = options.mode;
                    prompt.attachments = options.attachments.clone();
                }
                prompt
            })
            .collect())
    }
}

/// One message of the root agent's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TurnRecord {
    /// The message.
    #[serde(flatten)]
    pub turn: Turn,
    /// The number (from 1) of the prompt in `prompts` this message is (`user`) or answers
    /// (`assistant`); absent for a message before the first prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
}

/// The result's `turns`, each written as a [`TurnRecord`] (with its prompt's number) and read
/// back as the turn.
pub(crate) mod turns {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(turns: &[Turn], s: S) -> Result<S::Ok, S::Error> {
        let mut prompt = 0u64;
        s.collect_seq(turns.iter().map(|turn| {
            if turn.role == Role::User {
                prompt += 1;
            }
            TurnRecord {
                turn: turn.clone(),
                prompt: (prompt > 0).then_some(prompt),
            }
        }))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Turn>, D::Error> {
        Vec::<Turn>::deserialize(d)
    }
}

/// A path as text (lossy where it is not UTF-8, which a JSON string cannot hold).
pub(crate) fn path_text<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}
