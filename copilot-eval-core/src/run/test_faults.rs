//! Faults a test injects into the run's own machinery, to reach failure paths that a real
//! runtime and a scripted model cannot force at the right moment: a lagging event subscription,
//! an event recorder that does not end, a WebSocket send after the upstream went away; and one
//! that moves the eval's clock: [`SessionClock`], for tests of a timeout on a loaded machine.
//!
//! **Test-only.** Hidden from the documentation; an eval never sets these. Set through
//! [`RunOptions::test_faults`](super::RunOptions::test_faults); the default injects nothing.
//! Each one is used by the test docs/faults.md names for it ("Faults inside the run").

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Notify, watch};

/// What to break inside one run (all off by default).
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct TestFaults {
    /// Capacity of the live event subscription, in events, instead of 4096: a small one lags as
    /// soon as the recorder falls that many events behind.
    pub event_buffer: Option<usize>,
    /// The event recorder reads nothing until this is notified (events pile up in the
    /// subscription meanwhile; past [`TestFaults::event_buffer`] of them, the oldest are lost).
    pub hold_event_recorder: Option<Arc<Notify>>,
    /// After the first root `session.idle`, the event recorder stops reading and never ends on
    /// its own: cleanup has to stop it.
    pub event_recorder_hangs_after_idle: bool,
    /// With the request proxy: after each complete upstream WebSocket response, the proxy's
    /// reader reads the upstream again only once the runtime's next message was sent (or failed),
    /// so a connection that broke in between is first seen by the send.
    pub websocket_reader_waits_for_send: bool,
    /// The eval's `timeout_s` counts from the moment the session was created (or, with
    /// [`SessionClock::at_prompt`], the first prompt was sent), not from before the runtime
    /// started (no bound before it): a test of a timeout then sees the timeout fall after the
    /// runtime's start however long that start takes on a loaded machine. Set through
    /// `ctx.test_faults`, the test's deadline in its evidence (when the runner kills it) moves
    /// with the clock: `timeout_s` from the clock's start. The real
    /// origin is tested by `tests/tests/stops.rs`
    /// (`a_timeout_before_the_prompt_is_an_infrastructure_stop`).
    pub clock_starts_at_session: Option<SessionClock>,
    /// After the skill check before the runtime starts, write this file (path, content): a
    /// skill folder that changes between that check and the runtime's own discovery (a skill
    /// appears), at a moment no test can otherwise hit.
    pub write_after_local_skill_check: Option<(std::path::PathBuf, String)>,
    /// An eval with MCP servers may lease a pooled runtime too (they never do otherwise): for
    /// measuring what MCP servers of sessions on one runtime share (tests/tests/pool.rs).
    pub pool_mcp_servers: bool,
    /// The kernel's Landlock ABI version as the run's sandbox sees it (`0`: no Landlock),
    /// instead of asking the kernel: a machine without Landlock, for the sandbox's warning and
    /// its `required` error (tests/tests/sandbox.rs).
    pub landlock_abi: Option<u32>,
}

/// Where a run with [`TestFaults::clock_starts_at_session`] records the moment its clock started
/// (the session was created, or with [`at_prompt`](Self::at_prompt) the first prompt was sent);
/// one per run (each run sets it anew).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct SessionClock {
    started: Arc<watch::Sender<Option<Instant>>>,
    at_prompt: bool,
}

impl Default for SessionClock {
    fn default() -> Self {
        Self {
            started: Arc::new(watch::channel(None).0),
            at_prompt: false,
        }
    }
}

impl SessionClock {
    /// A clock that starts once the run's first prompt was sent (the runtime accepted it):
    /// a timeout then always strikes after the prompt, in the agent's turn, however long the
    /// runtime's start and the checks before the prompt take.
    pub fn at_prompt() -> Self {
        Self {
            at_prompt: true,
            ..Self::default()
        }
    }

    /// When the run's clock started (its session was created, or its first prompt was sent):
    /// `None` before that.
    pub fn started(&self) -> Option<Instant> {
        *self.started.borrow()
    }

    /// Whether the clock starts at the first prompt ([`at_prompt`](Self::at_prompt)) rather
    /// than at the session's creation.
    pub(super) fn starts_at_prompt(&self) -> bool {
        self.at_prompt
    }

    /// Forget an earlier start (a run sets it anew).
    pub(super) fn reset(&self) {
        self.started.send_replace(None);
    }

    /// Start the clock now, unless it already started.
    pub(super) fn start(&self) {
        self.started.send_if_modified(|started| {
            let unset = started.is_none();
            if unset {
                *started = Some(Instant::now());
            }
            unset
        });
    }

    /// Wait until the clock starts at `since` or later (an earlier start is a previous run's);
    /// return when. The harness moves the test's deadline to the run's real bound with it.
    pub async fn started_since(&self, since: Instant) -> Instant {
        let mut started = self.started.subscribe();
        let started = started
            .wait_for(|s| s.is_some_and(|t| t >= since))
            .await
            .expect("the clock holds its own sender");
        started.expect("waited for a start")
    }

    /// Wait until the clock started; return when.
    pub(super) async fn wait(&self) -> Instant {
        let mut started = self.started.subscribe();
        let started = started
            .wait_for(Option::is_some)
            .await
            .expect("the clock holds its own sender");
        started.expect("waited for a start")
    }
}
