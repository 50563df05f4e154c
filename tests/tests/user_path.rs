//! A user's path without a stumble (issue 34): what a new user hit, each through the real
//! `cargo copilot-eval` on the fixture crate (`tests/fixture`) or this workspace.

use copilot_eval_core::report::Outcome;
use copilot_eval_e2e::runtime_for;

mod support;

use support::fixture;

/// Paths relative to the package root reach the runtime absolute: a relative skill folder is
/// discovered and a stdio MCP server's relative working folder is where it starts
/// (`finds_relative_paths`); a missing relative folder is an error naming the absolute path and
/// what it was relative to (checked inside the fixture eval).
#[test]
fn relative_paths_are_resolved_against_the_package_root() {
    if runtime_for("relative_paths_are_resolved_against_the_package_root").is_none() {
        return;
    }
    let run = fixture(&["--exact", "finds_relative_paths"], &[]);
    let test = run.test("finds_relative_paths");
    assert_eq!(test.outcome, Outcome::Passed, "{test:#?}\n{}", run.stderr);
    assert_eq!(run.status, 0, "{}", run.stderr);
}

/// A workspace holding a proc-macro crate: the macro crate's unit-test binary links the
/// toolchain's `libstd` dynamically, so the runner lists (and runs) test binaries with the
/// library path cargo gives them. Shown on this workspace, with its macro crate beside the
/// fixture (`cargo xeval --workspace --replay --list` lists every package the same way).
#[test]
fn a_workspace_with_a_proc_macro_crate_lists_its_evals() {
    let output = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "--replay", "--list"])
        .args(["-p", "copilot-eval-macros", "-p", support::FIXTURE])
        .current_dir(support::workspace_root())
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DYLD_FALLBACK_LIBRARY_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l == "copilot-eval-fixture::evals: passes"),
        "{stdout}\n{stderr}"
    );
}

/// A filter that matches nothing, typed as a file name: the warning says what filters match
/// and names the nearest eval tests, instead of asking to mark a test with `#[copilot_eval]`.
#[test]
fn a_filter_that_matches_nothing_names_the_nearest_evals() {
    let run = fixture(&["tests/evals.rs::passes"], &[]);
    assert_eq!(run.status, 4, "{}", run.stderr);
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains("no eval test matched"))
        .unwrap_or_else(|| panic!("no warning in\n{}", run.stderr));
    assert!(
        warning.contains("filters match eval test paths (`module::function`"),
        "{warning}"
    );
    assert!(warning.contains("nearest: passes,"), "{warning}");
    assert!(!warning.contains("mark a test with"), "{warning}");
}

/// `doctor --model M` when the catalog cannot be read: M still gets its line, "not checked"
/// with the reason.
#[test]
fn doctor_names_an_unchecked_model() {
    if runtime_for("doctor_names_an_unchecked_model").is_none() {
        return;
    }
    let output = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "doctor", "--model", "gpt-wanted"])
        .args(["--offline-base-url", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("model gpt-wanted"))
        .unwrap_or_else(|| panic!("no line for the model in\n{stdout}"));
    assert!(line.contains("not checked: "), "{line}");
    assert!(line.contains("model catalog"), "{line}");
}

/// The ignore reason `cargo test` shows for an eval test claims no spending (scripted evals
/// never spend), and `--json`'s help names no file of this repository.
#[test]
fn the_ignore_reason_and_the_help_say_only_what_is_true() {
    let output = std::process::Command::new(support::cargo())
        .args(["test", "-p", support::FIXTURE, "--test", "evals", "--"])
        .args(["--exact", "passes::__copilot_eval"])
        .current_dir(support::workspace_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("passes::__copilot_eval"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("ignored, copilot eval: run it with cargo copilot-eval"),
        "{line}"
    );
    assert!(!line.contains("spends model requests live"), "{line}");

    let output = std::process::Command::new(support::command_path())
        .args(["copilot-eval", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    let json = help
        .split("--json <PATH>")
        .nth(1)
        .and_then(|rest| rest.split("--junit").next())
        .unwrap_or_else(|| panic!("{help}"));
    assert!(!json.contains("docs/schema"), "{json}");
    assert!(json.contains("cargo copilot-eval schema"), "{json}");
}

/// A timeout names the phase it struck in: the fixture's `times_out` scripts a model that never
/// answers and counts its 4 s from the moment its prompt was sent (a test-only clock, so no
/// speed of the machine moves the timeout out of the model turn), so its run times out during a
/// model turn (the tool handler phase is shown by `faults.rs`, `a_tool_handler_that_hangs`; the
/// phases before the prompt by `stops.rs`).
#[test]
fn a_timeout_names_its_phase() {
    if runtime_for("a_timeout_names_its_phase").is_none() {
        return;
    }
    let run = fixture(&["--exact", "times_out"], &[]);
    let test = run.test("times_out");
    let record = test
        .runs
        .first()
        .unwrap_or_else(|| panic!("no run in {test:#?}\n{}", run.stderr));
    assert_eq!(
        record.stop_reason,
        copilot_eval_core::StopReason::Timeout,
        "{test:#?}"
    );
    let error = record.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("timed out after 4s (eval timeout_s) during a model turn"),
        "{error}"
    );
}

/// A test whose assertion repeats its run's error (`assert!(result.success, "{:?}",
/// result.error)` after a failed run, as after a failed `--record`) shows that error once in its
/// message: the line of the run, then the test's failure pointing at it.
#[test]
fn a_run_error_the_test_repeats_is_shown_once() {
    if runtime_for("a_run_error_the_test_repeats_is_shown_once").is_none() {
        return;
    }
    let run = fixture(&["--exact", "replay_mismatch"], &[]);
    let test = run.test("replay_mismatch");
    let message = test.message.as_deref().unwrap_or_default();
    let error = test.runs[0].error.as_deref().unwrap_or_default();
    let first = error.lines().next().unwrap_or_default();
    assert!(!first.is_empty(), "{test:#?}");
    assert_eq!(message.matches(first).count(), 1, "{message}");
    assert!(
        message.contains(
            "the test then failed: replay_mismatch: Some(<the run's error, shown above>)"
        ),
        "{message}"
    );
}

/// A failed run's error is printed once on the terminal: in the test's block under its
/// `ERROR` line, where it belongs; the summary's line for that test names it and points there
/// instead of repeating the message's first line.
#[test]
fn a_run_error_is_printed_once_on_the_terminal() {
    if runtime_for("a_run_error_is_printed_once_on_the_terminal").is_none() {
        return;
    }
    let run = fixture(&["--exact", "replay_mismatch"], &[]);
    let test = run.test("replay_mismatch");
    let error = test.runs[0].error.as_deref().unwrap_or_default();
    let first = error.lines().next().unwrap_or_default();
    assert!(!first.is_empty(), "{test:#?}");
    assert_eq!(run.stderr.matches(first).count(), 1, "{}", run.stderr);
    let summary = run
        .stderr
        .split("Summary [")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary in\n{}", run.stderr));
    assert!(
        summary.contains(
            "\n    ERROR copilot-eval-fixture::evals replay_mismatch (its message is above)\n"
        ),
        "{summary}"
    );
}

/// lint's notes: an agent whose `name` gives it an id other than its file name gets an
/// `agent-id` note, a fact rather than something to change: not printed without `--verbose`,
/// not counted as a warning (so `--deny-warnings` passes), printed with `--verbose`.
#[test]
fn lint_shows_notes_only_when_verbose_and_never_as_warnings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("planner.agent.md"),
        "---\nname: Planner\ndescription: Plans the work.\n---\nPlan.\n",
    )
    .unwrap();
    let lint = |flags: &[&str]| {
        let output = std::process::Command::new(support::command_path())
            .args(["copilot-eval", "lint", "--deny-warnings"])
            .args(flags)
            .arg(dir.path())
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (status, stdout, stderr) = lint(&[]);
    assert_eq!(status, Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, "", "{stderr}");
    assert!(stderr.contains("0 errors, 0 warnings, 1 note"), "{stderr}");
    let (status, stdout, _) = lint(&["--verbose"]);
    assert_eq!(status, Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "planner.agent.md:2: note[agent-id] `name`: makes the agent's id \"Planner\""
        ),
        "{stdout}"
    );
}
