//! `cargo copilot-eval` end to end: the real command, the real test binaries of the fixture crate
//! (`tests/fixture`), the real Copilot runtime. Each case checks the exit status, the JSON
//! results (validated against the committed schema) and the JUnit XML (parsed back).
//!
//! Every invocation uses `--replay`, so nothing can go live: the fixture's evals script their
//! model or replay a cassette. The command and the fixture are built once (the workspace build
//! already built them; the command's own `cargo test --no-run` is then a no-op).

use std::path::Path;
use std::process::Command;

use copilot_eval_core::StopReason;
use copilot_eval_core::report::{ErrorKind, Outcome, TokenUsage};
use copilot_eval_e2e::runtime_for;

mod support;

use support::{FIXTURE, SuiteRun, command_path, workspace_root};

/// Run `cargo copilot-eval -p copilot-eval-fixture --replay ... FILTERS` with both artifacts
/// (in nested folders that do not exist yet) and read them back ([`support::copilot_eval`]:
/// the JSON is checked against the committed schema, the JUnit parsed back), and check that the
/// JUnit has one test case per test. Working directories kept by failing tests land in a
/// scratch TMPDIR removed afterwards.
fn copilot_eval(filters: &[&str], extra: &[&str]) -> SuiteRun {
    copilot_eval_in(FIXTURE, filters, extra)
}

/// [`copilot_eval`] for another package.
fn copilot_eval_in(package: &str, filters: &[&str], extra: &[&str]) -> SuiteRun {
    let args = [&["-p", package][..], extra, filters].concat();
    let run = support::copilot_eval(&workspace_root(), &args, &[]);
    assert_eq!(run.junit.tests, run.report.tests.len(), "{}", run.junit_xml);
    run
}

#[test]
fn discovery_lists_only_the_eval_tests() {
    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", FIXTURE, "--list"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let listed: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        listed,
        [
            "copilot-eval-fixture: tests::unit_eval",
            "copilot-eval-fixture::counting: capped_hello_per_model::model_claude_sonnet_4_5",
            "copilot-eval-fixture::counting: capped_hello_per_model::model_gpt_5",
            "copilot-eval-fixture::counting: counted_greeting_triggers::dormant_3_what_is_2_2",
            "copilot-eval-fixture::counting: counted_greeting_triggers::invoke_1_greet_the_whole_team_warmly",
            "copilot-eval-fixture::counting: counted_greeting_triggers::invoke_2_greet_the_new_colleague_then",
            "copilot-eval-fixture::evals: aborts",
            "copilot-eval-fixture::evals: answers_rightly_in_two_of_three_trials",
            "copilot-eval-fixture::evals: asks_a_weather_mock",
            "copilot-eval-fixture::evals: converses_in_two_turns",
            "copilot-eval-fixture::evals: crashes_in_its_second_trial",
            "copilot-eval-fixture::evals: expects_a_stale_cassette",
            "copilot-eval-fixture::evals: expects_a_stop_that_does_not_happen",
            "copilot-eval-fixture::evals: fails_an_assertion",
            "copilot-eval-fixture::evals: finds_relative_paths",
            "copilot-eval-fixture::evals: greets_by_case::bye",
            "copilot-eval-fixture::evals: greets_by_case::hello",
            "copilot-eval-fixture::evals: guards_and_delegates",
            "copilot-eval-fixture::evals: hangs_after_a_run",
            "copilot-eval-fixture::evals: hangs_in_a_tool_handler",
            "copilot-eval-fixture::evals: hides_a_guard_failure",
            "copilot-eval-fixture::evals: hides_a_handler_panic",
            "copilot-eval-fixture::evals: ignores_a_stale_cassette",
            "copilot-eval-fixture::evals: leaves_a_process_behind",
            "copilot-eval-fixture::evals: loses_events",
            "copilot-eval-fixture::evals: misconfigures_the_eval",
            "copilot-eval-fixture::evals: missing_cassette",
            "copilot-eval-fixture::evals: nested::passes_in_a_module",
            "copilot-eval-fixture::evals: panics",
            "copilot-eval-fixture::evals: passes",
            "copilot-eval-fixture::evals: priced::a_call",
            "copilot-eval-fixture::evals: priced::another_call",
            "copilot-eval-fixture::evals: priced::b_larger_call",
            "copilot-eval-fixture::evals: probes_the_sandbox",
            "copilot-eval-fixture::evals: replay_mismatch",
            "copilot-eval-fixture::evals: script_runs_out",
            "copilot-eval-fixture::evals: shell_leaves_a_process_behind",
            "copilot-eval-fixture::evals: times_out",
        ],
        "the ordinary test (passes_but_is_not_an_eval) and ignored ones (ignored_test, copilot_eval_lookalike) must not be listed"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("38 eval tests (3 other tests not listed"),
        "{stderr}"
    );

    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", FIXTURE, "--list", "nested", "unit"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "copilot-eval-fixture: tests::unit_eval",
            "copilot-eval-fixture::evals: nested::passes_in_a_module"
        ]
    );
}

/// `--test NAME` selects one test file's evals, as `cargo test --test NAME` does: the fixture's
/// `tests/counting.rs` alone, its library's unit-test eval and `tests/evals.rs` left unbuilt.
#[test]
fn dash_dash_test_selects_one_test_files_evals() {
    let output = Command::new(command_path())
        .args([
            "copilot-eval",
            "-p",
            FIXTURE,
            "--test",
            "counting",
            "--list",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let binaries: std::collections::BTreeSet<&str> = stdout
        .lines()
        .map(|line| line.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        binaries.into_iter().collect::<Vec<_>>(),
        ["copilot-eval-fixture::counting"],
        "{stdout}"
    );
}

#[test]
fn no_matching_eval_exits_4_with_empty_artifacts() {
    let run = copilot_eval(&["no_such_eval"], &[]);
    assert_eq!(run.status, 4, "{}", run.stderr);
    assert!(run.report.tests.is_empty());
    assert!(
        run.stderr.contains("no eval test matched"),
        "{}",
        run.stderr
    );
}

/// Exit status 5: the suite itself failed. Shown for a build that fails (an unknown package:
/// cargo refuses the selection) and for an artifact that cannot be written (its folder would be
/// a regular file); neither starts a runtime.
#[test]
fn a_failed_build_or_an_unwritable_artifact_exits_5() {
    let scratch = tempfile::tempdir().unwrap();
    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", "no-such-package-here", "--replay"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("no-such-package-here"), "{stderr}");

    let blocker = scratch.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let json = blocker.join("results.json");
    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", FIXTURE, "--replay", "--json"])
        .arg(&json)
        .arg("no_such_eval")
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(5),
        "an unwritable artifact beats 'no eval matched' (4): {stderr}"
    );
    assert!(
        stderr.contains(&*json.to_string_lossy()),
        "the error names the file: {stderr}"
    );
    assert!(!json.exists());
}

#[test]
fn passing_evals_exit_0() {
    if runtime_for("passing_evals_exit_0").is_none() {
        return;
    }
    // The filter `passes` also matches the ordinary test `passes_but_is_not_an_eval`: the
    // fixture marks which tests ran, and only the evals may have.
    let ran = tempfile::tempdir().unwrap();
    let ran_dir = ran.path().to_str().unwrap();
    let run = support::copilot_eval(
        &workspace_root(),
        &["-p", FIXTURE, "passes"],
        &[("COPILOT_EVAL_FIXTURE_RAN", ran_dir)],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut marked: Vec<String> = std::fs::read_dir(ran.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    marked.sort();
    assert_eq!(
        marked,
        ["passes"],
        "the runner ran only the eval, not the ordinary test"
    );
    assert_eq!(run.junit.tests, run.report.tests.len(), "{}", run.junit_xml);
    assert!(run.stdout.is_empty(), "human output goes to stderr");
    assert_eq!(run.report.schema_version, "2");
    // The command replays, but both evals script their model: the suite's runs were scripted.
    assert_eq!(run.report.mode, "scripted");
    assert_eq!(run.report.requested_mode.as_deref(), Some("replay"));
    assert_eq!(run.report.runtime.version.as_deref(), Some("1.0.102"));
    assert_eq!(run.report.totals.passed, 2);
    let test = run.test("passes");
    assert_eq!(test.outcome, Outcome::Passed);
    assert_eq!(test.binary, "copilot-eval-fixture::evals");
    assert_eq!(test.test_id, "passes::__copilot_eval");
    assert_eq!(test.properties[0].name, "file_text");
    assert_eq!(test.properties[0].value, "hello\n");
    assert!(
        test.workdir.is_none(),
        "a passing test's workdir is not kept"
    );
    let [first] = test.runs.as_slice() else {
        panic!("one run: {:#?}", test.runs)
    };
    assert_eq!(first.stop_reason, StopReason::Completed);
    assert_eq!(first.mode, "scripted");
    assert!(first.success && first.evidence_complete);
    assert_eq!(first.tool_calls[0].name, "create");
    assert_eq!(first.totals.model_calls, 2);
    assert_eq!(first.final_response.as_deref(), Some("Created the file."));
    let nested = run.test("nested::passes_in_a_module");
    assert_eq!(nested.outcome, Outcome::Passed);
    assert_eq!(nested.runs[0].eval_name, "nested-greeting");

    assert_eq!((run.junit.failures, run.junit.errors), (0, 0));
    assert_eq!(run.junit_kind("passes"), "success");
    assert_eq!(
        run.junit_property("passes", "copilot_eval.model"),
        "claude-sonnet-4.5"
    );
    assert_eq!(run.junit_property("passes", "copilot_eval.tool_calls"), "1");
    assert_eq!(
        run.junit_property("passes", "copilot_eval.stop_reason"),
        "completed"
    );
    assert_eq!(
        run.junit_property("passes", "property.file_text"),
        "\"hello\\n\""
    );
    assert!(run.stderr.contains("PASS ["), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("2 tests: 2 passed, 0 failed, 0 errors, 0 not run"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_assertion_failure_exits_1() {
    if runtime_for("an_assertion_failure_exits_1").is_none() {
        return;
    }
    let run = copilot_eval(&["fails_an_assertion"], &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let test = run.test("fails_an_assertion");
    assert_eq!(test.outcome, Outcome::Failed);
    let message = test.message.as_deref().unwrap();
    assert!(message.contains("answers wrongly on purpose"), "{message}");
    assert!(message.contains("The answer is 5."), "{message}");
    assert_eq!(test.properties[0].value, "The answer is 5.");
    assert_eq!(test.runs[0].stop_reason, StopReason::Completed);
    let workdir = test
        .workdir
        .as_deref()
        .expect("a failing test's workdir is kept");
    assert!(Path::new(workdir).is_dir());
    assert_eq!(run.junit_kind("fails_an_assertion"), "failure");
    assert!(
        run.junit_message("fails_an_assertion")
            .contains("assertion")
    );
    assert!(run.stderr.contains("FAIL ["), "{}", run.stderr);
}

#[test]
fn a_panic_exits_1() {
    if runtime_for("a_panic_exits_1").is_none() {
        return;
    }
    let run = copilot_eval(&["panics"], &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let test = run.test("panics");
    assert_eq!(test.outcome, Outcome::Failed);
    assert!(
        test.message
            .as_deref()
            .unwrap()
            .contains("fixture panic: report.txt was never written")
    );
    assert_eq!(test.runs.len(), 1);
    assert_eq!(run.junit_kind("panics"), "failure");
    let stderr = &test
        .output
        .as_ref()
        .expect("output of a failed test")
        .stderr;
    assert!(stderr.contains("fixture panic"), "{stderr}");
}

/// A script with fewer turns than the runtime asks for is the test author's mistake: `failed`
/// (exit 1, no fail-fast), its message saying how many turns the script had, not an
/// infrastructure `error`.
#[test]
fn a_script_that_runs_out_of_turns_is_the_tests_failure_exit_1() {
    if runtime_for("a_script_that_runs_out_of_turns_is_the_tests_failure_exit_1").is_none() {
        return;
    }
    let run = copilot_eval(&["script_runs_out"], &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let test = run.test("script_runs_out");
    assert_eq!(test.outcome, Outcome::Failed, "{:?}", test.message);
    assert_eq!(test.error_kind, None);
    let message = test.message.as_deref().unwrap();
    assert!(
        message.contains("it has 1 turn and the runtime asked for turn 2"),
        "{message}"
    );
    assert!(
        message.contains("the test then failed: the run did not complete"),
        "{message}"
    );
    assert_eq!(test.runs[0].stop_reason, StopReason::ScriptExhausted);
    assert_eq!(run.junit_kind("script_runs_out"), "failure");
}

#[test]
fn a_timeout_is_a_failed_eval_exit_1() {
    if runtime_for("a_timeout_is_a_failed_eval_exit_1").is_none() {
        return;
    }
    let run = copilot_eval(&["times_out"], &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let test = run.test("times_out");
    assert_eq!(test.outcome, Outcome::Failed);
    assert_eq!(test.runs[0].stop_reason, StopReason::Timeout);
    assert!(!test.runs[0].success);
    assert_eq!(run.report.totals.stop_reasons["timeout"], 1);
    assert_eq!(run.junit_kind("times_out"), "failure");
    assert_eq!(
        run.junit_property("times_out", "copilot_eval.stop_reason"),
        "timeout"
    );
}

/// The agent's own shell detaches a process (the fixture's `shell_leaves_a_process_behind`:
/// `setsid -f`, so it is out of the test's process group; on a pooled runtime it carries
/// neither the run's home nor the runner's marker, only the pooled runtime's home). Pooled
/// (the default) and with `--fresh-runtime` alike, the eval is an `error` whose message names
/// the process, and the process does not survive the runner. Seen failing with the pool's
/// sweep left out: pooled, the test passed and `sleep 3607` outlived the runner.
#[test]
fn a_process_the_agents_shell_leaves_is_an_error_pooled_and_fresh() {
    if runtime_for("a_process_the_agents_shell_leaves_is_an_error_pooled_and_fresh").is_none() {
        return;
    }
    for (how, extra) in [("pooled", &[][..]), ("fresh", &["--fresh-runtime"][..])] {
        let run = copilot_eval(&["--exact", "shell_leaves_a_process_behind"], extra);
        let test = run.test("shell_leaves_a_process_behind");
        let pid = test
            .properties
            .iter()
            .find(|p| p.name == "held_pid")
            .and_then(|p| p.value.as_u64())
            .unwrap_or_else(|| panic!("{how}: the fixture recorded the pid: {test:#?}"))
            as u32;
        let alive = copilot_eval_core::runtime::process_alive(pid);
        if alive {
            // Do not leave it to the machine when the check below fails.
            copilot_eval_core::runtime::kill_process(pid);
        }
        assert!(
            !alive,
            "{how}: the process the shell detached ({pid}) outlived the runner"
        );
        assert_eq!(test.runs.len(), 1, "{how}: {test:#?}");
        assert_eq!(test.runs[0].pooled_runtime, how == "pooled", "{how}");
        assert_eq!(test.runs[0].stop_reason, StopReason::CleanupError, "{how}");
        assert_eq!(run.status, 3, "{how}: {}", run.stderr);
        assert_eq!(test.outcome, Outcome::Error, "{how}: {test:#?}");
        assert_eq!(test.error_kind, Some(ErrorKind::Run), "{how}");
        let named =
            format!("runtime processes outlived the stop and were killed: pid {pid} (sleep 3607)");
        let message = test.message.as_deref().unwrap_or_default();
        assert!(
            message.starts_with(
                "the test passed, but run 1 (shell_leaves_a_process_behind) stopped with cleanup_error: "
            ) && message.contains(&named),
            "{how}: {message}"
        );
        assert!(run.stderr.contains(&named), "{how}: {}", run.stderr);
    }
}

#[test]
fn a_hanging_test_is_killed_and_still_reported_exit_3() {
    if runtime_for("a_hanging_test_is_killed_and_still_reported_exit_3").is_none() {
        return;
    }
    let run = copilot_eval(&["hangs_after_a_run"], &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let test = run.test("hangs_after_a_run");
    assert_eq!(test.outcome, Outcome::Error);
    assert_eq!(test.error_kind, Some(ErrorKind::Killed));
    let exit = test.exit.as_ref().unwrap();
    assert!(exit.killed_by_runner);
    assert_eq!(exit.signal, Some(9));
    // What the test recorded before it hung is kept.
    assert_eq!(test.runs.len(), 1);
    assert_eq!(test.runs[0].stop_reason, StopReason::Completed);
    assert_eq!(test.properties[0].name, "first_run_success");
    // Killed at about the attribute's timeout_s (2 s) plus the cleanup bound (2 s) after the
    // run, its last event (the run itself, runtime start included, does not count: a loaded
    // machine may make it slow).
    let after_the_run = test.duration_ms.saturating_sub(test.runs[0].duration_ms);
    assert!(
        after_the_run < 30_000,
        "{after_the_run} ms after the run ({} ms in all)",
        test.duration_ms
    );
    assert_eq!(run.junit_kind("hangs_after_a_run"), "error");
    assert!(
        run.junit_message("hangs_after_a_run")
            .contains("stop reason: completed; killed"),
        "{}",
        run.junit_message("hangs_after_a_run")
    );
}

#[test]
fn a_crashed_test_is_reported_as_an_error_exit_3() {
    if runtime_for("a_crashed_test_is_reported_as_an_error_exit_3").is_none() {
        return;
    }
    let run = copilot_eval(&["aborts"], &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let test = run.test("aborts");
    assert_eq!(test.outcome, Outcome::Error);
    assert_eq!(test.error_kind, Some(ErrorKind::Crashed));
    assert_eq!(test.exit.as_ref().unwrap().signal, Some(6));
    assert!(test.message.as_deref().unwrap().contains("SIGABRT"));
    assert_eq!(test.runs.len(), 1);
    assert_eq!(test.properties[0].name, "about_to_abort");
    assert_eq!(run.junit_kind("aborts"), "error");
}

#[test]
fn a_missing_cassette_is_a_setup_error_exit_3() {
    let run = copilot_eval(&["missing_cassette"], &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let test = run.test("missing_cassette");
    assert_eq!(test.outcome, Outcome::Error);
    assert_eq!(test.error_kind, Some(ErrorKind::Setup));
    let message = test.message.as_deref().unwrap();
    assert!(
        message.contains("tests/fixture/tests/cassettes/evals/missing_cassette.yaml"),
        "{message}"
    );
    assert!(message.contains("no live request was made"), "{message}");
    assert!(test.runs.is_empty());
    assert_eq!(run.junit_kind("missing_cassette"), "error");
    assert!(
        !run.stderr.contains("no further evals are launched"),
        "one selected eval: nothing further to stop\n{}",
        run.stderr
    );
}

/// A case matrix (`#[case::label(...)]`): each case is its own eval test, with its own name in
/// the listing, filters, reports and JUnit, and its own values.
#[test]
fn each_case_of_a_matrix_is_its_own_eval() {
    if runtime_for("each_case_of_a_matrix_is_its_own_eval").is_none() {
        return;
    }
    let run = copilot_eval(&["greets_by_case"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let names: Vec<&str> = run.report.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greets_by_case::bye", "greets_by_case::hello"]);
    for (case, prompt, answer) in [
        ("bye", "Say goodbye.", "Goodbye!"),
        ("hello", "Say hello.", "Hello!"),
    ] {
        let name = format!("greets_by_case::{case}");
        let test = run.test(&name);
        assert_eq!(test.outcome, Outcome::Passed, "{:?}", test.message);
        assert_eq!(test.runs[0].eval_name, name);
        assert_eq!(test.runs[0].prompts[0].text, prompt);
        assert_eq!(test.runs[0].final_response.as_deref(), Some(answer));
        assert_eq!(run.junit_kind(&name), "success");
    }
    // One case alone.
    let run = copilot_eval(&["--exact", "greets_by_case::hello"], &[]);
    assert_eq!(run.report.tests.len(), 1, "{}", run.stderr);
}

/// A conversation (`ctx.run_turns`, two prompts in one session) is ONE run in the artifacts:
/// its prompts, each message numbered by the prompt it is or answers, the tokens and stop
/// reason of the whole session, and one run in the JUnit properties.
#[test]
fn a_conversation_is_one_run_in_the_artifacts() {
    if runtime_for("a_conversation_is_one_run_in_the_artifacts").is_none() {
        return;
    }
    let run = copilot_eval(&["--exact", "converses_in_two_turns"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let test = run.test("converses_in_two_turns");
    assert_eq!(test.outcome, Outcome::Passed, "{:?}", test.message);
    let [conversation] = test.runs.as_slice() else {
        panic!("one run: {:#?}", test.runs)
    };
    assert_eq!(conversation.mode, "scripted");
    assert_eq!(conversation.stop_reason, StopReason::Completed);
    let [written] = run
        .written_runs("converses_in_two_turns")
        .try_into()
        .unwrap();
    assert_eq!(
        written["prompts"],
        serde_json::json!(["Create notes.txt saying first.", "What does notes.txt say?"])
    );
    assert_eq!(written["prompt"], "Create notes.txt saying first.");
    let turns: Vec<(&str, Option<u64>, &str)> = (written["turns"].as_array().unwrap().iter())
        .map(|t| {
            (
                t["role"].as_str().unwrap(),
                t["prompt"].as_u64(),
                t["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("user", Some(1), "Create notes.txt saying first."),
            ("assistant", Some(1), ""),
            ("assistant", Some(1), "Created the file."),
            ("user", Some(2), "What does notes.txt say?"),
            ("assistant", Some(2), "It says first."),
        ]
    );
    // Three model calls over the two prompts, counted once, in the one run.
    assert_eq!(conversation.totals.model_calls, 3);
    assert_eq!(conversation.usage.len(), 3);
    assert_eq!(run.report.totals.runs, 1);
    assert_eq!(run.report.totals.stop_reasons.get("completed"), Some(&1));
    assert_eq!(
        test.properties[0].value,
        serde_json::json!(["Created the file.", "It says first."])
    );
    assert_eq!(
        run.junit_property("converses_in_two_turns", "copilot_eval.runs"),
        "1"
    );
    assert_eq!(
        run.junit_property("converses_in_two_turns", "copilot_eval.tool_calls"),
        "1"
    );
}

/// `--exact`: a filter selects only the eval whose path it equals (`passes`, not
/// `nested::passes_in_a_module`).
#[test]
fn exact_filters_select_whole_paths() {
    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", FIXTURE, "--list", "--exact", "passes"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .collect::<Vec<_>>(),
        ["copilot-eval-fixture::evals: passes"]
    );
}

/// Forgetting `--replay` is visible: a live suite says before it starts that it may spend
/// premium requests and how to stay offline; a replayed one says nothing of the kind. (The
/// selected eval scripts its model, so even the live run stays offline.)
#[test]
fn a_live_suite_says_so_before_it_starts() {
    if runtime_for("a_live_suite_says_so_before_it_starts").is_none() {
        return;
    }
    let output = Command::new(command_path())
        .args(["copilot-eval", "-p", FIXTURE, "--plain", "--exact"])
        .args(["--max-cost", "2", "fails_an_assertion"])
        .current_dir(workspace_root())
        .env_remove("COPILOT_EVAL_MODE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "note: live mode: the selected evals send model requests to GitHub Copilot and spend premium requests (capped by --max-cost 2, over every model and trial); trials asked by the attribute (`trials = N`) are added after each eval's first trial, so the count may grow; scripted evals stay offline. Pass --replay"
        ),
        "{stderr}"
    );
    let run = copilot_eval(&["--exact", "fails_an_assertion"], &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(!run.stderr.contains("live mode"), "{}", run.stderr);
}

#[test]
fn a_replay_mismatch_is_an_infrastructure_error_exit_3() {
    if runtime_for("a_replay_mismatch_is_an_infrastructure_error_exit_3").is_none() {
        return;
    }
    let run = copilot_eval(&["replay_mismatch"], &[]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    let test = run.test("replay_mismatch");
    assert_eq!(test.outcome, Outcome::Error, "{test:#?}");
    assert_eq!(test.error_kind, Some(ErrorKind::Run), "{test:#?}");
    assert_eq!(test.runs[0].stop_reason, StopReason::ReplayMismatch);
    assert_eq!(test.runs[0].mode, "replay");
    // Every miss of the run is in its replay record, with its whole diagnosis.
    let replay = test.runs[0].replay.as_ref().unwrap();
    let [miss] = replay.misses.as_slice() else {
        panic!("one miss: {:#?}", replay.misses)
    };
    assert!(
        miss.starts_with("model request 1 matches no recorded conversation")
            && miss.contains("Say goodbye."),
        "{miss}"
    );
    // The runtime's own session error is on a line of its own, after the diagnosis.
    let error = test.runs[0].error.as_deref().unwrap();
    let session_error = error
        .lines()
        .position(|line| line.starts_with("session.error: "))
        .unwrap_or_else(|| panic!("no line of its own for the session error:\n{error}"));
    assert!(session_error > 0, "{error}");
    assert!(
        error
            .lines()
            .filter(|line| line.contains("session.error"))
            .count()
            == 1,
        "{error}"
    );
    let message = test.message.as_deref().unwrap();
    assert!(
        message.contains("stopped with replay_mismatch"),
        "{message}"
    );
    assert!(
        message.contains("Say goodbye."),
        "the diagnosis shows the request: {message}"
    );
    assert_eq!(run.junit_kind("replay_mismatch"), "error");
    assert_eq!(
        run.junit_property("replay_mismatch", "copilot_eval.stop_reason"),
        "replay_mismatch"
    );
}

#[test]
fn an_infrastructure_error_stops_launching_exit_3() {
    if runtime_for("an_infrastructure_error_stops_launching_exit_3").is_none() {
        return;
    }
    // List order: aborts (error) first; the passing evals after it are not run.
    let run = copilot_eval(&["aborts", "passes"], &["-j", "1"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(run.test("aborts").outcome, Outcome::Error);
    for name in ["passes", "nested::passes_in_a_module"] {
        let test = run.test(name);
        assert_eq!(test.outcome, Outcome::NotRun);
        assert!(test.message.as_deref().unwrap().contains("--no-fail-fast"));
        assert_eq!(run.junit_kind(name), "skipped");
    }
    assert_eq!(run.report.totals.not_run, 2);
}

#[test]
fn the_quickstart_example_replays_offline_exit_0() {
    if runtime_for("the_quickstart_example_replays_offline_exit_0").is_none() {
        return;
    }
    let run = copilot_eval_in("quickstart", &[], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let names: Vec<&str> = run.report.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "compares_with_and_without_the_skill",
            "creates_a_greeting_file",
            "follows_the_release_notes_skill",
            "judges_the_announcement",
            "loads_the_repository_configuration",
            "looks_up_a_release_with_a_custom_tool",
            "remembers_the_file_it_wrote",
            "says_hello_in::french",
            "says_hello_in::german",
            "writes_the_selected_version"
        ]
    );
    for test in &run.report.tests {
        assert_eq!(test.outcome, Outcome::Passed, "{test:#?}");
        let run = &test.runs[0];
        if test.name == "loads_the_repository_configuration" {
            // A scripted run: offline in every mode, no cassette.
            assert_eq!(run.mode, "scripted");
            assert_eq!(test.cassette, None, "a scripted test names no cassette");
            continue;
        }
        assert_eq!(run.mode, "replay");
        assert!(
            test.cassette
                .as_deref()
                .is_some_and(|c| c.ends_with(&format!("{}.yaml", test.name.replace("::", "/")))),
            "{:?}",
            test.cassette
        );
        assert_eq!(run.stop_reason, StopReason::Completed);
        assert_eq!(
            run.replay.as_ref().unwrap().unconsumed,
            Vec::<String>::new()
        );
    }
    // The prompt's attachments are in the run record, the selection with the text it sent.
    let attached = &run.written_runs("writes_the_selected_version")[0];
    assert_eq!(attached["prompt_options"].as_array().unwrap().len(), 1);
    let options = attached["prompt_options"][0].clone();
    assert_eq!(
        options,
        serde_json::json!({"prompt": 1, "attachments": [
            {"type": "file", "path": "CHANGELOG.md"},
            {"type": "selection", "path": "CHANGELOG.md", "start_line": 3, "end_line": 3,
             "text": "## 2.4.1 - 2026-11-02"}
        ]})
    );
    let skill = run.test("follows_the_release_notes_skill");
    assert_eq!(skill.runs[0].skills_invoked, ["release-notes"]);
    // The conversation: one run of two prompts, replayed from one cassette, with the tokens
    // its cassette recorded.
    let conversation = &run.test("remembers_the_file_it_wrote").runs;
    assert_eq!(conversation.len(), 1);
    assert_eq!(conversation[0].prompts.len(), 2);
    assert_eq!(conversation[0].totals.model_calls, 3);
    assert_eq!(
        (
            conversation[0].totals.input_tokens,
            conversation[0].totals.output_tokens
        ),
        (5210 + 5302 + 5331, 61 + 14 + 16)
    );
    assert_eq!(conversation[0].totals.tokens, TokenUsage::Reported);
    assert_eq!(
        run.junit_property("remembers_the_file_it_wrote", "copilot_eval.tokens.input"),
        "15843"
    );
    // The other cassettes recorded no usage: their tokens are unknown in the JSON (0 counts
    // flagged `unknown`, not the replay server's made-up 100/20 per call), not priced, and
    // `unknown` in the JUnit and the summary.
    for name in [
        "creates_a_greeting_file",
        "follows_the_release_notes_skill",
        "looks_up_a_release_with_a_custom_tool",
    ] {
        let test = run.test(name);
        let totals = &test.runs[0].totals;
        assert_eq!(totals.tokens, TokenUsage::Unknown, "{name}");
        assert_eq!(
            (totals.input_tokens, totals.output_tokens),
            (0, 0),
            "{name}"
        );
        assert!(
            totals.model_calls > 0,
            "{name}: the calls themselves are known"
        );
        assert!(
            test.runs[0]
                .usage
                .iter()
                .all(|u| u.input_tokens == 0 && u.output_tokens == 0),
            "{name}: {:?}",
            test.runs[0].usage
        );
        assert_eq!(totals.estimated_cost, None, "{name}");
        let cost = test.cost.as_ref().unwrap();
        assert_eq!(
            (cost.usage_unknown_runs, cost.estimated_cost),
            (1, None),
            "{name}"
        );
        assert_eq!(
            run.junit_property(name, "copilot_eval.tokens.input"),
            "unknown",
            "{name}"
        );
        assert_eq!(
            run.junit_property(name, "copilot_eval.cost.estimated"),
            "unknown",
            "{name}"
        );
    }
    let json: serde_json::Value = serde_json::from_str(&run.json).unwrap();
    // tests[1] is creates_a_greeting_file (tests[0], the comparison, recorded its usage).
    assert_eq!(json["tests"][1]["name"], "creates_a_greeting_file");
    assert_eq!(
        json["tests"][1]["runs"][0]["totals"]["tokens"], "unknown",
        "{}",
        json["tests"][1]["runs"][0]["totals"]
    );
    // The case matrix: each case its own test, with its own values and cassette.
    for (case, word) in [("french", "Bonjour"), ("german", "Hallo")] {
        let name = format!("says_hello_in::{case}");
        let test = run.test(&name);
        assert_eq!(test.properties[0].name, "word");
        assert_eq!(test.properties[0].value, word, "{name}");
        assert_eq!(test.runs[0].tool_calls.len(), 1, "{name}");
    }
    // Three cassettes above and the two cases' recorded no usage.
    assert_eq!(run.report.totals.cost.usage_unknown_runs, 5);
    assert!(
        run.stderr
            .contains("unknown in 5 runs (replayed from cassettes without recorded usage)"),
        "{}",
        run.stderr
    );
    assert_eq!(run.junit.test_suites.len(), 1);
    assert_eq!(run.junit.test_suites[0].name.as_str(), "quickstart::evals");
}

/// An invalid setting refused by `build()` and unwrapped is the test's setup `error` naming the
/// field and the line that built the eval (as the compiler names it, from the workspace), not a
/// `failed`: no session ran.
#[test]
fn an_unwrapped_invalid_setting_is_a_setup_error_naming_its_line() {
    let run = copilot_eval(&["--exact", "misconfigures_the_eval"], &[]);
    assert_eq!(run.status, 3, "an error's exit status: {}", run.stderr);
    let test = run.test("misconfigures_the_eval");
    assert_eq!(test.outcome, Outcome::Error, "{:?}", test.message);
    assert_eq!(test.error_kind, Some(ErrorKind::Setup));
    let message = test.message.as_deref().unwrap_or_default();
    // The line of the fixture that calls `build()`, found in the file (it moves as evals are
    // added above it).
    let fixture =
        std::fs::read_to_string(workspace_root().join("tests/fixture/tests/evals.rs")).unwrap();
    let line = 1 + fixture
        .lines()
        .position(|l| l.contains("ctx.eval().timeout_s(-1.0).build().unwrap()"))
        .expect("the fixture's misconfigured build");
    assert!(
        message.contains("invalid eval configuration: ")
            && message.contains("timeout_s")
            && message.contains(&format!(
                "(the eval built at tests/fixture/tests/evals.rs:{line})"
            )),
        "{message}"
    );
    assert!(test.runs.is_empty(), "no session ran");
}
