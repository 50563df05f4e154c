//! The caller's pre-tool-use guards: the hooks object's `on_pre_tool_use` first, then each
//! [`PreToolGuard`] of the eval, composed with the permission layer and then the budget
//! ([`Controls::pre_tool_use`]); a guard that fails or panics stops the run
//! ([`ControlStop::GuardFailed`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;
use github_copilot_sdk::hooks::{
    HookActor, HookEvent, HookOutput, PreToolUseInput, PreToolUseOutput, SessionHooks,
};

use super::handlers::panic_text;
use super::{ControlStop, Controls};
use crate::eval::PreToolGuard;
use crate::evidence::Denial;
use crate::run::permissions::PermissionLayer;

impl Controls {
    /// Decide on one tool call: caller guards in order, then the permission layer, then the
    /// budget.
    pub async fn pre_tool_use(
        &self,
        input: PreToolUseInput,
        actor: &HookActor,
    ) -> PreToolUseOutput {
        let original = input.tool_args.clone();
        let said = match self.ask_guards(input, actor, &original).await {
            Ok(said) => said,
            Err(decided) => return decided,
        };
        let GuardsSaid {
            current,
            contexts,
            ask,
            allow,
            reasons,
        } = said;
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

    /// Ask the caller's guards in order (the hooks object's first), each seeing the arguments
    /// the previous ones modified. `Err`: the decision is made already (a guard denied, failed,
    /// panicked or answered nonsense); `Ok`: what they said, for the permission layer and the
    /// budget to decide on.
    async fn ask_guards(
        &self,
        input: PreToolUseInput,
        actor: &HookActor,
        original: &serde_json::Value,
    ) -> Result<GuardsSaid, PreToolUseOutput> {
        let mut said = GuardsSaid {
            current: input,
            contexts: Vec::new(),
            ask: false,
            allow: false,
            reasons: Vec::new(),
        };
        let hooks_guard = self.caller_hooks.clone().map(HooksGuard);
        let guards = hooks_guard
            .iter()
            .map(|g| g as &dyn PreToolGuard)
            .chain(self.guards.iter().map(|g| g.as_ref()));
        for (position, guard) in guards.enumerate() {
            let outcome = AssertUnwindSafe(guard.check(&said.current, actor))
                .catch_unwind()
                .await;
            let tool = &said.current.tool_name;
            let output = match outcome {
                Ok(Ok(output)) => output,
                Ok(Err(message)) => {
                    return Err(self.guard_failed(
                        tool,
                        original,
                        format!("pre-tool guard #{position} failed on {tool}: {message}"),
                    ));
                }
                Err(panic) => {
                    return Err(self.guard_failed(
                        tool,
                        original,
                        format!(
                            "pre-tool guard #{position} panicked on {tool}: {}",
                            panic_text(&panic)
                        ),
                    ));
                }
            };
            if let Some(output) = output
                && let Some(decided) = self.take_output(&mut said, output, position, original)
            {
                return Err(decided);
            }
        }
        Ok(said)
    }

    /// Add one guard's answer to what the guards said. `Some`: the answer decides (a deny, or
    /// an unknown decision, which fails the guard).
    fn take_output(
        &self,
        said: &mut GuardsSaid,
        output: PreToolUseOutput,
        position: usize,
        original: &serde_json::Value,
    ) -> Option<PreToolUseOutput> {
        if let Some(context) = output.additional_context.filter(|c| !c.is_empty()) {
            said.contexts.push(context);
        }
        if let Some(args) = output.modified_args {
            said.current.tool_args = args;
        }
        if let Some(reason) = output.permission_decision_reason.clone() {
            said.reasons.push(reason);
        }
        match output.permission_decision.as_deref() {
            None => {}
            Some("allow") => said.allow = true,
            Some("ask") => said.ask = true,
            Some("deny") => {
                // No reason: the model reads the runtime's own words, as in production.
                let reason = output.permission_decision_reason;
                let denial = Denial::guard(reason.clone());
                self.record_denial(&said.current.tool_name, original, denial);
                return Some(PreToolUseOutput {
                    permission_decision: Some("deny".into()),
                    permission_decision_reason: reason,
                    additional_context: join(&said.contexts),
                    ..Default::default()
                });
            }
            Some(other) => {
                return Some(self.guard_failed(
                    &said.current.tool_name,
                    original,
                    format!(
                        "pre-tool guard #{position} answered {other:?} for {}; use allow, deny or ask",
                        said.current.tool_name
                    ),
                ));
            }
        }
        None
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
        self.close_and_stop(ControlStop::GuardFailed(message.clone()));
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

/// What the caller's guards said about one call so far ([`Controls::pre_tool_use`]).
struct GuardsSaid {
    /// The call as the guards modified it.
    current: PreToolUseInput,
    /// Their additional contexts, in order.
    contexts: Vec<String>,
    /// Whether one answered `ask`.
    ask: bool,
    /// Whether one answered `allow`.
    allow: bool,
    /// Their decision reasons, in order.
    reasons: Vec<String>,
}
