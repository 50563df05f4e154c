//! Trigger and dormancy checks of skills: [`EvalContext::expect_trigger`] reads whether a run
//! invoked a skill and records the typed check ([`TriggerCheck`]) in the test's evidence, from
//! which the runner aggregates each skill's trigger and false-trigger rates
//! ([`crate::report::triggers`]). A skill's trigger set (`evals/triggers.json`) becomes one
//! test per query under `#[copilot_eval(skill_triggers = "..")]` ([`TriggerCaseSpec`],
//! [`TriggerCase`]).

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
    /// A custom agent's preload (its `skills:` list, a `skill.invoked` event with trigger
    /// `context-load`) is never a trigger, either way: the check records it apart
    /// (`preloaded`), and its text says so.
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
            preloaded: result.skill_was_preloaded(skill),
            run,
        };
        self.update_evidence(|evidence| evidence.triggers.push(check.clone()));
        check
    }
}

/// One query of a skill's trigger set (`evals/triggers.json`), as
/// `#[copilot_eval(skill_triggers = "..")]` writes it into its test. See
/// [`triggers_file`](crate::customization::skill::triggers_file) for the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriggerCaseSpec {
    /// The skill folder, relative to the package root (the attribute's `skill_triggers` value).
    pub skill_dir: &'static str,
    /// The skill's name: the folder's name, which the runtime requires to equal `SKILL.md`'s
    /// `name` (the `skill-name-folder` rule), and the name its `skill.invoked` events give.
    pub skill: &'static str,
    /// The query's 1-based position in the trigger set.
    pub number: u32,
    /// `query` (or `prompt`): the prompt the session gets.
    pub query: &'static str,
    /// `should_trigger`.
    pub should_trigger: bool,
}

/// The query a `skill_triggers` test runs, handed to the test function as its second parameter
/// (`async fn changelog_triggers(ctx: EvalContext, case: TriggerCase)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerCase {
    /// The skill folder (absolute: the package root joined with the attribute's value).
    pub skill_dir: std::path::PathBuf,
    /// The skill's name, as `skill.invoked` events give it.
    pub skill: String,
    /// The query's 1-based position in the trigger set.
    pub number: u32,
    /// The prompt: pass it to `ctx.run`.
    pub query: String,
    /// What the query should do: [`Trigger::Invoke`] (`should_trigger: true`) or
    /// [`Trigger::Dormant`].
    pub expected: Trigger,
}

impl TriggerCase {
    /// Check `result`'s run against the query: [`EvalContext::expect_trigger`] with the case's
    /// skill and expectation (recorded in the test's `triggers`, summed into the report's
    /// trigger and false-trigger rates). Returns the check; the test fails after its body when
    /// the check did not hold, so asserting it is optional.
    pub fn check(&self, ctx: &EvalContext, result: &CopilotResult) -> TriggerCheck {
        ctx.expect_trigger(result, &self.skill, self.expected)
    }
}

impl EvalContext {
    /// The trigger-set query this test runs (`skill_triggers = ".."` under the attribute);
    /// `None` for other tests.
    pub fn trigger_case(&self) -> Option<TriggerCase> {
        let spec = self.test_config().trigger_case_spec()?;
        Some(TriggerCase {
            skill_dir: self.package_path(spec.skill_dir),
            skill: spec.skill.to_owned(),
            number: spec.number,
            query: spec.query.to_owned(),
            expected: if spec.should_trigger {
                Trigger::Invoke
            } else {
                Trigger::Dormant
            },
        })
    }

    /// The failure of a `skill_triggers` test whose body passed although its query's trigger
    /// check did not hold, or was never made; `None` otherwise (and for other tests).
    pub(crate) fn trigger_case_failure(&self) -> Option<String> {
        let case = self.trigger_case()?;
        let checks: Vec<TriggerCheck> = self
            .evidence()
            .triggers
            .into_iter()
            .filter(|check| check.skill == case.skill && check.expected == case.expected)
            .collect();
        if checks.is_empty() {
            return Some(format!(
                "trigger not checked: query {} of {}'s trigger set ({:?}) was never checked; check the run with `case.check(&ctx, &result)`",
                case.number, case.skill, case.query
            ));
        }
        let failed: Vec<String> = checks
            .iter()
            .filter(|check| !check.held())
            .map(|check| format!("trigger check failed: {check} (query {:?})", case.query))
            .collect();
        (!failed.is_empty()).then(|| failed.join("\n"))
    }
}
