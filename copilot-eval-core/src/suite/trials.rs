//! The suite's test processes when evals run in trials (`--trials N`): one slot per trial of
//! each eval, each eval's trials together, and why an eval's further trials were not run.

use super::models::Cell;
use crate::report::{TestRecord, TrialOf};

/// One test process of the suite: the test (its index in the list), its model with `--models`,
/// and, with trials, which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The test's index in the suite's list.
    pub test: usize,
    /// The index of its model in `--models`, when given.
    pub model: Option<usize>,
    /// The trial, when the suite runs trials (N > 1); `None` with one trial.
    pub trial: Option<TrialOf>,
}

/// The slots of `cells` ([`super::models::cells`]) with `trials` trials each: every cell once
/// when `trials` is 1, else trials 1..=N of the first cell, then of the second, ...
pub(crate) fn slots(cells: &[Cell], trials: u32) -> Vec<Slot> {
    cells
        .iter()
        .flat_map(|cell| {
            (1..=trials.max(1)).map(move |trial| Slot {
                test: cell.test,
                model: cell.model,
                trial: (trials > 1).then_some(TrialOf { trial, trials }),
            })
        })
        .collect()
}

/// The `not_run` message of the trials after `trial`, whose `record` ended in an
/// infrastructure error.
pub(crate) fn stopped_reason(trial: TrialOf, record: &TestRecord) -> String {
    let kind = record
        .error_kind
        .and_then(|kind| serde_json::to_value(kind).ok())
        .and_then(|kind| kind.as_str().map(str::to_owned))
        .unwrap_or_else(|| "error".to_owned());
    format!(
        "not run: trial {} of {} ended in an infrastructure error ({kind}); the eval's further trials were not run",
        trial.trial, trial.trials
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(tests: usize) -> Vec<Cell> {
        (0..tests).map(|test| Cell { test, model: None }).collect()
    }

    #[test]
    fn one_trial_is_one_slot_per_test_without_a_trial() {
        assert_eq!(
            slots(&cells(2), 1),
            vec![
                Slot {
                    test: 0,
                    model: None,
                    trial: None
                },
                Slot {
                    test: 1,
                    model: None,
                    trial: None
                }
            ]
        );
    }

    #[test]
    fn trials_keep_each_tests_trials_together_in_order() {
        let got: Vec<(usize, u32)> = slots(&cells(2), 3)
            .iter()
            .map(|s| (s.test, s.trial.unwrap().trial))
            .collect();
        assert_eq!(got, vec![(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]);
        assert!(
            slots(&cells(2), 3)
                .iter()
                .all(|s| s.trial.unwrap().trials == 3)
        );
    }
}
