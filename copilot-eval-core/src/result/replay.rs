//! Why a replay failed a run, typed: [`ReplayMismatch`] (each model request the cassette could
//! not answer, [`ReplayMiss`], and where it departs from every recorded conversation,
//! [`ConversationDiff`] and [`Departure`]; or the recorded replies the session never asked
//! for). The cassette's replay builds it, the run keeps it in
//! [`CopilotResult::replay_diagnosis`](super::CopilotResult::replay_diagnosis) with its text
//! in `error`, and `drift` classifies the first difference from it.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::wire::Role;

/// Why a replay failed the run (its `Display` is the run's `error` text for it, which starts
/// with `replay mismatch: `).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplayMismatch {
    /// A model request matched no recorded conversation (the first such request, with the
    /// later ones by number and reason).
    Miss {
        /// The first request the cassette could not answer.
        first: ReplayMiss,
        /// Every later request that could not be answered either, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        later: Vec<LaterMiss>,
    },
    /// The session ended before the cassette was fully replayed: recorded replies were never
    /// requested.
    Unconsumed {
        /// The cassette file.
        #[schemars(with = "String")]
        cassette: PathBuf,
        /// How many model requests the replay answered.
        answered: usize,
        /// One line per recorded conversation with a reply never served, in file order
        /// (`conversation 2 of 3 (9 messages): 1 of 3 replies not served; the first is message
        /// 6: assistant ...`).
        never_requested: Vec<String>,
        /// How to split a cassette that holds several sessions, when the run used some
        /// conversations and left others wholly unused (starts with a line break); empty
        /// otherwise.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        split_hint: String,
    },
}

/// A later request that could not be answered: its number and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LaterMiss {
    /// Which model request of the session it was, from 1.
    pub request: usize,
    /// Why it could not be answered, one sentence.
    pub reason: String,
}

/// A model request that could not be answered from the cassette.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayMiss {
    /// The cassette file.
    #[schemars(with = "String")]
    pub cassette: PathBuf,
    /// Which model request of the session it was: 1 for the first the server received.
    pub request: usize,
    /// Why it could not be answered, one sentence.
    pub reason: String,
    /// The version of the normalisers the request went through
    /// (`cassette::NORMALIZERS_VERSION`).
    pub normalizers: u32,
    /// The request after normalisation, one rendered line per message, each shortened to about
    /// 160 characters (messages are numbered from 1 in the texts; the system prompt is 1).
    pub request_messages: Vec<String>,
    /// For each recorded conversation, in file order, where the request departs from it.
    pub conversations: Vec<ConversationDiff>,
}

/// Where a request departs from one recorded conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConversationDiff {
    /// The conversation's number in the cassette, from 1.
    pub conversation: usize,
    /// How many messages it has (after merging consecutive assistant messages).
    pub recorded_messages: usize,
    /// Where the request departs from it.
    pub departure: Departure,
    /// The recorded message at that point, normalised and shortened around the first differing
    /// character (`None` when the recording has none there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
    /// The request's message at that point, normalised and shortened the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
}

/// Where a request departs from a recorded conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "at", rename_all = "snake_case")]
pub enum Departure {
    /// Message `message` (from 1) differs.
    Differs {
        /// The number of the first differing message, from 1.
        message: usize,
        /// The recorded message's role.
        recorded_role: Role,
        /// The request's message's role.
        request_role: Role,
        /// When only the user-controlled parts of the system prompt differ: the parts that
        /// changed since recording (`the eval's instructions`, ...); empty otherwise.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed_parts: Vec<String>,
    },
    /// The request equals the first `messages` recorded messages, but the next recorded
    /// message is not a reply: the request lacks it.
    LacksMessage {
        /// How many messages the request has.
        messages: usize,
        /// The role of the recorded message the request lacks.
        recorded_role: Role,
    },
    /// The request equals the whole recording: no reply was recorded after it.
    WholeRecording {
        /// How many messages both have.
        messages: usize,
    },
    /// The request goes on past the end of the recording.
    PastEnd {
        /// The number of the first extra message, from 1.
        message: usize,
    },
}

impl Departure {
    /// The number (from 1) of the first message where the request and the recording differ
    /// when both have one there, or of the request's first message past the recording; `None`
    /// when the request agrees with the whole overlap and is not longer.
    pub fn first_difference(&self) -> Option<usize> {
        match self {
            Departure::Differs { message, .. } | Departure::PastEnd { message } => Some(*message),
            Departure::LacksMessage { .. } | Departure::WholeRecording { .. } => None,
        }
    }

    /// How far the request followed the recording: the number of the first message that
    /// differs, is extra or is lacking, or the whole recording's length.
    pub fn reach(&self) -> usize {
        match self {
            Departure::Differs { message, .. } | Departure::PastEnd { message } => *message,
            Departure::LacksMessage { messages, .. } => messages + 1,
            Departure::WholeRecording { messages } => *messages,
        }
    }
}

impl std::fmt::Display for Departure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Departure::Differs {
                message,
                recorded_role,
                request_role,
                changed_parts,
            } => {
                if recorded_role == request_role {
                    write!(f, "first difference at message {message} ({recorded_role})")?;
                } else {
                    write!(
                        f,
                        "first difference at message {message} (recorded {recorded_role}, request {request_role})"
                    )?;
                }
                if !changed_parts.is_empty() {
                    write!(f, ": changed since recording: {}", changed_parts.join(", "))?;
                }
                Ok(())
            }
            Departure::LacksMessage {
                messages,
                recorded_role,
            } => write!(
                f,
                "the request equals its first {messages} messages, but recorded message {} is a {recorded_role} message, not a reply: the request lacks it",
                messages + 1
            ),
            Departure::WholeRecording { messages } => write!(
                f,
                "the request equals the whole recording ({messages} messages): no reply was recorded after it"
            ),
            Departure::PastEnd { message } => write!(
                f,
                "the request goes on past the end of the recording: message {message} is extra"
            ),
        }
    }
}

impl ReplayMiss {
    /// The diagnosis's first line: the request's number, the reason, the cassette, the
    /// request's length and the normalisers' version.
    pub fn headline(&self) -> String {
        format!(
            "model request {} {} (cassette {}; the request has {} messages after normalisation, normalisers v{})",
            self.request,
            self.reason,
            self.cassette.display(),
            self.request_messages.len(),
            self.normalizers,
        )
    }
}

impl std::fmt::Display for ReplayMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.headline())?;
        let total = self.conversations.len();
        for (i, diff) in self.conversations.iter().enumerate() {
            write!(
                f,
                "  conversation {} of {total} ({} messages): {}",
                diff.conversation, diff.recorded_messages, diff.departure
            )?;
            if let Some(recorded) = &diff.recorded {
                write!(f, "\n    recorded: {recorded}")?;
            }
            if let Some(requested) = &diff.requested {
                write!(f, "\n    request:  {requested}")?;
            }
            if i + 1 < total {
                writeln!(f)?;
            }
        }
        Ok(())
    }
}

impl ReplayMismatch {
    /// The first line of the run's error text for it (what `drift` shows as the diagnosis).
    pub fn headline(&self) -> String {
        match self {
            ReplayMismatch::Miss { first, .. } => {
                format!("replay mismatch: {}", first.headline())
            }
            ReplayMismatch::Unconsumed {
                cassette, answered, ..
            } => format!(
                "replay mismatch: the session ended before the cassette {} was fully replayed ({answered} model requests answered); recorded replies never requested:",
                cassette.display()
            ),
        }
    }
}

impl std::fmt::Display for ReplayMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayMismatch::Miss { first, later } => {
                write!(f, "replay mismatch: {first}")?;
                if !later.is_empty() {
                    write!(
                        f,
                        "\n  {} later model requests could not be answered either (the run's replay record has each diagnosis):",
                        later.len()
                    )?;
                    for miss in later {
                        write!(f, "\n    model request {} {}", miss.request, miss.reason)?;
                    }
                }
                Ok(())
            }
            ReplayMismatch::Unconsumed {
                never_requested,
                split_hint,
                ..
            } => write!(
                f,
                "{}\n  {}{split_hint}",
                self.headline(),
                never_requested.join("\n  ")
            ),
        }
    }
}
