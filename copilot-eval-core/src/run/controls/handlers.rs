//! In-process SDK tool handlers, wrapped ([`TrackedHandler`]) so that a handler that started
//! always runs to its end in its own task, even when the session is aborted; the run waits for
//! all of them before it stops the runtime ([`HandlerTracker::wait_idle`], through
//! [`Controls::drain`]) and records any that failed.
//!
//! A handler's `Err` is a failed tool call the model must handle; the run goes on. A handler's
//! panic is a bug in the test's own code: the wrapper records it, closes admission, the
//! model-request gate and the handlers before the failure result reaches the runtime (so the
//! request carrying it is never forwarded, and no handler starts after it), and stops the run
//! ([`Controls::handler_panicked`]), which ends as `execution_error` naming the tool and the
//! panic message.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::FutureExt;
use github_copilot_sdk::tool::ToolHandler;
use github_copilot_sdk::{Error, Tool, ToolInvocation, ToolResult, ToolResultExpanded};
use tokio::sync::Notify;

use super::{ControlStop, Controls};

/// Counts in-process tool handlers that are running, and records their failures.
#[derive(Clone, Default)]
pub(super) struct HandlerTracker(Arc<TrackerInner>);

#[derive(Default)]
struct TrackerInner {
    state: Mutex<TrackerState>,
    idle: Notify,
}

#[derive(Default)]
struct TrackerState {
    /// The tool names of the handlers running now (one entry per call).
    running: Vec<String>,
    closed: bool,
    failures: Vec<String>,
}

impl HandlerTracker {
    pub(super) fn close(&self) {
        self.0.state.lock().expect("tracker lock").closed = true;
    }

    /// Register a starting handler of `tool`; `false` when admission is closed.
    fn start(&self, tool: &str) -> bool {
        let mut state = self.0.state.lock().expect("tracker lock");
        if state.closed {
            return false;
        }
        state.running.push(tool.to_owned());
        true
    }

    fn finish(&self, tool: &str, failure: Option<String>) {
        let mut state = self.0.state.lock().expect("tracker lock");
        if let Some(at) = state.running.iter().position(|t| t == tool) {
            state.running.remove(at);
        }
        state.failures.extend(failure);
        if state.running.is_empty() {
            self.0.idle.notify_waiters();
        }
    }

    pub(super) async fn wait_idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            if self
                .0
                .state
                .lock()
                .expect("tracker lock")
                .running
                .is_empty()
            {
                return;
            }
            notified.await;
        }
    }

    /// The tool names of the handlers running now.
    pub(super) fn running(&self) -> Vec<String> {
        self.0.state.lock().expect("tracker lock").running.clone()
    }

    pub(super) fn failures(&self) -> Vec<String> {
        self.0.state.lock().expect("tracker lock").failures.clone()
    }
}

/// What a wrapped handler calls when it panics: with the tool's name and the panic message.
pub(super) type OnPanic = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// An in-process tool handler wrapped for the drain and the panic stop.
pub(super) struct TrackedHandler {
    pub(super) inner: Arc<dyn ToolHandler>,
    pub(super) tool: String,
    pub(super) tracker: HandlerTracker,
    /// Called with the tool's name and the panic message when the handler panics, before the
    /// failure result reaches the runtime (the run's controls stop the run:
    /// [`Controls::handler_panicked`](Controls::handler_panicked)).
    pub(super) on_panic: OnPanic,
}

#[async_trait]
impl ToolHandler for TrackedHandler {
    async fn call(&self, invocation: ToolInvocation) -> Result<ToolResult, Error> {
        if !self.tracker.start(&self.tool) {
            let text = crate::evidence::denial::not_run_after_stop(&self.tool);
            return Ok(ToolResult::Expanded(
                ToolResultExpanded::new(text.clone(), "failure").with_error(text),
            ));
        }
        let inner = self.inner.clone();
        let tracker = self.tracker.clone();
        let tool = self.tool.clone();
        // The handler runs in its own task: if the SDK drops this call (abort, stop), the handler
        // still runs to its end and the drain waits for it.
        let on_panic = self.on_panic.clone();
        let task = tokio::spawn(async move {
            let outcome = AssertUnwindSafe(inner.call(invocation))
                .catch_unwind()
                .await;
            let failure = match &outcome {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(format!("tool handler {tool} failed: {e}")),
                Err(panic) => {
                    // Before the failure result reaches the runtime: the gate is closed, so the
                    // model request that would carry it is never forwarded.
                    on_panic(&tool, &panic_text(panic));
                    Some(format!(
                        "tool handler {tool} panicked: {}",
                        panic_text(panic)
                    ))
                }
            };
            tracker.finish(&tool, failure);
            outcome
        });
        match task.await {
            Ok(Ok(result)) => result,
            Ok(Err(panic)) => {
                let text = format!(
                    "tool handler {} panicked: {}",
                    self.tool,
                    panic_text(&panic)
                );
                Ok(ToolResult::Expanded(
                    ToolResultExpanded::new(text.clone(), "failure").with_error(text),
                ))
            }
            Err(join) => {
                let text = format!("tool handler {} did not finish: {join}", self.tool);
                Ok(ToolResult::Expanded(
                    ToolResultExpanded::new(text.clone(), "failure").with_error(text),
                ))
            }
        }
    }
}

impl Controls {
    /// Wrap each tool's in-process handler so it is tracked for the drain; the eval's
    /// `end_at_tool_call` tool gets the handler that ends the run instead (`pending.rs`).
    pub fn wrap_tools(self: &Arc<Self>, tools: &[Tool]) -> Vec<Tool> {
        tools
            .iter()
            .map(|tool| match tool.handler() {
                Some(_) if self.end_at_tool_call.as_deref() == Some(tool.name.as_str()) => tool
                    .clone()
                    .with_handler(Arc::new(super::pending::EndingHandler {
                        controls: self.clone(),
                    })),
                Some(inner) => {
                    let controls = self.clone();
                    tool.clone().with_handler(Arc::new(TrackedHandler {
                        inner: inner.clone(),
                        tool: tool.name.clone(),
                        tracker: self.handlers.clone(),
                        on_panic: Arc::new(move |tool: &str, message: &str| {
                            controls.handler_panicked(tool, message)
                        }),
                    }))
                }
                None => tool.clone(),
            })
            .collect()
    }

    /// An in-process handler of `tool` panicked with `message`: close admission (later tool
    /// calls are denied), the model-request gate and the handlers (a handler not started yet
    /// refuses to start; those running go on to their end), and stop the run with
    /// [`ControlStop::HandlerPanicked`] (`close_and_stop`). Called
    /// by the wrapped handler before its failure result reaches the runtime.
    pub fn handler_panicked(&self, tool: &str, message: &str) {
        self.close_and_stop(ControlStop::HandlerPanicked {
            tool: tool.to_owned(),
            message: message.to_owned(),
        });
    }

    /// The tool names of the in-process handlers running now (one entry per call).
    pub(in crate::run) fn handlers_running(&self) -> Vec<String> {
        self.handlers.running()
    }

    /// Wait until every in-process tool handler that started has finished, at most `bound`.
    /// Never cancels one. Returns the failures (errors and panics) of handlers, in order, and
    /// the names of the handlers still running when `bound` passed (empty when all finished).
    pub async fn drain(&self, bound: std::time::Duration) -> (Vec<String>, Vec<String>) {
        let _ = tokio::time::timeout(bound, self.handlers.wait_idle()).await;
        (self.handlers.failures(), self.handlers.running())
    }
}

/// The message of a caught panic (`non-string panic` when its payload is not text).
pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::function_tool;
    use serde_json::json;

    fn invocation(tool: &str) -> ToolInvocation {
        serde_json::from_value(json!({
            "sessionId": "s", "toolCallId": "c1", "toolName": tool, "arguments": {}
        }))
        .unwrap()
    }

    /// A handler's `Err` is a failure result and no stop; its panic is a failure result too, but
    /// the gate and admission close and the run is asked to stop, naming the tool and message.
    #[tokio::test]
    async fn a_panic_stops_the_run_and_an_error_does_not() {
        let params = json!({"type": "object", "properties": {}});
        let failing = function_tool("fails", "", params.clone(), |_| async {
            Err("db down".to_owned())
        });
        async fn panics(_: serde_json::Value) -> Result<String, String> {
            panic!("bug 77")
        }
        let panicking = function_tool("panics", "", params, panics);
        let controls = Controls::new(None, vec![], None);
        let tools = controls.wrap_tools(&[failing, panicking]);
        let call = |at: usize, name: &str| tools[at].handler().unwrap().call(invocation(name));
        let result = serde_json::to_value(call(0, "fails").await.unwrap()).unwrap();
        assert_eq!(result["resultType"], "failure", "{result}");
        assert_eq!(controls.stop_requested(), None);
        assert!(!controls.gate().is_closed());
        let result = serde_json::to_value(call(1, "panics").await.unwrap()).unwrap();
        assert_eq!(result["resultType"], "failure", "{result}");
        assert_eq!(
            controls.stop_requested(),
            Some(ControlStop::HandlerPanicked {
                tool: "panics".into(),
                message: "bug 77".into()
            })
        );
        assert!(controls.gate().is_closed());
        let (failures, running) = controls.drain(std::time::Duration::from_secs(5)).await;
        // A `function_tool`'s `Err` is a failure result, not a failure of the handler.
        assert_eq!(failures, ["tool handler panics panicked: bug 77"]);
        assert!(running.is_empty());
    }

    /// After a handler's panic, as after every stop but the budget's, no handler starts: a call
    /// the runtime hands over later gets the "not run after the stop" failure and its handler
    /// never runs.
    #[tokio::test]
    async fn after_a_panic_no_handler_starts() {
        let params = json!({"type": "object", "properties": {}});
        let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = ran.clone();
        let later = function_tool("later", "", params.clone(), move |_| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok("ran".to_owned())
            }
        });
        async fn panics(_: serde_json::Value) -> Result<String, String> {
            panic!("bug 78")
        }
        let panicking = function_tool("panics", "", params, panics);
        let controls = Controls::new(None, vec![], None);
        let tools = controls.wrap_tools(&[later, panicking]);
        let call = |at: usize, name: &str| tools[at].handler().unwrap().call(invocation(name));
        call(1, "panics").await.unwrap();
        assert!(matches!(
            controls.stop_requested(),
            Some(ControlStop::HandlerPanicked { .. })
        ));
        let result = serde_json::to_value(call(0, "later").await.unwrap()).unwrap();
        assert_eq!(result["resultType"], "failure", "{result}");
        assert_eq!(
            result["textResultForLlm"],
            crate::evidence::denial::not_run_after_stop("later"),
            "{result}"
        );
        assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}
