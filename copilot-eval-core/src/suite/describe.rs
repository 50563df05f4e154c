//! The records the suite could not fill from a test's evidence, completed from the test's own
//! description: a test not run (a cost cap, fail-fast, an interrupt) or whose process ended in
//! an error, perhaps before writing its evidence, still counts under its eval's name and model
//! (`greets@gpt-5`, not its libtest path), with every trial its attribute asks for
//! (`trials = N`: trials 2 to N added as `not_run`) and the trigger check it owes.
//!
//! The runner asks each test binary concerned once, after the suite ran: the tests' ids with
//! `--exact --ignored --test-threads 1` and [`ENV_DESCRIBE_FILE`] set, under which each
//! generated test appends its [`TestDescription`] and runs nothing
//! ([`crate::harness::run_test`]).

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::SuiteOptions;
use super::display::Display;
use super::list::TestList;
use super::trials::{self, Schedule};
use crate::harness::{ENV_DESCRIBE_FILE, ENV_EVIDENCE_FILE, ENV_MODEL, TestDescription};
use crate::report::{Outcome, TestRecord, TrialOf};

/// How long a test binary may take to describe its tests before it is killed (it starts no
/// runtime: a fraction of a second is usual).
const DESCRIBE_BOUND: Duration = Duration::from_secs(60);

/// The descriptions of the tests of `list` at `tests` (indexes), by index; a test whose binary
/// could not describe it is missing (the reason goes to `display`).
async fn describe(
    list: &TestList,
    tests: &[usize],
    scratch: &Path,
    display: &Display,
) -> HashMap<usize, TestDescription> {
    let mut found = HashMap::new();
    let mut binaries: Vec<usize> = tests.iter().map(|&t| list.tests[t].binary).collect();
    binaries.sort_unstable();
    binaries.dedup();
    for binary_index in binaries {
        let binary = &list.binaries[binary_index];
        let of_binary: Vec<usize> = tests
            .iter()
            .copied()
            .filter(|&t| list.tests[t].binary == binary_index)
            .collect();
        let file = scratch.join(format!("describe-{binary_index}.jsonl"));
        let _ = std::fs::remove_file(&file);
        let library = super::list::library_path(binary);
        let mut command = tokio::process::Command::new(&binary.path);
        command
            .args(["--exact", "--ignored", "--test-threads", "1"])
            .args(of_binary.iter().map(|&t| &list.tests[t].test_id))
            .current_dir(&binary.cwd)
            .env(library.0, library.1)
            .env(ENV_DESCRIBE_FILE, &file)
            .env_remove(ENV_EVIDENCE_FILE)
            .env_remove(ENV_MODEL)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let ended = match command.spawn() {
            Ok(mut child) => tokio::time::timeout(DESCRIBE_BOUND, child.wait())
                .await
                .map_err(|_| "it did not end in time".to_owned())
                .and_then(|status| status.map_err(|e| e.to_string())),
            Err(e) => Err(e.to_string()),
        };
        let descriptions = match ended {
            Ok(_) => TestDescription::read_all(&file).map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        match descriptions {
            Ok(descriptions) => {
                for test in of_binary {
                    let id = &list.tests[test].test_id;
                    if let Some(description) = descriptions.iter().find(|d| &d.test_id == id) {
                        found.insert(test, description.clone());
                    }
                }
            }
            Err(e) => display.note(&format!(
                "  note: {} could not describe its tests not run or in error ({e}); they are reported under their test paths",
                binary.id
            )),
        }
    }
    found
}

/// `record` of a test described by `description`: named and modelled as its eval's cell when
/// the record has no model yet (a model matrix of the attribute), with the source and the owed
/// trigger check when missing.
fn apply(record: &mut TestRecord, description: &TestDescription) {
    if record.model.is_none() && description.model.is_some() {
        record.name = match (record.ablated.is_empty(), record.arm) {
            (false, _) => crate::report::lift::ablated_name(&description.name, &record.ablated),
            (true, Some(crate::report::aa::Arm::B)) => {
                crate::report::aa::arm_b_name(&description.name)
            }
            (true, _) => description.name.clone(),
        };
        record.model = description.model.clone();
    }
    if record.source.is_none() {
        record.source = description.source.clone();
    }
    if record.trigger_query.is_none() {
        record.trigger_query = description.trigger_query.clone();
    }
}

/// Complete the records of `schedule` the suite could not fill from evidence: every record
/// that is `not_run` or `error` is completed from its test's description ([`apply`]); when the
/// description asks for N > 1 trials and the suite ran the eval without its trials (no
/// `--trials`, and no evidence gave the ask), the record becomes trial 1 of N and trials 2 to N
/// are added as `not_run` (why: the record's own reason, or its error: [`trials::stopped_reason`]).
/// The attribute's `min_pass_rate` of such an eval is added to `asked_rates`. A test its
/// binary could not describe keeps the name and model of another record of its cell, if any.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn complete(
    list: &TestList,
    options: &SuiteOptions,
    schedule: &mut Schedule,
    records: &mut Vec<Option<TestRecord>>,
    asked_rates: &mut Vec<(String, String, f64)>,
    scratch: &Path,
    display: &mut Display,
) {
    let needing: Vec<usize> = (0..schedule.len())
        .filter(|&i| {
            records[i]
                .as_ref()
                .is_some_and(|r| matches!(r.outcome, Outcome::NotRun | Outcome::Error))
                // A trial `--stop-early` skipped has its name and model from its cell's trials.
                && records[i].as_ref().is_some_and(|r| r.stopped_early.is_none())
        })
        .collect();
    if needing.is_empty() {
        return;
    }
    let mut tests: Vec<usize> = needing.iter().map(|&i| schedule.slot(i).test).collect();
    tests.sort_unstable();
    tests.dedup();
    let descriptions = describe(list, &tests, scratch, display).await;
    for index in needing {
        let slot = schedule.slot(index);
        let Some(description) = descriptions.get(&slot.test) else {
            same_as_cell(schedule, records, index);
            continue;
        };
        let Some(record) = records[index].as_mut() else {
            continue;
        };
        apply(record, description);
        let Some(ask) = description.trial_ask else {
            continue;
        };
        if let Some(rate) = ask.min_pass_rate
            && !asked_rates
                .iter()
                .any(|(b, n, _)| *b == record.binary && *n == record.name)
        {
            asked_rates.push((record.binary.clone(), record.name.clone(), rate));
        }
        let ran_in_trials = slot.trial.is_some() || record.trial.is_some();
        if ask.trials <= 1 || ran_in_trials || options.trials.is_some() {
            continue;
        }
        let first = TrialOf {
            trial: 1,
            trials: ask.trials,
        };
        record.trial = Some(first);
        let reason = match record.outcome {
            Outcome::Error => trials::stopped_reason(first, record),
            _ => record
                .message
                .clone()
                .unwrap_or_else(|| "not run".to_owned()),
        };
        let added = schedule.add_asked_trials(index, ask.trials);
        display.grow(added);
        for slot_index in schedule.len() - added..schedule.len() {
            let slot = schedule.slot(slot_index);
            let mut record = super::not_run(list, &slot, options, reason.clone());
            apply(&mut record, description);
            display.finished(&super::slot_label(list, &slot, options), &record);
            records.push(Some(record));
        }
    }
}

/// Record `index` without a model, when another record of its cell (the same test and
/// `--models` entry) has one: the name and model of that record.
fn same_as_cell(schedule: &Schedule, records: &mut [Option<TestRecord>], index: usize) {
    let slot = schedule.slot(index);
    if records[index].as_ref().is_none_or(|r| r.model.is_some()) {
        return;
    }
    let known = (0..schedule.len())
        .filter(|&i| {
            let other = schedule.slot(i);
            (other.test, other.model, other.ablated, other.arm_b)
                == (slot.test, slot.model, slot.ablated, slot.arm_b)
        })
        .find_map(|i| {
            let record = records[i].as_ref()?;
            Some((record.name.clone(), record.model.clone()?))
        });
    if let (Some((name, model)), Some(record)) = (known, records[index].as_mut()) {
        record.name = name;
        record.model = Some(model);
    }
}
