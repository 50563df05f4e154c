//! Unit tests of the run controls: guards, the permission layer, the budget.

use std::sync::Arc;

use github_copilot_sdk::hooks::{HookActor, PreToolUseInput, PreToolUseOutput};

use super::*;
use crate::eval::guard_fn;
use crate::evidence::denial::DenialKind;
use serde_json::json;

fn input(tool: &str) -> PreToolUseInput {
    serde_json::from_value(json!({
        "sessionId": "s", "timestamp": 0.0, "cwd": "/w", "toolName": tool, "toolArgs": {"a": 1}
    }))
    .unwrap()
}

fn decision(d: &str) -> Arc<dyn PreToolGuard> {
    let d = d.to_owned();
    guard_fn(move |_| {
        Ok(Some(PreToolUseOutput {
            permission_decision: Some(d.clone()),
            permission_decision_reason: Some(format!("said {d}")),
            ..Default::default()
        }))
    })
}

async fn decide(controls: &Controls, tool: &str) -> PreToolUseOutput {
    controls
        .pre_tool_use(input(tool), &HookActor::default())
        .await
}

#[tokio::test]
async fn budget_admits_then_denies_and_closes_everything() {
    let controls = Controls::new(Some(2), vec![], None);
    assert_eq!(decide(&controls, "a").await.permission_decision, None);
    assert_eq!(decide(&controls, "b").await.permission_decision, None);
    let third = decide(&controls, "c").await;
    assert_eq!(third.permission_decision.as_deref(), Some("deny"));
    assert_eq!(
        third.permission_decision_reason,
        Some(Denial::budget(2, "c").reason)
    );
    assert!(controls.gate().is_closed());
    assert_eq!(
        controls.stop_requested(),
        Some(ControlStop::BudgetExceeded {
            max: 2,
            tool: "c".into()
        })
    );
    let fourth = decide(&controls, "d").await;
    assert_eq!(
        fourth.permission_decision_reason,
        Some(Denial::stopped("d").reason)
    );
    assert_eq!(controls.admitted(), 2);
    let kinds: Vec<_> = controls.denied().iter().map(|d| d.denial.kind).collect();
    assert_eq!(kinds, [DenialKind::Budget, DenialKind::Stopped]);
}

#[tokio::test]
async fn zero_budget_admits_nothing() {
    let controls = Controls::new(Some(0), vec![], None);
    assert_eq!(
        decide(&controls, "a").await.permission_decision.as_deref(),
        Some("deny")
    );
    assert_eq!(controls.admitted(), 0);
}

#[tokio::test]
async fn deny_wins_and_later_allow_cannot_override() {
    let later_ran = Arc::new(AtomicBool::new(false));
    let flag = later_ran.clone();
    let later = guard_fn(move |_| {
        flag.store(true, Ordering::SeqCst);
        Ok(Some(PreToolUseOutput {
            permission_decision: Some("allow".into()),
            ..Default::default()
        }))
    });
    let controls = Controls::new(Some(5), vec![decision("deny"), later], None);
    let out = decide(&controls, "a").await;
    assert_eq!(out.permission_decision.as_deref(), Some("deny"));
    assert!(!later_ran.load(Ordering::SeqCst), "a deny wins at once");
    assert_eq!(controls.denied()[0].denial.kind, DenialKind::Guard);
    assert_eq!(controls.admitted(), 0, "a denied call consumes no budget");
    assert_eq!(
        controls.stop_requested(),
        None,
        "a guard deny is not a stop"
    );
}

#[tokio::test]
async fn ask_stays_ask() {
    let controls = Controls::new(None, vec![decision("ask"), decision("allow")], None);
    assert_eq!(
        decide(&controls, "a").await.permission_decision.as_deref(),
        Some("ask")
    );
    let controls = Controls::new(None, vec![decision("allow"), decision("ask")], None);
    assert_eq!(
        decide(&controls, "a").await.permission_decision.as_deref(),
        Some("ask")
    );
}

#[tokio::test]
async fn ask_and_allow_compose_with_the_permission_layer() {
    let with = |layer| Controls::with_permissions(None, vec![decision("allow")], None, layer);
    // An allow never skips a permission layer: it is passed on as no decision.
    for layer in [PermissionLayer::AutoConfirm, PermissionLayer::Handler] {
        assert_eq!(decide(&with(layer), "a").await.permission_decision, None);
    }
    assert_eq!(
        decide(&with(PermissionLayer::None), "a")
            .await
            .permission_decision
            .as_deref(),
        Some("allow")
    );
    // An ask with no one to answer it goes to the runtime as an ask with the guard's own
    // reason (the runtime denies it in its words); the evidence's denial names the fix.
    let controls =
        Controls::with_permissions(Some(3), vec![decision("ask")], None, PermissionLayer::None);
    let out = decide(&controls, "a").await;
    assert_eq!(out.permission_decision.as_deref(), Some("ask"));
    assert_eq!(out.permission_decision_reason.as_deref(), Some("said ask"));
    let denied = controls.denied();
    assert_eq!(denied.len(), 1);
    assert_eq!(
        denied[0].denial,
        Denial::unanswered_ask("a", &["said ask".into()])
    );
    assert_eq!(controls.admitted(), 0, "a denied ask consumes no budget");
}

#[tokio::test]
async fn modified_args_flow_to_later_guards_and_contexts_join() {
    let first = guard_fn(|_| {
        Ok(Some(PreToolUseOutput {
            modified_args: Some(json!({"a": 2})),
            additional_context: Some("one".into()),
            ..Default::default()
        }))
    });
    let second = guard_fn(|input| {
        assert_eq!(
            input.tool_args,
            json!({"a": 2}),
            "sees the modified arguments"
        );
        Ok(Some(PreToolUseOutput {
            modified_args: Some(json!({"a": 3})),
            additional_context: Some("two".into()),
            ..Default::default()
        }))
    });
    let controls = Controls::new(None, vec![first, second], None);
    let out = decide(&controls, "a").await;
    assert_eq!(out.modified_args, Some(json!({"a": 3})));
    assert_eq!(out.additional_context.as_deref(), Some("one\n\ntwo"));
}

#[tokio::test]
async fn failing_or_panicking_guard_denies_and_stops() {
    let controls = Controls::new(None, vec![guard_fn(|_| Err("no db".into()))], None);
    let out = decide(&controls, "a").await;
    assert_eq!(out.permission_decision.as_deref(), Some("deny"));
    assert!(
        matches!(controls.stop_requested(), Some(ControlStop::GuardFailed(m)) if m.contains("no db"))
    );
    assert_eq!(controls.denied()[0].denial.kind, DenialKind::GuardFailed);

    let controls = Controls::new(None, vec![guard_fn(|_| panic!("guard bug"))], None);
    let out = decide(&controls, "a").await;
    assert_eq!(out.permission_decision.as_deref(), Some("deny"));
    assert!(
        matches!(controls.stop_requested(), Some(ControlStop::GuardFailed(m)) if m.contains("guard bug"))
    );
    assert!(controls.gate().is_closed());
}

#[tokio::test]
async fn unknown_decision_is_a_guard_failure() {
    let controls = Controls::new(None, vec![decision("maybe")], None);
    decide(&controls, "a").await;
    assert!(
        matches!(controls.stop_requested(), Some(ControlStop::GuardFailed(m)) if m.contains("\"maybe\""))
    );
    assert_eq!(controls.denied()[0].denial.kind, DenialKind::GuardFailed);
}
