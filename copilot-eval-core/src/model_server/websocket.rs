//! The WebSocket Responses handler: the `GET /responses` upgrade, then one turn per
//! `response.create` text message, answered with Responses API events.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::http::error_response;
use super::render;
use super::server::{
    MAX_BODY_BYTES, PREVIOUS_NOT_FOUND, Shared, header_pairs, parse_body, string_member,
};
use super::types::{Outcome, Transport, WireApi};

/// Internal marker among a WebSocket turn's events: send the events before it, then stall.
const STALL_MARKER: &str = "copilot-eval.stall";

pub(super) async fn responses_ws(
    State(shared): State<Arc<Shared>>,
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
                .on_upgrade(move |socket| websocket_session(shared, socket, uri, pairs))
        }
        Err(rejection) => {
            let response = rejection.into_response();
            shared.set_status(index, response.status().as_u16());
            response
        }
    }
}

/// Serves one WebSocket connection: each text message is one turn, answered in order.
async fn websocket_session(
    shared: Arc<Shared>,
    mut socket: WebSocket,
    uri: Uri,
    headers: Vec<(String, String)>,
) {
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
        let Some(events) = events else {
            // Disconnect: the first event, then drop the socket without a close frame.
            let created = json!({"type": "response.created", "response": {"id": "resp_cut", "object": "response", "status": "in_progress", "output": []}});
            let _ = socket.send(Message::Text(created.to_string().into())).await;
            return;
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
    }
    let _ = socket.send(Message::Close(None)).await;
}

/// Handles one WebSocket message and returns the events to send back. Never returns for a
/// [`Reply::Hang`] (the caller's select on shutdown ends it).
async fn websocket_turn(
    shared: &Shared,
    parsed: Option<Value>,
    index: usize,
) -> Option<Vec<Value>> {
    let fail = |status: u16, message: &str, retry: bool| -> Option<Vec<Value>> {
        shared.set_status(index, status);
        Some(vec![render::websocket_error_event(status, message, retry)])
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
                return Some(vec![event]);
            }
        };
    request.initiator = string_member(&message, "initiator");
    request.interaction_type = message
        .get("headers")
        .and_then(Value::as_object)
        .and_then(|h| {
            h.iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("x-interaction-type"))
        })
        .and_then(|(_, value)| value.as_str())
        .map(str::to_owned);
    request.body = message.clone();
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, "resp_");
            shared.store_conversation(&render.id, items, render::responses_output_items(&render));
            shared.set_status(index, 200);
            Some(render::responses_events(&render))
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
            Some(vec![
                json!({"type": "response.created", "response": {"id": "resp_stalled", "object": "response", "status": "in_progress", "output": []}}),
                json!({"type": STALL_MARKER}),
            ])
        }
    }
}
