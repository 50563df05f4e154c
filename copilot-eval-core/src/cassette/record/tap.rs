//! The traffic tap: what the request seam hands the [`Recorder`] as each model exchange passes
//! (the request, then the upstream answer, copied chunk by chunk or event by event), and how
//! each answer is read into a reply.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures::Stream;
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpResponse, CopilotHttpResponseBody, CopilotRequestError,
};
use serde_json::{Value, json};

use super::{RecordedExchange, Recorder};
use crate::model_server::ScriptedUsage;
use crate::model_server::convert;
use crate::wire::{Api, Role, Transport, WireApi};

impl Recorder {
    /// An HTTP model request of `api` about to be forwarded, with its body's JSON (`None`: not
    /// JSON, the exchange is unrecordable): returns the exchange's index.
    pub(crate) fn http_request(&self, api: Api, body: Option<&Value>) -> usize {
        self.open(WireApi::of(api, Transport::Http), body)
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

    /// A text message the runtime sends on WebSocket `socket`, as JSON (after any rewrite): a
    /// `response.create` opens an exchange; other messages are not model requests.
    pub(crate) fn ws_request(&self, socket: u64, message: &Value) {
        if message.get("type").and_then(Value::as_str) != Some("response.create") {
            return;
        }
        let body = match message.get("response") {
            Some(inner @ Value::Object(_)) => inner,
            _ => message,
        };
        let wire = WireApi::of(Api::Responses, Transport::WebSocket);
        let index = self.open(wire, Some(body));
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

    pub(super) fn skip(&self, index: usize, reason: String) {
        mark(&mut self.lock().exchanges[index], Some(reason), None);
    }

    fn unrecordable(&self, index: usize, reason: String) {
        mark(&mut self.lock().exchanges[index], None, Some(reason));
    }

    /// The whole body of a successful HTTP answer (`complete`: the stream ended; otherwise the
    /// runtime stopped reading, and only a body that is already whole is kept).
    pub(super) fn finish_http(&self, index: usize, body: &[u8], complete: bool) {
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
                    .filter(|m| {
                        m.get("role")
                            .and_then(Value::as_str)
                            .and_then(Role::from_name)
                            == Some(Role::Assistant)
                    })
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
}

/// Sets the outcome of an exchange; the first outcome stays.
fn mark(exchange: &mut RecordedExchange, skipped: Option<String>, unrecordable: Option<String>) {
    if exchange.reply.is_some() || exchange.skipped.is_some() || exchange.unrecordable.is_some() {
        return;
    }
    exchange.skipped = skipped;
    exchange.unrecordable = unrecordable;
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
            parts.add(piece);
        }
    }
    if choices.is_empty() {
        return Err("the answer has no choices".into());
    }
    if streamed && !choices.values().any(|c| c.finished) {
        return Err("the stream ended without a finish_reason".into());
    }
    Ok(choices.into_values().map(ChoiceParts::message).collect())
}

impl ChoiceParts {
    /// Add a choice's `delta` (or its whole `message`): its text, and its tool calls' parts.
    fn add(&mut self, piece: &Value) {
        if let Some(text) = piece.get("content").and_then(Value::as_str) {
            self.text.get_or_insert_with(String::new).push_str(text);
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
            self.calls.entry(call_index).or_default().add(call);
        }
    }

    /// The assembled choice as an assistant message (`tool_calls` only when it has some).
    fn message(self) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": self.text.map(Value::String).unwrap_or(Value::Null),
        });
        let calls: Vec<Value> = self
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
    }
}

impl CallParts {
    /// Add one tool call delta: its id and name (the first given), and its arguments (a custom
    /// tool's `input`) appended.
    fn add(&mut self, call: &Value) {
        if let Some(id) = call.get("id").and_then(Value::as_str)
            && self.id.is_empty()
        {
            self.id = id.to_owned();
        }
        let (function, argument_key) = match call.get("custom") {
            Some(custom) => {
                self.custom = true;
                (custom, "input")
            }
            None => match call.get("function") {
                Some(function) => (function, "arguments"),
                None => return,
            },
        };
        if let Some(name) = function.get("name").and_then(Value::as_str)
            && self.name.is_empty()
        {
            self.name = name.to_owned();
        }
        match function.get(argument_key) {
            Some(Value::String(s)) => self.arguments.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => self.arguments.push_str(&other.to_string()),
        }
    }
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
