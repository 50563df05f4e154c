//! Classifying a first difference: from a run's typed replay diagnosis, or from two runs'
//! evidence.

use std::collections::HashMap;

use serde_json::Value;

use super::{Difference, DriftKind, shorten};
use crate::report::TestRecord;
use crate::result::replay::{ConversationDiff, Departure, ReplayMismatch};
use crate::wire::Role;

/// The marker of a runtime notification in a user message (runtime 1.0.102:
/// `<system_notification>...</system_notification>`).
const NOTIFICATION_MARKER: &str = "system_notification";

/// Classify a run's replay failure from its typed diagnosis ([`ReplayMismatch`], the run
/// record's `replay_diagnosis`, as the cassette's replay built it).
///
/// The recorded conversation that the request followed furthest ([`Departure::reach`]) is the
/// one the session followed; where the request departs from it decides the kind:
/// - the session ended with recorded replies never requested: [`DriftKind::MissingRequest`];
/// - the request goes past the end of the conversation (or equals it whole):
///   [`DriftKind::NewRequest`];
/// - the differing text holds an id-like token that changed (a UUID, or `agent-0`):
///   [`DriftKind::AgentId`];
/// - either side's message holds `system_notification`: [`DriftKind::Notification`];
/// - a `system` message: [`DriftKind::SystemPrompt`];
/// - a `tool` message: [`DriftKind::ToolSet`] when a side's message says a tool `does not
///   exist`, else [`DriftKind::ToolResult`];
/// - else [`DriftKind::Other`], with the diagnosis line.
///
/// `run` is left `None` (the caller knows the run).
pub fn classify_mismatch(mismatch: &ReplayMismatch) -> Difference {
    let head = shorten(&mismatch.headline());
    let first = match mismatch {
        ReplayMismatch::Unconsumed {
            never_requested, ..
        } => {
            return Difference {
                kind: DriftKind::MissingRequest,
                run: None,
                detail: head,
                pinned: never_requested.first().map(|l| shorten(l.trim())),
                candidate: None,
            };
        }
        ReplayMismatch::Miss { first, .. } => first,
    };
    // The first of the conversations that reach furthest.
    let mut best: Option<&ConversationDiff> = None;
    for diff in &first.conversations {
        if best.is_none_or(|b| diff.departure.reach() > b.departure.reach()) {
            best = Some(diff);
        }
    }
    let Some(diff) = best else {
        return Difference {
            kind: DriftKind::Other,
            run: None,
            detail: head,
            pinned: None,
            candidate: None,
        };
    };
    Difference {
        kind: kind(diff),
        run: None,
        detail: format!("{head}; {}", diff.departure),
        pinned: diff.recorded.clone(),
        candidate: diff.requested.clone(),
    }
}

/// A replay failure of a run whose record has no typed diagnosis (a results file written
/// before `replay_diagnosis` was recorded): [`DriftKind::Other`], with the error's first line.
pub fn unclassified_mismatch(error: &str) -> Difference {
    let head = error.lines().next().unwrap_or_default().trim();
    Difference {
        kind: DriftKind::Other,
        run: None,
        detail: shorten(head),
        pinned: None,
        candidate: None,
    }
}

/// The kind of the difference where the request departs from the conversation `diff`.
fn kind(diff: &ConversationDiff) -> DriftKind {
    let sides = [diff.recorded.as_deref(), diff.requested.as_deref()];
    let any = |needle: &str| sides.iter().flatten().any(|s| s.contains(needle));
    let (recorded_role, request_role) = match &diff.departure {
        Departure::PastEnd { .. } | Departure::WholeRecording { .. } => {
            return DriftKind::NewRequest;
        }
        Departure::Differs {
            recorded_role,
            request_role,
            ..
        } => (Some(*recorded_role), Some(*request_role)),
        Departure::LacksMessage { .. } => (None, None),
    };
    if let (Some(recorded), Some(request)) = (&diff.recorded, &diff.requested)
        && changed_id(recorded, request)
    {
        return DriftKind::AgentId;
    }
    if any(NOTIFICATION_MARKER) {
        return DriftKind::Notification;
    }
    match (recorded_role, request_role) {
        (Some(Role::System), _) | (_, Some(Role::System)) => DriftKind::SystemPrompt,
        (Some(Role::Tool), Some(Role::Tool)) if any("does not exist") => DriftKind::ToolSet,
        (Some(Role::Tool), Some(Role::Tool)) => DriftKind::ToolResult,
        _ => DriftKind::Other,
    }
}

/// Whether the two shown texts first differ inside an id-like token ([`id_like`]) that differs
/// between them.
fn changed_id(recorded: &str, request: &str) -> bool {
    let a: Vec<char> = recorded.chars().collect();
    let b: Vec<char> = request.chars().collect();
    let Some(at) = a.iter().zip(&b).position(|(x, y)| x != y) else {
        return false;
    };
    let token = |chars: &[char]| -> String {
        let part = |c: &char| c.is_ascii_alphanumeric() || *c == '-' || *c == '_';
        let start = chars[..at.min(chars.len())]
            .iter()
            .rposition(|c| !part(c))
            .map_or(0, |p| p + 1);
        chars[start..]
            .iter()
            .take_while(|c| part(c))
            .collect::<String>()
    };
    let (x, y) = (token(&a), token(&b));
    x != y && (id_like(&x) || id_like(&y))
}

/// A UUID, or a word with a digit and a `-` or `_` (`agent-0`, `task_3`).
fn id_like(token: &str) -> bool {
    is_uuid(token) || (token.chars().any(|c| c.is_ascii_digit()) && token.contains(['-', '_']))
}

fn is_uuid(token: &str) -> bool {
    let groups: Vec<&str> = token.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The first field where the two records' runs differ, once what differs on every run anyway is
/// set aside: durations and timings, the working directory (its path becomes `${workdir}` in
/// every string), and the spelling of agent ids (`agent_id`, `parent_agent_id`, `subagents`:
/// numbered per run in order of appearance by shape, `${uuid_1}` or `${id_1}`). Fields are
/// compared in this order: `stop_reason`, `error`, `audit`, `tool_calls`,
/// `subagent_invocations`, `subagents`, `skills_invoked`, `turns`, `final_response`, then the
/// others by name. A different number of runs is a difference too. `None` when the runs agree.
///
/// The kind: [`DriftKind::ToolSet`] under `audit` at a `tools` field, [`DriftKind::AgentId`]
/// at an agent id, [`DriftKind::ToolResult`] at a tool call's `result`, else
/// [`DriftKind::Evidence`].
pub fn first_evidence_difference(before: &TestRecord, after: &TestRecord) -> Option<Difference> {
    if before.runs.len() != after.runs.len() {
        return Some(Difference {
            kind: DriftKind::Evidence,
            run: None,
            detail: format!(
                "the pinned runtime made {} runs, the candidate {}",
                before.runs.len(),
                after.runs.len()
            ),
            pinned: None,
            candidate: None,
        });
    }
    const ORDER: [&str; 9] = [
        "stop_reason",
        "error",
        "audit",
        "tool_calls",
        "subagent_invocations",
        "subagents",
        "skills_invoked",
        "turns",
        "final_response",
    ];
    for (i, (x, y)) in before.runs.iter().zip(&after.runs).enumerate() {
        let x = comparable(
            serde_json::to_value(x).ok()?,
            &x.working_directory.to_string_lossy(),
        );
        let y = comparable(
            serde_json::to_value(y).ok()?,
            &y.working_directory.to_string_lossy(),
        );
        let (Value::Object(x), Value::Object(y)) = (x, y) else {
            continue;
        };
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort_by_key(|k| (ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()), *k));
        keys.dedup();
        for key in keys {
            let (a, b) = (
                x.get(key).unwrap_or(&Value::Null),
                y.get(key).unwrap_or(&Value::Null),
            );
            if let Some((path, a, b)) = first_json_difference(key, a, b) {
                let kind = if path.starts_with("audit") && path.contains("tools") {
                    DriftKind::ToolSet
                } else if path.contains("agent_id") || path.starts_with("subagents") {
                    DriftKind::AgentId
                } else if path.starts_with("tool_calls") && path.ends_with(".result") {
                    DriftKind::ToolResult
                } else {
                    DriftKind::Evidence
                };
                let (a, b) = (shorten(&a.to_string()), shorten(&b.to_string()));
                return Some(Difference {
                    kind,
                    run: Some(i + 1),
                    detail: format!("{path}: {a} -> {b}"),
                    pinned: Some(a),
                    candidate: Some(b),
                });
            }
        }
    }
    None
}

/// `value` without durations, timings and the working directory, agent ids renamed by shape.
fn comparable(value: Value, workdir: &str) -> Value {
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut value = value;
    strip(&mut value, workdir, &mut ids, false);
    value
}

fn strip(value: &mut Value, workdir: &str, ids: &mut HashMap<String, String>, is_id: bool) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| k != "duration_ms" && k != "timings" && k != "working_directory");
            for (k, v) in map.iter_mut() {
                let id = k == "agent_id" || k == "parent_agent_id" || k == "subagents";
                strip(v, workdir, ids, id);
            }
        }
        Value::Array(items) => {
            for item in items {
                strip(item, workdir, ids, is_id);
            }
        }
        Value::String(text) if is_id => {
            let n = ids.len() + 1;
            let shape = if is_uuid(text) { "uuid" } else { "id" };
            *text = ids
                .entry(text.clone())
                .or_insert_with(|| format!("${{{shape}_{n}}}"))
                .clone();
        }
        Value::String(text) if !workdir.is_empty() && text.contains(workdir) => {
            *text = text.replace(workdir, "${workdir}");
        }
        _ => {}
    }
}

/// The first path (`a.b[2].c`) where `a` and `b` differ, with both values there.
pub(super) fn first_json_difference(
    path: &str,
    a: &Value,
    b: &Value,
) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                first_json_difference(
                    &format!("{path}.{k}"),
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            let common = x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_json_difference(&format!("{path}[{i}]"), p, q));
            common.or_else(|| {
                (x.len() != y.len()).then(|| {
                    let n = x.len().min(y.len());
                    (
                        format!("{path}[{n}]"),
                        x.get(n).cloned().unwrap_or(Value::Null),
                        y.get(n).cloned().unwrap_or(Value::Null),
                    )
                })
            })
        }
        _ => (a != b).then(|| (path.to_owned(), a.clone(), b.clone())),
    }
}
