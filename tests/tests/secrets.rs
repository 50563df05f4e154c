//! Tokens never appear in results, artifacts, logs or panic messages: canary tests.
//!
//! `GITHUB_TOKEN` and `GH_TOKEN` are set to canary values for the real command. Then every
//! artifact is searched for them: the JSON results, the JUnit XML, the command's stdout and
//! stderr, the evidence file a test writes, and every file left in the run's TMPDIR (kept working
//! directories). First over the fixture crate's evals of every outcome, which never touch a
//! token; then over an eval written to leak on purpose (it prints the token, records it, sends
//! it to the model, and panics with it), whose leaks must all arrive as `[redacted]`, also in
//! the GitHub Actions annotation and job summary.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use copilot_eval_e2e::runtime_for;
use serde_json::Value;
use support::{copilot_eval, fixture, workspace_root};

const GITHUB_CANARY: &str = "ghp_CANARYgithubTOKEN0123456789abcdef";
const GH_CANARY: &str = "gho_CANARYghTOKEN9876543210fedcba";
const CANARY_ENV: [(&str, &str); 2] = [("GITHUB_TOKEN", GITHUB_CANARY), ("GH_TOKEN", GH_CANARY)];

/// Fail when `text` (from `what`) holds a canary.
fn assert_clean(what: &str, text: &str) {
    for canary in [GITHUB_CANARY, GH_CANARY] {
        assert!(
            !text.contains(canary),
            "{what} contains the canary token {canary}:\n{text}"
        );
    }
}

/// Every regular file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files.extend(files_under(&path)),
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
    files
}

fn assert_run_clean(run: &support::SuiteRun) {
    assert_clean("the JSON results", &run.json);
    assert_clean("the JUnit XML", &run.junit_xml);
    assert_clean("stdout", &run.stdout);
    assert_clean("stderr", &run.stderr);
    for file in files_under(run.scratch.path()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert_clean(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
}

#[test]
fn canary_tokens_never_reach_the_artifacts() {
    if runtime_for("canary_tokens_never_reach_the_artifacts").is_none() {
        return;
    }
    // Every outcome: passed, failed (assertion, panic), setup error, replay mismatch, a crash;
    // --no-fail-fast so that each one runs.
    let run = fixture(
        &[
            "--no-fail-fast",
            "passes",
            "fails_an_assertion",
            "panics",
            "missing_cassette",
            "replay_mismatch",
            "aborts",
            "unit_eval",
        ],
        &CANARY_ENV,
    );
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(run.report.tests.len(), 8, "{:#?}", run.report.tests);
    assert!(
        run.report
            .tests
            .iter()
            .all(|t| t.outcome != copilot_eval_core::report::Outcome::NotRun)
    );
    assert_run_clean(&run);

    // doctor names the source of the credential, never its value.
    let missing = run.scratch.path().join("no-copilot");
    for format in [&["--json"][..], &[]] {
        let out = Command::new(support::command_path())
            .args(["copilot-eval", "doctor"])
            .args(format)
            .env("COPILOT_EVAL_RUNTIME_PATH", &missing)
            .envs(CANARY_ENV)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("GITHUB_TOKEN"), "{stdout}");
        assert_clean("doctor's stdout", &stdout);
        assert_clean("doctor's stderr", &String::from_utf8_lossy(&out.stderr));
    }
}

/// An eval that does everything wrong with the token.
const LEAKING_EVAL: &str = r#"
use copilot_eval_core::copilot_eval;
use copilot_eval_core::harness::EvalContext;
use copilot_eval_core::model_server::{Script, ScriptedTurn};

#[copilot_eval(model = "claude-sonnet-4.5", timeout_s = 60)]
async fn leaks_the_token(ctx: EvalContext) {
    let token = std::env::var("GITHUB_TOKEN").unwrap();
    let other = std::env::var("GH_TOKEN").unwrap();
    println!("stdout: {token} {other}");
    eprintln!("stderr: {token} {other}");
    ctx.record_property("token", &token);
    ctx.record_property(other.clone(), "the token as a name");
    ctx.offline(Script::new([]).turn(ScriptedTurn::text(format!("The token is {token}."))));
    let eval = ctx.eval().instructions(format!("Never say {other}.")).build().unwrap();
    let result = ctx.run(&eval, format!("Repeat {token}.")).await;
    panic!("leaking on purpose: {token} / {other} / {:?}", result.final_response);
}
"#;

/// A crate outside the workspace holding [`LEAKING_EVAL`], sharing this workspace's target
/// folder and lock file.
fn leaking_crate() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-leak-")
        .tempdir()
        .unwrap();
    let core = workspace_root().join("copilot-eval-core");
    let files = [
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"leaky\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[dev-dependencies]\ncopilot-eval-core = {{ path = \"{}\" }}\n",
                core.display()
            ),
        ),
        ("src/lib.rs", String::new()),
        ("tests/leaks.rs", LEAKING_EVAL.to_owned()),
        (
            ".cargo/config.toml",
            "[env]\nCOPILOT_SKIP_CLI_DOWNLOAD = \"1\"\n".to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::copy(
        workspace_root().join("Cargo.lock"),
        dir.path().join("Cargo.lock"),
    )
    .unwrap();
    dir
}

fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap()
}

#[test]
fn a_test_that_leaks_the_token_is_redacted_everywhere() {
    if runtime_for("a_test_that_leaks_the_token_is_redacted_everywhere").is_none() {
        return;
    }
    let krate = leaking_crate();
    let target = target_dir().to_str().unwrap().to_owned();
    // In a GitHub Actions step: the annotations and the job summary are redacted too.
    let step = tempfile::tempdir().unwrap();
    let summary = step.path().join("step-summary.md");
    let env = [
        CANARY_ENV[0],
        CANARY_ENV[1],
        ("CARGO_TARGET_DIR", target.as_str()),
        ("CARGO_NET_OFFLINE", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let run = copilot_eval(krate.path(), &[], &env);
    // The run completes and the test fails its own check (exit 1). Without a runtime this test is
    // skipped like every runtime test (it would end as an execution error, exit 3, proving
    // nothing about the redaction of a completed run).
    assert_eq!(run.status, 1, "the eval fails\n{}", run.stderr);
    assert_run_clean(&run);
    let test = run.test("leaks_the_token");
    let message = test.message.as_deref().unwrap();
    assert!(
        message.contains("leaking on purpose: [redacted] / [redacted]"),
        "{message}"
    );
    assert_eq!(test.properties[0].value, "[redacted]");
    assert_eq!(test.properties[1].name, "[redacted]");
    let output = test.output.as_ref().unwrap();
    assert!(
        output.stdout.contains("stdout: [redacted] [redacted]"),
        "{}",
        output.stdout
    );
    assert!(
        run.stderr.contains("leaking on purpose: [redacted]"),
        "{}",
        run.stderr
    );
    if let Some(first) = test.runs.first() {
        assert_eq!(first.prompts[0].text, "Repeat [redacted].");
    }
    // The `::error` annotation (stdout, checked clean above) and the job summary.
    let annotation = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation: {}", run.stdout));
    assert!(
        annotation.contains("::leaking on purpose: [redacted] / [redacted]"),
        "{annotation}"
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert_clean("the job summary", &text);
    assert!(
        text.contains("| leaking on purpose: [redacted] / [redacted]"),
        "{text}"
    );

    // The evidence file the test process writes itself (the runner's copy is temporary).
    let binary = test_binary(krate.path(), &target);
    let evidence = run.scratch.path().join("evidence.json");
    let status = Command::new(&binary)
        .args(["leaks_the_token::__copilot_eval", "--exact", "--ignored"])
        .current_dir(krate.path())
        .env("COPILOT_EVAL_MODE", "replay")
        .env("COPILOT_EVAL_EVIDENCE_FILE", &evidence)
        .env("TMPDIR", run.scratch.path())
        .envs(CANARY_ENV)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(101), "the eval fails");
    let text = std::fs::read_to_string(&evidence).unwrap();
    assert_clean("the evidence file", &text);
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["properties"][0]["value"], "[redacted]");
    assert!(
        value["failure"]
            .as_str()
            .unwrap()
            .contains("leaking on purpose: [redacted]"),
        "{value}"
    );
}

/// The `leaks` test executable of the crate (already built by the command).
fn test_binary(krate: &Path, target: &str) -> PathBuf {
    let output = Command::new(support::cargo())
        .args(["test", "--no-run", "--message-format", "json"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["target"]["name"] == "leaks")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| {
            panic!(
                "no leaks binary: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}
