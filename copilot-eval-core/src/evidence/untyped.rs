//! The event fields the pinned SDK (`github-copilot-sdk` 1.0.28) does not type, read from the
//! event's JSON as runtime 1.0.102 sends it. Every other field of an event is read through the
//! SDK's generated data type of its kind ([`RawEvent::typed_data`]); this module is the one
//! place core reads an event by its keys (`tests/one_place.rs` refuses a camelCase key
//! elsewhere). Each field, and why the SDK's type does not give it:
//!
//! | field | event | why it is read here |
//! |---|---|---|
//! | `toolTelemetry` | `tool.execution_complete` | the SDK types it as a `HashMap<String, Value>`: its content is untyped, and a `HashMap` loses the order the runtime wrote it in; the evidence keeps it as sent ([`tool_telemetry`]) |
//! | `toolTelemetry.properties.largeOutputWrittenToFile`, `largeOutputOriginalSizeBytes` | `tool.execution_complete` | inside the untyped telemetry; runtime 1.0.102 writes both as strings ([`cut_for_model`]) |
//! | `toolTelemetry.properties.wasNamelessToolCall` (or `toolTelemetry.wasNamelessToolCall`) | `tool.execution_complete` | inside the untyped telemetry ([`was_nameless`]) |
//! | `totalPremiumRequests` | `session.shutdown`, `session.usage_checkpoint` | the SDK declares the field `pub(crate)` in both data types: not readable outside the SDK ([`total_premium_requests`]) |

use serde_json::Value;

use super::{CutForModel, RawEvent};

/// `toolTelemetry` of a `tool.execution_complete`, as the runtime sent it (`None` when absent or
/// `null`).
pub(crate) fn tool_telemetry(event: &RawEvent) -> Option<Value> {
    event
        .data
        .get("toolTelemetry")
        .filter(|v| !v.is_null())
        .cloned()
}

/// What a completion's telemetry says about a result cut for the model: its
/// `properties.largeOutputWrittenToFile` is `"true"` (or `true`) with
/// `largeOutputOriginalSizeBytes` (a number or a numeric string); `model_text` is what the model
/// saw instead.
pub(crate) fn cut_for_model(telemetry: &Value, model_text: Option<&str>) -> Option<CutForModel> {
    let properties = telemetry.get("properties")?;
    let flag = properties.get("largeOutputWrittenToFile")?;
    if flag.as_str() != Some("true") && flag.as_bool() != Some(true) {
        return None;
    }
    let size = properties.get("largeOutputOriginalSizeBytes")?;
    let full_bytes = size
        .as_u64()
        .or_else(|| size.as_str().and_then(|s| s.trim().parse().ok()))?;
    Some(CutForModel {
        full_bytes,
        model_bytes: model_text.map_or(0, |t| t.len() as u64),
    })
}

/// Whether a completion's telemetry says the model sent the call without a name: its
/// `wasNamelessToolCall` (under `properties`, or at the top) is true, a string or a boolean.
pub(crate) fn was_nameless(telemetry: &Value) -> bool {
    let flag = telemetry
        .get("properties")
        .and_then(|p| p.get("wasNamelessToolCall"))
        .or_else(|| telemetry.get("wasNamelessToolCall"));
    matches!(flag, Some(Value::Bool(true))) || flag.and_then(Value::as_str) == Some("true")
}

/// `totalPremiumRequests` of a `session.shutdown` or `session.usage_checkpoint`.
pub(crate) fn total_premium_requests(event: &RawEvent) -> Option<f64> {
    event
        .data
        .get("totalPremiumRequests")
        .and_then(Value::as_f64)
}
