//! The permission layer of a run and how pre-tool guard decisions compose with it.
//!
//! The runtime asks the session's permission handler before a tool runs, unless the pre-tool
//! hook answered `allow` or `deny`. An eval has one permission layer ([`PermissionLayer`]): the
//! caller's `permission_handler`, else the approve-all handler when `auto_confirm` is on, else
//! none (the runtime then denies every call that needs a permission). The controls
//! ([`Controls::pre_tool_use`](super::controls::Controls::pre_tool_use)) use the layer so that
//! nothing runs without a trace:
//! - a guard's `ask` goes to the layer (the runtime sends a permission request of kind `hook`);
//!   with no layer it is denied by the controls, with a reason naming the fix;
//! - a guard's `allow` never skips a layer: with a layer it is passed on as no decision, so the
//!   runtime asks the layer exactly as it would without the guard.
//!
//! Every permission request and its answer are recorded on the call's
//! [`ToolCall::permission`](crate::ToolCall::permission) ([`attach_permissions`]).

use std::collections::HashMap;

use crate::eval::CopilotEval;
use crate::evidence::untyped::{self, PermissionRequest};
use crate::evidence::{LoggedEvent, Permission, SessionEventType, ToolCall};

/// Who answers the runtime's permission requests in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionLayer {
    /// No permission handler: the eval gave none and `auto_confirm` is off.
    None,
    /// The approve-all handler installed for `auto_confirm` (the eval gave no handler).
    AutoConfirm,
    /// The eval's own `permission_handler` (installed as given; `auto_confirm` is then unused).
    Handler,
}

impl PermissionLayer {
    /// The layer an eval installs.
    pub fn of(eval: &CopilotEval) -> Self {
        match (&eval.permission_handler, eval.auto_confirm) {
            (Some(_), _) => Self::Handler,
            (None, true) => Self::AutoConfirm,
            (None, false) => Self::None,
        }
    }

    /// The name recorded in [`Permission::by`]: `permission_handler`, `auto_confirm`, or `None`.
    pub fn by(self) -> Option<&'static str> {
        match self {
            Self::None => None,
            Self::AutoConfirm => Some("auto_confirm"),
            Self::Handler => Some("permission_handler"),
        }
    }
}

/// Record on each tool call the permission request the runtime made for it and its answer, from
/// the `permission.requested` and `permission.completed` events (matched by `toolCallId`, the
/// answer to its request by `requestId`). A call with several requests keeps the last.
pub fn attach_permissions(calls: &mut [ToolCall], log: &[LoggedEvent], layer: PermissionLayer) {
    let Some(by) = layer.by() else { return };
    // requestId -> (toolCallId, kind)
    let mut requests: HashMap<String, (String, String)> = HashMap::new();
    let mut found: HashMap<String, Permission> = HashMap::new();
    for logged in log {
        match logged.event.kind() {
            SessionEventType::PermissionRequested => {
                let Some(PermissionRequest { id, call, kind }) =
                    untyped::permission_request(&logged.event)
                else {
                    continue;
                };
                found.insert(
                    call.clone(),
                    Permission {
                        kind: kind.clone(),
                        by: by.to_owned(),
                        outcome: None,
                        approved: false,
                        feedback: None,
                    },
                );
                requests.insert(id, (call, kind));
            }
            SessionEventType::PermissionCompleted => {
                let Some(answer) = untyped::permission_answer(&logged.event) else {
                    continue;
                };
                let Some((call, _)) = requests.get(&answer.id) else {
                    continue;
                };
                if let Some(permission) = found.get_mut(call) {
                    permission.approved = answer
                        .outcome
                        .as_deref()
                        .is_some_and(|o| o.starts_with("approved"));
                    permission.outcome = answer.outcome;
                    permission.feedback = answer.feedback;
                }
            }
            _ => {}
        }
    }
    for call in calls {
        if let Some(permission) = found.remove(&call.id) {
            call.permission = Some(permission);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::RawEvent;
    use serde_json::json;

    fn logged(event_type: &str, data: serde_json::Value) -> LoggedEvent {
        LoggedEvent {
            event: RawEvent {
                event_type: event_type.into(),
                id: "e".into(),
                timestamp: String::new(),
                agent_id: None,
                ephemeral: false,
                data,
            },
            received: std::time::Instant::now(),
        }
    }

    fn call(id: &str) -> ToolCall {
        ToolCall::started(id, "create", json!({}), None)
    }

    #[test]
    fn requests_and_answers_are_matched_to_their_calls() {
        let log = [
            logged(
                "permission.requested",
                json!({"requestId": "r1", "permissionRequest": {"kind": "hook", "toolCallId": "c1"}}),
            ),
            logged(
                "permission.requested",
                json!({"requestId": "r2", "permissionRequest": {"kind": "write", "toolCallId": "c2"}}),
            ),
            logged(
                "permission.completed",
                json!({"requestId": "r2", "toolCallId": "c2", "result": {"kind": "denied-interactively-by-user", "feedback": "no"}}),
            ),
            logged(
                "permission.completed",
                json!({"requestId": "r1", "toolCallId": "c1", "result": {"kind": "approved"}}),
            ),
        ];
        let mut calls = [call("c1"), call("c2"), call("c3")];
        attach_permissions(&mut calls, &log, PermissionLayer::Handler);
        let first = calls[0].permission.clone().unwrap();
        assert_eq!(
            (first.kind.as_str(), first.by.as_str(), first.approved),
            ("hook", "permission_handler", true)
        );
        let second = calls[1].permission.clone().unwrap();
        assert!(!second.approved);
        assert_eq!(
            second.outcome.as_deref(),
            Some("denied-interactively-by-user")
        );
        assert_eq!(second.feedback.as_deref(), Some("no"));
        assert_eq!(calls[2].permission, None);

        let mut calls = [call("c1")];
        attach_permissions(&mut calls, &log, PermissionLayer::AutoConfirm);
        assert_eq!(calls[0].permission.as_ref().unwrap().by, "auto_confirm");
    }
}
