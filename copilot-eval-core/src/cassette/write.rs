//! Writing cassettes: a [`Cassette`] as YAML in the format [`Cassette::parse`] reads, checked by
//! reading the text back before anything is written.

use std::path::Path;

use serde::Serialize;

use super::format::RecordedError;
use super::format::{Cassette, CassetteError, CassetteHeader, Message, Role};
use crate::model_server::{ScriptedUsage, WireApi};

#[derive(Serialize)]
struct OutCassette<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    copilot_eval: Option<OutHeader<'a>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    models: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<OutError<'a>>,
    conversations: Vec<OutConversation<'a>>,
}

#[derive(Serialize)]
struct OutHeader<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wire_format: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<&'a str>,
    workdir: &'static str,
}

#[derive(Serialize)]
struct OutConversation<'a> {
    messages: Vec<OutMessage<'a>>,
}

#[derive(Serialize)]
pub(super) struct OutMessage<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OutToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<OutUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_parts: Option<&'a std::collections::BTreeMap<String, String>>,
}

#[derive(Serialize)]
struct OutUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
}

fn out_usage(usage: ScriptedUsage) -> OutUsage {
    OutUsage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
    }
}

#[derive(Serialize)]
struct OutToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunction<'a>,
}

#[derive(Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// The cassette value of a wire format (`chat_completions`, `responses`,
/// `websocket_responses`).
pub(crate) fn wire_format_name(wire: WireApi) -> &'static str {
    match wire {
        WireApi::ChatCompletions => "chat_completions",
        WireApi::Responses => "responses",
        WireApi::WebSocketResponses => "websocket_responses",
    }
}

pub(super) fn out_message(message: &Message) -> OutMessage<'_> {
    // The reader needs text on system and user messages, and text or calls on assistant
    // messages; an empty text stands for "no text" in matching, so it is written explicitly.
    let content = match (message.role, message.content.as_deref()) {
        (_, Some(text)) => Some(text),
        (Role::System | Role::User, None) => Some(""),
        (Role::Assistant, None) if message.tool_calls.is_empty() => Some(""),
        (_, None) => None,
    };
    OutMessage {
        role: message.role.as_str(),
        content,
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| OutToolCall {
                id: &call.id,
                kind: "function",
                function: OutFunction {
                    name: &call.name,
                    arguments: &call.arguments,
                },
            })
            .collect(),
        tool_call_id: match message.role {
            Role::Tool => Some(message.tool_call_id.as_deref().unwrap_or("")),
            _ => None,
        },
        usage: match message.role {
            Role::Assistant => message.usage.map(out_usage),
            _ => None,
        },
        prompt_parts: match message.role {
            Role::System => message.prompt_parts.as_ref(),
            _ => None,
        },
    }
}

fn out_header(header: &CassetteHeader) -> Option<OutHeader<'_>> {
    (*header != CassetteHeader::default()).then(|| OutHeader {
        runtime_version: header.runtime_version.as_deref(),
        model: header.model.as_deref(),
        wire_format: header.wire_format.map(wire_format_name),
        recorded: header.recorded.as_deref(),
        workdir: header.workdir.as_str(),
    })
}

/// Whether two cassettes hold the same header, models and messages (the file path and the
/// positions in the file are not compared).
fn same_content(a: &Cassette, b: &Cassette) -> bool {
    let bare = |c: &Cassette| {
        let mut c = c.clone();
        c.path = std::path::PathBuf::new();
        for message in c
            .conversations
            .iter_mut()
            .flat_map(|c| c.messages.iter_mut())
        {
            message.line = 0;
            message.column = 0;
        }
        for error in &mut c.errors {
            error.line = 0;
            for message in &mut error.messages {
                message.line = 0;
                message.column = 0;
            }
        }
        c
    };
    bare(a) == bare(b)
}

impl Cassette {
    /// The cassette as YAML text in the recorded format (see the
    /// [module documentation](super#format)): the `copilot_eval:` header when any of its fields
    /// is set, `models:` when not empty, then every conversation with its messages. Texts with
    /// line breaks are written as literal block scalars; any text the block styles cannot carry
    /// exactly (for example trailing spaces or carriage returns) is written double-quoted with
    /// escapes.
    ///
    /// The text is read back with [`Cassette::parse`] before it is returned, and must give the
    /// same header, models and messages (positions aside).
    ///
    /// Errors: [`CassetteError::Unwritable`] when the YAML serializer fails, or when neither
    /// style reads back as the same cassette (for example a message that breaks the format's
    /// rules, such as a `user` message without text).
    pub fn to_yaml(&self) -> Result<String, CassetteError> {
        let unwritable = |message: String| CassetteError::Unwritable {
            path: self.path.clone(),
            message,
        };
        let out = OutCassette {
            copilot_eval: out_header(&self.header),
            models: &self.models,
            errors: self.errors.iter().map(out_error).collect(),
            conversations: self
                .conversations
                .iter()
                .map(|c| OutConversation {
                    messages: c.messages.iter().map(out_message).collect(),
                })
                .collect(),
        };
        let mut last_problem = String::new();
        for quote_all in [false, true] {
            let mut options = serde_saphyr::SerializerOptions::default();
            options.quote_all = quote_all;
            // Long single-line texts stay on one line: folding would have to re-join them.
            options.folded_wrap_chars = usize::MAX;
            options.compact_list_indent = false;
            let text = serde_saphyr::to_string_with_options(&out, options)
                .map_err(|e| unwritable(format!("the YAML serializer failed: {e}")))?;
            match Cassette::parse(&text, &self.path) {
                Ok(back) if same_content(self, &back) => return Ok(text),
                Ok(_) => {
                    last_problem = "the written YAML reads back as a different cassette".into();
                }
                Err(e) => last_problem = format!("the written YAML does not read back: {e}"),
            }
        }
        Err(unwritable(last_problem))
    }

    /// Writes the cassette to `path` ([`Cassette::to_yaml`]), after `comment` (each of its
    /// lines written as a `# ` comment line; empty for none). Parent folders are created; the
    /// file is replaced atomically (a temporary file in the same folder, then a rename), so a
    /// reader never sees half a cassette.
    ///
    /// Errors: [`CassetteError::Unwritable`] from [`Cassette::to_yaml`]; [`CassetteError::Io`]
    /// when the folder or the file cannot be written.
    pub fn write(&self, path: &Path, comment: &str) -> Result<(), CassetteError> {
        let text = self.to_text(comment)?;
        Cassette::write_text(path, &text)
    }

    /// The file text [`Cassette::write`] writes: `comment` (each line a `# ` comment line),
    /// then [`Cassette::to_yaml`].
    ///
    /// Errors: [`CassetteError::Unwritable`] from [`Cassette::to_yaml`].
    pub fn to_text(&self, comment: &str) -> Result<String, CassetteError> {
        let yaml = self.to_yaml()?;
        let mut text = String::new();
        for line in comment.lines() {
            text.push_str(if line.is_empty() { "#" } else { "# " });
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&yaml);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Ok(text)
    }

    /// Writes `text` (from [`Cassette::to_text`]) to `path` atomically, creating parent
    /// folders.
    ///
    /// Errors: [`CassetteError::Io`] when the folder or the file cannot be written.
    pub fn write_text(path: &Path, text: &str) -> Result<(), CassetteError> {
        crate::artifact::write_atomically(path, text.as_bytes()).map_err(|source| {
            CassetteError::Io {
                path: path.to_path_buf(),
                source,
            }
        })
    }
}

/// An `errors:` entry as [`Cassette::to_yaml`](super::Cassette::to_yaml) writes it.
#[derive(Serialize)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{Conversation, RecordedToolCall, WorkdirMeaning};

    fn message(role: Role, content: Option<&str>) -> Message {
        Message {
            role,
            content: content.map(str::to_owned),
            tool_calls: Vec::new(),
            tool_call_id: None,
            usage: None,
            prompt_parts: None,
            line: 0,
            column: 0,
        }
    }

    #[test]
    fn awkward_texts_read_back_exactly() {
        let texts = [
            "trailing space \nnext line",
            "windows\r\nline ends\r\n",
            "  leading indentation\nsecond",
            "\n\nleading blank lines",
            "ends with blank lines\n\n\n",
            "key: value",
            "- a dash",
            "yes",
            "123",
            "1.0.102",
            "#not a comment",
            "tabs\tinside\tand ünïcödé ✓",
            "${workdir}/a.txt",
            "quotes ' and \" and \\ backslash",
            "",
        ];
        let mut messages = vec![message(Role::System, Some("${system}"))];
        for text in texts {
            messages.push(message(Role::User, Some(text)));
            let mut reply = message(Role::Assistant, Some(text));
            reply.tool_calls.push(RecordedToolCall {
                id: "toolcall_0".into(),
                name: "note".into(),
                arguments: serde_json::json!({ "text": text }).to_string(),
            });
            messages.push(reply);
            let mut result = message(Role::Tool, Some(text));
            result.tool_call_id = Some("toolcall_0".into());
            messages.push(result);
        }
        let cassette = Cassette {
            path: Path::new("awkward.yaml").to_path_buf(),
            header: CassetteHeader {
                runtime_version: Some("1.0.102".into()),
                model: Some("claude-sonnet-4.5".into()),
                wire_format: Some(WireApi::WebSocketResponses),
                recorded: Some("2026-11-30".into()),
                workdir: WorkdirMeaning::Session,
            },
            models: vec!["claude-sonnet-4.5".into()],
            conversations: vec![Conversation { messages }],
            errors: Vec::new(),
        };
        let yaml = cassette.to_yaml().unwrap();
        let back = Cassette::parse(&yaml, Path::new("awkward.yaml")).unwrap();
        assert!(same_content(&cassette, &back), "{yaml}");
        assert!(yaml.contains("wire_format: websocket_responses"), "{yaml}");
    }

    #[test]
    fn usage_of_assistant_messages_reads_back_and_is_optional() {
        let usage = ScriptedUsage {
            input_tokens: 1234,
            output_tokens: 56,
            cache_read_tokens: 700,
            cache_write_tokens: 8,
        };
        let mut first = message(Role::Assistant, Some("Calling."));
        first.tool_calls.push(RecordedToolCall {
            id: "toolcall_0".into(),
            name: "note".into(),
            arguments: "{}".into(),
        });
        first.usage = Some(usage);
        let mut result = message(Role::Tool, Some("noted"));
        result.tool_call_id = Some("toolcall_0".into());
        let messages = vec![
            message(Role::System, Some("${system}")),
            message(Role::User, Some("Note it.")),
            first,
            result,
            // A reply without usage stays without.
            message(Role::Assistant, Some("Done.")),
        ];
        let cassette = Cassette {
            path: Path::new("usage.yaml").to_path_buf(),
            header: CassetteHeader::default(),
            models: Vec::new(),
            conversations: vec![Conversation { messages }],
            errors: Vec::new(),
        };
        let yaml = cassette.to_yaml().unwrap();
        for needle in [
            "usage:",
            "input_tokens: 1234",
            "output_tokens: 56",
            "cache_read_tokens: 700",
            "cache_write_tokens: 8",
        ] {
            assert!(yaml.contains(needle), "{needle:?} missing:\n{yaml}");
        }
        assert_eq!(yaml.matches("usage:").count(), 1, "{yaml}");
        let back = Cassette::parse(&yaml, Path::new("usage.yaml")).unwrap();
        assert!(same_content(&cassette, &back), "{yaml}");
        let read: Vec<Option<ScriptedUsage>> = back.conversations[0]
            .messages
            .iter()
            .map(|m| m.usage)
            .collect();
        assert_eq!(read, [None, None, Some(usage), None, None]);

        // Written by hand: the cache counts default to 0; only assistant messages carry usage.
        let text = "conversations:\n  - messages:\n      - role: user\n        content: hi\n      - role: assistant\n        content: hello\n        usage: {input_tokens: 9, output_tokens: 3}\n";
        let hand = Cassette::parse(text, Path::new("hand.yaml")).unwrap();
        assert_eq!(
            hand.conversations[0].messages[1].usage,
            Some(ScriptedUsage {
                input_tokens: 9,
                output_tokens: 3,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            })
        );
        let misplaced = text.replace(
            "content: hi\n",
            "content: hi\n        usage: {input_tokens: 1, output_tokens: 1}\n",
        );
        let err = Cassette::parse(&misplaced, Path::new("bad.yaml")).unwrap_err();
        assert!(
            err.to_string()
                .contains("only assistant messages have `usage`"),
            "{err}"
        );
    }

    #[test]
    fn a_cassette_the_reader_would_refuse_is_not_written() {
        let cassette = Cassette {
            path: Path::new("bad.yaml").to_path_buf(),
            header: CassetteHeader::default(),
            models: Vec::new(),
            conversations: Vec::new(),
            errors: Vec::new(),
        };
        let err = cassette.to_yaml().unwrap_err();
        assert!(
            matches!(&err, CassetteError::Unwritable { message, .. } if message.contains("does not read back")),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("bad.yaml");
        assert!(cassette.write(&target, "").is_err());
        assert!(!target.exists());
    }
}
