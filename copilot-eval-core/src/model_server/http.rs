//! The HTTP model-turn handlers: `POST /chat/completions` (JSON or SSE) and `POST /responses`
//! (SSE or the final response object), with the response builders they share.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::conn::ResetOnClose;
use super::convert;
use super::render::{self, TurnRender};
use super::script::{BINARY_FRAME_BYTES, Reply};
use super::state::{PREVIOUS_NOT_FOUND, Shared, header_value, parse_body, string_member};
use super::types::{ModelRequest, Outcome, WireApi};

/// Response header (and WebSocket error-event `headers` member) the runtime honours to decide
/// whether to retry a failed model call.
const SHOULD_RETRY: &str = "x-should-retry";

pub(super) fn json_response(status: u16, value: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        value.to_string(),
    )
        .into_response()
}

/// An error answer; `retry: false` adds `x-should-retry: false` so the runtime does not retry.
pub(super) fn error_response(status: u16, message: &str, retry: bool) -> Response {
    let mut response = json_response(status, &render::error_body(status, message));
    if !retry {
        response.headers_mut().insert(
            HeaderName::from_static(SHOULD_RETRY),
            HeaderValue::from_static("false"),
        );
    }
    response
}

fn sse_response(body: String) -> Response {
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from(body),
    )
        .into_response()
}

/// Waits for shutdown, then answers 503 (the runtime normally gave up long before).
async fn hang(shared: &Shared) -> Response {
    shared.stopped().await;
    error_response(503, "copilot-eval model server shut down", false)
}

/// A `200` SSE response that sends its first bytes, then nothing until the server shuts down.
fn stalled_response(shared: Arc<Shared>) -> Response {
    let first = futures::stream::once(async {
        Ok::<Bytes, std::io::Error>(Bytes::from_static(b": copilot-eval stalled stream\n\n"))
    });
    let rest = futures::stream::once(async move {
        shared.stopped().await;
        Err::<Bytes, std::io::Error>(std::io::Error::other("copilot-eval model server shut down"))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(futures::StreamExt::chain(
            first, rest,
        )))
        .expect("a static response builds")
}

/// A `200` whose body breaks off after its first bytes: the status line and the first SSE bytes
/// are flushed to the client (the body is pending once after them, which makes hyper write them
/// out), then the body fails, hyper drops the connection, and `conn` makes that close a TCP
/// reset: the client's next read fails with `ECONNRESET`.
fn cut_response(conn: &ResetOnClose) -> Response {
    conn.reset_on_close();
    let first = futures::stream::once(async {
        Ok::<Bytes, std::io::Error>(Bytes::from_static(b"data: {\"id\":\"cut\""))
    });
    let cut = futures::stream::once(async {
        tokio::task::yield_now().await;
        Err::<Bytes, std::io::Error>(std::io::Error::other(
            "copilot-eval model server cut the response",
        ))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(futures::StreamExt::chain(
            first, cut,
        )))
        .expect("a static response builds")
}

/// The HTTP rendering of a fault reply ([`Outcome::Fault`]) and the status it is logged with.
fn fault_response(shared: Arc<Shared>, conn: &ResetOnClose, fault: Reply) -> (u16, Response) {
    match fault {
        Reply::RateLimited {
            retry_after_s,
            message,
        } => {
            let mut response = error_response(429, &message, true);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
            (429, response)
        }
        Reply::RecordedError {
            status,
            code,
            message,
            retry_after_s,
        } => {
            let body = json!({"error": {"message": message, "type": code, "code": code}});
            let mut response = json_response(status, &body);
            if let Some(seconds) = retry_after_s {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            (status, response)
        }
        Reply::MalformedSse => {
            let body = "data: {not json\n\ndata: {\"choices\": [\n\nevent: response.created\ndata: ]]\n\ndata: [DONE]\n\n";
            (200, sse_response(body.to_owned()))
        }
        Reply::KeepAliveStall { interval } => {
            let ticks = futures::stream::unfold(true, move |first| async move {
                if !first {
                    tokio::time::sleep(interval).await;
                }
                Some((
                    Ok::<Bytes, std::io::Error>(Bytes::from_static(b": keep-alive\n\n")),
                    false,
                ))
            });
            let until_stop = futures::StreamExt::take_until(ticks, async move {
                shared.stopped().await;
            });
            let response = Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(until_stop))
                .expect("a static response builds");
            (200, response)
        }
        Reply::BinaryFrame => {
            let response = Response::builder()
                .status(200)
                .header("content-type", "application/octet-stream")
                .body(Body::from(Bytes::from_static(BINARY_FRAME_BYTES)))
                .expect("a static response builds");
            (200, response)
        }
        // A close code has no HTTP form: the connection is cut as for `Disconnect`.
        Reply::WebSocketClose { .. } | Reply::Disconnect => (200, cut_response(conn)),
        Reply::Message(_) | Reply::Error { .. } | Reply::RetryableError { .. } => (
            500,
            error_response(500, "copilot-eval model server: not a fault reply", false),
        ),
        Reply::Hang | Reply::Stall => (200, stalled_response(shared)),
    }
}

/// Logs an HTTP model request and parses its body: the request's log index and the JSON
/// object, or the `400` answer for a body that is not a JSON object.
fn json_object_request(
    shared: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(usize, Value), Box<Response>> {
    let index = shared.record_http(method, uri, headers, body);
    let Some(body @ Value::Object(_)) = parse_body(body) else {
        shared.set_status(index, 400);
        let response = error_response(400, "request body is not a JSON object", false);
        return Err(Box::new(response));
    };
    Ok((index, body))
}

/// Runs one model turn over HTTP and answers with its outcome, the same way for every HTTP wire
/// format: an answer is rendered by `answer` (given the render context, with ids
/// `{id_prefix}{n}`) and logged `200`; an error is sent with its status (and
/// `x-should-retry: false` unless retryable); a hang waits for shutdown (then `503`); a
/// disconnect cuts the body and resets the connection (`conn`); a stall sends a first SSE
/// comment and then nothing; a fault reply is rendered by [`fault_response`].
async fn answer_turn(
    shared: Arc<Shared>,
    conn: &ResetOnClose,
    index: usize,
    request: ModelRequest,
    id_prefix: &str,
    answer: impl FnOnce(&TurnRender<'_>) -> Response,
) -> Response {
    let request_model = request.model.clone();
    match shared.run_turn(request).await {
        Outcome::Answer { turn, calls, n } => {
            let render = shared.render_context(request_model, &turn, calls, n, id_prefix);
            let response = answer(&render);
            shared.set_status(index, 200);
            response
        }
        Outcome::Error {
            status,
            message,
            retry,
        } => {
            shared.set_status(index, status);
            error_response(status, &message, retry)
        }
        Outcome::Hang => hang(&shared).await,
        // Both send the status line `200` before they break off: logged as such.
        Outcome::Disconnect => {
            shared.set_status(index, 200);
            cut_response(conn)
        }
        Outcome::Stall => {
            shared.set_status(index, 200);
            stalled_response(shared)
        }
        Outcome::Fault(fault) => {
            let (status, response) = fault_response(shared.clone(), conn, fault);
            shared.set_status(index, status);
            response
        }
    }
}

pub(super) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ResetOnClose>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (index, body) = match json_object_request(&shared, &method, &uri, &headers, &body) {
        Ok(found) => found,
        Err(response) => return *response,
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let request = ModelRequest {
        wire: WireApi::ChatCompletions,
        streaming,
        model: string_member(&body, "model"),
        messages: body
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        tool_names: convert::tool_names(&body),
        previous_response_id: None,
        initiator: header_value(&headers, "x-initiator"),
        interaction_type: header_value(&headers, "x-interaction-type"),
        body: body.clone(),
    };
    answer_turn(shared, &conn, index, request, "chatcmpl-", |render| {
        if streaming {
            let text: String = render::chat_completion_chunks(render)
                .iter()
                .map(|chunk| render::sse_frame(None, chunk))
                .collect();
            sse_response(text)
        } else {
            json_response(200, &render::chat_completion_json(render))
        }
    })
    .await
}

pub(super) async fn responses_http(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ResetOnClose>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (index, body) = match json_object_request(&shared, &method, &uri, &headers, &body) {
        Ok(found) => found,
        Err(response) => return *response,
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let (mut request, items) = match shared.responses_request(&body, WireApi::Responses, streaming)
    {
        Ok(found) => found,
        Err(message) => {
            shared.set_status(index, 400);
            let mut body = render::error_body(400, &message);
            body["error"]["code"] = json!(PREVIOUS_NOT_FOUND);
            return json_response(400, &body);
        }
    };
    request.initiator = header_value(&headers, "x-initiator");
    request.interaction_type = header_value(&headers, "x-interaction-type");
    let store = shared.clone();
    answer_turn(shared, &conn, index, request, "resp_", |render| {
        store.store_conversation(&render.id, items, render::responses_output_items(render));
        if streaming {
            let text: String = render::responses_events(render)
                .iter()
                .map(|event| {
                    let kind = event.get("type").and_then(Value::as_str);
                    render::sse_frame(kind, &event.to_string())
                })
                .collect();
            sse_response(text)
        } else {
            json_response(200, &render::responses_final_object(render))
        }
    })
    .await
}
