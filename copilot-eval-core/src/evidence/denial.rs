//! Why the run's pre-tool-use hook denied a tool call ([`Denial`]), worded here once.
//!
//! The run's controls (`run/controls.rs`) create every denial with the constructors below; the
//! run puts it on the call's [`ToolCall::denied`](super::ToolCall::denied), and the JSON report
//! writes that same value on the call's record ([`fields`]), so what a denial holds reaches the
//! result, the JSON and the HTML page without a copy of its fields anywhere.
//!
//! The run's own words for a stop are here too: the budget stop ([`budget_exhausted`], which
//! the call's denial and the run's `error` both say) and what the run does not do once it has
//! stopped ([`after_stop`]). No other module spells them, and none reads a denial's kind from
//! its text.

use std::fmt;

/// A tool call the run's pre-tool-use hook denied, and why. Made only by the constructors here.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Denial {
    /// Why, in words: the budget's and the stop's are fixed ([`budget_exhausted`],
    /// [`not_run_after_stop`]); a guard's deny carries the guard's reason.
    pub reason: String,
}

impl Denial {
    /// The call past `max_tool_calls`: admission closes and the run stops
    /// `tool_budget_exceeded`.
    pub fn budget(max: u32, tool: &str) -> Self {
        Self {
            reason: budget_exhausted(max, tool),
        }
    }

    /// A call after the run stopped (the budget, a guard failure, a tool handler's panic, an
    /// audit failure): admission was closed.
    pub fn stopped(tool: &str) -> Self {
        Self {
            reason: not_run_after_stop(tool),
        }
    }

    /// A caller guard (the `hooks` object's `on_pre_tool_use` or a `pre_tool_guard`) answered
    /// `deny`, with `reason` or none.
    pub fn guard(reason: Option<String>) -> Self {
        Self {
            reason: reason.unwrap_or_else(|| NO_REASON.to_owned()),
        }
    }

    /// A caller guard failed on the call (returned an error, panicked or answered something
    /// other than allow, deny or ask): `message` says which and how; the run stops
    /// `execution_error` with the same text.
    pub fn guard_failed(message: String) -> Self {
        Self { reason: message }
    }

    /// A caller guard answered `ask` (with its `reasons`, if any) in an eval with no permission
    /// layer, so no one can answer: the runtime denies `tool` in its own words, and this says
    /// why and names the fix.
    pub fn unanswered_ask(tool: &str, reasons: &[String]) -> Self {
        let asked = if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join("; "))
        };
        Self {
            reason: format!(
                "a pre-tool guard answered ask{asked} and no one can answer: the eval has no permission_handler and auto_confirm is off; {tool} was not run"
            ),
        }
    }
}

impl fmt::Display for Denial {
    /// The reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What a denial says when a guard denied without a reason: the guard's answer reaches the
/// runtime without one, so the model reads the runtime's own words ("Denied by preToolUse hook:
/// No reason provided"), as in production.
const NO_REASON: &str = "denied by a pre-tool guard (no reason given)";

/// The budget stop in words, the same for the denial of the call past the budget and for the
/// run's `error`: `tool-call budget exhausted (max_tool_calls = N); TOOL was not run`.
pub fn budget_exhausted(max: u32, tool: &str) -> String {
    format!("tool-call budget exhausted (max_tool_calls = {max}); {tool} was not run")
}

/// What the run did not do because it had stopped, in words: `the eval stopped; WHAT`.
pub fn after_stop(what: &str) -> String {
    format!("the eval stopped; {what}")
}

/// A tool the run did not run because it had stopped: `the eval stopped; TOOL was not run` (the
/// denial of a call after the stop, and the failure an in-process handler answers when asked to
/// start after it).
pub fn not_run_after_stop(tool: &str) -> String {
    after_stop(&format!("{tool} was not run"))
}

/// How a tool call's record writes its denial (`#[serde(flatten, with = "...")]` on an
/// `Option<Denial>` field): `denied`, the reason (`null` when the call was not denied). The
/// evidence's [`ToolCall`](super::ToolCall) and the report's `ToolCallRecord` both write it so.
pub mod fields {
    use schemars::JsonSchema;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Denial;

    /// The JSON fields of a denial on a tool call's record (its schema is this type's).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct DenialFields {
        /// Why the call was denied, when it was.
        pub denied: Option<String>,
    }

    /// Write `denial`'s fields into the record.
    pub fn serialize<S: Serializer>(denial: &Option<Denial>, s: S) -> Result<S::Ok, S::Error> {
        DenialFields {
            denied: denial.as_ref().map(|d| d.reason.clone()),
        }
        .serialize(s)
    }

    /// Read a denial back from the record's fields.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Denial>, D::Error> {
        let fields = DenialFields::deserialize(d)?;
        Ok(fields.denied.map(|reason| Denial { reason }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A record with a denial in the middle of its fields, as the tool call records have it.
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Record {
        completed: bool,
        #[serde(flatten, with = "fields")]
        denied: Option<Denial>,
        after: u8,
    }

    /// A denial is written in place as `denied` (its reason; `null` for a call not denied) and
    /// read back the same; the record's other fields keep their order.
    #[test]
    fn a_denial_is_written_in_place_and_read_back() {
        let denied = Record {
            completed: false,
            denied: Some(Denial::budget(2, "bash")),
            after: 1,
        };
        let text = serde_json::to_string(&denied).unwrap();
        assert_eq!(
            text,
            r#"{"completed":false,"denied":"tool-call budget exhausted (max_tool_calls = 2); bash was not run","after":1}"#
        );
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), denied);
        let admitted = Record {
            completed: true,
            denied: None,
            after: 2,
        };
        let text = serde_json::to_string(&admitted).unwrap();
        assert_eq!(text, r#"{"completed":true,"denied":null,"after":2}"#);
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), admitted);
        let absent: Record =
            serde_json::from_value(json!({"completed": true, "after": 3})).unwrap();
        assert_eq!(absent.denied, None);
    }

    /// The constructors word each denial.
    #[test]
    fn each_denial_has_its_words() {
        assert_eq!(
            Denial::stopped("view").reason,
            "the eval stopped; view was not run"
        );
        assert_eq!(
            Denial::guard(None).reason,
            "denied by a pre-tool guard (no reason given)"
        );
        assert_eq!(Denial::guard(Some("no shell".into())).reason, "no shell");
        assert_eq!(
            Denial::unanswered_ask("create", &["said ask".into()]).reason,
            "a pre-tool guard answered ask (said ask) and no one can answer: the eval has no permission_handler and auto_confirm is off; create was not run"
        );
    }
}
