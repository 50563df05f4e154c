//! Rendering a [`ScriptedTurn`] in each wire format: Chat Completions JSON and SSE, and the
//! Responses API event sequence (sent as SSE or as WebSocket text messages).

use serde_json::{Value, json};

use super::script::{ScriptedTurn, ScriptedUsage};

/// A tool call with the id the server issued for it.
#[derive(Debug, Clone)]
pub(crate) struct IssuedCall {
    /// Server-issued call id (`call_N`).
    pub id: String,
    /// Item id for the Responses API `function_call` item (`fc_N`).
    pub item_id: String,
    pub name: String,
    /// Function calls: the arguments serialised as a JSON string. Freeform (custom) tool calls:
    /// the raw input text.
    pub arguments: String,
    /// Whether the tool is a freeform `custom` tool (call rendered as a custom tool call).
    pub custom: bool,
}

impl IssuedCall {
    /// The call in Chat Completions `tool_calls` shape (with `index` when given).
    fn chat_shape(&self, index: Option<usize>) -> Value {
        let mut value = if self.custom {
            json!({"id": self.id, "type": "custom", "custom": {"name": self.name, "input": self.arguments}})
        } else {
            json!({"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}})
        };
        if let Some(index) = index {
            value["index"] = json!(index);
        }
        value
    }
}

/// Everything needed to render one successful turn.
#[derive(Debug, Clone)]
pub(crate) struct TurnRender<'a> {
    pub turn: &'a ScriptedTurn,
    pub model: String,
    /// Response id: `chatcmpl-N` or `resp_N`.
    pub id: String,
    /// Item id of the assistant text message (Responses API), `msg_N`.
    pub message_item_id: String,
    pub calls: Vec<IssuedCall>,
    /// Unix seconds for the `created` / `created_at` fields.
    pub created: u64,
}

// ---------------------------------------------------------------------------------------------
// Usage fields
// ---------------------------------------------------------------------------------------------

/// Chat Completions `usage` object for `usage` (see the module docs for the mapping).
pub(crate) fn chat_usage(usage: ScriptedUsage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
    })
}

/// Responses API `usage` object for `usage` (see the module docs for the mapping).
pub(crate) fn responses_usage(usage: ScriptedUsage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}

// ---------------------------------------------------------------------------------------------
// Chat Completions
// ---------------------------------------------------------------------------------------------

fn finish_reason(render: &TurnRender<'_>) -> &'static str {
    if render.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

/// A non-streaming `chat.completion` object.
pub(crate) fn chat_completion_json(render: &TurnRender<'_>) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": render.turn.text_content(),
    });
    if !render.calls.is_empty() {
        message["tool_calls"] = Value::Array(
            render
                .calls
                .iter()
                .map(|call| call.chat_shape(None))
                .collect(),
        );
    }
    json!({
        "id": render.id,
        "object": "chat.completion",
        "created": render.created,
        "model": render.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason(render),
        }],
        "usage": chat_usage(render.turn.usage()),
    })
}

/// The `data:` payloads of a streamed `chat.completion.chunk` answer, in order, ending with the
/// literal `[DONE]` marker: a role chunk, text deltas, one chunk per tool call (id, name and the
/// whole argument string), a chunk with the finish reason and a usage chunk with no choices.
pub(crate) fn chat_completion_chunks(render: &TurnRender<'_>) -> Vec<String> {
    let chunk = |choices: Value, usage: Option<Value>| -> String {
        let mut value = json!({
            "id": render.id,
            "object": "chat.completion.chunk",
            "created": render.created,
            "model": render.model,
            "choices": choices,
        });
        if let Some(usage) = usage {
            value["usage"] = usage;
        }
        value.to_string()
    };
    let mut out = Vec::new();
    out.push(chunk(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
        None,
    ));
    if let Some(text) = render.turn.text_content() {
        for piece in text_pieces(text) {
            out.push(chunk(
                json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]),
                None,
            ));
        }
    }
    for (index, call) in render.calls.iter().enumerate() {
        out.push(chunk(
            json!([{"index": 0, "delta": {"tool_calls": [call.chat_shape(Some(index))]}, "finish_reason": null}]),
            None,
        ));
    }
    out.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish_reason(render)}]),
        None,
    ));
    out.push(chunk(json!([]), Some(chat_usage(render.turn.usage()))));
    out.push("[DONE]".to_owned());
    out
}

/// Splits text into a few streaming deltas (word by word, whitespace kept with the word before
/// it), so streaming sessions see more than one delta. Concatenating the pieces gives `text`.
pub(crate) fn text_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, ch) in text.char_indices() {
        if ch.is_whitespace() {
            in_space = true;
        } else if in_space {
            pieces.push(&text[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

// ---------------------------------------------------------------------------------------------
// Responses API
// ---------------------------------------------------------------------------------------------

/// The output items of the finished response: the assistant message (if there is text) and
/// one `function_call` item per call. Also what the server stores for continuations.
pub(crate) fn responses_output_items(render: &TurnRender<'_>) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(text) = render.turn.text_content() {
        items.push(message_item(render, text, "completed"));
    }
    for call in &render.calls {
        items.push(function_call_item(call, &call.arguments, "completed"));
    }
    items
}

fn message_item(render: &TurnRender<'_>, text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    } else {
        json!([])
    };
    json!({
        "id": render.message_item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

fn function_call_item(call: &IssuedCall, arguments: &str, status: &str) -> Value {
    if call.custom {
        json!({
            "id": call.item_id,
            "type": "custom_tool_call",
            "status": status,
            "call_id": call.id,
            "name": call.name,
            "input": arguments,
        })
    } else {
        json!({
            "id": call.item_id,
            "type": "function_call",
            "status": status,
            "call_id": call.id,
            "name": call.name,
            "arguments": arguments,
        })
    }
}

fn response_object(
    render: &TurnRender<'_>,
    status: &str,
    output: Vec<Value>,
    usage: Option<Value>,
) -> Value {
    json!({
        "id": render.id,
        "object": "response",
        "created_at": render.created,
        "status": status,
        "model": render.model,
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "error": null,
        "incomplete_details": null,
        "usage": usage,
    })
}

/// The final `response` object of a successful turn (also the body of a non-streaming
/// `POST /responses` answer).
pub(crate) fn responses_final_object(render: &TurnRender<'_>) -> Value {
    response_object(
        render,
        "completed",
        responses_output_items(render),
        Some(responses_usage(render.turn.usage())),
    )
}

/// The Responses API streaming events of one turn, in order, each a JSON object with `type`
/// and `sequence_number`: `response.created`, `response.in_progress`, the output items (message
/// text deltas; function call argument deltas), and `response.completed` with usage.
pub(crate) fn responses_events(render: &TurnRender<'_>) -> Vec<Value> {
    let mut events = Vec::new();
    events.push(json!({
        "type": "response.created",
        "response": response_object(render, "in_progress", Vec::new(), None),
    }));
    events.push(json!({
        "type": "response.in_progress",
        "response": response_object(render, "in_progress", Vec::new(), None),
    }));
    let mut output_index = 0usize;
    if let Some(text) = render.turn.text_content() {
        events.extend(message_events(render, text, output_index));
        output_index += 1;
    }
    for call in &render.calls {
        events.extend(call_events(call, output_index));
        output_index += 1;
    }
    events.push(json!({
        "type": "response.completed",
        "response": responses_final_object(render),
    }));
    for (sequence, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(sequence);
    }
    events
}

/// The streaming events of the turn's message item (at `output_index`): added, its text part
/// added, the text deltas, the text and part done, the item done.
fn message_events(render: &TurnRender<'_>, text: &str, output_index: usize) -> Vec<Value> {
    let item_id = &render.message_item_id;
    let mut events = vec![
        json!({
            "type": "response.output_item.added",
            "output_index": output_index,
            "item": message_item(render, text, "in_progress"),
        }),
        json!({
            "type": "response.content_part.added",
            "item_id": item_id,
            "output_index": output_index,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        }),
    ];
    for piece in text_pieces(text) {
        events.push(json!({
            "type": "response.output_text.delta",
            "item_id": item_id,
            "output_index": output_index,
            "content_index": 0,
            "delta": piece,
        }));
    }
    events.push(json!({
        "type": "response.output_text.done",
        "item_id": item_id,
        "output_index": output_index,
        "content_index": 0,
        "text": text,
    }));
    events.push(json!({
        "type": "response.content_part.done",
        "item_id": item_id,
        "output_index": output_index,
        "content_index": 0,
        "part": {"type": "output_text", "text": text, "annotations": []},
    }));
    events.push(json!({
        "type": "response.output_item.done",
        "output_index": output_index,
        "item": message_item(render, text, "completed"),
    }));
    events
}

/// The streaming events of one call's item (at `output_index`): added, its input (a custom
/// tool's) or arguments (a function's) delta and done, the item done.
fn call_events(call: &IssuedCall, output_index: usize) -> Vec<Value> {
    let mut events = vec![json!({
        "type": "response.output_item.added",
        "output_index": output_index,
        "item": function_call_item(call, "", "in_progress"),
    })];
    // A custom tool's input streams as `custom_tool_call_input`, a function's arguments as
    // `function_call_arguments`; the done event names the whole text `input` or `arguments`.
    let (events_of, whole) = if call.custom {
        ("response.custom_tool_call_input", "input")
    } else {
        ("response.function_call_arguments", "arguments")
    };
    events.push(json!({
        "type": format!("{events_of}.delta"),
        "item_id": call.item_id,
        "output_index": output_index,
        "delta": call.arguments,
    }));
    let mut done = json!({
        "type": format!("{events_of}.done"),
        "item_id": call.item_id,
        "output_index": output_index,
    });
    done[whole] = json!(call.arguments);
    events.push(done);
    events.push(json!({
        "type": "response.output_item.done",
        "output_index": output_index,
        "item": function_call_item(call, &call.arguments, "completed"),
    }));
    events
}

/// Formats one Server-Sent Events frame: an optional `event:` line, then `data:`.
pub(crate) fn sse_frame(event: Option<&str>, data: &str) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The WebSocket error event for `status`.
///
/// The runtime ignores any status number in a WebSocket error event; it derives the status from
/// `error.code` (measured with CLI 1.0.102): `invalid_request_error` -> 400, `not_found` -> 404,
/// `request_too_large` -> 413, `rate_limit_exceeded` -> 429, `service_unavailable` -> 503, any
/// other code -> 500. The event also carries `headers` with `x-should-retry: false` unless
/// `retry`; the runtime honours it as it does the HTTP response header.
pub(crate) fn websocket_error_event(status: u16, message: &str, retry: bool) -> Value {
    let mut event = error_body(status, message);
    let code = match status {
        400 => "invalid_request_error",
        404 => "not_found",
        413 => "request_too_large",
        429 => "rate_limit_exceeded",
        503 => "service_unavailable",
        _ => "server_error",
    };
    event["error"]["code"] = json!(code);
    event["type"] = json!("error");
    event["status"] = json!(status);
    if !retry {
        event["headers"] = json!({"x-should-retry": "false"});
    }
    event
}

/// OpenAI-style error body `{"error": {"message", "type", "code"}}` for `status`.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 => ("invalid_request_error", "invalid_request"),
        401 => ("authentication_error", "unauthorized"),
        403 => ("permission_error", "forbidden"),
        404 => ("not_found_error", "not_found"),
        413 => ("invalid_request_error", "request_too_large"),
        429 => ("rate_limit_error", "rate_limited"),
        500..=599 => ("server_error", "server_error"),
        _ => ("error", "error"),
    };
    json!({"error": {"message": message, "type": kind, "code": code}})
}
