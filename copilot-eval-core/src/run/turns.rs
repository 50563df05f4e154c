//! The turns of a run: each prompt sent once the previous turn went idle (none after a
//! `session.error`), and the eval's session hatch called at its points
//! ([`HatchPoint`]: before the first prompt, between prompts, before shutdown).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use github_copilot_sdk::session::Session;
use tokio::sync::watch;

use super::controls::panic_text;
use super::state::{Progress, RunState};
use super::test_faults::TestFaults;
use crate::eval::{HatchPoint, Prompt, SessionHatchFn};

/// After a `session.error`, how long to wait for the `session.idle` that normally follows.
const ERROR_IDLE_GRACE: Duration = Duration::from_secs(3);
/// The stop's message when the runtime's event stream ended before the turn's `session.idle`
/// (the runtime exited, or dropped the connection).
pub(super) const STREAM_CLOSED: &str = "the runtime closed the event stream before session.idle";

/// Send the prompts one turn each, each once the previous turn went idle; none after a
/// `session.error`. With a session hatch, call it before the first prompt, after each turn
/// but the last that did not end in a `session.error`, and after the last turn.
///
/// Errors: sending a prompt failed, the event stream closed before a turn's idle, or the
/// hatch failed (its point named).
pub(super) async fn send_prompts(
    prompts: &[Prompt],
    working_directory: &std::path::Path,
    faults: &TestFaults,
    hatch: Option<&SessionHatchFn>,
    session: &Arc<Session>,
    run: &mut RunState,
    progress_rx: &watch::Receiver<Progress>,
) -> Result<(), String> {
    call_hatch(hatch, HatchPoint::BeforeFirstPrompt, session, run).await?;
    run.prompt_sent = true;
    for (number, prompt) in prompts.iter().enumerate() {
        let now = *progress_rx.borrow();
        if now.session_error {
            break;
        }
        if number > 0 {
            let after_turn = number;
            call_hatch(
                hatch,
                HatchPoint::BetweenPrompts { after_turn },
                session,
                run,
            )
            .await?;
        }
        // After the hatch, which may have caused events of its own.
        let now = *progress_rx.borrow();
        session
            .send(prompt.message_options(working_directory))
            .await
            .map_err(|e| format!("sending the prompt failed: {e}"))?;
        if let Some(clock) = &faults.clock_starts_at_session {
            clock.start();
        }
        wait_until_done(progress_rx.clone(), now.idles).await?;
    }
    call_hatch(hatch, HatchPoint::BeforeShutdown, session, run).await
}

/// Call the session hatch, if any, at `at` and wait for it; while it runs, `run` says so (a
/// timeout then names the point). Errors: what the hatch returned, or its panic, with the point.
async fn call_hatch(
    hatch: Option<&SessionHatchFn>,
    at: HatchPoint,
    session: &Arc<Session>,
    run: &mut RunState,
) -> Result<(), String> {
    let Some(hatch) = hatch else {
        return Ok(());
    };
    run.hatch_running = Some(at);
    // The closure is called inside the caught future: a panic while it builds its future is
    // caught too.
    let called = AssertUnwindSafe(async { hatch(at, session.clone()).await }).catch_unwind();
    let called = called.await;
    run.hatch_running = None;
    match called {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the session hatch failed {at}: {e}")),
        Err(panic) => Err(format!(
            "the session hatch panicked {at}: {}",
            panic_text(&panic)
        )),
    }
}

/// Wait for the root `session.idle` that ends the turn (the first after `idles_before` were
/// seen); after a `session.error`, wait at most a short grace for it.
pub(super) async fn wait_until_done(
    mut progress: watch::Receiver<Progress>,
    idles_before: u32,
) -> Result<(), String> {
    loop {
        let now = *progress.borrow_and_update();
        if now.idles > idles_before {
            return Ok(());
        }
        if now.session_error {
            let _ = tokio::time::timeout(
                ERROR_IDLE_GRACE,
                progress.wait_for(|p| p.idles > idles_before),
            )
            .await;
            return Ok(());
        }
        if progress.changed().await.is_err() {
            // The recorder stopped: the event stream closed before idle.
            let last = *progress.borrow();
            return if last.idles > idles_before || last.session_error {
                Ok(())
            } else {
                Err(STREAM_CLOSED.to_owned())
            };
        }
    }
}
