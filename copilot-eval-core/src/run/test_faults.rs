//! Faults a test injects into the run's own machinery, to reach failure paths that a real
//! runtime and a scripted model cannot force at the right moment: a lagging event subscription,
//! an event recorder that does not end, a WebSocket send after the upstream went away.
//!
//! **Test-only.** Hidden from the documentation; an eval never sets these. Set through
//! [`RunOptions::test_faults`](super::RunOptions::test_faults); the default injects nothing.
//! `tests/tests/faults.rs` uses each one (docs/faults.md, "Faults inside the run").

use std::sync::Arc;

use tokio::sync::Notify;

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
}
