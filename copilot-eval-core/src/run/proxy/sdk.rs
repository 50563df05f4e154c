//! The private runtime's feed of the request proxy: the SDK's [`CopilotRequestHandler`] and
//! [`CopilotWebSocketHandler`], converting the SDK's request and context to the proxy's and
//! forwarding HTTP with the SDK's [`forward_http`].

use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::copilot_request_handler::{
    CopilotHttpRequest, CopilotHttpResponse, CopilotRequestContext, CopilotRequestError,
    CopilotRequestHandler, CopilotWebSocketHandler, CopilotWebSocketMessage,
    CopilotWebSocketResponse, forward_http,
};

use super::{Downstream, ModelHttpRequest, ProxyContext, ProxySocket, RequestProxy};

impl From<&CopilotRequestContext> for ProxyContext {
    fn from(ctx: &CopilotRequestContext) -> Self {
        Self {
            request_id: ctx.request_id.clone(),
            session_id: ctx.session_id.clone(),
            agent_id: ctx.agent_id.clone(),
            parent_agent_id: ctx.parent_agent_id.clone(),
            interaction_type: ctx.interaction_type.clone(),
            url: ctx.url.clone(),
            headers: ctx.headers.clone(),
        }
    }
}

#[async_trait]
impl ModelHttpRequest for CopilotHttpRequest {
    super::http_request_fields!();

    async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    async fn forward(self) -> Result<CopilotHttpResponse, CopilotRequestError> {
        forward_http(self).await
    }
}

#[async_trait]
impl Downstream for CopilotWebSocketResponse {
    async fn send_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError> {
        CopilotWebSocketResponse::send_message(self, message).await
    }

    async fn close(&self) {
        let _ = CopilotWebSocketResponse::close(self).await;
    }
}

#[async_trait]
impl CopilotRequestHandler for RequestProxy {
    async fn send_request(
        &self,
        request: CopilotHttpRequest,
        ctx: &CopilotRequestContext,
    ) -> Result<CopilotHttpResponse, CopilotRequestError> {
        self.http(request, &ProxyContext::from(ctx)).await
    }

    async fn open_websocket(
        &self,
        ctx: &CopilotRequestContext,
        response: CopilotWebSocketResponse,
    ) -> Result<Box<dyn CopilotWebSocketHandler>, CopilotRequestError> {
        let socket = self
            .websocket(&ProxyContext::from(ctx), Arc::new(response))
            .await?;
        Ok(Box::new(SdkSocket(socket)))
    }
}

/// A proxied WebSocket as the SDK's handler.
struct SdkSocket(ProxySocket);

#[async_trait]
impl CopilotWebSocketHandler for SdkSocket {
    async fn send_request_message(
        &self,
        message: CopilotWebSocketMessage,
    ) -> Result<(), CopilotRequestError> {
        self.0.forward(message, None).await
    }

    async fn send_request_message_with_context(
        &self,
        message: CopilotWebSocketMessage,
        ctx: &CopilotRequestContext,
    ) -> Result<(), CopilotRequestError> {
        self.0
            .forward(message, Some(&ProxyContext::from(ctx)))
            .await
    }

    async fn close(&self) -> Result<(), CopilotRequestError> {
        self.0.close().await;
        Ok(())
    }
}
