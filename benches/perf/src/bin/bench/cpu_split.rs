//! Where a command's CPU goes, by kind of process (Linux `/proc`): while the command runs, a
//! thread reads every 10 ms the CPU time (user + system, `/proc/<pid>/stat`) of it and each of
//! its descendants, keeps each process's last reading, and sorts the processes into kinds by
//! their executable and command line as last read while they run: the runner (`cargo-copilot-eval`), the test processes
//! (executables in a `target/<profile>/deps` folder), cargo and the compiler, the Copilot
//! runtime (any other process with `copilot` in its command line), and the rest (such as the
//! processes a runtime starts).
//!
//! Readings are samples: a process's CPU after its last reading (at most 10 ms of it) is not
//! counted, so the kinds add up to a little less than the command's total from `wait4`; the
//! bench prints both.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The kinds, in the order they are printed.
pub const KINDS: [&str; 5] = ["runtime", "test processes", "runner", "cargo", "other"];

/// A sampler of one command's descendants; [`Sampler::stop`] returns the CPU seconds per kind.
pub struct Sampler {
    running: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<HashMap<u32, (usize, f64)>>,
}

impl Sampler {
    /// Start sampling the descendants of `root` (its pid).
    pub fn start(root: u32) -> Sampler {
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        let thread = std::thread::spawn(move || {
            let mut seen: HashMap<u32, (usize, f64)> = HashMap::new();
            let ticks = clock_ticks();
            while flag.load(Ordering::SeqCst) {
                for (pid, cpu) in descendants(root) {
                    // Sorted again at each reading: a process may exec another program after
                    // it was first seen (a runtime is started through a sandboxing step).
                    // A process that is ending (no executable to read) keeps its kind.
                    let entry = seen.entry(pid).or_insert((4, 0.0));
                    *entry = (kind_of(pid).unwrap_or(entry.0), entry.1.max(cpu / ticks));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            seen
        });
        Sampler { running, thread }
    }

    /// Stop sampling; the CPU seconds of each kind of [`KINDS`], in that order.
    pub fn stop(self) -> [f64; 5] {
        self.running.store(false, Ordering::SeqCst);
        let seen = self.thread.join().expect("the sampler thread");
        let mut split = [0.0; 5];
        for (kind, cpu) in seen.values() {
            split[*kind] += cpu;
        }
        split
    }
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as f64
}

/// `root` and every process below it, with its CPU time in clock ticks (user + system).
fn descendants(root: u32) -> Vec<(u32, f64)> {
    let mut parent_of: HashMap<u32, u32> = HashMap::new();
    let mut cpu_of: HashMap<u32, f64> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, ..., utime (14th), stime (15th).
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        let number = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
        if let (Some(parent), Some(user), Some(system)) = (number(1), number(11), number(12)) {
            parent_of.insert(pid, parent as u32);
            cpu_of.insert(pid, user + system);
        }
    }
    cpu_of
        .into_iter()
        .filter(|(pid, _)| {
            if *pid == root {
                return true;
            }
            let mut at = *pid;
            while let Some(parent) = parent_of.get(&at) {
                if *parent == root {
                    return true;
                }
                at = *parent;
            }
            false
        })
        .collect()
}

/// The index in [`KINDS`] of process `pid`'s kind; `None` when its executable cannot be read
/// (it is ending).
fn kind_of(pid: u32) -> Option<usize> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let name = exe.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    // In this order: a test binary's or cargo's command line may name `copilot` too.
    Some(if name == "cargo-copilot-eval" {
        2
    } else if exe.parent().is_some_and(|p| p.ends_with("deps")) {
        1
    } else if ["cargo", "rustc", "rust-lld", "cc", "ld"].contains(&name.as_str()) {
        3
    } else if cmdline.contains("copilot") {
        0
    } else {
        4
    })
}
