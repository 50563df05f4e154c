//! The soak benchmark: `cargo copilot-eval -p copilot-eval-soak -j 2` runs 200 scripted evals
//! (benches/soak/tests/soak_evals.rs) through the real runtime while this test samples the runner process after
//! each finished eval (resident memory, peak memory, open file descriptors) and every pooled
//! runtime the runner keeps (resident memory). It checks that the runner's memory and
//! descriptors stay flat, that no process of the suite is left, and that both artifacts are
//! complete; it prints the time per quarter of the evals and each pooled runtime's memory. Not part of CI (several minutes of both cores); the figures in
//! docs/recording-and-ci.md come from:
//!
//! ```sh
//! cargo test --workspace --test soak -- --ignored --nocapture
//! ```

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use copilot_eval_core::report::SuiteReport;
use copilot_eval_e2e::runtime_for;

mod support;

use support::{command_path, workspace_root};

/// The number of evals in benches/soak (`soak::n001` to `soak::n200`).
const ALL_EVALS: usize = 200;

/// How many of them to run: all, or the first `SOAK_EVALS` (for a shorter check of the check).
fn evals() -> usize {
    std::env::var("SOAK_EVALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| (8..=ALL_EVALS).contains(n))
        .unwrap_or(ALL_EVALS)
}

/// One sample of the runner process, taken when an eval's line is printed.
#[derive(Debug, Clone, Copy)]
struct Sample {
    finished: usize,
    rss_kb: u64,
    peak_kb: u64,
    fds: usize,
}

fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn sample(pid: u32, finished: usize) -> Option<Sample> {
    Some(Sample {
        finished,
        rss_kb: status_kb(pid, "VmRSS:")?,
        peak_kb: status_kb(pid, "VmHWM:")?,
        fds: std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count(),
    })
}

/// The pooled runtimes of the runner `runner` (its children started with `--server`) and
/// their resident memory in KB.
fn pooled_runtimes(runner: u32) -> Vec<(u32, u64)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) state ppid ...`: the fields after the command's closing parenthesis.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            parent == Some(runner) && String::from_utf8_lossy(&cmdline).contains("--server")
        })
        .filter_map(|pid| Some((pid, status_kb(pid, "VmRSS:")?)))
        .collect()
}

/// Processes whose environment mentions `scratch` (the suite's TMPDIR: every run's home and
/// working directory is under it).
fn processes_under(scratch: &Path) -> Vec<String> {
    let needle = scratch.display().to_string();
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|entry| entry.file_name().to_string_lossy() != me)
        .filter_map(|entry| {
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            String::from_utf8_lossy(&environ)
                .contains(&needle)
                .then(|| {
                    let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                    format!(
                        "{}: {}",
                        entry.file_name().to_string_lossy(),
                        String::from_utf8_lossy(&cmdline).replace('\0', " ")
                    )
                })
        })
        .collect()
}

#[test]
#[ignore = "soak benchmark: 200 evals, several minutes of both cores; run with `cargo test --workspace --test soak -- --ignored --nocapture`"]
fn two_hundred_scripted_evals_leave_memory_descriptors_and_processes_flat() {
    let Some(_runtime) =
        runtime_for("two_hundred_scripted_evals_leave_memory_descriptors_and_processes_flat")
    else {
        return;
    };
    let evals = evals();
    let mut selection = Vec::new();
    if evals < ALL_EVALS {
        selection.push("--exact".to_owned());
        selection.extend((1..=evals).map(|n| format!("soak::n{n:03}")));
    }
    let scratch = tempfile::tempdir().unwrap();
    let json = scratch.path().join("soak.json");
    let junit = scratch.path().join("soak.xml");
    let started = Instant::now();
    let mut child = Command::new(command_path())
        .arg("copilot-eval")
        .args(["-p", "copilot-eval-soak", "-j", "2", "--plain"])
        .arg("--json")
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .args(&selection)
        .current_dir(workspace_root())
        .env("TMPDIR", scratch.path())
        .env_remove("COPILOT_EVAL_MODE")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut samples = Vec::new();
    // Each pooled runtime's resident memory (KB) at each finished eval; when each eval finished.
    let mut runtimes: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
    let mut finished_at = Vec::new();
    let mut finished = 0;
    let mut log = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let trimmed = line.trim_start();
        if ["PASS", "FAIL", "ERROR", "NOT RUN"]
            .iter()
            .any(|word| trimmed.starts_with(word))
        {
            finished += 1;
            finished_at.push(started.elapsed().as_secs_f64());
            if let Some(s) = sample(pid, finished) {
                samples.push(s);
            }
            for (runtime, rss_kb) in pooled_runtimes(pid) {
                runtimes.entry(runtime).or_default().push(rss_kb);
            }
        }
        log.push_str(&line);
        log.push('\n');
    }
    let status = child.wait().unwrap();
    let wall = started.elapsed();
    assert!(status.success(), "{log}");
    assert_eq!(finished, evals, "{log}");

    // Artifacts: complete and all passed.
    let report: SuiteReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report.tests.len(), evals);
    assert_eq!(report.totals.passed, evals as u64, "{log}");
    assert!(report.tests.iter().all(|test| test.runs.len() == 1));
    let xml = std::fs::read_to_string(&junit).unwrap();
    let junit_report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let cases: usize = junit_report
        .test_suites
        .iter()
        .map(|suite| suite.test_cases.len())
        .sum();
    assert_eq!(cases, evals);

    // No process of the suite is left.
    let left = processes_under(scratch.path());
    assert!(left.is_empty(), "left running: {left:#?}");

    // Flat: after the first quarter, resident memory and descriptors do not grow with the
    // number of evals (a margin for the reports the runner keeps: a few KB per eval).
    let quarter = samples
        .iter()
        .find(|s| s.finished >= evals / 4)
        .copied()
        .unwrap();
    let last = *samples.last().unwrap();
    let late_rss = samples
        .iter()
        .filter(|s| s.finished >= evals / 4)
        .map(|s| s.rss_kb)
        .max()
        .unwrap();
    let late_fds = samples
        .iter()
        .filter(|s| s.finished >= evals / 4)
        .map(|s| s.fds)
        .max()
        .unwrap();
    println!(
        "soak: {evals} evals, -j 2, {:.0} s wall; runner resident memory after {} evals {} KB, \
         highest after that {} KB, at the end {} KB, peak (VmHWM) {} KB; open descriptors after \
         {} evals {}, highest after that {}, at the end {}",
        wall.as_secs_f64(),
        quarter.finished,
        quarter.rss_kb,
        late_rss,
        last.rss_kb,
        last.peak_kb,
        quarter.finished,
        quarter.fds,
        late_fds,
        last.fds
    );
    assert!(
        late_rss <= quarter.rss_kb + quarter.rss_kb / 4 + 8 * 1024,
        "resident memory grew from {} KB to {late_rss} KB",
        quarter.rss_kb
    );
    assert!(
        // A margin for the pooled runtimes in flight: each holds a few descriptors of the
        // runner's (its pipes, the owner client's connection through the relay), and one is
        // replaced every 50 sessions.
        late_fds <= quarter.fds + 8,
        "descriptors grew from {} to {late_fds}",
        quarter.fds
    );

    // Time per quarter of the evals, counted from the first eval's end (the build before it is
    // not eval time): printed, for docs/performance.md (a figure, not a check).
    let quarters: Vec<f64> = (1..=4)
        .map(|q| finished_at[evals * q / 4 - 1] - finished_at[(evals * (q - 1) / 4).max(1) - 1])
        .collect();
    let pool = report.pool.unwrap_or_default();
    println!(
        "soak: time per quarter of the evals {:?} s; pooled runtimes started {}, retired {}",
        quarters
            .iter()
            .map(|q| (q * 10.0).round() / 10.0)
            .collect::<Vec<_>>(),
        pool.runtimes_started,
        pool.runtimes_retired
    );
    // Each pooled runtime's resident memory, sampled when evals end: printed, for
    // docs/performance.md (a figure, not a check).
    assert!(
        !runtimes.is_empty(),
        "no pooled runtime was seen: the soak did not run on warm runtimes"
    );
    for (runtime, rss) in &runtimes {
        let settled = rss[rss.len().min(5) - 1];
        let later = rss.iter().skip(5).copied().max().unwrap_or(settled);
        println!(
            "soak: pooled runtime {runtime}: {} samples, resident memory first {} KB, after 5 samples {settled} KB, highest after that {later} KB, last {} KB",
            rss.len(),
            rss[0],
            rss.last().unwrap()
        );
    }
}
