//! The artifacts' run record built from a run's [`CopilotResult`]: [`RunRecord::from_result`].
//! Tool calls, usage, timings, MCP servers and subagent invocations are the result's own values
//! (their types write the report's shape); only usage counts are changed, in one place below.

use super::*;
use crate::eval::{AgentMode, Attachment};

/// The options one prompt of a run was sent with ([`crate::eval::Prompt`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PromptOptionsRecord {
    /// The prompt's number in the run's `prompts` (from 1).
    pub prompt: u64,
    /// The agent mode it was sent in (`interactive`, `plan`, `autopilot`, `shell`); absent: the
    /// session's current mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// Its attachments, in order: `type` is `file`, `directory`, `selection` (with the selected
    /// `text` read from the file) or `github_reference`; paths as the test gave them, relative
    /// to the run's `working_directory` unless absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

impl RunRecord {
    /// Mirror `result` for the artifacts. `mode` is `live`, `replay` or `scripted`; `prompt` is
    /// the prompt that was sent. A run of several prompts: [`from_conversation`](Self::from_conversation).
    pub fn from_result(result: &CopilotResult, mode: &str, prompt: &str) -> Self {
        Self::from_conversation(result, mode, &[prompt.to_owned()])
    }

    /// [`from_result`](Self::from_result) for a run that sent `prompts` in one session, in
    /// order: `prompt` is the first, `prompts` all of them, and each message of `turns` has the
    /// number of the prompt it is or answers.
    pub fn from_conversation(result: &CopilotResult, mode: &str, prompts: &[String]) -> Self {
        let tool_calls = result.tool_calls.clone();
        // The one place the report's usage differs from the evidence: made-up counts (a replay
        // without recorded usage) are written as 0, and `totals.tokens` says `unknown`.
        let usage: Vec<Usage> = result
            .usage
            .iter()
            .map(|u| {
                if result.usage_unknown {
                    Usage {
                        input_tokens: 0,
                        output_tokens: 0,
                        cache_read_tokens: 0,
                        cache_write_tokens: 0,
                        ..u.clone()
                    }
                } else {
                    u.clone()
                }
            })
            .collect();
        let costs: Vec<f64> = usage.iter().filter_map(|u| u.cost).collect();
        let totals = RunTotals {
            tokens: if result.usage_unknown {
                TokenUsage::Unknown
            } else {
                TokenUsage::Reported
            },
            model_calls: usage.len() as u64,
            input_tokens: usage.iter().map(|u| u.input_tokens).sum(),
            output_tokens: usage.iter().map(|u| u.output_tokens).sum(),
            cache_read_tokens: usage.iter().map(|u| u.cache_read_tokens).sum(),
            cache_write_tokens: usage.iter().map(|u| u.cache_write_tokens).sum(),
            cost: (!costs.is_empty()).then(|| costs.iter().sum()),
            tool_calls: tool_calls.len() as u64,
            premium_requests: crate::evidence::reported_premium_requests(&result.raw_events),
            estimated_cost: None,
            cost_not_applicable: (mode == "scripted")
                .then(|| super::cost::SCRIPTED_MODEL.to_owned()),
        };
        let skills_invoked = if result.skill_invocations.is_empty() {
            tool_calls
                .iter()
                .filter(|c| c.name == "skill")
                .filter_map(|c| c.arguments.get("skill").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        } else {
            result
                .skill_invocations
                .iter()
                .filter(|i| !i.is_preload())
                .map(|i| i.name.clone())
                .collect()
        };
        let skills_preloaded = result
            .skill_invocations
            .iter()
            .filter(|i| i.is_preload())
            .map(|i| i.name.clone())
            .collect();
        let mut subagents: Vec<String> = Vec::new();
        for id in tool_calls
            .iter()
            .filter_map(|c| c.agent_id.as_ref())
            .chain(usage.iter().filter_map(|u| u.agent_id.as_ref()))
        {
            if !subagents.contains(id) {
                subagents.push(id.clone());
            }
        }
        RunRecord {
            eval_name: result.eval_name.clone(),
            mode: mode.to_owned(),
            prompt: prompts.first().cloned().unwrap_or_default(),
            prompts: prompts.to_vec(),
            prompt_options: result
                .prompts
                .iter()
                .enumerate()
                .filter(|(_, p)| p.has_options())
                .map(|(index, p)| PromptOptionsRecord {
                    prompt: index as u64 + 1,
                    mode: p.mode,
                    attachments: p.attachments.clone(),
                })
                .collect(),
            model_requested: result.model_requested.clone(),
            model_used: result.model_used.clone(),
            success: result.success,
            stop_reason: result.stop_reason,
            error: result.error.clone(),
            capture_errors: result.capture_errors.clone(),
            evidence_complete: result.evidence_complete,
            cleanup_errors: result.cleanup_errors.clone(),
            tool_handler_failures: result.tool_handler_failures.clone(),
            tool_calls_admitted: result.tool_calls_admitted,
            configuration: result.configuration.clone(),
            turns: result
                .turns
                .iter()
                .scan(0u64, |prompt, t| {
                    if t.role == Role::User {
                        *prompt += 1;
                    }
                    Some(TurnRecord {
                        role: match t.role {
                            Role::User => "user".to_owned(),
                            Role::Assistant => "assistant".to_owned(),
                        },
                        content: t.content.clone(),
                        tool_call_ids: t.tool_call_ids.clone(),
                        prompt: (*prompt > 0).then_some(*prompt),
                    })
                })
                .collect(),
            tool_calls,
            final_response: result.final_response.clone(),
            usage,
            totals,
            duration_ms: result.duration_ms,
            pooled_runtime: result.pooled_runtime,
            timings: result.timings.clone(),
            working_directory: result.working_directory.display().to_string(),
            skills_invoked,
            skills_preloaded,
            skill_discovery: result.skill_discovery.clone(),
            mcp_servers: result.mcp_servers.clone(),
            skill_invocations: result.skill_invocations.clone(),
            subagents,
            subagent_invocations: result.subagent_invocations.clone(),
            audit: (!result.request_audit.is_empty()).then(|| result.request_audit.clone()),
            replay: None,
            recording: None,
            label: None,
            session_id: result.session_id.clone(),
            resumed_from: None,
            expected_stop: None,
            warnings: result.warnings.clone(),
        }
    }

    /// Whether this run's stop reason is an infrastructure stop
    /// ([`StopClass::Infrastructure`](crate::StopClass::Infrastructure)) rather than a verdict on
    /// the task (`completed`, `timeout`, `tool_budget_exceeded`) or the test's own mistake
    /// (`script_exhausted`).
    pub fn is_infrastructure_stop(&self) -> bool {
        self.stop_reason.is_infrastructure()
    }

    /// Whether this run ended on an infrastructure stop the test did not declare with
    /// `ctx.expect_stop(..)` (its `expected_stop`): the runner makes such a test an `error`.
    pub fn is_unexpected_infrastructure_stop(&self) -> bool {
        self.is_infrastructure_stop() && self.expected_stop != Some(self.stop_reason)
    }

    /// The stop the test declared for this run with `ctx.expect_stop(..)`, when the run stopped
    /// otherwise.
    pub fn unmet_expected_stop(&self) -> Option<StopReason> {
        self.expected_stop
            .filter(|expected| *expected != self.stop_reason)
    }
}
