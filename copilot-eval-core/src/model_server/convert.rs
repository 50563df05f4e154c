//! Normalising request bodies: Responses API input items to Chat Completions messages, and
//! tool names from either tool-list shape.

use serde_json::{Map, Value, json};

/// Tool names of a request's `tools` array, in order. Accepts the Chat Completions shapes
/// (`{"type":"function","function":{"name":..}}`, `{"type":"custom","custom":{"name":..}}`) and
/// the Responses shape (`{"type":"function"|"custom","name":..}`); other tool kinds contribute
/// their `name` or, without one, their `type`.
pub(crate) fn tool_names(body: &Value) -> Vec<String> {
    tools(body)
        .filter_map(|tool| tool_name(tool).map(str::to_owned))
        .collect()
}

/// Names of the freeform (`"type": "custom"`) tools of a request: their calls carry a raw
/// `input` string instead of JSON arguments.
pub(crate) fn custom_tool_names(body: &Value) -> Vec<String> {
    tools(body)
        .filter(|tool| tool.get("type").and_then(Value::as_str) == Some("custom"))
        .filter_map(|tool| tool_name(tool).map(str::to_owned))
        .collect()
}

fn tools(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter())
        .into_iter()
        .flatten()
}

fn tool_name(tool: &Value) -> Option<&str> {
    tool.pointer("/function/name")
        .or_else(|| tool.pointer("/custom/name"))
        .or_else(|| tool.get("name"))
        .or_else(|| tool.get("type"))
        .and_then(Value::as_str)
}

/// The `input` of a Responses request as a list of items (a bare string input is one user
/// message).
pub(crate) fn input_items(body: &Value) -> Vec<Value> {
    match body.get("input") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(text)) => {
            vec![json!({"type": "message", "role": "user", "content": text})]
        }
        _ => Vec::new(),
    }
}

/// Converts Responses API items (input items and earlier output items) into Chat Completions
/// messages `{role, content, tool_calls?, tool_call_id?}`.
///
/// - `instructions` (if any) becomes a leading `system` message;
/// - a message item keeps its role; a single text part becomes a string content, several parts
///   become a parts array (`{"type":"text"}` / `{"type":"image_url"}`);
/// - `function_call` / `custom_tool_call` items become `tool_calls` of an assistant message
///   (`{"type":"function","function":{name, arguments}}` / `{"type":"custom","custom":{name,
///   input}}`), merged into the assistant message right before them, so the text and calls of
///   one turn form one message;
/// - `function_call_output` / `custom_tool_call_output` items become `tool` messages;
/// - items without a Chat Completions counterpart (reasoning, references) are left out.
pub(crate) fn responses_items_to_messages(
    instructions: Option<&str>,
    items: &[Value],
) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(text) = instructions.filter(|t| !t.is_empty()) {
        messages.push(json!({"role": "system", "content": text}));
    }
    for item in items {
        let kind = item.get("type").and_then(Value::as_str);
        match kind {
            Some(kind @ ("function_call" | "custom_tool_call")) => {
                let id = item
                    .get("call_id")
                    .or_else(|| item.get("id"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let name = item.get("name").cloned().unwrap_or(Value::Null);
                let call = if kind == "function_call" {
                    json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments_string(item.get("arguments"))},
                    })
                } else {
                    json!({
                        "id": id,
                        "type": "custom",
                        "custom": {"name": name, "input": arguments_string(item.get("input"))},
                    })
                };
                let merge = messages.last().is_some_and(|last| {
                    last.get("role").and_then(Value::as_str) == Some("assistant")
                });
                if merge {
                    let last = messages.last_mut().and_then(Value::as_object_mut);
                    if let Some(last) = last {
                        push_tool_call(last, call);
                    }
                } else {
                    let mut message = Map::new();
                    message.insert("role".into(), json!("assistant"));
                    message.insert("content".into(), Value::Null);
                    push_tool_call(&mut message, call);
                    messages.push(Value::Object(message));
                }
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": item.get("call_id").cloned().unwrap_or(Value::Null),
                    "content": output_content(item.get("output")),
                }));
            }
            Some("message") | None if item.get("role").is_some() => {
                let role = item.get("role").cloned().unwrap_or(json!("user"));
                messages.push(json!({
                    "role": role,
                    "content": message_content(item.get("content")),
                }));
            }
            _ => {}
        }
    }
    messages
}

fn push_tool_call(message: &mut Map<String, Value>, call: Value) {
    match message.get_mut("tool_calls").and_then(Value::as_array_mut) {
        Some(calls) => calls.push(call),
        None => {
            message.insert("tool_calls".into(), Value::Array(vec![call]));
        }
    }
}

fn arguments_string(arguments: Option<&Value>) -> Value {
    match arguments {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Null) | None => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    }
}

/// A `function_call_output` output: a string stays a string; a list of content parts becomes
/// the text of its text parts (or the parts converted, when there are other kinds).
fn output_content(output: Option<&Value>) -> Value {
    match output {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(_)) => message_content(output),
        Some(Value::Null) | None => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    }
}

/// Message content: a string stays; an array of parts becomes a string when it is exactly one
/// text part, else a Chat Completions parts array.
fn message_content(content: Option<&Value>) -> Value {
    let parts = match content {
        Some(Value::Array(parts)) => parts,
        Some(Value::String(s)) => return Value::String(s.clone()),
        Some(Value::Null) | None => return Value::Null,
        Some(other) => return other.clone(),
    };
    let converted: Vec<Value> = parts.iter().map(convert_part).collect();
    if let [single] = converted.as_slice()
        && single.get("type").and_then(Value::as_str) == Some("text")
    {
        return single.get("text").cloned().unwrap_or(Value::Null);
    }
    Value::Array(converted)
}

fn convert_part(part: &Value) -> Value {
    match part.get("type").and_then(Value::as_str) {
        Some("input_text" | "output_text" | "text" | "refusal") => json!({
            "type": "text",
            "text": part.get("text").or_else(|| part.get("refusal")).cloned().unwrap_or(json!("")),
        }),
        Some("input_image") => {
            let url = part
                .get("image_url")
                .and_then(|u| {
                    u.as_str()
                        .map(str::to_owned)
                        .or_else(|| u.get("url").and_then(Value::as_str).map(str::to_owned))
                })
                .unwrap_or_default();
            let mut image = json!({"url": url});
            if let Some(detail) = part.get("detail") {
                image["detail"] = detail.clone();
            }
            json!({"type": "image_url", "image_url": image})
        }
        _ => part.clone(),
    }
}
