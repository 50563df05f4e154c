//! The normalisers: one comparable form for recorded messages and for the messages of a live
//! model request, so that values that legitimately differ between machines and runtime versions
//! do not count as differences, and nothing else is forgiven.

// Every entry of the list has one signature, `fn(&mut Vec<_>, &Context)`: merging needs the Vec.
#![allow(clippy::ptr_arg)]

use serde_json::Value;

pub(crate) use super::context::Context;
use super::format::{Message, Role};
use super::prompt::PromptParts;
pub(crate) use super::spellings::spellings;
use super::user_text;

/// Version of the normaliser list ([`NORMALIZERS`]). Raised whenever an entry is added, removed
/// or changes what it does; a mismatch diagnosis names it.
pub const NORMALIZERS_VERSION: u32 = 6;

/// Whether a normaliser belongs to the cassette format itself or compensates drift between the
/// runtime that recorded a cassette and the runtime that replays it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormalizerKind {
    /// Part of the format: values that differ between machines or runs (placeholders, the
    /// datetime prefix, tool-call ids, JSON formatting). Applies to every runtime version.
    Format,
    /// A compat entry for measured drift between runtime versions. It is applied only as
    /// described and never loosens anything else.
    Compat,
}

/// One entry of the normaliser list. Every entry is applied, in list order, to **both** sides:
/// the recorded conversation and the incoming model request.
#[derive(Debug, Clone, Copy)]
pub struct Normalizer {
    /// Stable name, e.g. `view_line_numbers`; used in documentation and diagnoses.
    pub name: &'static str,
    /// Version of this entry (1 for the first behaviour; raised when its behaviour changes).
    pub version: u32,
    /// Format rule or drift compensation.
    pub kind: NormalizerKind,
    /// The runtime versions it is for, e.g. `recordings from runtimes before 1.0.102, replayed
    /// on 1.0.102`.
    pub runtime_versions: &'static str,
    /// What it does, in one sentence.
    pub description: &'static str,
    apply: fn(&mut Vec<NormalMessage>, &Context),
}

/// The normaliser list, in the order it is applied. The first three
/// [`NormalizerKind::Compat`] entries are the drift measured between the copilot-sdk recordings
/// and runtime 1.0.102.
pub const NORMALIZERS: &[Normalizer] = &[
    Normalizer {
        name: "merge_assistant_messages",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all",
        description: "consecutive assistant messages (one recorded reply with several choices) become one message: texts joined in order, tool calls concatenated",
        apply: merge_assistant_messages,
    },
    Normalizer {
        name: "system_prompt",
        version: 2,
        kind: NormalizerKind::Format,
        runtime_versions: "all; the user-controlled parts are found by runtime 1.0.102's section tags",
        description: "the content of every system message becomes `${system}`; on the request side (and when recording) the hashes of the parts the user controls (instructions, custom instruction files, agent prompt, skill list) are kept as the message's `prompt_parts`, compared when the recording has them",
        apply: system_prompt,
    },
    Normalizer {
        name: "skill_context_front_matter",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, the `---` front-matter block right after a `<skill-context>`'s `Base directory for this skill:` line is removed (runtimes differ in showing it)",
        apply: |m, _| each_user_text(m, user_text::skill_context_front_matter),
    },
    Normalizer {
        name: "task_completion_notice",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, a subagent completion notice in any wording becomes `Agent \"<id>\" (<type>) has completed successfully. Use read_agent with agent_id \"<id>\" to retrieve the full results.`",
        apply: |m, _| each_user_text(m, user_text::task_completion_notice),
    },
    Normalizer {
        name: "datetime_tag",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all 1.0.x (measured on 1.0.102) and the copilot-sdk recordings",
        description: "in user messages, every `<current_datetime>...</current_datetime>` is removed; the line breaks around it stay (replaces `datetime_prefix` v2, which also removed the line breaks after it)",
        apply: |m, _| each_user_text(m, user_text::datetime_tag),
    },
    Normalizer {
        name: "reminder_block",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, every `<reminder>...</reminder>` block is removed",
        apply: |m, _| each_user_text(m, user_text::reminder_block),
    },
    Normalizer {
        name: "system_reminder_block",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, every `<system_reminder>...</system_reminder>` block is removed",
        apply: |m, _| each_user_text(m, user_text::system_reminder_block),
    },
    Normalizer {
        name: "agent_instructions_block",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, every `<agent_instructions>...</agent_instructions>` block is removed",
        apply: |m, _| each_user_text(m, user_text::agent_instructions_block),
    },
    Normalizer {
        name: "plan_prefix",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, a leading `[[PLAN]]` and the whitespace around it are removed",
        apply: |m, _| each_user_text(m, user_text::plan_prefix),
    },
    Normalizer {
        name: "compaction_prompt",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "in user messages, the runtime's compaction request (`Please create a detailed summary of the conversation so far. The history is being compacted...` to the end of the text) becomes `${compaction_prompt}`",
        apply: |m, _| each_user_text(m, user_text::compaction_prompt),
    },
    Normalizer {
        name: "user_text_trim",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all (the copilot-sdk replay proxy's rule; measured on its recordings)",
        description: "whitespace at both ends of a user message's text is removed",
        apply: |m, _| each_user_text(m, user_text::user_text_trim),
    },
    Normalizer {
        name: "workdir",
        version: 3,
        kind: NormalizerKind::Format,
        runtime_versions: "all; the folder is the test's root folder the run was given (the session's working directory when none, or when the session works outside it), in every spelling (as given and canonical, e.g. `/var/...` and `/private/var/...`, and as the system prompt's `Current working directory: <path>` line (1.0.102) spells it); a cassette whose header has no `workdir: test_root` means the session's working directory",
        description: "every spelling of the test's root folder (the copilot-sdk's `${workdir}`) becomes `${workdir}` in message texts and in the string values of tool-call arguments (longest spelling first); a session in a subfolder `sub` gives `${workdir}/sub/...`",
        apply: workdir,
    },
    Normalizer {
        name: "session_folder",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "1.0.102 (a prompt sent in plan mode names `<runtime home>/session-state/<session id>/plan.md`)",
        description: "in user messages, the run's session folder (`<folder>/session-state/<uuid>`) becomes `${session_folder}`",
        apply: session_folder,
    },
    Normalizer {
        name: "tool_output_file",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "1.0.102 (a tool result over the runtime's size limit is replaced by `Output too large to read at once (N KB). Saved to: <temp folder>/<ms>-copilot-tool-output-<hex>.txt` and a 500-character preview)",
        description: "in tool results, the path of the runtime's large-output file (its temp folder, timestamp and random name) becomes `${tool_output_file}`",
        apply: tool_output_file,
    },
    Normalizer {
        name: "shell_tool_names",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all",
        description: "tool-call names of the shell tools become placeholders: `bash`/`powershell` -> `${shell}`, `read_*` -> `${read_shell}`, `write_*` -> `${write_shell}`, `stop_*` -> `${stop_shell}`, `list_*` -> `${list_shell}`",
        apply: shell_tool_names,
    },
    Normalizer {
        name: "tool_call_ids",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all",
        description: "tool-call ids are renumbered by order of first appearance: `toolcall_0`, `toolcall_1`, ... (in calls and in `tool_call_id`)",
        apply: tool_call_ids,
    },
    Normalizer {
        name: "canonical_json",
        version: 1,
        kind: NormalizerKind::Format,
        runtime_versions: "all",
        description: "tool-call arguments that parse as JSON are rewritten canonically (keys sorted, no insignificant whitespace); others are kept as they are",
        apply: canonical_json,
    },
    Normalizer {
        name: "view_line_numbers",
        version: 1,
        kind: NormalizerKind::Compat,
        runtime_versions: "recordings from runtimes that numbered `view` output (the copilot-sdk cassettes), replayed on 1.0.102, which does not",
        description: "in the result of a `view` call whose every line starts with consecutive line numbers (`N. ` or a bare `N.` for an empty line), the numbers are removed",
        apply: view_line_numbers,
    },
    Normalizer {
        name: "unknown_tool_list",
        version: 1,
        kind: NormalizerKind::Compat,
        runtime_versions: "runtimes that list the available tools after `Tool 'X' does not exist.` (1.0.102 and the copilot-sdk recordings; the list changes with every tool set)",
        description: "a tool result `Tool 'X' does not exist. Available tools that can be called are ...` loses everything after `does not exist.`",
        apply: unknown_tool_list,
    },
    Normalizer {
        name: "shell_exit_marker",
        version: 1,
        kind: NormalizerKind::Compat,
        runtime_versions: "1.0.102 (`<shellId: N completed with exit code X>`) against the copilot-sdk recordings (`<exited with exit code X>`)",
        description: "in tool results, `<shellId: N completed with exit code X>` becomes `<exited with exit code X>`",
        apply: shell_exit_marker,
    },
];

/// A request's message whose `role` (the text here) is none a cassette holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the role `{0}`, which no cassette holds (system, user, assistant, tool)")]
pub(crate) struct UnknownRole(pub String);

/// A message in the comparable form: only what the model sees of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NormalMessage {
    pub role: Role,
    /// `None` for no text (absent, `null` or empty).
    pub content: Option<String>,
    pub tool_calls: Vec<NormalToolCall>,
    pub tool_call_id: Option<String>,
    /// A system message's user-controlled parts ([`PromptParts`]): from the cassette on the
    /// recorded side (`None` for cassettes without them), computed from the prompt on the
    /// request side.
    pub prompt_parts: Option<PromptParts>,
}

/// A tool call in the comparable form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NormalToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl NormalMessage {
    /// The comparable form of a recorded message (before the normalisers).
    pub fn from_recorded(message: &Message) -> NormalMessage {
        NormalMessage {
            role: message.role,
            content: message.content.clone().filter(|c| !c.is_empty()),
            tool_calls: message
                .tool_calls
                .iter()
                .map(|c| NormalToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            tool_call_id: match message.role {
                Role::Tool => message.tool_call_id.clone(),
                _ => None,
            },
            prompt_parts: match message.role {
                Role::System => message.prompt_parts.clone(),
                _ => None,
            },
        }
    }

    /// Whether a request's message (`request`) matches this recorded one: equal role, text,
    /// tool calls and `tool_call_id`, and, when the recording has `prompt_parts`, equal parts
    /// (a recording without them accepts any).
    pub fn matches(&self, request: &NormalMessage) -> bool {
        self.matches_ignoring_parts(request)
            && self
                .prompt_parts
                .as_ref()
                .is_none_or(|parts| Some(parts) == request.prompt_parts.as_ref())
    }

    /// [`NormalMessage::matches`] without the `prompt_parts`.
    pub fn matches_ignoring_parts(&self, request: &NormalMessage) -> bool {
        self.role == request.role
            && self.content == request.content
            && self.tool_calls == request.tool_calls
            && self.tool_call_id == request.tool_call_id
    }

    /// The comparable form of one Chat Completions message of a request (before the
    /// normalisers). Only `role`, `content`, `tool_calls` and `tool_call_id` are kept: other
    /// members (`copilot_cache_control`, `name`, ...) are transport hints the model does not
    /// read as conversation. Content parts are joined: text parts by their text, other parts
    /// (images) by their canonical JSON, separated by newlines.
    ///
    /// Errors: [`UnknownRole`] when the message's `role` is not one a cassette holds
    /// ([`Role`]: a `developer` message, or none), which neither a recording nor a replay can
    /// match.
    pub fn from_request(message: &Value) -> Result<NormalMessage, UnknownRole> {
        let text = message.get("role").and_then(Value::as_str).unwrap_or("");
        let role = Role::from_name(text).ok_or_else(|| UnknownRole(text.to_owned()))?;
        let content = match message.get("content") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(parts)) => Some(
                parts
                    .iter()
                    .map(|p| match p.get("text").and_then(Value::as_str) {
                        Some(text) => text.to_owned(),
                        None => canonical(p),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Some(Value::Null) | None => None,
            Some(other) => Some(canonical(other)),
        }
        .filter(|c| !c.is_empty());
        let tool_calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| {
                        let (name, arguments) = if let Some(f) = call.get("function") {
                            (f.get("name"), f.get("arguments"))
                        } else {
                            let c = call.get("custom");
                            (
                                c.and_then(|c| c.get("name")),
                                c.and_then(|c| c.get("input")),
                            )
                        };
                        NormalToolCall {
                            id: call
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            name: name.and_then(Value::as_str).unwrap_or("").to_owned(),
                            arguments: match arguments {
                                Some(Value::String(s)) => s.clone(),
                                Some(Value::Null) | None => String::new(),
                                Some(other) => canonical(other),
                            },
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(NormalMessage {
            tool_call_id: (role == Role::Tool)
                .then(|| {
                    message
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .flatten(),
            role,
            content,
            tool_calls,
            prompt_parts: None,
        })
    }

    /// A one-line rendering for diagnoses: `user "text"`, `assistant "text" calls:
    /// [toolcall_0 name {args}]`, `tool[toolcall_0] "result"`. Strings are JSON-escaped.
    pub fn render(&self) -> String {
        let mut out = match &self.tool_call_id {
            Some(id) => format!("{}[{id}]", self.role),
            None => self.role.as_str().to_owned(),
        };
        if let Some(content) = &self.content {
            out.push(' ');
            out.push_str(&Value::String(content.clone()).to_string());
        }
        if !self.tool_calls.is_empty() {
            out.push_str(" calls: [");
            let calls: Vec<String> = self
                .tool_calls
                .iter()
                .map(|c| format!("{} {} {}", c.id, c.name, c.arguments))
                .collect();
            out.push_str(&calls.join(", "));
            out.push(']');
        }
        if let Some(parts) = &self.prompt_parts {
            let parts: Vec<String> = parts
                .iter()
                .map(|(name, hash)| format!("{name} {}", &hash[..hash.len().min(8)]))
                .collect();
            out.push_str(&format!(" prompt parts: [{}]", parts.join(", ")));
        }
        out
    }
}

/// Applies `rewrite` (one of [`user_text`]'s rules) to the text of every user message; a text
/// left empty becomes no text.
fn each_user_text(messages: &mut [NormalMessage], rewrite: fn(&str) -> String) {
    for message in messages.iter_mut().filter(|m| m.role == Role::User) {
        if let Some(content) = &message.content {
            message.content = Some(rewrite(content)).filter(|c| !c.is_empty());
        }
    }
}

/// Applies every normaliser of [`NORMALIZERS`], in order.
pub(crate) fn normalize(messages: &mut Vec<NormalMessage>, context: &Context) {
    for normalizer in NORMALIZERS {
        (normalizer.apply)(messages, context);
    }
}

/// Canonical JSON text of a value: object keys sorted, no insignificant whitespace.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push(':');
                write_canonical(&map[*key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// Format normalisers
// ---------------------------------------------------------------------------------------------

fn merge_assistant_messages(messages: &mut Vec<NormalMessage>, _: &Context) {
    let mut merged: Vec<NormalMessage> = Vec::with_capacity(messages.len());
    for message in messages.drain(..) {
        match merged.last_mut() {
            Some(last) if last.role == Role::Assistant && message.role == Role::Assistant => {
                if let Some(text) = message.content {
                    last.content = Some(match last.content.take() {
                        Some(before) => before + &text,
                        None => text,
                    });
                }
                last.tool_calls.extend(message.tool_calls);
            }
            _ => merged.push(message),
        }
    }
    *messages = merged;
}

fn system_prompt(messages: &mut Vec<NormalMessage>, context: &Context) {
    for message in messages.iter_mut().filter(|m| m.role == Role::System) {
        if context.live && message.prompt_parts.is_none() {
            message.prompt_parts = Some(super::prompt::prompt_parts(
                message.content.as_deref().unwrap_or(""),
                &context.workdirs,
            ));
        }
        message.content = Some("${system}".to_owned());
    }
}

fn workdir(messages: &mut Vec<NormalMessage>, context: &Context) {
    const PLACEHOLDER: &str = "${workdir}";
    for dir in context.workdirs.iter().filter(|d| !d.is_empty()) {
        for message in messages.iter_mut() {
            if let Some(content) = &mut message.content {
                *content = content.replace(dir.as_str(), PLACEHOLDER);
            }
            for call in &mut message.tool_calls {
                call.arguments = match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(mut value) => {
                        replace_in_strings(&mut value, dir, PLACEHOLDER);
                        canonical(&value)
                    }
                    Err(_) => call.arguments.replace(dir.as_str(), PLACEHOLDER),
                };
            }
        }
    }
}

fn session_folder(messages: &mut Vec<NormalMessage>, _: &Context) {
    for message in messages.iter_mut().filter(|m| m.role == Role::User) {
        if let Some(content) = &message.content
            && content.contains(super::session_folder::MARK)
        {
            message.content = Some(super::session_folder::replace(content));
        }
    }
}

fn tool_output_file(messages: &mut Vec<NormalMessage>, _: &Context) {
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        if let Some(content) = &message.content
            && content.contains(super::tool_output_file::MARK)
        {
            message.content = Some(super::tool_output_file::replace(content));
        }
    }
}

fn replace_in_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s.contains(from) => *s = s.replace(from, to),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| replace_in_strings(v, from, to)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| replace_in_strings(v, from, to)),
        _ => {}
    }
}

/// The placeholder of a shell tool name, if `name` is one.
pub(crate) fn shell_placeholder(name: &str) -> Option<&'static str> {
    Some(match name {
        "bash" | "powershell" => "${shell}",
        "read_bash" | "read_powershell" => "${read_shell}",
        "write_bash" | "write_powershell" => "${write_shell}",
        "stop_bash" | "stop_powershell" => "${stop_shell}",
        "list_bash" | "list_powershell" => "${list_shell}",
        _ => return None,
    })
}

/// The tool name a shell placeholder stands for, given the shell the request offers (`bash` or
/// `powershell`); `None` when `name` is no shell placeholder.
pub(crate) fn shell_name(placeholder: &str, shell: &str) -> Option<String> {
    Some(match placeholder {
        "${shell}" => shell.to_owned(),
        "${read_shell}" => format!("read_{shell}"),
        "${write_shell}" => format!("write_{shell}"),
        "${stop_shell}" => format!("stop_{shell}"),
        "${list_shell}" => format!("list_{shell}"),
        _ => return None,
    })
}

fn shell_tool_names(messages: &mut Vec<NormalMessage>, _: &Context) {
    for call in messages.iter_mut().flat_map(|m| m.tool_calls.iter_mut()) {
        if let Some(placeholder) = shell_placeholder(&call.name) {
            call.name = placeholder.to_owned();
        }
    }
}

fn tool_call_ids(messages: &mut Vec<NormalMessage>, _: &Context) {
    let mut ids: Vec<String> = Vec::new();
    let mut number = |id: &str| -> String {
        let n = match ids.iter().position(|known| known == id) {
            Some(n) => n,
            None => {
                ids.push(id.to_owned());
                ids.len() - 1
            }
        };
        format!("toolcall_{n}")
    };
    for message in messages.iter_mut() {
        for call in &mut message.tool_calls {
            call.id = number(&call.id);
        }
        if let Some(id) = &mut message.tool_call_id {
            *id = number(id);
        }
    }
}

fn canonical_json(messages: &mut Vec<NormalMessage>, _: &Context) {
    for call in messages.iter_mut().flat_map(|m| m.tool_calls.iter_mut()) {
        if let Ok(value) = serde_json::from_str::<Value>(&call.arguments) {
            call.arguments = canonical(&value);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Compat normalisers (runtime drift)
// ---------------------------------------------------------------------------------------------

/// The name of the call each tool result answers (`tool_call_id` -> name).
fn result_tool_names(messages: &[NormalMessage]) -> Vec<Option<String>> {
    messages
        .iter()
        .map(|m| {
            let id = m.tool_call_id.as_deref()?;
            messages
                .iter()
                .flat_map(|m| m.tool_calls.iter())
                .find(|c| c.id == id)
                .map(|c| c.name.clone())
        })
        .collect()
}

fn view_line_numbers(messages: &mut Vec<NormalMessage>, _: &Context) {
    let names = result_tool_names(messages);
    for (message, name) in messages.iter_mut().zip(names) {
        if message.role != Role::Tool || name.as_deref() != Some("view") {
            continue;
        }
        if let Some(content) = &message.content
            && let Some(stripped) = strip_line_numbers(content)
        {
            message.content = Some(stripped).filter(|c| !c.is_empty());
        }
    }
}

/// `text` without its line numbers, when every line starts with consecutive numbers (`N. text`,
/// or `N.` alone for an empty line); `None` otherwise.
pub(crate) fn strip_line_numbers(text: &str) -> Option<String> {
    let mut expected: Option<u64> = None;
    let mut out: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || line.as_bytes().get(digits) != Some(&b'.') {
            return None;
        }
        let n: u64 = line[..digits].parse().ok()?;
        if expected.is_some_and(|e| e != n) {
            return None;
        }
        expected = Some(n + 1);
        let rest = &line[digits + 1..];
        out.push(match rest.strip_prefix(' ') {
            Some(text) => text,
            None if rest.is_empty() => "",
            None => return None,
        });
    }
    Some(out.join("\n"))
}

fn unknown_tool_list(messages: &mut Vec<NormalMessage>, _: &Context) {
    const LIST: &str = " Available tools that can be called are ";
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        let Some(content) = &message.content else {
            continue;
        };
        if !content.starts_with("Tool '") {
            continue;
        }
        if let Some(at) = content.find("' does not exist.")
            && content[at + "' does not exist.".len()..].starts_with(LIST)
            && !content[..at].contains('\n')
        {
            message.content = Some(content[..at + "' does not exist.".len()].to_owned());
        }
    }
}

fn shell_exit_marker(messages: &mut Vec<NormalMessage>, _: &Context) {
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        if let Some(content) = &message.content
            && content.contains("<shellId: ")
        {
            message.content = Some(rewrite_exit_markers(content));
        }
    }
}

/// Rewrites every `<shellId: N completed with exit code X>` to `<exited with exit code X>`.
pub(crate) fn rewrite_exit_markers(text: &str) -> String {
    const OPEN: &str = "<shellId: ";
    const MIDDLE: &str = " completed with exit code ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        let rewritten = (|| {
            let id_len = after.bytes().take_while(u8::is_ascii_alphanumeric).count();
            let tail = after[id_len..].strip_prefix(MIDDLE)?;
            let code_len = tail
                .char_indices()
                .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
                .count();
            let code = &tail[..code_len];
            let tail = tail[code_len..].strip_prefix('>')?;
            (id_len > 0 && !code.is_empty() && code != "-").then_some((code, tail))
        })();
        match rewritten {
            Some((code, tail)) => {
                out.push_str("<exited with exit code ");
                out.push_str(code);
                out.push('>');
                rest = tail;
            }
            None => {
                out.push_str(OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
