//! The recording and sharding options of a suite run: `--record[=missing|all|judges]`,
//! `--partition hash:K/N|count:K/N`, `--cassette-root DIR`.

use std::path::PathBuf;

use copilot_eval_core::harness::{Mode, RecordPolicy, recording_refused};
use copilot_eval_core::suite::partition::Partition;

/// Which cassettes `--record` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum RecordWhen {
    /// Record the runs that have no cassette yet; replay the others (the default).
    Missing,
    /// Record every run again, replacing existing cassettes.
    All,
    /// Record every judge session again (re-judging), replaying the other runs' cassettes.
    Judges,
}

/// Recording and sharding arguments of the run command (flattened into its options).
#[derive(clap::Args)]
pub(crate) struct RecordArgs {
    /// Run live and write each run's cassette: `missing` (also a bare --record) records only
    /// runs without a cassette and replays the others; `all` records every run again; `judges`
    /// records every judge session again (after a rubric changed) while the agent's runs replay
    /// their cassettes. Refused when CI is set: cassettes are read-only in CI.
    #[arg(
        long,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "missing",
        conflicts_with = "replay"
    )]
    record: Option<RecordWhen>,
    /// With --record: refuse to write a cassette that holds a value no normaliser covers (a
    /// path under a temporary folder, a uuid, a timestamp in a prompt, tool result or tool-call
    /// arguments); without it such values are written with a warning naming the cassette line.
    #[arg(long, requires = "record")]
    strict: bool,
    /// Run only shard K of N of the selected evals: hash:K/N (by a stable hash of each test) or
    /// count:K/N (round robin in list order). The shards together run every eval exactly once.
    #[arg(long, value_name = "hash:K/N|count:K/N")]
    partition: Option<Partition>,
    /// Read and write cassettes under DIR instead of each package's root
    /// (DIR/tests/cassettes/...).
    #[arg(long, value_name = "DIR")]
    cassette_root: Option<PathBuf>,
}

impl RecordArgs {
    /// The suite's mode: record (with its policy) when `--record` was given, else replay or
    /// live.
    ///
    /// Errors (a usage error for the caller): `--record` under CI.
    pub(crate) fn mode(&self, replay: bool) -> Result<Mode, String> {
        match self.record {
            Some(when) => {
                if let Some(refused) = recording_refused() {
                    return Err(refused);
                }
                Ok(Mode::Record(match when {
                    RecordWhen::Missing => RecordPolicy::Missing,
                    RecordWhen::All => RecordPolicy::All,
                    RecordWhen::Judges => RecordPolicy::Judges,
                }))
            }
            None if replay => Ok(Mode::Replay),
            None => Ok(Mode::Live),
        }
    }

    /// `--strict`.
    pub(crate) fn strict(&self) -> bool {
        self.strict
    }

    /// `--partition`, if given.
    pub(crate) fn partition(&self) -> Option<Partition> {
        self.partition
    }

    /// `--cassette-root`, made absolute (the tests run in their package roots).
    ///
    /// Errors: the current directory cannot be read.
    pub(crate) fn cassette_root(&self) -> Result<Option<PathBuf>, String> {
        absolute_cassette_root(self.cassette_root.clone())
    }
}

/// A `--cassette-root` made absolute against the current directory (the tests run in their
/// package roots).
///
/// Errors: the current directory cannot be read.
pub(crate) fn absolute_cassette_root(dir: Option<PathBuf>) -> Result<Option<PathBuf>, String> {
    match dir {
        Some(dir) if dir.is_relative() => std::env::current_dir()
            .map(|cwd| Some(cwd.join(dir)))
            .map_err(|e| format!("--cassette-root: cannot read the current directory: {e}")),
        other => Ok(other),
    }
}
