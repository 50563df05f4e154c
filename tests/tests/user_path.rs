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

