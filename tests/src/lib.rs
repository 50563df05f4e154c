//! Shared support for copilot-eval's end-to-end tests (the tests live in `tests/tests/`).
//!
//! Every test here drives the REAL Copilot runtime. Without one, a test prints a skip line naming
//! `cargo copilot-eval runtime install`; with `COPILOT_EVAL_REQUIRE_RUNTIME=1` (CI) it fails.

use copilot_eval_core::CopilotResult;
use copilot_eval_core::runtime;

/// Assert the run left no runtime process behind: its pid is gone and cleanup killed nothing.
pub fn assert_no_runtime_left(result: &CopilotResult) {
    if let Some(pid) = result.runtime_pid {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        assert!(
            matches!(state, None | Some('Z') | Some('X')),
            "runtime process {pid} is still alive after the run: {stat}"
        );
    }
    assert!(
        !result
            .capture_errors
            .iter()
            .any(|e| e.contains("outlived the stop")),
        "cleanup had to kill leftover processes: {:?}",
        result.capture_errors
    );
}

/// The runtime for a test, or `None` (skip) as documented in
/// [`runtime::require_for_test`].
pub fn runtime_for(test: &str) -> Option<runtime::ResolvedRuntime> {
    runtime::require_for_test(test)
}
