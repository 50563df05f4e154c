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