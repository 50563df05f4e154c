//! What the model answers: the [`Responder`] seam, scripted replies and the in-order [`Script`].

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::Value;

use super::ModelRequest;

/// Decides the answer to one model turn.
///
/// The server calls [`Responder::respond`] once for every model request it receives (one
/// `POST /chat/completions`, one `POST /responses`, or one `response.create` WebSocket message),
/// in arrival order, after the request has been normalised into a [`ModelRequest`]. Requests the
/// server rejects on its own (an unparseable body, an unknown `previous_response_id`) never reach
/// the responder.
#[async_trait]
pub trait Responder: Send + Sync + 'static {
    /// Returns the reply for `request`. It may wait (for example on a channel the test controls);
    /// the runtime's request stays open meanwhile.
    async fn respond(&self, request: &ModelRequest) -> Reply;
}

/// The answer to one model request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A successful assistant turn, rendered in the wire format of the request.
    Message(ScriptedTurn),
    /// An error answer the runtime does not retry: the model call fails once and the turn ends
    /// with a `session.error` event (`statusCode` = `status`, message `Execution failed: <status>
    /// <message>`) right away.
    ///
    /// Over HTTP this is the response status `status` with the JSON body `{"error":{"message",
    /// "type", "code"}}` and the header `x-should-retry: false`. Over WebSocket it is one
    /// `{"type":"error", ...}` event whose `error.code` carries the status (only 400, 404, 413,
    /// 429 and 503 can be expressed; other statuses reach the runtime as 500) and whose
    /// `headers` member says `x-should-retry: false`. See the
    /// [module documentation](super#errors-and-retries) for what the runtime does per status.
    Error {
        /// HTTP status code to answer with, e.g. 400 or 500.
        status: u16,
        /// Human-readable error message; the runtime repeats it in its `session.error` event.
        message: String,
    },
    /// Like [`Reply::Error`] but without `x-should-retry: false`, so the runtime applies its own
    /// retry policy: 401, 408, 429 and 5xx are retried up to 5 times with growing delays (about
    /// 16-20 s in total), and every retry is a new model request that takes the next reply.
    RetryableError {
        /// HTTP status code to answer with, e.g. 500 or 429.
        status: u16,
        /// Human-readable error message.
        message: String,
    },
    /// Never answers. The request (or WebSocket message) stays unanswered and its connection
    /// stays open until the server shuts down; then HTTP requests get a `503` and WebSocket
    /// connections are closed. Use it to exercise timeouts and aborts.
    Hang,
    /// Starts answering, then drops the connection mid-response: over HTTP the status line and
    /// the first bytes of the body arrive, then the connection is reset (a TCP `RST`, not a
    /// `FIN`: the client's next read fails with `ECONNRESET`); over WebSocket the first
    /// event (`response.created`) arrives, then the socket is dropped without a close frame. Use
    /// it to exercise transport failures.
    Disconnect,
    /// Starts streaming, then stalls: the status line and the first bytes of the body (over
    /// WebSocket: the first event) arrive, then nothing more until the server shuts down. Use it
    /// for a slow model stream that outlives the eval's timeout.
    Stall,
    /// A rate limit with a `retry-after` header: over HTTP the status `429` with the header
    /// `retry-after: <retry_after_s>` and the JSON error body, without `x-should-retry: false`,
    /// so the runtime applies its own retry policy (every retry is a new model request that takes
    /// the next reply). Over WebSocket it is one `rate_limit_exceeded` error event whose
    /// `headers` member carries `retry-after`.
    RateLimited {
        /// Seconds the answer asks the client to wait (the `retry-after` value).
        retry_after_s: u64,
        /// Human-readable error message.
        message: String,
    },
    /// A recorded error answer (a cassette's `errors:` entry, the copilot-sdk snapshot format):
    /// over HTTP the status `status` with the JSON body `{"error": {"message", "type", "code"}}`
    /// where `type` and `code` are both `code`, and `retry-after: <retry_after_s>` when given,
    /// without `x-should-retry: false`, so the runtime applies its own retry policy (as the
    /// copilot-sdk's replay proxy answers). Over WebSocket it is one error event for `status`
    /// (see [`Reply::Error`] for the statuses WebSocket can express) with `retry-after` in its
    /// `headers` when given.
    RecordedError {
        /// HTTP status code, 400 to 599 (e.g. 429).
        status: u16,
        /// The error code the body carries as `type` and `code`, e.g. `user_weekly_rate_limited`
        /// (`rate_limited` when the recording has none).
        code: String,
        /// Human-readable error message.
        message: String,
        /// Seconds of the `retry-after` header, when the recording has one.
        retry_after_s: Option<u64>,
    },
    /// A stream that is not Server-Sent Events of JSON: over HTTP a `200` `text/event-stream`
    /// whose `data:` frames are not JSON (`data: {not json` ...) followed by `data: [DONE]`, then
    /// the body ends; over WebSocket one text message that is not JSON, then the socket stays
    /// open. Use it for a model that sends garbage.
    MalformedSse,
    /// Starts streaming, then sends nothing but keep-alives until the server shuts down: over
    /// HTTP an SSE comment line (`: keep-alive`) every `interval`, over WebSocket a ping frame
    /// every `interval`. The connection is never idle, yet no event ever arrives; only the
    /// eval's own timeout ends it.
    KeepAliveStall {
        /// Time between two keep-alives.
        interval: std::time::Duration,
    },
    /// Over WebSocket: the first event (`response.created`), then a close frame with `code`
    /// (e.g. 1011, internal error) and `reason`. Over HTTP (no close codes there) it is the
    /// same as [`Reply::Disconnect`].
    WebSocketClose {
        /// The close code (RFC 6455 section 7.4, e.g. 1011).
        code: u16,
        /// The close reason text (at most 123 bytes are sent).
        reason: String,
    },
    /// Over WebSocket: one binary frame (bytes that are not UTF-8 JSON) instead of the text
    /// events, then nothing until the server shuts down. Over HTTP: a `200` with content type
    /// `application/octet-stream` and the same bytes as the body.
    BinaryFrame,
}

/// The bytes [`Reply::BinaryFrame`] sends: not UTF-8, not JSON.
pub const BINARY_FRAME_BYTES: &[u8] = &[0xff, 0xfe, 0x00, 0x01, 0x80, 0x81, b'{', 0xc3];

impl From<ScriptedTurn> for Reply {
    fn from(turn: ScriptedTurn) -> Self {
        Reply::Message(turn)
    }
}

/// Token counts reported for one scripted turn.
///
/// The numbers are in tokens and are what the runtime reports back in its `assistant.usage` event
/// as `inputTokens`, `outputTokens`, `cacheReadTokens` and `cacheWriteTokens`. The server writes
/// them into the usage fields of each wire format as described in the
/// [module documentation](super#usage-numbers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ScriptedUsage {
    /// Prompt tokens of the turn, cached ones included (`assistant.usage.inputTokens`).
    pub input_tokens: u64,
    /// Generated tokens of the turn (`assistant.usage.outputTokens`).
    pub output_tokens: u64,
    /// Prompt tokens read from the prompt cache (`assistant.usage.cacheReadTokens`); part of
    /// `input_tokens`.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the prompt cache (`assistant.usage.cacheWriteTokens`).
    pub cache_write_tokens: u64,
}

/// Usage a [`ScriptedTurn`] reports when none was set: 100 input tokens, 20 output tokens, no
/// cache activity. Non-zero so that the runtime's context accounting sees a plausible turn.
pub const DEFAULT_USAGE: ScriptedUsage = ScriptedUsage {
    input_tokens: 100,
    output_tokens: 20,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
};

/// One scripted assistant turn: optional text, zero or more tool calls, and its usage.
///
/// The text is sent before the tool calls in the same response. A turn with tool calls ends with
/// finish reason `tool_calls` (Chat Completions) or with `function_call` output items (Responses);
/// a turn without ends with `stop` / a completed message. Tool call ids are issued by the server
/// (`call_1`, `call_2`, ... unique per server), not by the script.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedTurn {
    text: Option<String>,
    tool_calls: Vec<ScriptedToolCall>,
    usage: ScriptedUsage,
}

/// One tool call of a [`ScriptedTurn`]: the tool's name and its arguments as a JSON value (sent
/// to the runtime serialised as a JSON string, the way models send them).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedToolCall {
    /// Tool name exactly as the runtime advertised it in the request's tool list.
    pub name: String,
    /// Arguments object, for example `{"path": "/abs/file.txt", "file_text": "hi"}`.
    pub arguments: Value,
}

impl ScriptedTurn {
    /// A turn that answers with `text` only and then stops.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            tool_calls: Vec::new(),
            usage: DEFAULT_USAGE,
        }
    }

    /// A turn that calls the tool `name` with `arguments` (a JSON object) and no text.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            text: None,
            tool_calls: Vec::new(),
            usage: DEFAULT_USAGE,
        }
        .with_tool_call(name, arguments)
    }

    /// Adds one more tool call to this turn (the runtime receives all calls of a turn at once
    /// and may run them in parallel).
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ScriptedToolCall {
            name: name.into(),
            arguments,
        });
        self
    }

    /// Sets the assistant text of this turn (sent before any tool calls), replacing earlier text.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Sets the token usage this turn reports (default [`DEFAULT_USAGE`]).
    pub fn with_usage(mut self, usage: ScriptedUsage) -> Self {
        self.usage = usage;
        self
    }

    /// The assistant text, if any.
    pub fn text_content(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The tool calls, in the order they are sent.
    pub fn tool_calls(&self) -> &[ScriptedToolCall] {
        &self.tool_calls
    }

    /// The usage this turn reports.
    pub fn usage(&self) -> ScriptedUsage {
        self.usage
    }
}

/// A [`Responder`] that answers model requests with a fixed list of replies, in order.
///
/// Every model request consumes the next reply, whatever the request says (retries of the
/// runtime after an error reply consume replies too). Once the list is used up, every further
/// request gets a `500` error whose message reads `script exhausted after N turns`, and
/// [`Script::overruns`] counts them; the request log of the server records them as well.
///
/// Replies left unused when a test ends are reported: the harness adds a warning to the test's
/// last run record (`warnings`), and a [`strict`](Script::strict) script fails the test.
#[derive(Debug, Default)]
pub struct Script {
    state: Mutex<ScriptState>,
}

#[derive(Debug, Default)]
struct ScriptState {
    pending: VecDeque<Reply>,
    total: usize,
    overruns: usize,
    strict: bool,
}

impl Script {
    /// A script answering with `replies` in order.
    ///
    /// ```
    /// use copilot_eval_core::model_server::{Script, ScriptedTurn};
    /// use serde_json::json;
    ///
    /// // Turn 1: the model calls the runtime's `create` tool; turn 2: its final answer.
    /// let script = Script::new([])
    ///     .turn(ScriptedTurn::tool_call(
    ///         "create",
    ///         json!({"path": "hello.txt", "file_text": "hello\n"}),
    ///     ))
    ///     .turn(ScriptedTurn::text("Created hello.txt."));
    /// assert_eq!(script.len(), 2);
    /// // A model request past the last turn is answered 500 ("script exhausted").
    /// assert_eq!(script.overruns(), 0);
    /// ```
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        let pending: VecDeque<Reply> = replies.into_iter().collect();
        Self {
            state: Mutex::new(ScriptState {
                total: pending.len(),
                pending,
                overruns: 0,
                strict: false,
            }),
        }
    }

    /// Makes replies left unused a failure: a test whose script still holds replies when the
    /// test body returns fails (through [`EvalContext`](crate::harness::EvalContext)), instead of
    /// passing with a warning.
    pub fn strict(self) -> Self {
        self.lock().strict = true;
        self
    }

    /// Whether [`strict`](Self::strict) was set.
    pub fn is_strict(&self) -> bool {
        self.lock().strict
    }

    /// Appends a reply.
    pub fn reply(self, reply: Reply) -> Self {
        {
            let mut state = self.lock();
            state.pending.push_back(reply);
            state.total += 1;
        }
        self
    }

    /// Appends a successful assistant turn.
    pub fn turn(self, turn: ScriptedTurn) -> Self {
        self.reply(Reply::Message(turn))
    }

    /// Appends an error answer with HTTP status `status` and `message` that the runtime does not
    /// retry (see [`Reply::Error`]).
    pub fn error(self, status: u16, message: impl Into<String>) -> Self {
        self.reply(Reply::Error {
            status,
            message: message.into(),
        })
    }

    /// Appends an error answer the runtime may retry (see [`Reply::RetryableError`]).
    pub fn retryable_error(self, status: u16, message: impl Into<String>) -> Self {
        self.reply(Reply::RetryableError {
            status,
            message: message.into(),
        })
    }

    /// Appends a reply that starts streaming and then stalls (see [`Reply::Stall`]).
    pub fn stall(self) -> Self {
        self.reply(Reply::Stall)
    }

    /// Appends a reply that drops the connection mid-response (see [`Reply::Disconnect`]).
    pub fn disconnect(self) -> Self {
        self.reply(Reply::Disconnect)
    }

    /// Appends a reply that never answers (see [`Reply::Hang`]).
    pub fn hang(self) -> Self {
        self.reply(Reply::Hang)
    }

    /// Appends a `429` with `retry-after: retry_after_s` (see [`Reply::RateLimited`]).
    pub fn rate_limited(self, retry_after_s: u64, message: impl Into<String>) -> Self {
        self.reply(Reply::RateLimited {
            retry_after_s,
            message: message.into(),
        })
    }

    /// Appends a stream whose frames are not JSON (see [`Reply::MalformedSse`]).
    pub fn malformed_sse(self) -> Self {
        self.reply(Reply::MalformedSse)
    }

    /// Appends a stream kept alive by keep-alives every `interval` and nothing else (see
    /// [`Reply::KeepAliveStall`]).
    pub fn keep_alive_stall(self, interval: std::time::Duration) -> Self {
        self.reply(Reply::KeepAliveStall { interval })
    }

    /// Appends a WebSocket close with `code` and `reason` (see [`Reply::WebSocketClose`]).
    pub fn websocket_close(self, code: u16, reason: impl Into<String>) -> Self {
        self.reply(Reply::WebSocketClose {
            code,
            reason: reason.into(),
        })
    }

    /// Appends a binary frame instead of the events (see [`Reply::BinaryFrame`]).
    pub fn binary_frame(self) -> Self {
        self.reply(Reply::BinaryFrame)
    }

    /// How many replies have not been used yet.
    pub fn remaining(&self) -> usize {
        self.lock().pending.len()
    }

    /// How many replies the script was given in total.
    pub fn len(&self) -> usize {
        self.lock().total
    }

    /// Whether the script was given no replies at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many model requests arrived after the script was used up (each was answered `500`).
    pub fn overruns(&self) -> usize {
        self.lock().overruns
    }

    /// Takes the next reply, or the exhaustion error when none is left.
    pub fn next_reply(&self) -> Reply {
        let mut state = self.lock();
        match state.pending.pop_front() {
            Some(reply) => reply,
            None => {
                state.overruns += 1;
                Reply::Error {
                    status: 500,
                    message: format!(
                        "copilot-eval model server: script exhausted after {} turns (an unexpected extra model request)",
                        state.total
                    ),
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScriptState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Responder for Script {
    async fn respond(&self, _request: &ModelRequest) -> Reply {
        self.next_reply()
    }
}

/// The `apply_patch` input that creates the file `path` with `contents`.
///
/// `apply_patch` is the runtime's built-in freeform file tool (see the
/// [module documentation](super#the-built-in-file-tools)); `path` should be absolute (the runtime
/// resolves it as given). Each line of `contents` becomes one `+` line; the runtime writes every
/// line followed by a newline, so the file ends with a newline whether or not `contents` does.
/// Use it as `ScriptedTurn::tool_call("apply_patch", json!(add_file_patch(path, contents)))`.
pub fn add_file_patch(path: &str, contents: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in contents.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}
