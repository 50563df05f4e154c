//! The cleanup stage of a run, in every outcome: the ordered stop of everything the session
//! stage started ([`cleanup`]), then what the request proxy, the controls and a replay check
//! report about the run ([`settle`]).

use std::sync::Mutex;
use std::time::Duration;

use github_copilot_sdk::Client;
use github_copilot_sdk::session::Session;
use github_copilot_sdk::session_events::{ToolExecutionCompleteData, ToolExecutionStartData};

use super::ReplayCheck;
use super::controls::{ControlStop, Controls};
use super::proxy::{ProxyOptions, RequestProxy};
use super::resume::RunHome;
use super::session::Slots;
use super::state::RunState;
use crate::evidence::{LoggedEvent, SessionEventType, untyped};
use crate::result::StopReason;
use crate::runtime;

/// How long cleanup waits for each step before forcing it.
const ABORT_BOUND: Duration = Duration::from_secs(5);
const DISCONNECT_BOUND: Duration = Duration::from_secs(5);
const STOP_BOUND: Duration = Duration::from_secs(15);
/// After a stop, how long to wait for the runtime to report the completion of started tool calls.
const COMPLETION_BOUND: Duration = Duration::from_secs(10);
/// How long cleanup waits for in-process tool handlers still running after the stop. A handler
/// is never cancelled, but one that never returns must not hold the run forever: past this
/// bound the run goes on without it and reports a cleanup error naming it.
const DRAIN_BOUND: Duration = Duration::from_secs(20);
/// How long cleanup waits for a killed runtime process to have exited (a large process can take
/// a moment to release its memory, longer on a loaded machine).
const EXIT_BOUND: Duration = Duration::from_secs(15);
/// How long cleanup waits, once the runtime stopped, for the event recorder to reach the end of
/// the event stream before stopping it.
const RECORDER_BOUND: Duration = Duration::from_secs(2);

/// Stop everything the execution started, in order, each runtime-facing step bounded.
///
/// After a budget stop, a guard failure or a tool handler's panic, the calls admitted before it
/// are allowed to run to completion first, and
/// the runtime to ask for the model request that would carry their results, which the gate
/// holds (so the session cannot move on); both waits together are bounded by 10 s. Then the
/// session is aborted. After any other stop, admission closes at once
/// and the session is aborted right away.
pub(super) async fn cleanup(
    slots: &Slots,
    controls: &Controls,
    proxy: Option<&RequestProxy>,
    run: &mut RunState,
    home: &std::path::Path,
    pooled: bool,
) {
    let let_admitted_finish = matches!(
        controls.stop_requested(),
        Some(
            ControlStop::BudgetExceeded { .. }
                | ControlStop::GuardFailed(_)
                | ControlStop::HandlerPanicked { .. }
        )
    );
    // The eval's end at a tool call left pending: no abort, no wait for its completion, and
    // the runtime killed rather than stopped ([`keep_pending`]).
    let leave_pending = pending_request(controls);
    controls.gate().close();
    if let_admitted_finish && slots.session.lock().expect("slot").is_some() {
        wait_for_admitted(slots, proxy, run).await;
    }
    // 1. Close admission: no further tool call runs, no further model request is forwarded.
    controls.close();
    let session = slots.session.lock().expect("slot").take();
    let client = slots.client.lock().expect("slot").take();
    let idle = slots
        .idle
        .lock()
        .expect("slot")
        .as_ref()
        .is_some_and(|p| p.borrow().idle);
    // The event stream closed (the runtime exited or its connection broke): no abort can reach
    // it and no further event (completion, idle) can arrive, so neither is waited for.
    let stream_closed = slots
        .idle
        .lock()
        .expect("slot")
        .as_ref()
        .is_some_and(|p| p.has_changed().is_err());
    // 2. Abort a session that is still busy.
    if let Some(session) = &session
        && !idle
        && !stream_closed
        && leave_pending.is_none()
    {
        abort(session, run).await;
    }
    // 3. Wait (bounded) for the runtime to report every started tool call's completion, or to
    //    go idle (after an abort it reports no more completions).
    if session.is_some() && !stream_closed && leave_pending.is_none() {
        wait_for_completions(slots, run).await;
    }
    // 4. Wait (bounded) for every in-process tool handler that started; never cancel one.
    let (failures, still_running) = controls.drain(DRAIN_BOUND).await;
    run.tool_handler_failures = failures;
    if !still_running.is_empty() {
        run.cleanup_errors.push(format!(
            "tool handler {} still running {DRAIN_BOUND:?} after the stop; the run returned without waiting for it",
            still_running.join(", ")
        ));
    }
    // 5. Disconnect and stop the runtime. On a pooled runtime, which keeps running, the session
    //    is shut down first (what stopping a private runtime does to its sessions): the
    //    runtime persists its final state, frees it, and reports `session.shutdown` (with the
    //    premium requests), which is waited for (bounded) before the event stream is left.
    if pooled
        && !stream_closed
        && leave_pending.is_none()
        && let Some(session) = &session
    {
        shut_down_session(session, run).await;
    }
    if let (Some(request_id), Some(client)) = (&leave_pending, &client) {
        keep_pending(home, run, request_id, client).await;
    }
    if let Some(session) = session.as_ref().filter(|_| leave_pending.is_none()) {
        match tokio::time::timeout(DISCONNECT_BOUND, session.disconnect()).await {
            Ok(Ok(())) | Err(_) => {}
            Ok(Err(e)) => {
                tracing::debug!("session disconnect failed: {e}");
            }
        }
    }
    drop(session);
    // The audited transport closes before the SDK client stops.
    if let Some(proxy) = proxy {
        proxy.close().await;
    }
    if let Some(client) = client {
        stop_client(client, run).await;
    }
    stop_recorder(slots, run).await;
    // 6. No runtime process may outlive the run.
    kill_leftovers(run, home).await;
}

/// The request id of the call the run ends at, left pending (`end_at_tool_call`), if it does.
fn pending_request(controls: &Controls) -> Option<String> {
    match controls.stop_requested() {
        Some(ControlStop::PendingToolCall { request_id, .. }) => Some(request_id),
        _ => None,
    }
}

/// Kill the runtime with the call `request_id` left pending, once the runtime has written the
/// call's request to the session's state under `home` (it writes its events a moment after
/// sending them; waited for, bounded), so that a resume finds it pending: a graceful stop or a
/// disconnect would let the runtime settle the call. Past the bound, a cleanup error says a
/// resume cannot continue the call.
async fn keep_pending(
    home: &std::path::Path,
    run: &mut RunState,
    request_id: &str,
    client: &Client,
) {
    let Some(session_id) = run.session_id.clone() else {
        client.force_stop();
        return;
    };
    let waited = tokio::time::timeout(COMPLETION_BOUND, async {
        while !super::pending::is_pending(home, &session_id, request_id) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if waited.is_err() {
        run.cleanup_errors.push(format!(
            "the runtime had not written the pending tool call (request {request_id}) to the session's state within {COMPLETION_BOUND:?}; a resume cannot continue it"
        ));
    }
    client.force_stop();
}

/// After a budget stop, a guard failure or a handler's panic: wait (bounded) for the admitted
/// tool calls to complete, then for the runtime to ask for the model request carrying their
/// results (which the closed gate holds), unless the session went idle instead.
async fn wait_for_admitted(slots: &Slots, proxy: Option<&RequestProxy>, run: &RunState) {
    let progress = slots.idle.lock().expect("slot").clone();
    let idle = || progress.as_ref().is_some_and(|p| p.borrow().idle);
    let waited = tokio::time::timeout(COMPLETION_BOUND, async {
        while has_open_tool_calls(&run.log) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Then the runtime asks for the next model request, carrying the results: the gate
        // holds it, and the session is parked there (unless it went idle instead).
        while proxy.is_some_and(|p| p.held_back() == 0) && !idle() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::debug!("admitted tool calls did not complete before the abort");
    }
}

/// Abort the busy session (bounded); a failed or late abort is a cleanup error.
async fn abort(session: &Session, run: &mut RunState) {
    match tokio::time::timeout(ABORT_BOUND, session.abort()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => run
            .cleanup_errors
            .push(format!("session abort failed: {e}")),
        Err(_) => run
            .cleanup_errors
            .push(format!("session abort took longer than {ABORT_BOUND:?}")),
    }
}

/// Wait (bounded) for every started tool call's completion, or for the session to go idle.
async fn wait_for_completions(slots: &Slots, run: &RunState) {
    let progress = slots.idle.lock().expect("slot").clone();
    let waited = tokio::time::timeout(COMPLETION_BOUND, async {
        while has_open_tool_calls(&run.log) && !progress.as_ref().is_some_and(|p| p.borrow().idle) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::debug!("some tool calls never reported a completion");
    }
}

/// Shut the session down on a pooled runtime and wait (bounded) for its `session.shutdown`; a
/// refused or late shutdown is a cleanup error.
async fn shut_down_session(session: &Session, run: &mut RunState) {
    let request = github_copilot_sdk::rpc::ShutdownRequest::default();
    match tokio::time::timeout(DISCONNECT_BOUND, session.rpc().shutdown(request)).await {
        Ok(Ok(())) => {
            let _ = tokio::time::timeout(DISCONNECT_BOUND, async {
                while !has_event(&run.log, SessionEventType::SessionShutdown) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await;
        }
        Ok(Err(e)) => run.cleanup_errors.push(format!(
            "the pooled runtime did not shut the session down: {e}"
        )),
        Err(_) => run.cleanup_errors.push(format!(
            "the pooled runtime did not shut the session down within {DISCONNECT_BOUND:?}"
        )),
    }
}

/// Stop the SDK client (the runtime), bounded; past the bound it is killed and that is a
/// cleanup error.
async fn stop_client(client: Client, run: &mut RunState) {
    match tokio::time::timeout(STOP_BOUND, client.stop()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::debug!("runtime stop reported: {e}");
            client.force_stop();
        }
        Err(_) => {
            run.cleanup_errors.push(format!(
                "the runtime did not stop within {STOP_BOUND:?}; it was killed"
            ));
            client.force_stop();
        }
    }
}

/// The recorder ends when the stream closes; give it a moment, then stop it. Whatever it had
/// not recorded by then is lost: the evidence is incomplete, and the result says so.
async fn stop_recorder(slots: &Slots, run: &RunState) {
    let recorder = slots.recorder.lock().expect("slot").take();
    if let Some(recorder) = recorder {
        let abort = recorder.abort_handle();
        if tokio::time::timeout(RECORDER_BOUND, recorder)
            .await
            .is_err()
        {
            abort.abort();
            run.capture_errors.lock().expect("errors lock").push(format!(
                "the event recorder had not reached the end of the event stream {RECORDER_BOUND:?} after the runtime stopped; it was stopped, and any event it had not recorded is missing"
            ));
        }
    }
}

/// After [`cleanup`]: record on `run` what the request proxy saw (held-back requests, audit
/// records, an audit or transport failure, or an audit that observed no model request), the
/// replay check's failure, the controls' admissions and denials, and a failure to remove the
/// private home. Nothing can reach the runtime any more.
pub(super) fn settle(
    run: &mut RunState,
    controls: &Controls,
    proxy: Option<(&RequestProxy, ProxyOptions)>,
    replay: Option<&dyn ReplayCheck>,
    turns_finished: bool,
    home: RunHome,
) {
    if let Some((proxy, proxy_options)) = proxy {
        run.model_requests_held_back = proxy.held_back();
        if proxy_options.offers {
            run.model_offers = Some(proxy.offers());
        }
        if proxy_options.audit {
            run.request_audit = proxy.records();
        }
        if let Some(failure) = proxy.failure() {
            run.fail(
                StopReason::RequestAuditError,
                format!("request audit: {failure}"),
            );
        } else if proxy_options.inspects() && run.prompt_sent && proxy.observed() == 0 {
            run.fail(
                StopReason::RequestAuditError,
                "request audit: no model request was observed; the audit cannot vouch for this run"
                    .to_owned(),
            );
        }
    }
    if let Some(mismatch) =
        replay.and_then(|r| r.mismatch(turns_finished && controls.stop_requested().is_none()))
    {
        run.fail(StopReason::ReplayMismatch, mismatch.to_string());
        run.replay_diagnosis = Some(mismatch);
    }
    // A handler that panicked after the turns ended (e.g. drained after a timeout) still fails
    // the run (recorded once: the same cause seen earlier is not repeated).
    if let Some(stop @ ControlStop::HandlerPanicked { .. }) = controls.stop_requested() {
        let (reason, error) = super::state::control_stop(&stop);
        run.stop(reason, error);
    }
    run.usage_unknown = replay.is_some_and(|r| r.usage_unknown());
    run.tool_calls_admitted = controls.admitted();
    run.denials = controls.denied();
    if let Err(e) = home.close() {
        run.cleanup_errors
            .push(format!("removing the runtime home failed: {e}"));
    }
}

/// Whether the log holds an event of `kind`.
fn has_event(log: &Mutex<Vec<LoggedEvent>>, kind: SessionEventType) -> bool {
    log.lock()
        .expect("log lock")
        .iter()
        .any(|logged| logged.event.kind() == kind)
}

/// Whether some `tool.execution_start` in the log has no `tool.execution_complete` yet.
fn has_open_tool_calls(log: &Mutex<Vec<LoggedEvent>>) -> bool {
    let log = log.lock().expect("log lock");
    let mut open = std::collections::HashSet::new();
    for logged in log.iter() {
        let event = &logged.event;
        match event.kind() {
            SessionEventType::ToolExecutionStart => {
                let start = event.read::<ToolExecutionStartData>();
                if !untyped::lacks_tool_call_id(&start) {
                    open.insert(start.data.tool_call_id);
                }
            }
            SessionEventType::ToolExecutionComplete => {
                let done = event.read::<ToolExecutionCompleteData>();
                if !untyped::lacks_tool_call_id(&done) {
                    open.remove(&done.data.tool_call_id);
                }
            }
            _ => {}
        }
    }
    !open.is_empty()
}

/// Every process whose environment carries this run's private home is the runtime or one of its
/// children. Any still alive now outlived the stop: kill it and report it ([`leftovers_error`]).
/// Then wait (bounded) until the runtime and every process killed here have exited: a process
/// that was just killed loses its environment before it is gone, so the environment alone
/// cannot say it has ended.
async fn kill_leftovers(run: &mut RunState, home: &std::path::Path) {
    let marker = format!("COPILOT_HOME={}", home.display());
    let mut watched: Vec<u32> = run.runtime_pid.into_iter().collect();
    // A stopped process can take a moment to be reaped.
    let mut left = runtime::processes_with_env(&marker);
    for _ in 0..20 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = runtime::processes_with_env(&marker);
    }
    if !left.is_empty() {
        // Named before they are killed (a killed process's command line is gone).
        let named: Vec<runtime::Leftover> =
            left.iter().copied().map(runtime::Leftover::of).collect();
        for pid in &left {
            runtime::kill_process(*pid);
        }
        run.cleanup_errors.push(leftovers_error(&named));
        watched.extend(&left);
    }
    let watched = runtime::wait_for_exits(watched, EXIT_BOUND).await;
    if !watched.is_empty() {
        run.cleanup_errors.push(format!(
            "runtime processes {watched:?} were killed but had not exited {EXIT_BOUND:?} later"
        ));
    }
}

/// The cleanup error of a run whose runtime's processes outlived its stop and were killed:
/// the same words whether a private runtime's sweep found them (by the run's home) or a pooled
/// runtime's (by the runtime's home, [`record_lease_end`]).
fn leftovers_error(leftovers: &[runtime::Leftover]) -> String {
    format!(
        "runtime processes outlived the stop and were killed: {}",
        runtime::describe_leftovers(leftovers)
    )
}

/// After a run on a pooled runtime gave it back: what the pool found and undid at the lease's
/// end ([`crate::run::pool::LeaseEnd`]) becomes the run's cleanup errors, as on a private
/// runtime: the processes its session left running (killed; [`leftovers_error`]), and a reset
/// of the runtime's folders that failed (the runtime is retired).
pub(super) fn record_lease_end(run: &mut RunState, end: crate::run::pool::LeaseEnd) {
    if !end.leftovers.is_empty() {
        run.cleanup_errors.push(leftovers_error(&end.leftovers));
    }
    run.cleanup_errors.extend(end.errors);
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::eval::CopilotEval;

    fn settled(prompt_sent: bool, audit: bool, remove_home_first: bool) -> crate::CopilotResult {
        let eval = CopilotEval::builder().build().unwrap();
        let mut run = RunState::new(&eval);
        run.prompt_sent = prompt_sent;
        let controls = Controls::new(None, vec![], None);
        let options = ProxyOptions {
            audit,
            image_detail: None,
            offers: false,
            reader_waits_for_send: false,
        };
        let proxy = RequestProxy::new(options, controls.clone());
        let home = tempfile::tempdir().unwrap();
        if remove_home_first {
            std::fs::remove_dir(home.path()).unwrap();
        }
        settle(
            &mut run,
            &controls,
            Some((proxy.as_ref(), options)),
            None,
            true,
            RunHome::Temporary(home),
        );
        run.finish(std::path::PathBuf::from("/w"), Instant::now())
    }

    /// The audit cannot vouch for a run whose prompt was sent but whose model requests never
    /// passed it (the real runtime always makes one after a prompt, so this is reached here).
    #[test]
    fn an_audit_that_observed_no_model_request_fails_the_run() {
        let result = settled(true, true, false);
        assert_eq!(result.stop_reason, StopReason::RequestAuditError);
        let error = result.error.unwrap();
        assert!(
            error.starts_with("request audit: no model request was observed"),
            "{error}"
        );
        // Not when the prompt was never sent, nor when nothing is inspected (these runs have
        // no events, so they end as an execution error, but not as an audit error).
        for (prompt_sent, audit) in [(false, true), (true, false)] {
            let result = settled(prompt_sent, audit, false);
            assert_ne!(result.stop_reason, StopReason::RequestAuditError);
            assert!(
                !result
                    .error
                    .unwrap_or_default()
                    .contains("no model request")
            );
        }
    }

    /// A private home that cannot be removed is a cleanup error, named.
    #[test]
    fn a_home_that_cannot_be_removed_is_a_cleanup_error() {
        let result = settled(false, false, true);
        assert_eq!(result.stop_reason, StopReason::CleanupError);
        assert!(
            result
                .cleanup_errors
                .iter()
                .any(|e| e.starts_with("removing the runtime home failed")),
            "{:?}",
            result.cleanup_errors
        );
        assert_eq!(
            settled(false, false, false).cleanup_errors,
            Vec::<String>::new()
        );
    }
}
