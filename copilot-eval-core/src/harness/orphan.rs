//! A test process started by the runner ends with the runner: when the runner dies without
//! cleaning up (SIGKILL, a crash), the test process and everything in its process group (the
//! runtime, MCP servers, tool processes) are killed, instead of running on unobserved.
//!
//! The runner starts each test process as the leader of its own process group and names itself
//! in [`ENV_RUNNER_PID`]. A watcher thread compares the parent process id with it every 100 ms;
//! once they differ (the runner is gone and the process was re-parented), it kills the group.

/// Environment variable the runner sets for each test process: the runner's process id.
pub const ENV_RUNNER_PID: &str = "COPILOT_EVAL_RUNNER_PID";

/// Start the watcher (once per process) when this process was started by the runner and leads
/// its own process group; otherwise (a plain `cargo test`, or a group this process does not
/// lead) do nothing, so no other process is ever signalled.
pub(crate) fn watch_runner() {
    #[cfg(unix)]
    {
        static STARTED: std::sync::Once = std::sync::Once::new();
        let Some(runner) = std::env::var(ENV_RUNNER_PID)
            .ok()
            .and_then(|v| v.parse::<libc::pid_t>().ok())
        else {
            return;
        };
        // SAFETY: getpid/getpgrp take no arguments and cannot fail.
        let leads_group = unsafe { libc::getpgrp() == libc::getpid() };
        if !leads_group {
            return;
        }
        STARTED.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("copilot-eval-runner-watch".to_owned())
                .spawn(move || {
                    loop {
                        // SAFETY: getppid takes no arguments and cannot fail.
                        if unsafe { libc::getppid() } != runner {
                            eprintln!(
                                "copilot-eval: the runner (pid {runner}) is gone; ending this test process and its runtime"
                            );
                            // SAFETY: kill(2) on our own process group (pid 0), which this
                            // process leads (checked above); no memory is involved.
                            unsafe {
                                libc::kill(0, libc::SIGKILL);
                            }
                        }
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                });
            if let Err(e) = spawned {
                eprintln!("copilot-eval: cannot watch the runner: {e}");
            }
        });
    }
}
