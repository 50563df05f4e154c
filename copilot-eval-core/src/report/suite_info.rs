//! What a suite report says about where it ran: the program that wrote it ([`ToolInfo`]), the
//! runtime ([`RuntimeInfo`]), the pool of warm runtimes ([`PoolRecord`]) and the shard
//! ([`PartitionRecord`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The runner's pool of warm runtimes over a suite run ([`SuiteReport::pool`](super::SuiteReport::pool)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PoolRecord {
    /// Runtimes the pool started.
    pub runtimes_started: u64,
    /// Runtimes the pool stopped before the suite ended: after a test process that did not
    /// end cleanly, after `POOL_MAX_SESSIONS` sessions, found dead, or over the idle limit.
    pub runtimes_retired: u64,
}

/// Which shard of a partitioned suite a report holds, as given to `--partition KIND:K/N`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PartitionRecord {
    /// How the tests were split: `hash` or `count`.
    pub kind: String,
    /// This shard, from 1 to `total`.
    pub shard: u64,
    /// The number of shards.
    pub total: u64,
}

impl std::fmt::Display for PartitionRecord {
    /// `KIND:K/N`, as `--partition` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}/{}", self.kind, self.shard, self.total)
    }
}

/// Name and version of the program that wrote the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    /// Always `copilot-eval`.
    pub name: String,
    /// The version of `copilot-eval-core` that ran the suite.
    pub version: String,
}

/// The runtime the suite resolved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeInfo {
    /// The runtime's `--version` output, when a runtime resolved and answered.
    pub version: Option<String>,
    /// The executable's path, when a runtime resolved.
    pub path: Option<String>,
    /// Why no runtime resolved, when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The suite's `mode` ([`SuiteReport::mode`](super::SuiteReport::mode)): where the model
/// requests of its runs went, from each run's `mode` (`live`, `replay`, `scripted`), every run
/// of every test counted (judges and comparison sides too): that mode when all runs share it,
/// `mixed` when they do not; `requested` (the command's mode) when no run was made.
pub fn suite_mode(tests: &[super::TestRecord], requested: &str) -> String {
    let mut modes = tests
        .iter()
        .flat_map(|t| t.runs.iter().map(|r| r.mode.as_str()));
    match modes.next() {
        None => requested.to_owned(),
        Some(first) if modes.all(|m| m == first) => first.to_owned(),
        Some(_) => "mixed".to_owned(),
    }
}
