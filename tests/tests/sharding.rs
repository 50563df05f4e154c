//! Sharding and merging end to end, through the real `cargo copilot-eval` and the real runtime:
//! three shards of the quick-start example, merged, give the artifacts of the unsharded run
//! (timings aside); merging refuses overlapping shards, an incomplete set, shards without a
//! runtime version (unless allowed) and other schema versions; the example's
//! eval tests also run (and pass, in replay mode) under `cargo nextest run`, with its
//! partitioning and JUnit output.

use std::path::Path;
use std::process::Command;

use copilot_eval_core::report::SuiteReport;
use copilot_eval_e2e::runtime_for;
use serde_json::{Map, Value, json};

mod support;

use support::{cargo, command_path, workspace_root};

/// `cargo copilot-eval ARGS`; returns the exit status, stdout and stderr.
fn copilot_eval(args: &[&str], scratch: &Path) -> (i32, String, String) {
    let output = Command::new(command_path())
        .arg("copilot-eval")
        .args(args)
        .current_dir(workspace_root())
        .env("TMPDIR", scratch)
        .env_remove("COPILOT_EVAL_MODE")
        .output()
        .expect("cargo-copilot-eval runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// The JSON results with what differs between two runs of the same suite taken out: timings
/// and durations, the start time, each run's working directory (as `${workdir}`), generated
/// agent ids (numbered per test), and the sandbox's loopback port numbers (counted).
fn comparable(report: &SuiteReport) -> Value {
    let mut value = serde_json::to_value(report).unwrap();
    // How many warm runtimes a suite starts follows how its evals are split over processes
    // (each shard starts its own): the merged count is checked against the shards' on its own.
    value.as_object_mut().unwrap().remove("pool");
    let tests = value["tests"].as_array_mut().unwrap();
    for (test, record) in tests.iter_mut().zip(&report.tests) {
        let workdirs: Vec<&str> = record
            .runs
            .iter()
            .map(|r| {
                r.working_directory
                    .to_str()
                    .expect("a UTF-8 working directory")
            })
            .collect();
        let mut agents = Vec::new();
        scrub(test, &workdirs, &mut agents);
    }
    scrub(&mut value, &[], &mut Vec::new());
    value
}

fn scrub(value: &mut Value, workdirs: &[&str], agents: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            for dir in workdirs {
                *s = s.replace(dir, "${workdir}");
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, workdirs, agents)),
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, mut v) in std::mem::take(map) {
                if key.ends_with("_ms") || key == "timings" || key == "started_at" {
                    continue;
                }
                // The runtime picks a new session id for every session it creates.
                if key == "session_id" && v.is_string() {
                    v = json!("${session_id}");
                }
                // The loopback ports a sandboxed runtime may connect to (a pooled runtime: its
                // pool's MCP relay) are picked anew by every run of the suite (each shard
                // starts its own pool): their count is compared, not their numbers.
                if key == "connect"
                    && let Value::Array(ports) = &v
                {
                    v = json!(ports.len());
                }
                let is_agent = key.ends_with("agent_id") || key == "subagents";
                let ids: Vec<&mut Value> = match &mut v {
                    Value::String(_) if is_agent => vec![&mut v],
                    Value::Array(items) if is_agent => items.iter_mut().collect(),
                    _ => Vec::new(),
                };
                for id in ids {
                    if let Some(text) = id.as_str().map(str::to_owned) {
                        let n = agents.iter().position(|a| *a == text).unwrap_or_else(|| {
                            agents.push(text.clone());
                            agents.len() - 1
                        });
                        *id = json!(format!("agent-{n}"));
                    }
                }
                scrub(&mut v, workdirs, agents);
                out.insert(key, v);
            }
            *map = out;
        }
        _ => {}
    }
}

fn read_report(path: &str) -> SuiteReport {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The JUnit XML with its times and timestamps taken out.
fn junit_without_times(path: &str) -> quick_junit::Report {
    let xml = std::fs::read_to_string(path).unwrap();
    let mut report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    report.time = None;
    report.timestamp = None;
    for suite in &mut report.test_suites {
        suite.time = None;
        suite.timestamp = None;
        for case in &mut suite.test_cases {
            case.time = None;
            case.timestamp = None;
        }
    }
    report
}

#[test]
fn three_shards_of_the_example_merge_into_the_unsharded_artifacts() {
    if runtime_for("three_shards_of_the_example_merge_into_the_unsharded_artifacts").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let common = ["-p", "quickstart", "--replay", "--plain"];

    // The unsharded run.
    let (full_json, full_junit) = (path(dir, "full.json"), path(dir, "full.xml"));
    let mut args = common.to_vec();
    args.extend(["--json", &full_json, "--junit", &full_junit]);
    let (status, _, stderr) = copilot_eval(&args, dir);
    assert_eq!(status, 0, "{stderr}");

    // Three shards, then the merge.
    let shard_json: Vec<String> = (1..=3)
        .map(|k| path(dir, &format!("shard-{k}.json")))
        .collect();
    for (k, json) in (1..=3).zip(&shard_json) {
        let partition = format!("count:{k}/3");
        let junit = path(dir, &format!("shard-{k}.xml"));
        let mut args = common.to_vec();
        args.extend(["--partition", &partition, "--json", json, "--junit", &junit]);
        let (status, _, stderr) = copilot_eval(&args, dir);
        assert_eq!(status, 0, "{stderr}");
        assert!(
            stderr.contains(&format!("partition {partition}: ")),
            "{stderr}"
        );
    }
    let sizes: Vec<usize> = shard_json
        .iter()
        .map(|p| read_report(p).tests.len())
        .collect();
    assert_eq!(sizes, [4, 3, 3]);
    let (merged_json, merged_junit) = (path(dir, "merged.json"), path(dir, "merged.xml"));
    let mut args = vec!["merge"];
    args.extend(shard_json.iter().map(String::as_str));
    args.extend(["--json", &merged_json, "--junit", &merged_junit]);
    let (status, _, stderr) = copilot_eval(&args, dir);
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("10 tests: 10 passed"), "{stderr}");

    let (full, merged) = (read_report(&full_json), read_report(&merged_json));
    assert_eq!(merged.totals.tests, 10);
    let started: u64 = shard_json
        .iter()
        .map(|p| {
            read_report(p)
                .pool
                .expect("each shard pooled")
                .runtimes_started
        })
        .sum();
    assert_eq!(
        merged.pool.map(|p| p.runtimes_started),
        Some(started),
        "the merged report sums the shards' pooled runtimes"
    );
    assert_eq!(
        comparable(&merged),
        comparable(&full),
        "the merged JSON differs from the unsharded run's"
    );
    assert_eq!(
        junit_without_times(&merged_junit),
        junit_without_times(&full_junit),
        "the merged JUnit differs from the unsharded run's"
    );

    // Each shard records its partition; the merged report, the whole suite, records none.
    for (k, json) in (1..=3).zip(&shard_json) {
        let partition = read_report(json)
            .partition
            .expect("a shard records its partition");
        assert_eq!(partition.to_string(), format!("count:{k}/3"));
    }
    assert_eq!(merged.partition, None);
    assert_eq!(full.partition, None);

    // Refusals: an incomplete set names the missing shard.
    let (status, _, stderr) = copilot_eval(&["merge", &shard_json[0], &shard_json[2]], dir);
    assert_eq!(status, 5, "{stderr}");
    assert!(stderr.contains("shard 2 of 3 is missing"), "{stderr}");
    // A shard with no runtime version: refused, unless allowed.
    let mut unknown: Value =
        serde_json::from_str(&std::fs::read_to_string(&shard_json[2]).unwrap()).unwrap();
    unknown["runtime"] = json!({"version": null, "path": null, "error": "no runtime"});
    let unknown_path = path(dir, "unknown-runtime.json");
    std::fs::write(&unknown_path, unknown.to_string()).unwrap();
    let with_unknown = ["merge", &shard_json[0], &shard_json[1], &unknown_path];
    let (status, _, stderr) = copilot_eval(&with_unknown, dir);
    assert_eq!(status, 5, "{stderr}");
    assert!(
        stderr.contains("unknown-runtime.json records no runtime version")
            && stderr.contains("--allow-unknown-runtime"),
        "{stderr}"
    );
    let allowed = [&with_unknown[..], &["--allow-unknown-runtime"]].concat();
    let (status, _, stderr) = copilot_eval(&allowed, dir);
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("10 tests: 10 passed"), "{stderr}");
    // One shard twice; another schema version.
    let (status, _, stderr) = copilot_eval(&["merge", &shard_json[0], &shard_json[0]], dir);
    assert_eq!(status, 5, "{stderr}");
    assert!(stderr.contains("is in both"), "{stderr}");
    let mut future: Value =
        serde_json::from_str(&std::fs::read_to_string(&shard_json[1]).unwrap()).unwrap();
    future["schema_version"] = json!("3");
    let future_path = path(dir, "future.json");
    std::fs::write(&future_path, future.to_string()).unwrap();
    let (status, _, stderr) = copilot_eval(&["merge", &shard_json[0], &future_path], dir);
    assert_eq!(status, 5, "{stderr}");
    assert!(stderr.contains("schema_version \"3\""), "{stderr}");

    // hash:K/N (listed only): the shards together list every eval exactly once.
    let (_, all, _) = copilot_eval(&["-p", "quickstart", "--list"], dir);
    let mut union: Vec<String> = Vec::new();
    for k in 1..=3 {
        let partition = format!("hash:{k}/3");
        let (status, listed, stderr) = copilot_eval(
            &["-p", "quickstart", "--list", "--partition", &partition],
            dir,
        );
        assert_eq!(status, 0, "{stderr}");
        union.extend(listed.lines().map(str::to_owned));
    }
    union.sort();
    let mut all: Vec<String> = all.lines().map(str::to_owned).collect();
    all.sort();
    assert_eq!(union, all);
}

/// The test names and outcomes of a nextest JUnit file.
fn nextest_cases(path: &Path) -> Vec<(String, bool)> {
    let xml = std::fs::read_to_string(path).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    report
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .map(|c| {
            let passed = matches!(c.status, quick_junit::TestCaseStatus::Success { .. });
            (c.name.as_str().to_owned(), passed)
        })
        .collect()
}

#[test]
fn the_example_evals_pass_under_cargo_nextest_in_replay_mode() {
    if runtime_for("the_example_evals_pass_under_cargo_nextest_in_replay_mode").is_none() {
        return;
    }
    let nextest = Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nextest {
        let required = std::env::var("COPILOT_EVAL_REQUIRE_RUNTIME").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "cargo-nextest is not installed; install it with `cargo install cargo-nextest --locked`"
        );
        eprintln!(
            "skipping the_example_evals_pass_under_cargo_nextest_in_replay_mode: cargo-nextest is not installed (`cargo install cargo-nextest --locked`)"
        );
        return;
    }
    let metadata: Value = serde_json::from_slice(
        &Command::new(cargo())
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(workspace_root())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let junit =
        Path::new(metadata["target_directory"].as_str().unwrap()).join("nextest/ci/junit.xml");
    let scratch = tempfile::tempdir().unwrap();
    let mut cases: Vec<(String, bool)> = Vec::new();
    // Two shards with nextest's own partitioning, the repository's `ci` profile (JUnit) and its
    // test group capping concurrent Copilot sessions.
    for k in 1..=2 {
        let output = Command::new(cargo())
            .args(["nextest", "run", "-p", "quickstart", "--profile", "ci"])
            .args(["--run-ignored", "only", "-E", "test(/::__copilot_eval$/)"])
            .args(["--partition", &format!("count:{k}/2")])
            .current_dir(workspace_root())
            .env("COPILOT_EVAL_MODE", "replay")
            .env("TMPDIR", scratch.path())
            .env_remove("COPILOT_EVAL_EVIDENCE_FILE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "shard {k}/2:\n{stderr}");
        let shard = nextest_cases(&junit);
        // Ten evals (two of them the cases of a case matrix) in two shards: five each.
        let expected = 5;
        assert_eq!(shard.len(), expected, "shard {k}/2: {shard:?}\n{stderr}");
        cases.extend(shard);
    }
    cases.sort();
    let expected: Vec<(String, bool)> = [
        "compares_with_and_without_the_skill",
        "creates_a_greeting_file",
        "follows_the_release_notes_skill",
        "judges_the_announcement",
        "loads_the_repository_configuration",
        "looks_up_a_release_with_a_custom_tool",
        "remembers_the_file_it_wrote",
        "says_hello_in::french",
        "says_hello_in::german",
        "writes_the_selected_version",
    ]
    .iter()
    .map(|name| (format!("{name}::__copilot_eval"), true))
    .collect();
    assert_eq!(cases, expected);
}
