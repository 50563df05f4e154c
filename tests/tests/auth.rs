//! A live run that cannot authenticate says how to go on: set a token (`doctor` checks it) or
//! replay the cassettes (`--replay`). Offline: the run's environment holds no credential, and
//! every GitHub and Copilot endpoint points at a closed loopback port, so nothing can leave the
//! machine even where a credential is found some other way.
//!
//! This binary holds this one test: it changes its own process environment.

use copilot_eval_core::run::AUTH_HINT;
use copilot_eval_core::{CopilotEval, RunOptions, StopReason, run_with};
use copilot_eval_e2e::{assert_no_runtime_left, runtime_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_without_a_token_fails_fast_with_the_auth_hint() {
    let Some(runtime) = runtime_for("a_live_run_without_a_token_fails_fast_with_the_auth_hint")
    else {
        return;
    };
    let credentials: Vec<String> = std::env::vars()
        .map(|(key, _)| key)
        .filter(|key| {
            key == "GITHUB_TOKEN"
                || key == "GH_TOKEN"
                || key.starts_with("GH_ENTERPRISE")
                || key.starts_with("GITHUB_ENTERPRISE")
                || (key.starts_with("COPILOT_") && key != "COPILOT_EVAL_REQUIRE_RUNTIME")
        })
        .collect();
    let signed_out_gh = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let gh = signed_out_gh.path().join("gh");
        std::fs::write(&gh, "#!/bin/sh\necho 'not logged in' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // SAFETY: this test binary runs this single test, and nothing else reads or writes the
    // environment while it changes.
    unsafe {
        for key in &credentials {
            std::env::remove_var(key);
        }
        // No signed-in GitHub CLI user either: a stand-in `gh` first on PATH that is signed out.
        std::env::set_var(
            "PATH",
            std::env::join_paths(std::iter::once(signed_out_gh.path().to_path_buf()).chain(
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
            ))
            .unwrap(),
        );
        // Loopback only, whatever the runtime finds (a closed port: every request fails).
        std::env::set_var("COPILOT_API_URL", "http://127.0.0.1:9");
        std::env::set_var("COPILOT_DEBUG_GITHUB_API_URL", "http://127.0.0.1:9");
    }
    let work = tempfile::tempdir().unwrap();
    let eval = CopilotEval::builder()
        .model("claude-sonnet-4.5")
        .timeout_s(300.0)
        .working_directory(work.path())
        .build()
        .unwrap();
    let result = run_with(
        &eval,
        "Say hello.",
        &RunOptions::live().runtime_path(&runtime.path),
    )
    .await;
    // Fast: the runtime's own error ends the run, not the timeout.
    assert_eq!(
        result.stop_reason,
        StopReason::ExecutionError,
        "{:?}",
        result.error
    );
    let error = result.error.clone().unwrap_or_default();
    assert!(error.contains("No GitHub OAuth token"), "{error}");
    assert!(error.ends_with(AUTH_HINT), "{error}");
    assert!(
        AUTH_HINT.contains("--replay") && AUTH_HINT.contains("cargo copilot-eval doctor"),
        "{AUTH_HINT}"
    );
    assert!(result.usage.is_empty(), "no model call was made");
    assert_no_runtime_left(&result);
}
