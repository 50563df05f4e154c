//! The performance benchmark of issue 15: W1 (one eval, whole process), W2 (24 evals, `-j 2`)
//! and W4 of issue 50 (W2's evals given a skill, `--ablate skills --trials 5`: 240 runs;
//! `bench/w4.rs`), run alternately, each `--runs` times: copilot-eval's runner (`cargo
//! copilot-eval`; W2 both on warm pooled runtimes, the default, and with `--fresh-runtime`), the raw
//! SDK program (`raw_session`, W1's floor), and, when given, commands that run the same
//! workloads with another tool (`--other-w1`, `--other-w2`, e.g. a pytest-skill-engineering
//! suite). Prints, per workload and side, the median wall time, the median CPU time of the
//! command and its descendants (user + system, from `wait4`) and the largest resident memory of
//! any one of those processes, then the ratios, and W4 beside 10 x W2 with W4's CPU per run.
//! Then the edit loop of issue 34 (`edit_loop.rs`): edit one eval of examples/quickstart,
//! rebuild and run it, `--edit-runs` times (5), the rebuild and the run apart, then the runner
//! alone after another edit; `--edit-loop` measures only that, and `--w4` only W2 and W4.
//! W1 and W2 are also measured with `--no-sandbox` (issue 52: the sandbox's cost, on and off in
//! one run); `--sandbox` measures only those four rows. `--cpu-split` measures only W2 (with
//! `--w4`: only W4), its CPU split by kind of process (the runtime, the test processes, the
//! runner, cargo; `bench/cpu_split.rs`).
//! `--edit-core DIR` and `--edit-runner PATH` time another revision on the same edit loop
//! instead (its copilot-eval-core folder and its runner, e.g. a `git archive` of main and
//! its `--release` runner; under `edit-loop-other/`). Linux and macOS (it uses `wait4`).
//!
//! ```sh
//! cargo run -p copilot-eval-bench --bin bench -- [--runs N] [--other-w1 CMD] [--other-w2 CMD]
//!     [--edit-runs N] [--edit-loop] [--w4] [--sandbox] [--cpu-split] [--edit-core DIR]
//!     [--edit-runner PATH]
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

// Not `src/bin/edit_loop.rs`: cargo would take that for a program of its own.
#[path = "bench/cpu_split.rs"]
mod cpu_split;
#[path = "bench/edit_loop.rs"]
mod edit_loop;
#[path = "bench/w4.rs"]
mod w4;

use w4::{measure_w4, print_w4};

/// The evals of W2 (`weather::w01` .. `weather::w24`).
const W2_EVALS: usize = 24;
/// W1, the first eval of W2 (with `--exact`).
const W1_EVAL: &str = "weather::w01";
/// The runner's arguments for W2 (after `copilot-eval -p copilot-eval-bench --plain`): the 24
/// `weather::` evals only (not W4's `weather_skill::`).
const W2_ARGS: &[&str] = &["-j", "2", "weather::"];

/// One measured run.
#[derive(Debug, Clone, Copy)]
struct Sample {
    wall_s: f64,
    /// User + system CPU of the command and every descendant it waited for, in s.
    cpu_s: f64,
    /// The largest resident memory of the command or any one of those descendants, in KB.
    peak_kb: u64,
}

/// Run `command` to its end and measure it with `wait4` (its own and its descendants' usage).
fn measure(name: &str, command: &mut Command) -> Sample {
    measure_with_output(name, command).0
}

/// [`measure`], with what the command wrote to stdout and to stderr.
fn measure_with_output(name: &str, command: &mut Command) -> (Sample, String, String) {
    let (sample, stdout, stderr, _) = measure_all(name, command, false);
    (sample, stdout, stderr)
}

/// [`measure`], with the command's CPU split by kind of process ([`cpu_split::KINDS`]).
fn measure_split(name: &str, command: &mut Command) -> (Sample, [f64; 5]) {
    let (sample, _, _, split) = measure_all(name, command, true);
    (sample, split.expect("sampled"))
}

/// The work of [`measure_with_output`] and [`measure_split`] (`split`: sample the CPU by kind).
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot see
fn measure_all(
    name: &str,
    command: &mut Command,
    split: bool,
) -> (Sample, String, String, Option<[f64; 5]>) {
    use std::io::Read;
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let sampler = split.then(|| cpu_split::Sampler::start(child.id()));
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let mut status = 0;
    // SAFETY: wait4 writes the status and the usage it is given; the child is ours and is
    // reaped here (std's handle is not waited afterwards).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "{name}: wait4 failed");
    let wall_s = started.elapsed().as_secs_f64();
    let split = sampler.map(cpu_split::Sampler::stop);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        panic!("{name} failed (wait status {status}):\n{stdout}{stderr}");
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let sample = Sample {
        wall_s,
        cpu_s: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        peak_kb: usage.ru_maxrss as u64,
    };
    (sample, stdout, stderr, split)
}

/// The runner's phase lines (`phase <ms> <what>`, copilot-eval-core's `suite/phases.rs`) in
/// its stderr, in order.
fn phase_lines(stderr: &str) -> Vec<(u64, String)> {
    stderr
        .lines()
        .filter_map(|line| {
            let (ms, what) = line.strip_prefix("phase ")?.split_once(' ')?;
            Some((ms.parse().ok()?, what.to_owned()))
        })
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

fn shell(command: &str) -> Command {
    let mut shell = Command::new("sh");
    shell.args(["-c", command]);
    shell
}

/// What the command line asks for (see the module's doc comment).
struct Options {
    runs: usize,
    other_w1: Option<String>,
    other_w2: Option<String>,
    edit_runs: usize,
    edit_loop_only: bool,
    /// `--w4`: only W2 and W4, alternately (W4's figures need W2's beside them).
    w4_only: bool,
    /// `--sandbox`: only W1 and W2, each with the sandbox on (the default) and off.
    sandbox_only: bool,
    /// `--cpu-split`: only W2 (W4 with `--w4`), its CPU split by kind of process
    /// (`bench/cpu_split.rs`).
    cpu_split_only: bool,
    edit_core: Option<PathBuf>,
    edit_runner: Option<PathBuf>,
}

fn parse_options() -> Options {
    let mut options = Options {
        runs: 3,
        other_w1: None,
        other_w2: None,
        edit_runs: 5,
        edit_loop_only: false,
        w4_only: false,
        sandbox_only: false,
        cpu_split_only: false,
        edit_core: None,
        edit_runner: None,
    };
    let mut args = std::env::args().skip(1);
    let number = |args: &mut dyn Iterator<Item = String>, name: &str| -> usize {
        args.next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} N"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => options.runs = number(&mut args, "--runs"),
            "--other-w1" => options.other_w1 = args.next(),
            "--other-w2" => options.other_w2 = args.next(),
            "--edit-runs" => options.edit_runs = number(&mut args, "--edit-runs"),
            "--edit-loop" => options.edit_loop_only = true,
            "--w4" => options.w4_only = true,
            "--sandbox" => options.sandbox_only = true,
            "--cpu-split" => options.cpu_split_only = true,
            "--edit-core" => {
                options.edit_core = Some(absolute(args.next().expect("--edit-core DIR")))
            }
            "--edit-runner" => {
                options.edit_runner = Some(absolute(args.next().expect("--edit-runner PATH")))
            }
            other => panic!("unknown argument {other:?}; see the doc comment of bench.rs"),
        }
    }
    options
}

/// The release runner of this checkout, run on the bench's package in the checkout's root.
struct Runner {
    path: PathBuf,
    root: PathBuf,
}

impl Runner {
    /// The runner with `extra` arguments, in the workspace's root. Without `RUST_BACKTRACE` and
    /// `RUST_LIB_BACKTRACE`, as in a shell that has not set them, whatever the bench's own
    /// environment holds: with them, each test that fails (W4's side without the skill fails
    /// on purpose, 120 times) symbolizes its panic's backtrace, about 0.1 CPU s a test
    /// process (docs/performance.md).
    fn command(&self, extra: &[&str]) -> Command {
        let mut command = Command::new(&self.path);
        command
            .args(["copilot-eval", "-p", "copilot-eval-bench", "--plain"])
            .args(extra)
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .current_dir(&self.root);
        command
    }
}

fn main() {
    let options = parse_options();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The runner as users install it (`cargo install` builds release); the test binaries it
    // builds, and the raw SDK program, in the dev profile, as `cargo test` builds them.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for args in [
        &["build", "--release", "-p", "cargo-copilot-eval"][..],
        &["build", "-p", "copilot-eval-bench", "--bins"][..],
    ] {
        let status = Command::new(&cargo)
            .args(args)
            .current_dir(&root)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo {args:?}");
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let runner = Runner {
        path: target_dir.join("release").join("cargo-copilot-eval"),
        root: root.clone(),
    };
    println!("load average before: {}", load_average());
    // The edit loop's side: this checkout's engine and runner, or another revision's.
    let edit_side = EditSide {
        folder: if options.edit_core.is_some() || options.edit_runner.is_some() {
            target_dir.join("edit-loop-other")
        } else {
            target_dir.join("edit-loop")
        },
        core: (options.edit_core.clone()).unwrap_or_else(|| root.join("copilot-eval-core")),
        runner: (options.edit_runner.clone()).unwrap_or_else(|| runner.path.clone()),
    };
    if options.edit_loop_only {
        edit_loop(&root, &edit_side, &cargo, options.edit_runs);
        return;
    }
    // Warm-up (unpack, build check), not measured.
    measure("warm-up", &mut runner.command(&["--exact", W1_EVAL]));
    if options.cpu_split_only {
        let workload = if options.w4_only {
            ("W4", w4::W4_ARGS, w4::W4_RUNS)
        } else {
            ("W2", W2_ARGS, W2_EVALS)
        };
        print_cpu_split(&runner, workload, options.runs);
        println!("load average after: {}", load_average());
        return;
    }
    let results = measure_workloads(&options, &runner, &target_dir.join("debug"));
    let medians = print_medians(&results, options.runs);
    if options.w4_only || options.sandbox_only {
        println!("load average after: {}", load_average());
        return;
    }
    // One more W1 run, with the runner's phase marks (copilot_eval_core::suite::phases).
    let (_, _, stderr) = measure_with_output(
        "W1 copilot-eval, phases",
        runner
            .command(&["--exact", W1_EVAL])
            .env("COPILOT_EVAL_PHASES", "1"),
    );
    println!(
        "W1 copilot-eval phases (one more run; ms from the runner's start, and since the last mark):"
    );
    let mut last = 0;
    for (ms, what) in &phase_lines(&stderr) {
        println!("  {ms:>6} {:>+6}  {what}", ms - last);
        last = *ms;
    }
    // CPU per eval: the whole command's CPU (runner, test processes, runtimes) over W2's evals.
    for (index, name) in [(W2, "pooled"), (W2_FRESH, "fresh")] {
        if let Some((_, cpu)) = medians[index] {
            println!("W2 CPU s per eval, {name}: {:.3}", cpu / W2_EVALS as f64);
        }
    }
    edit_loop(&root, &edit_side, &cargo, options.edit_runs);
}

/// `--cpu-split`: the workload (its name, the runner's arguments and its number of runs: W2,
/// or W4 with `--w4`) `runs` times, each with its CPU split by kind of process; prints each
/// kind's median CPU s, over the whole workload and per run (an eval's one session), beside
/// the total from `wait4`.
fn print_cpu_split(runner: &Runner, workload: (&str, &[&str], usize), runs: usize) {
    let (name, args, count) = workload;
    let mut totals = Vec::new();
    let mut kinds: Vec<Vec<f64>> = vec![Vec::new(); cpu_split::KINDS.len()];
    for _ in 0..runs {
        let (sample, split) = measure_split(name, &mut runner.command(args));
        totals.push(sample.cpu_s);
        for (values, cpu) in kinds.iter_mut().zip(split) {
            values.push(cpu);
        }
    }
    let total = median(&mut totals);
    println!(
        "{name} ({count} runs) CPU by kind of process ({runs} times, medians; sampled every 10 ms):"
    );
    println!("| kind | CPU s | CPU s per run |");
    println!("|---|---|---|");
    for (kind, values) in cpu_split::KINDS.iter().zip(&mut kinds) {
        let cpu = median(values);
        println!("| {kind} | {cpu:.2} | {:.3} |", cpu / count as f64);
    }
    println!("| all (wait4) | {total:.2} | {:.3} |", total / count as f64);
}

/// The workloads' rows in [`measure_workloads`]' results, in order.
const W1: usize = 0;
const W1_RAW: usize = 1;
const W1_OTHER: usize = 2;
const W2: usize = 3;
const W2_OTHER: usize = 4;
const W2_FRESH: usize = 5;
const W4: usize = 6;
const W1_NO_SANDBOX: usize = 7;
const W2_NO_SANDBOX: usize = 8;

/// Measure the workloads alternately, `options.runs` times: all of them, or W2 and W4 alone
/// with `--w4`. `debug` is the dev profile's folder (the raw SDK program). Returns each row's
/// name and samples (empty when not measured).
fn measure_workloads(
    options: &Options,
    runner: &Runner,
    debug: &Path,
) -> Vec<(&'static str, Vec<Sample>)> {
    let mut results: Vec<(&str, Vec<Sample>)> = vec![
        ("W1 copilot-eval", Vec::new()),
        ("W1 raw SDK", Vec::new()),
        ("W1 other", Vec::new()),
        ("W2 copilot-eval -j 2", Vec::new()),
        ("W2 other", Vec::new()),
        ("W2 --fresh-runtime", Vec::new()),
        ("W4 --ablate skills", Vec::new()),
        ("W1 --no-sandbox", Vec::new()),
        ("W2 -j 2 --no-sandbox", Vec::new()),
    ];
    let all = !options.w4_only && !options.sandbox_only;
    for run in 0..options.runs {
        if !options.w4_only {
            measure_sandbox_pairs(runner, &mut results, run % 2 == 1);
        }
        if options.sandbox_only {
            continue;
        }
        if all {
            let raw = measure("W1 raw SDK", &mut Command::new(debug.join("raw_session")));
            results[W1_RAW].1.push(raw);
        }
        if let Some(command) = options.other_w1.as_ref().filter(|_| all) {
            results[W1_OTHER]
                .1
                .push(measure("W1 other", &mut shell(command)));
        }
        if options.w4_only {
            let w2 = measure("W2 copilot-eval", &mut runner.command(W2_ARGS));
            results[W2].1.push(w2);
        }
        results[W4].1.push(measure_w4(runner));
        if let Some(command) = options.other_w2.as_ref().filter(|_| all) {
            results[W2_OTHER]
                .1
                .push(measure("W2 other", &mut shell(command)));
        }
        if all {
            let fresh = [W2_ARGS, &["--fresh-runtime"]].concat();
            let fresh = measure(
                "W2 copilot-eval --fresh-runtime",
                &mut runner.command(&fresh),
            );
            results[W2_FRESH].1.push(fresh);
        }
    }
    results
}

/// W1 and W2 with the sandbox on (the default) and with `--no-sandbox`, one right after the
/// other (the issue's "on and off in one run"); `off_first` swaps each pair's order, so that
/// alternate runs put each side after the same workloads (with a fixed order, W1 with the
/// sandbox always came right after W2, and looked 0.1 s slower in two runs; with the order
/// swapped, it did not).
fn measure_sandbox_pairs(
    runner: &Runner,
    results: &mut [(&'static str, Vec<Sample>)],
    off_first: bool,
) {
    let w1: &[&str] = &["--exact", W1_EVAL];
    for (on, off, args) in [(W1, W1_NO_SANDBOX, w1), (W2, W2_NO_SANDBOX, W2_ARGS)] {
        let no_sandbox = [args, &["--no-sandbox"]].concat();
        let mut pair = [(on, args.to_vec()), (off, no_sandbox)];
        if off_first {
            pair.reverse();
        }
        for (row, args) in pair {
            let sample = measure(results[row].0, &mut runner.command(&args));
            results[row].1.push(sample);
        }
    }
}

/// Print each measured row's medians (and the largest peak) and the ratios between rows, then
/// W4 beside 10 x W2. Returns each row's median (wall s, CPU s), `None` when not measured.
fn print_medians(results: &[(&str, Vec<Sample>)], runs: usize) -> Vec<Option<(f64, f64)>> {
    println!("{runs} alternating runs each; medians (peak: the largest of the runs):");
    println!(
        "{:<22} {:>8} {:>8} {:>9}",
        "workload", "wall s", "CPU s", "peak MB"
    );
    let mut medians = Vec::new();
    for (name, samples) in results {
        if samples.is_empty() {
            medians.push(None);
            continue;
        }
        let wall = median(&mut samples.iter().map(|s| s.wall_s).collect::<Vec<_>>());
        let cpu = median(&mut samples.iter().map(|s| s.cpu_s).collect::<Vec<_>>());
        let peak = samples.iter().map(|s| s.peak_kb).max().unwrap_or(0) as f64 / 1024.0;
        println!("{name:<22} {wall:>8.2} {cpu:>8.2} {peak:>9.0}");
        medians.push(Some((wall, cpu)));
    }
    let wall = |index: usize| medians[index].map(|(wall, _)| wall);
    let ratios = [
        (W1, W1_RAW, "W1 copilot-eval / raw SDK"),
        (W1, W1_OTHER, "W1 copilot-eval / other"),
        (W2, W2_OTHER, "W2 copilot-eval / other"),
        (W2, W2_FRESH, "W2 pooled / fresh"),
        (W1, W1_NO_SANDBOX, "W1 sandbox on / off"),
        (W2, W2_NO_SANDBOX, "W2 sandbox on / off"),
    ];
    for (ours, theirs, name) in ratios {
        if let (Some(ours), Some(theirs)) = (wall(ours), wall(theirs)) {
            println!("{name}: {:.2}", ours / theirs);
        }
    }
    if let (Some((w2_wall, w2_cpu)), Some((w4_wall, w4_cpu))) = (medians[W2], medians[W4]) {
        print_w4(w2_wall, w2_cpu, w4_wall, w4_cpu);
    }
    medians
}
/// What the edit loop times: the copy's folder, the copilot-eval-core folder it depends on, and
/// the runner.
struct EditSide {
    folder: PathBuf,
    core: PathBuf,
    runner: PathBuf,
}

/// `path` made absolute (the edit loop runs its commands in the copy's folder).
fn absolute(path: String) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1, 5 and 15 minute load averages, as `uptime` prints them.
fn load_average() -> String {
    let mut loads = [0f64; 3];
    // SAFETY: getloadavg writes at most 3 values into the array it is given.
    let got = unsafe { libc::getloadavg(loads.as_mut_ptr(), 3) };
    if got < 3 {
        return "unknown".into();
    }
    format!("{:.2}, {:.2}, {:.2}", loads[0], loads[1], loads[2])
}

/// Measure the edit loop ([`mod@edit_loop`]) on `side` and print its medians.
fn edit_loop(root: &Path, side: &EditSide, cargo: &str, runs: usize) {
    let rounds = edit_loop::measure_rounds(
        root,
        &side.core,
        &side.folder,
        Path::new(cargo),
        &side.runner,
        runs,
    );
    println!(
        "edit loop ({runs} rounds: edit one eval of examples/quickstart, rebuild, run it with --replay; edit, run alone), {} and {}; medians:",
        side.core.display(),
        side.runner.display()
    );
    println!("{:<22} {:>8} {:>8}", "phase", "wall s", "CPU s");
    // Each phase's (wall s, CPU s) in a round.
    type Phase = fn(&edit_loop::Round) -> (f64, f64);
    let phases: [(&str, Phase); 4] = [
        ("rebuild", |r| (r.rebuild.wall_s, r.rebuild.cpu_s)),
        ("run", |r| (r.run.wall_s, r.run.cpu_s)),
        ("edit and rerun", |r| {
            (
                r.rebuild.wall_s + r.run.wall_s,
                r.rebuild.cpu_s + r.run.cpu_s,
            )
        }),
        ("edit, run alone", |r| {
            (r.one_command.wall_s, r.one_command.cpu_s)
        }),
    ];
    for (name, of) in phases {
        let wall = median(&mut rounds.iter().map(|r| of(r).0).collect::<Vec<_>>());
        let cpu = median(&mut rounds.iter().map(|r| of(r).1).collect::<Vec<_>>());
        println!("{name:<22} {wall:>8.2} {cpu:>8.2}");
    }
    println!("load average after: {}", load_average());
}
