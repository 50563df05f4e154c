//! The session hatch: the run's SDK [`Session`] handed to a closure of the eval at defined
//! points of the run ([`HatchPoint`]), for what copilot-eval does not wrap (the session's RPC
//! methods: workspace files, todos, plan, agents, the MCP lifecycle). Set with
//! [`CopilotEvalBuilder::session_hatch`]; the run calls it between its turns (`run/turns.rs`).
//! What it keeps and what it may break: docs/guide.md, "The session hatch".

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use github_copilot_sdk::session::Session;

use super::CopilotEvalBuilder;

/// Where in a run the session hatch is called. Every run of an eval with a hatch calls it at
/// each point it reaches, in this order: once before the first prompt, once between each two
/// prompts, once before shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HatchPoint {
    /// The session was created (or resumed) and the checks before the prompt (skills, MCP
    /// servers) passed; no prompt was sent yet.
    BeforeFirstPrompt,
    /// The turn of prompt number `after_turn` (from 1) went idle and the next prompt is not
    /// sent yet. Not reached after a `session.error` (no further prompt is sent then).
    BetweenPrompts {
        /// The number of the prompt whose turn just ended, from 1.
        after_turn: usize,
    },
    /// The last turn ended (idle, or a `session.error`); the run's cleanup (close the gate,
    /// abort, disconnect, stop the runtime) has not begun. Not reached after a timeout or a
    /// control stop (budget, guard, panicking tool), whose cleanup starts at once.
    BeforeShutdown,
}

impl std::fmt::Display for HatchPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HatchPoint::BeforeFirstPrompt => f.write_str("before the first prompt"),
            HatchPoint::BetweenPrompts { after_turn } => write!(f, "after turn {after_turn}"),
            HatchPoint::BeforeShutdown => f.write_str("before shutdown"),
        }
    }
}

/// Why a session hatch failed. The run then ends with `execution_error`, its `error` naming
/// the point (`the session hatch failed before shutdown: ...`); no further prompt is sent.
#[derive(Debug, thiserror::Error)]
pub enum HatchError {
    /// A call of the SDK (an RPC method of the session or its client) failed.
    #[error("an SDK call failed: {0}")]
    Sdk(#[from] github_copilot_sdk::Error),
    /// The closure's own reason, in its words.
    #[error("{0}")]
    Failed(String),
}

/// What a session hatch returns: a boxed future (`Box::pin(async move { ... })`).
pub type HatchFuture = Pin<Box<dyn Future<Output = Result<(), HatchError>> + Send + 'static>>;

/// The closure of [`CopilotEvalBuilder::session_hatch`].
pub type SessionHatchFn = Arc<dyn Fn(HatchPoint, Arc<Session>) -> HatchFuture + Send + Sync>;

impl CopilotEvalBuilder {
    /// The session hatch: `hatch` is called with the run's SDK [`Session`] at each
    /// [`HatchPoint`] (before the first prompt, between prompts, before shutdown), for what
    /// copilot-eval does not wrap, e.g. `session.rpc().workspaces().list_files()` or
    /// `session.rpc().plan().read_sql_todos()`. The run waits for the returned future; its
    /// time counts in `timeout_s`, and a timeout or a control stop (budget, guard) cuts it
    /// short. An error or a panic ends the run with `execution_error` naming the point.
    ///
    /// What stays in force: the session's events are recorded as evidence (those the hatch
    /// causes too), model requests still pass the audit and the budget gate, tool calls the
    /// budget and guards, and the runtime is the run's own, confined as any (an eval with a
    /// hatch never runs on a pooled runtime, since the session's client would reach a runtime
    /// other runs share). The closure itself is test code: it runs in the test process, not
    /// in the sandbox. What it may break (sending prompts, disconnecting, keeping the session
    /// past the run): docs/guide.md, "The session hatch". The run record's configuration says
    /// `session_hatch: true`.
    ///
    /// ```no_run
    /// use std::sync::{Arc, Mutex};
    ///
    /// use copilot_eval_core::CopilotEval;
    /// use copilot_eval_core::eval::HatchPoint;
    ///
    /// let files = Arc::new(Mutex::new(Vec::new()));
    /// let seen = files.clone();
    /// let eval = CopilotEval::builder()
    ///     .session_hatch(move |at, session| {
    ///         let seen = seen.clone();
    ///         Box::pin(async move {
    ///             if at == HatchPoint::BeforeShutdown {
    ///                 let listed = session.rpc().workspaces().list_files().await?;
    ///                 *seen.lock().unwrap() = listed.files;
    ///             }
    ///             Ok(())
    ///         })
    ///     })
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn session_hatch(
        mut self,
        hatch: impl Fn(HatchPoint, Arc<Session>) -> HatchFuture + Send + Sync + 'static,
    ) -> Self {
        self.session_hatch = Some(Arc::new(hatch));
        self
    }
}
