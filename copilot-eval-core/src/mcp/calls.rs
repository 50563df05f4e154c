//! The record of one call a mock received ([`McpMockCall`]): the server's side of the wire,
//! kept beside what the runtime reported.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `tools/call` an [`McpMock`](super::McpMock) received. Also the JSON report's entry of
/// `tests[].runs[].mcp_servers[].received_calls[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpMockCall {
    /// The tool's name as the mock declares it (`lookup`, not the model's `weather-lookup`).
    pub tool: String,
    /// The arguments the server received (`{}` when the request carried none).
    pub arguments: Value,
    /// When the call arrived, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The Copilot session the call belongs to: the run's session id, set when the run claimed
    /// the call after its session; `None` for a call no run claimed (yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The MCP session id the client sent (`Mcp-Session-Id`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_session: Option<String>,
    /// The fault that shaped the answer (`delay 2000ms`, `protocol_error`, `hang`,
    /// `huge_output N bytes`, `died`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// Whether the mock answered an error result (`isError: true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The run tag the request carried ([`RUN_HEADER`](super::RUN_HEADER)); not in the JSON.
    #[serde(skip)]
    pub(crate) run: Option<String>,
}
