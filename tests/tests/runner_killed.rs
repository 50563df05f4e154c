//! A runner that dies without cleaning up (SIGKILL) takes its test processes with it: each test
//! process watches its parent and, once the runner is gone, kills its own process group (itself,
//! its runtime, MCP servers and tool processes); and its pooled runtimes, which the kernel
//! kills with their parent (`PR_SET_PDEATHSIG`).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use copilot_eval_core::runtime::process_alive;
use copilot_eval_core::suite::executor::ENV_SUITE_PROCESS;
use copilot_eval_e2e::{processes_with_env, runtime_for};

mod support;

/// The fixture's `hangs_in_a_tool_handler` finishes one run, then in a second run (the stdio
/// MCP fixture attached) sits in a tool handler that started a child process (`sleep 600`) and
/// never returns (the eval's timeout and the cleanup bound are 600 s, so only the runner's death
/// can end it early). Once its evidence names the held processes (an event, not a delay), the
/// test process, its runtime, the MCP server and the tool child must each carry the runner's
/// suite marker; the runner is SIGKILLed; each of them, and every process carrying the marker,
/// must be gone within a bound far below those 600 s. The first run ran on a pooled runtime (a
/// child of the runner, without the marker): it and every other pooled runtime must be gone
/// too.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_runner_leaves_no_test_process() {
    if runtime_for("a_killed_runner_leaves_no_test_process").is_none() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let mut runner = support::spawn_fixture_runner(
        scratch.path(),
        &["--cleanup-bound-s", "600", "hangs_in_a_tool_handler"],
        Stdio::null(),
    );
    let tmp = scratch.path().join("tmp");
    let marker = format!("{ENV_SUITE_PROCESS}={}-", runner.id());
    let held = support::held_processes(&tmp, Duration::from_secs(600));
    let marked = processes_with_env(&marker);
    for (what, pid) in held.named() {
        assert!(
            marked.contains(&pid),
            "the {what} ({pid}: {}) carries the marker before the runner is killed: {held:?}, marked {marked:?}",
            support::command_line(pid)
        );
    }
    let pooled = pooled_runtimes(runner.id());
    assert!(
        !pooled.is_empty(),
        "the first run's pooled runtime runs under the runner before it is killed"
    );
    runner.kill().unwrap();
    runner.wait().unwrap();
    // Ample next to the watcher's 100 ms, and far below the test's 600 s.
    let bound = Instant::now() + Duration::from_secs(60);
    let left = || {
        let mut left = processes_with_env(&marker);
        for pid in held
            .named()
            .map(|(_, pid)| pid)
            .into_iter()
            .chain(pooled.iter().copied())
        {
            if process_alive(pid) && !left.contains(&pid) {
                left.push(pid);
            }
        }
        left
    };
    let mut still = left();
    while !still.is_empty() && Instant::now() < bound {
        std::thread::sleep(Duration::from_millis(100));
        still = left();
    }
    for pid in &still {
        // Do not leave them behind for the next test.
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        still.is_empty(),
        "processes of the killed runner still running 60 s later: {still:?} (held: {held:?}, pooled runtimes: {pooled:?})"
    );
}

/// The pooled runtimes of the runner `runner`: its child processes started as a Copilot
/// runtime server (`--server`).
#[cfg(target_os = "linux")]
fn pooled_runtimes(runner: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The parent is the field after the parenthesised command name.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(runner) && support::command_line(pid).contains("--server") {
            pids.push(pid);
        }
    }
    pids
}
