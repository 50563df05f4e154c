//! Pre-tool guards and the permission layer, end to end through the real runtime: every guard
//! decision (`ask`, `allow`, `deny`) with `auto_confirm` on and off, with no permission handler,
//! an approving one and a rejecting one. Nothing runs without a trace: a call that ran was either
//! approved by someone recorded on its `ToolCall::permission`, or allowed by a guard in an eval
//! without any permission layer.

use std::sync::{Arc, Mutex};

use copilot_eval_core::evidence::denial::DenialKind;
use copilot_eval_core::guard_fn;
use copilot_eval_core::model_server::{Script, ScriptedTurn};
use copilot_eval_core::sdk::handler::{PermissionHandler, PermissionResult};
use copilot_eval_core::sdk::hooks::{
    HookEvent, HookOutput, PostToolUseOutput, PreToolUseOutput, SessionHooks,
};
use copilot_eval_core::sdk::{PermissionRequestData, RequestId, SessionId};
use copilot_eval_core::tools::function_tool;
use copilot_eval_core::{CopilotResult, StopReason};
use copilot_eval_e2e::{Offline, runtime_for};
use serde_json::json;

/// A permission handler that approves or rejects every request and records each request's kind.
struct Handler {
    approve: bool,
    kinds: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl PermissionHandler for Handler {
    async fn handle(
        &self,
        _: SessionId,
        _: RequestId,
        data: PermissionRequestData,
    ) -> PermissionResult {
        let kind = data.extra["permissionRequest"]["kind"]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        self.kinds.lock().unwrap().push(kind);
        if self.approve {
            PermissionResult::approve_once()
        } else {
            PermissionResult::reject(Some("the handler says no".to_owned()))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Given {
    NoHandler,
    Approving,
    Rejecting,
}

struct Row {
    result: CopilotResult,
    written: bool,
    handler_kinds: Vec<String>,
}

async fn run_row(
    runtime: &copilot_eval_core::runtime::ResolvedRuntime,
    decision: &'static str,
    auto_confirm: bool,
    given: Given,
) -> Row {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("out.txt");
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "create",
            json!({"path": target.to_str().unwrap(), "file_text": "x"}),
        ))
        .turn(ScriptedTurn::text("done"));
    let offline = Offline::start(runtime, script).await;
    let kinds: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut builder = offline
        .eval()
        .working_directory(work.path())
        .auto_confirm(auto_confirm)
        .pre_tool_guard(guard_fn(move |_| {
            Ok((decision != "none").then(|| PreToolUseOutput {
                permission_decision: Some(decision.to_owned()),
                permission_decision_reason: Some(format!("the guard says {decision}")),
                ..Default::default()
            }))
        }));
    if given != Given::NoHandler {
        builder = builder.permission_handler(Arc::new(Handler {
            approve: given == Given::Approving,
            kinds: kinds.clone(),
        }));
    }
    let result = offline
        .run(&builder.build().unwrap(), "Write out.txt.")
        .await;
    let handler_kinds = kinds.lock().unwrap().clone();
    Row {
        written: target.exists(),
        result,
        handler_kinds,
    }
}

/// What each combination must do: (the file is written, the kinds the user's handler was asked,
/// the permission on the call as (kind, by, approved), the denial's kind and what its reason
/// contains).
type Expected = (
    bool,
    &'static [&'static str],
    Option<(&'static str, &'static str, bool)>,
    Option<(DenialKind, &'static str)>,
);

fn expected(decision: &str, auto_confirm: bool, given: Given) -> Expected {
    use Given::*;
    match (decision, auto_confirm, given) {
        // A deny wins over every permission layer; no one is asked.
        ("deny", _, _) => (
            false,
            &[],
            None,
            Some((DenialKind::Guard, "the guard says deny")),
        ),
        // An ask goes to the layer as a `hook` request...
        ("ask", _, Approving) => (
            true,
            &["hook"],
            Some(("hook", "permission_handler", true)),
            None,
        ),
        ("ask", _, Rejecting) => (
            false,
            &["hook"],
            Some(("hook", "permission_handler", false)),
            None,
        ),
        ("ask", true, NoHandler) => (true, &[], Some(("hook", "auto_confirm", true)), None),
        // ...and with no layer, no one can answer: denied, with the fix named.
        ("ask", false, NoHandler) => (
            false,
            &[],
            None,
            Some((DenialKind::UnansweredAsk, "no one can answer")),
        ),
        // An allow never skips a permission layer: the runtime asks it as without the guard.
        ("allow", _, Approving) => (
            true,
            &["write"],
            Some(("write", "permission_handler", true)),
            None,
        ),
        ("allow", _, Rejecting) => (
            false,
            &["write"],
            Some(("write", "permission_handler", false)),
            None,
        ),
        ("allow", true, NoHandler) => (true, &[], Some(("write", "auto_confirm", true)), None),
        // With no layer at all, the guard's allow is the only decision.
        ("allow", false, NoHandler) => (true, &[], None, None),
        // No opinion: the runtime asks the layer; with none it denies the call itself.
        ("none", _, Approving) => (
            true,
            &["write"],
            Some(("write", "permission_handler", true)),
            None,
        ),
        ("none", _, Rejecting) => (
            false,
            &["write"],
            Some(("write", "permission_handler", false)),
            None,
        ),
        ("none", true, NoHandler) => (true, &[], Some(("write", "auto_confirm", true)), None),
        ("none", false, NoHandler) => (false, &[], None, None),
        other => unreachable!("{other:?}"),
    }
}

#[tokio::test]
async fn guard_decisions_compose_with_the_permission_layer() {
    let Some(runtime) = runtime_for("guard_decisions_compose_with_the_permission_layer") else {
        return;
    };
    let mut failures = Vec::new();
    for decision in ["ask", "allow", "deny", "none"] {
        for auto_confirm in [true, false] {
            for given in [Given::NoHandler, Given::Approving, Given::Rejecting] {
                let label = format!("{decision}, auto_confirm {auto_confirm}, {given:?}");
                let Row {
                    result,
                    written,
                    handler_kinds,
                } = run_row(&runtime, decision, auto_confirm, given).await;
                let (runs, kinds, permission, denied) = expected(decision, auto_confirm, given);
                let call = result.tool_calls.first();
                let seen = (
                    result.stop_reason,
                    written,
                    handler_kinds.clone(),
                    call.and_then(|c| c.permission.as_ref())
                        .map(|p| (p.kind.clone(), p.by.clone(), p.approved)),
                    call.and_then(|c| c.denied.clone()),
                    call.and_then(|c| c.success),
                );
                let want_permission = permission.map(|(k, b, a)| (k.to_owned(), b.to_owned(), a));
                let ok = result.stop_reason == StopReason::Completed
                    && written == runs
                    && handler_kinds == kinds
                    && seen.3 == want_permission
                    && match denied {
                        Some((kind, text)) => seen
                            .4
                            .as_ref()
                            .is_some_and(|d| d.kind == kind && d.reason.contains(text)),
                        None => seen.4.is_none(),
                    }
                    && seen.5 == Some(runs);
                if !ok {
                    failures.push(format!("{label}: saw {seen:?}, error {:?}", result.error));
                }
                // The JSON report carries the same record.
                let record = copilot_eval_core::report::RunRecord::from_result(&result, "scripted");
                assert_eq!(
                    record
                        .tool_calls
                        .first()
                        .and_then(|c| c.permission.as_ref())
                        .map(|p| (p.kind.clone(), p.by.clone(), p.approved)),
                    seen.3,
                    "{label}: the report's permission differs from the result's"
                );
                // ...and the same denial, its kind written as `denial_kind`.
                let json = serde_json::to_value(&record.tool_calls).unwrap();
                assert_eq!(
                    json.get(0).and_then(|c| c.get("denial_kind")).cloned(),
                    denied.map(|(kind, _)| serde_json::to_value(kind).unwrap()),
                    "{label}: {json}"
                );
                // The invariant, whatever the row: a call that ran was approved by someone on
                // record, or allowed by a guard in an eval without a permission layer.
                if written {
                    let approved = call
                        .and_then(|c| c.permission.as_ref())
                        .is_some_and(|p| p.approved);
                    assert!(
                        approved
                            || (decision == "allow" && !auto_confirm && given == Given::NoHandler),
                        "{label}: the tool ran silently"
                    );
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The caller's `hooks` object: records each hook kind it receives, rewrites the arguments
/// before a tool runs, and adds context after it ran.
struct CallerHooks {
    order: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl SessionHooks for CallerHooks {
    async fn on_hook(&self, event: HookEvent) -> HookOutput {
        let kind = format!("{event:?}");
        let kind = kind.split([' ', '{', '(']).next().unwrap_or("").to_owned();
        self.order.lock().unwrap().push(kind);
        match event {
            HookEvent::PreToolUse { .. } => HookOutput::PreToolUse(PreToolUseOutput {
                modified_args: Some(json!({"text": "from the hooks object"})),
                ..Default::default()
            }),
            HookEvent::PostToolUse { .. } => HookOutput::PostToolUse(PostToolUseOutput {
                additional_context: Some("POST-TOOL-CONTEXT-7731".to_owned()),
                ..Default::default()
            }),
            _ => HookOutput::None,
        }
    }
}

#[tokio::test]
async fn the_hooks_object_runs_first_and_gets_every_other_hook() {
    let Some(runtime) = runtime_for("the_hooks_object_runs_first_and_gets_every_other_hook") else {
        return;
    };
    let script = Script::new([])
        .turn(ScriptedTurn::tool_call(
            "note",
            json!({"text": "from the model"}),
        ))
        .turn(ScriptedTurn::text("noted"));
    let offline = Offline::start(&runtime, script).await;
    let order: Arc<Mutex<Vec<String>>> = Arc::default();
    let noted: Arc<Mutex<Vec<String>>> = Arc::default();
    let (guard_order, handler_notes) = (order.clone(), noted.clone());
    let eval = offline
        .eval()
        .hooks(Arc::new(CallerHooks {
            order: order.clone(),
        }))
        .pre_tool_guard(guard_fn(move |input| {
            guard_order
                .lock()
                .unwrap()
                .push(format!("guard saw {}", input.tool_args["text"]));
            Ok(None)
        }))
        .tool(function_tool(
            "note",
            "Write down a note.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            move |args| {
                let notes = handler_notes.clone();
                async move {
                    notes
                        .lock()
                        .unwrap()
                        .push(args["text"].as_str().unwrap_or("").to_owned());
                    Ok("ok".to_owned())
                }
            },
        ))
        .build()
        .unwrap();
    let result = offline.run(&eval, "Take a note.").await;
    assert!(result.success, "{:?}", result.error);
    let order = order.lock().unwrap().clone();
    // Order: the hooks object's pre-tool hook, then the guard, which sees its rewrite.
    let pre = order
        .iter()
        .position(|k| k == "PreToolUse")
        .expect("pre-tool hook reached the hooks object");
    assert_eq!(
        order.get(pre + 1).map(String::as_str),
        Some("guard saw \"from the hooks object\""),
        "{order:?}"
    );
    // The rewrite reached the runtime and the tool.
    assert_eq!(*noted.lock().unwrap(), ["from the hooks object"]);
    // Every other hook kind is forwarded to the hooks object, and its answer reaches the runtime.
    for kind in ["UserPromptSubmitted", "PostToolUse"] {
        assert!(
            order.iter().any(|k| k == kind),
            "{kind} not forwarded: {order:?}"
        );
    }
    let second = &offline.server.model_requests()[1];
    assert!(
        serde_json::to_string(&second.messages)
            .unwrap()
            .contains("POST-TOOL-CONTEXT-7731"),
        "the post-tool hook's context did not reach the model"
    );
}

/// A hooks object whose pre-tool-use hook panics (a bug in the test's own code).
struct PanickingHooks;

#[async_trait::async_trait]
impl SessionHooks for PanickingHooks {
    async fn on_hook(&self, event: HookEvent) -> HookOutput {
        match event {
            HookEvent::PreToolUse { .. } => panic!("hooks object bug 6613"),
            _ => HookOutput::None,
        }
    }
}

/// A guard failure without a budget (nor audit, image detail or recording): the failing guard
/// closes the model-request gate, and the run installs the request proxy that reads it, so the
/// model request that would carry the denial (and every later one) is never forwarded: the
/// scripted model serves the first request only, though its script holds two more turns. The
/// guarded call is a built-in tool (`create`), so no in-process tool handler is involved. Rows:
/// a guard that returns an error, and a hooks object whose pre-tool hook panics.
#[tokio::test]
async fn no_model_request_is_forwarded_after_a_guard_failure_without_a_budget() {
    let Some(runtime) =
        runtime_for("no_model_request_is_forwarded_after_a_guard_failure_without_a_budget")
    else {
        return;
    };
    for row in ["guard error", "hooks object panic"] {
        let target = tempfile::tempdir().unwrap();
        let file = target.path().join("guarded.txt");
        let script = Script::new([])
            .turn(ScriptedTurn::tool_call(
                "create",
                json!({"path": file.to_str().unwrap(), "file_text": "x\n"}),
            ))
            .turn(ScriptedTurn::text("AFTER-THE-GUARD-1"))
            .turn(ScriptedTurn::text("AFTER-THE-GUARD-2"));
        let offline = Offline::start(&runtime, script).await;
        let builder = offline.eval();
        let (builder, cause) = match row {
            "guard error" => (
                builder.pre_tool_guard(guard_fn(|_| Err("guard store down 8842".to_owned()))),
                "guard store down 8842",
            ),
            _ => (
                builder.hooks(Arc::new(PanickingHooks)),
                "hooks object bug 6613",
            ),
        };
        let eval = builder.build().unwrap();
        let result = offline.run(&eval, "Create guarded.txt.").await;
        assert_eq!(
            result.stop_reason,
            StopReason::ExecutionError,
            "{row}: {:?}",
            result.error
        );
        assert!(!result.success, "{row}");
        let error = result.error.as_deref().unwrap_or_default();
        assert!(error.contains(cause), "{row}: {error}");
        assert!(!file.exists(), "{row}: the guarded call did not run");
        let denied = result.tool_calls.iter().find_map(|c| c.denied.as_ref());
        assert_eq!(
            denied.map(|d| d.kind),
            Some(DenialKind::GuardFailed),
            "{row}: {:#?}",
            result.tool_calls
        );
        let served = offline.server.model_requests();
        assert_eq!(
            served.len(),
            1,
            "{row}: model requests served (the first, then any after the guard failure); held back: {}",
            result.model_requests_held_back
        );
        // The request carrying the denial reached the gate and was held there.
        assert_eq!(result.model_requests_held_back, 1, "{row}");
        assert_ne!(
            result.final_response.as_deref(),
            Some("AFTER-THE-GUARD-1"),
            "{row}"
        );
    }
}

/// An `ask` that no one can answer (no permission handler, `auto_confirm` off) reaches the model
/// in the runtime's own words, as in production, never in ours; the call's `denied` keeps our
/// explanation with the fix.
#[tokio::test]
async fn an_unanswerable_ask_reaches_the_model_in_the_runtimes_words() {
    let Some(runtime) = runtime_for("an_unanswerable_ask_reaches_the_model_in_the_runtimes_words")
    else {
        return;
    };
    let Row {
        result, written, ..
    } = run_row(&runtime, "ask", false, Given::NoHandler).await;
    assert_eq!(
        result.stop_reason,
        StopReason::Completed,
        "{:?}",
        result.error
    );
    assert!(!written);
    let call = &result.tool_calls[0];
    assert_eq!(call.success, Some(false), "{call:?}");
    let model_read = call.error.clone().unwrap_or_default();
    assert!(
        model_read.starts_with(
            "Denied by preToolUse hook (unable to ask user for confirmation): the guard says ask"
        ),
        "the runtime's words: {model_read}"
    );
    assert!(!model_read.contains("no one can answer"), "{model_read}");
    let denied = call.denied.as_ref().map_or("", |d| d.reason.as_str());
    assert!(
        denied.contains("no one can answer") && denied.contains("auto_confirm is off"),
        "{denied}"
    );
}
