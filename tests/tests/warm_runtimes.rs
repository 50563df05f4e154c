//! Warm runtimes under the runner: `cargo copilot-eval` runs offline evals on pooled runtimes
//! by default, and `--fresh-runtime` starts one runtime per eval. Every eval of
//! examples/scripted, examples/quickstart (replayed) and the fixture crate (its passing,
//! failing, crashing and killed tests) gives the same outcome and the same evidence both ways,
//! field by field, with only what differs between any two runs taken out (timings, session,
//! request and agent ids, the working directory, process ids in messages).

mod support;

use copilot_eval_core::report::{SuiteReport, TestRecord};
use copilot_eval_e2e::{runtime_for, scrub_evidence};
use serde_json::{Value, json};
use support::{FIXTURE, SuiteRun, copilot_eval, workspace_root};

/// The fixture's tests, all but `hangs_in_a_tool_handler` (it holds its session for a minute
/// by design; runner_killed.rs runs it).
const FIXTURE_TESTS: &[&str] = &[
    "unit_eval",
    "aborts",
    "answers_rightly_in_two_of_three_trials",
    "asks_a_weather_mock",
    "converses_in_two_turns",
    "crashes_in_its_second_trial",
    "expects_a_stale_cassette",
    "expects_a_stop_that_does_not_happen",
    "fails_an_assertion",
    "finds_relative_paths",
    "greets_by_case",
    "guards_and_delegates",
    "hangs_after_a_run",
    "hides_a_guard_failure",
    "hides_a_handler_panic",
    "ignores_a_stale_cassette",
    "leaves_a_process_behind",
    "loses_events",
    "missing_cassette",
    "nested::",
    "panics",
    "passes",
    "priced::",
    "replay_mismatch",
    "script_runs_out",
    "shell_leaves_a_process_behind",
    "times_out",
];

/// A test as both runs must agree on it: outcome, error kind, message and every run's
/// evidence, with run-to-run differences taken out.
fn comparable(test: &TestRecord) -> Value {
    let runs: Vec<Value> = test
        .runs
        .iter()
        .map(|run| {
            let mut value = serde_json::to_value(run).unwrap();
            let object = value.as_object_mut().unwrap();
            object.remove("pooled_runtime");
            // Why a run was not pooled is said only where a pool was offered.
            object.remove("private_runtime_reason");
            object.remove("working_directory");
            // A leftover the run's sweep killed is named with its pid, the machine's.
            if let Some(Value::String(error)) = object.get_mut("error") {
                *error = without_pids(error);
            }
            if let Some(errors) = object
                .get_mut("cleanup_errors")
                .and_then(Value::as_array_mut)
            {
                for error in errors {
                    if let Value::String(text) = error {
                        *text = without_pids(text);
                    }
                }
            }
            if let Some(audit) = object.get_mut("audit").and_then(Value::as_array_mut) {
                for record in audit {
                    record["request_id"] = json!("${request_id}");
                    // The instructions name the working directory.
                    record["instructions_sha256"] = json!("${instructions}");
                }
            }
            scrub_evidence(&mut value, &run.working_directory.to_string_lossy());
            value
        })
        .collect();
    // A process id a test records (`child_pid`) is the machine's, not the run's.
    let mut properties = serde_json::to_value(&test.properties).unwrap();
    for property in properties.as_array_mut().unwrap() {
        if property["name"]
            .as_str()
            .is_some_and(|n| n.ends_with("_pid"))
        {
            property["value"] = json!("N");
        }
    }
    // A property may name a file in the test's working directory (`ctx.workdir()`).
    for run in &test.runs {
        scrub_evidence(&mut properties, &run.working_directory.to_string_lossy());
    }
    let mut comparisons = serde_json::to_value(&test.comparisons).unwrap();
    // Durations out; no working directory in a comparison.
    scrub_evidence(&mut comparisons, "\0");
    json!({
        "name": test.name,
        "outcome": test.outcome,
        "error_kind": test.error_kind,
        "message": test.message.as_deref().map(without_pids),
        "properties": properties,
        "comparisons": comparisons,
        "runs": runs,
    })
}

/// Where `a` and `b` first differ: a JSON path and both values; `None` when equal.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                first_difference(p, q, &format!("{path}.{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{path}: pooled {a}, fresh {b}")),
    }
}

/// `text` with every number after `pid ` written as `N`.
fn without_pids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("pid ") {
        let (head, tail) = rest.split_at(at + 4);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push('N');
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Runs that ran on a pooled runtime.
fn pooled_runs(report: &SuiteReport) -> usize {
    report
        .tests
        .iter()
        .flat_map(|t| &t.runs)
        .filter(|r| r.pooled_runtime)
        .count()
}

/// Run `args` pooled (the default) and with `--fresh-runtime`; both must agree test by test.
/// Returns both runs.
fn both_ways(what: &str, args: &[&str]) -> (SuiteRun, SuiteRun) {
    let pooled = copilot_eval(&workspace_root(), args, &[]);
    let fresh_args = [args, &["--fresh-runtime"]].concat();
    let fresh = copilot_eval(&workspace_root(), &fresh_args, &[]);
    assert_eq!(pooled.status, fresh.status, "{what}: {}", pooled.stderr);
    let names = |run: &SuiteRun| -> Vec<String> {
        run.report.tests.iter().map(|t| t.name.clone()).collect()
    };
    assert_eq!(names(&pooled), names(&fresh), "{what}");
    for (a, b) in pooled.report.tests.iter().zip(&fresh.report.tests) {
        let difference = first_difference(&comparable(a), &comparable(b), "");
        assert_eq!(
            difference, None,
            "{what}: {} differs on a pooled runtime from a fresh one",
            a.name
        );
    }
    // The fresh side started a runtime per run and pooled nothing.
    assert_eq!(pooled_runs(&fresh.report), 0, "{what}");
    assert_eq!(fresh.report.pool, None, "{what}");
    (pooled, fresh)
}

#[test]
fn every_eval_gives_the_same_evidence_pooled_and_fresh() {
    if runtime_for("every_eval_gives_the_same_evidence_pooled_and_fresh").is_none() {
        return;
    }
    let mut runs = 0;
    let mut pooled = 0;
    let mut started = 0;
    for (what, args) in [
        ("scripted", vec!["-p", "scripted"]),
        ("quickstart", vec!["-p", "quickstart"]),
        (
            "fixture",
            [&["-p", FIXTURE, "--no-fail-fast"][..], FIXTURE_TESTS].concat(),
        ),
    ] {
        let (with_pool, _) = both_ways(what, &args);
        // The fixture's MCP mock eval runs on a pooled runtime too (the pool's MCP relay), and
        // its evidence is the fresh run's (compared above).
        if what == "fixture" {
            let mock = with_pool
                .report
                .tests
                .iter()
                .find(|t| t.name.ends_with("asks_a_weather_mock"))
                .expect("the fixture's mock eval ran");
            for run in &mock.runs {
                assert!(
                    run.pooled_runtime && run.private_runtime_reason.is_none(),
                    "{}: pooled {}, private because {:?}",
                    mock.name,
                    run.pooled_runtime,
                    run.private_runtime_reason
                );
            }
            assert!(!mock.runs.is_empty(), "{}: no run", mock.name);
        }
        let pool = with_pool
            .report
            .pool
            .expect("the pooled side's pool record");
        runs += with_pool
            .report
            .tests
            .iter()
            .map(|t| t.runs.len())
            .sum::<usize>();
        pooled += pooled_runs(&with_pool.report);
        started += pool.runtimes_started as usize;
        assert!(
            pool.runtimes_started as usize <= pooled_runs(&with_pool.report),
            "{what}: {pool:?}"
        );
    }
    // Most runs were pooled (evals with MCP servers other than mocks, a resumed session or
    // empty client mode start their own runtime), on far fewer runtimes than runs.
    assert!(pooled * 4 >= runs * 3, "{pooled} of {runs} runs pooled");
    assert!(
        started * 3 <= pooled,
        "{started} runtimes for {pooled} pooled runs"
    );
}

/// A test process that ends uncleanly gives its runtime back to nobody: the pool retires it.
/// The fixture's `aborts` (SIGABRT after its run) and `hangs_after_a_run` (killed at its
/// deadline) each leave one retired runtime; `passes`, run after them on one job, gets a fresh
/// one.
#[test]
fn a_runtime_of_a_test_process_that_died_is_retired() {
    if runtime_for("a_runtime_of_a_test_process_that_died_is_retired").is_none() {
        return;
    }
    let run = copilot_eval(
        &workspace_root(),
        &[
            "-p",
            FIXTURE,
            "--no-fail-fast",
            "-j",
            "1",
            "--exact",
            "aborts",
            "hangs_after_a_run",
            "passes",
        ],
        &[],
    );
    let outcomes = run.outcomes();
    assert_eq!(
        outcomes
            .iter()
            .map(|(n, o)| (*n, o.as_str()))
            .collect::<Vec<_>>(),
        [
            ("aborts", "error"),
            ("hangs_after_a_run", "error"),
            ("passes", "passed")
        ],
        "{}",
        run.stderr
    );
    for test in &run.report.tests {
        assert!(
            test.runs.iter().all(|r| r.pooled_runtime),
            "{}: {:?}",
            test.name,
            test.runs
        );
    }
    let pool = run.report.pool.expect("a pool record");
    // One runtime each; the two that served a test process that died are retired.
    assert_eq!(pool.runtimes_started, 3, "{pool:?}\n{}", run.stderr);
    assert_eq!(pool.runtimes_retired, 2, "{pool:?}\n{}", run.stderr);
}
