//! The run's state: everything a run accumulates ([`RunState`]), turned into the
//! [`CopilotResult`] at the end ([`RunState::finish`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::controls::{ControlStop, DeniedCall};
use crate::eval::CopilotEval;
use crate::evidence::audit::RequestAudit;
use crate::evidence::mcp::{McpServerState, mcp_servers};
use crate::evidence::{LoggedEvent, map_events};
use crate::result::replay::ReplayMismatch;
use crate::result::{CopilotResult, StopReason, Timings};

/// What the event recorder (`session`) has seen so far; the MCP check (`mcp_check`) waits on
/// it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Progress {
    pub(super) idle: bool,
    pub(super) session_error: bool,
    /// Root `session.idle` events seen (one per finished turn).
    pub(super) idles: u32,
    /// `session.mcp_*` events seen (the MCP check waits on these).
    pub(super) mcp_events: u32,
}

/// Everything the run accumulates; turned into the result by [`RunState::finish`].
pub(super) struct RunState {
    eval_name: String,
    model_requested: Option<String>,
    configuration: crate::eval::EvalSnapshot,
    pub(super) log: Arc<Mutex<Vec<LoggedEvent>>>,
    /// Each stop cause: its reason, and its error line (`None` for the eval's own end at a
    /// pending tool call, which is no error).
    pub(super) stops: Vec<(StopReason, Option<String>)>,
    pub(super) timings: Timings,
    pub(super) runtime_path: Option<PathBuf>,
    pub(super) runtime_pid: Option<u32>,
    /// The session ran on a leased pooled runtime.
    pub(super) pooled_runtime: bool,
    /// Why the session ran on a runtime of its own although a pool was offered
    /// ([`RunState::note_private_runtime`]).
    private_runtime_reason: Option<String>,
    pub(super) capture_errors: Arc<Mutex<Vec<String>>>,
    pub(super) cleanup_errors: Vec<String>,
    pub(super) tool_calls_admitted: u32,
    pub(super) model_requests_held_back: usize,
    pub(super) tool_handler_failures: Vec<String>,
    pub(super) denials: Vec<DeniedCall>,
    permission_layer: super::permissions::PermissionLayer,
    pub(super) request_audit: Vec<RequestAudit>,
    pub(super) prompt_sent: bool,
    /// The id of the session the runtime created or resumed, once it did.
    pub(super) session_id: Option<String>,
    /// Whether the session was resumed ([`RunOptions::resume`](super::RunOptions::resume)).
    pub(super) resumed: bool,
    /// The kinds of input the run goes without ([`RunOptions::ablate`](super::RunOptions::ablate)).
    pub(super) ablated: Vec<crate::eval::Ablate>,
    pub(super) skill_discovery: Option<super::skills::SkillDiscovery>,
    /// The eval's `disabled_skills`.
    disabled_skills: Vec<String>,
    /// The names of the MCP servers the eval configured, in order.
    pub(super) mcp_configured: Vec<String>,
    /// The names of the optional ones among them (`optional_mcp_server`).
    pub(super) mcp_optional: Vec<String>,
    /// Each configured server's `tools` filter as configured (`None`: all its tools).
    mcp_filters: Vec<(String, Option<Vec<String>>)>,
    /// The MCP servers' states as the check before the prompt saw them (fills what the event
    /// log leaves unreported).
    pub(super) mcp_checked: Vec<crate::evidence::mcp::McpServerState>,
    /// True while the MCP check before the prompt waits for the runtime's servers (a timeout
    /// then ends the run as `mcp_setup_error` naming the servers still starting).
    pub(super) mcp_checking: bool,
    /// The point of the session hatch while it runs (a timeout then names it).
    pub(super) hatch_running: Option<crate::eval::HatchPoint>,
    /// The eval's in-process MCP mocks, whose calls from this run's session the run claims.
    mcp_mocks: Vec<crate::mcp::McpMock>,
    /// The tag the run sends each mock ([`crate::mcp::RUN_HEADER`]): a fresh id per run.
    pub(super) mock_tag: String,
    /// Whether the replay made the token usage up ([`super::ReplayCheck::usage_unknown`]).
    pub(super) usage_unknown: bool,
    /// Why the replay failed the run ([`super::ReplayCheck::mismatch`]).
    pub(super) replay_diagnosis: Option<ReplayMismatch>,
    /// What each model request offered the model, as the request proxy forwarded it; `None`
    /// when the run did not keep offers (no MCP server, no custom agent).
    pub(super) model_offers: Option<Vec<crate::evidence::offered::ModelOffer>>,
    /// What the run's sandbox was, once decided (`super::sandbox::decide`).
    pub(super) sandbox: Option<crate::evidence::sandbox::SandboxRecord>,
    /// The policy to confine a private runtime with; taken when it starts.
    pub(super) confine: Option<super::sandbox::Policy>,
}

impl RunState {
    pub(super) fn new(eval: &CopilotEval) -> Self {
        Self {
            eval_name: eval.name.clone(),
            model_requested: eval.model.clone(),
            configuration: eval.snapshot(),
            log: Arc::default(),
            stops: Vec::new(),
            timings: Timings::default(),
            runtime_path: None,
            runtime_pid: None,
            pooled_runtime: false,
            private_runtime_reason: None,
            capture_errors: Arc::default(),
            cleanup_errors: Vec::new(),
            tool_calls_admitted: 0,
            model_requests_held_back: 0,
            tool_handler_failures: Vec::new(),
            denials: Vec::new(),
            permission_layer: super::permissions::PermissionLayer::of(eval),
            request_audit: Vec::new(),
            prompt_sent: false,
            session_id: None,
            resumed: false,
            ablated: Vec::new(),
            skill_discovery: None,
            disabled_skills: eval.disabled_skills.clone(),
            mcp_configured: eval.mcp_servers.keys().cloned().collect(),
            mcp_optional: eval.optional_mcp_servers.clone(),
            mcp_filters: eval
                .mcp_servers
                .iter()
                .map(|(name, config)| (name.clone(), tool_filter(config)))
                .collect(),
            mcp_checked: Vec::new(),
            mcp_checking: false,
            hatch_running: None,
            mcp_mocks: eval.mcp_mocks.clone(),
            mock_tag: uuid::Uuid::new_v4().to_string(),
            usage_unknown: false,
            replay_diagnosis: None,
            model_offers: None,
            sandbox: None,
            confine: None,
        }
    }

    /// The session runs on a runtime of its own although a pool was offered, for `reason`
    /// (`CopilotResult::private_runtime_reason`).
    pub(super) fn note_private_runtime(&mut self, reason: String) {
        self.private_runtime_reason = Some(reason);
    }

    /// Record a stop cause. The reason is decided at the end by [`StopReason::PRECEDENCE`].
    pub(super) fn fail(&mut self, reason: StopReason, error: String) {
        self.stop(reason, Some(error));
    }

    /// Record a stop cause with its error line, or none ([`control_stop`]: the eval's own end
    /// at a pending tool call).
    pub(super) fn stop(&mut self, reason: StopReason, error: Option<String>) {
        if !self.stops.iter().any(|(r, e)| *r == reason && *e == error) {
            self.stops.push((reason, error));
        }
    }

    /// The result: the evidence mapped from the event log, the stop reason decided by precedence
    /// over every recorded cause, and the errors joined in the order they were recorded.
    pub(super) fn finish(mut self, working_directory: PathBuf, started: Instant) -> CopilotResult {
        let log = std::mem::take(&mut *self.log.lock().expect("log lock"));
        let skill_warnings = self.skill_warnings();
        let mut evidence = map_events(&log);
        for denied in std::mem::take(&mut self.denials) {
            if let Some(call) = evidence.tool_calls.iter_mut().find(|c| {
                c.denied.is_none() && c.name == denied.tool && c.arguments == denied.arguments
            }) {
                call.denied = Some(denied.denial);
            }
        }
        let (mcp_servers, gave_nothing) = self.mcp_evidence(&log, &mut evidence);
        super::permissions::attach_permissions(
            &mut evidence.tool_calls,
            &log,
            self.permission_layer,
        );
        let substitutions = crate::evidence::substitutions::runtime_substitutions(
            &mut evidence.tool_calls,
            log.iter().map(|l| &l.event),
            &mcp_servers,
        );
        crate::evidence::subagents::refresh_tool_calls(
            &mut evidence.subagent_invocations,
            &evidence.tool_calls,
        );
        let mut capture_errors = self.capture_errors.lock().expect("errors lock").clone();
        capture_errors.extend(evidence.capture_errors.iter().cloned());
        let (causes, mut warnings) =
            self.causes(&evidence, substitutions, gave_nothing, skill_warnings);
        let sandbox = self.sandbox.take().map(|mut record| {
            if record.state == crate::evidence::sandbox::SandboxState::Confined {
                record.refusals = crate::evidence::sandbox::refusals(&evidence.tool_calls);
            }
            warnings.extend(super::sandbox::unsandboxed_warning(&record));
            record
        });
        let Causes {
            stop_reason,
            errors,
        } = causes;
        let error = (!errors.is_empty()).then(|| join_causes(&errors));
        let success = stop_reason.class() == crate::result::StopClass::Completed && error.is_none();
        let evidence_complete = capture_errors.is_empty();
        CopilotResult {
            eval_name: self.eval_name,
            model_requested: self.model_requested,
            model_used: evidence.model_used,
            success,
            stop_reason,
            error,
            prompts: Vec::new(),
            turns: evidence.turns,
            tool_calls: evidence.tool_calls,
            final_response: evidence.final_response,
            skill_discovery: self.skill_discovery,
            mcp_servers,
            skill_invocations: evidence.skill_invocations,
            subagent_invocations: evidence.subagent_invocations,
            usage: evidence.usage,
            usage_unknown: self.usage_unknown,
            replay_diagnosis: self.replay_diagnosis,
            warnings,
            duration_ms: started.elapsed().as_millis() as u64,
            timings: self.timings,
            working_directory,
            runtime_path: self.runtime_path,
            runtime_pid: self.runtime_pid,
            pooled_runtime: self.pooled_runtime,
            private_runtime_reason: self.private_runtime_reason,
            request_audit: self.request_audit,
            tool_calls_admitted: self.tool_calls_admitted,
            model_requests_held_back: self.model_requests_held_back,
            tool_handler_failures: self.tool_handler_failures,
            cleanup_errors: self.cleanup_errors,
            capture_errors,
            evidence_complete,
            raw_events: log.into_iter().map(|l| l.event).collect(),
            configuration: self.configuration,
            session_id: self.session_id,
            resumed: self.resumed,
            ablated: self.ablated,
            sandbox,
            origin: None,
        }
    }

    /// The skill discovery's warnings on what the model was offered of the skills (none without
    /// a discovery).
    fn skill_warnings(&mut self) -> Vec<String> {
        self.skill_discovery
            .as_mut()
            .map(|d| {
                let offered: Vec<super::skills::OfferedSkills> = (self.model_offers.iter())
                    .flatten()
                    .filter(|o| !o.subagent)
                    .map(|o| o.skills.clone())
                    .collect();
                super::skills::model_view(d, &offered, &self.disabled_skills)
            })
            .unwrap_or_default()
    }

    /// The MCP servers' states from the events and the MCP check, with what the model was
    /// offered of each connected server's tools (the subagents' offers attached to
    /// `evidence`); and, for each connected server that gave the model nothing, whether it is
    /// optional and why.
    fn mcp_evidence(
        &self,
        log: &[LoggedEvent],
        evidence: &mut crate::evidence::Evidence,
    ) -> (Vec<McpServerState>, Vec<(bool, String)>) {
        let (mut mcp_servers, _) = mcp_servers(log.iter().map(|l| &l.event), &self.mcp_configured);
        crate::evidence::mcp::mark_optional(&mut mcp_servers, &self.mcp_optional);
        for state in &mut mcp_servers {
            if let Some(checked) = self.mcp_checked.iter().find(|c| c.name == state.name) {
                if state.status == crate::evidence::mcp::UNREPORTED {
                    state.status = checked.status.clone();
                    state.error = checked.error.clone();
                }
                state.tool_count = state.tool_count.or(checked.tool_count);
                state.tools = checked.tools.clone();
                state.warnings = checked.warnings.clone();
            }
            if let Some(mock) = self.mcp_mocks.iter().find(|m| m.name() == state.name) {
                state.received_calls = Some(mock.claim(&self.mock_tag, self.session_id.as_deref()));
                if let Some(warning) =
                    crate::evidence::mcp::received_mismatch(state, &evidence.tool_calls)
                {
                    state.warnings.push(warning);
                }
            }
        }
        // What the model was offered: each connected server's tools the model requests carried.
        let offers = self.model_offers.as_deref().unwrap_or_default();
        let mut offered: Vec<String> = Vec::new();
        for tool in offers.iter().flat_map(|o| &o.tools) {
            if !offered.contains(tool) {
                offered.push(tool.clone());
            }
        }
        let mut gave_nothing = Vec::new();
        if !offers.is_empty() {
            for state in mcp_servers.iter_mut().filter(|s| s.status == "connected") {
                state.offered_tools = Some(crate::evidence::mcp::offered_names(
                    state,
                    &self.mcp_configured,
                    &offered,
                ));
                let filter = self
                    .mcp_filters
                    .iter()
                    .find(|(name, _)| *name == state.name)
                    .and_then(|(_, filter)| filter.as_deref());
                if let Some(why) = crate::evidence::mcp::gave_nothing(state, filter) {
                    if state.optional {
                        state.warnings.push(why.clone());
                    }
                    gave_nothing.push((state.optional, why));
                }
            }
            crate::evidence::subagents::attach_offers(&mut evidence.subagent_invocations, offers);
        }
        (mcp_servers, gave_nothing)
    }

    /// Every cause of the stop, in the order they are reported (the recorded stops, the
    /// runtime's substitutions, required MCP servers that gave nothing, undispatchable agents,
    /// session errors, a missing idle, cleanup errors), and the run's warnings.
    fn causes(
        &self,
        evidence: &crate::evidence::Evidence,
        substitutions: Vec<String>,
        gave_nothing: Vec<(bool, String)>,
        skill_warnings: Vec<String>,
    ) -> (Causes, Vec<String>) {
        let mut causes = Causes {
            stop_reason: StopReason::Completed,
            errors: Vec::new(),
        };
        for (reason, error) in &self.stops {
            match error {
                Some(line) => causes.add(*reason, line.clone()),
                // The eval's own end at a pending tool call: a reason, no error.
                None => causes.raise(*reason),
            }
        }
        for cause in substitutions {
            causes.add(StopReason::RuntimeSubstitution, cause);
        }
        let mut warnings = skill_warnings;
        for (optional, why) in gave_nothing {
            if optional {
                warnings.push(why);
            } else {
                causes.add(StopReason::McpSetupError, why);
            }
        }
        warnings.extend(crate::evidence::subagents::ended_without_response(
            &evidence.subagent_invocations,
        ));
        for (agent, e) in model_unavailable(&evidence.subagent_invocations) {
            causes.add(
                StopReason::ModelUnavailable,
                format!(
                    "the runtime could not dispatch custom agent `{agent}`: {e} (the agent's model is not in the model catalog; the subagent never ran)"
                ),
            );
        }
        for e in &evidence.session_errors {
            causes.add(StopReason::ExecutionError, format!("session.error: {e}"));
        }
        if causes.stop_reason == StopReason::Completed && !evidence.idle {
            causes.add(
                StopReason::ExecutionError,
                "the session ended without session.idle".to_owned(),
            );
        }
        for e in &self.cleanup_errors {
            causes.add(StopReason::CleanupError, format!("cleanup: {e}"));
        }
        (causes, warnings)
    }
}

/// The stop reason so far (the highest of the causes) and the causes' lines, each once, in the
/// order they were added.
struct Causes {
    stop_reason: StopReason,
    errors: Vec<String>,
}

impl Causes {
    /// Raise the stop reason to `reason` (by [`StopReason::PRECEDENCE`]).
    fn raise(&mut self, reason: StopReason) {
        self.stop_reason = self.stop_reason.max(reason);
    }

    /// Add a cause: `reason` raises the stop reason; `line` is kept unless already there.
    fn add(&mut self, reason: StopReason, line: String) {
        self.raise(reason);
        if !self.errors.contains(&line) {
            self.errors.push(line);
        }
    }
}

/// The `tools` filter of an MCP server's configuration (`None`: all its tools).
fn tool_filter(config: &github_copilot_sdk::McpServerConfig) -> Option<Vec<String>> {
    match config {
        github_copilot_sdk::McpServerConfig::Stdio(stdio) => stdio.tools.clone(),
        github_copilot_sdk::McpServerConfig::Http(http)
        | github_copilot_sdk::McpServerConfig::Sse(http) => http.tools.clone(),
        _ => None,
    }
}

/// The dispatches the runtime failed because the agent's model is not available (its `task`
/// call or `subagent.failed` says "Model ... is not available"): `(agent name, error)`. Pure.
pub(super) fn model_unavailable(
    invocations: &[crate::evidence::subagents::SubagentInvocation],
) -> Vec<(String, String)> {
    invocations
        .iter()
        .filter_map(|i| {
            let error = i.error.as_deref()?;
            (error.contains("Model ") && error.contains("is not available"))
                .then(|| (i.name.clone(), error.to_owned()))
        })
        .collect()
}

/// The causes of a run's failure as one text: joined with `; `, except that a cause next to one
/// that spans several lines (a replay diagnosis) starts a line of its own, so that it is never
/// glued to the end of the other's last line.
pub(super) fn join_causes(causes: &[String]) -> String {
    let mut text = String::new();
    for (i, cause) in causes.iter().enumerate() {
        if i > 0 {
            let multiline = cause.contains('\n') || causes[i - 1].contains('\n');
            text.push_str(if multiline { "\n" } else { "; " });
        }
        text.push_str(cause);
    }
    text
}

/// The stop reason and error text of a control stop (`None`: no error).
pub(super) fn control_stop(stop: &ControlStop) -> (StopReason, Option<String>) {
    match stop {
        ControlStop::BudgetExceeded { max, tool } => (
            StopReason::ToolBudgetExceeded,
            Some(crate::evidence::denial::budget_exhausted(*max, tool)),
        ),
        ControlStop::GuardFailed(message) => (StopReason::ExecutionError, Some(message.clone())),
        ControlStop::HandlerPanicked { tool, message } => (
            StopReason::ExecutionError,
            Some(format!("the tool handler `{tool}` panicked: {message}")),
        ),
        ControlStop::AuditFailed(message) => (
            StopReason::RequestAuditError,
            Some(format!("request audit: {message}")),
        ),
        // What the eval asked for: no error line (the call is the last of `tool_calls`).
        ControlStop::PendingToolCall { .. } => (StopReason::PendingToolCall, None),
    }
}

#[cfg(test)]
mod tests {
    use super::join_causes;

    /// A cause after a diagnosis of several lines (a replay mismatch) starts a line of its own;
    /// one-line causes share a line.
    #[test]
    fn a_cause_after_a_diagnosis_is_on_its_own_line() {
        let causes = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(join_causes(&causes(&["a", "b"])), "a; b");
        assert_eq!(
            join_causes(&causes(&[
                "replay mismatch: model request 1 ...\n    request:  user \"x\"",
                "session.error: query: Execution failed",
                "cleanup: slow",
            ])),
            "replay mismatch: model request 1 ...\n    request:  user \"x\"\nsession.error: query: Execution failed; cleanup: slow"
        );
        assert_eq!(join_causes(&[]), "");
    }
}
