//! The loopback wire between a pooled runtime's router (in the runner) and the endpoint of the
//! test process that owns the session (`run::pooled`): how a model request and its request
//! context travel, so that the test process's request proxy sees what the SDK's handler would
//! have given it.
//!
//! - HTTP: `POST /__copilot_eval/http` on the endpoint, the runtime's headers and body as they
//!   are, plus the `x-copilot-eval-*` headers below for the method, URL and context. A proxy
//!   error comes back as status 502 with [`ERROR`] set; any other answer is the model's.
//! - WebSocket: `GET /__copilot_eval/ws`, then JSON [`Frame`]s in text messages both ways.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::run::ProxyContext;

/// The endpoint's HTTP path.
pub const HTTP_PATH: &str = "/__copilot_eval/http";
/// The endpoint's WebSocket path.
pub const WS_PATH: &str = "/__copilot_eval/ws";
/// The runtime's method of the request.
pub const METHOD: &str = "x-copilot-eval-method";
/// The runtime's absolute URL of the request.
pub const URL: &str = "x-copilot-eval-url";
/// Context fields ([`ProxyContext`]), one header each; absent when `None`.
pub const REQUEST_ID: &str = "x-copilot-eval-request-id";
/// See [`REQUEST_ID`].
pub const SESSION_ID: &str = "x-copilot-eval-session-id";
/// See [`REQUEST_ID`].
pub const AGENT_ID: &str = "x-copilot-eval-agent-id";
/// See [`REQUEST_ID`].
pub const PARENT_AGENT_ID: &str = "x-copilot-eval-parent-agent-id";
/// See [`REQUEST_ID`].
pub const INTERACTION_TYPE: &str = "x-copilot-eval-interaction-type";
/// Set on a 502 answer: the proxy's error message (the runtime gets it as the handler's error).
pub const ERROR: &str = "x-copilot-eval-error";

/// The prefix of a session id that names its endpoint: `ce-<port>-<uuid>`.
const SESSION_PREFIX: &str = "ce-";

/// A session id that names the endpoint listening on `port` (127.0.0.1).
pub fn session_id(port: u16) -> String {
    format!("{SESSION_PREFIX}{port}-{}", uuid::Uuid::new_v4())
}

/// The endpoint port a session id names ([`session_id`]); `None` for any other id.
pub fn endpoint_of(session_id: &str) -> Option<u16> {
    session_id
        .strip_prefix(SESSION_PREFIX)?
        .split_once('-')?
        .0
        .parse()
        .ok()
}

/// Whether a header is one of the wire's own.
pub fn is_wire_header(name: &str) -> bool {
    name.starts_with("x-copilot-eval-")
}

/// A header value the wire can carry: non-visible characters replaced.
pub fn header_value(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap_or_else(|_| {
        let clean: String = text
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        HeaderValue::from_str(&clean).unwrap_or_else(|_| HeaderValue::from_static("?"))
    })
}

/// Add the context's fields (not its URL and headers) to `headers`.
pub fn put_context(headers: &mut HeaderMap, ctx: &ProxyContext) {
    let mut put = |name: &'static str, value: &Option<String>| {
        if let Some(value) = value {
            headers.insert(HeaderName::from_static(name), header_value(value));
        }
    };
    put(REQUEST_ID, &Some(ctx.request_id.clone()));
    put(SESSION_ID, &ctx.session_id);
    put(AGENT_ID, &ctx.agent_id);
    put(PARENT_AGENT_ID, &ctx.parent_agent_id);
    put(INTERACTION_TYPE, &ctx.interaction_type);
}

/// The context fields [`put_context`] wrote, with `url` and the request's other headers.
pub fn take_context(headers: &HeaderMap, url: String) -> ProxyContext {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut rest = HeaderMap::new();
    for (name, value) in headers {
        if !is_wire_header(name.as_str()) {
            rest.append(name.clone(), value.clone());
        }
    }
    ProxyContext {
        request_id: get(REQUEST_ID).unwrap_or_default(),
        session_id: get(SESSION_ID),
        agent_id: get(AGENT_ID),
        parent_agent_id: get(PARENT_AGENT_ID),
        interaction_type: get(INTERACTION_TYPE),
        url,
        headers: rest,
    }
}

/// A request context as a WebSocket frame carries it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireContext {
    /// [`ProxyContext::request_id`].
    pub request_id: String,
    /// [`ProxyContext::session_id`].
    pub session_id: Option<String>,
    /// [`ProxyContext::agent_id`].
    pub agent_id: Option<String>,
    /// [`ProxyContext::parent_agent_id`].
    pub parent_agent_id: Option<String>,
    /// [`ProxyContext::interaction_type`].
    pub interaction_type: Option<String>,
    /// [`ProxyContext::url`].
    pub url: String,
    /// [`ProxyContext::headers`], in order, values as text (non-text values dropped).
    pub headers: Vec<(String, String)>,
}

impl From<&ProxyContext> for WireContext {
    fn from(ctx: &ProxyContext) -> Self {
        Self {
            request_id: ctx.request_id.clone(),
            session_id: ctx.session_id.clone(),
            agent_id: ctx.agent_id.clone(),
            parent_agent_id: ctx.parent_agent_id.clone(),
            interaction_type: ctx.interaction_type.clone(),
            url: ctx.url.clone(),
            headers: ctx
                .headers
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
        }
    }
}

impl From<WireContext> for ProxyContext {
    fn from(ctx: WireContext) -> Self {
        let mut headers = HeaderMap::new();
        for (name, value) in ctx.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&value),
            ) {
                headers.append(name, value);
            }
        }
        Self {
            request_id: ctx.request_id,
            session_id: ctx.session_id,
            agent_id: ctx.agent_id,
            parent_agent_id: ctx.parent_agent_id,
            interaction_type: ctx.interaction_type,
            url: ctx.url,
            headers,
        }
    }
}

/// One WebSocket message payload: text as is, binary in base64.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payload {
    /// Whether it is a binary frame.
    pub binary: bool,
    /// The text, or the binary data in standard base64.
    pub data: String,
}

impl Payload {
    /// The wire form of a message's bytes.
    pub fn new(data: &[u8], binary: bool) -> Self {
        let data = if binary {
            base64::engine::general_purpose::STANDARD.encode(data)
        } else {
            String::from_utf8_lossy(data).into_owned()
        };
        Self { binary, data }
    }

    /// The message's bytes (undecodable base64 gives no bytes).
    pub fn bytes(&self) -> Vec<u8> {
        if self.binary {
            base64::engine::general_purpose::STANDARD
                .decode(&self.data)
                .unwrap_or_default()
        } else {
            self.data.clone().into_bytes()
        }
    }
}

/// A WebSocket frame between router and endpoint (JSON in a text message).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Frame {
    /// Router to endpoint, first: open the proxied socket with this context.
    Open {
        /// The runtime's context of the socket.
        ctx: WireContext,
    },
    /// Endpoint to router: the answer to `Open` (`error: None` when opened).
    Opened {
        /// The proxy's error.
        error: Option<String>,
    },
    /// A runtime message (router to endpoint, with its context when the runtime gave one) or
    /// an upstream message (endpoint to router).
    Message {
        /// The message's own context.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ctx: Option<WireContext>,
        /// The message.
        payload: Payload,
    },
    /// Endpoint to router: the answer to each runtime `Message`, in order.
    Ack {
        /// The proxy's error.
        error: Option<String>,
    },
    /// Either way: the sender's side closed.
    Close,
}

impl Frame {
    /// The frame as JSON text.
    pub fn text(&self) -> String {
        serde_json::to_string(self).expect("a frame serializes")
    }

    /// Parse a frame.
    ///
    /// # Errors
    /// Text that is not a frame.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_names_its_endpoint() {
        let id = session_id(43123);
        assert_eq!(endpoint_of(&id), Some(43123));
        assert_eq!(endpoint_of("3f2a-0000"), None);
        assert_eq!(endpoint_of("ce-notaport-x"), None);
    }

    #[test]
    fn context_survives_the_wire() {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("Bearer x"));
        let ctx = ProxyContext {
            request_id: "r1".into(),
            session_id: Some("ce-1-a".into()),
            agent_id: Some("agent".into()),
            parent_agent_id: None,
            interaction_type: Some("conversation-subagent".into()),
            url: "ws://127.0.0.1:1/responses".into(),
            headers,
        };
        let back = ProxyContext::from(
            serde_json::from_str::<WireContext>(
                &serde_json::to_string(&WireContext::from(&ctx)).unwrap(),
            )
            .unwrap(),
        );
        assert_eq!(format!("{back:?}"), format!("{ctx:?}"));

        let mut wire = HeaderMap::new();
        put_context(&mut wire, &ctx);
        wire.insert("authorization", HeaderValue::from_static("Bearer x"));
        let back = take_context(&wire, ctx.url.clone());
        assert_eq!(format!("{back:?}"), format!("{ctx:?}"));
    }

    #[test]
    fn binary_payloads_round_trip() {
        let payload = Payload::new(&[0, 159, 255], true);
        assert_eq!(payload.bytes(), vec![0, 159, 255]);
        assert_eq!(Payload::new(b"hi", false).data, "hi");
    }
}
