//! The handler of the eval's `end_at_tool_call` tool ([`EndingHandler`]): the model's call of
//! it ends the run with the call left pending. The eval's own handler is not called; the
//! returned future never resolves, so the runtime never gets a result, and the run's cleanup
//! stops the runtime without aborting the turn (`run/cleanup.rs`), leaving the call pending in
//! the session's state for a later resume with `continue_pending_work` (`run/pending.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::tool::ToolHandler;
use github_copilot_sdk::{Error, ToolInvocation, ToolResult};

use super::{ControlStop, Controls};

/// Ends the run at the call of its tool, leaving it pending.
pub(super) struct EndingHandler {
    pub(super) controls: Arc<Controls>,
}

#[async_trait]
impl ToolHandler for EndingHandler {
    async fn call(&self, invocation: ToolInvocation) -> Result<ToolResult, Error> {
        self.controls.close_and_stop(ControlStop::PendingToolCall {
            request_id: invocation
                .request_id
                .map(|id| id.to_string())
                .unwrap_or_default(),
        });
        // Never answer: the runtime is stopped with the call pending.
        std::future::pending().await
    }
}
