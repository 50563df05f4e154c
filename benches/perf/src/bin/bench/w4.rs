//! W4 (issue 50): W2's 24 evals given a skill (`tests/weather_skill.rs`), run with
//! `--ablate skills --trials 5`: each eval five times with its skill and five times without,
//! 24 x 5 x 2 = 240 runs, each its own test process. Measured like W2 (wall and CPU of the
//! runner and all its descendants) and printed beside 10 x W2's wall time (the same number of
//! runs of the same scenario, 10 times W2's 24): linear would be about equal.

use super::{Runner, Sample, measure_with_output};

/// W4's evals (`weather_skill::w01` .. `w24`).
pub const W4_EVALS: usize = 24;
/// The trials of each eval on each side.
pub const W4_TRIALS: usize = 5;
/// Every run of W4: each eval's trials, with the skill and without.
pub const W4_RUNS: usize = W4_EVALS * W4_TRIALS * 2;
/// The runner's arguments for W4 (after `copilot-eval -p copilot-eval-bench --plain`).
pub const W4_ARGS: &[&str] = &[
    "-j",
    "2",
    "--ablate",
    "skills",
    "--trials",
    "5",
    "weather_skill::",
];

/// Run W4 once with `runner` and measure it. Panics unless the runner's summary counts
/// [`W4_RUNS`] runs and prints the skill lift table (the workload is what it claims to be).
pub fn measure_w4(runner: &Runner) -> Sample {
    let name = "W4 copilot-eval --ablate skills";
    let (sample, stdout, stderr) = measure_with_output(name, &mut runner.command(W4_ARGS));
    let output = format!("{stdout}{stderr}");
    if let Some(problem) = output_problem(&output) {
        panic!("{name}: {problem} in its output:\n{output}");
    }
    sample
}

/// What is wrong with W4's output, if anything: its summary's tokens line (`...; N tool calls
/// in N runs`) does not count [`W4_RUNS`] runs, or it has no skill lift table.
fn output_problem(output: &str) -> Option<String> {
    let runs = format!(" in {W4_RUNS} runs");
    let counted = output
        .lines()
        .any(|line| line.trim_start().starts_with("tokens: ") && line.ends_with(&runs));
    if !counted {
        return Some(format!("no summary line ending `{runs}`"));
    }
    if !output.contains("skill lift (with / without") {
        return Some("no skill lift table".into());
    }
    None
}

/// Print W4's medians beside 10 x W2's, and W4's CPU per run (its CPU over [`W4_RUNS`]).
pub fn print_w4(w2_wall: f64, w2_cpu: f64, w4_wall: f64, w4_cpu: f64) {
    println!(
        "W4 ({W4_EVALS} evals given a skill, --ablate skills --trials {W4_TRIALS}: {W4_RUNS} runs) beside 10 x W2 ({} runs):",
        10 * super::W2_EVALS
    );
    println!(
        "{:<22} {:>8} {:>8} {:>9}",
        "workload", "wall s", "CPU s", "CPU s/run"
    );
    let rows = [
        ("W4 --ablate skills", w4_wall, w4_cpu, W4_RUNS),
        (
            "10 x W2",
            10.0 * w2_wall,
            10.0 * w2_cpu,
            10 * super::W2_EVALS,
        ),
    ];
    for (name, wall, cpu, runs) in rows {
        println!(
            "{name:<22} {wall:>8.2} {cpu:>8.2} {:>9.3}",
            cpu / runs as f64
        );
    }
    println!("W4 / (10 x W2), wall: {:.2}", w4_wall / (10.0 * w2_wall));
}

#[cfg(test)]
mod tests {
    use super::output_problem;

    /// The summary and the lift table's head as the runner printed them for W4.
    const OUTPUT: &str =
        "     Summary [  89.587s] 240 tests: 120 passed, 120 failed, 0 errors, 0 not run
  stop reasons: completed 240
  tokens: 48000 input, 9600 output; 240 tool calls in 240 runs
  skill lift (with / without; the side without is a measurement, not the verdict):
    eval                with        without   lift     p       verdict
";

    #[test]
    fn w4_output_counts_its_runs_and_has_the_lift_table() {
        assert_eq!(output_problem(OUTPUT), None);
        let fewer = OUTPUT.replace("in 240 runs", "in 120 runs");
        assert!(output_problem(&fewer).unwrap().contains("in 240 runs"));
        let no_lift = OUTPUT.replace("skill lift", "skill");
        assert_eq!(
            output_problem(&no_lift).as_deref(),
            Some("no skill lift table")
        );
    }
}
