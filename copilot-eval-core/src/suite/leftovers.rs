//! The processes an eval test left behind: after its test process exited, every live process
//! of its process group or carrying its marker variable (`COPILOT_EVAL_SUITE_PROCESS=<marker>`),
//! with its command line read from `/proc` before the runner kills it.
//!
//! A process that outlives its test is a leak that a later test or the CI machine pays for
//! (ports, files, CPU, a runtime still spending requests), and it breaks the project's rule that
//! no runtime process outlives its run; so a passing test that left one is reported as an
//! `error` (`leftover_processes`), never killed silently (docs/command.md).

use std::time::Duration;

/// How long processes of a test that just exited may take to end on their own (a child that
/// got the test's end of a pipe, a process killed a moment ago) before they count as left
/// behind. Only spent when some process is still there.
pub(super) const GRACE: Duration = Duration::from_secs(5);
/// How long the runner waits for the processes it killed to be gone.
const KILL_BOUND: Duration = Duration::from_secs(5);
// One process a test left behind, named as every sweep names it.
pub(super) use crate::runtime::Leftover;

/// The live processes of process group `group` (the test process led it) or whose environment
/// holds the entry `marker_entry` (`KEY=VALUE`), once [`GRACE`] has passed for each to end on
/// its own; their command lines read while they are alive. Empty where `/proc` cannot be read.
pub(super) async fn find(group: Option<u32>, marker_entry: &str) -> Vec<Leftover> {
    let until = tokio::time::Instant::now() + GRACE;
    let mut pids = candidates(group, marker_entry);
    while !pids.is_empty() && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
        pids = candidates(group, marker_entry);
    }
    pids.into_iter().map(Leftover::of).collect()
}

/// Wait (at most [`KILL_BOUND`]) until none of `leftovers` is alive any more.
pub(super) async fn wait_gone(leftovers: &[Leftover]) {
    let pids = leftovers.iter().map(|l| l.pid).collect();
    crate::runtime::wait_for_exits(pids, KILL_BOUND).await;
}

/// `pid 123 (sleep 600), pid 456 (node …)`.
pub(super) fn describe(leftovers: &[Leftover]) -> String {
    crate::runtime::describe_leftovers(leftovers)
}

fn candidates(group: Option<u32>, marker_entry: &str) -> Vec<u32> {
    let mut pids = crate::runtime::processes_with_env(marker_entry);
    if let Some(group) = group {
        for pid in group_members(group) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    pids.retain(|pid| crate::runtime::process_alive(*pid));
    pids.sort_unstable();
    pids
}

/// The processes whose process group is `group` (`/proc/<pid>/stat`, the field after the state
/// and the parent's pid).
fn group_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat.rsplit_once(") ")?.1.to_owned();
                    after.split_whitespace().nth(2)?.parse::<u32>().ok()
                })
                == Some(group)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child of this process, in its own process group and carrying a marker, is found with
    /// its command line; once killed it is gone.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_live_child_is_found_with_its_command_line() {
        use std::os::unix::process::CommandExt;
        let marker = format!("COPILOT_EVAL_LEFTOVER_TEST={}", std::process::id());
        let (key, value) = marker.split_once('=').unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .env(key, value)
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        // Until the child has exec'd, its command line is still this test binary's.
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while Leftover::of(pid).command != "sleep 600" && std::time::Instant::now() < bound {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // By group alone and by marker alone.
        let by_group = candidates(Some(pid), "COPILOT_EVAL_LEFTOVER_TEST=none");
        assert_eq!(by_group, [pid]);
        let found = find(None, &marker).await;
        assert_eq!(
            found,
            [Leftover {
                pid,
                command: "sleep 600".to_owned()
            }]
        );
        assert_eq!(describe(&found), format!("pid {pid} (sleep 600)"));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(find(Some(pid), &marker).await.is_empty());
    }
}
