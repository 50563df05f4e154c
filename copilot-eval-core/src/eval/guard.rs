//! Caller pre-tool-use guards as an eval stores them: the [`PreToolGuard`] trait and
//! [`guard_fn`]. The run applies them (with the tool-call budget) through its controls
//! ([`run::controls`](crate::run::controls)), which describe the composition rules.

use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::hooks::{HookActor, PreToolUseInput, PreToolUseOutput};

/// A caller's pre-tool-use guard. It sees the call as the runtime describes it (tool name,
/// arguments as modified by earlier guards, working directory) and the actor (main agent or a
/// subagent), and answers with the SDK's [`PreToolUseOutput`]: `permission_decision` `"allow"`,
/// `"deny"` or `"ask"` (or `None`: no opinion), an optional reason, modified arguments and
/// additional context. `Ok(None)` means no opinion. `Err(message)` fails the run.
#[async_trait]
pub trait PreToolGuard: Send + Sync + 'static {
    /// Decide on one tool call.
    async fn check(
        &self,
        input: &PreToolUseInput,
        actor: &HookActor,
    ) -> Result<Option<PreToolUseOutput>, String>;
}

/// A [`PreToolGuard`] from a synchronous closure over the call.
///
/// ```
/// use copilot_eval_core::sdk::hooks::PreToolUseOutput;
/// use copilot_eval_core::{CopilotEval, guard_fn};
///
/// // Deny every shell command; no opinion on other tools.
/// let no_shell = guard_fn(|call| {
///     Ok((call.tool_name == "bash").then(|| PreToolUseOutput {
///         permission_decision: Some("deny".into()),
///         permission_decision_reason: Some("no shell in this eval".into()),
///         ..Default::default()
///     }))
/// });
/// let eval = CopilotEval::builder().pre_tool_guard(no_shell).build().unwrap();
/// # let _ = eval;
/// ```
pub fn guard_fn<F>(f: F) -> Arc<dyn PreToolGuard>
where
    F: Fn(&PreToolUseInput) -> Result<Option<PreToolUseOutput>, String> + Send + Sync + 'static,
{
    struct FnGuard<F>(F);
    #[async_trait]
    impl<F> PreToolGuard for FnGuard<F>
    where
        F: Fn(&PreToolUseInput) -> Result<Option<PreToolUseOutput>, String> + Send + Sync + 'static,
    {
        async fn check(
            &self,
            input: &PreToolUseInput,
            _actor: &HookActor,
        ) -> Result<Option<PreToolUseOutput>, String> {
            (self.0)(input)
        }
    }
    Arc::new(FnGuard(f))
}
