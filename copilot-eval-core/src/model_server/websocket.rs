//! The WebSocket Responses handler: the `GET /responses` upgrade, then one turn per
//! `response.create` text message, answered with Responses API events.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::conn::ResetOnClose;
use super::http::error_response;
use super::render;
use super::script::{BINARY_FRAME_BYTES, Reply};
use super::state::{
    MAX_BODY_BYTES, PREVIOUS_NOT_FOUND, Shared, header_pairs, parse_body, string_member,
};
use super::types::{Outcome, Transport, WireApi};

/// Internal marker among a WebSocket turn's events: send the events before it, then stall.
const STALL_MARKER: &str = "copilot-eval.stall";

pub(super) async fn responses_ws(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ResetOnClose>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let pairs = header_pairs(&headers);
    let index = shared.record(method.as_str(), &uri, Transport::Http, pairs.clone(), None);
    if shared.config.refuse_websocket {
        shared.set_status(index, 503);
        return error_response(
            503,
            "copilot-eval model server refuses WebSocket connections",
            false,
        );
    }
    match upgrade {
        Ok(upgrade) => {
            shared.set_status(index, 101);
            upgrade
                .max_message_size(MAX_BODY_BYTES)
                .on_upgrade(move |socket| websocket_session(shared, socket, conn, uri, pairs))
        }
        Err(rejection) => {
            let response = rejection.into_response();
            shared.set_status(index, response.status().as_u16());
            response
        }
    }
}

/// Serves one WebSocket connection: each text message is one turn, answered in order. With
/// [`ServerConfig::reset_websocket_after_turns`](super::ServerConfig::reset_websocket_after_turns),
/// the connection is reset after that many answered turns.
async fn websocket_session(
    shared: Arc<Shared>,
    mut socket: WebSocket,
    conn: ResetOnClose,
    uri: Uri,
    headers: Vec<(String, String)>,
) {
    let mut answered = 0;
    loop {
        let message = tokio::select! {
            message = socket.recv() => message,
            () = shared.stopped() => break,
        };
        let text = match message {
            Some(Ok(Message::Text(text))) => text.to_string(),
            Some(Ok(Message::Binary(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
            Some(Ok(_)) => continue,
        };
        let parsed = parse_body(text.as_bytes());
        let index = shared.record(
            "WS",
            &uri,
            Transport::WebSocket,
            headers.clone(),
            parsed.clone(),
        );
        let events = tokio::select! {
            events = websocket_turn(&shared, parsed, index) => events,
            () = shared.stopped() => break,
        };
        let events = match events {
            Some(WsAnswer::Events(events)) => events,
            Some(WsAnswer::Fault(fault)) => {
                if send_fault(&shared, &mut socket, fault).await {
                    continue;
                }
                return;
            }
            None => {
                // Disconnect: the first event, then drop the socket without a close frame.
                let _ = socket.send(Message::Text(created("resp_cut").into())).await;
                return;
            }
        };
        let stalls = events.iter().any(|e| e["type"] == STALL_MARKER);
        for event in events.into_iter().filter(|e| e["type"] != STALL_MARKER) {
            if socket
                .send(Message::Text(event.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        if stalls {
            // A stalled stream: nothing more until the server shuts down.
            shared.stopped().await;
            break;
        }
        answered += 1;
        if shared.config.reset_websocket_after == Some(answered) {
            // Dropping the socket closes the connection, with a reset.
            conn.reset_on_close();
            return;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

/// The text of a `response.created` event for the response `id`.
fn created(id: &str) -> String {
    json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}).to_string()
}

/// What to send back for one WebSocket turn (`None` from [`websocket_turn`]: a disconnect).
enum WsAnswer {
    /// Text events, in order (a [`STALL_MARKER`] among them: stall after the ones before it).
    Events(Vec<Value>),
    /// A fault reply the connection renders itself.
    Fault(Reply),
}

/// Sends a fault reply over `socket`. Returns `true` when the connection goes on with the next
/// message (a malformed text message), `false` when it ended (closed, dropped, or the server
/// shut down).
async fn send_fault(shared: &Shared, socket: &mut WebSocket, fault: Reply) -> bool {
    match fault {
        Reply::MalformedSse => socket.send(Message::Text("{not json".into())).await.is_ok(),
        Reply::WebSocketClose { code, reason } => {
            let _ = socket
                .send(Message::Text(created("resp_closed").into()))
                .await;
            let mut reason = reason;
            while reason.len() > 123 {
                reason.pop();
            }
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = socket.send(Message::Close(Some(frame))).await;
            false
        }
        Reply::BinaryFrame => {
            let bytes = Bytes::from_static(BINARY_FRAME_BYTES);
            if socket.send(Message::Binary(bytes)).await.is_ok() {
                shared.stopped().await;
            }
            false
        }
        Reply::KeepAliveStall { interval } => {
            let _ = socket
                .send(Message::Text(created("resp_kept_alive").into()))
                .await;
            loop {
                tokio::select! {
                    () = tokio::time::sleep(interval) => {
                        if socket.send(Message::Ping(Bytes::from_static(b"keep-alive"))).await.is_err() {
                            return false;
                        }
                    }
                    () = shared.stopped() => return false,
                }
            }
        }
        // `RateLimited` and `RecordedError` are rendered as error events by `websocket_turn`; the other replies
        // are not faults.
        _ => false,
    }
}

/// Handles one WebSocket message and returns what to send back. Never returns for a
/// [`Reply::Hang`] (the caller's select on shutdown ends it).
async fn websocket_turn(shared: &Shared, parsed: Option<Value>, index: usize) -> Option<WsAnswer> {
    let fail = |status: u16, message: &str, retry: bool| -> Option<WsAnswer> {
        shared.set_status(index, status);
        Some(WsAnswer::Events(vec![render::websocket_error_event(
            status, message, retry,
        )]))
    };
    let Some(message @ Value::Object(_)) = parsed else {
        return fail(400, "WebSocket message is not a JSON object", false);
    };
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    if kind != "response.create" {
        let text =
            format!("unsupported WebSocket message type {kind:?} (expected \"response.create\")");
        return fail(400, &text, false);
    }
    // Accept both the flat form the runtime sends and a nested `response` object.
    let body = match message.get("response") {
        Some(inner @ Value::Object(_)) => inner,
        _ => &message,
    };
    let (mut request, items) =
        match shared.responses_request(body, WireApi::WebSocketResponses, true) {
            Ok(found) => found,
            Err(text) => {
                shared.set_status(index, 400);
                let mut event = render::websocket_error_event(400, &text, true);
                event["error"]["code"] = json!(PREVIOUS_NOT_FOUND);
                return Some(WsAnswer::Events(vec![event]));
            }
        };
    request.initiator = string_member(&message, "initiator");
    request.interaction_type = crate::wire::declared_interaction_type(&message);
    request.body = message.clone();
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, "resp_");
            shared.store_conversation(&render.id, items, render::responses_output_items(&render));
            shared.set_status(index, 200);
            Some(WsAnswer::Events(render::responses_events(&render)))
        }
        Outcome::Error {
            status,
            message,
            retry,
        } => fail(status, &message, retry),
        Outcome::Hang => std::future::pending().await,
        Outcome::Disconnect => None,
        Outcome::Stall => {
            shared.set_status(index, 200);
            Some(WsAnswer::Events(vec![
                json!({"type": "response.created", "response": {"id": "resp_stalled", "object": "response", "status": "in_progress", "output": []}}),
                json!({"type": STALL_MARKER}),
            ]))
        }
        Outcome::Fault(Reply::RateLimited {
            retry_after_s,
            message,
        }) => {
            shared.set_status(index, 429);
            let mut event = render::websocket_error_event(429, &message, true);
            event["headers"] = json!({"retry-after": retry_after_s.to_string()});
            Some(WsAnswer::Events(vec![event]))
        }
        Outcome::Fault(Reply::RecordedError {
            status,
            message,
            retry_after_s,
            ..
        }) => {
            shared.set_status(index, status);
            let mut event = render::websocket_error_event(status, &message, true);
            if let Some(seconds) = retry_after_s {
                event["headers"] = json!({"retry-after": seconds.to_string()});
            }
            Some(WsAnswer::Events(vec![event]))
        }
        Outcome::Fault(fault) => {
            shared.set_status(index, 200);
            Some(WsAnswer::Fault(fault))
        }
    }
}
