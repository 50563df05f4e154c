//! Trigger and dormancy checks of skills: [`EvalContext::expect_trigger`] reads whether a run
//! invoked a skill and records the typed check ([`TriggerCheck`]) in the test's evidence, from
//! which the runner aggregates each skill's trigger and false-trigger rates
//! ([`crate::report::triggers`]).

use super::EvalContext;
use crate::report::{Trigger, TriggerCheck};
use crate::result::CopilotResult;

impl EvalContext {
    /// Check whether `result`'s run invoked the skill `skill` as `expected` says, record the
    /// check in the artifacts and return it: `check.held()` says whether it held, and the
    /// check's text (`Display`) says what happened, e.g. `release-notes was not invoked
    /// although the prompt should trigger it`.
    ///
    /// - [`Trigger::Invoke`]: the prompt should make the model invoke the skill; the check
    ///   holds when a `skill.invoked` event of the run names it
    ///   ([`CopilotResult::skill_was_invoked`], main agent or a subagent).
    /// - [`Trigger::Dormant`]: the prompt should not; the check holds when no such event names
    ///   it, and an invocation is a false trigger.
    ///
    /// The check is recorded as it is (`{skill, expected, invoked, run}`) in the test's
    /// `triggers`; the runner sums every test's checks per skill (and per model) into the
    /// report's `skill_triggers`: should-trigger runs, triggered, the trigger rate with its
    /// 95% Wilson interval, should-not-trigger runs, false triggers, the false-trigger rate with
    /// its interval. The check never decides the test's outcome: assert it.
    ///
    /// `run` in the record is the run's number among the test's runs; absent when `result`
    /// is not a run of this test (a run started by hand with
    /// [`run_with`](crate::run_with)).
    ///
    /// ```no_run
    /// # async fn example(ctx: copilot_eval_core::harness::EvalContext) {
    /// use copilot_eval_core::harness::Trigger;
    /// let eval = ctx.eval().skill_directory("skills").build().unwrap();
    /// let result = ctx.run(&eval, "Write the release notes for 2.4.1.").await;
    /// let check = ctx.expect_trigger(&result, "release-notes", Trigger::Invoke);
    /// assert!(check.held(), "{check}");
    /// # }
    /// ```
    pub fn expect_trigger(
        &self,
        result: &CopilotResult,
        skill: &str,
        expected: Trigger,
    ) -> TriggerCheck {
        let run = result
            .origin
            .as_ref()
            .filter(|origin| origin.context == self.homes().context)
            .map(|origin| origin.run as u64);
        let check = TriggerCheck {
            skill: skill.to_owned(),
            expected,
            invoked: result.skill_was_invoked(skill),
            run,
        };
        self.update_evidence(|evidence| evidence.triggers.push(check.clone()));
        check
    }
}
