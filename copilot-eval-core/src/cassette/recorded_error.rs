//! Recorded error answers: the copilot-sdk snapshot format's top-level `errors:` list (e.g. a
//! recorded `429` rate limit), read and checked.

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::format::{CassetteError, Message, RawMessage, location, malformed, message};
use super::write::{OutMessage, out_message};

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

/// An `errors:` entry as [`Cassette::to_yaml`](super::Cassette::to_yaml) writes it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OutError<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_seconds: Option<u64>,
    messages: Vec<OutMessage<'a>>,
}

/// `error` in its written form.
pub(super) fn out_error(error: &RecordedError) -> OutError<'_> {
    OutError {
        model: error.model.as_deref(),
        status: error.status,
        code: error.code.as_deref(),
        message: error.message.as_deref(),
        retry_after_seconds: error.retry_after_seconds,
        messages: error.messages.iter().map(out_message).collect(),
    }
}
