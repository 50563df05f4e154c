//! The suite's test processes when evals run in trials (`--trials N`, or an eval's attribute
//! `trials = N`): one slot per trial of each eval, each eval's trials together, the trials an
//! attribute asks for added after the eval's first, one trial of a cell (an eval on a model) at
//! a time, and why an eval's further trials were not run.

use std::collections::VecDeque;

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
    /// The ablated side of the eval (`--ablate`): its test process runs without the inputs the
    /// suite's options name.
    pub ablated: bool,
    /// Arm B of an A/A run (`--aa`): the same configuration as the eval's own slot (arm A),
    /// run again.
    pub arm_b: bool,
}

/// A cell of the schedule as it runs: (test, model, ablated, arm B). Its slots run one at a
/// time.
type RunningCell = (usize, Option<usize>, bool, bool);

impl Slot {
    /// The cell this slot is a trial of, with its side.
    fn cell(&self) -> RunningCell {
        (self.test, self.model, self.ablated, self.arm_b)
    }
}

/// The second side of each cell, if any: the ablated side (`--ablate`) or arm B of an A/A run
/// (`--aa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Second {
    /// One side per cell.
    None,
    /// The eval without the inputs `--ablate` names.
    Ablated,
    /// Arm B of `--aa`: the same configuration again.
    ArmB,
}

/// The slots of `cells` ([`super::models::cells`]) with `trials` trials each: every cell once
/// when `trials` is 1, else trials 1..=N of the first cell, then of the second, ... With a
/// `second` side (`--ablate`, `--aa`), each cell's trials are followed by the same trials of
/// that side.
pub(crate) fn slots(cells: &[Cell], trials: u32, second: Second) -> Vec<Slot> {
    let sides: &[(bool, bool)] = match second {
        Second::None => &[(false, false)],
        Second::Ablated => &[(false, false), (true, false)],
        Second::ArmB => &[(false, false), (false, true)],
    };
    cells
        .iter()
        .flat_map(|cell| {
            sides.iter().flat_map(move |&(ablated, arm_b)| {
                (1..=trials.max(1)).map(move |trial| Slot {
                    test: cell.test,
                    model: cell.model,
                    trial: (trials > 1).then_some(TrialOf { trial, trials }),
                    ablated,
                    arm_b,
                })
            })
        })
        .collect()
}

/// The suite's slots as they are launched and reported: the slots of [`slots`] to begin with,
/// and, after an eval's first slot ends with an attribute's ask of N > 1 trials
/// ([`add_asked_trials`](Self::add_asked_trials)), its trials 2 to N, launched next and
/// reported right after it.
///
/// The trials of one cell (one test on one model) run one after another, in trial order
/// ([`next`](Self::next) skips a cell while one of its slots runs): whatever `-j` is, a trial
/// starts only after the cell's earlier trials ended, so an infrastructure error in trial K
/// leaves every later trial of the cell unstarted (reported `not_run`), never running beside
/// it. `-j` runs different cells side by side.
#[derive(Debug)]
pub(crate) struct Schedule {
    /// Every slot, by index (an index names a slot for good: records, evidence files).
    slots: Vec<Slot>,
    /// The slots not launched yet, in launch order.
    queue: VecDeque<usize>,
    /// Per slot, the slots added after it (an attribute's trials 2..N).
    added: Vec<Vec<usize>>,
    /// How many slots [`slots`] gave (the added ones come after them).
    initial: usize,
    /// The cells (test, model, sides) with a slot launched and not ended yet.
    running: Vec<RunningCell>,
}

impl Schedule {
    /// The slots of `cells` with `trials` trials each (`--trials N`; `None`: one, unless an
    /// attribute asks for more), and each cell's `second` side too.
    pub(crate) fn new(cells: &[Cell], trials: Option<u32>, second: Second) -> Self {
        let slots = slots(cells, trials.unwrap_or(1), second);
        Self {
            queue: (0..slots.len()).collect(),
            added: vec![Vec::new(); slots.len()],
            initial: slots.len(),
            running: Vec::new(),
            slots,
        }
    }

    /// How many slots there are.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slot of `index`.
    pub(crate) fn slot(&self, index: usize) -> Slot {
        self.slots[index]
    }

    /// Whether a slot is left to launch.
    pub(crate) fn has_next(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The next slot to launch, if any: the first in launch order whose cell has no slot
    /// running; its cell counts as running until [`ended`](Self::ended). `None` when no slot is
    /// left or every one left waits for its cell's running slot.
    pub(crate) fn next(&mut self) -> Option<usize> {
        let at = (self.queue.iter())
            .position(|&index| !self.running.contains(&self.slots[index].cell()))?;
        let index = self.queue.remove(at)?;
        self.running.push(self.slots[index].cell());
        Some(index)
    }

    /// Slot `index`, given by [`next`](Self::next), ended (or was recorded without running):
    /// its cell's next slot may start.
    pub(crate) fn ended(&mut self, index: usize) {
        let cell = self.slots[index].cell();
        self.running.retain(|&running| running != cell);
    }

    /// Slot `index` (an eval's only slot: launched without a trial) ended as trial 1 of `trials`
    /// (the attribute's `trials = N`): it becomes trial 1 of N, and trials 2 to N of the same
    /// eval and model are added, launched before any other slot and reported right after it.
    /// Returns how many slots were added (none when `trials` <= 1 or the slot has a trial
    /// already).
    pub(crate) fn add_asked_trials(&mut self, index: usize, trials: u32) -> usize {
        let first = self.slots[index];
        if trials <= 1 || first.trial.is_some() {
            return 0;
        }
        self.slots[index].trial = Some(TrialOf { trial: 1, trials });
        let added: Vec<usize> = (2..=trials)
            .map(|trial| {
                self.slots.push(Slot {
                    trial: Some(TrialOf { trial, trials }),
                    ..first
                });
                self.added.push(Vec::new());
                self.slots.len() - 1
            })
            .collect();
        for &slot in added.iter().rev() {
            self.queue.push_front(slot);
        }
        self.added[index] = added;
        (trials - 1) as usize
    }

    /// The slots of the same cell and side as slot `index` (its trials), in slot order.
    pub(crate) fn same_cell(&self, index: usize) -> Vec<usize> {
        let cell = self.slots[index].cell();
        (0..self.slots.len())
            .filter(|&i| self.slots[i].cell() == cell)
            .collect()
    }

    /// Take slot `index` out of the slots left to launch (it is recorded without running).
    pub(crate) fn unqueue(&mut self, index: usize) {
        self.queue.retain(|&queued| queued != index);
    }

    /// Every slot index in report order: each slot of [`slots`], followed by those added after
    /// it.
    pub(crate) fn order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.slots.len());
        for index in 0..self.initial {
            order.push(index);
            order.extend(&self.added[index]);
        }
        order
    }
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
            slots(&cells(2), 1, Second::None),
            vec![
                Slot {
                    test: 0,
                    model: None,
                    trial: None,
                    ablated: false,
                    arm_b: false
                },
                Slot {
                    test: 1,
                    model: None,
                    trial: None,
                    ablated: false,
                    arm_b: false
                }
            ]
        );
    }

    /// An attribute's `trials = 3` on the first of two evals (one job): its trials 2 and 3
    /// are launched next and reported right after its first trial.
    #[test]
    fn an_attributes_trials_are_added_after_the_evals_first_trial() {
        let mut schedule = Schedule::new(&cells(2), None, Second::None);
        assert_eq!(schedule.next(), Some(0));
        assert_eq!(schedule.add_asked_trials(0, 3), 2);
        schedule.ended(0);
        // One slot at a time (one job): each ends before the next starts.
        let launched: Vec<usize> = std::iter::from_fn(|| {
            let index = schedule.next()?;
            schedule.ended(index);
            Some(index)
        })
        .collect();
        assert_eq!(launched, vec![2, 3, 1]);
        let reported: Vec<(usize, Option<u32>)> = schedule
            .order()
            .into_iter()
            .map(|i| {
                (
                    schedule.slot(i).test,
                    schedule.slot(i).trial.map(|t| t.trial),
                )
            })
            .collect();
        assert_eq!(
            reported,
            vec![(0, Some(1)), (0, Some(2)), (0, Some(3)), (1, None)]
        );
        assert!((0..3).all(|i| schedule.slot(schedule.order()[i]).trial.unwrap().trials == 3));
        // A slot that already is a trial (`--trials N`) asks nothing more, nor does one trial.
        let mut given = Schedule::new(&cells(1), Some(2), Second::None);
        assert_eq!(given.add_asked_trials(0, 5), 0);
        assert_eq!(given.add_asked_trials(1, 5), 0);
        let mut once = Schedule::new(&cells(1), None, Second::None);
        assert_eq!(once.add_asked_trials(0, 1), 0);
        assert_eq!(once.len(), 1);
    }

    /// With two jobs, the second eval's slot may be running when the first's ask arrives; the
    /// report order still keeps the first eval's trials together.
    #[test]
    fn the_report_keeps_an_evals_added_trials_together() {
        let mut schedule = Schedule::new(&cells(2), None, Second::None);
        assert_eq!((schedule.next(), schedule.next()), (Some(0), Some(1)));
        schedule.add_asked_trials(1, 2);
        schedule.add_asked_trials(0, 2);
        assert_eq!(schedule.order(), vec![0, 3, 1, 2]);
    }

    /// With two jobs, a cell's trials still run one after another: trial 2 waits for trial 1
    /// while the other cell's trial 1 may start beside it.
    #[test]
    fn a_cells_trials_run_one_at_a_time_whatever_the_jobs() {
        let mut one = Schedule::new(&cells(1), Some(3), Second::None);
        assert_eq!(one.next(), Some(0));
        assert_eq!(one.next(), None, "trial 2 waits for trial 1");
        assert!(one.has_next());
        one.ended(0);
        assert_eq!((one.next(), one.next()), (Some(1), None));
        one.ended(1);
        assert_eq!(one.next(), Some(2));

        // Two cells, two trials each: trial 1 of both, then trial 2 of the first that ends.
        let mut two = Schedule::new(&cells(2), Some(2), Second::None);
        assert_eq!(
            (two.next(), two.next(), two.next()),
            (Some(0), Some(2), None)
        );
        two.ended(2);
        assert_eq!((two.next(), two.next()), (Some(3), None));
        two.ended(0);
        assert_eq!(two.next(), Some(1));

        // Two models of one test are two cells: they run side by side.
        let models = [
            Cell {
                test: 0,
                model: Some(0),
            },
            Cell {
                test: 0,
                model: Some(1),
            },
        ];
        let mut matrix = Schedule::new(&models, Some(2), Second::None);
        assert_eq!((matrix.next(), matrix.next()), (Some(0), Some(2)));
    }

    #[test]
    fn trials_keep_each_tests_trials_together_in_order() {
        let got: Vec<(usize, u32)> = slots(&cells(2), 3, Second::None)
            .iter()
            .map(|s| (s.test, s.trial.unwrap().trial))
            .collect();
        assert_eq!(got, vec![(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]);
        assert!(
            slots(&cells(2), 3, Second::None)
                .iter()
                .all(|s| s.trial.unwrap().trials == 3)
        );
    }

    /// `--ablate`: each cell's trials, then the same trials of its ablated side; the two sides
    /// of one cell may run side by side, each side's trials one at a time.
    #[test]
    fn the_ablated_side_follows_each_cells_trials() {
        let got: Vec<(usize, u32, bool)> = slots(&cells(2), 2, Second::Ablated)
            .iter()
            .map(|s| (s.test, s.trial.unwrap().trial, s.ablated))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1, false),
                (0, 2, false),
                (0, 1, true),
                (0, 2, true),
                (1, 1, false),
                (1, 2, false),
                (1, 1, true),
                (1, 2, true)
            ]
        );
        let mut schedule = Schedule::new(&cells(1), Some(2), Second::Ablated);
        assert_eq!(
            (schedule.next(), schedule.next(), schedule.next()),
            (Some(0), Some(2), None)
        );
        assert_eq!(slots(&cells(1), 1, Second::None).len(), 1);
    }

    /// `--aa`: each cell's trials, then the same trials as arm B; the two arms of one cell may
    /// run side by side, each arm's trials one at a time; `same_cell` names one arm's trials.
    #[test]
    fn arm_b_follows_each_cells_trials() {
        let got: Vec<(u32, bool, bool)> = slots(&cells(1), 2, Second::ArmB)
            .iter()
            .map(|s| (s.trial.unwrap().trial, s.ablated, s.arm_b))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, false, false),
                (2, false, false),
                (1, false, true),
                (2, false, true)
            ]
        );
        let mut schedule = Schedule::new(&cells(1), Some(2), Second::ArmB);
        assert_eq!(
            (schedule.next(), schedule.next(), schedule.next()),
            (Some(0), Some(2), None)
        );
        assert_eq!(schedule.same_cell(0), vec![0, 1]);
        assert_eq!(schedule.same_cell(3), vec![2, 3]);
        // A slot taken out of the queue is never launched.
        schedule.unqueue(1);
        schedule.ended(0);
        schedule.ended(2);
        assert_eq!((schedule.next(), schedule.next()), (Some(3), None));
    }
}
