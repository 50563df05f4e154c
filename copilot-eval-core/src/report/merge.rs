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
//! `schema_version` other than this copilot-eval's ([`SCHEMA_VERSION`]), the same test in two
//! inputs (overlapping shards, or one shard given twice), shards run in different modes or on
//! different runtime versions, and shards whose costs were estimated in different currencies.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SCHEMA_VERSION, SuiteReport, SuiteTotals};

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
        "{} has schema_version {found:?}, but this copilot-eval reads and writes version {expected:?}; merge artifacts written by the same copilot-eval version",
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
    /// Two inputs disagree on something that must be the same across the shards of one suite.
    #[error(
        "{} and {} disagree on the {what} ({first_value} vs {second_value}): they are not shards of one suite run",
        first.display(),
        second.display()
    )]
    Incompatible {
        /// What differs: `mode`, `runtime version` or `cost currency`.
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
/// Errors: [`MergeError::Read`] (unreadable file, not JSON, no `schema_version`, or a shape
/// this version does not read); [`MergeError::SchemaVersion`].
pub fn read_shard(path: &Path) -> Result<SuiteReport, MergeError> {
    let read = |message: String| MergeError::Read {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| read(format!("not JSON: {e}")))?;
    let version = value
        .get("schema_version")
        .and_then(Value::as_str)
        .ok_or_else(|| read("not a copilot-eval results file (no schema_version)".into()))?;
    if version != SCHEMA_VERSION {
        return Err(MergeError::SchemaVersion {
            path: path.to_path_buf(),
            found: version.to_owned(),
            expected: SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(|e| read(format!("not a valid results file: {e}")))
}

/// Reads every input ([`read_shard`]) and merges them ([`merge`]).
///
/// Errors: as [`read_shard`] and [`merge`].
pub fn merge_files(paths: &[PathBuf]) -> Result<SuiteReport, MergeError> {
    let shards = paths
        .iter()
        .map(|path| read_shard(path).map(|report| (path.clone(), report)))
        .collect::<Result<Vec<_>, _>>()?;
    merge(&shards)
}

/// Merges shard reports, each with the file it came from (for errors), into one report (see
/// the [module documentation](self)). `tool`, `runtime` and the cost settings are the first
/// shard's; `cost_control.cap_reached` lists every shard's reached cap.
///
/// Errors: [`MergeError::NoInput`], [`MergeError::SchemaVersion`] (a report of another version
/// built in memory), [`MergeError::Duplicate`], [`MergeError::Incompatible`].
pub fn merge(shards: &[(PathBuf, SuiteReport)]) -> Result<SuiteReport, MergeError> {
    let Some((first_path, first)) = shards.first() else {
        return Err(MergeError::NoInput);
    };
    let mut merged = first.clone();
    let mut tests = Vec::new();
    let mut origin: Vec<(&str, &str, &Path)> = Vec::new();
    let mut caps: Vec<String> = Vec::new();
    for (path, report) in shards {
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
        if report.mode != first.mode {
            return Err(incompatible(
                "mode",
                first.mode.clone(),
                report.mode.clone(),
            ));
        }
        if let (Some(a), Some(b)) = (&first.runtime.version, &report.runtime.version)
            && a != b
        {
            return Err(incompatible("runtime version", a.clone(), b.clone()));
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
        for test in &report.tests {
            if let Some((_, _, earlier)) = origin
                .iter()
                .find(|(b, id, _)| *b == test.binary && *id == test.test_id)
            {
                return Err(MergeError::Duplicate {
                    binary: test.binary.clone(),
                    name: test.name.clone(),
                    first: earlier.to_path_buf(),
                    second: path.clone(),
                });
            }
            origin.push((&test.binary, &test.test_id, path));
            tests.push(test.clone());
        }
    }
    // List order: binaries by id, then libtest's order (its names, sorted).
    tests.sort_by(|a, b| (&a.binary, &a.test_id).cmp(&(&b.binary, &b.test_id)));
    if let Some(control) = merged.cost_control.as_mut() {
        control.cap_reached = (!caps.is_empty()).then(|| caps.join("; "));
    }
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
            merged.started_at = earliest.unwrap_or_else(|| first.started_at.clone());
            merged.duration_ms = end.saturating_sub(start * 1000);
        }
        None => {
            merged.duration_ms = shards.iter().map(|(_, r)| r.duration_ms).max().unwrap_or(0);
        }
    }
    merged.schema_version = SCHEMA_VERSION.to_owned();
    merged.totals = SuiteTotals::of(&tests);
    merged.tests = tests;
    Ok(merged)
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the runner writes it
/// (`YYYY-MM-DDTHH:MM:SSZ`); `None` for anything else.
fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> { text.get(range)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (the inverse of `report::rfc3339`).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::report::{Outcome, RuntimeInfo, TestRecord, ToolInfo};

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
            started_at: started_at.into(),
            duration_ms,
            totals: SuiteTotals::of(&tests),
            cost_control: None,
            tests,
        }
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
        let merged = merge(&[("a.json".into(), a), ("b.json".into(), b)]).unwrap();
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
        let err = merge(&[("a.json".into(), a.clone()), ("b.json".into(), a.clone())]).unwrap_err();
        assert!(matches!(err, MergeError::Duplicate { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("`t`") && text.contains("a.json") && text.contains("b.json"),
            "{text}"
        );

        let mut live = report("2026-11-30T10:00:00Z", 1, vec![]);
        live.mode = "live".into();
        let err = merge(&[("a.json".into(), a.clone()), ("c.json".into(), live)]).unwrap_err();
        assert!(
            err.to_string()
                .contains("disagree on the mode (replay vs live)"),
            "{err}"
        );

        let mut other = report("2026-11-30T10:00:00Z", 1, vec![]);
        other.runtime.version = Some("1.0.200".into());
        let err = merge(&[("a.json".into(), a), ("d.json".into(), other)]).unwrap_err();
        assert!(err.to_string().contains("runtime version"), "{err}");

        assert!(matches!(merge(&[]), Err(MergeError::NoInput)));
    }

    #[test]
    fn files_of_another_schema_version_are_refused_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"schema_version": "0", "tests": "whatever"}"#).unwrap();
        let err = merge_files(&[old]).unwrap_err();
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
        let err = merge_files(&[junk]).unwrap_err();
        assert!(err.to_string().contains("no schema_version"), "{err}");
        let good = dir.path().join("good.json");
        let report = report(
            "2026-11-30T10:00:00Z",
            1,
            vec![test("q", "t", Outcome::Passed)],
        );
        std::fs::write(&good, serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(merge_files(&[good]).unwrap().tests, report.tests);
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
