//! Embedded loopback model server for offline runs.
//!
//! The real Copilot runtime (CLI 1.0.102) talks to this server instead of GitHub when its
//! environment points `COPILOT_API_URL` and `COPILOT_DEBUG_GITHUB_API_URL` at
//! [`ModelServer::base_url`], `GH_TOKEN` / `GITHUB_TOKEN` hold a placeholder, the enterprise and
//! HMAC variables are empty, and its home and config directories are private to the run.
//! Sessions then run with no network and no credentials, and every model turn is answered by a
//! [`Responder`], usually a [`Script`] of [`ScriptedTurn`]s.
//!
//! The server is axum bound on `127.0.0.1` with a port the OS chooses, never any other address.
//!
//! # Endpoints
//!
//! | request | answer |
//! |---|---|
//! | `GET /copilot_internal/user` | `200` JSON: `login`, `copilot_plan: "individual_pro"`, `endpoints.api` = the base URL, `endpoints.telemetry` = `http://127.0.0.1:9/telemetry` (nothing listens there), `analytics_tracking_id` |
//! | `GET /models` | `200` catalog `{"data": [...]}` with one entry per [`ServerConfig::model`]; the entry's `supported_endpoints` follows [`WireApi`] |
//! | `POST /chat/completions` | a model turn, Chat Completions (JSON, or SSE when `"stream": true`) |
//! | `POST /responses` | a model turn, Responses API (SSE when `"stream": true`, else the final response object) |
//! | `GET /responses` (WebSocket upgrade) | WebSocket Responses: one turn per `response.create` message |
//! | anything else (`/copilot_internal/managed_settings`, `/copilot_internal/team_customizations`, `POST /mcp/readonly`, ...) | `404`, recorded |
//!
//! Every request is recorded in [`ModelServer::requests`] (arrival order, one entry per
//! WebSocket message); model turns are also recorded, normalised, in
//! [`ModelServer::model_requests`].
//!
//! # Wire formats
//!
//! The runtime chooses the format from the catalog entry ([`WireApi`]):
//!
//! - **Chat Completions** (no `supported_endpoints`): SDK sessions send no `stream` field unless
//!   the session enables streaming; the answer is then one `chat.completion` JSON object. With
//!   streaming on, the request has `"stream": true` and `stream_options.include_usage`, and the
//!   answer is SSE `data:` chunks: a role chunk, text `delta.content` pieces, one
//!   `delta.tool_calls` chunk per call, a chunk with `finish_reason` (`stop` / `tool_calls`), a
//!   usage chunk with empty `choices`, and `data: [DONE]`.
//! - **Responses** (`["/responses"]`): streaming sessions send `"stream": true` and get SSE
//!   events; other sessions send no `stream` field and get the final `response` object as JSON
//!   (the runtime accepts both). The events: `response.created`, `response.in_progress`,
//!   per output item `response.output_item.added` ... `response.output_item.done` (text as
//!   `response.output_text.delta`, function arguments as
//!   `response.function_call_arguments.delta`, custom tool input as
//!   `response.custom_tool_call_input.delta`), then `response.completed` with the usage.
//! - **WebSocket Responses** (`["/responses", "ws:/responses"]`): the same events, one text
//!   message each, in answer to one `{"type": "response.create", ...}` message per turn. Later
//!   turns carry only the new input items plus `previous_response_id`; the server keeps every
//!   response's whole conversation (input and output items) and rebuilds
//!   [`ModelRequest::messages`] from it. An unknown `previous_response_id` is answered with error
//!   code `previous_response_not_found`, from which the runtime recovers by reconnecting and
//!   resending the whole conversation. After a WebSocket error the runtime may also fall back to
//!   `POST /responses`, which the server always serves.
//!
//! Tool calls get ids issued by the server, unique per server: `call_1`, `call_2`, ... A call of
//! a tool the request declares as freeform (`"type": "custom"`) is sent as a custom tool call
//! (`{"type":"custom","custom":{"name","input"}}` / a `custom_tool_call` item) whose input is
//! the scripted string.
//!
//! # The built-in file tools
//!
//! The runtime picks its built-in tool set by the model id, by its own rules (measured with CLI
//! 1.0.102; `gpt-5` also gets `create`, `gpt-5.1-codex` gets `apply_patch`, and `gpt-4.1`
//! fails offline with "Auto-mode unavailable"):
//!
//! - **some `gpt-*` ids** (e.g. `gpt-test`): the freeform tool **`apply_patch`**, declared as
//!   `{"type":"custom","custom":{"name":"apply_patch","format":{"type":"grammar","syntax":
//!   "lark", ...}}}`, and `rg` for searching. There is no JSON `create` tool. To create a file,
//!   call `apply_patch` with a patch text, which [`add_file_patch`] builds:
//!
//!   ```text
//!   *** Begin Patch
//!   *** Add File: /absolute/path/file.txt
//!   +first line
//!   +second line
//!   *** End Patch
//!   ```
//!
//!   The runtime creates missing parent directories, writes each `+` line plus a newline and
//!   reports `Added 1 file(s): <path>`. Over the Responses formats it names such a call
//!   `custom_<call id>` in its own events (`toolCallId: "custom_call_2"`); the wire keeps
//!   `call_2`.
//! - **other ids** (e.g. `claude-sonnet-4.5`, and the default [`DEFAULT_MODEL`]): the function
//!   tools **`create`** `{"path": <absolute path>, "file_text": <content>}` (the file must not
//!   exist and its parent directory must: otherwise the call fails with `Parent directory does
//!   not exist`) and `edit` `{"path", "old_str", "new_str"}`, and `grep` for searching.
//!
//! Both sets also have `bash`, `view`, `glob`, `task`, `skill`, `sql`, `web_fetch` and the
//! session's own tools; [`ModelRequest::tool_names`] lists what a request offers.
//!
//! # Usage numbers
//!
//! A [`ScriptedUsage`] is written into these wire fields; with them the runtime's
//! `assistant.usage` event reports exactly the scripted numbers (checked on all four formats):
//!
//! | `assistant.usage` | [`ScriptedUsage`] | Chat Completions `usage` | Responses `response.usage` |
//! |---|---|---|---|
//! | `inputTokens` | `input_tokens` | `prompt_tokens` | `input_tokens` |
//! | `outputTokens` | `output_tokens` | `completion_tokens` | `output_tokens` |
//! | `cacheReadTokens` | `cache_read_tokens` | `prompt_tokens_details.cached_tokens` | `input_tokens_details.cached_tokens` |
//! | `cacheWriteTokens` | `cache_write_tokens` | `prompt_tokens_details.cache_write_tokens` | `input_tokens_details.cache_write_tokens` |
//!
//! `inputTokens` is the prompt total: the runtime does not subtract cached tokens. `total_tokens`
//! is sent as input + output; `reasoningTokens` (Responses only,
//! `output_tokens_details.reasoning_tokens`) is always 0. All four numbers are carried on every
//! format. `cost` is 0 because the catalog's billing multiplier is 0.
//!
//! # Errors and retries
//!
//! Measured with CLI 1.0.102; delays are one machine's readings.
//!
//! - [`Reply::Error`] is sent with `x-should-retry: false` (a header over HTTP, a `headers`
//!   member of the error event over WebSocket). The runtime then makes no retry: one failed
//!   call, then `model.call_failure`, `assistant.turn_end`, `session.error` and `session.idle`
//!   within about 100 ms. `session.error` has `errorType: "query"`, `statusCode` and the message
//!   `Execution failed: <status> <message>`, except: 401 and 403 give `errorType:
//!   "authorization"` with a generic message; 429 gives `errorType: "rate_limit"` followed by
//!   `auto_mode_switch.requested`, and the session does not become idle until that request is
//!   answered (install an auto-mode-switch handler, or do not script 429 as a final error);
//!   413 makes the runtime try a forced compaction first, then fail with "prompt too long".
//! - [`Reply::RetryableError`] leaves the decision to the runtime. It does not retry 400, 403,
//!   404 and 422: the session ends at once as above. It retries 401 (first as a transient auth
//!   error), 408, 429, 500 and 502 (measured; presumably all 5xx) up to 5 times, with delays of about 0.6, 1, 2, 4 and 8 s (429:
//!   about 5 s first), so about 16-20 s before the final `session.error` ("retried 5 times").
//!   Each retry is a new model request that takes the next reply of a [`Script`], so a
//!   retryable error followed by a turn tests recovery.
//! - Over WebSocket the runtime ignores the status number of an error event and derives it
//!   from `error.code`; the server picks codes so that 400, 404, 413, 429 and 503 arrive as
//!   such. **Any other status arrives as 500.** After an error the runtime opens a new
//!   WebSocket connection for its next call.
//! - When a [`Script`] is used up, further requests get a non-retried `500` with the message
//!   `script exhausted after N turns`, so the session ends promptly with that text in its
//!   `session.error`.
//! - [`Reply::Hang`] never answers; the request stays open until the server shuts down. The
//!   runtime has no timeout of its own there: a hanging Chat Completions request was still
//!   waiting after 400 s, with no retry. The engine's own timeout has to end such a run.
//!
//! # Example
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use copilot_eval_core::model_server::*;
//! use serde_json::json;
//!
//! let script = Arc::new(
//!     Script::new([])
//!         .turn(ScriptedTurn::tool_call("get_weather", json!({"city": "Oslo"})))
//!         .turn(ScriptedTurn::tool_call("apply_patch", json!(add_file_patch("/tmp/w/a.txt", "hi"))))
//!         .turn(ScriptedTurn::text("Done.").with_usage(ScriptedUsage {
//!             input_tokens: 1200,
//!             output_tokens: 40,
//!             cache_read_tokens: 1000,
//!             cache_write_tokens: 0,
//!         })),
//! );
//! let server = ModelServer::start(
//!     ServerConfig::new(script.clone()).wire_api(WireApi::WebSocketResponses).model("gpt-test"),
//! )
//! .await?;
//! // ... start the runtime with COPILOT_API_URL = server.base_url(), run the session ...
//! assert_eq!(script.remaining(), 0);
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod catalog;
mod conn;
pub(crate) mod convert;
mod http;
mod render;
mod script;
mod server;
mod state;
mod types;
mod websocket;

#[cfg(test)]
mod tests;

pub use catalog::ScriptCatalog;
pub use script::{
    BINARY_FRAME_BYTES, DEFAULT_USAGE, Reply, Responder, Script, ScriptedToolCall, ScriptedTurn,
    ScriptedUsage, add_file_patch,
};
pub use server::ModelServer;
pub use types::{DEFAULT_MODEL, ModelRequest, ReceivedRequest, ServerConfig, Transport, WireApi};
