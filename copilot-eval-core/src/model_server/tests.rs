//! Tests of the model server over real loopback HTTP and WebSocket clients.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite;

use super::convert::responses_items_to_messages;
use super::*;

/// Upper bound for every test.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);

async fn bounded<F: std::future::Future<Output = ()>>(test: F) {
    tokio::time::timeout(TEST_TIMEOUT, test)
        .await
        .expect("test exceeded its time bound");
}

async fn start(wire: WireApi, script: Script) -> (ModelServer, Arc<Script>) {
    let script = Arc::new(script);
    let server = ModelServer::start(
        ServerConfig::new(script.clone())
            .wire_api(wire)
            .model("gpt-test"),
    )
    .await
    .expect("server starts");
    (server, script)
}

fn usage(input: u64, output: u64, read: u64, write: u64) -> ScriptedUsage {
    ScriptedUsage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
    }
}

/// A minimal Chat Completions request body offering one function tool and `apply_patch` as a
/// freeform tool, like the runtime does.
fn chat_body(messages: Value, stream: bool) -> Value {
    let mut body = json!({
        "model": "gpt-test",
        "messages": messages,
        "tools": [
            {"type": "function", "function": {"name": "lookup_fact", "parameters": {"type": "object"}}},
            {"type": "custom", "custom": {"name": "apply_patch", "description": "edit files"}},
        ],
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

fn responses_tools() -> Value {
    json!([
        {"type": "function", "name": "lookup_fact", "parameters": {"type": "object"}},
        {"type": "custom", "name": "apply_patch", "description": "edit files"},
    ])
}

async fn post(url: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("request is sent")
}

/// The `data:` payloads of an SSE body, with the `event:` name of each frame.
fn sse_frames(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(|frame| {
            let mut event = None;
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(payload) = line.strip_prefix("data: ") {
                    data.push_str(payload);
                }
            }
            (event, data)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Account, catalog, unknown paths, request log
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn binds_loopback_and_serves_user_catalog_and_404s() {
    bounded(async {
        let (server, _script) = start(WireApi::ChatCompletions, Script::new([])).await;
        let base = server.base_url();
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        assert!(!base.ends_with('/'));
        assert!(server.local_addr().ip().is_loopback());

        let client = reqwest::Client::new();
        let user = client
            .get(format!("{base}/copilot_internal/user"))
            .header("authorization", "token placeholder")
            .send()
            .await
            .unwrap();
        assert_eq!(user.status(), 200);
        let user: Value = user.json().await.unwrap();
        assert_eq!(user["copilot_plan"], "individual_pro");
        assert_eq!(user["endpoints"]["api"], json!(base));
        assert!(
            user["endpoints"]["telemetry"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
        assert!(user["login"].is_string());
        assert!(user["analytics_tracking_id"].is_string());

        let models: Value = client
            .get(format!("{base}/models"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let data = models["data"].as_array().unwrap();
        assert_eq!(data.len(), 1);
        assert_eq!(data[0]["id"], "gpt-test");
        assert_eq!(data[0]["capabilities"]["type"], "chat");
        assert!(data[0].get("supported_endpoints").is_none());

        for (method, path) in [
            ("GET", "/copilot_internal/managed_settings?client_id=x"),
            ("GET", "/copilot_internal/team_customizations"),
            ("POST", "/mcp/readonly"),
            ("DELETE", "/no/such/path"),
        ] {
            let response = client
                .request(method.parse().unwrap(), format!("{base}{path}"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 404, "{method} {path}");
        }

        let log = server.requests();
        let summary: Vec<(String, String, u16)> = log
            .iter()
            .map(|r| (r.method.clone(), r.path.clone(), r.status))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("GET".into(), "/copilot_internal/user".into(), 200),
                ("GET".into(), "/models".into(), 200),
                (
                    "GET".into(),
                    "/copilot_internal/managed_settings".into(),
                    404
                ),
                (
                    "GET".into(),
                    "/copilot_internal/team_customizations".into(),
                    404
                ),
                ("POST".into(), "/mcp/readonly".into(), 404),
                ("DELETE".into(), "/no/such/path".into(), 404),
            ]
        );
        assert!(log.iter().all(|r| r.transport == Transport::Http));
        assert_eq!(log[2].query.as_deref(), Some("client_id=x"));
        assert_eq!(log[0].header("authorization"), Some("<redacted>"));
        assert_eq!(server.unknown_requests().len(), 4);
        assert!(server.model_requests().is_empty());
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn catalog_advertises_the_wire_format_and_every_model() {
    bounded(async {
        for (wire, expected) in [
            (WireApi::ChatCompletions, None),
            (WireApi::Responses, Some(json!(["/responses"]))),
            (
                WireApi::WebSocketResponses,
                Some(json!(["/responses", "ws:/responses"])),
            ),
        ] {
            let config = ServerConfig::new(Arc::new(Script::new([])))
                .wire_api(wire)
                .model("first")
                .model("second");
            let server = ModelServer::start(config).await.unwrap();
            assert_eq!(server.models(), vec!["first", "second"]);
            let models: Value = reqwest::get(format!("{}/models", server.base_url()))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let ids: Vec<&str> = models["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap())
                .collect();
            assert_eq!(ids, vec!["first", "second"]);
            for entry in models["data"].as_array().unwrap() {
                assert_eq!(entry.get("supported_endpoints").cloned(), expected);
            }
            server.shutdown().await;
        }
        let default = ServerConfig::new(Arc::new(Script::new([])));
        assert_eq!(default.models(), vec![DEFAULT_MODEL.to_owned()]);
        assert_eq!(default.wire(), WireApi::ChatCompletions);
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Chat Completions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn chat_completions_json_turns_issue_unique_call_ids_and_usage() {
    bounded(async {
        let script = Script::new([])
            .turn(
                ScriptedTurn::tool_call("lookup_fact", json!({"key": "a"}))
                    .with_tool_call("lookup_fact", json!({"key": "b"}))
                    .with_text("looking")
                    .with_usage(usage(1000, 50, 300, 40)),
            )
            .turn(ScriptedTurn::tool_call(
                "apply_patch",
                json!(add_file_patch("/ws/x.txt", "hi")),
            ))
            .turn(ScriptedTurn::text("done"));
        let (server, script) = start(WireApi::ChatCompletions, script).await;
        let url = format!("{}/chat/completions", server.base_url());
        let messages = json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "go"},
        ]);

        let first: Value = post(&url, &chat_body(messages.clone(), false))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(first["object"], "chat.completion");
        let choice = &first["choices"][0];
        assert_eq!(choice["finish_reason"], "tool_calls");
        assert_eq!(choice["message"]["content"], "looking");
        let calls = choice["message"]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["id"], "call_1");
        assert_eq!(calls[1]["id"], "call_2");
        assert_eq!(calls[0]["type"], "function");
        assert_eq!(calls[0]["function"]["name"], "lookup_fact");
        let args: Value =
            serde_json::from_str(calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args, json!({"key": "b"}));
        assert_eq!(
            first["usage"],
            json!({
                "prompt_tokens": 1000,
                "completion_tokens": 50,
                "total_tokens": 1050,
                "prompt_tokens_details": {"cached_tokens": 300, "cache_write_tokens": 40},
            })
        );

        // apply_patch is declared freeform: the call goes out as a custom tool call.
        let second: Value = post(&url, &chat_body(messages.clone(), false))
            .await
            .json()
            .await
            .unwrap();
        let call = &second["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["id"], "call_3");
        assert_eq!(call["type"], "custom");
        assert_eq!(call["custom"]["name"], "apply_patch");
        assert_eq!(
            call["custom"]["input"],
            "*** Begin Patch\n*** Add File: /ws/x.txt\n+hi\n*** End Patch\n"
        );
        assert_eq!(second["usage"]["prompt_tokens"], DEFAULT_USAGE.input_tokens);

        let third: Value = post(&url, &chat_body(messages.clone(), false))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(third["choices"][0]["finish_reason"], "stop");
        assert_eq!(third["choices"][0]["message"]["content"], "done");
        assert!(third["choices"][0]["message"].get("tool_calls").is_none());
        assert_eq!(script.remaining(), 0);

        let requests = server.model_requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].wire, WireApi::ChatCompletions);
        assert!(!requests[0].streaming);
        assert_eq!(requests[0].model.as_deref(), Some("gpt-test"));
        assert_eq!(requests[0].messages, messages.as_array().unwrap().clone());
        assert_eq!(requests[0].tool_names, vec!["lookup_fact", "apply_patch"]);
        assert!(requests[0].has_tool("apply_patch"));
        assert_eq!(requests[0].last_user_text().as_deref(), Some("go"));
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn chat_completions_stream_sends_deltas_finish_usage_and_done() {
    bounded(async {
        let script = Script::new([])
            .turn(
                ScriptedTurn::text("hello big world")
                    .with_tool_call("lookup_fact", json!({"key": "k"}))
                    .with_usage(usage(10, 2, 3, 4)),
            )
            .turn(ScriptedTurn::text("bye"));
        let (server, _script) = start(WireApi::ChatCompletions, script).await;
        let url = format!("{}/chat/completions", server.base_url());
        let response = post(
            &url,
            &chat_body(json!([{"role": "user", "content": "x"}]), true),
        )
        .await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let frames = sse_frames(&response.text().await.unwrap());
        assert_eq!(frames.last().unwrap().1, "[DONE]");
        let chunks: Vec<Value> = frames[..frames.len() - 1]
            .iter()
            .map(|(_, data)| serde_json::from_str(data).unwrap())
            .collect();
        assert!(
            chunks
                .iter()
                .all(|c| c["object"] == "chat.completion.chunk")
        );
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "hello big world");
        let text_deltas = chunks
            .iter()
            .filter(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            })
            .count();
        assert_eq!(text_deltas, 3, "one delta per word");
        let calls: Vec<&Value> = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].as_array())
            .flatten()
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["index"], 0);
        assert_eq!(calls[0]["id"], "call_1");
        assert_eq!(calls[0]["function"]["name"], "lookup_fact");
        let finish: Vec<&str> = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["finish_reason"].as_str())
            .collect();
        assert_eq!(finish, vec!["tool_calls"]);
        let usage_chunk = chunks.last().unwrap();
        assert_eq!(usage_chunk["choices"], json!([]));
        assert_eq!(usage_chunk["usage"]["prompt_tokens"], 10);
        assert_eq!(usage_chunk["usage"]["completion_tokens"], 2);
        assert_eq!(
            usage_chunk["usage"]["prompt_tokens_details"],
            json!({"cached_tokens": 3, "cache_write_tokens": 4})
        );
        assert!(server.model_requests()[0].streaming);

        // Non-streamed request to the same server still gets JSON.
        let plain: Value = post(
            &url,
            &chat_body(json!([{"role": "user", "content": "x"}]), false),
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(plain["choices"][0]["message"]["content"], "bye");
        server.shutdown().await;
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Responses over SSE
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn responses_sse_events_and_conversion_of_input_items() {
    bounded(async {
        let script = Script::new([])
            .turn(
                ScriptedTurn::text("patching")
                    .with_tool_call("apply_patch", json!({"input": "*** Begin Patch\n*** End Patch\n"}))
                    .with_tool_call("lookup_fact", json!({"key": 1}))
                    .with_usage(usage(700, 30, 200, 10)),
            )
            .turn(ScriptedTurn::text("ok"));
        let (server, _script) = start(WireApi::Responses, script).await;
        let url = format!("{}/responses", server.base_url());
        let body = json!({
            "model": "gpt-test",
            "stream": true,
            "instructions": "system prompt",
            "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            ],
            "tools": responses_tools(),
        });
        let response = post(&url, &body).await;
        assert_eq!(response.status(), 200);
        let frames = sse_frames(&response.text().await.unwrap());
        let events: Vec<Value> = frames
            .iter()
            .map(|(name, data)| {
                let event: Value = serde_json::from_str(data).unwrap();
                assert_eq!(name.as_deref(), event["type"].as_str(), "event line matches type");
                event
            })
            .collect();
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"response.created"));
        assert_eq!(kinds.last(), Some(&"response.completed"));
        assert!(kinds.contains(&"response.output_text.delta"));
        assert!(kinds.contains(&"response.custom_tool_call_input.delta"));
        assert!(kinds.contains(&"response.function_call_arguments.done"));
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event["sequence_number"], i);
        }
        let completed = &events.last().unwrap()["response"];
        assert_eq!(completed["status"], "completed");
        assert_eq!(completed["id"], "resp_1");
        assert_eq!(
            completed["usage"],
            json!({
                "input_tokens": 700,
                "input_tokens_details": {"cached_tokens": 200, "cache_write_tokens": 10},
                "output_tokens": 30,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 730,
            })
        );
        let output = completed["output"].as_array().unwrap();
        assert_eq!(output.len(), 3);
        assert_eq!(output[0]["type"], "message");
        assert_eq!(output[0]["content"][0]["text"], "patching");
        assert_eq!(output[1]["type"], "custom_tool_call");
        assert_eq!(output[1]["call_id"], "call_1");
        assert_eq!(output[1]["input"], "*** Begin Patch\n*** End Patch\n");
        assert_eq!(output[2]["type"], "function_call");
        assert_eq!(output[2]["call_id"], "call_2");
        assert_eq!(output[2]["arguments"], r#"{"key":1}"#);

        let request = &server.model_requests()[0];
        assert_eq!(request.wire, WireApi::Responses);
        assert!(request.streaming);
        assert_eq!(
            request.messages,
            vec![
                json!({"role": "system", "content": "system prompt"}),
                json!({"role": "user", "content": "hi"}),
            ]
        );
        assert_eq!(request.tool_names, vec!["lookup_fact", "apply_patch"]);

        // Without "stream": the final response object as JSON.
        let plain: Value = post(
            &url,
            &json!({"model": "gpt-test", "input": "again", "tools": responses_tools()}),
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(plain["object"], "response");
        assert_eq!(plain["output"][0]["content"][0]["text"], "ok");
        server.shutdown().await;
    })
    .await;
}

#[test]
fn responses_items_convert_to_chat_messages() {
    let items = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
        json!({"role": "user", "content": [
            {"type": "input_text", "text": "a"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "low"},
        ]}),
        json!({"type": "reasoning", "id": "rs_1", "summary": []}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "calling"}]}),
        json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"x\":1}"}),
        json!({"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "patch"}),
        json!({"type": "function_call_output", "call_id": "c1", "output": "one"}),
        json!({"type": "custom_tool_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "two"}]}),
        json!({"type": "function_call", "call_id": "c3", "name": "g", "arguments": "{}"}),
    ];
    let messages = responses_items_to_messages(Some("sys"), &items);
    assert_eq!(
        messages,
        vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "developer", "content": "rules"}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}},
            ]}),
            json!({"role": "assistant", "content": "calling", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                {"id": "c2", "type": "custom", "custom": {"name": "apply_patch", "input": "patch"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "one"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "two"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c3", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ]}),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// WebSocket Responses
// ---------------------------------------------------------------------------------------------

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(server: &ModelServer) -> Ws {
    let url = format!("ws://{}/responses", server.local_addr());
    let (socket, response) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    assert_eq!(response.status(), 101);
    socket
}

/// Sends one message and reads events until `response.completed` or an `error` event.
async fn ws_turn(socket: &mut Ws, message: &Value) -> Vec<Value> {
    socket
        .send(tungstenite::Message::Text(message.to_string().into()))
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Some(frame) = socket.next().await {
        let tungstenite::Message::Text(text) = frame.unwrap() else {
            continue;
        };
        let event: Value = serde_json::from_str(text.as_str()).unwrap();
        let kind = event["type"].as_str().unwrap().to_owned();
        events.push(event);
        if kind == "response.completed" || kind == "error" {
            break;
        }
    }
    events
}

#[tokio::test]
async fn websocket_turns_reconstruct_the_conversation_from_previous_response_id() {
    bounded(async {
        let script = Script::new([])
            .turn(ScriptedTurn::tool_call("lookup_fact", json!({"key": "a"})).with_usage(usage(1, 2, 3, 4)))
            .turn(ScriptedTurn::tool_call("apply_patch", json!("PATCH")))
            .turn(ScriptedTurn::text("all done"));
        let (server, script) = start(WireApi::WebSocketResponses, script).await;
        let mut socket = connect(&server).await;

        let first = ws_turn(
            &mut socket,
            &json!({
                "type": "response.create",
                "model": "gpt-test",
                "instructions": "sys",
                "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "start"}]}],
                "tools": responses_tools(),
                "initiator": "user",
                "headers": {"X-Interaction-Type": "conversation-user"},
            }),
        )
        .await;
        let completed = &first.last().unwrap()["response"];
        assert_eq!(completed["usage"]["input_tokens_details"]["cache_write_tokens"], 4);
        let first_id = completed["id"].as_str().unwrap().to_owned();
        let call_1 = completed["output"][0]["call_id"].as_str().unwrap().to_owned();
        assert_eq!(call_1, "call_1");

        let second = ws_turn(
            &mut socket,
            &json!({
                "type": "response.create",
                "model": "gpt-test",
                "previous_response_id": first_id,
                "instructions": "sys",
                "input": [{"type": "function_call_output", "call_id": call_1, "output": "fact"}],
                "tools": responses_tools(),
                "initiator": "agent",
            }),
        )
        .await;
        let completed = &second.last().unwrap()["response"];
        assert_eq!(completed["output"][0]["type"], "custom_tool_call");
        assert_eq!(completed["output"][0]["input"], "PATCH");
        let second_id = completed["id"].as_str().unwrap().to_owned();
        assert_ne!(second_id, first_id);

        let third = ws_turn(
            &mut socket,
            &json!({
                "type": "response.create",
                "model": "gpt-test",
                "previous_response_id": second_id,
                "instructions": "sys",
                "input": [{"type": "custom_tool_call_output", "call_id": "call_2", "output": "Added 1 file(s)"}],
                "tools": responses_tools(),
            }),
        )
        .await;
        assert_eq!(
            third.last().unwrap()["response"]["output"][0]["content"][0]["text"],
            "all done"
        );
        assert_eq!(script.remaining(), 0);

        let requests = server.model_requests();
        assert_eq!(requests.len(), 3);
        assert!(requests.iter().all(|r| r.wire == WireApi::WebSocketResponses && r.streaming));
        assert_eq!(requests[0].initiator.as_deref(), Some("user"));
        assert_eq!(requests[0].interaction_type.as_deref(), Some("conversation-user"));
        assert_eq!(requests[1].initiator.as_deref(), Some("agent"));
        assert_eq!(requests[2].previous_response_id.as_deref(), Some(second_id.as_str()));
        assert_eq!(
            requests[2].messages,
            vec![
                json!({"role": "system", "content": "sys"}),
                json!({"role": "user", "content": "start"}),
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "lookup_fact", "arguments": "{\"key\":\"a\"}"}},
                ]}),
                json!({"role": "tool", "tool_call_id": "call_1", "content": "fact"}),
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_2", "type": "custom", "custom": {"name": "apply_patch", "input": "PATCH"}},
                ]}),
                json!({"role": "tool", "tool_call_id": "call_2", "content": "Added 1 file(s)"}),
            ]
        );
        assert_eq!(requests[2].tool_results().len(), 2);

        let log = server.requests();
        assert_eq!(log.len(), 4, "the upgrade plus one entry per message");
        assert_eq!((log[0].method.as_str(), log[0].status), ("GET", 101));
        assert_eq!(log[0].transport, Transport::Http);
        for entry in &log[1..] {
            assert_eq!(entry.transport, Transport::WebSocket);
            assert_eq!(entry.method, "WS");
            assert_eq!(entry.path, "/responses");
            assert_eq!(entry.status, 200);
            assert_eq!(entry.body.as_ref().unwrap()["type"], "response.create");
        }
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn websocket_rejects_unknown_previous_response_and_bad_messages() {
    bounded(async {
        let (server, script) = start(
            WireApi::WebSocketResponses,
            Script::new([ScriptedTurn::text("unused").into()]),
        )
        .await;
        let mut socket = connect(&server).await;
        let events = ws_turn(
            &mut socket,
            &json!({"type": "response.create", "previous_response_id": "resp_404", "input": []}),
        )
        .await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["type"], "error");
        assert_eq!(events[0]["error"]["code"], "previous_response_not_found");

        let events = ws_turn(&mut socket, &json!({"type": "session.update"})).await;
        assert_eq!(events[0]["type"], "error");
        assert_eq!(events[0]["status"], 400);
        assert_eq!(events[0]["headers"]["x-should-retry"], "false");

        // Neither reached the responder.
        assert_eq!(script.remaining(), 1);
        assert!(server.model_requests().is_empty());
        let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, vec![101, 400, 400]);
        server.shutdown().await;
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Errors, exhaustion, hang
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn error_replies_and_script_exhaustion_over_http() {
    bounded(async {
        let script = Script::new([])
            .error(400, "bad scripted request")
            .retryable_error(503, "try again")
            .turn(ScriptedTurn::text("recovered"));
        assert_eq!(script.len(), 3);
        let (server, script) = start(WireApi::ChatCompletions, script).await;
        let url = format!("{}/chat/completions", server.base_url());
        let body = chat_body(json!([{"role": "user", "content": "x"}]), false);

        let response = post(&url, &body).await;
        assert_eq!(response.status(), 400);
        assert_eq!(response.headers()["x-should-retry"], "false");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["message"], "bad scripted request");
        assert_eq!(error["error"]["type"], "invalid_request_error");

        let response = post(&url, &body).await;
        assert_eq!(response.status(), 503);
        assert!(response.headers().get("x-should-retry").is_none());

        let response = post(&url, &body).await;
        assert_eq!(response.status(), 200);
        assert_eq!(script.remaining(), 0);
        assert_eq!(script.overruns(), 0);

        for attempt in 1..=2 {
            let response = post(&url, &body).await;
            assert_eq!(response.status(), 500);
            assert_eq!(response.headers()["x-should-retry"], "false");
            let error: Value = response.json().await.unwrap();
            let message = error["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("script exhausted after 3 turns"),
                "{message}"
            );
            assert_eq!(script.overruns(), attempt);
        }

        let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, vec![400, 503, 200, 500, 500]);
        assert_eq!(
            server.model_requests().len(),
            5,
            "every model request is recorded"
        );

        // Not JSON: rejected without reaching the responder.
        let response = reqwest::Client::new()
            .post(&url)
            .body("not json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        assert_eq!(server.model_requests().len(), 5);
        assert_eq!(
            server.requests().last().unwrap().body,
            Some(json!("not json"))
        );
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn error_replies_over_websocket_carry_the_status_in_the_code() {
    bounded(async {
        let script = Script::new([])
            .error(400, "bad")
            .error(429, "slow down")
            .error(500, "boom")
            .retryable_error(502, "gateway");
        let (server, _script) = start(WireApi::WebSocketResponses, script).await;
        let mut socket = connect(&server).await;
        let message = json!({"type": "response.create", "model": "gpt-test", "input": "x"});
        let mut seen = Vec::new();
        for _ in 0..4 {
            let events = ws_turn(&mut socket, &message).await;
            assert_eq!(events.len(), 1);
            let event = &events[0];
            assert_eq!(event["type"], "error");
            seen.push((
                event["status"].as_u64().unwrap(),
                event["error"]["code"].as_str().unwrap().to_owned(),
                event.get("headers").cloned(),
            ));
        }
        let no_retry = Some(json!({"x-should-retry": "false"}));
        assert_eq!(
            seen,
            vec![
                (400, "invalid_request_error".to_owned(), no_retry.clone()),
                (429, "rate_limit_exceeded".to_owned(), no_retry.clone()),
                (500, "server_error".to_owned(), no_retry),
                (502, "server_error".to_owned(), None),
            ]
        );
        let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses, vec![101, 400, 429, 500, 502]);
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn hang_keeps_the_request_open_until_shutdown() {
    bounded(async {
        let (server, _script) = start(WireApi::Responses, Script::new([]).hang()).await;
        let url = format!("{}/responses", server.base_url());
        let request = tokio::spawn(async move {
            let body = json!({"model": "gpt-test", "input": "x", "stream": true});
            post(&url, &body).await.status().as_u16()
        });
        // The request reaches the responder but gets no answer.
        tokio::time::timeout(Duration::from_secs(5), async {
            while server.model_requests().is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the request arrives");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!request.is_finished(), "a hanging reply does not answer");
        assert_eq!(server.requests().last().unwrap().status, 0);

        server.shutdown().await;
        let status = tokio::time::timeout(Duration::from_secs(5), request)
            .await
            .expect("shutdown ends the hanging request")
            .unwrap();
        assert_eq!(status, 503);
    })
    .await;
}

#[tokio::test]
async fn hang_over_websocket_ends_when_the_server_is_dropped() {
    bounded(async {
        let (server, _script) = start(WireApi::WebSocketResponses, Script::new([]).hang()).await;
        let mut socket = connect(&server).await;
        socket
            .send(tungstenite::Message::Text(
                json!({"type": "response.create", "input": "x"})
                    .to_string()
                    .into(),
            ))
            .await
            .unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(300), socket.next()).await;
        assert!(quiet.is_err(), "no event while hanging");
        drop(server);
        // The connection closes (close frame or end of stream) instead of staying open.
        let end = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match socket.next().await {
                    None | Some(Err(_)) | Some(Ok(tungstenite::Message::Close(_))) => break,
                    Some(Ok(_)) => {}
                }
            }
        })
        .await;
        assert!(end.is_ok(), "dropping the server closes the WebSocket");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    bounded(async {
        let (server, _script) = start(WireApi::ChatCompletions, Script::new([])).await;
        let addr = server.local_addr();
        drop(server);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let connect = tokio::net::TcpStream::connect(addr).await;
        assert!(connect.is_err(), "nothing listens after drop");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Scripts and turns
// ---------------------------------------------------------------------------------------------

#[test]
fn script_builders_and_turns() {
    let script = Script::new([Reply::from(ScriptedTurn::text("a"))])
        .turn(ScriptedTurn::text("b"))
        .error(500, "e")
        .hang();
    assert_eq!(script.len(), 4);
    assert!(!script.is_empty());
    assert_eq!(script.remaining(), 4);
    assert_eq!(script.next_reply(), Reply::Message(ScriptedTurn::text("a")));
    assert_eq!(script.remaining(), 3);

    let turn = ScriptedTurn::tool_call("t", json!({"a": 1}))
        .with_tool_call("u", json!({}))
        .with_text("x")
        .with_usage(usage(1, 2, 3, 4));
    assert_eq!(turn.text_content(), Some("x"));
    let names: Vec<&str> = turn.tool_calls().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["t", "u"]);
    assert_eq!(turn.usage(), usage(1, 2, 3, 4));
    assert_eq!(ScriptedTurn::text("y").usage(), DEFAULT_USAGE);

    assert_eq!(
        add_file_patch("/w/a.txt", "one\ntwo\n"),
        "*** Begin Patch\n*** Add File: /w/a.txt\n+one\n+two\n*** End Patch\n"
    );
    assert_eq!(Script::new([]).next_reply(), Reply::Error {
        status: 500,
        message: "copilot-eval model server: script exhausted after 0 turns (an unexpected extra model request)".into(),
    });
}

#[test]
fn text_pieces_concatenate_to_the_text() {
    for text in ["", "one", "hello big  world ", "  lead", "multi\nline text"] {
        let pieces = super::render::text_pieces(text);
        assert_eq!(pieces.concat(), text);
    }
    assert_eq!(super::render::text_pieces("a b c").len(), 3);
}

/// Sends `body` as one `POST path` over a raw TCP connection (`connection: close`) and reads
/// until the connection ends: the bytes received, and the error that ended the reading (`None`:
/// an orderly end of stream, a FIN).
async fn raw_exchange(
    server: &ModelServer,
    path: &str,
    body: &Value,
) -> (String, Option<std::io::ErrorKind>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    let ended = loop {
        match stream.read(&mut buffer).await {
            Ok(0) => break None,
            Ok(read) => seen.extend_from_slice(&buffer[..read]),
            Err(e) => break Some(e.kind()),
        }
    };
    (String::from_utf8_lossy(&seen).into_owned(), ended)
}

/// `Reply::Disconnect` over HTTP (Chat Completions and Responses): the status line and the
/// first SSE bytes reach the client, then the connection is reset (`RST`, not `FIN`): the
/// client's read fails with `ECONNRESET`. An ordinary answer on the same server ends with an
/// orderly close (end of stream, no error).
#[tokio::test]
async fn a_disconnect_resets_the_connection_mid_body() {
    bounded(async {
        let script = Script::new([])
            .disconnect()
            .disconnect()
            .turn(ScriptedTurn::text("whole"));
        let (server, _) = start(WireApi::ChatCompletions, script).await;
        let chat = chat_body(json!([{"role": "user", "content": "hi"}]), true);
        let responses = json!({"model": "gpt-test", "stream": true, "input": [{"role": "user", "content": "hi"}]});
        for (path, body) in [("/chat/completions", &chat), ("/responses", &responses)] {
            let (seen, ended) = raw_exchange(&server, path, body).await;
            assert!(seen.starts_with("HTTP/1.1 200"), "{path}: {seen}");
            assert!(seen.contains("data: {\"id\":\"cut\""), "{path}: {seen}");
            assert_eq!(
                ended,
                Some(std::io::ErrorKind::ConnectionReset),
                "{path}: the connection ends with a reset; received {seen:?}"
            );
        }
        assert_eq!(server.connections_reset(), 2);
        let (seen, ended) = raw_exchange(&server, "/chat/completions", &chat).await;
        assert!(seen.contains("whole"), "{seen}");
        assert_eq!(ended, None, "an ordinary answer ends with a FIN: {seen}");
        assert_eq!(server.connections_reset(), 2);
        server.shutdown().await;
    })
    .await;
}

/// `reset_websocket_after_turns(1)`: the first turn is answered whole, then the connection is
/// reset (no close frame): the client's next read fails with `ECONNRESET`, and a write after
/// that fails too. Without the setting the connection stays open for the next turn.
#[tokio::test]
async fn a_websocket_is_reset_after_its_configured_turns() {
    bounded(async {
        let message = json!({"type": "response.create", "model": "gpt-test", "input": [{"role": "user", "content": "hi"}]});
        let script = Script::new([])
            .turn(ScriptedTurn::text("first"))
            .turn(ScriptedTurn::text("second"));
        let script = Arc::new(script);
        let server = ModelServer::start(
            ServerConfig::new(script.clone())
                .wire_api(WireApi::WebSocketResponses)
                .model("gpt-test")
                .reset_websocket_after_turns(1),
        )
        .await
        .unwrap();
        let mut socket = connect(&server).await;
        let events = ws_turn(&mut socket, &message).await;
        assert_eq!(events.last().unwrap()["type"], "response.completed");
        match socket.next().await {
            Some(Err(tungstenite::Error::Io(e))) => {
                assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}")
            }
            other => panic!("expected a connection reset, got {other:?}"),
        }
        assert_eq!(server.connections_reset(), 1);
        let sent = socket
            .send(tungstenite::Message::Text(message.to_string().into()))
            .await;
        assert!(sent.is_err(), "a send after the reset fails: {sent:?}");
        server.shutdown().await;

        // The control: without the setting, the second turn is answered on the same socket.
        let (server, _) = start(
            WireApi::WebSocketResponses,
            Script::new([])
                .turn(ScriptedTurn::text("first"))
                .turn(ScriptedTurn::text("second")),
        )
        .await;
        let mut socket = connect(&server).await;
        ws_turn(&mut socket, &message).await;
        let events = ws_turn(&mut socket, &message).await;
        assert_eq!(events.last().unwrap()["type"], "response.completed");
        assert_eq!(server.connections_reset(), 0);
        server.shutdown().await;
    })
    .await;
}
