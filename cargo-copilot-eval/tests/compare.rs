//! `cargo copilot-eval compare`: the exit statuses of a wrong command line and of a file that
//! cannot be read, and `--schema`, through the real binary (no runtime needed: compare reads
//! results files only; tests/tests/deciding.rs compares real runs).

use std::path::Path;
use std::process::Command;

fn compare(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-copilot-eval"))
        .args(["copilot-eval", "compare"])
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn one_file_is_a_usage_error() {
    let (status, _, stderr) = compare(&["base.json"]);
    assert_eq!(status, 2, "{stderr}");
}

#[test]
fn a_file_that_cannot_be_read_exits_5_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    std::fs::write(&base, "not json").unwrap();
    let missing = dir.path().join("missing.json");
    let (base, missing) = (base.display().to_string(), missing.display().to_string());
    let (status, _, stderr) = compare(&[&base, &missing]);
    assert_eq!(status, 5, "{stderr}");
    assert!(stderr.contains("error: "), "{stderr}");
    assert!(stderr.contains(&base), "{stderr}");
}

#[test]
fn schema_prints_the_committed_compare_schema() {
    let (status, stdout, stderr) = compare(&["--schema"]);
    assert_eq!(status, 0, "{stderr}");
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema/compare.schema.json"),
    )
    .unwrap();
    assert_eq!(stdout, committed);
}
