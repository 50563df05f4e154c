//! The artifacts' run record of a run's [`CopilotResult`]: [`RunRecord::from_result`]. The record
//! is the result itself (its serde attributes write the report's shape) with what the runner
//! adds; only usage counts are changed, in one place below.

use super::*;

impl RunRecord {
    /// The record of `result`, whose model requests went where `mode` says (`live`, `replay`
    /// or `scripted`): the result without its raw events (the session's premium requests are
    /// read from them into `totals`), its usage counts 0 when they are made up
    /// ([`CopilotResult::usage_unknown`]), its sums, skills and subagents.
    pub fn from_result(result: &CopilotResult, mode: &str) -> Self {
        let mut result = result.clone();
        // The one place the report's usage differs from the evidence: made-up counts (a replay
        // without recorded usage) are written as 0, and `totals.tokens` says `unknown`.
        if result.usage_unknown {
            for usage in &mut result.usage {
                *usage = Usage {
                    input_tokens: 0,
                    output_tokens: 0,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                    ..usage.clone()
                };
            }
        }
        let totals = RunTotals::of(&result, mode);
        result.raw_events = Vec::new();
        RunRecord {
            skills_invoked: result.skills_invoked(),
            skills_preloaded: result.skills_preloaded(),
            subagents: result.subagents(),
            result,
            label: None,
            mode: mode.to_owned(),
            totals,
            replay: None,
            recording: None,
            resumed_from: None,
            expected_stop: None,
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

impl RunTotals {
    /// The sums of `result` (its usage as the record writes it), whose model requests went
    /// where `mode` says; not priced yet (`estimated_cost` is set by the runner).
    pub fn of(result: &CopilotResult, mode: &str) -> Self {
        let usage = &result.usage;
        let costs: Vec<f64> = usage.iter().filter_map(|u| u.cost).collect();
        RunTotals {
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
            tool_calls: result.tool_calls.len() as u64,
            premium_requests: result.premium_requests(),
            estimated_cost: None,
            cost_not_applicable: (mode == "scripted")
                .then(|| super::cost::SCRIPTED_MODEL.to_owned()),
        }
    }
}
