//! The router: the one request handler of a pooled runtime (the runner's client). It forwards
//! each model request, HTTP and WebSocket, with its request context to the endpoint of the test
//! process whose session made it (the port in the session id, [`wire::endpoint_of`]); a
//! sessionless request (the model catalog, the account) goes to the runtime's current lessee.
//! It only routes: the audit, gate and tap are the test process's.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderName};
use futures::{SinkExt, StreamExt};
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpRequest, CopilotHttpResponse, CopilotRequestContext, CopilotRequestError,
    CopilotRequestHandler, CopilotWebSocketHandler, CopilotWebSocketMessage,
    CopilotWebSocketResponse,
};
use tokio::sync::Mutex as AsyncMutex;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

use super::wire::{self, Frame, Payload, WireContext};
use crate::run::ProxyContext;

/// Routes a pooled runtime's model requests to test processes' endpoints. Shared as
/// `Arc<Router>`.
pub struct Router {
    client: reqwest::Client,
    /// The current lessee: its endpoint port and its model server's base URL.
    lessee: Mutex<Option<(u16, String)>>,
    routed: std::sync::atomic::AtomicUsize,
    unleased: std::sync::atomic::AtomicUsize,
}

impl Router {
    /// A router with no lessee yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("a plain HTTP client builds"),
            lessee: Mutex::default(),
            routed: Default::default(),
            unleased: Default::default(),
        })
    }

    /// Send sessionless requests to the lessee's endpoint on `endpoint` (127.0.0.1), and the
    /// runtime's own account and catalog requests (`front`) to its model server at
    /// `base_url`; `None`: nowhere.
    pub fn lease_to(&self, lessee: Option<(u16, String)>) {
        *self.lessee.lock().expect("router lock") = lessee;
    }

    /// The current lessee's model server, if any.
    fn lessee_base_url(&self) -> Option<String> {
        self.lessee
            .lock()
            .expect("router lock")
            .as_ref()
            .map(|(_, base)| base.clone())
    }

    /// Model requests and WebSockets routed so far.
    pub fn routed(&self) -> usize {
        self.routed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Requests to the runtime's API front (`COPILOT_API_URL`) answered `404` because no run
    /// held the runtime: the runtime's start asks `/copilot_internal/user` once before it
    /// listens.
    pub fn unleased_answers(&self) -> usize {
        self.unleased.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn endpoint(&self, ctx: &CopilotRequestContext) -> Result<u16, CopilotRequestError> {
        let named = ctx.session_id.as_deref().and_then(wire::endpoint_of);
        let port = match (&ctx.session_id, named) {
            (_, Some(port)) => Some(port),
            (None, None) => self
                .lessee
                .lock()
                .expect("router lock")
                .as_ref()
                .map(|(port, _)| *port),
            (Some(_), None) => None,
        };
        self.routed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        port.ok_or_else(|| {
            CopilotRequestError::message(format!(
                "no eval owns this model request (session {:?})",
                ctx.session_id
            ))
        })
    }
}

fn wire_headers(request_headers: &HeaderMap, ctx: &CopilotRequestContext) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in request_headers {
        let lower = name.as_str();
        if !wire::is_wire_header(lower) && lower != "host" && lower != "content-length" {
            headers.append(name.clone(), value.clone());
        }
    }
    let mut context = ProxyContext::from(ctx);
    context.headers = HeaderMap::new();
    wire::put_context(&mut headers, &context);
    headers
}

#[async_trait]
impl CopilotRequestHandler for Router {
    async fn send_request(
        &self,
        request: CopilotHttpRequest,
        ctx: &CopilotRequestContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        let port = self.endpoint(ctx)?;
        let mut headers = wire_headers(&request.headers, ctx);
        headers.insert(
            HeaderName::from_static(wire::METHOD),
            wire::header_value(&request.method),
        );
        headers.insert(
            HeaderName::from_static(wire::URL),
            wire::header_value(&request.url),
        );
        let send = self
            .client
            .post(format!("http://127.0.0.1:{port}{}", wire::HTTP_PATH))
            .headers(headers)
            .body(request.body)
            .send();
        let response = tokio::select! {
            _ = request.cancel.cancelled() => {
                return Err(CopilotRequestError::message("Request cancelled by runtime"));
            }
            result = send => result.map_err(|e| CopilotRequestError::Upstream(format!("the eval's endpoint: {e}")))?,
        };
        if let Some(error) = response.headers().get(wire::ERROR) {
            return Err(CopilotRequestError::message(
                error.to_str().unwrap_or("the eval's proxy failed"),
            ));
        }
        Ok(super::loopback::sdk_response(response))
    }

    async fn open_websocket(
        &self,
        ctx: &CopilotRequestContext,
        response: CopilotWebSocketResponse,
    ) -> Result<Box<dyn CopilotWebSocketHandler>, CopilotRequestError> {
        let port = self.endpoint(ctx)?;
        let url = format!("ws://127.0.0.1:{port}{}", wire::WS_PATH);
        let (stream, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| CopilotRequestError::Upstream(format!("the eval's endpoint: {e}")))?;
        let (mut sink, mut frames) = stream.split();
        let open = Frame::Open {
            ctx: WireContext::from(&ProxyContext::from(ctx)),
        };
        sink.send(Message::Text(open.text().into()))
            .await
            .map_err(|e| CopilotRequestError::Upstream(e.to_string()))?;
        match frames.next().await {
            Some(Ok(Message::Text(text))) => match Frame::parse(text.as_str()) {
                Ok(Frame::Opened { error: None }) => {}
                Ok(Frame::Opened { error: Some(error) }) => {
                    return Err(CopilotRequestError::message(error));
                }
                _ => return Err(CopilotRequestError::message("the eval's endpoint misspoke")),
            },
            _ => {
                return Err(CopilotRequestError::message(
                    "the eval's endpoint closed the WebSocket",
                ));
            }
        }
        let acks: Arc<Mutex<VecDeque<oneshot::Sender<Option<String>>>>> = Arc::default();
        let pending = acks.clone();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = frames.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                match Frame::parse(text.as_str()) {
                    Ok(Frame::Message { payload, .. }) => {
                        let _ = response
                            .send_message(CopilotWebSocketMessage {
                                data: payload.bytes(),
                                binary: payload.binary,
                            })
                            .await;
                    }
                    Ok(Frame::Ack { error }) => {
                        if let Some(ack) = pending.lock().expect("acks lock").pop_front() {
                            let _ = ack.send(error);
                        }
                    }
                    Ok(Frame::Close) => break,
                    _ => {}
                }
            }
            pending.lock().expect("acks lock").clear();
            let _ = response.close().await;
        });
        Ok(Box::new(RoutedSocket {
            sink: AsyncMutex::new(Some(sink)),
            acks,
            reader: Mutex::new(Some(reader)),
        }))
    }
}

type RouterSink = futures::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    Message,
>;

/// One routed WebSocket: runtime messages go to the endpoint, each answered by an ack.
struct RoutedSocket {
    sink: AsyncMutex<Option<RouterSink>>,
    acks: Arc<Mutex<VecDeque<oneshot::Sender<Option<String>>>>>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl RoutedSocket {
    async fn send(
        &self,
        message: CopilotWebSocketMessage,
        ctx: Option<&CopilotRequestContext>,
    ) -> Result<(), CopilotRequestError> {
        let frame = Frame::Message {
            ctx: ctx.map(|c| WireContext::from(&ProxyContext::from(c))),
            payload: Payload::new(&message.data, message.binary),
        };
        let (ack, acked) = oneshot::channel();
        {
            let mut sink = self.sink.lock().await;
            let Some(sink) = sink.as_mut() else {
                return Err(CopilotRequestError::message("the WebSocket is closed"));
            };
            self.acks.lock().expect("acks lock").push_back(ack);
            sink.send(Message::Text(frame.text().into()))
                .await
                .map_err(|e| CopilotRequestError::Upstream(e.to_string()))?;
        }
        match acked.await {
            Ok(None) => Ok(()),
            Ok(Some(error)) => Err(CopilotRequestError::message(error)),
            Err(_) => Err(CopilotRequestError::message(
                "the eval's endpoint closed the WebSocket",
            )),
        }
    }
}

#[async_trait]
impl CopilotWebSocketHandler for RoutedSocket {
    async fn send_request_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError> {
        self.send(message, None).await
    }

    async fn send_request_message_with_context(
        &self,
        message: CopilotWebSocketMessage,
        ctx: &CopilotRequestContext,
    ) -> Result<(), CopilotRequestError> {
        self.send(message, Some(ctx)).await
    }

    async fn close(&self) -> Result<(), CopilotRequestError> {
        if let Some(mut sink) = self.sink.lock().await.take() {
            let _ = sink.send(Message::Text(Frame::Close.text().into())).await;
            let _ = sink.close().await;
        }
        let reader = self.reader.lock().expect("reader lock").take();
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), reader).await;
        }
        Ok(())
    }
}

/// The runtime's API and GitHub URL (`COPILOT_API_URL`): the requests the runtime makes
/// without its request handler (the token check at `/copilot_internal/user`, the model
/// catalog, settings) are forwarded as they are to the current lessee's model server, so that
/// the account and catalog answers are the eval's, as on a private runtime.
pub(crate) async fn front(
    router: Arc<Router>,
) -> std::io::Result<(u16, tokio::sync::oneshot::Sender<()>)> {
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let router = router.clone();
        async move { router.forward_front(request).await }
    });
    super::loopback::serve_loopback(app).await
}

impl Router {
    async fn forward_front(&self, request: axum::extract::Request) -> axum::response::Response {
        use axum::response::IntoResponse;
        // Before any lease (the runtime's start asks `/copilot_internal/user` before it
        // listens): 404, which the runtime takes at once, where a 503 or a reset makes it wait
        // about 200 ms and ask again. Each session asks again, through its lessee.
        let Some(base) = self.lessee_base_url() else {
            self.unleased
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return (
                axum::http::StatusCode::NOT_FOUND,
                "no eval holds this pooled runtime",
            )
                .into_response();
        };
        let (parts, body) = request.into_parts();
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
            return axum::http::StatusCode::BAD_REQUEST.into_response();
        };
        let mut headers = parts.headers;
        headers.remove("host");
        headers.remove("content-length");
        let sent = self
            .client
            .request(
                parts.method,
                format!("{}{path}", base.trim_end_matches('/')),
            )
            .headers(headers)
            .body(body)
            .send()
            .await;
        match sent {
            Ok(answer) => {
                let mut response = axum::response::Response::builder().status(answer.status());
                for (name, value) in answer.headers() {
                    if name != "transfer-encoding"
                        && name != "content-length"
                        && name != "connection"
                    {
                        response = response.header(name, value);
                    }
                }
                response
                    .body(axum::body::Body::from_stream(answer.bytes_stream()))
                    .unwrap_or_else(|e| {
                        (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response()
                    })
            }
            Err(e) => (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
        }
    }
}
