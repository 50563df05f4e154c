//! In-process MCP mock servers ([`McpMock`]): an MCP server that lives in the test process,
//! declared in Rust (tools with their JSON schemas, or a schema derived from a Rust type, and
//! async handlers), served with the official Rust MCP SDK (`rmcp`) over streamable HTTP on
//! 127.0.0.1, and added to an eval like any MCP server
//! ([`CopilotEvalBuilder::mcp_mock`](crate::eval::CopilotEvalBuilder::mcp_mock)).
//!
//! Every call the mock receives is recorded ([`McpMockCall`]): the test reads them with
//! [`McpMock::calls`], and the run puts the calls of its own session beside what the runtime
//! reported, in `mcp_servers[].received_calls`. Faults are one-liners on a tool
//! ([`MockTool::delay`], [`MockTool::error_result`], [`MockTool::protocol_error`],
//! [`MockTool::hang`], [`MockTool::huge_output`]) or on the mock ([`McpMock::dies_after`],
//! [`McpMock::adds_tool_after_call`]).
//!
//! A leaf: it imports no module of the crate. docs/mcp.md.

mod calls;
mod server;
mod tool;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use calls::McpMockCall;
pub use tool::{MockTool, Reply};

use server::{Served, State};

/// The header the run adds to its requests to a mock, naming the run: the mock files each call
/// under it, and the run claims the calls of its own session after it ([`McpMock::claim`]).
pub const RUN_HEADER: &str = "x-copilot-eval-run";

/// An MCP server in the test process: tools declared in Rust, served over streamable HTTP on
/// 127.0.0.1 (an ephemeral port) by `rmcp`. Cheap to clone (clones share the server, its tools
/// and its calls). The server starts when the mock is first added to an eval (or
/// [`url`](Self::url) is asked) and stops when the last clone is dropped.
///
/// ```no_run
/// use copilot_eval_core::mcp::{McpMock, MockTool, Reply};
/// use serde_json::json;
///
/// let mock = McpMock::new("weather").tool(
///     MockTool::new("lookup", "The weather in a city", json!({
///         "type": "object",
///         "properties": {"city": {"type": "string"}},
///         "required": ["city"]
///     }))
///     .handler(|args| async move { Reply::text(format!("sunny in {}", args["city"])) }),
/// );
/// // ctx.eval().mcp_mock(&mock) ... then, after the run:
/// assert_eq!(mock.calls()[0].arguments["city"], "Paris");
/// ```
#[derive(Clone)]
pub struct McpMock {
    state: Arc<State>,
    served: Arc<Mutex<Option<Served>>>,
}

impl std::fmt::Debug for McpMock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpMock")
            .field("name", &self.state.name)
            .field("tools", &self.state.tool_names())
            .finish()
    }
}

impl McpMock {
    /// A mock server named `name` (the name the eval gives it: the model sees its tools as
    /// `<name>-<tool>`), with no tool yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            state: Arc::new(State::new(name.into())),
            served: Arc::default(),
        }
    }

    /// Add `tool` (replacing a tool of the same name). Tools added after the server started are
    /// listed to the next `tools/list`; [`adds_tool_after_call`](Self::adds_tool_after_call)
    /// also tells the client.
    pub fn tool(self, tool: MockTool) -> Self {
        self.state.add_tool(tool);
        self
    }

    /// A fault: the server answers `calls` tool calls, then dies on the next one, which is never
    /// answered (recorded with fault `died`): its listener and every connection close, as a
    /// server process that crashes mid-session. Later requests are refused; the calls it
    /// received stay readable.
    pub fn dies_after(self, calls: usize) -> Self {
        self.state.set_dies_after(calls);
        self
    }

    /// The `tools/list_changed` scenario: after the first call of tool `after`, the mock adds
    /// `tool` to its list and sends `notifications/tools/list_changed` to the client.
    pub fn adds_tool_after_call(self, after: impl Into<String>, tool: MockTool) -> Self {
        self.state.set_list_change(after.into(), tool);
        self
    }

    /// The runtime's per-call timeout for this server's tools (the SDK's `timeout`, in
    /// milliseconds on the wire), passed on in the server's configuration; `None` (the default)
    /// leaves the runtime's own.
    pub fn tool_timeout(self, timeout: Duration) -> Self {
        *self.state.tool_timeout.lock().expect("mock lock") = Some(timeout);
        self
    }

    /// The mock's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// The URL the server answers on (`http://127.0.0.1:<port>/mcp`), starting it if it is not
    /// running. Errors: binding a loopback port or starting the server's thread failed.
    pub fn url(&self) -> std::io::Result<String> {
        let mut served = self.served.lock().expect("mock lock");
        if let Some(served) = served.as_ref() {
            return Ok(served.url.clone());
        }
        let started = Served::start(self.state.clone())?;
        let url = started.url.clone();
        *served = Some(started);
        Ok(url)
    }

    /// The server as the SDK's MCP server configuration: HTTP at [`url`](Self::url), all tools,
    /// the [`tool_timeout`](Self::tool_timeout) if set.
    pub fn config(&self) -> std::io::Result<github_copilot_sdk::McpServerConfig> {
        let mut http = github_copilot_sdk::McpHttpServerConfig {
            url: self.url()?,
            ..Default::default()
        };
        if let Some(timeout) = *self.state.tool_timeout.lock().expect("mock lock") {
            http.timeout = Some(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX));
        }
        Ok(github_copilot_sdk::McpServerConfig::Http(http))
    }

    /// Every tool call the mock received so far, from every session, in arrival order (a call
    /// the run claimed names its session).
    pub fn calls(&self) -> Vec<McpMockCall> {
        self.state.calls.lock().expect("mock lock").clone()
    }

    /// The calls of `tool` (its name as the mock declares it, not the model's
    /// `<server>-<tool>`), in arrival order.
    pub fn calls_of(&self, tool: &str) -> Vec<McpMockCall> {
        self.calls()
            .into_iter()
            .filter(|c| c.tool == tool)
            .collect()
    }

    /// Claim the calls made under run tag `run` (the [`RUN_HEADER`] the run sent) for `session`:
    /// each gets `session`, and the claimed calls are returned in arrival order. Called by the
    /// run after its session.
    pub fn claim(&self, run: &str, session: Option<&str>) -> Vec<McpMockCall> {
        let mut calls = self.state.calls.lock().expect("mock lock");
        let mut claimed = Vec::new();
        for call in calls.iter_mut().filter(|c| c.run.as_deref() == Some(run)) {
            if call.session.is_none() {
                call.session = session.map(str::to_owned);
            }
            claimed.push(call.clone());
        }
        claimed
    }

    /// Whether the server died ([`dies_after`](Self::dies_after)).
    pub fn died(&self) -> bool {
        self.state.died()
    }
}

#[cfg(test)]
mod tests;
