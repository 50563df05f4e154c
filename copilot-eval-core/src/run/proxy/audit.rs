//! The request audit: what actually went on the wire for every model request.
//!
//! [`inspect_http`] and [`inspect_websocket`] check one outgoing model request, optionally rewrite
//! the `detail` of every OpenAI image part ([`ImageDetail`]), and return the request's JSON (read
//! once, rewritten in place: the proxy forwards it and hands it to the cassette's tap) together
//! with a [`RequestAudit`] record. The request's API and transport are [`crate::wire`]'s, the
//! one classification the proxy, the tap and the model server share. They are pure: the
//! request proxy ([`super`]) calls them before forwarding and fails the run on an
//! error.
//!
//! What a record holds, and how its instructions hash is computed: [`crate::evidence::audit`]
//! (the record sits below the result, which stores it; the inspection is the proxy's).
//!
//! Supported: HTTP `POST …/chat/completions` and `POST …/responses` with identity-encoded JSON
//! bodies, and WebSocket `response.create` text messages (continuations included). A
//! `GET …/models` (the model catalog) is the only request that passes unaudited. Everything else
//! is an [`AuditError`], which ends the run with `stop_reason = request_audit_error`.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::eval::ImageDetail;
pub use crate::evidence::audit::RequestAudit;
use crate::evidence::offered::names_of;
use crate::wire::{Api, Route, Transport};

/// Why a request cannot be audited. The message never contains request content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuditError(pub String);

/// Where a JSON body stopped parsing, without quoting its content: `line L, column C` (1-based;
/// the column counts bytes).
fn json_position(error: &serde_json::Error) -> String {
    format!("line {}, column {}", error.line(), error.column())
}

fn fail<T>(message: impl Into<String>) -> Result<T, AuditError> {
    Err(AuditError(message.into()))
}

/// Who sent a request and how: filled in from the SDK's request context.
#[derive(Debug, Clone, Default)]
pub struct RequestOrigin {
    /// The runtime's request id.
    pub request_id: String,
    /// The subagent's id, when a subagent sent it.
    pub agent_id: Option<String>,
    /// The parent agent of a subagent request.
    pub parent_agent_id: Option<String>,
    /// The runtime's interaction type.
    pub interaction_type: Option<String>,
}

/// What to do with one HTTP request.
#[derive(Debug)]
pub enum HttpVerdict {
    /// The model catalog: forward as is, unaudited.
    Catalog,
    /// A model request: forward this JSON (the body read once, maybe rewritten) and keep the
    /// record.
    Model {
        /// The request's JSON to forward (serialise it as the new body).
        payload: Value,
        /// The record.
        audit: Box<RequestAudit>,
    },
}

/// Inspect one HTTP request of the runtime, which the caller has classified once as `route`
/// ([`Route::of`] its `method` and `path`).
///
/// `path` is the URL's path (for messages); `content_encoding` the `content-encoding` header,
/// if any. Errors: a non-catalog GET, a compressed body, a request that is neither a Chat
/// Completions nor a Responses `POST`, or any payload error of [`inspect_payload`].
pub fn inspect_http(
    route: Route,
    method: &str,
    path: &str,
    content_encoding: Option<&str>,
    body: &[u8],
    image_detail: Option<ImageDetail>,
    origin: &RequestOrigin,
) -> Result<HttpVerdict, AuditError> {
    let path = path.trim_end_matches('/');
    let api = match route {
        Route::Catalog => return Ok(HttpVerdict::Catalog),
        Route::Other if method.eq_ignore_ascii_case("GET") => {
            return fail("unsupported request: only the model-catalog GET may pass unaudited");
        }
        Route::Other => {
            return fail(format!(
                "unsupported provider schema: {method} {path} is neither an OpenAI Chat Completions nor a Responses request"
            ));
        }
        Route::Model(api) => api,
    };
    if let Some(encoding) = content_encoding
        && !encoding.eq_ignore_ascii_case("identity")
    {
        return fail(format!("unsupported request: compressed body ({encoding})"));
    }
    let mut payload: Value = serde_json::from_slice(body).map_err(|e| {
        AuditError(format!(
            "malformed model request: the body is not JSON ({})",
            json_position(&e)
        ))
    })?;
    let audit = inspect_payload(&mut payload, api, Transport::Http, image_detail, origin)?;
    Ok(HttpVerdict::Model {
        payload,
        audit: Box::new(audit),
    })
}

/// Inspect one outgoing WebSocket message: it must be a text frame holding a JSON
/// `{"type": "response.create", ...}` Responses request (`input`, no `messages`); a continuation
/// (`previous_response_id`) must carry `model`, `instructions` and `tools` explicitly.
///
/// Returns the message's JSON to forward (read once, maybe rewritten; serialise it as the text
/// to send) and the record.
pub fn inspect_websocket(
    data: &[u8],
    binary: bool,
    image_detail: Option<ImageDetail>,
    origin: &RequestOrigin,
) -> Result<(Value, RequestAudit), AuditError> {
    if binary {
        return fail("unsupported WebSocket frame: binary (expected a JSON text message)");
    }
    let mut payload: Value = serde_json::from_slice(data).map_err(|e| {
        AuditError(format!(
            "malformed WebSocket message: not JSON text ({})",
            json_position(&e)
        ))
    })?;
    let Some(object) = payload.as_object() else {
        return fail("malformed WebSocket message: not a JSON object");
    };
    match object.get("type").and_then(Value::as_str) {
        Some("response.create") => {}
        Some(other) => {
            return fail(format!(
                "unsupported WebSocket message type {other:?} (expected response.create)"
            ));
        }
        None => return fail("unsupported WebSocket message: no type"),
    }
    if object.contains_key("messages") || !object.contains_key("input") {
        return fail("unsupported WebSocket request: expected a Responses request with input");
    }
    // The interaction type the message declares (its `headers` member) wins over the context's.
    let declared = crate::wire::declared_interaction_type(&payload);
    let origin = RequestOrigin {
        interaction_type: declared.or_else(|| origin.interaction_type.clone()),
        ..origin.clone()
    };
    let audit = inspect_payload(
        &mut payload,
        Api::Responses,
        Transport::WebSocket,
        image_detail,
        &origin,
    )?;
    Ok((payload, audit))
}

/// Check one request payload, rewrite image details, and build the record.
///
/// Errors: no `model`; a continuation without explicit `model`, `instructions` and `tools`;
/// `messages`/`input` missing or of the wrong shape; an image part that is not OpenAI's
/// (`type: "image"`, or `image_url`/`input_image` without a URL or file); an image detail that is
/// not `auto`, `low` or `high`.
pub fn inspect_payload(
    payload: &mut Value,
    api: Api,
    transport: Transport,
    image_detail: Option<ImageDetail>,
    origin: &RequestOrigin,
) -> Result<RequestAudit, AuditError> {
    let Some(object) = payload.as_object_mut() else {
        return fail("malformed model request: not a JSON object");
    };
    let continuation = object
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null());
    if continuation {
        for key in ["model", "instructions", "tools"] {
            if !object.contains_key(key) {
                return fail(format!(
                    "unsupported continuation: previous_response_id without an explicit {key}; request settings must be explicit, they are never reconstructed"
                ));
            }
        }
    }
    let model = match object.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => return fail("malformed model request: no model"),
    };
    let tools = names_of(object.get("tools"));
    let reasoning_effort = match api {
        Api::ChatCompletions => object.get("reasoning_effort"),
        Api::Responses => object.get("reasoning").and_then(|r| r.get("effort")),
    }
    .and_then(Value::as_str)
    .map(str::to_owned);

    let mut instructions: Vec<String> = Vec::new();
    let messages_key = match api {
        Api::ChatCompletions => "messages",
        Api::Responses => "input",
    };
    if api == Api::Responses
        && let Some(text) = object.get("instructions").and_then(Value::as_str)
    {
        instructions.push(text.to_owned());
    }
    let mut images = Vec::new();
    match object.get_mut(messages_key) {
        Some(Value::Array(items)) => {
            for item in items.iter_mut() {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                if role == "system" || role == "developer" {
                    instructions.push(message_text(item.get("content")));
                }
                visit_images(item, image_detail, &mut images)?;
            }
        }
        Some(Value::String(_)) if api == Api::Responses => {}
        Some(_) | None => {
            return fail(format!(
                "malformed model request: `{messages_key}` is missing or not a list"
            ));
        }
    }
    let instructions_sha256 = (!instructions.is_empty()).then(|| {
        let mut hasher = Sha256::new();
        hasher.update(instructions.join("\n\n").as_bytes());
        format!("{:x}", hasher.finalize())
    });
    Ok(RequestAudit {
        request_id: origin.request_id.clone(),
        transport,
        api,
        model,
        tools,
        reasoning_effort,
        image_count: images.len(),
        image_details: images,
        instructions_sha256,
        continuation,
        subagent: origin.parent_agent_id.is_some()
            || origin.interaction_type.as_deref() == Some("conversation-subagent"),
        agent_id: origin.agent_id.clone(),
        parent_agent_id: origin.parent_agent_id.clone(),
        interaction_type: origin.interaction_type.clone(),
    })
}

fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .concat(),
        _ => String::new(),
    }
}

/// Find every image part under `value`, rewrite its detail, and note the detail as sent.
fn visit_images(
    value: &mut Value,
    rewrite: Option<ImageDetail>,
    found: &mut Vec<Option<String>>,
) -> Result<(), AuditError> {
    match value {
        Value::Array(items) => {
            for item in items {
                visit_images(item, rewrite, found)?;
            }
        }
        Value::Object(map) => {
            match map.get("type").and_then(Value::as_str) {
                Some("image_url") => {
                    let Some(Value::Object(image)) = map.get_mut("image_url") else {
                        return fail(
                            "unsupported image shape: image_url part without an image_url object",
                        );
                    };
                    if !image.get("url").is_some_and(Value::is_string) {
                        return fail("unsupported image shape: image_url part without a url");
                    }
                    found.push(set_detail(image, rewrite)?);
                    return Ok(());
                }
                Some("input_image") => {
                    if !(map.get("image_url").is_some_and(Value::is_string)
                        || map.get("file_id").is_some_and(Value::is_string))
                    {
                        return fail(
                            "unsupported image shape: input_image part without image_url or file_id",
                        );
                    }
                    found.push(set_detail(map, rewrite)?);
                    return Ok(());
                }
                Some("image") => {
                    return fail(
                        "unsupported image schema: expected OpenAI image content (image_url or input_image)",
                    );
                }
                _ => {}
            }
            for (_, child) in map.iter_mut() {
                visit_images(child, rewrite, found)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn set_detail(
    holder: &mut serde_json::Map<String, Value>,
    rewrite: Option<ImageDetail>,
) -> Result<Option<String>, AuditError> {
    if let Some(detail) = rewrite {
        holder.insert("detail".into(), Value::String(detail.as_str().into()));
    }
    match holder.get("detail") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(d)) if matches!(d.as_str(), "auto" | "low" | "high") => {
            Ok(Some(d.clone()))
        }
        Some(_) => fail("unsupported image detail: expected auto, low or high"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> RequestOrigin {
        RequestOrigin {
            request_id: "r1".into(),
            ..Default::default()
        }
    }

    /// [`super::inspect_http`] of a request classified as the proxy does.
    fn inspect_http(
        method: &str,
        path: &str,
        encoding: Option<&str>,
        body: &[u8],
        detail: Option<ImageDetail>,
        origin: &RequestOrigin,
    ) -> Result<HttpVerdict, AuditError> {
        let route = Route::of(method, path);
        super::inspect_http(route, method, path, encoding, body, detail, origin)
    }

    fn http(
        path: &str,
        body: &Value,
        detail: Option<ImageDetail>,
    ) -> Result<(Value, RequestAudit), AuditError> {
        match inspect_http(
            "POST",
            path,
            None,
            body.to_string().as_bytes(),
            detail,
            &origin(),
        )? {
            HttpVerdict::Model { payload, audit } => Ok((payload, *audit)),
            HttpVerdict::Catalog => panic!("not a catalog request"),
        }
    }

    #[test]
    fn chat_completions_record_and_image_rewrite() {
        let body = json!({
            "model": "m1",
            "reasoning_effort": "high",
            "messages": [
                {"role": "system", "content": "SYS"},
                {"role": "developer", "content": [{"type": "text", "text": "DE"}, {"type": "text", "text": "V"}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB", "detail": "low"}}
                ]}
            ],
            "tools": [{"type": "function", "function": {"name": "view"}}, {"type": "custom", "custom": {"name": "apply_patch"}}]
        });
        let (sent, audit) = http("/chat/completions", &body, Some(ImageDetail::High)).unwrap();
        assert_eq!(audit.api, Api::ChatCompletions);
        assert_eq!(audit.model, "m1");
        assert_eq!(audit.tools, ["view", "apply_patch"]);
        assert_eq!(audit.reasoning_effort.as_deref(), Some("high"));
        assert_eq!(audit.image_count, 2);
        assert_eq!(
            audit.image_details,
            [Some("high".to_owned()), Some("high".to_owned())]
        );
        let expected = format!("{:x}", Sha256::digest("SYS\n\nDEV".as_bytes()));
        assert_eq!(
            audit.instructions_sha256.as_deref(),
            Some(expected.as_str())
        );
        assert_eq!(
            sent["messages"][2]["content"][1]["image_url"]["detail"],
            "high"
        );
        // No text of the request is in the record.
        let record = serde_json::to_string(&audit).unwrap();
        assert!(!record.contains("SYS") && !record.contains("look") && !record.contains("AAAA"));
    }

    #[test]
    fn responses_record_continuation_rules() {
        let body = json!({
            "model": "m2", "instructions": "INS", "reasoning": {"effort": "low"},
            "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:x", "detail": "auto"}]}],
            "tools": [{"type": "function", "name": "lookup"}]
        });
        let (_, audit) = http("/v1/responses", &body, None).unwrap();
        assert_eq!(audit.image_details, [Some("auto".to_owned())]);
        assert_eq!(audit.reasoning_effort.as_deref(), Some("low"));
        assert_eq!(audit.tools, ["lookup"]);

        let (text, audit) = inspect_websocket(
            json!({"type": "response.create", "previous_response_id": "r0", "model": "m2", "instructions": "INS", "tools": [], "input": []}).to_string().as_bytes(),
            false, None, &origin(),
        ).unwrap();
        assert!(audit.continuation);
        assert_eq!(text["type"], "response.create");
        let err = inspect_websocket(
            json!({"type": "response.create", "previous_response_id": "r0", "model": "m2", "input": []}).to_string().as_bytes(),
            false, None, &origin(),
        ).unwrap_err();
        assert!(err.0.contains("instructions"), "{err}");
    }

    #[test]
    fn every_unsupported_shape_is_an_error() {
        let o = origin();
        assert!(
            inspect_websocket(b"{}", true, None, &o)
                .unwrap_err()
                .0
                .contains("binary")
        );
        assert!(
            inspect_websocket(b"not json", false, None, &o)
                .unwrap_err()
                .0
                .contains("not JSON")
        );
        assert!(
            inspect_websocket(br#"{"type":"session.update"}"#, false, None, &o)
                .unwrap_err()
                .0
                .contains("session.update")
        );
        assert!(
            inspect_websocket(
                br#"{"type":"response.create","messages":[]}"#,
                false,
                None,
                &o
            )
            .unwrap_err()
            .0
            .contains("Responses")
        );
        assert!(
            inspect_http("POST", "/v1/messages", None, b"{}", None, &o)
                .unwrap_err()
                .0
                .contains("provider schema")
        );
        assert!(
            inspect_http("POST", "/chat/completions", Some("gzip"), b"{}", None, &o)
                .unwrap_err()
                .0
                .contains("compressed")
        );
        assert!(
            inspect_http("POST", "/chat/completions", None, b"{nope", None, &o)
                .unwrap_err()
                .0
                .contains("not JSON")
        );
        assert!(
            inspect_http(
                "POST",
                "/chat/completions",
                None,
                br#"{"messages":[]}"#,
                None,
                &o
            )
            .unwrap_err()
            .0
            .contains("no model")
        );
        assert!(
            inspect_http("GET", "/copilot_internal/user", None, b"", None, &o)
                .unwrap_err()
                .0
                .contains("catalog")
        );
        assert!(matches!(
            inspect_http("GET", "/models/", None, b"", None, &o).unwrap(),
            HttpVerdict::Catalog
        ));
        let anthropic = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]});
        assert!(
            http("/chat/completions", &anthropic, None)
                .unwrap_err()
                .0
                .contains("image schema")
        );
        let no_url = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]});
        assert!(
            http("/chat/completions", &no_url, None)
                .unwrap_err()
                .0
                .contains("without a url")
        );
        let bad_detail = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "ultra"}}]}]});
        assert!(
            http("/chat/completions", &bad_detail, None)
                .unwrap_err()
                .0
                .contains("detail")
        );
    }

    /// Every row of the failure table in docs/audit.md: the audit's own rows are produced here
    /// and must start with the documented text; the transport rows are produced end to end by
    /// the named tests. A row added to the docs without a producer fails this test.
    #[test]
    fn every_documented_failure_row_is_produced() {
        let o = origin();
        let ws =
            |data: &[u8], binary: bool| inspect_websocket(data, binary, None, &o).unwrap_err().0;
        let post = |path: &str, encoding: Option<&str>, body: &[u8]| {
            inspect_http("POST", path, encoding, body, None, &o)
                .err()
                .map(|e| e.0)
                .unwrap_or_default()
        };
        let image = |part: Value| {
            http(
                "/chat/completions",
                &json!({"model": "m", "messages": [{"role": "user", "content": [part]}]}),
                None,
            )
            .unwrap_err()
            .0
        };
        let produced: Vec<String> = vec![
            ws(b"{}", true),
            ws(b"not json", false),
            ws(b"[1]", false),
            ws(br#"{"type":"session.update"}"#, false),
            ws(br#"{"other":1}"#, false),
            ws(br#"{"type":"response.create","messages":[]}"#, false),
            post("/v1/messages", None, b"{}"),
            post("/chat/completions", Some("gzip"), b"{}"),
            inspect_http("GET", "/copilot_internal/user", None, b"", None, &o)
                .err()
                .unwrap()
                .0,
            post("/chat/completions", None, b"{nope"),
            post("/chat/completions", None, br#"{"messages":[]}"#),
            post("/chat/completions", None, br#"{"model":"m"}"#),
            ws(
                json!({"type": "response.create", "previous_response_id": "r0", "model": "m", "input": []})
                    .to_string()
                    .as_bytes(),
                false,
            ),
            image(json!({"type": "image", "source": {}})),
            image(json!({"type": "image_url", "image_url": {}})),
            image(json!({"type": "image_url", "image_url": {"url": "u", "detail": "ultra"}})),
        ];
        // Produced elsewhere: end to end through the real runtime (tests/tests/audit.rs), by the
        // proxy; the last by the run's cleanup (run/cleanup.rs).
        let end_to_end = [
            (
                "no model request was observed",
                "an_audit_that_observed_no_model_request_fails_the_run",
            ),
            (
                "WebSocket transport open failed",
                "an_upstream_that_refuses_the_connection_fails_the_audit",
            ),
            (
                "WebSocket transport receive failed",
                "websocket_closed_mid_response_blocks_all_further_inference",
            ),
            (
                "WebSocket transport send failed",
                "a_websocket_send_that_fails_fails_the_audit",
            ),
        ];
        let docs = include_str!("../../../../docs/audit.md");
        let table = docs
            .split("| failure | error text starts with |")
            .nth(1)
            .expect("the failure table in docs/audit.md");
        let mut rows = 0;
        for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let cell = line.trim_end_matches('|').rsplit('|').next().unwrap();
            for prefix in cell.split('`').skip(1).step_by(2) {
                rows += 1;
                let by_unit = produced.iter().any(|e| e.starts_with(prefix));
                let by_e2e = end_to_end.iter().any(|(p, _)| *p == prefix);
                assert!(
                    by_unit || by_e2e,
                    "docs/audit.md row `{prefix}` has no test producing it; produced: {produced:#?}"
                );
            }
        }
        assert!(rows >= 15, "the failure table was not read: {rows} rows");
        // And every error produced here is a documented row.
        for error in &produced {
            assert!(
                table.lines().any(|l| l
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .any(|p| l.starts_with('|') && error.starts_with(p))),
                "`{error}` is not a row of docs/audit.md"
            );
        }
    }
}
