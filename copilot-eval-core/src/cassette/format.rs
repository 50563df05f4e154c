//! Reading cassettes: the YAML format, our optional header, and validation with positions.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::{MessageFormatter, Spanned};

use super::prompt::{PROMPT_PARTS, PromptParts, is_hash};
use crate::model_server::{ScriptedUsage, WireApi};

/// Why a cassette could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read.
    #[error("cannot read cassette {}: {source}", path.display())]
    Io {
        /// The cassette file as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid cassette: a YAML syntax error, a field of the wrong type or with
    /// an unknown name, or a message that breaks the format's rules (see
    /// [`Cassette::parse`]). Displayed as `path:line:column: message` (`path: message` when the
    /// position is unknown).
    #[error("{}{}: {message}", path.display(), position(*line, *column))]
    Malformed {
        /// The cassette file as given.
        path: PathBuf,
        /// 1-based line of the offending YAML node, when known.
        line: Option<u32>,
        /// 1-based column (in characters) of the offending YAML node, when known.
        column: Option<u32>,
        /// What is wrong, e.g. ``unknown variant `bot`, expected one of system, user, assistant,
        /// tool``.
        message: String,
    },
    /// The loopback model server for the replay could not be started (binding `127.0.0.1`).
    #[error("cannot start the replay model server for {}: {source}", path.display())]
    Server {
        /// The cassette file as given.
        path: PathBuf,
        /// The I/O error of the bind.
        source: std::io::Error,
    },
    /// A cassette could not be turned into YAML that reads back as the same cassette
    /// ([`Cassette::to_yaml`]).
    #[error("cannot write cassette {}: {message}", path.display())]
    Unwritable {
        /// The cassette's path ([`Cassette::path`]).
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

fn position(line: Option<u32>, column: Option<u32>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

/// A recorded session: the models it used and its conversations, each the full message list of
/// one model request plus the reply that followed (see the [module documentation](super)).
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    /// The file it was read from (as given to [`Cassette::load`]; empty for
    /// [`Cassette::parse`] of a string without a path).
    pub path: PathBuf,
    /// Our own optional header fields (`copilot_eval:`); all `None` for files without one,
    /// such as the copilot-sdk recordings.
    pub header: CassetteHeader,
    /// The `models:` list: model ids the recorded session used, in file order (may be empty).
    pub models: Vec<String>,
    /// The `conversations:`, in file order (at least one, unless [`errors`](Self::errors) has
    /// one).
    pub conversations: Vec<Conversation>,
    /// The `errors:` list of the copilot-sdk snapshot format: recorded error answers (e.g. a
    /// `429`), in file order; empty when the file has none.
    pub errors: Vec<RecordedError>,
}

/// The optional `copilot_eval:` mapping at the top of a cassette, written by copilot-eval when
/// it records (every field optional; unknown fields are an error).
///
/// ```yaml
/// copilot_eval:
///   runtime_version: 1.0.102        # the Copilot runtime that was recorded
///   model: claude-sonnet-4.5        # the model the session asked for
///   wire_format: chat_completions   # chat_completions | responses | websocket_responses
///   recorded: 2026-11-30            # recording date, ISO 8601
///   workdir: test_root              # what `${workdir}` stands for: test_root | session
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CassetteHeader {
    /// `runtime_version`: the Copilot runtime version the session was recorded with, e.g.
    /// `1.0.102`.
    pub runtime_version: Option<String>,
    /// `model`: the model id the session asked for; a replay serves this id first in its
    /// catalog.
    pub model: Option<String>,
    /// `wire_format`: the wire format the recording used; a replay advertises the same one
    /// unless told otherwise.
    pub wire_format: Option<WireApi>,
    /// `recorded`: the recording date as written (ISO 8601, e.g. `2026-11-30`).
    pub recorded: Option<String>,
    /// `workdir`: what the cassette's `${workdir}` stands for. Read as written; when absent,
    /// [`WorkdirMeaning::Session`] for a file with a `copilot_eval:` mapping (recorded before
    /// the field existed) and [`WorkdirMeaning::TestRoot`] for a file without one (the
    /// copilot-sdk's recordings).
    pub workdir: WorkdirMeaning,
}

/// What a cassette's `${workdir}` stands for (the header's `workdir:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WorkdirMeaning {
    /// `test_root`: the test's root folder (the test context's `ctx.workdir()`,
    /// [`RunOptions::workdir_root`](crate::RunOptions::workdir_root)), the copilot-sdk's
    /// meaning: a session working in a subfolder `sub` writes `${workdir}/sub/...`. What
    /// copilot-eval records.
    #[default]
    TestRoot,
    /// `session`: the session's working directory, the subfolder included. The meaning of
    /// cassettes copilot-eval recorded before the header's `workdir` field.
    Session,
}

impl WorkdirMeaning {
    /// The name a cassette writes: `test_root` or `session`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkdirMeaning::TestRoot => "test_root",
            WorkdirMeaning::Session => "session",
        }
    }
}

/// One recorded conversation: the messages of the longest model request of one chain, followed
/// by the model's final reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The messages, in order, as written (placeholders such as `${workdir}` kept).
    pub messages: Vec<Message>,
}

pub use crate::wire::Role;

/// One recorded chat message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text (`None` when absent or `null`, e.g. an assistant message with only tool calls).
    pub content: Option<String>,
    /// The tool calls of an assistant message, in order (empty otherwise).
    pub tool_calls: Vec<RecordedToolCall>,
    /// The id of the call a `tool` message answers.
    pub tool_call_id: Option<String>,
    /// The token usage the model service reported for this reply (`usage:` of an assistant
    /// message, written by copilot-eval when it records); `None` when the file has none, as in
    /// the copilot-sdk recordings. A replay answers with it (else with
    /// [`DEFAULT_USAGE`](crate::model_server::DEFAULT_USAGE)); it never takes part in matching.
    pub usage: Option<ScriptedUsage>,
    /// `prompt_parts:` of a system message: the hashes of the parts of the recorded system
    /// prompt that the user controls ([`PromptParts`]: the eval's instructions, the custom
    /// instruction files, the agent prompt, the skill list), written by copilot-eval when it
    /// records. `None` when the file has none (older recordings, the copilot-sdk ones): the
    /// replay then does not compare them. A replay whose prompt's parts differ is a
    /// `replay_mismatch` naming the part.
    pub prompt_parts: Option<PromptParts>,
    /// 1-based line of the message in the file (0 when not read from YAML).
    pub line: u32,
    /// 1-based column of the message in the file (0 when not read from YAML).
    pub column: u32,
}

/// One recorded tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedToolCall {
    /// The recorded id (`toolcall_0`, ...); replay ignores its value and renumbers ids by order
    /// of appearance.
    pub id: String,
    /// The tool name, possibly a placeholder (`${shell}`).
    pub name: String,
    /// The arguments exactly as recorded: a JSON text, possibly with placeholders inside its
    /// strings (`${workdir}`).
    pub arguments: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCassette {
    #[serde(default)]
    copilot_eval: Option<RawHeader>,
    #[serde(default)]
    models: Vec<String>,
    #[serde(default)]
    errors: Vec<Spanned<RawError>>,
    conversations: Spanned<Vec<RawConversation>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    #[serde(default)]
    runtime_version: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    wire_format: Option<RawWire>,
    #[serde(default)]
    recorded: Option<String>,
    #[serde(default)]
    workdir: Option<RawWorkdir>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawWorkdir {
    TestRoot,
    Session,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawWire {
    ChatCompletions,
    Responses,
    WebsocketResponses,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConversation {
    messages: Spanned<Vec<Spanned<RawMessage>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMessage {
    role: Role,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Spanned<RawToolCall>>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    prompt_parts: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUsage {
    input_tokens: u64,
    output_tokens: u64,
    #[serde(default)]
    cache_read_tokens: u64,
    #[serde(default)]
    cache_write_tokens: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    id: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    function: RawFunction,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFunction {
    name: String,
    arguments: String,
}

impl Cassette {
    /// Reads and validates the cassette at `path` (see [`Cassette::parse`] for the rules).
    ///
    /// Errors: [`CassetteError::Io`] when the file cannot be read; [`CassetteError::Malformed`]
    /// with the file, line, column and what is wrong otherwise.
    pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Cassette::parse(&text, path)
    }

    /// Parses and validates cassette YAML; `path` is only used in errors and kept in
    /// [`Cassette::path`].
    ///
    /// The rules: top-level keys `copilot_eval` (optional header), `models` (optional list of
    /// strings), `errors` (optional list of [`RecordedError`]s) and `conversations` (required,
    /// non-empty unless `errors` has an entry); each conversation has a non-empty
    /// `messages` list; each message has a `role` (`system`, `user`, `assistant`, `tool`) and
    /// only the fields its role allows: `system` and `user` need `content`; `assistant` needs
    /// `content` or `tool_calls` (each `{id, type: function, function: {name, arguments}}`,
    /// `arguments` a string, and optionally `usage: {input_tokens, output_tokens,
    /// cache_read_tokens, cache_write_tokens}`, the two cache counts defaulting to 0); `tool`
    /// needs `tool_call_id` (its `content` may be absent, read as empty). Unknown keys are errors, so a typo cannot silently change what is matched.
    pub fn parse(text: &str, path: &Path) -> Result<Cassette, CassetteError> {
        let malformed = |line, column, message| malformed(path, line, column, message);
        let raw: RawCassette = serde_saphyr::from_str(text).map_err(|e| {
            let location = e.location();
            let message = serde_saphyr::DefaultMessageFormatter
                .format_message(e.without_snippet())
                .escape_debug()
                .to_string();
            malformed(
                location.map(|l| l.line() as u32).filter(|l| *l > 0),
                location.map(|l| l.column() as u32).filter(|c| *c > 0),
                message,
            )
        })?;
        let header = raw
            .copilot_eval
            .map(|h| CassetteHeader {
                runtime_version: h.runtime_version,
                model: h.model,
                wire_format: h.wire_format.map(|w| match w {
                    RawWire::ChatCompletions => WireApi::ChatCompletions,
                    RawWire::Responses => WireApi::Responses,
                    RawWire::WebsocketResponses => WireApi::WebSocketResponses,
                }),
                recorded: h.recorded,
                workdir: match h.workdir {
                    Some(RawWorkdir::TestRoot) => WorkdirMeaning::TestRoot,
                    Some(RawWorkdir::Session) | None => WorkdirMeaning::Session,
                },
            })
            .unwrap_or_default();
        if raw.conversations.value.is_empty() && raw.errors.is_empty() {
            let (line, column) = location(&raw.conversations.referenced);
            return Err(malformed(
                line,
                column,
                "`conversations` is empty: a cassette needs at least one conversation (or a recorded error in `errors`)".into(),
            ));
        }
        let mut conversations = Vec::new();
        for (c, conversation) in raw.conversations.value.into_iter().enumerate() {
            if conversation.messages.value.is_empty() {
                let (line, column) = location(&conversation.messages.referenced);
                return Err(malformed(
                    line,
                    column,
                    format!("conversation {} has no messages", c + 1),
                ));
            }
            let mut messages = Vec::new();
            for spanned in conversation.messages.value {
                messages.push(message(spanned, path)?);
            }
            conversations.push(Conversation { messages });
        }
        let mut errors = Vec::with_capacity(raw.errors.len());
        for error in raw.errors {
            errors.push(recorded_error(error, path)?);
        }
        Ok(Cassette {
            path: path.to_path_buf(),
            header,
            models: raw.models,
            conversations,
            errors,
        })
    }

    /// The model a replay serves: the header's `model`, else the first of `models`, else
    /// `None` (the server's default model).
    pub fn model(&self) -> Option<&str> {
        self.header
            .model
            .as_deref()
            .or_else(|| self.models.first().map(String::as_str))
    }
}

/// One message of a conversation, checked ([`check_fields`]) and read; `path` names the
/// cassette in errors.
pub(super) fn message(spanned: Spanned<RawMessage>, path: &Path) -> Result<Message, CassetteError> {
    let (line, column) = location(&spanned.referenced);
    let fail = |what: &str| malformed(path, line, column, what.to_owned());
    let raw = spanned.value;
    let role = raw.role;
    check_fields(&raw).map_err(|what| fail(&what))?;
    let mut tool_calls = Vec::new();
    for call in raw.tool_calls.unwrap_or_default() {
        let (line, column) = location(&call.referenced);
        if let Some(kind) = call.value.kind.as_deref()
            && kind != "function"
        {
            return Err(malformed(
                path,
                line,
                column,
                format!("tool call type `{kind}` is not supported (only `function`)"),
            ));
        }
        tool_calls.push(RecordedToolCall {
            id: call.value.id,
            name: call.value.function.name,
            arguments: call.value.function.arguments,
        });
    }
    Ok(Message {
        role,
        content: match role {
            Role::Tool => Some(raw.content.unwrap_or_default()),
            _ => raw.content,
        },
        tool_calls,
        tool_call_id: raw.tool_call_id,
        usage: raw.usage.map(|u| ScriptedUsage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }),
        prompt_parts: raw.prompt_parts,
        line: line.unwrap_or(0),
        column: column.unwrap_or(0),
    })
}

/// The fields a message's role allows, and what it needs: `content` for `system` and `user`,
/// `content` or `tool_calls` for `assistant`, `tool_call_id` for `tool`; `usage` only on
/// assistant messages, `prompt_parts` (known parts, SHA-256 hashes) only on system messages.
fn check_fields(raw: &RawMessage) -> Result<(), String> {
    let role = raw.role;
    let has_calls = raw.tool_calls.as_ref().is_some_and(|c| !c.is_empty());
    match role {
        Role::System | Role::User if raw.content.is_none() => {
            return Err(format!("a {} message needs `content`", role.as_str()));
        }
        Role::Assistant if raw.content.is_none() && !has_calls => {
            return Err("an assistant message needs `content` or `tool_calls`".to_owned());
        }
        Role::Tool if raw.tool_call_id.is_none() => {
            return Err("a tool message needs `tool_call_id`".to_owned());
        }
        _ => {}
    }
    if role != Role::Assistant && raw.tool_calls.is_some() {
        return Err(format!(
            "only assistant messages have `tool_calls` (this one is {})",
            role.as_str()
        ));
    }
    if role != Role::Tool && raw.tool_call_id.is_some() {
        return Err(format!(
            "only tool messages have `tool_call_id` (this one is {})",
            role.as_str()
        ));
    }
    if role != Role::Assistant && raw.usage.is_some() {
        return Err(format!(
            "only assistant messages have `usage` (this one is {})",
            role.as_str()
        ));
    }
    if let Some(parts) = &raw.prompt_parts {
        if role != Role::System {
            return Err(format!(
                "only system messages have `prompt_parts` (this one is {})",
                role.as_str()
            ));
        }
        for (name, value) in parts {
            if !PROMPT_PARTS.iter().any(|(known, _)| known == name) {
                let known: Vec<&str> = PROMPT_PARTS.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "unknown prompt part `{name}` in `prompt_parts`, expected one of {}; re-record the cassette (`cargo copilot-eval --record=all`) to rewrite it",
                    known.join(", ")
                ));
            }
            if !is_hash(value) {
                return Err(format!(
                    "`prompt_parts.{name}` is not a SHA-256 hash (64 lowercase hex digits): {value:?}; re-record the cassette (`cargo copilot-eval --record=all`) to rewrite it"
                ));
            }
        }
    }
    Ok(())
}

/// The error for a malformed cassette at `path`, at a location when known.
pub(super) fn malformed(
    path: &Path,
    line: Option<u32>,
    column: Option<u32>,
    message: String,
) -> CassetteError {
    CassetteError::Malformed {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// A YAML location as a cassette error gives it: 1-based line and column, `None` when unknown.
pub(super) fn location(l: &serde_saphyr::Location) -> (Option<u32>, Option<u32>) {
    (
        Some(l.line() as u32).filter(|v| *v > 0),
        Some(l.column() as u32).filter(|v| *v > 0),
    )
}

// --- recorded error answers (the copilot-sdk format's `errors:`) ------------------------------

/// One recorded error answer (an entry of a cassette's `errors:` list, as the copilot-sdk's
/// snapshots write it):
///
/// ```yaml
/// errors:
///   - model: claude-sonnet-4.5        # optional: only requests for this model
///     status: 429                      # the HTTP status, 400 to 599
///     code: user_weekly_rate_limited   # optional: the body's error type and code
///     message: You've reached your weekly rate limit.   # optional
///     retryAfterSeconds: 1             # optional: the `retry-after` header
///     messages:                        # the whole request (normalised) it answers
///       - role: system
///         content: ${system}
///       - role: user
///         content: Explain that auto mode recovered from a rate limit in one short sentence.
/// ```
///
/// A request whose normalised messages equal `messages` exactly (not a prefix), for the model
/// `model` when given, is answered with this error every time it is sent, before any recorded
/// conversation is considered.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedError {
    /// `model`: the model id the request must ask for; `None` answers any model.
    pub model: Option<String>,
    /// `status`: the HTTP status answered, 400 to 599.
    pub status: u16,
    /// `code`: the error code the body carries as `type` and `code` (`None`: `rate_limited`).
    pub code: Option<String>,
    /// `message`: the error message (`None`: `Rate limited by test snapshot`, the copilot-sdk's
    /// default).
    pub message: Option<String>,
    /// `retryAfterSeconds`: the `retry-after` header's seconds, when recorded.
    pub retry_after_seconds: Option<u64>,
    /// `messages`: the request this error answers, as recorded (placeholders kept).
    pub messages: Vec<Message>,
    /// 1-based line of the entry in the file (0 when not read from YAML).
    pub line: u32,
}

/// The message of a recorded error without one, as the copilot-sdk's replay proxy sends it.
pub const DEFAULT_ERROR_MESSAGE: &str = "Rate limited by test snapshot";
/// The code of a recorded error without one, as the copilot-sdk's replay proxy sends it.
pub const DEFAULT_ERROR_CODE: &str = "rate_limited";

/// An `errors:` entry as written (the SDK spells its keys in camelCase).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawError {
    #[serde(default)]
    model: Option<String>,
    status: u16,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    retry_after_seconds: Option<u64>,
    messages: Vec<Spanned<RawMessage>>,
}

/// Reads and checks one `errors:` entry of the cassette at `path`: a status from 400 to 599
/// and at least one message, each message checked as a conversation's are.
pub(super) fn recorded_error(
    spanned: Spanned<RawError>,
    path: &Path,
) -> Result<RecordedError, CassetteError> {
    let (line, column) = location(&spanned.referenced);
    let raw = spanned.value;
    if !(400..=599).contains(&raw.status) {
        return Err(malformed(
            path,
            line,
            column,
            format!(
                "`errors` entry has `status: {}`: a recorded error answer needs an HTTP error status from 400 to 599",
                raw.status
            ),
        ));
    }
    if raw.messages.is_empty() {
        return Err(malformed(
            path,
            line,
            column,
            "`errors` entry has no `messages`: it needs the request it answers".to_owned(),
        ));
    }
    let mut messages = Vec::with_capacity(raw.messages.len());
    for spanned in raw.messages {
        messages.push(message(spanned, path)?);
    }
    Ok(RecordedError {
        model: raw.model,
        status: raw.status,
        code: raw.code,
        message: raw.message,
        retry_after_seconds: raw.retry_after_seconds,
        messages,
        line: line.unwrap_or(0),
    })
}
