//! Merging the JSON results of several shards (`cargo copilot-eval --partition K/N --json ...`
//! on several machines) into the one report of the whole suite:
//! `cargo copilot-eval merge IN.json... --json OUT --junit OUT`.
//!
//! The merged report is what one unsharded run of the same selection would have written, apart
//! from timings: the tests of every shard in list order (binary id, then libtest name), totals
//! summed again over them, the earliest `started_at`, and `duration_ms` from the earliest shard
//! start to the latest shard end. The JUnit XML is then written from it like a suite's.
//!
//! Refused, with an error naming the files: an input that is not a results file, a
//! `schema_version` other than this copilot-eval's ([`SCHEMA_VERSION`]) or the one before it
//! (`"1"`, read as described at [`read_shard`]), the same test in two
//! inputs (overlapping shards, or one shard given twice), shards run in different modes or on
//! different runtime versions, and shards whose costs were estimated in different currencies.
//!
//! The partition: each shard's report records the `--partition` it ran
//! ([`SuiteReport::partition`]). When any input records one, every input must, all with the
//! same kind and shard count, each shard once, and every shard from 1 to N present: an
//! incomplete set is refused naming the missing shards ("shard 2 of 3 is missing"). Inputs that
//! record no partition at all (unsharded runs) are merged as before: their completeness cannot
//! be checked.
//!
//! The runtime: a shard that records no runtime version (none resolved) may have run on any
//! runtime, so it is refused unless [`MergeOptions::allow_unknown_runtime`] is set
//! (`--allow-unknown-runtime`); the versions that are known must still agree.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{PartitionRecord, SCHEMA_VERSION, SuiteReport, SuiteTotals};

/// What `merge` accepts beyond a complete, consistent set of shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Merge shards whose report records no runtime version (`--allow-unknown-runtime`); by
    /// default they are refused with [`MergeError::UnknownRuntime`].
    pub allow_unknown_runtime: bool,
}

/// Why shard artifacts cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No input file was given.
    #[error("nothing to merge: give the JSON results of at least one shard")]
    NoInput,
    /// An input could not be read, or is not a copilot-eval results file.
    #[error("cannot read {}: {message}", path.display())]
    Read {
        /// The input file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// An input was written with another version of the results format.
    #[error(
        "{} has schema_version {found:?}, but this copilot-eval reads and writes version {expected:?} (and reads \"1\"); merge artifacts written by the same copilot-eval version",
        path.display()
    )]
    SchemaVersion {
        /// The input file.
        path: PathBuf,
        /// Its `schema_version`.
        found: String,
        /// The version this copilot-eval writes.
        expected: &'static str,
    },
    /// The same test (binary and libtest name) is in two inputs.
    #[error(
        "the test `{name}` of {binary} is in both {} and {}: shards must not overlap (was one shard given twice, or did two shards run with the same --partition?)",
        first.display(),
        second.display()
    )]
    Duplicate {
        /// The test binary id.
        binary: String,
        /// The test path.
        name: String,
        /// The input that holds it first.
        first: PathBuf,
        /// The input that holds it again.
        second: PathBuf,
    },
    /// An input records no runtime version, and [`MergeOptions::allow_unknown_runtime`] is off.
    #[error(
        "{} records no runtime version (no Copilot runtime resolved for that shard), so it may have run on another runtime than the other shards; re-run that shard with a runtime, or merge anyway with --allow-unknown-runtime",
        path.display()
    )]
    UnknownRuntime {
        /// The input file.
        path: PathBuf,
    },
    /// The inputs are shards of a partitioned suite, but not all of them.
    #[error(
        "{} of {total} {} missing ({kind} partitioning; given: {given}): merge the results of every shard",
        describe_missing(missing),
        if missing.len() == 1 { "is" } else { "are" }
    )]
    MissingShards {
        /// The partitioning kind, `hash` or `count`.
        kind: String,
        /// The shard count.
        total: u64,
        /// The missing shard numbers, ascending.
        missing: Vec<u64>,
        /// The inputs with their partitions, e.g. `a.json (count:1/3), b.json (count:3/3)`.
        given: String,
    },
    /// Two inputs hold the same shard.
    #[error(
        "shard {partition} is in both {} and {}: give each shard's results once",
        first.display(),
        second.display()
    )]
    ShardTwice {
        /// The shard, `KIND:K/N`.
        partition: PartitionRecord,
        /// The first input holding it.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// Two inputs disagree on something that must be the same across the shards of one suite.
    #[error(
        "{} and {} disagree on the {what} ({first_value} vs {second_value}): they are not shards of one suite run",
        first.display(),
        second.display()
    )]
    Incompatible {
        /// What differs: `mode`, `runtime version`, `cost currency` or `partitioning`.
        what: &'static str,
        /// The first input.
        first: PathBuf,
        /// Its value.
        first_value: String,
        /// The input that differs.
        second: PathBuf,
        /// Its value.
        second_value: String,
    },
}

/// Reads one shard's JSON results. The `schema_version` is checked before the rest is read, so
/// an incompatible file gets [`MergeError::SchemaVersion`] rather than a parse error.
///
/// A file of version `"1"` is read too, and becomes version [`SCHEMA_VERSION`]: it differs only
/// in how a subagent invocation's tool calls are written (each one's `cut_for_model` object,
/// `{full_bytes, model_bytes}`, is read as the run's tool calls write it,
/// `cut_for_model_full_bytes`).
///
/// Errors: [`MergeError::Read`] (unreadable file, not JSON, no `schema_version`, or a shape
/// this version does not read); [`MergeError::SchemaVersion`].
pub fn read_shard(path: &Path) -> Result<SuiteReport, MergeError> {
    let read = |message: String| MergeError::Read {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
    let mut value: Value =
        serde_json::from_str(&text).map_err(|e| read(format!("not JSON: {e}")))?;
    let version = value
        .get("schema_version")
        .and_then(Value::as_str)
        .ok_or_else(|| read("not a copilot-eval results file (no schema_version)".into()))?;
    if version == "1" {
        upgrade_from_version_1(&mut value);
    } else if version != SCHEMA_VERSION {
        return Err(MergeError::SchemaVersion {
            path: path.to_path_buf(),
            found: version.to_owned(),
            expected: SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(|e| read(format!("not a valid results file: {e}")))
}

/// Make a version `"1"` report version [`SCHEMA_VERSION`]: in every run's
/// `subagent_invocations[].tool_calls[]`, `cut_for_model: {full_bytes, ..}` becomes
/// `cut_for_model_full_bytes` (how every tool call is written since version `"2"`).
fn upgrade_from_version_1(report: &mut Value) {
    let runs = report["tests"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|test| test.get_mut("runs").and_then(Value::as_array_mut))
        .flatten();
    let invocations = runs
        .filter_map(|run| run.get_mut("subagent_invocations"))
        .filter_map(Value::as_array_mut)
        .flatten();
    let calls = invocations
        .filter_map(|invocation| invocation.get_mut("tool_calls"))
        .filter_map(Value::as_array_mut)
        .flatten()
        .filter_map(Value::as_object_mut);
    for call in calls {
        if let Some(full_bytes) = call
            .remove("cut_for_model")
            .and_then(|cut| cut.get("full_bytes").cloned())
        {
            call.insert("cut_for_model_full_bytes".into(), full_bytes);
        }
    }
    report["schema_version"] = Value::from(SCHEMA_VERSION);
}

/// `shard 2` or `shards 2 and 3` or `shards 1, 2 and 4`.
fn describe_missing(missing: &[u64]) -> String {
    let numbers: Vec<String> = missing.iter().map(u64::to_string).collect();
    match numbers.as_slice() {
        [one] => format!("shard {one}"),
        [rest @ .., last] => format!("shards {} and {last}", rest.join(", ")),
        [] => "no shard".to_owned(),
    }
}

/// Reads every input ([`read_shard`]) and merges them ([`merge`]).
///
/// Errors: as [`read_shard`] and [`merge`].
pub fn merge_files(paths: &[PathBuf], options: MergeOptions) -> Result<SuiteReport, MergeError> {
    let shards = paths
        .iter()
        .map(|path| read_shard(path).map(|report| (path.clone(), report)))
        .collect::<Result<Vec<_>, _>>()?;
    merge(&shards, options)
}

/// Checks that the shards' partitions form one complete set (see the
/// [module documentation](self)); inputs with no partition at all pass.
///
/// Errors: [`MergeError::Incompatible`] (`partitioning`: one input sharded and another not, or
/// another kind or shard count), [`MergeError::ShardTwice`], [`MergeError::MissingShards`].
fn check_partitions(shards: &[(PathBuf, SuiteReport)]) -> Result<(), MergeError> {
    let Some((first_path, first)) = shards.iter().find(|(_, r)| r.partition.is_some()) else {
        return Ok(());
    };
    let first_partition = first.partition.as_ref().expect("found with a partition");
    let shown = |p: &Option<PartitionRecord>| {
        p.as_ref()
            .map_or_else(|| "none (an unsharded run)".to_owned(), |p| p.to_string())
    };
    let mut seen: Vec<(&PartitionRecord, &Path)> = Vec::new();
    for (path, report) in shards {
        let partition = match &report.partition {
            Some(p) if p.kind == first_partition.kind && p.total == first_partition.total => p,
            other => {
                return Err(MergeError::Incompatible {
                    what: "partitioning",
                    first: first_path.clone(),
                    first_value: first_partition.to_string(),
                    second: path.clone(),
                    second_value: shown(other),
                });
            }
        };
        if let Some((_, earlier)) = seen.iter().find(|(p, _)| p.shard == partition.shard) {
            return Err(MergeError::ShardTwice {
                partition: partition.clone(),
                first: earlier.to_path_buf(),
                second: path.clone(),
            });
        }
        seen.push((partition, path));
    }
    let missing: Vec<u64> = (1..=first_partition.total)
        .filter(|k| !seen.iter().any(|(p, _)| p.shard == *k))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let given: Vec<String> = seen
        .iter()
        .map(|(p, path)| format!("{} ({p})", path.display()))
        .collect();
    Err(MergeError::MissingShards {
        kind: first_partition.kind.clone(),
        total: first_partition.total,
        missing,
        given: given.join(", "),
    })
}

/// Merges shard reports, each with the file it came from (for errors), into one report (see
/// the [module documentation](self)). `tool` and the cost settings are the first shard's,
/// `runtime` the first with a known version (else the first shard's); `cost_control.cap_reached`
/// lists every shard's reached cap; `partition` is absent (the set is the whole suite).
///
/// Errors: [`MergeError::NoInput`], [`MergeError::SchemaVersion`] (a report of another version
/// built in memory), [`MergeError::UnknownRuntime`], [`MergeError::Duplicate`],
/// [`MergeError::Incompatible`], [`MergeError::ShardTwice`], [`MergeError::MissingShards`].
pub fn merge(
    shards: &[(PathBuf, SuiteReport)],
    options: MergeOptions,
) -> Result<SuiteReport, MergeError> {
    let Some((first_path, first)) = shards.first() else {
        return Err(MergeError::NoInput);
    };
    if !options.allow_unknown_runtime
        && let Some((path, _)) = shards.iter().find(|(_, r)| r.runtime.version.is_none())
    {
        return Err(MergeError::UnknownRuntime { path: path.clone() });
    }
    check_partitions(shards)?;
    // The versions that are known must agree with the first known one.
    let known_runtime = shards.iter().find(|(_, r)| r.runtime.version.is_some());
    let mut merged = first.clone();
    if let Some((_, report)) = known_runtime {
        merged.runtime = report.runtime.clone();
    }
    merged.partition = None;
    merged.pool = shards
        .iter()
        .filter_map(|(_, r)| r.pool)
        .reduce(|a, b| super::PoolRecord {
            runtimes_started: a.runtimes_started + b.runtimes_started,
            runtimes_retired: a.runtimes_retired + b.runtimes_retired,
        });
    let mut tests = Vec::new();
    let mut origin = Vec::new();
    let mut trial_summaries = Vec::new();
    let mut caps: Vec<String> = Vec::new();
    for (path, report) in shards {
        check_agrees((first_path, first), known_runtime, (path, report))?;
        if merged.cost_control.is_none() {
            merged.cost_control = report.cost_control.clone();
        }
        if let Some(cap) = report
            .cost_control
            .as_ref()
            .and_then(|c| c.cap_reached.clone())
            && !caps.contains(&cap)
        {
            caps.push(cap);
        }
        // An eval's trials are one test of the list, so they are all in one shard, with its
        // summary.
        trial_summaries.extend(report.trial_summaries.iter().cloned());
        add_tests(&mut tests, &mut origin, path, report)?;
    }
    // List order: binaries by id, then libtest's order (its names, sorted), then trials.
    let trial = |t: &super::TestRecord| t.trial.map(|t| t.trial);
    tests.sort_by(|a, b| (&a.binary, &a.test_id, trial(a)).cmp(&(&b.binary, &b.test_id, trial(b))));
    let order = |s: &super::TrialSummary| {
        tests
            .iter()
            .position(|t| t.binary == s.binary && t.name == s.name)
    };
    trial_summaries.sort_by_key(|s| order(s));
    merged.trial_summaries = trial_summaries;
    merged.model_matrix = super::matrix::of(&tests);
    merged.skill_triggers = super::triggers::of(&tests);
    merged.skill_lift = super::lift::of(&tests);
    merged.discrimination = super::discrimination::of(&tests);
    // Each shard compared its own records with the labels: none is the whole suite's.
    merged.judge_labels = None;
    // Each shard compared its own records with the baseline: none is the whole suite's.
    merged.baseline = None;
    merged.noise_floor = super::aa::of(&tests);
    let requested = merged.requested_mode.clone();
    merged.mode = super::suite_mode(&tests, requested.as_deref().unwrap_or(&merged.mode));
    if let Some(control) = merged.cost_control.as_mut() {
        control.cap_reached = (!caps.is_empty()).then(|| caps.join("; "));
    }
    (merged.started_at, merged.duration_ms) = span(shards, first);
    merged.schema_version = SCHEMA_VERSION.to_owned();
    merged.totals = SuiteTotals::of(&tests);
    merged.tests = tests;
    Ok(merged)
}

/// Whether `shard` may be merged with `first`: the same results version, the same command
/// mode, the runtime version of `known_runtime` (the first shard that knows it) and the same
/// cost currency ([`MergeError::SchemaVersion`], [`MergeError::Incompatible`]).
fn check_agrees(
    (first_path, first): (&PathBuf, &SuiteReport),
    known_runtime: Option<&(PathBuf, SuiteReport)>,
    (path, report): (&PathBuf, &SuiteReport),
) -> Result<(), MergeError> {
    if report.schema_version != SCHEMA_VERSION {
        return Err(MergeError::SchemaVersion {
            path: path.clone(),
            found: report.schema_version.clone(),
            expected: SCHEMA_VERSION,
        });
    }
    let incompatible = |what, a: String, b: String| MergeError::Incompatible {
        what,
        first: first_path.clone(),
        first_value: a,
        second: path.clone(),
        second_value: b,
    };
    // The command's mode: shards of one suite ran under one command line (their runs' modes
    // may differ: a shard of scripted evals beside one of replays).
    let asked = |r: &SuiteReport| r.requested_mode.clone().unwrap_or_else(|| r.mode.clone());
    if asked(report) != asked(first) {
        return Err(incompatible("mode", asked(first), asked(report)));
    }
    if let (Some((known_path, known)), Some(b)) = (known_runtime, &report.runtime.version)
        && let Some(a) = &known.runtime.version
        && a != b
    {
        return Err(MergeError::Incompatible {
            what: "runtime version",
            first: known_path.clone(),
            first_value: a.clone(),
            second: path.clone(),
            second_value: b.clone(),
        });
    }
    if let (Some(a), Some(b)) = (&first.cost_control, &report.cost_control)
        && a.currency != b.currency
    {
        return Err(incompatible(
            "cost currency",
            a.currency.clone(),
            b.currency.clone(),
        ));
    }
    Ok(())
}

/// Adds the tests of `report` (read from `path`) to `tests`; `origin` holds the binary, id,
/// trial and file of each test added so far: a test already added from another shard is
/// [`MergeError::Duplicate`].
fn add_tests<'a>(
    tests: &mut Vec<super::TestRecord>,
    origin: &mut Vec<(&'a str, &'a str, Option<u32>, &'a Path)>,
    path: &'a Path,
    report: &'a SuiteReport,
) -> Result<(), MergeError> {
    for test in &report.tests {
        let trial = test.trial.map(|t| t.trial);
        if let Some((_, _, _, earlier)) = origin
            .iter()
            .find(|(b, id, t, _)| *b == test.binary && *id == test.test_id && *t == trial)
        {
            return Err(MergeError::Duplicate {
                binary: test.binary.clone(),
                name: test.name.clone(),
                first: earlier.to_path_buf(),
                second: path.to_path_buf(),
            });
        }
        origin.push((&test.binary, &test.test_id, trial, path));
        tests.push(test.clone());
    }
    Ok(())
}

/// When the merged suite started and how long it ran: from the earliest shard's start to the
/// latest shard's end; when a shard's start cannot be read, `first`'s start and the longest
/// shard's duration.
fn span(shards: &[(PathBuf, SuiteReport)], first: &SuiteReport) -> (String, u64) {
    let spans: Option<Vec<(u64, u64)>> = shards
        .iter()
        .map(|(_, r)| parse_rfc3339(&r.started_at).map(|s| (s, r.duration_ms)))
        .collect();
    match spans {
        Some(spans) => {
            let start = spans.iter().map(|(s, _)| *s).min().unwrap_or(0);
            let end = spans.iter().map(|(s, d)| s * 1000 + d).max().unwrap_or(0);
            let earliest = shards
                .iter()
                .find(|(_, r)| parse_rfc3339(&r.started_at) == Some(start))
                .map(|(_, r)| r.started_at.clone());
            (
                earliest.unwrap_or_else(|| first.started_at.clone()),
                end.saturating_sub(start * 1000),
            )
        }
        None => (
            first.started_at.clone(),
            shards.iter().map(|(_, r)| r.duration_ms).max().unwrap_or(0),
        ),
    }
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the runner writes it
/// (`YYYY-MM-DDTHH:MM:SSZ`, read by `humantime`); `None` for anything else.
fn parse_rfc3339(text: &str) -> Option<u64> {
    let time = humantime::parse_rfc3339(text).ok()?;
    time.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::report::{Outcome, PartitionRecord, RuntimeInfo, TestRecord, ToolInfo};

    fn test(binary: &str, name: &str, outcome: Outcome) -> TestRecord {
        let mut value = serde_json::json!({
            "name": name,
            "test_id": format!("{name}::__copilot_eval"),
            "binary": binary,
            "outcome": outcome,
            "duration_ms": 5,
            "properties": [],
            "runs": [],
        });
        if outcome == Outcome::Failed {
            value["message"] = "assertion failed".into();
        }
        serde_json::from_value(value).unwrap()
    }

    fn report(started_at: &str, duration_ms: u64, tests: Vec<TestRecord>) -> SuiteReport {
        SuiteReport {
            provenance: None,
            trial_summaries: Vec::new(),
            model_matrix: Vec::new(),
            skill_triggers: Vec::new(),
            skill_lift: None,
            discrimination: None,
            judge_labels: None,
            noise_floor: None,
            baseline: None,
            schema_version: SCHEMA_VERSION.to_owned(),
            tool: ToolInfo {
                name: "copilot-eval".into(),
                version: "0.1.0".into(),
            },
            runtime: RuntimeInfo {
                version: Some("1.0.102".into()),
                path: Some("/rt".into()),
                error: None,
            },
            mode: "replay".into(),
            requested_mode: None,
            started_at: started_at.into(),
            duration_ms,
            totals: SuiteTotals::of(&tests),
            cost_control: None,
            partition: None,
            pool: None,
            tests,
        }
    }

    fn shard(kind: &str, k: u64, n: u64, tests: Vec<TestRecord>) -> SuiteReport {
        let mut shard = report("2026-11-30T10:00:00Z", 1, tests);
        shard.partition = Some(PartitionRecord {
            kind: kind.into(),
            shard: k,
            total: n,
        });
        shard
    }

    const STRICT: MergeOptions = MergeOptions {
        allow_unknown_runtime: false,
    };

    #[test]
    fn an_incomplete_set_of_shards_is_refused_naming_the_missing_shard() {
        let one = (
            "one.json".into(),
            shard("count", 1, 3, vec![test("q", "a", Outcome::Passed)]),
        );
        let two = (
            "two.json".into(),
            shard("count", 2, 3, vec![test("q", "b", Outcome::Passed)]),
        );
        // An empty shard still counts: its tests all went to other shards.
        let three = ("three.json".into(), shard("count", 3, 3, vec![]));
        let err = merge(&[one.clone(), three.clone()], STRICT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard 2 of 3 is missing (count partitioning; given: one.json (count:1/3), three.json (count:3/3)): merge the results of every shard"
        );
        let err = merge(std::slice::from_ref(&two), STRICT).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("shards 1 and 3 of 3 are missing"),
            "{err}"
        );

        let merged = merge(&[three.clone(), one.clone(), two.clone()], STRICT).unwrap();
        assert_eq!(merged.tests.len(), 2);
        assert_eq!(
            merged.partition, None,
            "the merged report is the whole suite"
        );

        // Mixed sets: another kind, another count, a sharded and an unsharded run, one shard twice.
        let hash = ("hash.json".into(), shard("hash", 2, 3, vec![]));
        let err = merge(&[one.clone(), hash, three.clone()], STRICT).unwrap_err();
        assert!(
            err.to_string()
                .contains("disagree on the partitioning (count:1/3 vs hash:2/3)"),
            "{err}"
        );
        let four = ("four.json".into(), shard("count", 2, 4, vec![]));
        let err = merge(&[one.clone(), four, three.clone()], STRICT).unwrap_err();
        assert!(
            err.to_string().contains("(count:1/3 vs count:2/4)"),
            "{err}"
        );
        let whole = (
            "whole.json".into(),
            report("2026-11-30T10:00:00Z", 1, vec![]),
        );
        let err = merge(&[whole, one.clone(), two.clone(), three.clone()], STRICT).unwrap_err();
        assert!(
            err.to_string()
                .contains("(count:1/3 vs none (an unsharded run))"),
            "{err}"
        );
        let again = ("again.json".into(), shard("count", 3, 3, vec![]));
        let err = merge(&[one, two, three, again], STRICT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard count:3/3 is in both three.json and again.json: give each shard's results once"
        );
    }

    #[test]
    fn a_shard_without_a_runtime_version_is_refused_unless_allowed() {
        let known = (
            "known.json".into(),
            report(
                "2026-11-30T10:00:00Z",
                1,
                vec![test("q", "a", Outcome::Passed)],
            ),
        );
        let mut unknown = report(
            "2026-11-30T10:00:00Z",
            1,
            vec![test("q", "b", Outcome::Passed)],
        );
        unknown.runtime = RuntimeInfo::default();
        let unknown = ("unknown.json".into(), unknown);
        let shards = [unknown.clone(), known.clone()];
        let err = merge(&shards, STRICT).unwrap_err();
        assert!(
            matches!(&err, MergeError::UnknownRuntime { path } if path == Path::new("unknown.json")),
            "{err}"
        );
        assert!(err.to_string().contains("--allow-unknown-runtime"), "{err}");

        let allow = MergeOptions {
            allow_unknown_runtime: true,
        };
        let merged = merge(&shards, allow).unwrap();
        assert_eq!(merged.tests.len(), 2);
        assert_eq!(
            merged.runtime.version.as_deref(),
            Some("1.0.102"),
            "the known version"
        );
        // Allowed unknowns do not hide a disagreement between the known versions.
        let mut other = report("2026-11-30T10:00:00Z", 1, vec![]);
        other.runtime.version = Some("1.0.200".into());
        let err = merge(&[unknown, known, ("other.json".into(), other)], allow).unwrap_err();
        assert!(
            err.to_string()
                .contains("known.json and other.json disagree on the runtime version"),
            "{err}"
        );
    }

    #[test]
    fn shards_merge_into_list_order_with_totals_and_the_overall_span() {
        let a = report(
            "2026-11-30T10:00:05Z",
            3_000,
            vec![
                test("q::evals", "b", Outcome::Passed),
                test("p", "z", Outcome::Passed),
            ],
        );
        let b = report(
            "2026-11-30T10:00:00Z",
            2_000,
            vec![
                test("q::evals", "a", Outcome::Failed),
                test("q::evals", "a1", Outcome::Passed),
            ],
        );
        let merged = merge(&[("a.json".into(), a), ("b.json".into(), b)], STRICT).unwrap();
        let order: Vec<(&str, &str)> = merged
            .tests
            .iter()
            .map(|t| (t.binary.as_str(), t.name.as_str()))
            .collect();
        // `a1::__copilot_eval` sorts before `a::__copilot_eval`, as libtest lists them.
        assert_eq!(
            order,
            [
                ("p", "z"),
                ("q::evals", "a1"),
                ("q::evals", "a"),
                ("q::evals", "b")
            ]
        );
        assert_eq!((merged.totals.tests, merged.totals.passed), (4, 3));
        assert_eq!(merged.totals.failed, 1);
        assert_eq!(merged.started_at, "2026-11-30T10:00:00Z");
        assert_eq!(merged.duration_ms, 8_000);
    }

    #[test]
    fn overlaps_and_incompatible_shards_are_refused() {
        let a = report(
            "2026-11-30T10:00:00Z",
            1,
            vec![test("q", "t", Outcome::Passed)],
        );
        let err = merge(
            &[("a.json".into(), a.clone()), ("b.json".into(), a.clone())],
            STRICT,
        )
        .unwrap_err();
        assert!(matches!(err, MergeError::Duplicate { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("`t`") && text.contains("a.json") && text.contains("b.json"),
            "{text}"
        );

        let mut live = report("2026-11-30T10:00:00Z", 1, vec![]);
        live.mode = "live".into();
        let err = merge(
            &[("a.json".into(), a.clone()), ("c.json".into(), live)],
            STRICT,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("disagree on the mode (replay vs live)"),
            "{err}"
        );

        let mut other = report("2026-11-30T10:00:00Z", 1, vec![]);
        other.runtime.version = Some("1.0.200".into());
        let err = merge(&[("a.json".into(), a), ("d.json".into(), other)], STRICT).unwrap_err();
        assert!(err.to_string().contains("runtime version"), "{err}");

        assert!(matches!(merge(&[], STRICT), Err(MergeError::NoInput)));
    }

    #[test]
    fn files_of_another_schema_version_are_refused_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"schema_version": "0", "tests": "whatever"}"#).unwrap();
        let err = merge_files(&[old], STRICT).unwrap_err();
        assert!(
            matches!(&err, MergeError::SchemaVersion { found, .. } if found == "0"),
            "{err}"
        );
        assert!(
            err.to_string().contains("same copilot-eval version"),
            "{err}"
        );
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "[1, 2]").unwrap();
        let err = merge_files(&[junk], STRICT).unwrap_err();
        assert!(err.to_string().contains("no schema_version"), "{err}");
        let good = dir.path().join("good.json");
        let report = report(
            "2026-11-30T10:00:00Z",
            1,
            vec![test("q", "t", Outcome::Passed)],
        );
        std::fs::write(&good, serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(merge_files(&[good], STRICT).unwrap().tests, report.tests);
    }

    #[test]
    fn rfc3339_round_trips_with_the_writer() {
        for secs in [0u64, 86_399, 951_782_400, 1_700_000_000, 4_102_444_800] {
            let text = crate::report::rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
            assert_eq!(parse_rfc3339(&text), Some(secs), "{text}");
        }
        assert_eq!(parse_rfc3339("2026-11-30 10:00:00"), None);
    }
}
