//! The replay [`Responder`]: strict prefix matching of normalised requests against the recorded
//! conversations, the replies, the consumption record, runtime-injected calls and diagnoses.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use serde_json::Value;

use super::format::{Cassette, Message, Role, WorkdirMeaning};
use super::format::{DEFAULT_ERROR_CODE, DEFAULT_ERROR_MESSAGE};
use super::normalize::{
    Context, NORMALIZERS_VERSION, NormalMessage, UnknownRole, normalize, shell_name,
};
use crate::model_server::{ModelRequest, Reply, Responder, ScriptedTurn};
pub use crate::result::replay::{
    ConversationDiff, Departure, LaterMiss, ReplayMismatch, ReplayMiss,
};
use crate::run::{ReplayCheck, RunFolders};

/// HTTP status of the answer to a request that matches nothing: a client error the runtime does
/// not retry (sent with `x-should-retry: false`), expressible on every wire format.
pub(crate) const MISS_STATUS: u16 = 400;

/// Width, in characters, of one side of a shortened message in a diagnosis.
const SHOWN_CHARS: usize = 160;
/// Characters kept before the first differing character when a message is shortened.
const CONTEXT_CHARS: usize = 50;

/// An assistant tool call found in a request whose id the server never issued: the runtime
/// made it, not the model. Such calls and their results are taken out of the request before it
/// is normalised and matched (see the [module documentation](super#runtime-injected-calls)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedCall {
    /// The model request (from 1) in which it was first seen.
    pub request: usize,
    /// Its id as the runtime sent it.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments text as sent.
    pub arguments: String,
    /// The text of its tool result in that request, if there was one.
    pub result: Option<String>,
}

/// One recorded conversation prepared for matching.
struct Stored {
    /// The recorded messages with consecutive assistant messages merged (the replies' source).
    merged: Vec<Message>,
    /// The same messages normalised; index `i` is `merged[i]`.
    normal: Vec<NormalMessage>,
    /// Per message: whether a reply at this position was served.
    served: Vec<bool>,
}

struct State {
    stored: Vec<Stored>,
    /// The recorded error answers' requests, normalised; index `i` is `cassette.errors[i]`.
    errors: Vec<Vec<NormalMessage>>,
    /// Per recorded error: how many requests it answered.
    errors_served: Vec<usize>,
    requests: usize,
    /// Tool calls answered so far: the server issued ids `call_{earlier + 1}` ..=
    /// `call_{earlier + issued}`.
    issued: u64,
    /// Ids `call_1` ..= `call_{earlier}` belong to the earlier sessions of a resumed session
    /// ([`ReplayResponder::earlier_calls`]): history, taken out like runtime-injected calls
    /// (a recording does not hold them either) but not reported as injected.
    earlier: u64,
    misses: Vec<ReplayMiss>,
    injected: Vec<InjectedCall>,
    /// Replies served without recorded `usage` (answered with the server's made-up default).
    without_usage: usize,
    /// The run's folders, when the run said ([`ReplayCheck::working_directory`]), their root
    /// the folder this cassette's `${workdir}` stands for ([`WorkdirMeaning`]).
    workdir: Option<RunFolders>,
}

/// Answers model requests from a [`Cassette`] (see the [module documentation](super)).
pub struct ReplayResponder {
    cassette: Arc<Cassette>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ReplayResponder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayResponder")
            .field("cassette", &self.cassette.path)
            .finish_non_exhaustive()
    }
}

/// A recorded conversation as replay compares it: its messages with consecutive assistant
/// messages merged ([`merge_recorded`]), and the same messages normalised; index `i` of the
/// second is `merged[i]`.
pub(super) fn merged_and_normal(messages: &[Message]) -> (Vec<Message>, Vec<NormalMessage>) {
    let merged = merge_recorded(messages);
    let mut normal: Vec<NormalMessage> = merged.iter().map(NormalMessage::from_recorded).collect();
    normalize(&mut normal, &Context::default());
    debug_assert_eq!(normal.len(), merged.len());
    (merged, normal)
}

/// Merges consecutive assistant messages: texts joined in order, tool calls concatenated.
pub(super) fn merge_recorded(messages: &[Message]) -> Vec<Message> {
    let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        match merged.last_mut() {
            Some(last) if last.role == Role::Assistant && message.role == Role::Assistant => {
                if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
                    last.content = Some(match last.content.take() {
                        Some(before) => before + text,
                        None => text.to_owned(),
                    });
                }
                last.tool_calls.extend(message.tool_calls.iter().cloned());
                last.usage = last.usage.or(message.usage);
            }
            _ => merged.push(message.clone()),
        }
    }
    merged
}

impl ReplayResponder {
    /// A responder for `cassette`, with every recorded reply not yet served.
    pub fn new(cassette: Arc<Cassette>) -> ReplayResponder {
        let stored = cassette
            .conversations
            .iter()
            .map(|conversation| {
                let (merged, normal) = merged_and_normal(&conversation.messages);
                Stored {
                    served: vec![false; merged.len()],
                    merged,
                    normal,
                }
            })
            .collect();
        let errors: Vec<Vec<NormalMessage>> = cassette
            .errors
            .iter()
            .map(|error| merged_and_normal(&error.messages).1)
            .collect();
        ReplayResponder {
            state: Mutex::new(State {
                stored,
                errors_served: vec![0; errors.len()],
                errors,
                requests: 0,
                issued: 0,
                earlier: 0,
                misses: Vec::new(),
                injected: Vec::new(),
                without_usage: 0,
                workdir: None,
            }),
            cassette,
        }
    }

    /// For a resumed session: the earlier sessions' tool calls carried as history have ids
    /// `call_1` ..= `call_{calls}` (the server that answers this session issues ids from
    /// `call_{calls + 1}` on, [`ServerConfig::first_call_id`](crate::model_server::ServerConfig::first_call_id)).
    /// They are taken out of each request before matching, like runtime-injected calls (a
    /// cassette recorded from a resumed session does not hold them either), and are not
    /// reported as injected.
    pub fn earlier_calls(self, calls: u64) -> Self {
        self.lock().earlier = calls;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every request that could not be answered, in arrival order.
    pub fn misses(&self) -> Vec<ReplayMiss> {
        self.lock().misses.clone()
    }

    /// Every runtime-injected tool call seen, once each, in order of first appearance.
    pub fn injected_calls(&self) -> Vec<InjectedCall> {
        self.lock().injected.clone()
    }

    /// Per recorded error answer (the cassette's `errors:`, in file order): how many requests
    /// it answered.
    pub fn errors_served(&self) -> Vec<usize> {
        self.lock().errors_served.clone()
    }

    /// How many model requests arrived so far.
    pub fn requests(&self) -> usize {
        self.lock().requests
    }

    /// How many replies were served from recorded messages without `usage:` (the copilot-sdk
    /// recordings, hand-written cassettes): the server answered them with its made-up
    /// [`DEFAULT_USAGE`](crate::model_server::DEFAULT_USAGE), so the run's token counts are
    /// unknown ([`ReplayCheck::usage_unknown`]).
    pub fn replies_without_usage(&self) -> usize {
        self.lock().without_usage
    }

    /// One line per recorded conversation with a reply that was never served, in file order:
    /// `conversation 2 of 3 (9 messages): 1 of 3 replies not served; the first is message 6:
    /// assistant ...`. Empty when the whole cassette was replayed.
    pub fn unconsumed(&self) -> Vec<String> {
        let state = self.lock();
        let total = state.stored.len();
        state
            .stored
            .iter()
            .enumerate()
            .filter_map(|(c, stored)| {
                let replies: Vec<usize> = (0..stored.normal.len())
                    .filter(|i| stored.normal[*i].role == Role::Assistant)
                    .collect();
                let missing: Vec<usize> = replies
                    .iter()
                    .copied()
                    .filter(|i| !stored.served[*i])
                    .collect();
                let first = *missing.first()?;
                Some(format!(
                    "conversation {} of {total} ({} messages): {} of {} replies not served; the first is message {}: {}",
                    c + 1,
                    stored.normal.len(),
                    missing.len(),
                    replies.len(),
                    first + 1,
                    shorten(&stored.normal[first].render()),
                ))
            })
            .collect()
    }

    /// When the run used some recorded conversations and left others wholly unused: a line
    /// saying how to split a cassette that holds several sessions (one session per file: the
    /// test's second run replays `<stem>-2.yaml`) with `cargo copilot-eval cassette split`, the
    /// used conversations first. Empty otherwise.
    fn split_hint(&self) -> String {
        let state = self.lock();
        let total = state.stored.len();
        let (used, unused): (Vec<usize>, Vec<usize>) =
            (1..=total).partition(|c| state.stored[c - 1].served.iter().any(|served| *served));
        if unused.is_empty() || used.is_empty() {
            return String::new();
        }
        let list = |numbers: &[usize], separator: &str| {
            numbers
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(separator)
        };
        let path = &self.cassette.path;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let next = path.with_file_name(format!("{stem}-2.yaml"));
        format!(
            "\n  conversation {} of {total} was not used at all: a cassette replays ONE session; if this file holds several recorded sessions, split it: `cargo copilot-eval cassette split {} --force --session {} --session {}` keeps the conversations this run used in {} and moves the unused ones into {} (the cassette of the test's second run); without --session it finds the sessions itself, one file per session ({stem}-2.yaml, {stem}-3.yaml, ...)",
            list(&unused, ", "),
            path.display(),
            list(&used, ","),
            list(&unused, ","),
            path.display(),
            next.display()
        )
    }

    /// The answer to one request (the work of [`Responder::respond`]).
    pub(crate) fn answer(&self, request: &ModelRequest) -> Reply {
        let mut state = self.lock();
        state.requests += 1;
        let number = state.requests;

        // 1. Runtime-injected calls out, then the comparable, normalised form.
        let (messages, context, unknown_role) = comparable(&mut state, request, number);
        if let Some((n, unknown)) = unknown_role {
            let reason = format!("matches no recorded conversation: message {n} has {unknown}");
            let miss = self.diagnose(&state, number, reason, &messages);
            return self.fail(&mut state, miss);
        }

        // 2. A recorded error answer for exactly this request (and model), before any reply.
        if let Some(reply) = self.recorded_error(&mut state, request, &messages) {
            return reply;
        }

        // 3. Conversations of which the request is a strict prefix, followed by a reply.
        let position = messages.len();
        let candidates: Vec<usize> = state
            .stored
            .iter()
            .enumerate()
            .filter(|(_, stored)| {
                stored.normal.len() > position
                    && same_prefix(
                        &stored.normal[..position],
                        &messages,
                        NormalMessage::matches,
                    )
                    && stored.normal[position].role == Role::Assistant
            })
            .map(|(c, _)| c)
            .collect();
        let chosen = candidates
            .iter()
            .copied()
            .find(|c| !state.stored[*c].served[position])
            .or_else(|| candidates.first().copied());

        let Some(chosen) = chosen else {
            let reason = changed_prompt(&state.stored, &messages)
                .unwrap_or_else(|| "matches no recorded conversation".to_owned());
            let miss = self.diagnose(&state, number, reason, &messages);
            return self.fail(&mut state, miss);
        };

        // 4. The reply, with placeholders resolved for this session.
        let reply = state.stored[chosen].merged[position].clone();
        let shell = if request.tool_names.iter().any(|t| t == "powershell") {
            "powershell"
        } else {
            "bash"
        };
        let turn = match render_reply(&reply, context.workdir.as_deref(), shell) {
            Ok(turn) => turn,
            Err(reason) => {
                let miss = self.diagnose(
                    &state,
                    number,
                    format!("matched conversation {}, but {reason}", chosen + 1),
                    &messages,
                );
                return self.fail(&mut state, miss);
            }
        };
        let served_reply = state.stored[chosen].normal[position].clone();
        for c in candidates {
            let stored = &mut state.stored[c];
            if stored.normal[position] == served_reply {
                stored.served[position] = true;
            }
            // The replies the request carries as history matched too: served. In one session
            // they were served by earlier requests already; a resumed session's first request
            // carries the earlier session's replies, which this server never served.
            for i in 0..position {
                if stored.normal[i].role == Role::Assistant {
                    stored.served[i] = true;
                }
            }
        }
        state.issued += turn.tool_calls().len() as u64;
        if reply.usage.is_none() {
            state.without_usage += 1;
        }
        Reply::Message(turn)
    }

    /// The first recorded error answer whose request equals `messages` exactly (same length,
    /// message for message) and whose `model`, when set, is the request's model, as a reply.
    fn recorded_error(
        &self,
        state: &mut State,
        request: &ModelRequest,
        messages: &[NormalMessage],
    ) -> Option<Reply> {
        let e = (0..state.errors.len()).find(|e| {
            let error = &self.cassette.errors[*e];
            error
                .model
                .as_deref()
                .is_none_or(|model| request.model.as_deref() == Some(model))
                && same_prefix(&state.errors[*e], messages, NormalMessage::matches)
        })?;
        state.errors_served[e] += 1;
        let error = &self.cassette.errors[e];
        Some(Reply::RecordedError {
            status: error.status,
            code: error
                .code
                .clone()
                .unwrap_or_else(|| DEFAULT_ERROR_CODE.to_owned()),
            message: error
                .message
                .clone()
                .unwrap_or_else(|| DEFAULT_ERROR_MESSAGE.to_owned()),
            retry_after_s: error.retry_after_seconds,
        })
    }

    fn fail(&self, state: &mut State, miss: ReplayMiss) -> Reply {
        tracing::debug!("replay miss: {miss}");
        let message = format!(
            "copilot-eval replay: model request {} {} (cassette {}; the run's error has the diagnosis)",
            miss.request,
            miss.reason,
            self.cassette.path.display()
        );
        state.misses.push(miss);
        Reply::Error {
            status: MISS_STATUS,
            message,
        }
    }

    fn diagnose(
        &self,
        state: &State,
        number: usize,
        reason: String,
        request: &[NormalMessage],
    ) -> ReplayMiss {
        let conversations = state
            .stored
            .iter()
            .enumerate()
            .map(|(c, stored)| compare(c + 1, &stored.normal, request))
            .collect();
        ReplayMiss {
            cassette: self.cassette.path.clone(),
            request: number,
            reason,
            normalizers: NORMALIZERS_VERSION,
            request_messages: request.iter().map(|m| shorten(&m.render())).collect(),
            conversations,
        }
    }
}

/// The comparable, normalised form of request `number`, with runtime-injected calls taken out
/// (and kept in `state`), the normalisers' context, and the first message (number from 1, and
/// role text) whose role no cassette holds: such a message can match nothing, so the request
/// is a miss that names it, diagnosed without it.
fn comparable(
    state: &mut State,
    request: &ModelRequest,
    number: usize,
) -> (Vec<NormalMessage>, Context, Option<(usize, UnknownRole)>) {
    let (earlier, issued) = (state.earlier, state.issued);
    let mut unknown_role: Option<(usize, UnknownRole)> = None;
    let mut messages: Vec<NormalMessage> = Vec::with_capacity(request.messages.len());
    for (i, message) in request.messages.iter().enumerate() {
        match NormalMessage::from_request(message) {
            Ok(message) => messages.push(message),
            Err(unknown) => {
                unknown_role.get_or_insert((i + 1, unknown));
            }
        }
    }
    let injected = take_injected(&mut messages, earlier, issued, number);
    for call in injected {
        if call_number(&call.id).is_some_and(|n| n >= 1 && n <= earlier) {
            continue;
        }
        if !state.injected.iter().any(|known| known.id == call.id) {
            state.injected.push(call);
        }
    }
    let context = Context::for_request(&request.messages, state.workdir.as_ref());
    normalize(&mut messages, &context);
    (messages, context, unknown_role)
}

/// Whether `request` matches `recorded` message for message, by `matches`.
fn same_prefix(
    recorded: &[NormalMessage],
    request: &[NormalMessage],
    matches: fn(&NormalMessage, &NormalMessage) -> bool,
) -> bool {
    recorded.len() == request.len() && recorded.iter().zip(request).all(|(r, q)| matches(r, q))
}

/// When the request would match a recorded conversation but for the user-controlled parts of
/// its system prompt: the miss's reason, naming the conversation and the parts that changed.
fn changed_prompt(stored: &[Stored], request: &[NormalMessage]) -> Option<String> {
    let position = request.len();
    let (c, conversation) = stored.iter().enumerate().find(|(_, stored)| {
        stored.normal.len() > position
            && same_prefix(
                &stored.normal[..position],
                request,
                NormalMessage::matches_ignoring_parts,
            )
            && stored.normal[position].role == Role::Assistant
    })?;
    let mut changed: Vec<String> = Vec::new();
    for (recorded, requested) in conversation.normal.iter().zip(request) {
        if let (Some(recorded), Some(requested)) = (&recorded.prompt_parts, &requested.prompt_parts)
        {
            for name in super::prompt::changed(recorded, requested) {
                if !changed.contains(&name) {
                    changed.push(name);
                }
            }
        }
    }
    let names: Vec<&str> = changed.iter().map(|n| super::prompt::describe(n)).collect();
    let what = match names.as_slice() {
        [] => return None,
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    Some(format!(
        "matches recorded conversation {} except for the system prompt: {what} changed since recording (prompt parts: {}); if the change is intended, re-record the cassette with `cargo copilot-eval --record=all <test>`",
        c + 1,
        changed.join(", ")
    ))
}

/// Takes runtime-injected calls out of `messages`: assistant tool calls whose id is not one the
/// server issued (`call_{earlier + 1}` ..= `call_{earlier + issued}`), the tool results answering them, and assistant
/// messages left with neither text nor calls.
fn take_injected(
    messages: &mut Vec<NormalMessage>,
    earlier: u64,
    issued: u64,
    request: usize,
) -> Vec<InjectedCall> {
    let ours = |id: &str| call_number(id).is_some_and(|n| n > earlier && n <= earlier + issued);
    let mut injected: Vec<InjectedCall> = Vec::new();
    for message in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
        message.tool_calls.retain(|call| {
            if ours(&call.id) {
                return true;
            }
            injected.push(InjectedCall {
                request,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                result: None,
            });
            false
        });
    }
    if injected.is_empty() {
        return injected;
    }
    messages.retain(|m| {
        let Some(id) = m.tool_call_id.as_deref() else {
            return !(m.role == Role::Assistant && m.content.is_none() && m.tool_calls.is_empty());
        };
        match injected.iter_mut().find(|c| c.id == id) {
            Some(call) => {
                call.result = m.content.clone();
                false
            }
            None => true,
        }
    });
    injected
}

/// `N` of a server-issued id `call_N`.
fn call_number(id: &str) -> Option<u64> {
    id.strip_prefix("call_").and_then(|n| n.parse().ok())
}

/// The scripted turn for a recorded reply: `${workdir}` resolved in its text and arguments (JSON
/// escaped inside arguments), shell placeholders resolved to the session's shell tool names, and
/// the recorded usage (the server's default when the reply has none).
fn render_reply(
    reply: &Message,
    workdir: Option<&str>,
    shell: &str,
) -> Result<ScriptedTurn, String> {
    const PLACEHOLDER: &str = "${workdir}";
    let resolve = |text: &str, json: bool| -> Result<String, String> {
        if !text.contains(PLACEHOLDER) {
            return Ok(text.to_owned());
        }
        let Some(dir) = workdir else {
            return Err(
                "its reply contains ${workdir}, the request's system prompt names no working directory and the run did not say which it is"
                    .to_owned(),
            );
        };
        let value = if json {
            let quoted = Value::String(dir.to_owned()).to_string();
            quoted[1..quoted.len() - 1].to_owned()
        } else {
            dir.to_owned()
        };
        Ok(text.replace(PLACEHOLDER, &value))
    };
    let mut turn: Option<ScriptedTurn> = None;
    for call in &reply.tool_calls {
        let name = shell_name(&call.name, shell).unwrap_or_else(|| call.name.clone());
        let arguments = Value::String(resolve(&call.arguments, true)?);
        turn = Some(match turn {
            None => ScriptedTurn::tool_call(name, arguments),
            Some(turn) => turn.with_tool_call(name, arguments),
        });
    }
    let text = reply
        .content
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(|t| resolve(t, false))
        .transpose()?;
    let turn = match (turn, text) {
        (Some(turn), Some(text)) => turn.with_text(text),
        (Some(turn), None) => turn,
        (None, text) => ScriptedTurn::text(text.unwrap_or_default()),
    };
    // The recorded usage when the cassette has it, else the server's default.
    Ok(match reply.usage {
        Some(usage) => turn.with_usage(usage),
        None => turn,
    })
}

/// Where `request` departs from the recorded conversation `recorded`.
fn compare(
    conversation: usize,
    recorded: &[NormalMessage],
    request: &[NormalMessage],
) -> ConversationDiff {
    let recorded_messages = recorded.len();
    let diff = |departure: Departure,
                shown_recorded: Option<String>,
                shown_request: Option<String>| ConversationDiff {
        conversation,
        recorded_messages,
        departure,
        recorded: shown_recorded,
        requested: shown_request,
    };
    if let Some(i) =
        (0..recorded.len().min(request.len())).find(|i| !recorded[*i].matches(&request[*i]))
    {
        let (r, q) = shorten_pair(&recorded[i].render(), &request[i].render());
        let mut changed_parts = Vec::new();
        if recorded[i].matches_ignoring_parts(&request[i])
            && let (Some(r), Some(q)) = (&recorded[i].prompt_parts, &request[i].prompt_parts)
        {
            changed_parts = super::prompt::changed(r, q)
                .iter()
                .map(|n| super::prompt::describe(n).to_owned())
                .collect();
        }
        let departure = Departure::Differs {
            message: i + 1,
            recorded_role: recorded[i].role,
            request_role: request[i].role,
            changed_parts,
        };
        return diff(departure, Some(r), Some(q));
    }
    let n = request.len();
    if n < recorded.len() {
        // The request is a strict prefix, but what follows is not a reply.
        let departure = Departure::LacksMessage {
            messages: n,
            recorded_role: recorded[n].role,
        };
        return diff(departure, Some(shorten(&recorded[n].render())), None);
    }
    if n == recorded.len() {
        return diff(Departure::WholeRecording { messages: n }, None, None);
    }
    diff(
        Departure::PastEnd {
            message: recorded.len() + 1,
        },
        None,
        Some(shorten(&request[recorded.len()].render())),
    )
}

/// `text` cut to [`SHOWN_CHARS`] characters, with `…` when cut.
pub(crate) fn shorten(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= SHOWN_CHARS {
        return text.to_owned();
    }
    let mut out: String = chars[..SHOWN_CHARS].iter().collect();
    out.push('…');
    out
}

/// Both texts cut to the same window of [`SHOWN_CHARS`] characters that starts
/// [`CONTEXT_CHARS`] characters before their first difference (`…` marks cut ends).
pub(crate) fn shorten_pair(a: &str, b: &str) -> (String, String) {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let start = first.saturating_sub(CONTEXT_CHARS);
    let window = |chars: &[char]| {
        let end = (start + SHOWN_CHARS).min(chars.len());
        let mut out = String::new();
        if start > 0 {
            out.push('…');
        }
        out.extend(&chars[start.min(chars.len())..end]);
        if end < chars.len() {
            out.push('…');
        }
        out
    };
    (window(&a), window(&b))
}

#[async_trait]
impl Responder for ReplayResponder {
    async fn respond(&self, request: &ModelRequest) -> Reply {
        self.answer(request)
    }
}

impl ReplayCheck for ReplayResponder {
    fn working_directory(&self, folders: &RunFolders) {
        self.lock().workdir = Some(match self.cassette.header.workdir {
            WorkdirMeaning::TestRoot => folders.clone(),
            WorkdirMeaning::Session => folders.session_only(),
        });
    }

    fn usage_unknown(&self) -> bool {
        self.replies_without_usage() > 0
    }

    fn mismatch(&self, turns_finished: bool) -> Option<ReplayMismatch> {
        let misses = self.misses();
        if let Some((first, later)) = misses.split_first() {
            return Some(ReplayMismatch::Miss {
                first: first.clone(),
                later: later
                    .iter()
                    .map(|miss| LaterMiss {
                        request: miss.request,
                        reason: miss.reason.clone(),
                    })
                    .collect(),
            });
        }
        if !turns_finished {
            return None;
        }
        let never_requested = self.unconsumed();
        if never_requested.is_empty() {
            return None;
        }
        Some(ReplayMismatch::Unconsumed {
            cassette: self.cassette.path.clone(),
            answered: self.requests(),
            never_requested,
            split_hint: self.split_hint(),
        })
    }
}
