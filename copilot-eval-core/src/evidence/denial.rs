//! Why the run's pre-tool-use hook denied a tool call ([`Denial`]), worded here once.
//!
//! The run's controls (`run/controls/`) create every denial with the constructors below, each
//! of its [`DenialKind`]; the run puts it on the call's
//! [`ToolCall::denied`](super::ToolCall::denied), and the JSON report writes that same value on
//! the call's record ([`fields`]: `denied`, `denial_kind`), so what a denial holds reaches the
//! result, the JSON and the HTML page without a copy of its fields anywhere.
//!
//! The run's own words for a stop are here too: the budget stop ([`budget_exhausted`], which
//! the call's denial and the run's `error` both say) and what the run does not do once it has
//! stopped ([`after_stop`]). No other module spells them, and none reads a denial's kind from
//! its text.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tool call the run's pre-tool-use hook denied, and why. Made only by the constructors here.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Denial {
    /// What denied it.
    pub kind: DenialKind,
    /// Why, in words: the budget's and the stop's are fixed ([`budget_exhausted`],
    /// [`not_run_after_stop`]); a guard's deny carries the guard's reason.
    pub reason: String,
}

/// What denied a tool call ([`Denial::kind`]), written as the call's `denial_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DenialKind {
    /// The budget: the call past `max_tool_calls` ([`Denial::budget`]).
    Budget,
    /// The stop: a call after the run had stopped ([`Denial::stopped`]).
    Stopped,
    /// A caller guard answered `deny` ([`Denial::guard`]).
    Guard,
    /// A caller guard failed on the call, which also stopped the run ([`Denial::guard_failed`]).
    GuardFailed,
    /// A caller guard answered `ask` in an eval with no permission layer, so no one could answer
    /// ([`Denial::unanswered_ask`]).
    UnansweredAsk,
    /// Not recorded: the denial was read from a results file written before copilot-eval
    /// recorded `denial_kind`. A run never gives it, and it is not written back.
    #[serde(skip)]
    Unrecorded,
}

impl Denial {
    /// The call past `max_tool_calls`: admission closes and the run stops
    /// `tool_budget_exceeded`.
    pub fn budget(max: u32, tool: &str) -> Self {
        Self {
            kind: DenialKind::Budget,
            reason: budget_exhausted(max, tool),
        }
    }

    /// A call after the run stopped (the budget, a guard failure, a tool handler's panic, an
    /// audit failure): admission was closed.
    pub fn stopped(tool: &str) -> Self {
        Self {
            kind: DenialKind::Stopped,
            reason: not_run_after_stop(tool),
        }
    }

    /// A caller guard (the `hooks` object's `on_pre_tool_use` or a `pre_tool_guard`) answered
    /// `deny`, with `reason` or none.
    pub fn guard(reason: Option<String>) -> Self {
        Self {
            kind: DenialKind::Guard,
            reason: reason.unwrap_or_else(|| NO_REASON.to_owned()),
        }
    }

    /// A caller guard failed on the call (returned an error, panicked or answered something
    /// other than allow, deny or ask): `message` says which and how; the run stops
    /// `execution_error` with the same text.
    pub fn guard_failed(message: String) -> Self {
        Self {
            kind: DenialKind::GuardFailed,
            reason: message,
        }
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
            kind: DenialKind::UnansweredAsk,
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
/// `Option<Denial>` field): `denied`, the reason (`null` when the call was not denied), then
/// `denial_kind` (absent when the call was not denied). The evidence's
/// [`ToolCall`](super::ToolCall) writes it so, in the evidence and in the JSON report alike.
pub mod fields {
    use schemars::JsonSchema;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Denial, DenialKind};

    /// The JSON fields of a denial on a tool call's record (its schema is this type's).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct DenialFields {
        /// Why the call was denied, when it was.
        pub denied: Option<String>,
        /// What denied it: `budget` (the call past `max_tool_calls`), `stopped` (a call after the
        /// run stopped), `guard` (a caller guard's `deny`), `guard_failed` (a caller guard failed
        /// on it, stopping the run) or `unanswered_ask` (a guard's `ask` in an eval with no
        /// permission layer). Absent when the call was not denied.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub denial_kind: Option<DenialKind>,
    }

    /// Write `denial`'s fields into the record.
    pub fn serialize<S: Serializer>(denial: &Option<Denial>, s: S) -> Result<S::Ok, S::Error> {
        DenialFields {
            denied: denial.as_ref().map(|d| d.reason.clone()),
            denial_kind: denial
                .as_ref()
                .map(|d| d.kind)
                .filter(|k| *k != DenialKind::Unrecorded),
        }
        .serialize(s)
    }

    /// Read a denial back from the record's fields (`Unrecorded` when it has no `denial_kind`).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Denial>, D::Error> {
        let fields = DenialFields::deserialize(d)?;
        Ok(fields.denied.map(|reason| Denial {
            kind: fields.denial_kind.unwrap_or(DenialKind::Unrecorded),
            reason,
        }))
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
    /// `denial_kind` (absent for a call not denied), and read back the same; the record's other
    /// fields keep their order. A denial without a kind (a file from before kinds) reads back
    /// `Unrecorded` and is written back without one.
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
            r#"{"completed":false,"denied":"tool-call budget exhausted (max_tool_calls = 2); bash was not run","denial_kind":"budget","after":1}"#
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
        let older = json!({"completed": true, "denied": "no shell", "after": 4});
        let read: Record = serde_json::from_value(older.clone()).unwrap();
        assert_eq!(read.denied.as_ref().unwrap().kind, DenialKind::Unrecorded);
        assert_eq!(serde_json::to_value(&read).unwrap(), older);
    }

    /// The constructors word each denial and give it its kind.
    #[test]
    fn each_denial_has_its_words_and_kind() {
        let kinds = [
            Denial::budget(1, "a"),
            Denial::stopped("a"),
            Denial::guard(None),
            Denial::guard_failed("pre-tool guard #0 failed on a: no db".into()),
            Denial::unanswered_ask("a", &[]),
        ]
        .map(|d| serde_json::to_value(d.kind).unwrap());
        assert_eq!(
            kinds,
            [
                "budget",
                "stopped",
                "guard",
                "guard_failed",
                "unanswered_ask"
            ]
        );
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
