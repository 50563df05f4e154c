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
    /// The eval's `timeout_s` counts from the moment the session was created, not from before
    /// the runtime started (no bound before it): a test of a timeout then sees the timeout fall
    /// after the runtime's start however long that start takes on a loaded machine. The real
    /// origin is tested by `tests/tests/stops.rs` (`timeout_covers_runtime_start`).
    pub clock_starts_at_session: Option<SessionClock>,
    /// After the skill check before the runtime starts, write this file (path, content): a
    /// skill folder that changes between that check and the runtime's own discovery (a skill
    /// appears), at a moment no test can otherwise hit.
    pub write_after_local_skill_check: Option<(std::path::PathBuf, String)>,
    /// An eval with MCP servers may lease a pooled runtime too (they never do otherwise): for
    /// measuring what MCP servers of sessions on one runtime share (tests/tests/pool.rs).
    pub pool_mcp_servers: bool,
}

/// Where a run with [`TestFaults::clock_starts_at_session`] records the moment its clock started
/// (the session was created); one per run (each run sets it anew).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct SessionClock(Arc<watch::Sender<Option<Instant>>>);

impl Default for SessionClock {
    fn default() -> Self {
        Self(Arc::new(watch::channel(None).0))
    }
}

impl SessionClock {
    /// When the run's clock started (its session was created): `None` before that.
    pub fn started(&self) -> Option<Instant> {
        *self.0.borrow()
    }

    /// Forget an earlier start (a run sets it anew).
    pub(super) fn reset(&self) {
        self.0.send_replace(None);
    }

    /// Start the clock now.
    pub(super) fn start(&self) {
        self.0.send_replace(Some(Instant::now()));
    }

    /// Wait until the clock started; return when.
    pub(super) async fn wait(&self) -> Instant {
        let mut started = self.0.subscribe();
        let started = started
            .wait_for(Option::is_some)
            .await
            .expect("the clock holds its own sender");
        started.expect("waited for a start")
    }
}
