//! Ending a run on purpose at a tool call left pending
//! ([`CopilotEvalBuilder::end_at_tool_call`]), for an eval of what a later resume does with it
//! (the SDK's `continue_pending_work`). The run side: `run/controls/pending.rs` (the ending
//! handler), `run/cleanup.rs` (the stop without an abort) and `run/pending.rs` (the resume).

use super::CopilotEvalBuilder;
use crate::error::ConfigError;

impl CopilotEvalBuilder {
    /// End the run when the model calls the tool `tool` (one of this eval's
    /// [`tool`](Self::tool)s): the call is left pending. Its handler is not called, the turn is
    /// not aborted, and the runtime is stopped with the call pending in the session's state, as
    /// if the process had ended while the tool ran. The result's `stop_reason` is
    /// `pending_tool_call` (`success` when nothing else went wrong); the call is the last of
    /// `tool_calls`, without a result.
    ///
    /// A later run of the same test can resume the session and continue the call:
    /// `ctx.resume_with(&eval, &earlier, prompts, ResumeOptions::default().continue_pending_work(true))`
    /// calls the resumed eval's handler of that tool with the recorded arguments and hands its
    /// result to the runtime (the SDK's `handle_pending_tool_call`) before the first prompt; the
    /// interrupted turn then goes on with it. Without `continue_pending_work(true)` the runtime
    /// treats the call as interrupted.
    ///
    /// An eval with `end_at_tool_call` runs on a runtime of its own (never a pooled one: its
    /// runtime is stopped with the call pending).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext, lookup: copilot_eval_core::sdk::Tool) {
    /// use copilot_eval_core::harness::ResumeOptions;
    ///
    /// let ending = ctx.eval().tool(lookup.clone()).end_at_tool_call("lookup_order").build().unwrap();
    /// let first = ctx.run(&ending, "Look order 42 up.").await;
    /// assert_eq!(first.stop_reason.as_str(), "pending_tool_call");
    /// let eval = ctx.eval().tool(lookup).build().unwrap();
    /// let options = ResumeOptions::default().continue_pending_work(true);
    /// let later = ctx.resume_with(&eval, &first, ["Go on."], options).await;
    /// # }
    /// ```
    ///
    /// Errors (at `build()`): `tool` names none of the eval's tools with a handler.
    pub fn end_at_tool_call(mut self, tool: impl Into<String>) -> Self {
        self.end_at_tool_call = Some(tool.into());
        self
    }

    /// `build()`'s check of `end_at_tool_call`: it names one of the eval's tools with a handler.
    pub(super) fn check_end_at_tool_call(&self) -> Result<(), ConfigError> {
        let Some(name) = &self.end_at_tool_call else {
            return Ok(());
        };
        if self
            .tools
            .iter()
            .any(|t| &t.name == name && t.handler().is_some())
        {
            return Ok(());
        }
        let known: Vec<&str> = self
            .tools
            .iter()
            .filter(|t| t.handler().is_some())
            .map(|t| t.name.as_str())
            .collect();
        Err(ConfigError::new(
            "end_at_tool_call",
            format!(
                "{name:?} names none of the eval's tools with a handler (known: {}); add the tool with tool(...) or name one of those",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        ))
    }
}
