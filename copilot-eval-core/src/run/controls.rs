//! Run controls: the tool-call budget, caller pre-tool-use guards, and the drain of in-process
//! tool handlers.
//!
//! Every tool call the runtime routes through the session's pre-tool-use hook passes
//! [`Controls::pre_tool_use`]:
//! 1. the caller's guards run in order (the `hooks` object's `on_pre_tool_use` first, then each
//!    [`PreToolGuard`] the eval stores): a `deny` wins at once and no later guard can turn it
//!    into an allow; an `ask` stays `ask` (a later `allow` does not lift it); modified arguments
//!    are handed to the next guard and to the runtime; `additional_context` texts are joined
//!    with a blank line; a guard that returns an error or panics denies the call and ends the
//!    run as `execution_error`;
//! 2. then the permission layer ([`super::permissions`]): an `ask` in an eval without a
//!    permission layer (no `permission_handler`, `auto_confirm` off) is denied, since no one can
//!    answer it; an `allow` in an eval with a layer is passed on as no decision, so the runtime
//!    asks the layer as it would without the guard (an `allow` never skips a permission handler);
//! 3. then the budget: once admission is closed every call is denied; the call past
//!    `max_tool_calls` is denied, closes admission and the model-request gate (so no further
//!    model request is forwarded) and signals the run to stop with `tool_budget_exceeded`.
//!
//! In-process SDK tool handlers are wrapped so that a handler that started always runs to its end
//! in its own task, even when the session is aborted; the run waits for all of them before it
//! stops the runtime ([`Controls::drain`]), and records any that failed. A handler that panics
//! stops the run ([`Controls::handler_panicked`], see `run/handlers.rs`).
//!
//! Every stop closes the model-request gate; the request proxy reads it, so a run whose controls
//! can stop it mid-session installs the proxy ([`Controls::can_stop_mid_session`]).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::FutureExt;
use github_copilot_sdk::Tool;
use github_copilot_sdk::hooks::{
    HookActor, HookEvent, HookOutput, PreToolUseInput, PreToolUseOutput, SessionHooks,
};
use tokio::sync::watch;

use super::handlers::{HandlerTracker, TrackedHandler, panic_text};
use super::permissions::PermissionLayer;
use crate::eval::{CopilotEval, PreToolGuard};
use crate::evidence::Denial;

/// Why the controls want the run to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlStop {
    /// The call past `max_tool_calls` was denied.
    BudgetExceeded {
        /// The budget.
        max: u32,
        /// The denied tool.
        tool: String,
    },
    /// A caller guard failed (error or panic).
    GuardFailed(String),
    /// An in-process tool handler panicked (a bug in the test's own code).
    HandlerPanicked {
        /// The tool whose handler panicked.
        tool: String,
        /// The panic's message.
        message: String,
    },
    /// The request audit failed on a model request, or the audited transport failed.
    AuditFailed(String),
}

/// Shared flag that closes model-request forwarding (read by the request proxy).
#[derive(Debug, Default)]
pub struct Gate {
    closed: AtomicBool,
}

impl Gate {
    /// Stop forwarding model requests from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }
    /// Whether forwarding is stopped.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// The controls of one run. Cheap to share (`Arc`).
pub struct Controls {
    max_tool_calls: Option<u32>,
    guards: Vec<Arc<dyn PreToolGuard>>,
    caller_hooks: Option<Arc<dyn SessionHooks>>,
    permissions: PermissionLayer,
    state: Mutex<State>,
    gate: Arc<Gate>,
    stop_tx: watch::Sender<Option<ControlStop>>,
    handlers: HandlerTracker,
}

#[derive(Default)]
struct State {
    admitted: u32,
    closed: bool,
    denied: Vec<DeniedCall>,
}

impl State {
    /// Record the denial of a call to `tool` with `arguments`; returns its reason.
    fn deny(&mut self, tool: &str, arguments: &serde_json::Value, denial: Denial) -> String {
        let reason = denial.reason.clone();
        self.denied.push(DeniedCall {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            denial,
        });
        reason
    }
}

/// A tool call the pre-tool-use hook denied: the call as the hook saw it (matched to the
/// evidence's call by name and arguments at the end of the run) and its [`Denial`].
#[derive(Debug, Clone, PartialEq)]
pub struct DeniedCall {
    /// The tool's name.
    pub tool: String,
    /// The arguments as the runtime sent them to the hook.
    pub arguments: serde_json::Value,
    /// Why, as the evidence keeps it.
    pub denial: Denial,
}

impl Controls {
    /// Controls for a run with this budget, these caller guards and this caller hooks object,
    /// in an eval whose permission layer is `auto_confirm` (the default: no handler given).
    pub fn new(
        max_tool_calls: Option<u32>,
        guards: Vec<Arc<dyn PreToolGuard>>,
        caller_hooks: Option<Arc<dyn SessionHooks>>,
    ) -> Arc<Self> {
        Self::with_permissions(
            max_tool_calls,
            guards,
            caller_hooks,
            PermissionLayer::AutoConfirm,
        )
    }

    /// The controls of a run of `eval`: its budget, guards, hooks object and permission layer.
    pub fn for_eval(eval: &CopilotEval) -> Arc<Self> {
        Self::with_permissions(
            eval.max_tool_calls,
            eval.pre_tool_guards.clone(),
            eval.hooks.clone(),
            PermissionLayer::of(eval),
        )
    }

    /// Controls as [`Controls::new`], with the given permission layer.
    pub fn with_permissions(
        max_tool_calls: Option<u32>,
        guards: Vec<Arc<dyn PreToolGuard>>,
        caller_hooks: Option<Arc<dyn SessionHooks>>,
        permissions: PermissionLayer,
    ) -> Arc<Self> {
        let (stop_tx, _) = watch::channel(None);
        Arc::new(Self {
            max_tool_calls,
            guards,
            caller_hooks,
            permissions,
            state: Mutex::default(),
            gate: Arc::default(),
            stop_tx,
            handlers: HandlerTracker::default(),
        })
    }

    /// The model-request gate these controls close on a budget stop.
    pub fn gate(&self) -> Arc<Gate> {
        self.gate.clone()
    }

    /// Calls admitted by the budget so far.
    pub fn admitted(&self) -> u32 {
        self.state.lock().expect("controls lock").admitted
    }

    /// The calls the hook denied (guards, budget, after the stop), in order.
    pub fn denied(&self) -> Vec<DeniedCall> {
        self.state.lock().expect("controls lock").denied.clone()
    }

    /// A receiver that sees the first stop request.
    pub fn stop_signal(&self) -> watch::Receiver<Option<ControlStop>> {
        self.stop_tx.subscribe()
    }

    /// The first stop request, if any.
    pub fn stop_requested(&self) -> Option<ControlStop> {
        self.stop_tx.borrow().clone()
    }

    /// Close admission: every later tool call is denied and in-process handlers refuse to start.
    pub fn close(&self) {
        self.state.lock().expect("controls lock").closed = true;
        self.handlers.close();
    }

    /// Stop the run from outside the hook (the request proxy): close admission and the gate, then
    /// signal the stop.
    pub fn stop_with(&self, stop: ControlStop) {
        self.state.lock().expect("controls lock").closed = true;
        self.gate.close();
        self.handlers.close();
        self.request_stop(stop);
    }

    fn request_stop(&self, stop: ControlStop) {
        self.stop_tx.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(stop);
                true
            } else {
                false
            }
        });
    }

    /// Wrap each tool's in-process handler so it is tracked for the drain.
    pub fn wrap_tools(self: &Arc<Self>, tools: &[Tool]) -> Vec<Tool> {
        tools
            .iter()
            .map(|tool| match tool.handler() {
                Some(inner) => {
                    let controls = self.clone();
                    tool.clone().with_handler(Arc::new(TrackedHandler {
                        inner: inner.clone(),
                        tool: tool.name.clone(),
                        tracker: self.handlers.clone(),
                        on_panic: Arc::new(move |tool: &str, message: &str| {
                            controls.handler_panicked(tool, message)
                        }),
                    }))
                }
                None => tool.clone(),
            })
            .collect()
    }

    /// Whether a control of `eval` can stop its run mid-session, closing the model-request gate:
    /// a budget, a caller guard or hooks object (a guard that fails stops the run), or an
    /// in-process tool handler (one that panics stops the run). Such a run installs the request
    /// proxy, the only reader of the gate, so that no model request is forwarded after the stop.
    pub fn can_stop_mid_session(eval: &CopilotEval) -> bool {
        eval.max_tool_calls.is_some()
            || !eval.pre_tool_guards.is_empty()
            || eval.hooks.is_some()
            || eval.tools.iter().any(|tool| tool.handler().is_some())
    }

    /// An in-process handler of `tool` panicked with `message`: close admission (later tool
    /// calls are denied; handlers admitted earlier still run, as after a budget stop) and the
    /// model-request gate, and stop the run with [`ControlStop::HandlerPanicked`]. Called by
    /// the wrapped handler before its failure result reaches the runtime.
    pub fn handler_panicked(&self, tool: &str, message: &str) {
        self.state.lock().expect("controls lock").closed = true;
        self.gate.close();
        self.request_stop(ControlStop::HandlerPanicked {
            tool: tool.to_owned(),
            message: message.to_owned(),
        });
    }

    /// The tool names of the in-process handlers running now (one entry per call).
    pub(super) fn handlers_running(&self) -> Vec<String> {
        self.handlers.running()
    }

    /// Wait until every in-process tool handler that started has finished, at most `bound`.
    /// Never cancels one. Returns the failures (errors and panics) of handlers, in order, and
    /// the names of the handlers still running when `bound` passed (empty when all finished).
    pub async fn drain(&self, bound: std::time::Duration) -> (Vec<String>, Vec<String>) {
        let _ = tokio::time::timeout(bound, self.handlers.wait_idle()).await;
        (self.handlers.failures(), self.handlers.running())
    }

    /// Decide on one tool call: caller guards in order, then the permission layer, then the
    /// budget.
    pub async fn pre_tool_use(
        &self,
        input: PreToolUseInput,
        actor: &HookActor,
    ) -> PreToolUseOutput {
        let original = input.tool_args.clone();
        let mut current = input;
        let mut contexts: Vec<String> = Vec::new();
        let mut ask = false;
        let mut allow = false;
        let mut reasons: Vec<String> = Vec::new();
        let hooks_guard = self.caller_hooks.clone().map(HooksGuard);
        let guards = hooks_guard
            .iter()
            .map(|g| g as &dyn PreToolGuard)
            .chain(self.guards.iter().map(|g| g.as_ref()));
        for (position, guard) in guards.enumerate() {
            let outcome = AssertUnwindSafe(guard.check(&current, actor))
                .catch_unwind()
                .await;
            let output = match outcome {
                Ok(Ok(output)) => output,
                Ok(Err(message)) => {
                    return self.guard_failed(
                        &current.tool_name,
                        &original,
                        format!(
                            "pre-tool guard #{position} failed on {}: {message}",
                            current.tool_name
                        ),
                    );
                }
                Err(panic) => {
                    return self.guard_failed(
                        &current.tool_name,
                        &original,
                        format!(
                            "pre-tool guard #{position} panicked on {}: {}",
                            current.tool_name,
                            panic_text(&panic)
                        ),
                    );
                }
            };
            let Some(output) = output else { continue };
            if let Some(context) = output.additional_context.filter(|c| !c.is_empty()) {
                contexts.push(context);
            }
            if let Some(args) = output.modified_args {
                current.tool_args = args;
            }
            if let Some(reason) = output.permission_decision_reason.clone() {
                reasons.push(reason);
            }
            match output.permission_decision.as_deref() {
                None => {}
                Some("allow") => allow = true,
                Some("ask") => ask = true,
                Some("deny") => {
                    // No reason: the model reads the runtime's own words, as in production.
                    let reason = output.permission_decision_reason;
                    let denial = Denial::guard(reason.clone());
                    self.record_denial(&current.tool_name, &original, denial);
                    return PreToolUseOutput {
                        permission_decision: Some("deny".into()),
                        permission_decision_reason: reason,
                        additional_context: join(&contexts),
                        ..Default::default()
                    };
                }
                Some(other) => {
                    return self.guard_failed(
                        &current.tool_name,
                        &original,
                        format!(
                            "pre-tool guard #{position} answered {other:?} for {}; use allow, deny or ask",
                            current.tool_name
                        ),
                    );
                }
            }
        }
        if ask && self.permissions == PermissionLayer::None {
            // The runtime itself denies an `ask` no one can answer, in its own words ("Denied by
            // preToolUse hook (unable to ask user for confirmation): <reason>", runtime
            // 1.0.102), which is what the model reads in production: pass the ask on, and keep
            // our explanation for the evidence only (the call's `denied`).
            let denial = Denial::unanswered_ask(&current.tool_name, &reasons);
            self.record_denial(&current.tool_name, &original, denial);
            return PreToolUseOutput {
                permission_decision: Some("ask".into()),
                permission_decision_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
                additional_context: join(&contexts),
                ..Default::default()
            };
        }
        if let Some(denial) = self.admit(&current.tool_name, &original) {
            return PreToolUseOutput {
                permission_decision: Some("deny".into()),
                permission_decision_reason: Some(denial),
                additional_context: join(&contexts),
                ..Default::default()
            };
        }
        let modified =
            (self.caller_hooks.is_some() || !self.guards.is_empty()).then_some(current.tool_args);
        PreToolUseOutput {
            permission_decision: if ask {
                Some("ask".into())
            } else if allow && self.permissions == PermissionLayer::None {
                // With a permission layer, an allow is no decision: the layer is asked.
                Some("allow".into())
            } else {
                None
            },
            permission_decision_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
            modified_args: modified,
            additional_context: join(&contexts),
            suppress_output: None,
        }
    }

    /// The budget decision: `None` admits, `Some(reason)` denies.
    fn admit(&self, tool: &str, arguments: &serde_json::Value) -> Option<String> {
        let mut state = self.state.lock().expect("controls lock");
        if state.closed {
            return Some(state.deny(tool, arguments, Denial::stopped(tool)));
        }
        let Some(max) = self.max_tool_calls else {
            state.admitted += 1;
            return None;
        };
        if state.admitted < max {
            state.admitted += 1;
            return None;
        }
        // The first call past the budget: close everything before the deny reaches the runtime,
        // so the model request carrying the denied result is never forwarded.
        // Calls admitted earlier may still run their handlers: the run lets them finish.
        state.closed = true;
        self.gate.close();
        let reason = state.deny(tool, arguments, Denial::budget(max, tool));
        drop(state);
        self.request_stop(ControlStop::BudgetExceeded {
            max,
            tool: tool.to_owned(),
        });
        Some(reason)
    }

    fn record_denial(&self, tool: &str, arguments: &serde_json::Value, denial: Denial) {
        self.state
            .lock()
            .expect("controls lock")
            .deny(tool, arguments, denial);
    }

    fn guard_failed(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
        message: String,
    ) -> PreToolUseOutput {
        self.record_denial(tool, arguments, Denial::guard_failed(message.clone()));
        self.state.lock().expect("controls lock").closed = true;
        self.gate.close();
        self.handlers.close();
        self.request_stop(ControlStop::GuardFailed(message.clone()));
        PreToolUseOutput {
            permission_decision: Some("deny".into()),
            permission_decision_reason: Some(message),
            ..Default::default()
        }
    }
}

fn join(contexts: &[String]) -> Option<String> {
    (!contexts.is_empty()).then(|| contexts.join("\n\n"))
}

/// The caller's `hooks` object's `on_pre_tool_use`, as the first guard.
struct HooksGuard(Arc<dyn SessionHooks>);

#[async_trait]
impl PreToolGuard for HooksGuard {
    async fn check(
        &self,
        input: &PreToolUseInput,
        actor: &HookActor,
    ) -> Result<Option<PreToolUseOutput>, String> {
        let event = HookEvent::PreToolUse {
            input: input.clone(),
            ctx: github_copilot_sdk::hooks::HookContext {
                session_id: input.session_id.clone().into(),
            },
        };
        Ok(
            match self.0.on_hook_with_actor(event, actor.clone()).await {
                HookOutput::PreToolUse(output) => Some(output),
                _ => None,
            },
        )
    }
}

/// The session hooks installed by the run: pre-tool-use goes through [`Controls`]; every other
/// hook goes to the caller's hooks object unchanged.
pub struct ControlHooks(pub Arc<Controls>);

#[async_trait]
impl SessionHooks for ControlHooks {
    async fn on_hook_with_actor(&self, event: HookEvent, actor: HookActor) -> HookOutput {
        match event {
            HookEvent::PreToolUse { input, .. } => {
                HookOutput::PreToolUse(self.0.pre_tool_use(input, &actor).await)
            }
            other => match &self.0.caller_hooks {
                Some(hooks) => hooks.on_hook_with_actor(other, actor).await,
                None => HookOutput::None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
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
}
