//! Replay of a test's cassette through the cassette engine ([`crate::cassette`]).

use std::path::Path;

use crate::cassette::{
    ReplayConfig, ReplaySession, recorded_trials, trial_cassette_path, trial_folder,
};
use crate::eval::CopilotEval;
use crate::report::ReplayRecord;
use crate::result::CopilotResult;
use crate::run::{RunOptions, run_turns};

/// Run `eval` on `prompts` (one session) offline against the cassette at `path`: start a
/// [`ReplaySession`], run through its options (a miss or an unconsumed recording ends the run
/// with `replay_mismatch`), stop its server; return the run's replay record (the cassette, the
/// recorded conversations the run did not consume, and every miss's diagnosis) with the
/// result. `config` and `adjust` (the run's home, a session to resume) shape the replay and
/// the run's options.
///
/// Errors (setup errors of the test): the cassette cannot be read or is malformed (the message
/// names file, line and column), or its loopback server cannot start.
pub(crate) async fn run(
    eval: &CopilotEval,
    prompts: &[crate::eval::Prompt],
    path: &Path,
    config: ReplayConfig,
    adjust: &(dyn Fn(RunOptions) -> RunOptions + Sync),
) -> Result<(CopilotResult, ReplayRecord), String> {
    let session = ReplaySession::start_with(path, config)
        .await
        .map_err(|e| format!("replay mode: {e}; no live request was made"))?;
    let result = run_turns(eval, prompts, &adjust(session.run_options())).await;
    let replay = ReplayRecord {
        cassette: path.display().to_string(),
        unconsumed: session.unconsumed(),
        misses: session.misses().iter().map(ToString::to_string).collect(),
    };
    session.shutdown().await;
    Ok((result, replay))
}

/// The setup error of a replay whose cassette `cassette` (the path
/// [`TestConfig::cassette_path_in_trial`](super::TestConfig::cassette_path_in_trial) chose) is
/// not a file: it names the missing file(s) and the fix.
///
/// - In `trial` of an eval with trial cassettes: every trial cassette of `1..=trials` that is
///   missing, the trials recorded, and the two fixes (fewer trials, or record the missing ones).
/// - Without a trial, for an eval that has only trial cassettes: where they are and the
///   `--replay --trials N` that replays them.
/// - Otherwise: the one missing cassette.
pub(crate) fn missing_cassette(
    config: &super::TestConfig,
    cassette: &Path,
    trial: Option<crate::report::TrialOf>,
) -> String {
    let first = config.cassette_path();
    let test = config.test_path();
    let ablated = super::ablation_from_env();
    if !ablated.is_empty() && !cassette.is_file() {
        let kinds: Vec<&str> = ablated.iter().map(|kind| kind.as_str()).collect();
        return format!(
            "replay mode: no cassette at {} for the ablated side (without {}): each side records its own; record it with `cargo copilot-eval --record --ablate {} {test}`; no live request was made",
            cassette.display(),
            kinds.join(", "),
            kinds.join(" --ablate "),
        );
    }
    let recorded = recorded_trials(&first);
    let folder = trial_folder(&first);
    // The trials `--trials K` can replay: 1..=K all recorded, K > 1 (one trial is no trials).
    let replayable = (1..).take_while(|k| recorded.contains(k)).count();
    let fewer = if replayable > 1 {
        format!("replay the {replayable} recorded ones (`--trials {replayable}`), or ")
    } else {
        String::new()
    };
    let listed = |trials: &[u32]| -> String {
        let names: Vec<String> = trials.iter().map(|k| format!("trial-{k}")).collect();
        names.join(", ")
    };
    match trial {
        Some(trial)
            if !recorded.is_empty() && cassette == trial_cassette_path(&first, trial.trial) =>
        {
            let missing: Vec<String> = (1..=trial.trials)
                .filter(|k| !recorded.contains(k))
                .map(|k| trial_cassette_path(&first, k).display().to_string())
                .collect();
            format!(
                "replay mode: no cassette for trial {} of {}: missing {}; the eval's recorded trials in {} are {}: {fewer}record the missing ones with `cargo copilot-eval --record --trials {} {test}`; no live request was made",
                trial.trial,
                trial.trials,
                missing.join(", "),
                folder.display(),
                listed(&recorded),
                trial.trials,
            )
        }
        None if !recorded.is_empty() => format!(
            "replay mode: no cassette at {}; the eval has only trial cassettes ({} in {}): {}record a single cassette with `cargo copilot-eval --record {test}`; no live request was made",
            cassette.display(),
            listed(&recorded),
            folder.display(),
            if replayable > 1 {
                format!("replay them with `cargo copilot-eval --replay --trials {replayable}`, or ")
            } else {
                String::new()
            },
        ),
        _ => format!(
            "replay mode: no cassette at {}; no live request was made. Record one with `cargo copilot-eval --record {test}` (a live run), or script the model with `ctx.offline(..)` (offline in every mode, no cassette; docs/getting-started.md), or point the attribute's `cassette` key at one",
            cassette.display()
        ),
    }
}
