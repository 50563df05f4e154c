//! The offline control regression: the request audit, image-detail rewriting and the WebSocket
//! path, end to end through the real runtime and the loopback model server.

use std::sync::Arc;
use std::time::Duration;

use copilot_eval_core::evidence::SessionEventType;
use copilot_eval_core::model_server::{
    ModelServer, Script, ScriptedTurn, ServerConfig, Transport, WireApi,
};
use copilot_eval_core::run::{SessionClock, TestFaults};
use copilot_eval_core::tools::{TINY_PNG, function_tool, image_tool};
use copilot_eval_core::wire::Api;
use copilot_eval_core::{CopilotEval, CopilotResult, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{after_the_session, assert_no_runtime_left, runtime_for};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4.5";

fn note_tool() -> copilot_eval_core::sdk::Tool {
    function_tool(
        "note",
        "Write down a note.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |_| async { Ok("noted".to_owned()) },
    )
}

async fn audited_run(
    config: ServerConfig,
    eval: copilot_eval_core::eval::CopilotEvalBuilder,
    prompt: &str,
    runtime: &std::path::Path,
) -> (CopilotResult, ModelServer) {
    let work = tempfile::tempdir().unwrap();
    let server = ModelServer::start(config.model(MODEL)).await.unwrap();
    let eval = eval
        .model(MODEL)
        .working_directory(work.path())
        .audit_requests(true)
        .build()
        .unwrap();
    // The eval's timeout counts from the session's creation, so a slow runtime start on a
    // loaded machine cannot use it up (the timeout row must see the request first).
    let faults = TestFaults {
        clock_starts_at_session: Some(SessionClock::default()),
        ..TestFaults::default()
    };
    let result = run_with(
        &eval,
        prompt,
        &RunOptions::offline(server.base_url())
            .runtime_path(runtime)
            .test_faults(faults),
    )
    .await;
    assert_no_runtime_left(&result);
    (result, server)
}

#[tokio::test]
async fn websocket_continuations_are_audited_message_by_message() {
    let Some(runtime) = runtime_for("websocket_continuations_are_audited_message_by_message")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "a"})))
        .turn(ScriptedTurn::tool_call("note", json!({"text": "b"})))
        .turn(ScriptedTurn::text("both noted"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)).wire_api(WireApi::WebSocketResponses),
        CopilotEval::builder()
            .reasoning_effort("high")
            .instructions("Take notes.")
            .timeout_s(60.0)
            .tool(note_tool()),
        "Note a then b.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    let audit = &result.request_audit;
    assert_eq!(audit.len(), 3, "{audit:#?}");
    assert_eq!(audit.len(), server.model_requests().len());
    assert!(
        audit
            .iter()
            .all(|a| a.transport == Transport::WebSocket && a.api == Api::Responses)
    );
    assert!(audit.iter().all(|a| a.model == MODEL));
    assert!(audit.iter().all(|a| a.tools.contains(&"note".to_owned())));
    assert!(audit.iter().all(|a| !a.subagent), "main agent requests");
    // The first message of the connection declares its interaction type in its `headers`; the
    // later ones declare none and keep the request context's.
    let types: Vec<Option<&str>> = audit
        .iter()
        .map(|a| a.interaction_type.as_deref())
        .collect();
    assert_eq!(
        types,
        [
            Some("conversation-user"),
            Some("conversation-agent"),
            Some("conversation-agent")
        ]
    );
    for (record, request) in audit.iter().zip(server.model_requests()) {
        if request.interaction_type.is_some() {
            assert_eq!(record.interaction_type, request.interaction_type);
        }
    }
    assert!(!audit[0].continuation);
    assert!(
        audit[1..].iter().all(|a| a.continuation),
        "later turns continue the response"
    );
    let hash = audit[0]
        .instructions_sha256
        .clone()
        .expect("instructions hashed");
    assert!(
        audit
            .iter()
            .all(|a| a.instructions_sha256.as_deref() == Some(hash.as_str()))
    );
    // What the audit says went on the wire is what the server received.
    for (record, request) in audit.iter().zip(server.model_requests()) {
        assert_eq!(Some(record.model.as_str()), request.model.as_deref());
        assert_eq!(record.tools, request.tool_names);
        assert_eq!(record.continuation, request.previous_response_id.is_some());
        let effort = request
            .body
            .pointer("/reasoning/effort")
            .and_then(Value::as_str);
        assert_eq!(record.reasoning_effort.as_deref(), effort);
    }
}

async fn image_detail_is_rewritten(wire: WireApi) {
    let test = format!("image_detail_is_rewritten({wire:?})");
    let Some(runtime) = runtime_for(&test) else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("snapshot", json!({})))
        .turn(ScriptedTurn::text("a red pixel"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script))
            .wire_api(wire)
            .vision(true),
        CopilotEval::builder()
            .image_detail("low")
            .timeout_s(60.0)
            .tool(image_tool(
                "snapshot",
                "Take a snapshot.",
                "image/png",
                TINY_PNG.to_vec(),
            )),
        "Take a snapshot and describe it.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{test}: {:?}", result.error);
    let audit = &result.request_audit;
    assert_eq!(audit.len(), 2, "{test}: {audit:#?}");
    assert_eq!(audit[0].image_count, 0);
    assert!(
        audit[1].image_count >= 1,
        "{test}: the image reached the model: {audit:#?}"
    );
    assert!(
        audit[1]
            .image_details
            .iter()
            .all(|d| d.as_deref() == Some("low"))
    );
    // The server received the rewritten detail.
    let sent = server.model_requests()[1].body.to_string();
    assert!(sent.contains("\"detail\":\"low\""), "{test}: {sent:.400}");
    assert!(!sent.contains("\"detail\":\"high\"") && !sent.contains("\"detail\":\"auto\""));
}

#[tokio::test]
async fn image_detail_is_rewritten_over_http() {
    image_detail_is_rewritten(WireApi::ChatCompletions).await;
}

#[tokio::test]
async fn image_detail_is_rewritten_over_websocket() {
    image_detail_is_rewritten(WireApi::WebSocketResponses).await;
}

#[tokio::test]
async fn budgets_with_audit_on() {
    let Some(runtime) = runtime_for("budgets_with_audit_on") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "a"})))
        .turn(ScriptedTurn::tool_call("note", json!({"text": "b"})))
        .turn(ScriptedTurn::text("done"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)).wire_api(WireApi::WebSocketResponses),
        CopilotEval::builder()
            .max_tool_calls(1)
            .timeout_s(60.0)
            .tool(note_tool()),
        "Note twice.",
        &runtime.path,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::ToolBudgetExceeded,
        "{:?}",
        result.error
    );
    assert_eq!(result.tool_calls_admitted, 1);
    assert_eq!(result.request_audit.len(), 2);
    assert_eq!(
        server.model_requests().len(),
        2,
        "nothing after the budget stop"
    );
}

#[tokio::test]
async fn websocket_closed_mid_response_blocks_all_further_inference() {
    let Some(runtime) = runtime_for("websocket_closed_mid_response_blocks_all_further_inference")
    else {
        return;
    };
    let script = Script::new([])
        .disconnect()
        .turn(ScriptedTurn::text("should never be asked"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)).wire_api(WireApi::WebSocketResponses),
        CopilotEval::builder().timeout_s(60.0),
        "Hello.",
        &runtime.path,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::RequestAuditError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap();
    assert!(
        error.contains("WebSocket transport receive failed"),
        "{error}"
    );
    assert_eq!(result.request_audit.len(), 1);
    assert_eq!(
        server.model_requests().len(),
        1,
        "no retry and no HTTP fallback reached the server"
    );
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.method == "POST" && r.path.ends_with("/responses")),
        "no fallback to POST /responses"
    );
    // Ended by the failed audit, well before the 60 s timeout (counted from the session's
    // creation, so the runtime's start does not count).
    let after = after_the_session(&result);
    assert!(after < Duration::from_secs(30), "{after:?}");
}

#[tokio::test]
async fn an_upstream_that_refuses_the_connection_fails_the_audit() {
    let Some(runtime) = runtime_for("an_upstream_that_refuses_the_connection_fails_the_audit")
    else {
        return;
    };
    let script = Script::new([]).turn(ScriptedTurn::text("never"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script))
            .wire_api(WireApi::WebSocketResponses)
            .refuse_websocket(),
        CopilotEval::builder().timeout_s(60.0),
        "Hello.",
        &runtime.path,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::RequestAuditError,
        "{:?}",
        result.error
    );
    assert!(
        result
            .error
            .unwrap()
            .contains("WebSocket transport open failed")
    );
    assert!(result.request_audit.is_empty());
    assert!(
        server.model_requests().is_empty(),
        "no model request was answered"
    );
    assert!(!server.requests().iter().any(|r| {
        r.transport == Transport::WebSocket
            || (r.method == "POST"
                && (r.path.ends_with("/responses") || r.path.ends_with("/chat/completions")))
    }));
}

#[tokio::test]
async fn timeout_with_audit_on_cleans_up() {
    let Some(runtime) = runtime_for("timeout_with_audit_on_cleans_up") else {
        return;
    };
    let script = Script::new([]).hang();
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)).wire_api(WireApi::WebSocketResponses),
        // From the session's creation: ample for the prompt to reach the model on a busy machine.
        CopilotEval::builder().timeout_s(10.0),
        "Hello.",
        &runtime.path,
    )
    .await;
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "{:?}",
        result.error
    );
    assert_eq!(result.request_audit.len(), 1);
    assert_eq!(server.model_requests().len(), 1);
}

#[tokio::test]
async fn the_audit_stores_no_text_credentials_urls_or_headers() {
    let Some(runtime) = runtime_for("the_audit_stores_no_text_credentials_urls_or_headers") else {
        return;
    };
    const CANARY_PROMPT: &str = "CANARY-PROMPT-7f3a9c";
    const CANARY_INSTRUCTIONS: &str = "CANARY-INSTRUCTIONS-51be";
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("snapshot", json!({})))
        .turn(ScriptedTurn::text("ok"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)).vision(true),
        CopilotEval::builder()
            .instructions(CANARY_INSTRUCTIONS)
            .timeout_s(60.0)
            .tool(image_tool(
                "snapshot",
                "Take a snapshot.",
                "image/png",
                TINY_PNG.to_vec(),
            )),
        CANARY_PROMPT,
        &runtime.path,
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    // The canaries really went on the wire...
    let first = server.model_requests()[0].body.to_string();
    assert!(first.contains(CANARY_PROMPT) && first.contains(CANARY_INSTRUCTIONS));
    let user = server
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .unwrap();
    assert!(
        user.header("authorization").is_some(),
        "a credential was sent"
    );
    // ...and none of them, nor the token, URL, headers or image bytes, is in the audit.
    let audit = serde_json::to_string(&result.request_audit).unwrap();
    let base64_png = "iVBORw0KGgo";
    for needle in [
        CANARY_PROMPT,
        CANARY_INSTRUCTIONS,
        copilot_eval_core::run::OFFLINE_TOKEN,
        &server.base_url(),
        "127.0.0.1",
        "authorization",
        "Bearer",
        base64_png,
    ] {
        assert!(
            !audit.contains(needle),
            "the audit holds {needle:?}: {audit}"
        );
    }
    assert_eq!(result.request_audit.len(), 2);
}

#[tokio::test]
async fn subagent_requests_are_attributed_to_the_subagent() {
    let Some(runtime) = runtime_for("subagent_requests_are_attributed_to_the_subagent") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "task",
            json!({"agent_type": "helper", "name": "helper", "prompt": "Say hello.", "description": "Greet the user"}),
        ))
        .turn(ScriptedTurn::text("hello from the helper"))
        .turn(ScriptedTurn::text("The helper said hello."));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)),
        CopilotEval::builder().timeout_s(60.0).custom_agent(
            copilot_eval_core::sdk::CustomAgentConfig::new("helper", "You greet people.")
                .with_description("Greets people"),
        ),
        "Ask the helper to greet.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    let audit = &result.request_audit;
    assert_eq!(audit.len(), 3, "{:#?}", result.tool_calls);
    assert_eq!(server.model_requests().len(), 3);
    assert!(!audit[0].subagent && !audit[2].subagent, "{audit:#?}");
    assert!(
        audit[1].subagent,
        "the helper's request is the subagent's: {audit:#?}"
    );
    assert_eq!(
        audit[1].interaction_type.as_deref(),
        Some("conversation-subagent")
    );
    assert!(audit[1].parent_agent_id.is_some());
    assert_ne!(audit[1].instructions_sha256, audit[0].instructions_sha256);
    assert_eq!(
        result.final_response.as_deref(),
        Some("The helper said hello.")
    );
}

/// The interaction type the audit records is the one the request declares on the wire (the
/// `X-Interaction-Type` header the loopback server received), not the SDK context's, which
/// runtime 1.0.102 gives every main request alike: the request answering the prompt says
/// `conversation-user`.
#[tokio::test]
async fn the_audit_records_the_interaction_type_the_request_declares() {
    let Some(runtime) = runtime_for("the_audit_records_the_interaction_type_the_request_declares")
    else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call("note", json!({"text": "a"})))
        .turn(ScriptedTurn::text("noted"));
    let (result, server) = audited_run(
        ServerConfig::new(Arc::new(script)),
        CopilotEval::builder().timeout_s(60.0).tool(note_tool()),
        "Note a.",
        &runtime.path,
    )
    .await;
    assert!(result.success, "{:?}", result.error);
    let audit = &result.request_audit;
    let requests = server.model_requests();
    assert_eq!(audit.len(), 2, "{audit:#?}");
    assert_eq!(requests.len(), 2);
    for (record, request) in audit.iter().zip(&requests) {
        assert!(request.interaction_type.is_some(), "{request:?}");
        assert_eq!(record.interaction_type, request.interaction_type);
    }
    assert_eq!(
        audit[0].interaction_type.as_deref(),
        Some("conversation-user")
    );
}

/// A loopback relay in front of `upstream` (the model server) for the test below: it passes
/// every request through unchanged (one per connection: it asks the upstream to close after
/// each), except a Chat Completions request, which it answers itself with the status line and
/// ONE SSE chunk (a text delta, `Hel`) and then nothing more until the client goes away: an
/// upstream answer that never ends. Returns the relay's base URL.
async fn first_chunk_only_relay(upstream: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                // The request head, then its body (by content-length).
                let mut buffer = Vec::new();
                let head_end = loop {
                    if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    let mut chunk = [0u8; 4096];
                    match client.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse().ok())?
                    })
                    .unwrap_or(0);
                while buffer.len() < head_end + length {
                    let mut chunk = [0u8; 4096];
                    match client.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                    }
                }
                let request_line = head.lines().next().unwrap_or_default().to_owned();
                if request_line.starts_with("POST ") && request_line.contains("/chat/completions") {
                    let chunk = json!({
                        "id": "relay",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": MODEL,
                        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": null}],
                    });
                    let first = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
                    let event = format!("data: {chunk}\n\n");
                    let body = format!("{:x}\r\n{event}\r\n", event.len());
                    if client.write_all(first.as_bytes()).await.is_err()
                        || client.write_all(body.as_bytes()).await.is_err()
                    {
                        return;
                    }
                    let _ = client.flush().await;
                    // Never end the answer: wait until the client closes.
                    let mut sink = [0u8; 1024];
                    while matches!(client.read(&mut sink).await, Ok(n) if n > 0) {}
                    return;
                }
                // Pass through, asking the upstream to close after its answer.
                let mut head: Vec<String> = head
                    .trim_end()
                    .lines()
                    .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                    .map(str::to_owned)
                    .collect();
                head.push("connection: close".to_owned());
                let mut request = format!("{}\r\n\r\n", head.join("\r\n")).into_bytes();
                request.extend_from_slice(&buffer[head_end..]);
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                if server.write_all(&request).await.is_err() {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    format!("http://{addr}")
}

/// docs/audit.md: through the audit's request proxy an HTTP answer streams on to the runtime as
/// it arrives. The upstream sends its first SSE chunk (the text delta `Hel`) and then nothing
/// until the run's timeout ends it; the runtime still got that delta (its
/// `assistant.message_delta` is in the run's events), so the chunk reached it before the
/// upstream answer ended. A proxy that buffered the answer would show no delta.
#[tokio::test]
async fn the_first_sse_chunk_reaches_the_runtime_before_the_upstream_ends() {
    let Some(runtime) =
        runtime_for("the_first_sse_chunk_reaches_the_runtime_before_the_upstream_ends")
    else {
        return;
    };
    let server = ModelServer::start(
        ServerConfig::new(Arc::new(
            Script::new([]).turn(ScriptedTurn::text("never served")),
        ))
        .model(MODEL),
    )
    .await
    .unwrap();
    let relay = first_chunk_only_relay(server.local_addr()).await;
    let work = tempfile::tempdir().unwrap();
    let eval = CopilotEval::builder()
        .model(MODEL)
        .working_directory(work.path())
        .streaming(true)
        .audit_requests(true)
        // From the session's creation: ample for the prompt to reach the model and the first
        // chunk to come back on a busy machine.
        .timeout_s(15.0)
        .build()
        .unwrap();
    let faults = TestFaults {
        clock_starts_at_session: Some(SessionClock::default()),
        ..TestFaults::default()
    };
    let result = run_with(
        &eval,
        "Say hello.",
        &RunOptions::offline(relay)
            .runtime_path(&runtime.path)
            .test_faults(faults),
    )
    .await;
    assert_no_runtime_left(&result);
    assert_eq!(
        result.stop_reason,
        StopReason::Timeout,
        "the answer never ended: {:?}",
        result.error
    );
    assert_eq!(
        result.request_audit.len(),
        1,
        "the request went through the audit"
    );
    let deltas: Vec<&Value> = result
        .raw_events
        .iter()
        .filter(|e| e.kind() == SessionEventType::AssistantMessageDelta)
        .map(|e| &e.data)
        .collect();
    assert!(
        deltas.iter().any(|d| d["deltaContent"] == "Hel"),
        "the first chunk reached the runtime: {deltas:?}"
    );
}
