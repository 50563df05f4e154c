//! The premium requests a session used, read from its events.

use super::{RawEvent, SessionEventType as Kind, untyped};

/// The premium requests a session used, as the runtime reports them in the run's events:
/// `totalPremiumRequests` of the last `session.shutdown`, else of the last
/// `session.usage_checkpoint`; `Some(0.0)` when no prompt reached the session (no
/// `user.message`: nothing was sent); otherwise `None` (not reported, e.g. the runtime was killed
/// before it checkpointed). Fractional values are possible (model multipliers).
pub fn reported_premium_requests(events: &[RawEvent]) -> Option<f64> {
    let total_of = |kind: Kind| {
        events
            .iter()
            .rev()
            .filter(|e| e.kind() == kind)
            .find_map(untyped::total_premium_requests)
    };
    total_of(Kind::SessionShutdown)
        .or_else(|| total_of(Kind::SessionUsageCheckpoint))
        .or_else(|| (!events.iter().any(|e| e.kind() == Kind::UserMessage)).then_some(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn premium_requests_come_from_shutdown_then_checkpoint() {
        let event = |kind: &str, data: Value| RawEvent {
            event_type: kind.to_owned(),
            id: String::new(),
            timestamp: String::new(),
            agent_id: None,
            ephemeral: false,
            data,
        };
        assert_eq!(reported_premium_requests(&[]), Some(0.0));
        let prompt = event("user.message", json!({"content": "hi"}));
        assert_eq!(
            reported_premium_requests(std::slice::from_ref(&prompt)),
            None
        );
        let checkpoint = event(
            "session.usage_checkpoint",
            json!({"totalPremiumRequests": 1.5}),
        );
        assert_eq!(
            reported_premium_requests(&[prompt.clone(), checkpoint.clone()]),
            Some(1.5)
        );
        let shutdown = event("session.shutdown", json!({"totalPremiumRequests": 2}));
        assert_eq!(
            reported_premium_requests(&[prompt, shutdown, checkpoint]),
            Some(2.0)
        );
    }
}
