//! The request seam: the SDK's [`CopilotRequestHandler`], installed when a run needs to control
//! model traffic (a tool-call budget). Every model request of the runtime (HTTP and WebSocket)
//! then passes here before it is forwarded to its upstream (the loopback model server offline,
//! GitHub live) with the SDK's own forwarding.
//!
//! Once the [`Gate`] is closed (budget stop, guard failure, timeout, error), nothing more is
//! forwarded: an HTTP request is held until the runtime cancels it (the session is being aborted)
//! and then fails; a WebSocket message is dropped. The number of requests held back is reported.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpRequest, CopilotHttpResponse, CopilotRequestContext, CopilotRequestError,
    CopilotRequestHandler, CopilotWebSocketForwarder, CopilotWebSocketHandler,
    CopilotWebSocketMessage, CopilotWebSocketResponse, forward_http,
};

use crate::controls::Gate;

/// How long a held-back HTTP request waits for the runtime's cancellation before failing.
const HOLD_BOUND: Duration = Duration::from_secs(30);

/// Forwards model requests while the gate is open.
pub struct GatedForwarder {
    gate: Arc<Gate>,
    held_back: Arc<AtomicUsize>,
}

impl GatedForwarder {
    /// A forwarder behind `gate`.
    pub fn new(gate: Arc<Gate>) -> Arc<Self> {
        Arc::new(Self {
            gate,
            held_back: Arc::default(),
        })
    }

    /// How many model requests (HTTP requests and WebSocket messages) were not forwarded because
    /// the gate was closed.
    pub fn held_back(&self) -> usize {
        self.held_back.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl CopilotRequestHandler for GatedForwarder {
    async fn send_request(
        &self,
        request: CopilotHttpRequest,
        _ctx: &CopilotRequestContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        if self.gate.is_closed() {
            self.held_back.fetch_add(1, Ordering::SeqCst);
            let _ = tokio::time::timeout(HOLD_BOUND, request.cancel.cancelled()).await;
            return Err(CopilotRequestError::message(
                "the eval stopped; this model request was not forwarded",
            ));
        }
        forward_http(request).await
    }

    async fn open_websocket(
        &self,
        ctx: &CopilotRequestContext,
        response: CopilotWebSocketResponse,
    ) -> Result<Box<dyn CopilotWebSocketHandler>, CopilotRequestError> {
        if self.gate.is_closed() {
            self.held_back.fetch_add(1, Ordering::SeqCst);
            return Err(CopilotRequestError::message(
                "the eval stopped; no WebSocket was opened",
            ));
        }
        let inner = CopilotWebSocketForwarder::builder(ctx.url.clone(), ctx.headers.clone())
            .connect(response)
            .await?;
        Ok(Box::new(GatedWebSocket {
            inner,
            gate: self.gate.clone(),
            held_back: self.held_back.clone(),
        }))
    }
}

struct GatedWebSocket {
    inner: CopilotWebSocketForwarder,
    gate: Arc<Gate>,
    held_back: Arc<AtomicUsize>,
}

#[async_trait]
impl CopilotWebSocketHandler for GatedWebSocket {
    async fn send_request_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError> {
        if self.gate.is_closed() {
            self.held_back.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        self.inner.send_request_message(message).await
    }

    async fn send_request_message_with_context(
        &self,
        message: CopilotWebSocketMessage,
        ctx: &CopilotRequestContext,
    ) -> Result<(), CopilotRequestError> {
        if self.gate.is_closed() {
            self.held_back.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        self.inner
            .send_request_message_with_context(message, ctx)
            .await
    }

    async fn close(&self) -> Result<(), CopilotRequestError> {
        self.inner.close().await
    }
}
