//! The request proxy (the "request seam"): where a run sees and controls its model traffic. It is
//! fed by the SDK's `CopilotRequestHandler` (module `sdk`, a private runtime), installed when a
//! run must see or control its model traffic (`max_tool_calls`, a caller guard or hooks object,
//! an in-process tool handler, `audit_requests`, `image_detail`, or a recording through
//! [`RunOptions::record`](super::RunOptions::record)). Every model
//! request of the runtime, HTTP and WebSocket, then passes here before it is forwarded to its
//! upstream (the loopback model server offline, GitHub live).
//!
//! - HTTP requests are forwarded with the SDK's `forward_http`; the response body is streamed
//!   back chunk by chunk (the first SSE chunk reaches the runtime before the upstream ends).
//! - WebSocket connections are forwarded by our own forwarder (tokio-tungstenite), so that a
//!   transport failure is seen: an upstream that refuses the connection, a send that fails, or a
//!   connection that closes while a response is in flight.
//! - With the audit on ([`audit`]), every model request is checked (and image details
//!   rewritten) before it is forwarded, and a record is kept. A request that cannot be audited,
//!   or a WebSocket transport failure, fails the run (`request_audit_error`) and closes the gate:
//!   nothing is forwarded after it, over WebSocket or HTTP (no fallback).
//! - Once the [`Gate`] is closed (budget stop, guard failure, tool handler panic, audit failure,
//!   any stop), nothing
//!   more is forwarded: an HTTP request is held until the runtime cancels it (the session is being
//!   aborted) and then fails; a WebSocket message is dropped. Such requests are counted.
//!
//! - With a tap ([`ExchangeTap`], e.g. the cassette recorder), every forwarded model request and
//!   its answer are handed to it; the answers reach the runtime unchanged.
//!
//! [`RequestProxy::close`] closes every upstream WebSocket; the run calls it before stopping the
//! runtime.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::http::HeaderMap;
use futures::{SinkExt, StreamExt};
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpResponse, CopilotRequestError, CopilotWebSocketMessage,
};
use tokio::sync::Mutex as AsyncMutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::ExchangeTap;
use super::controls::{ControlStop, Controls, Gate};
use crate::eval::ImageDetail;
use crate::evidence::denial::after_stop;
use crate::evidence::offered::ModelOffer;
use crate::wire::Route;
use audit::{HttpVerdict, RequestAudit, RequestOrigin};

pub mod audit;
mod sdk;

/// Where a model request comes from, as the runtime described it (the SDK's request context,
/// or the same fields as they arrive over a pooled runtime's router): shared by HTTP requests
/// and WebSocket messages.
#[derive(Debug, Clone, Default)]
pub struct ProxyContext {
    /// The runtime's id of this request (stable across its lifecycle).
    pub request_id: String,
    /// The session that made it; `None` for sessionless requests (the model catalog, the
    /// account).
    pub session_id: Option<String>,
    /// The agent that made it (empty strings count as none).
    pub agent_id: Option<String>,
    /// Its parent agent, when a subagent made it.
    pub parent_agent_id: Option<String>,
    /// The runtime's classification (`conversation-agent`, `conversation-subagent`, ...).
    pub interaction_type: Option<String>,
    /// The absolute URL the request goes to (a WebSocket's upstream URL).
    pub url: String,
    /// The request headers (a WebSocket's upgrade headers).
    pub headers: HeaderMap,
}

/// One buffered HTTP model request the proxy may rewrite (its body and headers) and then
/// forwards to its upstream: the SDK's request (forwarded with the SDK's `forward_http`), or a
/// request that reached a pooled runtime's endpoint.
#[async_trait]
pub trait ModelHttpRequest: Send + Sized {
    /// The HTTP method (`GET`, `POST`, ...).
    fn method(&self) -> &str;
    /// The absolute URL.
    fn url(&self) -> &str;
    /// The request headers.
    fn headers(&self) -> &HeaderMap;
    /// The request headers, to change before forwarding.
    fn headers_mut(&mut self) -> &mut HeaderMap;
    /// The buffered body.
    fn body(&self) -> &[u8];
    /// Replace the body (the audit's image-detail rewrite).
    fn set_body(&mut self, body: Vec<u8>);
    /// Resolves once the runtime cancelled this request.
    async fn cancelled(&self);
    /// Forward it upstream and stream the answer back.
    async fn forward(self) -> Result<CopilotHttpResponse, CopilotRequestError>;
}

/// The accessors of [`ModelHttpRequest`] for a request type with the fields `method`, `url`,
/// `headers` and `body` (the SDK's `CopilotHttpRequest`, the pooled endpoint's request): one
/// body for both implementations.
macro_rules! http_request_fields {
    () => {
        fn method(&self) -> &str {
            &self.method
        }

        fn url(&self) -> &str {
            &self.url
        }

        fn headers(&self) -> &axum::http::HeaderMap {
            &self.headers
        }

        fn headers_mut(&mut self) -> &mut axum::http::HeaderMap {
            &mut self.headers
        }

        fn body(&self) -> &[u8] {
            &self.body
        }

        fn set_body(&mut self, body: Vec<u8>) {
            self.body = body;
        }
    };
}
pub(crate) use http_request_fields;

/// The runtime-facing side of a proxied WebSocket: where upstream messages are written.
#[async_trait]
pub trait Downstream: Send + Sync + 'static {
    /// Hand one upstream message to the runtime.
    async fn send_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError>;
    /// Tell the runtime the connection ended.
    async fn close(&self);
}

/// The interaction type of a subagent's model requests (runtime 1.0.102).
const SUBAGENT_INTERACTION: &str = "conversation-subagent";

/// How long a held-back HTTP request waits for the runtime's cancellation before failing.
const HOLD_BOUND: Duration = Duration::from_secs(30);

/// Whether header `name` (lower case) belongs to a connection (hop-by-hop, or a WebSocket's
/// handshake), not to the request or its answer: never forwarded.
pub(crate) fn is_connection_header(name: &str) -> bool {
    CONNECTION_HEADERS.contains(&name) || name.starts_with("sec-websocket")
}

/// Headers that belong to the runtime's connection, not to the upstream request.
const CONNECTION_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "proxy-connection",
    "te",
    "trailer",
];

/// What the proxy does besides forwarding.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProxyOptions {
    /// Keep a [`RequestAudit`] record per model request.
    pub audit: bool,
    /// Rewrite every OpenAI image part's `detail` to this value.
    pub image_detail: Option<ImageDetail>,
    /// Keep what each model request offered the model and who sent it ([`ModelOffer`]): set
    /// for an eval with skill folders, MCP servers or custom agents, whose checks read what the
    /// model received.
    pub offers: bool,
    /// Test-only ([`TestFaults::websocket_reader_waits_for_send`](super::TestFaults)): after
    /// each complete upstream WebSocket response, read the upstream again only once the
    /// runtime's next message was sent (or failed) or the socket is being closed.
    #[doc(hidden)]
    pub reader_waits_for_send: bool,
}

impl ProxyOptions {
    /// Whether requests are inspected (audit on, or an image detail to write).
    pub fn inspects(&self) -> bool {
        self.audit || self.image_detail.is_some()
    }
}

/// The run's request handler. Shared as `Arc<RequestProxy>`.
pub struct RequestProxy {
    shared: Arc<Shared>,
}

/// State shared by the handler, its WebSockets and their reader tasks.
struct Shared {
    options: ProxyOptions,
    gate: Arc<Gate>,
    controls: Arc<Controls>,
    held_back: AtomicUsize,
    observed: AtomicUsize,
    records: Mutex<Vec<RequestAudit>>,
    offers: Mutex<Vec<ModelOffer>>,
    failure: Mutex<Option<String>>,
    sockets: Mutex<Vec<Arc<Upstream>>>,
    /// Sees every forwarded model exchange, e.g. to record a cassette (`RunOptions::record`).
    tap: Option<Arc<dyn ExchangeTap>>,
}

impl RequestProxy {
    /// A proxy behind the controls' gate.
    pub fn new(options: ProxyOptions, controls: Arc<Controls>) -> Arc<Self> {
        Self::with_tap(options, controls, None)
    }

    /// A proxy behind the controls' gate that also hands every forwarded model request and its
    /// answer to `tap` (for example the cassette's `Recorder`), when given. While recording, the
    /// runtime's `accept-encoding` header is not forwarded, so that answers arrive unencoded.
    pub fn with_tap(
        options: ProxyOptions,
        controls: Arc<Controls>,
        tap: Option<Arc<dyn ExchangeTap>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            shared: Arc::new(Shared {
                options,
                gate: controls.gate(),
                controls,
                held_back: AtomicUsize::new(0),
                observed: AtomicUsize::new(0),
                records: Mutex::default(),
                offers: Mutex::default(),
                failure: Mutex::default(),
                sockets: Mutex::default(),
                tap,
            }),
        })
    }

    /// Model requests (HTTP requests and WebSocket messages) not forwarded because the gate was
    /// closed.
    pub fn held_back(&self) -> usize {
        self.shared.held_back.load(Ordering::SeqCst)
    }

    /// Model requests that passed the proxy and were forwarded (catalog GETs not counted).
    pub fn observed(&self) -> usize {
        self.shared.observed.load(Ordering::SeqCst)
    }

    /// The audit records, in order (empty unless the audit is on).
    pub fn records(&self) -> Vec<RequestAudit> {
        self.shared.records.lock().expect("proxy lock").clone()
    }

    /// What each forwarded model request offered the model, in order (empty unless
    /// [`ProxyOptions::offers`]).
    pub fn offers(&self) -> Vec<ModelOffer> {
        self.shared.offers.lock().expect("proxy lock").clone()
    }

    /// The first audit or transport failure, if any.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure.lock().expect("proxy lock").clone()
    }

    /// Close every upstream WebSocket (the run calls this before it stops the runtime).
    pub async fn close(&self) {
        let sockets = std::mem::take(&mut *self.shared.sockets.lock().expect("proxy lock"));
        for socket in sockets {
            socket.close().await;
        }
    }
}

impl Shared {
    /// Latch a failure: close the gate and ask the run to stop with `request_audit_error`.
    fn fail(&self, message: String) -> CopilotRequestError {
        {
            let mut failure = self.failure.lock().expect("proxy lock");
            if failure.is_none() {
                *failure = Some(message.clone());
            }
        }
        self.controls
            .stop_with(ControlStop::AuditFailed(message.clone()));
        CopilotRequestError::message(message)
    }

    /// A transport problem: a failure when the audit inspects, a plain upstream error otherwise.
    fn transport_error(&self, message: String) -> CopilotRequestError {
        if self.options.inspects() {
            self.fail(message)
        } else {
            CopilotRequestError::Upstream(message)
        }
    }

    /// Forward an HTTP request, handing a model request (`route`) and its answer to the tap.
    /// `payload` is the request's JSON when the audit already read it (then the body is not
    /// parsed again).
    async fn forward<R: ModelHttpRequest>(
        &self,
        mut request: R,
        route: Route,
        payload: Option<serde_json::Value>,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        let (Some(tap), Route::Model(api)) = (&self.tap, route) else {
            return request.forward().await;
        };
        let payload = payload.or_else(|| serde_json::from_slice(request.body()).ok());
        let index = tap.http_request(api, payload.as_ref());
        request.headers_mut().remove("accept-encoding");
        match request.forward().await {
            Ok(response) => Ok(tap.clone().http_response(index, response)),
            Err(e) => {
                tap.http_failed(index, &e.to_string());
                Err(e)
            }
        }
    }

    /// Keep what the model request `payload` offered, sent as `ctx` says (with the interaction
    /// type the request itself `declared`, if any), when the run keeps offers.
    fn offer(&self, payload: &serde_json::Value, ctx: &ProxyContext, declared: Option<&str>) {
        if !self.options.offers {
            return;
        }
        let subagent = ctx
            .parent_agent_id
            .as_deref()
            .is_some_and(|p| !p.is_empty())
            || [ctx.interaction_type.as_deref(), declared].contains(&Some(SUBAGENT_INTERACTION));
        if let Some(offer) = ModelOffer::of(payload, ctx.agent_id.clone(), subagent) {
            self.offers.lock().expect("proxy lock").push(offer);
        }
    }

    fn record(&self, audit: RequestAudit) {
        self.observed.fetch_add(1, Ordering::SeqCst);
        if self.options.audit {
            self.records.lock().expect("proxy lock").push(audit);
        }
    }
}

fn origin(ctx: &ProxyContext) -> RequestOrigin {
    RequestOrigin {
        request_id: ctx.request_id.clone(),
        agent_id: ctx.agent_id.clone().filter(|a| !a.is_empty()),
        parent_agent_id: ctx.parent_agent_id.clone().filter(|a| !a.is_empty()),
        interaction_type: ctx.interaction_type.clone(),
    }
}

fn url_path(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    path.split(['?', '#']).next().unwrap_or("/").to_owned()
}

impl RequestProxy {
    /// Pass one HTTP model request: hold it back once the gate is closed (until the runtime
    /// cancels it, at most 30 s, then fail), audit it and rewrite image details when the run
    /// inspects, hand it to the tap, and forward it.
    ///
    /// # Errors
    /// A held-back request, an audit failure (which also stops the run), or the upstream's
    /// error.
    pub async fn http<R: ModelHttpRequest>(
        &self,
        mut request: R,
        ctx: &ProxyContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        let shared = &self.shared;
        if shared.gate.is_closed() {
            shared.held_back.fetch_add(1, Ordering::SeqCst);
            let _ = tokio::time::timeout(HOLD_BOUND, request.cancelled()).await;
            return Err(CopilotRequestError::message(after_stop(
                "this model request was not forwarded",
            )));
        }
        let path = url_path(request.url());
        let route = Route::of(request.method(), &path);
        let declared = request
            .headers()
            .get("x-interaction-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut payload = None;
        if shared.options.inspects() {
            let encoding = request
                .headers()
                .get("content-encoding")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // The interaction type the request itself declares wins over the context's.
            let mut origin = origin(ctx);
            if let Some(declared) = &declared {
                origin.interaction_type = Some(declared.clone());
            }
            match audit::inspect_http(
                route,
                request.method(),
                &path,
                encoding.as_deref(),
                request.body(),
                shared.options.image_detail,
                &origin,
            ) {
                Ok(HttpVerdict::Catalog) => return request.forward().await,
                Ok(HttpVerdict::Model {
                    payload: json,
                    audit,
                }) => {
                    request.set_body(serde_json::to_vec(&json).expect("a JSON value serialises"));
                    shared.record(*audit);
                    payload = Some(json);
                }
                Err(e) => return Err(shared.fail(e.0)),
            }
        } else if !request.method().eq_ignore_ascii_case("GET") {
            shared.observed.fetch_add(1, Ordering::SeqCst);
        }
        if shared.options.offers && matches!(route, Route::Model(_)) {
            if payload.is_none() {
                payload = serde_json::from_slice(request.body()).ok();
            }
            if let Some(json) = &payload {
                shared.offer(json, ctx, declared.as_deref());
            }
        }
        shared.forward(request, route, payload).await
    }

    /// Open one proxied WebSocket: connect its upstream (`ctx.url` with `ctx.headers`, less
    /// the connection's own headers) and copy upstream messages to `downstream`.
    ///
    /// # Errors
    /// The gate is closed, or the upstream cannot be reached (a run failure when inspecting).
    pub async fn websocket(
        &self,
        ctx: &ProxyContext,
        downstream: Arc<dyn Downstream>,
    ) -> Result<ProxySocket, CopilotRequestError> {
        let shared = &self.shared;
        if shared.gate.is_closed() {
            shared.held_back.fetch_add(1, Ordering::SeqCst);
            return Err(CopilotRequestError::message(after_stop(
                "no WebSocket was opened",
            )));
        }
        let upstream = Upstream::connect(ctx, downstream, shared.clone())
            .await
            .map_err(|e| shared.transport_error(format!("WebSocket transport open failed: {e}")))?;
        shared
            .sockets
            .lock()
            .expect("proxy lock")
            .push(upstream.clone());
        Ok(ProxySocket {
            shared: shared.clone(),
            upstream,
        })
    }
}

/// One proxied WebSocket ([`RequestProxy::websocket`]): the runtime's messages go through
/// [`ProxySocket::forward`].
pub struct ProxySocket {
    shared: Arc<Shared>,
    upstream: Arc<Upstream>,
}

impl ProxySocket {
    /// Pass one runtime message upstream: dropped (and counted) once the gate is closed,
    /// audited when the run inspects, handed to the tap.
    ///
    /// # Errors
    /// An audit failure, or a failed send (a run failure when inspecting).
    pub async fn forward(
        &self,
        message: CopilotWebSocketMessage,
        ctx: Option<&ProxyContext>,
    ) -> Result<(), CopilotRequestError> {
        let shared = &self.shared;
        if shared.gate.is_closed() {
            shared.held_back.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        // The message's JSON, read once: by the audit when the run inspects, else for the tap.
        let (outgoing, payload) = if shared.options.inspects() {
            let origin = ctx.map(origin).unwrap_or_default();
            match audit::inspect_websocket(
                &message.data,
                message.binary,
                shared.options.image_detail,
                &origin,
            ) {
                Ok((payload, audit)) => {
                    shared.record(audit);
                    (Message::Text(payload.to_string().into()), Some(payload))
                }
                Err(e) => return Err(shared.fail(e.0)),
            }
        } else {
            shared.observed.fetch_add(1, Ordering::SeqCst);
            if message.binary {
                (Message::Binary(message.data.into()), None)
            } else {
                let text = String::from_utf8_lossy(&message.data).into_owned();
                (Message::Text(text.into()), None)
            }
        };
        let payload = match (&outgoing, payload) {
            (_, Some(payload)) => Some(payload),
            (Message::Text(text), None) if shared.tap.is_some() || shared.options.offers => {
                serde_json::from_str(text.as_str()).ok()
            }
            _ => None,
        };
        if let Some(message) = payload.as_ref().filter(|m| {
            m.get("type").and_then(serde_json::Value::as_str) == Some("response.create")
        }) {
            // The interaction type the message declares (its `headers` member), if any.
            let declared = message
                .get("headers")
                .and_then(serde_json::Value::as_object)
                .and_then(|h| {
                    h.iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case("x-interaction-type"))
                })
                .and_then(|(_, value)| value.as_str());
            shared.offer(message, ctx.unwrap_or(&ProxyContext::default()), declared);
        }
        if let (Some(tap), Some(socket), Some(message)) =
            (&shared.tap, self.upstream.recording, &payload)
        {
            tap.ws_request(socket, message);
        }
        self.upstream.in_flight.store(true, Ordering::SeqCst);
        let sent = self.upstream.send(outgoing).await;
        self.upstream.sends.send_modify(|n| *n += 1);
        sent.map_err(|e| shared.transport_error(format!("WebSocket transport send failed: {e}")))
    }
}

impl ProxySocket {
    /// Close the upstream connection (the runtime closed its side).
    pub async fn close(&self) {
        self.upstream.close().await;
    }
}

type UpstreamSink = futures::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    Message,
>;

/// One upstream WebSocket: the writer half, and a reader task copying upstream messages to the
/// runtime and watching for transport failures.
struct Upstream {
    sink: AsyncMutex<Option<UpstreamSink>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A `response.create` was sent and its terminal event has not arrived yet.
    in_flight: AtomicBool,
    /// We are closing it ourselves: its end is not a failure.
    closing: AtomicBool,
    /// Its id with the tap, when the run records.
    recording: Option<u64>,
    /// Send attempts so far, and one more once it is being closed (see
    /// [`ProxyOptions::reader_waits_for_send`]).
    sends: tokio::sync::watch::Sender<u64>,
}

impl Upstream {
    async fn connect(
        ctx: &ProxyContext,
        response: Arc<dyn Downstream>,
        shared: Arc<Shared>,
    ) -> Result<Arc<Self>, String> {
        let mut request = ctx
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| format!("invalid URL: {e}"))?;
        for (name, value) in &ctx.headers {
            if is_connection_header(name.as_str()) {
                continue;
            }
            request.headers_mut().append(name.clone(), value.clone());
        }
        let (stream, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|e| e.to_string())?;
        let (sink, mut read) = stream.split();
        let upstream = Arc::new(Self {
            sink: AsyncMutex::new(Some(sink)),
            reader: Mutex::default(),
            in_flight: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            recording: shared.tap.as_ref().map(|t| t.websocket()),
            sends: tokio::sync::watch::Sender::new(0),
        });
        let watcher = upstream.clone();
        let mut sends = upstream.sends.subscribe();
        let reader = tokio::spawn(async move {
            // Set after a complete response when the reader waits for the next send (test-only).
            let mut wait_for_send_after = None;
            loop {
                if let Some(before) = wait_for_send_after.take() {
                    let _ = sends.wait_for(|n| *n > before).await;
                }
                match read.next().await {
                    Some(Ok(Message::Text(text))) => {
                        if is_terminal_event(&text) {
                            watcher.in_flight.store(false, Ordering::SeqCst);
                            if shared.options.reader_waits_for_send {
                                wait_for_send_after = Some(*sends.borrow_and_update());
                            }
                        }
                        if let (Some(tap), Some(socket)) = (&shared.tap, watcher.recording) {
                            tap.ws_event(socket, text.as_str());
                        }
                        let _ = response
                            .send_message(CopilotWebSocketMessage::from_text(text.to_string()))
                            .await;
                    }
                    Some(Ok(Message::Binary(data))) => {
                        let _ = response
                            .send_message(CopilotWebSocketMessage {
                                data: data.to_vec(),
                                binary: true,
                            })
                            .await;
                    }
                    Some(Ok(Message::Close(_))) | None => {
                        if watcher.in_flight.load(Ordering::SeqCst)
                            && !watcher.closing.load(Ordering::SeqCst)
                            && shared.options.inspects()
                        {
                            shared.fail(
                                "WebSocket transport receive failed: the connection closed mid-response"
                                    .to_owned(),
                            );
                        }
                        break;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        if !watcher.closing.load(Ordering::SeqCst) && shared.options.inspects() {
                            shared.fail(format!("WebSocket transport receive failed: {e}"));
                        }
                        break;
                    }
                }
            }
            if let (Some(tap), Some(socket)) = (&shared.tap, watcher.recording) {
                tap.ws_closed(socket);
            }
            response.close().await;
        });
        *upstream.reader.lock().expect("reader lock") = Some(reader);
        Ok(upstream)
    }

    async fn send(&self, message: Message) -> Result<(), String> {
        let mut sink = self.sink.lock().await;
        match sink.as_mut() {
            Some(sink) => sink.send(message).await.map_err(|e| e.to_string()),
            None => Err("the connection is closed".to_owned()),
        }
    }

    async fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.sends.send_modify(|n| *n += 1);
        if let Some(mut sink) = self.sink.lock().await.take() {
            let _ = sink.send(Message::Close(None)).await;
            let _ = sink.close().await;
        }
        let reader = self.reader.lock().expect("reader lock").take();
        if let Some(reader) = reader {
            let abort = reader.abort_handle();
            if tokio::time::timeout(Duration::from_secs(2), reader)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

/// The Responses events that end a response.
fn is_terminal_event(text: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    matches!(
        value.get("type").and_then(|t| t.as_str()),
        Some("response.completed" | "response.failed" | "response.incomplete" | "error")
    )
}
