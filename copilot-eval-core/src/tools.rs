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

/// What the model reads when a [`function_tool`] handler fails: the text the Go Copilot SDK gives
/// the model for a failing tool handler (its `buildFailedToolResult`, which keeps the detail in
/// the result's `error` only), so a handler's internal error text does not reach the model. (The
/// Rust SDK's own path for a `ToolHandler` returning `Err` passes the error text to the model.)
pub const HIDDEN_TOOL_ERROR: &str =
    "Invoking this tool produced an error. Detailed information is not available.";

/// An SDK [`Tool`] named `name` with a JSON Schema `parameters` object, whose in-process handler
/// is `handler(arguments)`.
///
/// The handler's `Ok(text)` goes back to the model as the tool's result. `Err(text)` goes back as
/// a failed tool result (`result_type: "failure"`) the way the Go Copilot SDK reports a failing
/// handler: the model reads [`HIDDEN_TOOL_ERROR`], never `text`; the full `text` is the result's
/// `error`, which the evidence records on the [`ToolCall`](crate::ToolCall) (`success: false`,
/// `error: Some(text)`). To let the model read the error text, use
/// [`function_tool_showing_errors`].
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
    make_tool(name, description, parameters, handler, false)
}

/// As [`function_tool`], except that the model reads the handler's `Err(text)` itself (the
/// opt-in for a tool whose error messages are meant for the model, e.g. input validation).
pub fn function_tool_showing_errors<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    handler: F,
) -> Tool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    make_tool(name, description, parameters, handler, true)
}

/// As [`function_tool`], for a handler that keeps state between calls: each call gets its own
/// clone of `state` and the JSON arguments, `handler(state, arguments)`.
///
/// `state` is usually an `Arc` of what the test reads afterwards (an `Arc<Mutex<Vec<String>>>` of
/// what the tool was asked, say): pass `Arc::clone(&mine)` and keep `mine`; every call's clone
/// points at the same value. This replaces the clone into the closure and the second clone into
/// each call's future that a stateful [`function_tool`] needs:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use copilot_eval_core::tools::function_tool_with_state;
///
/// let asked: Arc<Mutex<Vec<String>>> = Arc::default();
/// let tool = function_tool_with_state(
///     "lookup_release",
///     "Looks up the latest release of a package",
///     serde_json::json!({"type": "object", "properties": {"package": {"type": "string"}}}),
///     Arc::clone(&asked),
///     |asked, args| async move {
///         let package = args["package"].as_str().unwrap_or_default().to_owned();
///         asked.lock().unwrap().push(package.clone());
///         Ok(format!("{package} 2.4.1"))
///     },
/// );
/// # let _ = tool;
/// ```
///
/// Errors go to the model as with [`function_tool`] (the model reads [`HIDDEN_TOOL_ERROR`]).
pub fn function_tool_with_state<S, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    state: S,
    handler: F,
) -> Tool
where
    S: Clone + Send + Sync + 'static,
    F: Fn(S, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    make_tool(
        name,
        description,
        parameters,
        move |args| handler(state.clone(), args),
        false,
    )
}

fn make_tool<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    handler: F,
    show_errors: bool,
) -> Tool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    described(
        name,
        description,
        parameters,
        Arc::new(FnHandler {
            handler,
            show_errors,
            _future: PhantomData,
        }),
    )
}

/// A [`Tool`] with its description, JSON Schema parameters and in-process handler.
fn described(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    handler: Arc<dyn ToolHandler>,
) -> Tool {
    Tool::new(name)
        .with_description(description)
        .with_parameters(parameters)
        .with_handler(handler)
}

struct FnHandler<F, Fut> {
    handler: F,
    show_errors: bool,
    _future: PhantomData<fn() -> Fut>,
}

/// The failed result of a handler's `Err(error)`: the model reads `error` only when
/// `show_errors`, else [`HIDDEN_TOOL_ERROR`]; the result's `error` is always the full text.
fn failure(error: String, show_errors: bool) -> ToolResult {
    let for_model = if show_errors {
        error.clone()
    } else {
        HIDDEN_TOOL_ERROR.to_owned()
    };
    ToolResult::Expanded(ToolResultExpanded::new(for_model, "failure").with_error(error))
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
            Err(text) => failure(text, self.show_errors),
        })
    }
}

/// An SDK [`Tool`] named `name` with a JSON Schema `parameters` object, whose in-process handler
/// returns the SDK's whole structured result, [`ToolResultExpanded`]: the text the model reads
/// (`text_result_for_llm`), `result_type` (`"success"` or `"failure"`), an `error`, telemetry
/// (`with_telemetry`), binary results. The runtime reports the call as failed when `result_type`
/// is `"failure"`; the evidence keeps the call's `error` and its `telemetry`
/// ([`ToolCall`](crate::ToolCall)). Use it where [`function_tool`]'s `Result<String, String>`
/// says too little, e.g. to check that a skill reads a tool's telemetry or handles a failure
/// result whose text is meant for the model.
pub fn function_tool_structured<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    parameters: Value,
    handler: F,
) -> Tool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResultExpanded> + Send + 'static,
{
    described(
        name,
        description,
        parameters,
        Arc::new(StructuredHandler {
            handler,
            _future: PhantomData,
        }),
    )
}

struct StructuredHandler<F, Fut> {
    handler: F,
    _future: PhantomData<fn() -> Fut>,
}

#[async_trait]
impl<F, Fut> ToolHandler for StructuredHandler<F, Fut>
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResultExpanded> + Send + 'static,
{
    async fn call(&self, invocation: ToolInvocation) -> Result<ToolResult, Error> {
        Ok(ToolResult::Expanded(
            (self.handler)(invocation.arguments).await,
        ))
    }
}

/// An SDK [`Tool`] named `name`, without parameters, whose in-process handler returns `image`
/// (bytes of type `mime_type`, e.g. `image/png`) as an image result, so image parts can be
/// produced offline. The runtime passes the image to the model when the model supports vision
/// (for the loopback server: [`ServerConfig::vision`](crate::model_server::ServerConfig::vision)).
pub fn image_tool(
    name: impl Into<String>,
    description: impl Into<String>,
    mime_type: impl Into<String>,
    image: Vec<u8>,
) -> Tool {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(&image);
    let mime_type = mime_type.into();
    let name = name.into();
    let text = format!(
        "{name} returned an image ({mime_type}, {} bytes)",
        image.len()
    );
    described(
        name,
        description,
        serde_json::json!({"type": "object", "properties": {}}),
        Arc::new(ImageHandler {
            data,
            mime_type,
            text,
        }),
    )
}

struct ImageHandler {
    data: String,
    mime_type: String,
    text: String,
}

#[async_trait]
impl ToolHandler for ImageHandler {
    async fn call(&self, _invocation: ToolInvocation) -> Result<ToolResult, Error> {
        Ok(ToolResult::Expanded(
            ToolResultExpanded::new(self.text.clone(), "success").with_binary_results(vec![
                github_copilot_sdk::ToolBinaryResult {
                    data: self.data.clone(),
                    mime_type: self.mime_type.clone(),
                    r#type: "image".into(),
                    description: None,
                },
            ]),
        ))
    }
}

/// A valid 1×1 PNG (a single red pixel), for image tools in tests.
pub const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_error_is_hidden_from_the_model_unless_shown() {
        let hidden = serde_json::to_value(failure("db password rejected".into(), false)).unwrap();
        assert_eq!(hidden["textResultForLlm"], HIDDEN_TOOL_ERROR, "{hidden}");
        assert_eq!(hidden["error"], "db password rejected");
        assert_eq!(hidden["resultType"], "failure");
        let shown = serde_json::to_value(failure("bad key".into(), true)).unwrap();
        assert_eq!(shown["textResultForLlm"], "bad key", "{shown}");
        assert_eq!(shown["error"], "bad key");
    }

    /// Every call of a stateful tool sees the same state as the test that made it.
    #[tokio::test]
    async fn a_stateful_tool_shares_its_state_across_calls() {
        let asked: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let tool = function_tool_with_state(
            "lookup",
            "Look up.",
            serde_json::json!({"type": "object"}),
            Arc::clone(&asked),
            |asked, args| async move {
                let package = args["package"].as_str().unwrap_or_default().to_owned();
                let mut asked = asked.lock().unwrap();
                asked.push(package.clone());
                Ok(format!("{package}: call {}", asked.len()))
            },
        );
        let handler = tool.handler().expect("a handler").clone();
        for (package, expected) in [("a", "a: call 1"), ("b", "b: call 2")] {
            let invocation: ToolInvocation = serde_json::from_value(serde_json::json!({
                "sessionId": "s",
                "toolCallId": "c",
                "toolName": "lookup",
                "arguments": {"package": package},
            }))
            .unwrap();
            let result = handler.call(invocation).await.unwrap();
            assert_eq!(serde_json::to_value(result).unwrap(), expected);
        }
        assert_eq!(*asked.lock().unwrap(), ["a", "b"]);
    }

    #[test]
    fn tiny_png_is_a_valid_png() {
        // Signature, then IHDR declaring 1x1, then IEND at the end.
        let png = super::TINY_PNG;
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");
    }
}
