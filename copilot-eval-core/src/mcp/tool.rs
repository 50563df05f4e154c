//! One tool of a mock ([`MockTool`]): its name, description, input schema, handler and fault;
//! and what a handler answers ([`Reply`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

/// What a tool's handler answers: text, JSON (`structuredContent` beside its text) or an error
/// result (`isError: true`, text the model reads).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The text content.
    pub text: String,
    /// The structured content (`structuredContent`), if any.
    pub structured: Option<Value>,
    /// Whether the result is an error result (`isError: true`).
    pub is_error: bool,
}

impl Reply {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: false,
        }
    }

    /// A JSON result: `value` as `structuredContent`, and as its text.
    pub fn json(value: Value) -> Self {
        Self {
            text: value.to_string(),
            structured: Some(value),
            is_error: false,
        }
    }

    /// An error result (`isError: true`): the call reached the tool, which failed with `text`.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: true,
        }
    }
}

impl From<&str> for Reply {
    fn from(text: &str) -> Self {
        Reply::text(text)
    }
}

impl From<String> for Reply {
    fn from(text: String) -> Self {
        Reply::text(text)
    }
}

impl From<Value> for Reply {
    fn from(value: Value) -> Self {
        Reply::json(value)
    }
}

/// A tool's handler: its arguments (the JSON object the client sent; `{}` when none) to its
/// reply.
pub(super) type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, Reply> + Send + Sync>;

/// How a tool misbehaves, set by the one-liners of [`MockTool`]. Recorded on each call it
/// shapes ([`Fault::label`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fault {
    /// Answer after this long.
    Delay(Duration),
    /// Answer a JSON-RPC error (code -32603) with this message instead of a result.
    ProtocolError(String),
    /// Never answer.
    Hang,
    /// Answer this many bytes of text.
    Huge(usize),
}

impl Fault {
    /// The fault's name on a call record: `delay 2000ms`, `protocol_error`, `hang`,
    /// `huge_output 100000 bytes`.
    pub(super) fn label(&self) -> String {
        match self {
            Fault::Delay(d) => format!("delay {}ms", d.as_millis()),
            Fault::ProtocolError(_) => "protocol_error".to_owned(),
            Fault::Hang => "hang".to_owned(),
            Fault::Huge(bytes) => format!("huge_output {bytes} bytes"),
        }
    }
}

/// One tool of an [`McpMock`](super::McpMock): a name, a description, an input schema and an
/// async handler (a closure: state it captures lives as long as the mock).
#[derive(Clone)]
pub struct MockTool {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) schema: serde_json::Map<String, Value>,
    pub(super) handler: Handler,
    pub(super) fault: Option<Fault>,
}

impl std::fmt::Debug for MockTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("fault", &self.fault)
            .finish()
    }
}

impl MockTool {
    /// A tool `name` (as the server advertises it; the model sees `<server>-<name>`) with its
    /// `description` and input `schema` (a JSON Schema object, passed on as written: a
    /// malformed one is the "malformed schema" scenario; anything but an object becomes
    /// `{"type": "object"}`). Until [`handler`](Self::handler) or [`returns`](Self::returns)
    /// is set it answers the empty text.
    pub fn new(name: impl Into<String>, description: impl Into<String>, schema: Value) -> Self {
        let schema = match schema {
            Value::Object(map) => map,
            _ => serde_json::Map::from_iter([("type".to_owned(), Value::from("object"))]),
        };
        Self {
            name: name.into(),
            description: description.into(),
            schema,
            handler: Arc::new(|_| Box::pin(async { Reply::text("") })),
            fault: None,
        }
    }

    /// A tool whose input schema is derived from the Rust type `T` (`schemars`), and whose
    /// handler gets the arguments as a `T`. Arguments that do not deserialize into `T` get an
    /// error result naming why, and the handler is not called.
    pub fn typed<T, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: Into<Reply>,
    {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
        let handler = Arc::new(handler);
        Self::new(name, description, schema).handler(move |args| {
            let parsed = serde_json::from_value::<T>(args);
            let handler = handler.clone();
            async move {
                match parsed {
                    Ok(input) => handler(input).await.into(),
                    Err(e) => Reply::error(format!("invalid arguments: {e}")),
                }
            }
        })
    }

    /// The tool's handler: an async closure from the call's arguments to anything that is a
    /// [`Reply`] (`&str`, `String`, a JSON `Value`, or a `Reply`).
    pub fn handler<F, Fut, R>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: Into<Reply>,
    {
        self.handler = Arc::new(move |args| {
            let answer = handler(args);
            Box::pin(async move { answer.await.into() })
        });
        self
    }

    /// A handler that always answers `reply`.
    pub fn returns(self, reply: impl Into<Reply>) -> Self {
        let reply = reply.into();
        self.handler(move |_| {
            let reply = reply.clone();
            async move { reply }
        })
    }

    /// A fault: answer every call after `delay` (the handler's answer, late).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.fault = Some(Fault::Delay(delay));
        self
    }

    /// A fault: every call gets an error result (`isError: true`) with `text`, the handler not
    /// called: the tool ran and failed.
    pub fn error_result(self, text: impl Into<String>) -> Self {
        self.returns(Reply::error(text))
    }

    /// A fault: every call gets a JSON-RPC error (code -32603, `message`) instead of a result:
    /// the server failed the request.
    pub fn protocol_error(mut self, message: impl Into<String>) -> Self {
        self.fault = Some(Fault::ProtocolError(message.into()));
        self
    }

    /// A fault: no call is ever answered (the call waits for the runtime's timeout,
    /// [`McpMock::tool_timeout`](super::McpMock::tool_timeout)).
    pub fn hang(mut self) -> Self {
        self.fault = Some(Fault::Hang);
        self
    }

    /// A fault: every call answers `bytes` bytes of text (`x` repeated, a line break every 100).
    pub fn huge_output(mut self, bytes: usize) -> Self {
        self.fault = Some(Fault::Huge(bytes));
        self
    }
}

/// `bytes` bytes of text: lines of 99 `x` and a line break.
pub(super) fn huge_text(bytes: usize) -> String {
    let line = format!("{}\n", "x".repeat(99));
    let mut text = line.repeat(bytes / line.len() + 1);
    text.truncate(bytes);
    text
}
