//! Cassette building: turning the exchanges a [`Recorder`] captured into a [`Cassette`]
//! (injected calls taken out, normalised, deduplicated, redacted).

use std::collections::HashSet;

use serde_json::Value;

use super::super::format::{
    Cassette, CassetteHeader, Conversation, Message, RecordedToolCall, Role, WorkdirMeaning,
};
use super::super::normalize::{Context, NormalMessage, UnknownRole, normalize};
use super::{RecordError, RecordedExchange, Recorder};
use crate::artifact::Redactor;
use crate::model_server::ScriptedUsage;

impl Recorder {
    /// The cassette of everything recorded (see [`Recorder`] for the steps), with `redactor`
    /// applied to every text, tool name and argument.
    ///
    /// The header is `header` with its gaps filled: `model` from the first request's `model`,
    /// `wire_format` from the first request's wire format, `recorded` as today's date (UTC,
    /// `YYYY-MM-DD`); `runtime_version` stays as given. `models` lists the requests' models in
    /// order of first use. The cassette's [`path`](Cassette::path) is empty.
    ///
    /// Errors: [`RecordError::Unrecordable`] when any exchange could not be recorded
    /// faithfully; [`RecordError::Empty`] when no exchange has a reply.
    pub fn cassette(
        &self,
        header: CassetteHeader,
        redactor: &Redactor,
    ) -> Result<Cassette, RecordError> {
        let exchanges = self.exchanges();
        let folders = self.lock().folders.clone();
        for (i, exchange) in exchanges.iter().enumerate() {
            if let Some(reason) = &exchange.unrecordable {
                return Err(RecordError::Unrecordable {
                    request: i + 1,
                    reason: reason.clone(),
                });
            }
        }
        let answered: Vec<(usize, &RecordedExchange, &Vec<Value>)> = exchanges
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.reply.as_ref().map(|r| (i, e, r)))
            .collect();
        if answered.is_empty() {
            return Err(RecordError::Empty {
                requests: exchanges.len(),
            });
        }
        let (conversations, usages) = conversations(&answered, folders.as_ref())?;
        let kept = kept(&conversations);
        let kept_usages = kept_usages(&kept, &conversations, &usages);
        let (header, models) = filled_header(header, &exchanges);
        Ok(Cassette {
            path: std::path::PathBuf::new(),
            header,
            models,
            conversations: kept
                .into_iter()
                .zip(kept_usages)
                .map(|(k, usages)| Conversation {
                    messages: conversations[k]
                        .iter()
                        .zip(usages)
                        .map(|(m, usage)| to_message(m, usage, redactor))
                        .collect(),
                })
                .collect(),
            errors: Vec::new(),
        })
    }
}

/// A reply's position in its conversation and the usage its answer reported.
type ReplyUsage = Option<(usize, ScriptedUsage)>;

/// Each answered exchange as one normalised conversation (its request with the injected calls
/// taken out, then its reply), and per conversation the position of its reply and the usage
/// the answer reported. Errors: a message the cassette format cannot hold.
fn conversations(
    answered: &[(usize, &RecordedExchange, &Vec<Value>)],
    folders: Option<&crate::run::RunFolders>,
) -> Result<(Vec<Vec<NormalMessage>>, Vec<ReplyUsage>), RecordError> {
    // Ids the model issued: every tool call of every reply.
    let issued: HashSet<String> = answered
        .iter()
        .flat_map(|(_, _, reply)| reply.iter())
        .filter_map(|m| NormalMessage::from_request(m).ok())
        .flat_map(|m| m.tool_calls)
        .map(|c| c.id)
        .collect();
    let mut conversations: Vec<Vec<NormalMessage>> = Vec::new();
    let mut usages: Vec<ReplyUsage> = Vec::new();
    for (i, exchange, reply) in answered {
        let unrecordable = |UnknownRole(role)| RecordError::Unrecordable {
            request: i + 1,
            reason: format!("it has a `{role}` message, which the cassette format cannot hold"),
        };
        let mut messages: Vec<NormalMessage> = exchange
            .request
            .iter()
            .map(NormalMessage::from_request)
            .collect::<Result<_, _>>()
            .map_err(unrecordable)?;
        take_injected(&mut messages, &issued);
        for message in reply.iter() {
            messages.push(NormalMessage::from_request(message).map_err(unrecordable)?);
        }
        let context = Context::for_request(&exchange.request, folders);
        normalize(&mut messages, &context);
        // After normalisation the reply (its choices merged) is the last message.
        usages.push(
            exchange
                .usage
                .filter(|_| messages.last().is_some_and(|m| m.role == Role::Assistant))
                .map(|usage| (messages.len() - 1, usage)),
        );
        conversations.push(messages);
    }
    Ok((conversations, usages))
}

/// The conversations kept: those no other conversation extends, and the first of equal ones.
fn kept(conversations: &[Vec<NormalMessage>]) -> Vec<usize> {
    conversations
        .iter()
        .enumerate()
        .filter(|(i, conversation)| {
            !conversations.iter().enumerate().any(|(j, other)| {
                (other.len() > conversation.len()
                    && other[..conversation.len()] == conversation[..])
                    || (j < *i && other == *conversation)
            })
        })
        .map(|(i, _)| i)
        .collect()
}

/// A kept conversation holds the replies of the dropped requests of its chain: each reply gets
/// the usage of the exchange it answered (its own first, then in order).
fn kept_usages(
    kept: &[usize],
    conversations: &[Vec<NormalMessage>],
    usages: &[ReplyUsage],
) -> Vec<Vec<Option<ScriptedUsage>>> {
    kept.iter()
        .map(|&k| {
            let conversation = &conversations[k];
            let mut slots = vec![None; conversation.len()];
            let others = std::iter::once(k).chain(0..conversations.len());
            for c in others {
                let other = &conversations[c];
                if other.len() <= conversation.len()
                    && conversation[..other.len()] == other[..]
                    && let Some((position, usage)) = usages[c]
                {
                    slots[position].get_or_insert(usage);
                }
            }
            slots
        })
        .collect()
}

/// `header` with its gaps filled from the exchanges (see [`Recorder::cassette`]), and the
/// requests' models in order of first use.
fn filled_header(
    header: CassetteHeader,
    exchanges: &[RecordedExchange],
) -> (CassetteHeader, Vec<String>) {
    let mut models: Vec<String> = Vec::new();
    for model in exchanges.iter().filter_map(|e| e.model.clone()) {
        if !models.contains(&model) {
            models.push(model);
        }
    }
    let header = CassetteHeader {
        model: header.model.or_else(|| models.first().cloned()),
        wire_format: header.wire_format.or(exchanges.first().map(|e| e.wire)),
        recorded: header.recorded.or_else(|| {
            Some(crate::artifact::rfc3339(std::time::SystemTime::now())[..10].to_owned())
        }),
        runtime_version: header.runtime_version,
        workdir: WorkdirMeaning::TestRoot,
    };
    (header, models)
}

fn to_message(
    message: &NormalMessage,
    usage: Option<ScriptedUsage>,
    redactor: &Redactor,
) -> Message {
    Message {
        role: message.role,
        content: message.content.as_deref().map(|t| redactor.redact_str(t)),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|c| RecordedToolCall {
                id: c.id.clone(),
                name: redactor.redact_str(&c.name),
                arguments: redactor.redact_str(&c.arguments),
            })
            .collect(),
        tool_call_id: message.tool_call_id.clone(),
        usage: usage.filter(|_| message.role == Role::Assistant),
        prompt_parts: message
            .prompt_parts
            .clone()
            .filter(|_| message.role == Role::System),
        line: 0,
        column: 0,
    }
}

/// Takes out assistant tool calls whose id is not in `issued`, the tool results answering them,
/// and assistant messages left with neither text nor calls.
fn take_injected(messages: &mut Vec<NormalMessage>, issued: &HashSet<String>) {
    let mut injected: HashSet<String> = HashSet::new();
    for message in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        message.tool_calls.retain(|call| {
            let ours = issued.contains(&call.id);
            if !ours {
                injected.insert(call.id.clone());
            }
            ours
        });
    }
    if injected.is_empty() {
        return;
    }
    messages.retain(|m| match m.tool_call_id.as_deref() {
        Some(id) => !injected.contains(id),
        None => !(m.role == Role::Assistant && m.content.is_none() && m.tool_calls.is_empty()),
    });
}
