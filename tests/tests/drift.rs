//! `cargo copilot-eval drift` end to end: a second runtime version (1.0.92) installed from the npm
//! registry into a temporary cache, the quick-start example replayed under the pinned runtime and
//! under it, and the report: the eval that drifts, named with its first difference, and the
//! others unchanged.
//!
//! Measured with runtime 1.0.92: the quick-start's `loads_the_repository_configuration` (a scripted
//! model, no cassette) fails there, because 1.0.92 reports its completed subagent as cancelled
//! (`subagent_invocations[0].cancelled: false -> true`); the four cassettes still replay.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use copilot_eval_core::runtime::{self, PINNED_RUNTIME_VERSION};
use copilot_eval_core::suite::drift::{DriftKind, DriftReport, DriftStatus};
use copilot_eval_e2e::runtime_for;
use serde_json::Value;

mod support;

use support::{command_path, workspace_root};

/// The older published runtime the test compares with.
const OLDER: &str = "1.0.92";
/// Bound on `runtime install --version 1.0.92` (an npm download of about 190 MB, once per run of
/// this test): ample for a slow network; the install is killed past it.
const INSTALL_BOUND: Duration = Duration::from_secs(15 * 60);

/// `cargo copilot-eval ARGS` with the runtime cache at `cache`; killed after `bound`.
fn copilot_eval(args: &[&str], cache: &Path, scratch: &Path, bound: Duration) -> Output {
    let child = Command::new(command_path())
        .arg("copilot-eval")
        .args(args)
        .current_dir(workspace_root())
        .env(runtime::CACHE_DIR_ENV, cache)
        .env("TMPDIR", scratch)
        .env_remove(runtime::RUNTIME_VERSION_ENV)
        .env_remove(runtime::RUNTIME_PATH_ENV)
        .env_remove("COPILOT_EVAL_MODE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo-copilot-eval starts");
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(bound) {
        Ok(output) => output.expect("cargo-copilot-eval runs"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!(
                "`cargo copilot-eval {}` did not finish within {bound:?}",
                args.join(" ")
            );
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn drift_names_the_quickstart_eval_that_changes_under_an_older_runtime() {
    let Some(pinned) =
        runtime_for("drift_names_the_quickstart_eval_that_changes_under_an_older_runtime")
    else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    // A cache of our own: the pinned runtime and the runtime's unpack cache are the user's
    // (linked), the older version is installed into it and removed with it.
    let cache = scratch.path().join("cache");
    std::fs::create_dir_all(cache.join("runtime")).unwrap();
    let pinned_dir = runtime::install_dir(PINNED_RUNTIME_VERSION);
    assert!(
        pinned.path.starts_with(&pinned_dir),
        "the pinned runtime {} is not the installed one in {}",
        pinned.path.display(),
        pinned_dir.display()
    );
    std::os::unix::fs::symlink(
        &pinned_dir,
        cache.join("runtime").join(PINNED_RUNTIME_VERSION),
    )
    .unwrap();
    std::fs::create_dir_all(runtime::runtime_cache_dir()).unwrap();
    std::os::unix::fs::symlink(runtime::runtime_cache_dir(), cache.join("runtime-cache")).unwrap();

    // Not installed yet: drift says how to install it, and runs nothing.
    let missing = copilot_eval(
        &["drift", "-p", "quickstart", "--runtime-version", OLDER],
        &cache,
        scratch.path(),
        INSTALL_BOUND,
    );
    let stderr = text(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("runtime install --version {OLDER}")),
        "{stderr}"
    );

    let install = copilot_eval(
        &["runtime", "install", "--version", OLDER],
        &cache,
        scratch.path(),
        INSTALL_BOUND,
    );
    assert!(install.status.success(), "{}", text(&install.stderr));
    assert!(
        text(&install.stdout).ends_with(&format!("{OLDER}\n")),
        "{}",
        text(&install.stdout)
    );
    let list = copilot_eval(&["runtime", "list"], &cache, scratch.path(), INSTALL_BOUND);
    assert_eq!(
        text(&list.stdout),
        format!("{OLDER}\n{PINNED_RUNTIME_VERSION}  (pinned)\n")
    );

    let json = scratch.path().join("drift.json");
    let drift = copilot_eval(
        &[
            "drift",
            "-p",
            "quickstart",
            "--runtime-version",
            OLDER,
            "--plain",
            "--json",
            json.to_str().unwrap(),
        ],
        &cache,
        scratch.path(),
        INSTALL_BOUND,
    );
    let stderr = text(&drift.stderr);
    assert_eq!(drift.status.code(), Some(1), "some eval drifts: {stderr}");
    let written = std::fs::read_to_string(&json).unwrap();
    let report: DriftReport = serde_json::from_str(&written).unwrap();
    assert_eq!(
        report.pinned.version.as_deref(),
        Some(PINNED_RUNTIME_VERSION)
    );
    assert_eq!(report.candidate.version.as_deref(), Some(OLDER));
    assert_eq!(report.evals.len(), 10, "{written}");
    for eval in &report.evals {
        assert_eq!(eval.binary, "quickstart::evals");
        assert_eq!(eval.pinned.outcome.as_str(), "passed", "{written}");
        // The cassette evals replay theirs (the comparison's first cassette is named; a case's
        // is `<function>/<label>.yaml`); the configuration eval scripts its model.
        let scripted = eval.name == "loads_the_repository_configuration";
        assert_eq!(
            eval.cassette
                .as_deref()
                .map(|c| c.ends_with(&format!("/{}.yaml", eval.name.replace("::", "/")))),
            (!scripted).then_some(true),
            "{written}"
        );
        if eval.name == "loads_the_repository_configuration" {
            assert_eq!(eval.status, DriftStatus::Drifted, "{written}");
            assert_eq!(eval.candidate.outcome.as_str(), "failed");
            let first = eval.difference.as_ref().expect("a first difference");
            assert_eq!(first.kind, DriftKind::Evidence, "{written}");
            assert_eq!(first.run, Some(1));
            assert_eq!(
                first.detail, "subagent_invocations[0].cancelled: false -> true",
                "{written}"
            );
        } else {
            assert_eq!(eval.status, DriftStatus::Unchanged, "{written}");
            assert_eq!(eval.candidate.outcome.as_str(), "passed");
            assert!(eval.difference.is_none());
        }
    }
    assert_eq!(report.summary, "1 of 10 evals drift; 1 by changed evidence");
    assert_eq!((report.totals.drifted, report.totals.unchanged), (1, 9));
    // The terminal report says the same.
    assert!(
        stderr.contains("  DRIFTS        quickstart::evals loads_the_repository_configuration (passed -> failed)\n      first difference in run 1 (evidence): subagent_invocations[0].cancelled: false -> true"),
        "{stderr}"
    );
    assert!(
        stderr.contains("  unchanged     quickstart::evals creates_a_greeting_file (passed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("  1 of 10 evals drift; 1 by changed evidence\n"),
        "{stderr}"
    );

    // The JSON matches the schema `drift --schema` prints.
    let schema = copilot_eval(
        &["drift", "--schema"],
        &cache,
        scratch.path(),
        INSTALL_BOUND,
    );
    assert!(schema.status.success(), "{}", text(&schema.stderr));
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let instance: Value = serde_json::from_str(&written).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// `drift --trials N` end to end, without a second download: the pinned runtime is compared
/// with itself (`--runtime-version` the pinned version). The quick-start's
/// `creates_a_greeting_file` has five trial cassettes, the model's greeting wrong in trials 2
/// and 4: each trial replays its own cassette under both runs and is compared on its own, so
/// each is an entry with `trial`, `unchanged`, failing in trials 2 and 4 under both runs alike.
#[test]
fn drift_trials_compares_each_trial_from_its_own_cassette() {
    if runtime_for("drift_trials_compares_each_trial_from_its_own_cassette").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    // A cache of our own, linking the user's pinned runtime and unpack cache (read only).
    let cache = scratch.path().join("cache");
    std::fs::create_dir_all(cache.join("runtime")).unwrap();
    std::os::unix::fs::symlink(
        runtime::install_dir(PINNED_RUNTIME_VERSION),
        cache.join("runtime").join(PINNED_RUNTIME_VERSION),
    )
    .unwrap();
    std::fs::create_dir_all(runtime::runtime_cache_dir()).unwrap();
    std::os::unix::fs::symlink(runtime::runtime_cache_dir(), cache.join("runtime-cache")).unwrap();
    let json = scratch.path().join("drift.json");
    let drift = copilot_eval(
        &[
            "drift",
            "-p",
            "quickstart",
            "creates_a_greeting_file",
            "--runtime-version",
            PINNED_RUNTIME_VERSION,
            "--trials",
            "5",
            "--plain",
            "--json",
            json.to_str().unwrap(),
        ],
        &cache,
        scratch.path(),
        INSTALL_BOUND,
    );
    let stderr = text(&drift.stderr);
    assert_eq!(drift.status.code(), Some(0), "nothing drifts: {stderr}");
    let written = std::fs::read_to_string(&json).unwrap();
    let report: DriftReport = serde_json::from_str(&written).unwrap();
    let got: Vec<_> = report
        .evals
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                e.trial.map(|t| (t.trial, t.trials)),
                e.status,
                e.pinned.outcome.as_str(),
                e.candidate.outcome.as_str(),
                e.cassette
                    .as_deref()
                    .and_then(|c| c.rsplit('/').next())
                    .map(str::to_owned),
            )
        })
        .collect();
    let expected: Vec<_> = (1..=5u32)
        .map(|k| {
            let outcome = if k % 2 == 0 { "failed" } else { "passed" };
            (
                "creates_a_greeting_file",
                Some((k, 5)),
                DriftStatus::Unchanged,
                outcome,
                outcome,
                Some(format!("trial-{k}.yaml")),
            )
        })
        .collect();
    assert_eq!(got, expected, "{written}");
    for eval in &report.evals {
        assert!(
            eval.cassette
                .as_deref()
                .unwrap()
                .contains("/creates_a_greeting_file/trial-"),
            "{written}"
        );
    }
    assert_eq!((report.totals.drifted, report.totals.unchanged), (0, 5));
}
