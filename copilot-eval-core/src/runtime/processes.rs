//! The processes of runtimes, found by one entry of their environment (`COPILOT_HOME=<a home>`,
//! the runner's per-test marker): whether each is alive, its command line, killing it and
//! waiting for it to be gone. The run's sweep (by its private home), the pool's (by a pooled
//! runtime's home) and the runner's (by its per-test marker) all find, name and kill with
//! these, so a leftover reads the same wherever it was found.

/// At most this many characters of a command line are kept in a [`Leftover`].
const COMMAND_CHARS: usize = 200;

/// Process ids of live processes whose environment contains `marker` as a whole `KEY=VALUE`
/// entry (Linux: read from `/proc/<pid>/environ`; elsewhere always empty). The run uses it with
/// `COPILOT_HOME=<its private home>` to prove no runtime process outlives it.
pub fn processes_with_env(marker: &str) -> Vec<u32> {
    processes_whose_env(|kv| kv == marker.as_bytes())
}

fn processes_whose_env(matches: impl Fn(&[u8]) -> bool) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(&matches) && !is_zombie(pid) {
            found.push(pid);
        }
    }
    found
}

/// Whether process `pid` exists and has not ended (a zombie, `Z`, or dead, `X`, process has
/// ended), read from `/proc/<pid>/stat`. Always `false` where `/proc` cannot be read.
pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok() && !is_zombie(pid)
}

/// Wait until every process of `pids` has ended ([`process_alive`] is false), checking every
/// 20 ms for at most `bound`; returns the ones still alive then (empty: all ended).
///
/// A process killed with SIGKILL closes its file descriptors (its sockets) before it becomes a
/// zombie, so one seen to close a connection can still read as alive for a moment.
pub async fn wait_for_exits(mut pids: Vec<u32>, bound: std::time::Duration) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + bound;
    pids.retain(|pid| process_alive(*pid));
    while !pids.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        pids.retain(|pid| process_alive(*pid));
    }
    pids
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after = stat.rsplit_once(") ")?.1;
            after.chars().next()
        })
        .is_some_and(|state| state == 'Z' || state == 'X')
}

/// Send SIGKILL to `pid` (Unix; elsewhere nothing).
pub fn kill_process(pid: u32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a pid read from /proc; no memory is involved.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// A process found left behind: its id and its command line, read while it was alive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Leftover {
    /// Its process id.
    pub pid: u32,
    /// Its command line, arguments joined by spaces and cut to 200 characters (`…` marks a
    /// cut; `[name]` when `/proc` shows no arguments, `[unknown]` when it shows nothing).
    pub command: String,
}

impl Leftover {
    /// `pid` with its command line, read now (before it is killed).
    pub fn of(pid: u32) -> Self {
        Self {
            pid,
            command: command_line(pid),
        }
    }
}

/// `pid 123 (sleep 600), pid 456 (node …)`: how every sweep names what it killed.
pub fn describe_leftovers(leftovers: &[Leftover]) -> String {
    leftovers
        .iter()
        .map(|l| format!("pid {} ({})", l.pid, l.command))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The command line of `pid` from `/proc/<pid>/cmdline` (arguments joined by spaces, cut to
/// [`COMMAND_CHARS`]), else `[<comm>]`, else `[unknown]`.
fn command_line(pid: u32) -> String {
    let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let joined = args
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if joined.is_empty() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        return format!(
            "[{}]",
            Some(comm.trim())
                .filter(|c| !c.is_empty())
                .unwrap_or("unknown")
        );
    }
    if joined.chars().count() > COMMAND_CHARS {
        let cut: String = joined.chars().take(COMMAND_CHARS).collect();
        format!("{cut}…")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process whose command line is longer than [`COMMAND_CHARS`] is named by its first 200
    /// characters and `…`; a short one whole; a process that does not exist `[unknown]`.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_long_command_line_is_cut() {
        // GNU sleep adds its arguments up: 600 and 0 (written with 300 zeros).
        let zeros = "0".repeat(300);
        let mut child = std::process::Command::new("sleep")
            .args(["600", &zeros])
            .spawn()
            .unwrap();
        let pid = child.id();
        // Until the child has exec'd, its command line is still this test binary's.
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !command_line(pid).starts_with("sleep 600 ") && std::time::Instant::now() < bound {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let named = Leftover::of(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        let whole = format!("sleep 600 {zeros}");
        let expected: String = whole.chars().take(COMMAND_CHARS).collect();
        assert_eq!(named.command, format!("{expected}…"));
        assert_eq!(named.command.chars().count(), COMMAND_CHARS + 1);
        assert_eq!(
            describe_leftovers(&[named.clone(), named]),
            format!("pid {pid} ({expected}…), pid {pid} ({expected}…)")
        );
        assert_eq!(command_line(u32::MAX), "[unknown]");
    }

    /// A short command line is kept whole.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_short_command_line_is_whole() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let pid = child.id();
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while command_line(pid) != "sleep 600" && std::time::Instant::now() < bound {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let named = Leftover::of(pid);
        kill_process(pid);
        child.wait().unwrap();
        assert_eq!(named.command, "sleep 600");
    }
}
