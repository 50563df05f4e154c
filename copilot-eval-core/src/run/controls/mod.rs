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
//! stops the run ([`Controls::handler_panicked`], see `run/controls/handlers.rs`).
//!
//! Every stop closes admission and the model-request gate, in one place
//! (`Controls::close_and_stop`); the request proxy reads the gate, so a run whose controls can
//! stop it mid-session installs the proxy ([`Controls::can_stop_mid_session`]).
//!
//! One module per concern: `budget` (the tool-call budget), `guards` (the caller's pre-tool-use
//! guards and hooks object), `handlers` (the tracker of in-process tool handlers: the drain, the
//! panic stop), `hooks` (the SDK session hooks that route pre-tool-use here); this file holds
//! the shared state, the gate and the stop.

mod budget;
mod guards;
mod handlers;
pub(crate) use handlers::panic_text;
mod hooks;
mod pending;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use github_copilot_sdk::hooks::SessionHooks;
use tokio::sync::watch;

use super::permissions::PermissionLayer;
use crate::eval::{CopilotEval, PreToolGuard};
use crate::evidence::Denial;
use handlers::HandlerTracker;

pub use hooks::ControlHooks;

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
    /// The model called the eval's `end_at_tool_call` tool: the run ends with the call left
    /// pending (`pending.rs`).
    PendingToolCall {
        /// The runtime's request id of the call (empty when the runtime gave none).
        request_id: String,
    },
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
    /// The eval's `end_at_tool_call`: the tool whose call ends the run, left pending.
    end_at_tool_call: Option<String>,
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
        let mut controls = Self::unshared(
            eval.max_tool_calls,
            eval.pre_tool_guards.clone(),
            eval.hooks.clone(),
            PermissionLayer::of(eval),
        );
        controls.end_at_tool_call = eval.end_at_tool_call.clone();
        Arc::new(controls)
    }

    /// Controls as [`Controls::new`], with the given permission layer.
    pub fn with_permissions(
        max_tool_calls: Option<u32>,
        guards: Vec<Arc<dyn PreToolGuard>>,
        caller_hooks: Option<Arc<dyn SessionHooks>>,
        permissions: PermissionLayer,
    ) -> Arc<Self> {
        Arc::new(Self::unshared(
            max_tool_calls,
            guards,
            caller_hooks,
            permissions,
        ))
    }

    /// [`Controls::with_permissions`], not shared yet.
    fn unshared(
        max_tool_calls: Option<u32>,
        guards: Vec<Arc<dyn PreToolGuard>>,
        caller_hooks: Option<Arc<dyn SessionHooks>>,
        permissions: PermissionLayer,
    ) -> Self {
        let (stop_tx, _) = watch::channel(None);
        Self {
            max_tool_calls,
            guards,
            caller_hooks,
            permissions,
            state: Mutex::default(),
            gate: Arc::default(),
            stop_tx,
            handlers: HandlerTracker::default(),
            end_at_tool_call: None,
        }
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

    /// Stop the run from outside the hook (the request proxy): close admission, the gate and the
    /// handlers, then signal `stop` (`close_and_stop`).
    pub fn stop_with(&self, stop: ControlStop) {
        self.close_and_stop(stop);
    }

    /// The one "close and stop" sequence of every stop the controls make (a budget stop, a
    /// guard's failure, a handler's panic, the proxy's audit failure): close admission (every
    /// later tool call is denied), the model-request gate (no further model request is
    /// forwarded), and, for every stop but the budget's, the in-process handlers (a handler of
    /// a call admitted earlier that has not started yet refuses to start); then signal `stop`
    /// (the first stop wins). The budget leaves the handlers open: a call admitted within the
    /// budget is one the budget counted, and runs. Idempotent; callers may have set
    /// `closed` already under their own lock.
    fn close_and_stop(&self, stop: ControlStop) {
        self.state.lock().expect("controls lock").closed = true;
        self.gate.close();
        if !matches!(stop, ControlStop::BudgetExceeded { .. }) {
            self.handlers.close();
        }
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
}
