//! Replay of a test's cassette through the cassette engine ([`crate::cassette`]).

use std::path::Path;

use crate::cassette::{ReplayConfig, ReplaySession};
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
