//! Unit tests of the recorder: exchanges fed through the tap, cassettes built from them.

use std::sync::Arc;

use serde_json::{Value, json};

use super::super::format::{Cassette, CassetteHeader};
use super::{RecordError, Recorder};
use crate::artifact::Redactor;
use crate::model_server::{ScriptedUsage, WireApi};
use crate::wire::Route;

/// The tap's intake of a `POST` to `wire_path`, classified as the proxy does.
fn request(recorder: &Recorder, wire_path: &str, body: &Value) -> usize {
    let Route::Model(api) = Route::of("POST", wire_path) else {
        panic!("{wire_path} is no model request")
    };
    recorder.http_request(api, Some(body))
}

fn answered(recorder: &Arc<Recorder>, wire_path: &str, body: Value, answer: &str) {
    let index = request(recorder, wire_path, &body);
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
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Note a."}]}]}),
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
            "input": [{"type": "function_call_output", "call_id": "call_1", "output": "noted"}]}),
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
    let index = request(&recorder, "/chat/completions", &body);
    recorder.skip(index, "the answer had status 500".into());
    assert_eq!(
        recorder.cassette(CassetteHeader::default(), &Redactor::default()),
        Err(RecordError::Empty { requests: 1 })
    );
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
