//! Why a run ended: [`StopReason`], the precedence that picks one reason when a run saw several
//! causes ([`StopReason::PRECEDENCE`]), and what each reason says about the run
//! ([`StopReason::class`]). The runner, the reports and `drift` read the class from here; no
//! other module lists the reasons.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a run ended. The artifacts hold its text (`completed`, `timeout`, ...: `as_str`), written
/// and read back as this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The session reached `session.idle` with no error.
    Completed,
    /// `timeout_s` elapsed after the prompt was sent, before the session went idle: the agent
    /// did not finish in time. (The clock starts before the runtime does, but a timeout before
    /// the prompt was sent is not the agent's: it is an `execution_error`, or an
    /// `mcp_setup_error` while an MCP server was still starting.)
    Timeout,
    /// Anything else that ended the run with an error: the runtime could not be found or started,
    /// the session could not be created, `timeout_s` elapsed before the prompt was sent (the
    /// runtime still starting, the session not created yet: `error` names the phase), the
    /// model request failed (`session.error`), the
    /// session configuration was rejected, a caller pre-tool guard failed or panicked, or an
    /// in-process tool handler panicked (`error`: "the tool handler `NAME` panicked: ...").
    ExecutionError,
    /// A requested skill could not be set up, so no model request was made: a skill folder held
    /// no valid skill (checked before the runtime starts), or the runtime did not discover a
    /// requested skill or has it disabled (checked after the session is created, before the
    /// prompt). `skill_discovery` says what was requested and what the runtime saw
    /// ([`crate::run::skills`]).
    SkillSetupError,
    /// A required MCP server the eval configured (`mcp_server`; never one added with
    /// `optional_mcp_server`) was not connected when the runtime
    /// settled its servers, checked after the session is created and before the prompt is sent
    /// (no model request was made): the runtime reported it `failed` (e.g. the command could
    /// not start), `needs-auth`, `not_configured`, `disabled` or `stopped`, or never reported
    /// it; or the eval's `timeout_s` elapsed while the runtime was still starting a server (it
    /// stays `pending`, e.g. a stdio server that never answers `initialize`). `error` names each
    /// such server and its status; `mcp_servers` lists every configured server's status and tool
    /// count. Also, after the run, a required server that was connected but gave the model no
    /// tool: no model request offered any of its tools (its `tools` filter matched none of the
    /// tools it lists, or it lists none); `error` names the server and why, and its
    /// `offered_tools` is empty.
    McpSetupError,
    /// The scripted model (`EvalContext::offline`) ran out of turns: the runtime asked for one
    /// more model turn than the script holds (the extra request was answered `500`, ending the
    /// session). The test author's own mistake, not an infrastructure stop: the runner reports
    /// the test `failed`. Set by the harness, which knows the script; a plain
    /// [`crate::run_with`] against a [`crate::model_server::ModelServer`] reports
    /// `execution_error`.
    ScriptExhausted,
    /// The runtime could not dispatch a custom agent because the agent's `model` is not
    /// available (the `task` call failed "Model ... is not available": offline, a model the
    /// catalog of [`EvalContext::offline`](crate::harness::EvalContext::offline) lacks; live,
    /// one the account cannot use). The runtime carries on without the subagent, so the run would
    /// otherwise end `completed` with an answer the subagent never gave. An infrastructure stop:
    /// the runtime's doing, not the model's. `error` names the agent and the runtime's text.
    ModelUnavailable,
    /// The tool call past `max_tool_calls` was denied; the session was aborted and no further
    /// model request was forwarded.
    ToolBudgetExceeded,
    /// A cassette replay went wrong: a model request matched no recorded conversation (it was
    /// answered 400 at once, ending the turn), or the turns ended before every recorded reply
    /// was served. `error` holds the diagnosis ([`crate::cassette`]).
    ReplayMismatch,
    /// A tool call failed because of what the runtime itself changed, not because of what the
    /// model asked: the model called a tool with an empty name (the runtime renamed the call
    /// `invalid_tool_call` and answered "Tool name is missing or empty"), or the model called
    /// an MCP tool by its full `<server>-<tool>` name where the runtime had cut that name to 64
    /// characters (the call failed "Tool ... does not exist"). Such a call has
    /// [`ToolCall::runtime_name`](crate::ToolCall::runtime_name) set; `error` names each. An
    /// infrastructure stop, never `completed`: the eval did not test the model. A failed call
    /// with any other unknown name is the model's own doing and stays for the test to judge.
    RuntimeSubstitution,
    /// The request audit could not check a model request (an unsupported frame, schema or body,
    /// a WebSocket transport failure, or no model request observed with the audit on); nothing
    /// was forwarded after it.
    RequestAuditError,
    /// Cleanup failed: the session could not be aborted, the runtime did not stop in time, or a
    /// runtime process outlived the stop and had to be killed.
    CleanupError,
    /// The run ended on purpose at a tool call left pending: the model called the eval's
    /// `end_at_tool_call` tool, whose handler was not called; the turn was not aborted and the
    /// runtime was stopped with the call pending, so a later run can resume the session and
    /// continue it (`ctx.resume_with` with `continue_pending_work(true)`). What the eval asked
    /// for: `success` is `true` when nothing else went wrong, and the call is the last of
    /// `tool_calls`, without a result.
    PendingToolCall,
}

impl StopReason {
    /// The value as written in reports: `completed`, `timeout`, `execution_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Timeout => "timeout",
            Self::ExecutionError => "execution_error",
            Self::SkillSetupError => "skill_setup_error",
            Self::McpSetupError => "mcp_setup_error",
            Self::ScriptExhausted => "script_exhausted",
            Self::ModelUnavailable => "model_unavailable",
            Self::ToolBudgetExceeded => "tool_budget_exceeded",
            Self::ReplayMismatch => "replay_mismatch",
            Self::RuntimeSubstitution => "runtime_substitution",
            Self::RequestAuditError => "request_audit_error",
            Self::CleanupError => "cleanup_error",
            Self::PendingToolCall => "pending_tool_call",
        }
    }

    /// Every reason, from the highest precedence to the lowest. When several causes are seen in
    /// one run, the reason is the one that comes first here (so the same causes always give the
    /// same reason, whatever their timing); the error text keeps every cause, each once.
    pub const PRECEDENCE: [StopReason; 13] = [
        Self::CleanupError,
        Self::RequestAuditError,
        Self::ToolBudgetExceeded,
        Self::ReplayMismatch,
        Self::RuntimeSubstitution,
        Self::Timeout,
        Self::SkillSetupError,
        Self::McpSetupError,
        Self::ModelUnavailable,
        Self::ScriptExhausted,
        Self::ExecutionError,
        Self::PendingToolCall,
        Self::Completed,
    ];

    /// The reason of higher precedence of the two.
    pub fn max(self, other: StopReason) -> StopReason {
        let rank = |r: StopReason| Self::PRECEDENCE.iter().position(|p| *p == r).unwrap_or(0);
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }

    /// What the reason says about the run, for the runner's verdict and the reports (see
    /// [`StopClass`]). The one place that sorts the reasons: the runner's `error` outcome, the
    /// reports and `drift` all ask this.
    pub fn class(self) -> StopClass {
        match self {
            Self::Completed | Self::PendingToolCall => StopClass::Completed,
            Self::Timeout | Self::ToolBudgetExceeded | Self::ScriptExhausted => StopClass::Failed,
            Self::ExecutionError
            | Self::SkillSetupError
            | Self::McpSetupError
            | Self::ModelUnavailable
            | Self::ReplayMismatch
            | Self::RuntimeSubstitution
            | Self::RequestAuditError
            | Self::CleanupError => StopClass::Infrastructure,
        }
    }

    /// Whether the reason is an infrastructure stop ([`StopClass::Infrastructure`]).
    pub fn is_infrastructure(self) -> bool {
        self.class() == StopClass::Infrastructure
    }
}

/// What a [`StopReason`] says about a run ([`StopReason::class`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopClass {
    /// The run did what it was asked: `completed`, or `pending_tool_call` (it ended at the tool
    /// call the eval named in `end_at_tool_call`).
    Completed,
    /// A verdict on the task (`timeout`, `tool_budget_exceeded`) or the test's own mistake
    /// (`script_exhausted`), which the test's checks judge: the runner reports the test `failed`
    /// when they fail.
    Failed,
    /// The run did not do what the test asked for, for a reason other than the task's outcome:
    /// the runtime, the session, a model request or the cleanup failed (`execution_error`,
    /// `cleanup_error`), a request could not be audited (`request_audit_error`), the cassette no
    /// longer fits the eval (`replay_mismatch`), a skill or MCP server the eval configured was
    /// not set up (`skill_setup_error`, `mcp_setup_error`), a custom agent's model was not
    /// available (`model_unavailable`), or a tool call failed because of what the runtime
    /// changed (`runtime_substitution`). The runner reports a test with such a run as `error`
    /// (`run`), whether its own checks passed or failed, unless the test declared that stop
    /// with `ctx.expect_stop(..)` (the run's `expected_stop`).
    Infrastructure,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_one_fixed_order() {
        use StopReason::*;
        assert_eq!(Timeout.max(ToolBudgetExceeded), ToolBudgetExceeded);
        assert_eq!(ToolBudgetExceeded.max(Timeout), ToolBudgetExceeded);
        assert_eq!(Completed.max(ExecutionError), ExecutionError);
        assert_eq!(Timeout.max(CleanupError), CleanupError);
        assert_eq!(Completed.max(Completed), Completed);
        assert_eq!(Timeout.max(ReplayMismatch), ReplayMismatch);
        assert_eq!(ExecutionError.max(ReplayMismatch), ReplayMismatch);
        assert_eq!(ExecutionError.max(ScriptExhausted), ScriptExhausted);
        assert_eq!(ScriptExhausted.max(CleanupError), CleanupError);
        assert_eq!(ReplayMismatch.max(ToolBudgetExceeded), ToolBudgetExceeded);
        assert_eq!(ExecutionError.max(SkillSetupError), SkillSetupError);
        assert_eq!(SkillSetupError.max(Timeout), Timeout);
        assert_eq!(Timeout.max(RuntimeSubstitution), RuntimeSubstitution);
        assert_eq!(RuntimeSubstitution.max(ReplayMismatch), ReplayMismatch);
    }

    /// Every reason is written as its `as_str` text and read back from it; the classes are the
    /// ones the runner's verdict documents.
    #[test]
    fn reasons_round_trip_as_their_text_and_each_has_its_class() {
        for reason in StopReason::PRECEDENCE {
            let json = serde_json::to_value(reason).unwrap();
            assert_eq!(json, serde_json::json!(reason.as_str()));
            assert_eq!(serde_json::from_value::<StopReason>(json).unwrap(), reason);
        }
        let unknown = serde_json::from_value::<StopReason>(serde_json::json!("exploded"));
        assert!(unknown.is_err());
        let of = |class: StopClass| -> Vec<&str> {
            StopReason::PRECEDENCE
                .into_iter()
                .filter(|r| r.class() == class)
                .map(StopReason::as_str)
                .collect()
        };
        assert_eq!(of(StopClass::Completed), ["pending_tool_call", "completed"]);
        assert_eq!(
            of(StopClass::Failed),
            ["tool_budget_exceeded", "timeout", "script_exhausted"]
        );
        assert_eq!(
            of(StopClass::Infrastructure),
            [
                "cleanup_error",
                "request_audit_error",
                "replay_mismatch",
                "runtime_substitution",
                "skill_setup_error",
                "mcp_setup_error",
                "model_unavailable",
                "execution_error",
            ]
        );
    }

    /// Every list of the infrastructure stops, in the docs and in doc comments, names exactly
    /// the reasons whose class is [`StopClass::Infrastructure`]: a reason added to the class,
    /// or moved out of it, makes this fail until each list says so.
    #[test]
    fn every_list_of_the_infrastructure_stops_names_exactly_the_class() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        // (file, the text just before the list, the text just after it)
        let lists = [
            (
                "docs/guide.md",
                "a run that ended on an infrastructure stop (",
                ": the reasons whose",
            ),
            (
                "docs/command.md",
                "a run ended on an infrastructure stop —",
                "— that the test did not declare",
            ),
            (
                "docs/command.md",
                "**Infrastructure stops.**",
                "A test whose checks pass",
            ),
            (
                "docs/budgets-guards-stops.md",
                "Under `cargo copilot-eval`, ",
                "are infrastructure stops",
            ),
        ];
        let mut expected: Vec<&str> = StopReason::PRECEDENCE
            .into_iter()
            .filter(|r| r.is_infrastructure())
            .map(StopReason::as_str)
            .collect();
        expected.sort_unstable();
        for (file, before, after) in lists {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            // Doc comments and Markdown alike as one line of words.
            let text = text
                .lines()
                .map(|l| l.trim().trim_start_matches("///").trim())
                .collect::<Vec<_>>()
                .join(" ");
            let start = text
                .find(before)
                .unwrap_or_else(|| panic!("{file} has no {before:?}"))
                + before.len();
            let end = start
                + text[start..]
                    .find(after)
                    .unwrap_or_else(|| panic!("{file} has no {after:?} after {before:?}"));
            let list = &text[start..end];
            let mut named: Vec<&str> = StopReason::PRECEDENCE
                .into_iter()
                .map(StopReason::as_str)
                .filter(|r| list.contains(&format!("`{r}`")))
                .collect();
            named.sort_unstable();
            assert_eq!(
                named, expected,
                "{file}: the infrastructure stops listed after {before:?} are not the reasons of class Infrastructure"
            );
        }
    }
}
