//! Recording model exchanges through the request seam, and turning them into a cassette
//! (see [`Recorder`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures::Stream;
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpResponse, CopilotHttpResponseBody, CopilotRequestError,
};
use serde_json::{Value, json};

use super::format::{Cassette, CassetteHeader, Conversation, Message, RecordedToolCall, Role};
use super::normalize::{Context, NormalMessage, normalize, workdir_from_system_prompt};
use crate::model_server::convert;
use crate::model_server::{ScriptedUsage, WireApi};
use crate::report::Redactor;

/// One model request the recorder saw, with its reply.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedExchange {
    /// The wire format of the request: Chat Completions (`POST …/chat/completions`), Responses
    /// (`POST …/responses`) or WebSocket Responses (a `response.create` message).
    pub wire: WireApi,
    /// The `model` member of the request body.
    pub model: Option<String>,
    /// The request's whole conversation as Chat Completions messages (`{role, content,
    /// tool_calls?, tool_call_id?}`), as sent (before normalisation). Responses input items are
    /// converted the way the loopback model server converts them; a continuation
    /// (`previous_response_id`) is preceded by the conversation of the response it continues.
    pub request: Vec<Value>,
    /// The reply as Chat Completions assistant messages (one per choice, in choice order), once
    /// a successful answer arrived whole; `None` otherwise.
    pub reply: Option<Vec<Value>>,
    /// The token usage the answer reported (Chat Completions `usage`, Responses
    /// `response.usage`), when it had one; stored on the reply in the cassette.
    pub usage: Option<ScriptedUsage>,
    /// Why the exchange has no reply: an error status or error event, a transport failure, or
    /// an answer the runtime stopped reading (`None` while it is pending or when it has one).
    /// Such exchanges are left out of the cassette.
    pub skipped: Option<String>,
    /// Why the exchange cannot be recorded faithfully (a successful answer whose body could not
    /// be read, a compressed body, a role the cassette format has no room for, an unknown
    /// continuation). Any such exchange makes [`Recorder::cassette`] fail.
    pub unrecordable: Option<String>,
}

/// Why a recording gives no cassette.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// No model request got a complete, successful reply (no request was made, or all failed).
    #[error(
        "no model exchange was recorded ({requests} model requests seen, none with a complete successful reply)"
    )]
    Empty {
        /// How many model requests the recorder saw.
        requests: usize,
    },
    /// A model exchange could not be recorded faithfully, so no cassette is made from the
    /// session (see [`RecordedExchange::unrecordable`]).
    #[error("model request {request} cannot be recorded: {reason}")]
    Unrecordable {
        /// The request's number in the session, from 1.
        request: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Collects the model exchanges of one run, and makes the cassette. Shared as `Arc<Recorder>`;
/// give a fresh one to each run.
///
/// A recorder is given to a run with [`RunOptions::record`](crate::RunOptions::record). The
/// run then installs the request seam ([`crate::seam`]), which hands the recorder every model
/// request it forwards (HTTP Chat Completions, HTTP Responses, WebSocket `response.create`) and
/// a copy of every upstream answer, chunk by chunk, while the answer streams on to the runtime
/// unchanged. Nothing else is kept: no header, no URL, no token; the model-catalog `GET` is not
/// recorded.
///
/// [`Recorder::cassette`] then builds the cassette the replay engine reads:
///
/// 1. every exchange whose answer arrived whole and successful gives one conversation: the
///    request's messages (every wire format in Chat Completions shape, a WebSocket continuation
///    rebuilt from the responses it continues) followed by the reply;
/// 2. runtime-injected tool calls are taken out: an assistant tool call whose id no recorded
///    reply carries was put there by the runtime, not the model (the replay engine takes such
///    calls out of requests too);
/// 3. the conversation is normalised by the replay's own list
///    ([`NORMALIZERS`](super::NORMALIZERS)): `${system}`, `${workdir}` (from the system prompt's
///    working directory line), shell tool placeholders, `toolcall_N` ids, canonical JSON
///    arguments, no datetime prefix;
/// 4. a conversation that is a prefix of another one (an earlier request of the same chain), or
///    equal to an earlier one (a retried request), is dropped;
/// 5. every text is passed through a [`Redactor`]: a credential value from the environment
///    becomes `[redacted]`.
#[derive(Debug, Default)]
pub struct Recorder {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    exchanges: Vec<RecordedExchange>,
    /// Responses input items of each exchange (for storing its response's conversation).
    items: Vec<Option<Vec<Value>>>,
    /// Response id -> the whole conversation as Responses items (input, then output).
    responses: HashMap<String, Vec<Value>>,
    /// WebSocket id -> (the exchange in flight on it, the events received for it so far).
    sockets: HashMap<u64, Option<(usize, Vec<Value>)>>,
    next_socket: u64,
}

impl Recorder {
    /// A recorder with nothing recorded yet.
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every model request seen so far, in arrival order.
    pub fn exchanges(&self) -> Vec<RecordedExchange> {
        self.lock().exchanges.clone()
    }

    /// How many model requests were seen so far.
    pub fn model_requests(&self) -> usize {
        self.lock().exchanges.len()
    }

    // --- capture (called by the seam) ---------------------------------------------------------

    /// An HTTP request about to be forwarded: returns the exchange's index when it is a model
    /// request (`POST` to a Chat Completions or Responses path), else `None`.
    pub(crate) fn http_request(&self, method: &str, path: &str, body: &[u8]) -> Option<usize> {
        if !method.eq_ignore_ascii_case("POST") {
            return None;
        }
        let wire = if path.ends_with("/chat/completions") {
            WireApi::ChatCompletions
        } else if path.ends_with("/responses") {
            WireApi::Responses
        } else {
            return None;
        };
        let body = serde_json::from_slice::<Value>(body).ok();
        Some(self.open(wire, body.as_ref()))
    }

    /// Registers a request: its conversation, or why it cannot be read.
    fn open(&self, wire: WireApi, body: Option<&Value>) -> usize {
        let mut state = self.lock();
        let mut exchange = RecordedExchange {
            wire,
            model: None,
            request: Vec::new(),
            reply: None,
            usage: None,
            skipped: None,
            unrecordable: None,
        };
        let mut items = None;
        match body.filter(|b| b.is_object()) {
            None => exchange.unrecordable = Some("the request body is not a JSON object".into()),
            Some(body) => {
                exchange.model = body.get("model").and_then(Value::as_str).map(str::to_owned);
                if wire == WireApi::ChatCompletions {
                    exchange.request = body
                        .get("messages")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                } else {
                    let previous = body.get("previous_response_id").and_then(Value::as_str);
                    let mut all = match previous {
                        None => Vec::new(),
                        Some(id) => match state.responses.get(id) {
                            Some(known) => known.clone(),
                            None => {
                                exchange.unrecordable = Some(format!(
                                    "it continues the response {id:?}, which was not recorded"
                                ));
                                Vec::new()
                            }
                        },
                    };
                    all.extend(convert::input_items(body));
                    let instructions = body.get("instructions").and_then(Value::as_str);
                    exchange.request = convert::responses_items_to_messages(instructions, &all);
                    items = Some(all);
                }
            }
        }
        state.exchanges.push(exchange);
        state.items.push(items);
        state.exchanges.len() - 1
    }

    /// The upstream's answer to the HTTP exchange `index`: a successful, identity-encoded answer
    /// is passed on with its body copied as it streams; anything else is passed on unchanged
    /// and marks the exchange skipped (error status) or unrecordable (encoded body).
    pub(crate) fn http_response(
        self: &Arc<Self>,
        index: usize,
        mut response: CopilotHttpResponse,
    ) -> CopilotHttpResponse {
        if !(200..300).contains(&response.status) {
            self.skip(index, format!("the answer had status {}", response.status));
            return response;
        }
        let encoding = response
            .headers
            .get("content-encoding")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty() && v != "identity");
        if let Some(encoding) = encoding {
            self.unrecordable(
                index,
                format!("the answer's body is encoded ({encoding}) and cannot be read"),
            );
            return response;
        }
        let inner = std::mem::replace(&mut response.body, Box::pin(futures::stream::empty()));
        response.body = Box::pin(TeeBody {
            inner,
            buffer: Vec::new(),
            recorder: self.clone(),
            index,
            finished: false,
        });
        response
    }

    /// The HTTP exchange `index` failed before an answer arrived.
    pub(crate) fn http_failed(&self, index: usize, error: &str) {
        self.skip(index, format!("the request failed: {error}"));
    }

    /// A new upstream WebSocket; returns its id for [`ws_request`](Self::ws_request) and
    /// [`ws_event`](Self::ws_event).
    pub(crate) fn websocket(&self) -> u64 {
        let mut state = self.lock();
        state.next_socket += 1;
        let id = state.next_socket;
        state.sockets.insert(id, None);
        id
    }

    /// A text message the runtime sends on WebSocket `socket` (after any rewrite): a
    /// `response.create` opens an exchange; other messages are not model requests.
    pub(crate) fn ws_request(&self, socket: u64, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if message.get("type").and_then(Value::as_str) != Some("response.create") {
            return;
        }
        let body = match message.get("response") {
            Some(inner @ Value::Object(_)) => inner.clone(),
            _ => message,
        };
        let index = self.open(WireApi::WebSocketResponses, Some(&body));
        let mut state = self.lock();
        let previous = state.sockets.insert(socket, Some((index, Vec::new())));
        if let Some(Some((earlier, _))) = previous {
            mark(
                &mut state.exchanges[earlier],
                Some("a new request was sent before its answer ended".into()),
                None,
            );
        }
    }

    /// A text message the upstream sends on WebSocket `socket`: an event of the response in
    /// flight. A terminal event (`response.completed`, `response.failed`,
    /// `response.incomplete`, `error`) ends it.
    pub(crate) fn ws_event(&self, socket: u64, text: &str) {
        let Ok(event) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let terminal = matches!(
            kind,
            "response.completed" | "response.failed" | "response.incomplete" | "error"
        );
        let finished = {
            let mut state = self.lock();
            let Some(Some((_, events))) = state.sockets.get_mut(&socket) else {
                return;
            };
            events.push(event);
            if !terminal {
                return;
            }
            state.sockets.insert(socket, None).flatten()
        };
        if let Some((index, events)) = finished {
            self.finish_responses(index, &events, true);
        }
    }

    /// The WebSocket `socket` closed: a response still in flight is skipped.
    pub(crate) fn ws_closed(&self, socket: u64) {
        let mut state = self.lock();
        if let Some(Some((index, _))) = state.sockets.remove(&socket) {
            mark(
                &mut state.exchanges[index],
                Some("the WebSocket closed before the answer ended".into()),
                None,
            );
        }
    }

    fn skip(&self, index: usize, reason: String) {
        mark(&mut self.lock().exchanges[index], Some(reason), None);
    }

    fn unrecordable(&self, index: usize, reason: String) {
        mark(&mut self.lock().exchanges[index], None, Some(reason));
    }

    /// The whole body of a successful HTTP answer (`complete`: the stream ended; otherwise the
    /// runtime stopped reading, and only a body that is already whole is kept).
    fn finish_http(&self, index: usize, body: &[u8], complete: bool) {
        let wire = self.lock().exchanges[index].wire;
        let text = String::from_utf8_lossy(body);
        let trimmed = text.trim_start();
        let events: Result<Vec<Value>, String> = if trimmed.starts_with('{') {
            serde_json::from_str::<Value>(trimmed)
                .map(|v| vec![v])
                .map_err(|e| format!("the answer is not JSON: {e}"))
        } else {
            sse_events(&text)
        };
        let events = match events {
            Ok(events) => events,
            Err(reason) => return self.fail_reading(index, reason, complete),
        };
        if wire == WireApi::ChatCompletions {
            match chat_reply(&events) {
                Ok(reply) => self.set_reply(index, reply, chat_usage(&events), None),
                Err(reason) => self.fail_reading(index, reason, complete),
            }
        } else {
            self.finish_responses(index, &events, complete);
        }
    }

    fn fail_reading(&self, index: usize, reason: String, complete: bool) {
        if complete {
            self.unrecordable(index, reason);
        } else {
            self.skip(
                index,
                format!("the runtime stopped reading the answer before its end ({reason})"),
            );
        }
    }

    /// A Responses answer (SSE events, WebSocket events, or one final response object).
    fn finish_responses(&self, index: usize, events: &[Value], complete: bool) {
        for event in events {
            let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
            if matches!(kind, "response.failed" | "response.incomplete" | "error") {
                let what = event
                    .pointer("/error/message")
                    .or_else(|| event.pointer("/response/error/message"))
                    .and_then(Value::as_str)
                    .unwrap_or(kind);
                return self.skip(index, format!("the answer ended with {kind}: {what}"));
            }
        }
        match responses_output(events) {
            Ok((id, output, usage)) => {
                let reply: Vec<Value> = convert::responses_items_to_messages(None, &output)
                    .into_iter()
                    .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                    .collect();
                self.set_reply(index, reply, usage, Some((id, output)));
            }
            Err(reason) => self.fail_reading(index, reason, complete),
        }
    }

    fn set_reply(
        &self,
        index: usize,
        reply: Vec<Value>,
        usage: Option<ScriptedUsage>,
        response: Option<(String, Vec<Value>)>,
    ) {
        let mut state = self.lock();
        if let Some((id, output)) = response {
            let mut conversation = state.items[index].clone().unwrap_or_default();
            conversation.extend(output);
            state.responses.insert(id, conversation);
        }
        let exchange = &mut state.exchanges[index];
        if exchange.unrecordable.is_none() && exchange.skipped.is_none() {
            exchange.reply = Some(reply);
            exchange.usage = usage;
        }
    }

    // --- the cassette -------------------------------------------------------------------------

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
        // Ids the model issued: every tool call of every reply.
        let issued: HashSet<String> = answered
            .iter()
            .flat_map(|(_, _, reply)| reply.iter())
            .flat_map(|m| NormalMessage::from_request(m).tool_calls)
            .map(|c| c.id)
            .collect();
        let mut conversations: Vec<Vec<NormalMessage>> = Vec::new();
        // Per conversation: the position of its reply and the usage the answer reported.
        let mut usages: Vec<Option<(usize, ScriptedUsage)>> = Vec::new();
        for (i, exchange, reply) in &answered {
            let mut messages: Vec<NormalMessage> = exchange
                .request
                .iter()
                .map(NormalMessage::from_request)
                .collect();
            take_injected(&mut messages, &issued);
            messages.extend(reply.iter().map(NormalMessage::from_request));
            let context = Context {
                workdir: workdir_from_system_prompt(&exchange.request),
            };
            normalize(&mut messages, &context);
            if let Some(bad) = messages.iter().find(|m| role(&m.role).is_none()) {
                return Err(RecordError::Unrecordable {
                    request: i + 1,
                    reason: format!(
                        "it has a `{}` message, which the cassette format cannot hold",
                        bad.role
                    ),
                });
            }
            // After normalisation the reply (its choices merged) is the last message.
            usages.push(
                exchange
                    .usage
                    .filter(|_| messages.last().is_some_and(|m| m.role == "assistant"))
                    .map(|usage| (messages.len() - 1, usage)),
            );
            conversations.push(messages);
        }
        let kept: Vec<usize> = conversations
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
            .collect();
        // A kept conversation holds the replies of the dropped requests of its chain: each
        // reply gets the usage of the exchange it answered (its own first, then in order).
        let kept_usages: Vec<Vec<Option<ScriptedUsage>>> = kept
            .iter()
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
            .collect();
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
                Some(crate::report::rfc3339(std::time::SystemTime::now())[..10].to_owned())
            }),
            runtime_version: header.runtime_version,
        };
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
        })
    }
}

/// Sets the outcome of an exchange; the first outcome stays.
fn mark(exchange: &mut RecordedExchange, skipped: Option<String>, unrecordable: Option<String>) {
    if exchange.reply.is_some() || exchange.skipped.is_some() || exchange.unrecordable.is_some() {
        return;
    }
    exchange.skipped = skipped;
    exchange.unrecordable = unrecordable;
}

fn role(name: &str) -> Option<Role> {
    Some(match name {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => return None,
    })
}

fn to_message(
    message: &NormalMessage,
    usage: Option<ScriptedUsage>,
    redactor: &Redactor,
) -> Message {
    Message {
        role: role(&message.role).expect("roles are checked before"),
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
        usage: usage.filter(|_| message.role == "assistant"),
        line: 0,
        column: 0,
    }
}

/// Takes out assistant tool calls whose id is not in `issued`, the tool results answering them,
/// and assistant messages left with neither text nor calls.
fn take_injected(messages: &mut Vec<NormalMessage>, issued: &HashSet<String>) {
    let mut injected: HashSet<String> = HashSet::new();
    for message in messages.iter_mut().filter(|m| m.role == "assistant") {
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
        None => !(m.role == "assistant" && m.content.is_none() && m.tool_calls.is_empty()),
    });
}

/// The JSON events of a Server-Sent Events body (`data:` lines of each frame joined; `[DONE]`
/// and empty frames skipped).
fn sse_events(text: &str) -> Result<Vec<Value>, String> {
    let text = text.replace("\r\n", "\n");
    let mut events = Vec::new();
    for frame in text.split("\n\n") {
        let data: Vec<&str> = frame
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        let data = data.join("\n");
        if data.trim() == "[DONE]" {
            continue;
        }
        events.push(
            serde_json::from_str::<Value>(&data)
                .map_err(|e| format!("an event of the answer is not JSON: {e}"))?,
        );
    }
    Ok(events)
}

/// One tool call being assembled from stream deltas.
#[derive(Default)]
struct CallParts {
    id: String,
    custom: bool,
    name: String,
    arguments: String,
}

/// One choice being assembled from stream deltas.
#[derive(Default)]
struct ChoiceParts {
    text: Option<String>,
    calls: BTreeMap<u64, CallParts>,
    finished: bool,
}

/// The reply of a Chat Completions answer: a `chat.completion` object, or the chunks of a
/// stream (which must have ended: a choice with a `finish_reason`).
fn chat_reply(events: &[Value]) -> Result<Vec<Value>, String> {
    let mut choices: BTreeMap<u64, ChoiceParts> = BTreeMap::new();
    let mut streamed = false;
    for event in events {
        if event.get("error").is_some_and(|e| !e.is_null()) {
            return Err(format!("the answer carries an error: {}", event["error"]));
        }
        for (position, choice) in event
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = choice
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let parts = choices.entry(index).or_default();
            if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
                parts.finished = true;
            }
            let (piece, is_delta) = match (choice.get("delta"), choice.get("message")) {
                (Some(delta), _) => (delta, true),
                (None, Some(message)) => (message, false),
                (None, None) => continue,
            };
            streamed |= is_delta;
            if let Some(text) = piece.get("content").and_then(Value::as_str) {
                parts.text.get_or_insert_with(String::new).push_str(text);
            }
            for (call_position, call) in piece
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let call_index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(call_position as u64);
                let slot = parts.calls.entry(call_index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && slot.id.is_empty()
                {
                    slot.id = id.to_owned();
                }
                let (function, argument_key) = match call.get("custom") {
                    Some(custom) => {
                        slot.custom = true;
                        (custom, "input")
                    }
                    None => match call.get("function") {
                        Some(function) => (function, "arguments"),
                        None => continue,
                    },
                };
                if let Some(name) = function.get("name").and_then(Value::as_str)
                    && slot.name.is_empty()
                {
                    slot.name = name.to_owned();
                }
                match function.get(argument_key) {
                    Some(Value::String(s)) => slot.arguments.push_str(s),
                    Some(Value::Null) | None => {}
                    Some(other) => slot.arguments.push_str(&other.to_string()),
                }
            }
        }
    }
    if choices.is_empty() {
        return Err("the answer has no choices".into());
    }
    if streamed && !choices.values().any(|c| c.finished) {
        return Err("the stream ended without a finish_reason".into());
    }
    Ok(choices
        .into_values()
        .map(|choice| {
            let mut message = json!({
                "role": "assistant",
                "content": choice.text.map(Value::String).unwrap_or(Value::Null),
            });
            let calls: Vec<Value> = choice
                .calls
                .into_values()
                .map(|c| {
                    if c.custom {
                        json!({"id": c.id, "type": "custom", "custom": {"name": c.name, "input": c.arguments}})
                    } else {
                        json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
                    }
                })
                .collect();
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            message
        })
        .collect())
}

/// The response id, output items and usage of a Responses answer: the `response.completed`
/// event's response (its `output`, else the `response.output_item.done` items in output order;
/// its `usage`), or a final response object.
fn responses_output(
    events: &[Value],
) -> Result<(String, Vec<Value>, Option<ScriptedUsage>), String> {
    let mut done: BTreeMap<u64, Value> = BTreeMap::new();
    let mut completed: Option<&Value> = None;
    for event in events {
        match event.get("type").and_then(Value::as_str) {
            Some("response.output_item.done") => {
                let index = event
                    .get("output_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(done.len() as u64);
                if let Some(item) = event.get("item") {
                    done.insert(index, item.clone());
                }
            }
            Some("response.completed") => completed = event.get("response"),
            _ if event.get("object").and_then(Value::as_str) == Some("response") => {
                completed = Some(event);
            }
            _ => {}
        }
    }
    let Some(response) = completed else {
        return Err("the answer ended without response.completed".into());
    };
    let id = response
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let output = match response.get("output").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => items.clone(),
        _ => done.into_values().collect(),
    };
    let usage = response
        .get("usage")
        .and_then(|u| usage_of(u, "input_tokens", "output_tokens", "input_tokens_details"));
    Ok((id, output, usage))
}

/// The usage of a Chat Completions answer: the last `usage` object of the answer (the
/// `chat.completion` object's, or the usage chunk of a stream).
fn chat_usage(events: &[Value]) -> Option<ScriptedUsage> {
    events.iter().rev().find_map(|event| {
        event.get("usage").and_then(|u| {
            usage_of(
                u,
                "prompt_tokens",
                "completion_tokens",
                "prompt_tokens_details",
            )
        })
    })
}

/// A wire `usage` object as token counts: `input` and `output` tokens, and the cache counts
/// from `details` (`cached_tokens`, `cache_write_tokens`; the latter also read beside them).
/// `None` when the object has neither an input nor an output count.
fn usage_of(usage: &Value, input: &str, output: &str, details: &str) -> Option<ScriptedUsage> {
    let count = |value: Option<&Value>| value.and_then(Value::as_u64);
    let input_tokens = count(usage.get(input));
    let output_tokens = count(usage.get(output));
    if input_tokens.is_none() && output_tokens.is_none() {
        return None;
    }
    let details = usage.get(details);
    Some(ScriptedUsage {
        input_tokens: input_tokens.unwrap_or(0),
        output_tokens: output_tokens.unwrap_or(0),
        cache_read_tokens: count(details.and_then(|d| d.get("cached_tokens"))).unwrap_or(0),
        cache_write_tokens: count(details.and_then(|d| d.get("cache_write_tokens")))
            .or_else(|| count(usage.get("cache_write_tokens")))
            .unwrap_or(0),
    })
}

/// A response body that copies every chunk for the recorder while passing it on.
struct TeeBody {
    inner: CopilotHttpResponseBody,
    buffer: Vec<u8>,
    recorder: Arc<Recorder>,
    index: usize,
    finished: bool,
}

impl Stream for TeeBody {
    type Item = Result<Bytes, CopilotRequestError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.buffer.extend_from_slice(&chunk);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(error))) => {
                if !this.finished {
                    this.finished = true;
                    this.recorder
                        .skip(this.index, format!("the answer's body failed: {error}"));
                }
                Poll::Ready(Some(Err(error)))
            }
            Poll::Ready(None) => {
                if !this.finished {
                    this.finished = true;
                    let body = std::mem::take(&mut this.buffer);
                    this.recorder.finish_http(this.index, &body, true);
                }
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            let body = std::mem::take(&mut self.buffer);
            self.recorder.finish_http(self.index, &body, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(recorder: &Arc<Recorder>, wire_path: &str, body: Value, answer: &str) {
        let index = recorder
            .http_request("POST", wire_path, body.to_string().as_bytes())
            .expect("a model request");
        recorder.finish_http(index, answer.as_bytes(), true);
    }

    fn chat_body(messages: Value) -> Value {
        json!({"model": "claude-sonnet-4.5", "messages": messages, "stream": true})
    }

    const SYSTEM: &str = "You are Copilot.\nCurrent working directory: /ws/w1\nMore.";

    #[test]
    fn a_streamed_chat_exchange_becomes_one_normalised_conversation() {
        let recorder = Recorder::new();
        let first = json!([
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "<current_datetime>2026</current_datetime>\n\nCreate /ws/w1/a.txt"}
        ]);
        let stream = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"On it\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"toolu_9\",\"type\":\"function\",\"function\":{\"name\":\"create\",\"arguments\":\"{\\\"path\\\":\\\"/ws/w1/a.txt\\\",\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"file_text\\\":\\\"hi\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1500,\"completion_tokens\":42,\"prompt_tokens_details\":{\"cached_tokens\":900,\"cache_write_tokens\":7}}}\n\n",
            "data: [DONE]\n\n",
        );
        answered(
            &recorder,
            "/chat/completions",
            chat_body(first.clone()),
            stream,
        );
        let mut second = first.as_array().unwrap().clone();
        second.push(json!({"role": "assistant", "content": "On it", "tool_calls": [
            {"id": "toolu_9", "type": "function", "function": {"name": "create", "arguments": "{\"path\":\"/ws/w1/a.txt\",\"file_text\":\"hi\"}"}},
        ]}));
        // A call the runtime injected (the model never issued its id) and its result.
        second.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "injected_1", "type": "function", "function": {"name": "report_intent", "arguments": "{}"}},
        ]}));
        second.push(json!({"role": "tool", "tool_call_id": "injected_1", "content": "ok"}));
        second.push(
            json!({"role": "tool", "tool_call_id": "toolu_9", "content": "Created /ws/w1/a.txt"}),
        );
        answered(
            &recorder,
            "/chat/completions",
            chat_body(Value::Array(second)),
            &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1700, "completion_tokens": 5}}).to_string(),
        );
        let cassette = recorder
            .cassette(
                CassetteHeader {
                    runtime_version: Some("1.0.102".into()),
                    ..Default::default()
                },
                &Redactor::default(),
            )
            .unwrap();
        assert_eq!(cassette.header.model.as_deref(), Some("claude-sonnet-4.5"));
        assert_eq!(cassette.header.wire_format, Some(WireApi::ChatCompletions));
        assert_eq!(cassette.header.recorded.as_deref().map(str::len), Some(10));
        assert_eq!(cassette.models, ["claude-sonnet-4.5"]);
        // The first request's conversation is a prefix of the second: one conversation left.
        let [conversation] = cassette.conversations.as_slice() else {
            panic!("{:#?}", cassette.conversations)
        };
        let shown: Vec<String> = conversation
            .messages
            .iter()
            .map(|m| {
                format!(
                    "{} {:?} {:?} {:?}",
                    m.role.as_str(),
                    m.content,
                    m.tool_calls
                        .iter()
                        .map(|c| format!("{} {} {}", c.id, c.name, c.arguments))
                        .collect::<Vec<_>>(),
                    m.tool_call_id
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                "system Some(\"${system}\") [] None",
                "user Some(\"Create ${workdir}/a.txt\") [] None",
                "assistant Some(\"On it\") [\"toolcall_0 create {\\\"file_text\\\":\\\"hi\\\",\\\"path\\\":\\\"${workdir}/a.txt\\\"}\"] None",
                "tool Some(\"Created ${workdir}/a.txt\") [] Some(\"toolcall_0\")",
                "assistant Some(\"Done.\") [] None",
            ]
        );
        // Each reply keeps the usage its answer reported, the dropped first request's too.
        let usages: Vec<Option<ScriptedUsage>> =
            conversation.messages.iter().map(|m| m.usage).collect();
        let usage = |input_tokens, output_tokens, cache_read_tokens, cache_write_tokens| {
            Some(ScriptedUsage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_write_tokens,
            })
        };
        assert_eq!(
            usages,
            [
                None,
                None,
                usage(1500, 42, 900, 7),
                None,
                usage(1700, 5, 0, 0)
            ]
        );
        // The written text reads back as the same cassette.
        let yaml = cassette.to_yaml().unwrap();
        let back = Cassette::parse(&yaml, std::path::Path::new("back.yaml")).unwrap();
        assert_eq!(back.conversations.len(), 1);
        assert_eq!(back.conversations[0].messages[2].usage, usages[2]);
        assert_eq!(back.header, cassette.header);
    }

    #[test]
    fn responses_continuations_are_rebuilt_from_the_recorded_responses() {
        let recorder = Recorder::new();
        let socket = recorder.websocket();
        recorder.ws_request(
            socket,
            &json!({"type": "response.create", "model": "gpt-test", "instructions": SYSTEM,
                "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Note a."}]}]})
            .to_string(),
        );
        for event in [
            json!({"type": "response.created", "response": {"id": "resp_1", "output": []}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "call_id": "call_1", "name": "note", "arguments": "{\"text\":\"a\"}"}}),
            json!({"type": "response.completed", "response": {"id": "resp_1", "output": []}}),
        ] {
            recorder.ws_event(socket, &event.to_string());
        }
        recorder.ws_request(
            socket,
            &json!({"type": "response.create", "model": "gpt-test", "instructions": SYSTEM, "previous_response_id": "resp_1",
                "input": [{"type": "function_call_output", "call_id": "call_1", "output": "noted"}]})
            .to_string(),
        );
        for event in [
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]}}),
            json!({"type": "response.completed", "response": {"id": "resp_2", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]}],
                "usage": {"input_tokens": 80, "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 2}, "output_tokens": 9}}}),
        ] {
            recorder.ws_event(socket, &event.to_string());
        }
        let exchanges = recorder.exchanges();
        assert_eq!(exchanges.len(), 2);
        assert_eq!(exchanges[1].request.len(), 4, "{:#?}", exchanges[1].request);
        let cassette = recorder
            .cassette(CassetteHeader::default(), &Redactor::default())
            .unwrap();
        assert_eq!(
            cassette.header.wire_format,
            Some(WireApi::WebSocketResponses)
        );
        let [conversation] = cassette.conversations.as_slice() else {
            panic!("{:#?}", cassette.conversations)
        };
        let roles: Vec<&str> = conversation
            .messages
            .iter()
            .map(|m| m.role.as_str())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
        assert_eq!(conversation.messages[4].content.as_deref(), Some("Noted."));
        assert_eq!(conversation.messages[2].usage, None);
        assert_eq!(
            conversation.messages[4].usage,
            Some(ScriptedUsage {
                input_tokens: 80,
                output_tokens: 9,
                cache_read_tokens: 30,
                cache_write_tokens: 2,
            })
        );
    }

    #[test]
    fn failed_and_unreadable_answers() {
        let recorder = Recorder::new();
        let body = chat_body(json!([{"role": "user", "content": "hi"}]));
        let index = recorder
            .http_request("POST", "/chat/completions", body.to_string().as_bytes())
            .unwrap();
        recorder.skip(index, "the answer had status 500".into());
        assert_eq!(
            recorder.cassette(CassetteHeader::default(), &Redactor::default()),
            Err(RecordError::Empty { requests: 1 })
        );
        assert_eq!(recorder.http_request("GET", "/models", b""), None);
        // A stream cut before its end, read to its end: unrecordable.
        answered(
            &recorder,
            "/chat/completions",
            body,
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
        );
        let err = recorder
            .cassette(CassetteHeader::default(), &Redactor::default())
            .unwrap_err();
        assert!(
            matches!(&err, RecordError::Unrecordable { request: 2, reason } if reason.contains("finish_reason")),
            "{err}"
        );
    }

    #[test]
    fn secrets_are_redacted_and_developer_messages_refused() {
        let recorder = Recorder::new();
        let secret = "canary-secret-0123456789";
        answered(
            &recorder,
            "/chat/completions",
            chat_body(json!([{"role": "system", "content": "s"}, {"role": "user", "content": format!("token {secret}")}])),
            &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": format!("echo {secret}")}, "finish_reason": "stop"}]}).to_string(),
        );
        let cassette = recorder
            .cassette(
                CassetteHeader::default(),
                &Redactor::with_secrets([secret.to_owned()]),
            )
            .unwrap();
        let yaml = cassette.to_yaml().unwrap();
        assert!(!yaml.contains(secret), "{yaml}");
        assert!(yaml.contains("token [redacted]"), "{yaml}");

        let recorder = Recorder::new();
        answered(
            &recorder,
            "/chat/completions",
            chat_body(json!([{"role": "developer", "content": "d"}, {"role": "user", "content": "u"}])),
            &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"}]}).to_string(),
        );
        let err = recorder
            .cassette(CassetteHeader::default(), &Redactor::default())
            .unwrap_err();
        assert!(err.to_string().contains("`developer`"), "{err}");
    }
}
