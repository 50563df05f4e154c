//! The suite's scheduler: each slot of the schedule (a test, on a model of `--models`, in a
//! trial) run as its own test process ([`executor::run_one`]), at most `-j` at a time in list
//! order; each finished test redacted, priced and shown. It stops launching after an
//! infrastructure error (unless `--no-fail-fast`), once a cost cap is reached, and on Ctrl-C or
//! SIGTERM (the running tests are then killed); the slots it did not launch are `not_run`, with
//! the reason. [`run_all`] hands back the records in the schedule's order, with what the report
//! needs besides them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use tokio::task::JoinSet;

use super::display::Display;
use super::executor::{self, ExecOptions, Interrupt};
use super::list::TestList;
use super::trials::{self, Schedule};
use super::{SuiteOptions, describe, models, not_run, slot_label};
use crate::cost::CostControl;
use crate::harness::TrialAsk;
use crate::report::{Outcome, Redactor, TestRecord};

/// What the scheduler hands the report: every slot's record, each eval's trials together in
/// list order, and what it learned along the way.
pub(super) struct Ran {
    /// The records, in the schedule's order.
    pub tests: Vec<TestRecord>,
    /// Each eval's `min_pass_rate` from its attribute, by (binary, record name).
    pub asked_rates: Vec<(String, String, f64)>,
    /// The cost control every finished test was charged to.
    pub cost: CostControl,
}

/// A test task's answer: its slot's index, its record and what its attribute asks of trials.
type Joined = (usize, (TestRecord, Option<TrialAsk>));

/// Run every slot of `list`'s schedule (each eval on each model of `options.models`, in its
/// trials) and record each; `pool` is the suite's pool of warm runtimes, when it has one.
pub(super) async fn run_all(
    list: &TestList,
    options: &SuiteOptions,
    pool: Option<Arc<crate::run::pool::control::Control>>,
    started_at: SystemTime,
) -> Ran {
    let mut run = Scheduler::new(list, options);
    let scratch = tempfile::Builder::new()
        .prefix("copilot-eval-suite-")
        .tempdir();
    match &scratch {
        Err(e) => run.none_launched(&format!(
            "not run: cannot create the suite's scratch folder: {e}"
        )),
        Ok(scratch) => {
            let exec = Arc::new(ExecOptions {
                mode: options.mode,
                cleanup_bound: options.cleanup_bound,
                scratch: scratch.path().to_path_buf(),
                cassette_root: options.cassette_root.clone(),
                suite_id: format!(
                    "{}-{}",
                    std::process::id(),
                    crate::report::rfc3339(started_at)
                ),
                runtime: options.runtime.clone(),
                pool,
                trials_given: options.trials.is_some(),
                sandbox: options.sandbox,
            });
            run.launch_all(exec).await;
            run.rest_not_run();
            // Records without evidence still count in their eval's cell, with every trial.
            describe::complete(
                list,
                options,
                &mut run.schedule,
                &mut run.records,
                &mut run.asked_rates,
                scratch.path(),
                &mut run.display,
            )
            .await;
        }
    }
    run.finish()
}

/// The scheduler's state while the suite runs.
struct Scheduler<'a> {
    list: &'a TestList,
    options: &'a SuiteOptions,
    /// One slot per test process: each test (on each model of `--models`), or each trial of
    /// each, in list order; an attribute's trials are added after an eval's first.
    schedule: Schedule,
    /// Each slot's record, once it has one.
    records: Vec<Option<TestRecord>>,
    display: Display,
    asked_rates: Vec<(String, String, f64)>,
    /// The evals (by list index and model) whose further trials an infrastructure error
    /// stopped, and why.
    stopped_evals: HashMap<(usize, Option<usize>), String>,
    cost: CostControl,
    redactor: Redactor,
    /// Why no further test is launched, once none is.
    stop: Option<String>,
}

impl<'a> Scheduler<'a> {
    fn new(list: &'a TestList, options: &'a SuiteOptions) -> Self {
        let second = match (options.ablate.is_empty(), options.aa) {
            (false, _) => trials::Second::Ablated,
            (true, true) => trials::Second::ArmB,
            (true, false) => trials::Second::None,
        };
        let schedule = Schedule::new(
            &models::cells(list, &options.models),
            options.trials,
            second,
        );
        Self {
            list,
            options,
            records: vec![None; schedule.len()],
            display: Display::new(schedule.len(), options.plain),
            schedule,
            asked_rates: Vec::new(),
            stopped_evals: HashMap::new(),
            cost: CostControl::new(&options.cost),
            redactor: Redactor::from_env(),
            stop: None,
        }
    }

    /// Launch the slots in order, at most `-j` at a time, until none is left to launch or
    /// something stops the suite, and record each as it ends.
    async fn launch_all(&mut self, exec: Arc<ExecOptions>) {
        let interrupt = Arc::new(Interrupt::default());
        let mut running: JoinSet<Joined> = JoinSet::new();
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        let terminate = terminated();
        tokio::pin!(terminate);
        loop {
            self.check_cost_cap();
            self.launch(&mut running, &exec, &interrupt);
            if running.is_empty() {
                break;
            }
            tokio::select! {
                joined = running.join_next() => {
                    let Some(joined) = joined else { break };
                    match joined {
                        Ok((index, (record, ask))) => self.ended(index, record, ask),
                        Err(e) => self.display.note(&format!("internal error: a test task failed: {e}")),
                    }
                }
                _ = &mut ctrl_c, if !interrupt.is_set() => {
                    interrupt.set();
                    self.stop = Some("not run: the suite was interrupted".to_owned());
                    self.display.note("  interrupted: killing the running tests");
                }
                _ = &mut terminate, if !interrupt.is_set() => {
                    interrupt.set();
                    self.stop = Some("not run: the suite was interrupted (SIGTERM)".to_owned());
                    self.display.note("  terminated (SIGTERM): killing the running tests");
                }
            }
        }
    }

    /// Once a cost cap is reached with slots left, no further test is launched.
    fn check_cost_cap(&mut self) {
        if self.stop.is_none()
            && self.schedule.has_next()
            && let Some(reason) = self.cost.cap_reached()
        {
            self.display.note(&format!(
                "  stopping: {reason}; no further evals are launched"
            ));
            self.stop = Some(format!("not run: {reason}; no further evals were launched"));
        }
    }

    /// Launch the next slots while fewer than `-j` run; a slot of an eval whose trials an
    /// infrastructure error stopped is recorded `not_run` instead.
    fn launch(
        &mut self,
        running: &mut JoinSet<Joined>,
        exec: &Arc<ExecOptions>,
        interrupt: &Arc<Interrupt>,
    ) {
        let (list, options) = (self.list, self.options);
        while self.stop.is_none() && running.len() < options.jobs.max(1) {
            let Some(index) = self.schedule.next() else {
                break;
            };
            let slot = self.schedule.slot(index);
            if let Some(reason) = self.stopped_evals.get(&(slot.test, slot.model)) {
                let record = not_run(list, &slot, options, reason.clone());
                self.display
                    .finished(&slot_label(list, &slot, options), &record);
                self.records[index] = Some(record);
                self.schedule.ended(index);
                continue;
            }
            let test = list.tests[slot.test].clone();
            let binary = list.binary(&test).clone();
            self.display.started(&slot_label(list, &slot, options));
            let exec = exec.clone();
            let interrupt = interrupt.clone();
            let model = slot.model.map(|m| options.models[m].clone());
            let ablate = match slot.ablated {
                true => options.ablate.clone(),
                false => Vec::new(),
            };
            let aa = options.aa;
            running.spawn(async move {
                let (mut record, ask) = executor::run_one(
                    index,
                    slot.trial,
                    model.as_deref(),
                    &ablate,
                    &test,
                    &binary,
                    &exec,
                    interrupt,
                )
                .await;
                if aa {
                    crate::report::aa::label(&mut record, slot.arm_b);
                }
                (index, (record, ask))
            });
        }
    }

    /// The test of slot `index` ended: redact, price and show its record; schedule the trials
    /// its attribute asks for after its first; after an infrastructure error, stop its eval's
    /// further trials and (unless `--no-fail-fast`) the suite's launches.
    fn ended(&mut self, index: usize, record: TestRecord, ask: Option<TrialAsk>) {
        let (list, options) = (self.list, self.options);
        self.schedule.ended(index);
        let mut record = self.redactor.redact_test(&record);
        self.cost.charge(&mut record);
        let slot = self.schedule.slot(index);
        self.display
            .finished(&slot_label(list, &slot, options), &record);
        if let Some(rate) = ask.and_then(|ask| ask.min_pass_rate) {
            self.asked_rates
                .push((record.binary.clone(), record.name.clone(), rate));
        }
        // The attribute's `trials = N` (without `--trials`): this was trial 1 of N; trials 2 to
        // N follow.
        if let Some(trial) = record.trial
            && slot.trial.is_none()
        {
            let added = self.schedule.add_asked_trials(index, trial.trials);
            self.records.resize(self.schedule.len(), None);
            self.display.grow(added);
        }
        if stops_launching(&record) {
            self.infrastructure_error(&slot, &record);
        }
        self.records[index] = Some(record);
        if options.stop_early {
            self.stop_early(index);
        }
    }

    /// `--stop-early`: once the trials of slot `index`'s cell decide its eval's verdict
    /// ([`crate::report::trials::decided`], under the eval's pass rate), its trials not
    /// launched yet are recorded `not_run` with `stopped_early` and never launched. Not on an
    /// ablated side or arm B: those are measurements, every trial counts.
    fn stop_early(&mut self, index: usize) {
        let slot = self.schedule.slot(index);
        let (Some(trial), Some(record)) = (slot.trial, self.records[index].as_ref()) else {
            return;
        };
        if slot.ablated || slot.arm_b {
            return;
        }
        let cell = self.schedule.same_cell(index);
        let count = |outcome: Outcome| {
            (cell.iter())
                .filter(|&&i| {
                    self.records[i]
                        .as_ref()
                        .is_some_and(|r| r.outcome == outcome)
                })
                .count() as u32
        };
        // After an infrastructure error the cell's trials are stopped for it, not skipped.
        if count(Outcome::Error) > 0 {
            return;
        }
        let rate = self.options.trial_rule.min_pass_rate.or_else(|| {
            (self.asked_rates.iter())
                .find(|(b, n, _)| *b == record.binary && *n == record.name)
                .map(|(_, _, rate)| *rate)
        });
        let Some((verdict, reason)) = crate::report::trials::decided(
            count(Outcome::Passed),
            count(Outcome::Failed),
            trial.trials,
            rate,
        ) else {
            return;
        };
        let early = crate::report::trials::StoppedEarly {
            after_trial: trial.trial,
            verdict,
            reason,
        };
        let (name, model) = (record.name.clone(), record.model.clone());
        self.display.note(&format!(
            "  stopping early: {name} {} after trial {} of {} ({}); its other trials are skipped",
            verdict.as_str(),
            trial.trial,
            trial.trials,
            early.reason
        ));
        let left: Vec<usize> = (cell.into_iter())
            .filter(|&i| self.records[i].is_none())
            .collect();
        for i in left {
            let slot = self.schedule.slot(i);
            let mut skipped = not_run(
                self.list,
                &slot,
                self.options,
                format!(
                    "skipped: stopped early after trial {} of {} (--stop-early): {}",
                    trial.trial, trial.trials, early.reason
                ),
            );
            (skipped.name, skipped.model) = (name.clone(), model.clone());
            skipped.stopped_early = Some(early.clone());
            self.display
                .finished(&slot_label(self.list, &slot, self.options), &skipped);
            self.schedule.unqueue(i);
            self.records[i] = Some(skipped);
        }
    }

    /// `record` (of `slot`) ended in an infrastructure error: its eval's further trials are not
    /// run, and unless `--no-fail-fast` no further eval is launched.
    fn infrastructure_error(&mut self, slot: &trials::Slot, record: &TestRecord) {
        if let Some(trial) = record.trial {
            self.stopped_evals
                .entry((slot.test, slot.model))
                .or_insert_with(|| trials::stopped_reason(trial, record));
        }
        if !self.options.no_fail_fast && self.stop.is_none() {
            self.stop = Some(format!(
                "not run: {} ended in an infrastructure error; later evals were not launched (use --no-fail-fast to run them anyway)",
                record.name
            ));
            if self.schedule.has_next() {
                self.display.note("  stopping: no further evals are launched after an infrastructure error (--no-fail-fast overrides)");
            }
        }
    }

    /// Nothing could be launched: every slot is `not_run` with `reason` (not shown: the suite
    /// could not start).
    fn none_launched(&mut self, reason: &str) {
        for (i, record) in self.records.iter_mut().enumerate() {
            *record = Some(not_run(
                self.list,
                &self.schedule.slot(i),
                self.options,
                reason.to_owned(),
            ));
        }
    }

    /// Every slot without a record is `not_run`: why its eval's trials stopped, else why the
    /// suite stopped launching.
    fn rest_not_run(&mut self) {
        let (list, options) = (self.list, self.options);
        let reason = self.stop.clone().unwrap_or_else(|| "not run".to_owned());
        for i in self.schedule.order() {
            let slot = self.schedule.slot(i);
            if self.records[i].is_none() {
                let reason = self
                    .stopped_evals
                    .get(&(slot.test, slot.model))
                    .unwrap_or(&reason);
                let record = not_run(list, &slot, options, reason.clone());
                self.display
                    .finished(&slot_label(list, &slot, options), &record);
                self.records[i] = Some(record);
            }
        }
    }

    /// The records in the schedule's order (each eval's trials together), once the display is
    /// cleared.
    fn finish(mut self) -> Ran {
        self.display.finish();
        // A cap passed by evals that were already running (with -j N, or by the last eval) is
        // recorded too, although nothing was left to stop.
        let _ = self.cost.cap_reached();
        let tests = self
            .schedule
            .order()
            .into_iter()
            .filter_map(|i| self.records[i].take())
            .collect();
        Ran {
            tests,
            asked_rates: self.asked_rates,
            cost: self.cost,
        }
    }
}

/// A future that resolves when the runner receives SIGTERM (Unix). The handler is installed
/// when this is called, not when the future is first polled; where it cannot be installed (or
/// off Unix) the future never resolves.
fn terminated() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    async move {
        #[cfg(unix)]
        if let Some(signal) = signal.as_mut() {
            signal.recv().await;
            return;
        }
        std::future::pending::<()>().await
    }
}

/// Whether `record` ended in an infrastructure error, after which its eval's further trials
/// are not run and (unless `--no-fail-fast`) no further eval is launched: an `error` of any
/// kind but `judge` (a judge that gave no verdict is not the infrastructure's failure: the
/// suite and the eval's trials go on).
fn stops_launching(record: &TestRecord) -> bool {
    record.outcome == Outcome::Error && record.error_kind != Some(crate::report::ErrorKind::Judge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ErrorKind;

    /// An `error` stops the launching, except one of kind `judge`; no other outcome does.
    #[test]
    fn a_judge_error_does_not_stop_the_suite() {
        let mut record = super::super::executor::tests::record("e", Outcome::Error);
        record.error_kind = Some(ErrorKind::Run);
        assert!(stops_launching(&record));
        record.error_kind = Some(ErrorKind::Judge);
        assert!(!stops_launching(&record));
        for outcome in [Outcome::Passed, Outcome::Failed, Outcome::NotRun] {
            assert!(!stops_launching(&super::super::executor::tests::record(
                "e", outcome
            )));
        }
    }
}
