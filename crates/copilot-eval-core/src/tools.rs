//! A shorthand for SDK tools whose handler is an async closure over the JSON arguments.
//!
//! Evals take plain SDK [`Tool`]s; there is no framework-specific tool type. This module only
//! saves the boilerplate of implementing [`ToolHandler`] for the common case.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::tool::ToolHandler;
use github_copilot_sdk::{Error, Tool, ToolInvocation, ToolResult, ToolResultExpanded};
use serde_json::Value;

/// An SDK [`Tool`] named `name` with a JSON Schema `parameters` object, whose in-process handler
/// is `handler(arguments)`.
///
/// The handler's `Ok(text)` goes back to the model as the tool's result; `Err(text)` goes back as
/// a failed tool result (`result_type: "failure"`), which the model sees and the evidence records
/// with `success: false`.
pub fn function_tool<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    handler: F,
) -> Tool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    Tool::new(name)
        .with_description(description)
        .with_parameters(parameters)
        .with_handler(Arc::new(FnHandler {
            handler,
            _future: PhantomData,
        }))
}

struct FnHandler<F, Fut> {
    handler: F,
    _future: PhantomData<fn() -> Fut>,
}

#[async_trait]
impl<F, Fut> ToolHandler for FnHandler<F, Fut>
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    async fn call(&self, invocation: ToolInvocation) -> Result<ToolResult, Error> {
        Ok(match (self.handler)(invocation.arguments).await {
            Ok(text) => ToolResult::Text(text),
            Err(text) => ToolResult::Expanded(
                ToolResultExpanded::new(text.clone(), "failure").with_error(text),
            ),
        })
    }
}
