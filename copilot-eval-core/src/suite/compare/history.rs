//! `compare` over more than two results files (oldest first): each eval's pass rate file by
//! file, its flips (its verdict turned from passed to failed or back between consecutive
//! files), and the evals failing most often: flakiness that a single run cannot show.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::eval::group;
use crate::report::{Outcome, SuiteReport, TestRecord};

/// At most this many evals are listed as failing most often.
pub const MOST_FAILING: usize = 10;

/// The history of the evals over the files compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct History {
    /// Each eval of any file, in the order first seen (files oldest first, each in list order).
    pub evals: Vec<EvalHistory>,
    /// The evals that failed (or ended in an error) in the most files, most first (then by
    /// name), at most `MOST_FAILING`; only evals that failed at least once.
    pub most_failing: Vec<FailingEval>,
}

/// One eval file by file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalHistory {
    /// The test binary.
    pub binary: String,
    /// The test path.
    pub name: String,
    /// One entry per file, oldest first: its figures there, `null` when the file lacks it.
    pub runs: Vec<Option<RunPoint>>,
    /// Each flip between consecutive files that both hold the eval with a `passed` or
    /// `failed` verdict.
    pub flips: Vec<Flip>,
    /// Files in which its verdict was `failed` or `error`.
    pub failing_runs: u32,
}

/// An eval in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunPoint {
    /// Records (trials, else 1).
    pub trials: u32,
    /// Records that passed.
    pub passed: u32,
    /// Records that passed or failed.
    pub judged: u32,
    /// `passed / judged`; absent when `judged` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// The eval's verdict there: over its trials (the file's trial summary) when it ran in
    /// trials, else its record's outcome.
    pub verdict: Outcome,
}

/// A change of verdict between two consecutive files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Flip {
    /// The earlier file's position (from 1).
    pub from: u32,
    /// The later file's position (from 1).
    pub to: u32,
    /// The verdict before.
    pub before: Outcome,
    /// The verdict after.
    pub after: Outcome,
}

/// An eval that failed in some files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FailingEval {
    /// The test binary.
    pub binary: String,
    /// The test path.
    pub name: String,
    /// Files in which it failed or ended in an error.
    pub failing_runs: u32,
    /// Files that hold it.
    pub runs: u32,
}

fn point(report: &SuiteReport, records: &[&TestRecord]) -> RunPoint {
    let passed = records
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .count() as u32;
    let failed = records
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .count() as u32;
    let judged = passed + failed;
    let first = records[0];
    let summary = report
        .trial_summaries
        .iter()
        .find(|s| s.binary == first.binary && s.name == first.name);
    let verdict = match summary {
        Some(summary) => summary.verdict,
        None => worst(records),
    };
    RunPoint {
        trials: records.len() as u32,
        passed,
        judged,
        pass_rate: (judged > 0).then(|| f64::from(passed) / f64::from(judged)),
        verdict,
    }
}

/// The worst outcome of `records`: an error, else a failure, else not run, else passed.
fn worst(records: &[&TestRecord]) -> Outcome {
    [
        Outcome::Error,
        Outcome::Failed,
        Outcome::NotRun,
        Outcome::Passed,
    ]
    .into_iter()
    .find(|o| records.iter().any(|r| r.outcome == *o))
    .unwrap_or(Outcome::NotRun)
}

/// The history of `runs` (file names and reports, oldest first).
pub fn history(runs: &[(String, SuiteReport)]) -> History {
    let mut evals: Vec<EvalHistory> = Vec::new();
    for (index, (_, report)) in runs.iter().enumerate() {
        for ((binary, name), records) in group(report) {
            let at = match evals
                .iter()
                .position(|e| e.binary == binary && e.name == name)
            {
                Some(at) => at,
                None => {
                    evals.push(EvalHistory {
                        binary: binary.to_owned(),
                        name: name.to_owned(),
                        runs: vec![None; runs.len()],
                        flips: Vec::new(),
                        failing_runs: 0,
                    });
                    evals.len() - 1
                }
            };
            evals[at].runs[index] = Some(point(report, &records));
        }
    }
    for eval in &mut evals {
        let verdicts: Vec<Option<Outcome>> = eval
            .runs
            .iter()
            .map(|p| p.as_ref().map(|p| p.verdict))
            .collect();
        eval.failing_runs = verdicts
            .iter()
            .filter(|v| matches!(v, Some(Outcome::Failed | Outcome::Error)))
            .count() as u32;
        for (i, pair) in verdicts.windows(2).enumerate() {
            if let [Some(before), Some(after)] = pair
                && before != after
                && [before, after]
                    .iter()
                    .all(|o| matches!(o, Outcome::Passed | Outcome::Failed))
            {
                eval.flips.push(Flip {
                    from: i as u32 + 1,
                    to: i as u32 + 2,
                    before: *before,
                    after: *after,
                });
            }
        }
    }
    let mut most_failing: Vec<FailingEval> = evals
        .iter()
        .filter(|e| e.failing_runs > 0)
        .map(|e| FailingEval {
            binary: e.binary.clone(),
            name: e.name.clone(),
            failing_runs: e.failing_runs,
            runs: e.runs.iter().flatten().count() as u32,
        })
        .collect();
    most_failing.sort_by(|a, b| {
        b.failing_runs
            .cmp(&a.failing_runs)
            .then_with(|| a.name.cmp(&b.name))
    });
    most_failing.truncate(MOST_FAILING);
    History {
        evals,
        most_failing,
    }
}

/// A small trend of an eval's pass rates, one character per file: `▁`..`█` by pass rate, `·`
/// where the file lacks it or it has no verdict.
pub fn sparkline(runs: &[Option<RunPoint>]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    runs.iter()
        .map(|p| match p.as_ref().and_then(|p| p.pass_rate) {
            Some(rate) => BARS[((rate * 7.0).round() as usize).min(7)],
            None => '·',
        })
        .collect()
}

/// A file's figures as the terminal writes them: `3/5`, `-` when absent.
pub fn point_text(point: &Option<RunPoint>) -> String {
    match point {
        Some(p) => format!("{}/{}", p.passed, p.judged),
        None => "-".to_owned(),
    }
}
