//! A runner that dies without cleaning up (SIGKILL) takes its test processes with it: each test
//! process watches its parent and, once the runner is gone, kills its own process group (itself,
//! its runtime, MCP servers and tool processes).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use copilot_eval_core::suite::executor::ENV_SUITE_PROCESS;
use copilot_eval_e2e::{processes_with_env, runtime_for};

mod support;

/// The fixture's `hangs_after_a_run` finishes its run, records a property, then sleeps 600 s
/// (the cleanup bound is 600 s too, so only the runner's death can end it early). Once its
/// evidence holds the property (an event, not a delay) the runner is SIGKILLed; every process
/// carrying the runner's suite marker must be gone within a bound far below those 600 s.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_runner_leaves_no_test_process() {
    if runtime_for("a_killed_runner_leaves_no_test_process").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut runner = support::spawn_fixture_runner(
        scratch.path(),
        &["--cleanup-bound-s", "600", "hangs_after_a_run"],
        Stdio::null(),
    );
    let tmp = scratch.path().join("tmp");
    let marker = format!("{ENV_SUITE_PROCESS}={}-", runner.id());
    support::wait_for_first_evidence(&tmp, "first_run_success", Duration::from_secs(600));
    let tests = processes_with_env(&marker);
    assert!(
        !tests.is_empty(),
        "the test process runs (and carries the marker) before the runner is killed"
    );
    runner.kill().unwrap();
    runner.wait().unwrap();
    // Ample next to the watcher's 100 ms, and far below the test's 600 s sleep.
    let bound = Instant::now() + Duration::from_secs(60);
    let mut left = processes_with_env(&marker);
    while !left.is_empty() && Instant::now() < bound {
        std::thread::sleep(Duration::from_millis(100));
        left = processes_with_env(&marker);
    }
    for pid in &left {
        // Do not leave them behind for the next test.
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "processes of the killed runner still running 60 s later: {left:?}"
    );
}
