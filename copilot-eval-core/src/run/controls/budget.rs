//! The tool-call budget (`max_tool_calls`): the last step of [`Controls::pre_tool_use`]. The
//! call past the budget is denied and stops the run with [`ControlStop::BudgetExceeded`];
//! once admission is closed (by any stop) every call is denied.

use super::{ControlStop, Controls};
use crate::evidence::Denial;

impl Controls {
    /// The budget decision: `None` admits, `Some(reason)` denies.
    pub(super) fn admit(&self, tool: &str, arguments: &serde_json::Value) -> Option<String> {
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
        // `closed` is set under the same lock that counted, so no concurrent call is admitted.
        state.closed = true;
        let reason = state.deny(tool, arguments, Denial::budget(max, tool));
        drop(state);
        self.close_and_stop(ControlStop::BudgetExceeded {
            max,
            tool: tool.to_owned(),
        });
        Some(reason)
    }
}
