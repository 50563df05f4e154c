//! The SDK session hooks a run installs ([`ControlHooks`]): pre-tool-use goes through the
//! run's [`Controls`]; every other hook goes to the caller's hooks object.

use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::hooks::{HookActor, HookEvent, HookOutput, SessionHooks};

use super::Controls;

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
